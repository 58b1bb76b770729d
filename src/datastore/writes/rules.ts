// Rules every save meets, whoever asks for it (REST, a user function, a seed): a relation names an
// entity that exists (one the caller can see), and an image or blob attribute holds a file of its
// kind. The write checks them in its own transaction, after the saving event (so that what an
// event sets is checked too), and claims the file there (so one taken meanwhile is still
// refused). A save with events, and validate(), check them first as well, before any event runs.
// A relation's target is looked up by its key alone (no row read, no entity made); the saves of
// one all-or-nothing batch look up the targets they name in one query per target (knownTargets).

import { KEYS_PER_QUERY } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { DataClassModel, RelatedEntityAttribute, StorageAttribute } from '../../model/types.js';
import { keyFromInput } from '../../model/values.js';
import { directPath } from '../../query/plan.js';
import { compileSelect } from '../../sql/compiler/statements.js';
import type { Access } from '../access/access.js';
import type { ClassCoreView } from '../core-types.js';
import { requireDataClass } from '../access/guard.js';

/**
 * What the saves of one batch learnt of their relations' targets: per target dataclass, keys of
 * entities that exist and that the caller can see, looked up in the batch's transaction. Only
 * targets the batch does not write are kept (a save of the target itself could change what its
 * row filter lets the caller see).
 */
export type KnownTargets = Map<DataClassModel, Set<unknown>>;

/** `values`: the storage attributes a save writes, with their values; `known`: targets a batch looked up already. */
/** `hold`: in a write's transaction, each target found is held against a drop until it ends (targetExists). */
export async function checkValues(dc: ClassCoreView, values: ReadonlyMap<StorageAttribute, unknown>, access: Access, known?: KnownTargets, hold = false): Promise<void> {
  for (const relation of relationsOf(dc)) {
    const key = values.get(relation.foreignKey);
    if (key === null || key === undefined) continue;
    // (the caller's right to read the target first, as a read of it would ask)
    requireDataClass(access, relation.target, 'read');
    if (known?.get(relation.target)?.has(key) || (await targetExists(relation.target, key, access, hold))) continue;
    throw new DatasetError('ENTITY_NOT_FOUND', `${dc.name}.${relation.name}: Cannot find entity with "${String(key)}" key in the "${relation.target.name}" dataclass`);
  }
  for (const [attr, value] of values) {
    if ((attr.type === 'image' || attr.type === 'blob') && value !== null && value !== undefined) await checkFile(dc, attr, Number(value));
  }
}

/**
 * Before the saves of an all-or-nothing batch of `dc` (in its transaction, no user code running
 * in it): the targets their relations name, looked up in one query per target dataclass (the keys
 * chunked), for checkValues. A key not found is looked up again by the save that names it (an
 * earlier save of the batch may have made it), which then fails as it would have.
 */
export async function knownTargets(dc: ClassCoreView, saves: readonly ReadonlyMap<StorageAttribute, unknown>[], access: Access): Promise<KnownTargets> {
  const known: KnownTargets = new Map();
  for (const relation of relationsOf(dc)) {
    const target = relation.target;
    // a target the batch writes, or one the caller may not read (each save says so), is left to each save
    if (target === dc.model || !access.grants.dataClass(target.name, 'read')) continue;
    const keys = new Set<unknown>();
    for (const values of saves) {
      const key = values.get(relation.foreignKey);
      if (key !== null && key !== undefined && keyFromInput(target.key, key) === key && !known.get(target)?.has(key)) keys.add(key);
    }
    if (keys.size === 0) continue;
    let found = known.get(target);
    if (!found) known.set(target, (found = new Set()));
    const list = [...keys];
    for (let at = 0; at < list.length; at += KEYS_PER_QUERY) {
      const { sql, params } = compileSelect(access.reader.dialect, {
        dataClass: target, columns: [{ kind: 'storage', attr: target.key }], order: [],
        where: { kind: 'in', path: directPath(target.key), values: list.slice(at, at + KEYS_PER_QUERY) },
      }, access.restrict);
      // (each target found is held against a drop until the batch ends, as a single save's: targetExists)
      for (const k of await access.reader.column(sql + access.reader.dialect.concurrency.keyShareLock('t0'), params)) {
        const key = keyFromInput(target.key, k);
        if (key !== undefined && keys.has(key)) found.add(key);
      }
    }
  }
  return known;
}

/** The key-only read of one entity of each dataclass, per dialect, compiled once (without a row filter: the key is its only parameter). */
const byKeySql = new WeakMap<object, WeakMap<DataClassModel, string>>();

/** Whether the entity of `target` with this key exists and the caller can see it: its key is read, nothing more. */
async function targetExists(target: DataClassModel, key: unknown, access: Access, hold: boolean): Promise<boolean> {
  const k = keyFromInput(target.key, key);
  if (k === undefined) return false;
  const reader = access.reader;
  const spec = { dataClass: target, columns: [{ kind: 'storage' as const, attr: target.key }], order: [], where: { kind: 'compare' as const, path: directPath(target.key), op: '=' as const, value: k } };
  // The target found is held against a drop until the save's transaction ends (PostgreSQL: FOR KEY
  // SHARE, as a foreign key's check): a drop of it under way is waited for (and the target is then
  // gone), and a drop that comes later waits for this save, its delete controls then seeing it
  // (delete-rules.ts); SQLite's write transaction excludes every other writer already.
  const lock = hold ? reader.dialect.concurrency.keyShareLock('t0') : '';
  if (access.restrict !== null) {
    const { sql, params } = compileSelect(reader.dialect, spec, access.restrict);
    return (await reader.get(sql + lock, params)) !== undefined;
  }
  let compiled = byKeySql.get(reader.dialect);
  if (!compiled) byKeySql.set(reader.dialect, (compiled = new WeakMap()));
  let sql = compiled.get(target);
  if (sql === undefined) compiled.set(target, (sql = compileSelect(reader.dialect, spec, null).sql));
  sql += lock;
  return (await reader.get(sql, [reader.dialect.types.encode(target.key.type, k, false)])) !== undefined;
}

/** An image attribute takes an image; a blob attribute any file but an upload announced as an image. */
async function checkFile(dc: ClassCoreView, attr: StorageAttribute, id: number): Promise<void> {
  const file = await dc.core.files.info(id);
  if (!file) return; // gone: the write's claim refuses it
  const image = attr.type === 'image';
  if (image ? file.kind === 'image' : !(file.kind === 'image' && file.upload !== null)) return;
  const how = (kind: string) => (kind === 'image' ? '$rawPict=true' : '$binary=true');
  const what = `${dc.name}.${attr.name} is ${image ? 'an image' : 'a blob'} attribute`;
  throw new DatasetError('UPLOAD_WRONG_KIND', file.upload !== null
    ? `${what}: it takes an upload made with ${how(image ? 'image' : 'binary')}, and upload ${file.upload} was made with ${how(file.kind)}`
    : `${what}: it takes an image, and the bytes of file ${id} are none (whatever type they were stored with)`);
}

const relations = new WeakMap<ClassCoreView, RelatedEntityAttribute[]>();

/** The N→1 relations of a dataclass (their foreign keys are what checkValues looks at). */
export function relationsOf(dc: ClassCoreView): RelatedEntityAttribute[] {
  let list = relations.get(dc);
  if (!list) relations.set(dc, (list = dc.model.attributes.filter((a): a is RelatedEntityAttribute => a.kind === 'relatedEntity')));
  return list;
}
