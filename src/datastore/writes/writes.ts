// The few statements that change entities — insert, update and delete — with what goes with each
// write: the stamp check, the pessimistic lock of another session (locks.ts), the files an image
// or blob attribute claims or lets go, the global stamp (and, for a dataclass that tracks its
// changes, the stamp stored with the entity or its drop: tracking.ts), and the errors of a write
// that found nothing to change. Entity.save() and drop() are
// their only callers, so a save from REST and a save from user code run the same checks.
// Each write is a transaction of its own (a savepoint inside a caller's), except the saves of a
// WriteBatch: those share the batch's all-or-nothing transaction without a savepoint each, and
// move the global stamp once for all of them.

import { DatasetError } from '../../errors/dataset-error.js';
import type { DataClassModel, StorageAttribute } from '../../model/types.js';
import { directPath, type Condition } from '../../query/plan.js';
import type { CompiledSql } from '../../sql/compiler/builder.js';
import { compileDelete, compileDeleteAmong, compileSelect, compileUpdate, insertShape, updateShape, writeParams } from '../../sql/compiler/statements.js';
import type { Dialect } from '../../sql/dialect.js';
import { ConstraintError } from '../../storage/adapter.js';
import { bumpGlobalStamp, globalStampBumpExpression, takeTrackedTurn } from '../../storage/system-tables/global-stamp.js';
import { lockedKeysAmong } from '../../storage/system-tables/locks.js';
import type { Access } from '../access/access.js';
import type { ClassCoreView, CoreView } from '../core-types.js';
import { bumpStampRefusingLocked, refuseLockedElsewhere } from '../sessions/locks.js';
import { cascadeDrops, cascadesReachTracked, cascadesRunUserCode, dropRules, refuseRelatedKeys } from './delete-rules.js';
import { checkValues, type KnownTargets } from './rules.js';
import { recordDrops, stampedValues, trackedStamp, type TrackedBatch } from './tracking.js';

/**
 * A write's own statements run no user code (the events run around them, in Entity.save and
 * drop): on its own (not inside a caller's transaction), one that the database stopped for a
 * conflict is run again, where the engine's conflicts are worth it (Dialect.concurrency.conflictRetries).
 */
const pureUnit = (storage: { readonly dialect: { readonly concurrency: { readonly conflictRetries: number } } }, access: Access) => ({ retries: storage.dialect.concurrency.conflictRetries, budget: access.budget });

export interface SavedState {
  key: unknown;
  stamp: number;
  timestamp: number;
  /** the `__GlobalStamp` the write stored, for a dataclass that tracks its changes (tracking.ts) */
  globalStamp?: number;
}

/**
 * Saves that share one all-or-nothing transaction in which no user code runs (a REST `$atomic`
 * batch of a dataclass without events or calculated set functions), made for one run of that
 * transaction and used inside it only: a failure of any save undoes them all, so none needs a
 * savepoint of its own; the global stamp is moved once, by the first (readers see the batch's
 * changes and the new stamp at its commit, together); relation targets the batch names are looked
 * up before the saves, in one query per target (rules.ts knownTargets).
 */
export interface WriteBatch extends TrackedBatch {
  /** the global stamp was moved in this run of the transaction */
  stampMoved: boolean;
  /** the relation targets the batch's saves name that exist */
  known?: KnownTargets;
}

/** A write's statements: in the batch's transaction as they are, else in a transaction of their own (a savepoint inside a caller's). */
function inWrite<T>(storage: CoreView['storage'], batch: WriteBatch | undefined, access: Access, fn: () => Promise<T>): Promise<T> {
  return batch ? fn() : storage.transaction(fn, pureUnit(storage, access));
}

/** Moves the global stamp, once per batch. */
async function moveGlobalStamp(core: CoreView, batch: WriteBatch | undefined): Promise<void> {
  if (batch?.stampMoved) return;
  await bumpGlobalStamp(core.storage);
  if (batch) batch.stampMoved = true;
}

/** The error for a key no entity has: 4D's 1542, in 4D's words. */
export function entityNotFound(dc: DataClassModel, key: unknown): DatasetError {
  return new DatasetError('ENTITY_NOT_FOUND', `Cannot find entity with "${String(key)}" key in the "${dc.name}" dataclass`);
}

/** The error for a stamp that is not the stored one (someone saved the entity since): 4D's stack 1263, 1046, 1517. */
export function stampChanged(database: string, dc: DataClassModel, key: unknown, what: 'saved' | 'dropped' = 'saved'): DatasetError {
  return new DatasetError('STAMP_CHANGED', `Given stamp does not match current one for record# ${String(key)} of table ${dc.name}`, [
    { name: 'RECORD_NOT_SAVED', message: `Cannot ${what === 'saved' ? 'save' : 'delete'} record ${String(key)} in table ${dc.name} of database ${database}` },
    { name: 'ENTITY_NOT_SAVED', message: `The entity# ${String(key)} in the "${dc.name}" dataclass cannot be ${what}` },
  ]);
}

const filesOf = new WeakMap<DataClassModel, StorageAttribute[]>();

/** The image and blob attributes of a dataclass. */
function fileAttributes(dc: DataClassModel): StorageAttribute[] {
  let list = filesOf.get(dc);
  if (!list) filesOf.set(dc, (list = dc.storage.filter((a) => a.type === 'image' || a.type === 'blob')));
  return list;
}

/** Inserts a new entity (its values checked by the rules of a save, in the same transaction); resolves to its key, stamp and time. */
export function insertEntity(classCore: ClassCoreView, values: ReadonlyMap<StorageAttribute, unknown>, access: Access, batch?: WriteBatch): Promise<SavedState> {
  const { core, model: dc } = classCore;
  const storage = core.storage;
  return inWrite(storage, batch, access, async () => {
    // (a tracked dataclass's write moves the global stamp first: it stores the new value; on
    // PostgreSQL its lock before the relations' targets are held, as a drop takes it before its rows)
    const globalStamp = dc.globalStamp ? await trackedStamp(core, dc, batch) : undefined;
    await checkValues(classCore, values, access, batch?.known, true);
    // the time is taken once the writer is ours, so that saves are stamped in the order they commit
    const timestamp = Date.now();
    const stored = stampedValues(dc, values, globalStamp);
    // (where the stamp's increase is an expression, the INSERT moves it: no statement more)
    const moveStamp = globalStamp === undefined && !batch?.stampMoved;
    const inInsert = moveStamp ? (globalStampBumpExpression(storage) ?? undefined) : undefined;
    const shape = insertShape(storage.dialect, dc, [...stored.keys()], inInsert);
    const row = await unique(dc, () => storage.get(shape.sql, writeParams(storage.dialect, shape, stored, 1, timestamp)));
    await moveFiles(core, dc, row?.[dc.key.name], new Map(), values);
    if (moveStamp && inInsert === undefined) await moveGlobalStamp(core, batch);
    else if (moveStamp && batch) batch.stampMoved = true;
    return { key: row?.[dc.key.name], stamp: 1, timestamp, globalStamp };
  });
}

/** Updates an entity if its stamp still matches (and the caller may change it), its values checked by the rules of a save; resolves to its new stamp and time. */
export function updateEntity(classCore: ClassCoreView, key: unknown, stamp: number, values: ReadonlyMap<StorageAttribute, unknown>, access: Access, batch?: WriteBatch): Promise<SavedState> {
  const { core, model: dc } = classCore;
  const storage = core.storage;
  return inWrite(storage, batch, access, async () => {
    const globalStamp = dc.globalStamp ? await trackedStamp(core, dc, batch) : undefined;
    await checkValues(classCore, values, access, batch?.known, true);
    const timestamp = Date.now();
    const before = await storedFiles(core, dc, key, fileAttributes(dc).filter((a) => values.has(a)), access);
    const { sql, params } = updateStatement(storage.dialect, dc, key, stamp, stampedValues(dc, values, globalStamp), timestamp, access);
    if ((await unique(dc, () => storage.run(sql, params))) === 0) await whyUnchanged(core, dc, key, 'saved', access);
    // (asked once the UPDATE holds the row: a lock taken meanwhile waited for it, or is seen)
    const moveStamp = globalStamp === undefined && !batch?.stampMoved;
    await bumpStampRefusingLocked(core, dc, key, access, 'saved', moveStamp);
    if (batch && moveStamp) batch.stampMoved = true;
    await moveFiles(core, dc, key, before, values);
    return { key, stamp: stamp + 1, timestamp, globalStamp };
  });
}

/** An update's statement: the one kept for its shape (statements.ts updateShape), or, under a row filter (the caller's own), compiled for it. */
function updateStatement(d: Dialect, dc: DataClassModel, key: unknown, stamp: number, values: ReadonlyMap<StorageAttribute, unknown>, timestamp: number, access: Access): CompiledSql {
  if (access.restrict !== null) return compileUpdate(d, dc, key, stamp, values, timestamp, access.restrict);
  const shape = updateShape(d, dc, [...values.keys()]);
  return { sql: shape.sql, params: writeParams(d, shape, values, timestamp, d.types.encode(dc.key.type, key, dc.key.dateOnly), stamp) };
}

/**
 * Deletes one entity by key, if its stamp still matches (and the caller may delete it); its files
 * go with it. Its relations' delete controls (delete-rules.ts): a `refuse` relation with related
 * entities refuses it first; once it is deleted, the related entities of its `cascade` relations
 * are dropped, in the same transaction.
 */
export function deleteEntity(core: CoreView, dc: DataClassModel, key: unknown, stamp: number, access: Access): Promise<void> {
  const storage = core.storage;
  const { sql, params } = compileDelete(storage.dialect, dc, key, stamp, access.restrict);
  // (a cascade that runs user code, the related entities' events or entity classes: such a unit is not run again)
  const unit = dropRules(dc).cascade.length > 0 && cascadesRunUserCode(core, dc) ? { retries: 0, budget: access.budget } : pureUnit(storage, access);
  return storage.transaction(async () => {
    const globalStamp = dc.globalStamp ? await trackedStamp(core, dc, undefined) : undefined;
    // (a cascade into a tracked dataclass: its turn first, before this row's lock, as a tracked save takes it)
    if (globalStamp === undefined && cascadesReachTracked(dc)) await takeTrackedTurn(storage);
    const before = await storedFiles(core, dc, key, fileAttributes(dc), access);
    if ((await storage.run(sql, params)) === 0) await whyUnchanged(core, dc, key, 'dropped', access);
    // (once the DELETE holds the row: a save of a related entity under way was waited for)
    await refuseRelatedKeys(core, dc, [key]);
    await bumpStampRefusingLocked(core, dc, key, access, 'dropped', globalStamp === undefined);
    if (globalStamp !== undefined) await recordDrops(core, dc, [key], globalStamp);
    for (const id of before.values()) if (id !== null) await core.files.remove(id);
    await cascadeDrops(core, dc, [key], access);
  }, unit);
}

/**
 * Deletes the entities of `keys` (one chunk of a big delete, KEYS_PER_QUERY at most) that still
 * meet `where` and the caller's row filter, in the caller's transaction, in one statement: what
 * deleteEntity does for each, for all of them at once — the pessimistic lock of another session
 * refuses (asked once the DELETE holds the rows, as a single delete asks), the locks of the others
 * go with their entities, so do their files, and the global stamp moves once per batch; the delete
 * controls of their relations apply (delete-rules.ts; `refuseChecked`: the caller asked the refuse
 * relations for the whole drop). No entity is read into memory and no user code runs (but a
 * cascade's, in the related dataclass's drop): the caller made sure there is none to run (no drop
 * event, no drop() of a user entity class). Resolves to how many were deleted.
 */
export async function deleteKeys(core: CoreView, dc: DataClassModel, keys: readonly unknown[], where: Condition | null, access: Access, batch: WriteBatch, refuseChecked = false): Promise<number> {
  if (keys.length === 0) return 0;
  const storage = core.storage;
  const d = storage.dialect;
  // (a tracked dataclass: the stamp first, as every other write takes it — on PostgreSQL its lock
  // before any row's, else this and a tracked save could each wait for the other)
  const globalStamp = dc.globalStamp ? await trackedStamp(core, dc, batch) : undefined;
  if (globalStamp === undefined && cascadesReachTracked(dc)) await takeTrackedTurn(storage);
  // the rows as the caller reaches them (its row filter, the selection's condition), by key
  const { sql, params } = compileDeleteAmong(d, dc, keys, where, [dc.key, ...fileAttributes(dc)], access.restrict);
  const rows = await storage.arrays(sql, params);
  if (rows.length === 0) return 0;
  const deleted = rows.map((r) => d.types.decode(dc.key.type, r[0], false));
  const locked = await lockedKeysAmong(storage, dc.name, deleted.map(String));
  await refuseLockedElsewhere(core, dc, locked, access, 'dropped');
  if (globalStamp !== undefined) await recordDrops(core, dc, deleted, globalStamp);
  else await moveGlobalStamp(core, batch);
  // the refuse relations, once the DELETE holds the rows (a save of a related entity under way was
  // waited for); where the whole drop was asked already, again only where another writer can be
  // under way (PostgreSQL: rules.ts targetExists)
  if (!refuseChecked || d.concurrency.concurrentWriters) await refuseRelatedKeys(core, dc, deleted);
  for (const row of rows) for (let i = 1; i < row.length; i++) if (row[i] !== null && row[i] !== undefined) await core.files.remove(Number(row[i]));
  await cascadeDrops(core, dc, deleted, access);
  return rows.length;
}

/** The files an entity's image and blob attributes hold now (read in the write's transaction). */
async function storedFiles(core: CoreView, dc: DataClassModel, key: unknown, attrs: readonly StorageAttribute[], access: Access): Promise<Map<StorageAttribute, number | null>> {
  const out = new Map<StorageAttribute, number | null>();
  if (attrs.length === 0) return out;
  const row = await core.storage.get(...byKey(core, dc, key, attrs.map((attr) => ({ kind: 'storage', attr })), access));
  for (const a of attrs) out.set(a, row?.[a.name] === null || row?.[a.name] === undefined ? null : Number(row[a.name]));
  return out;
}

/** After a write: the new files of image and blob attributes are claimed, the ones they replaced removed. */
async function moveFiles(core: CoreView, dc: DataClassModel, key: unknown, before: ReadonlyMap<StorageAttribute, number | null>, values: ReadonlyMap<StorageAttribute, unknown>): Promise<void> {
  for (const attr of fileAttributes(dc)) {
    if (!values.has(attr)) continue;
    const now = values.get(attr) === null || values.get(attr) === undefined ? null : Number(values.get(attr));
    const old = before.get(attr) ?? null;
    if (now === old) continue;
    if (now !== null) await core.files.claim(now, `${dc.name}(${String(key)}).${attr.name}`);
    if (old !== null) await core.files.remove(old);
  }
}

/** After an UPDATE or DELETE … AND stamp = ? changed nothing: the entity is gone (or hidden from the caller), or its stamp moved. */
async function whyUnchanged(core: CoreView, dc: DataClassModel, key: unknown, what: 'saved' | 'dropped', access: Access): Promise<never> {
  const row = await core.storage.get(...byKey(core, dc, key, [{ kind: 'stamp' }], access));
  if (!row) throw entityNotFound(dc, key);
  throw stampChanged(core.name, dc, key, what);
}

/** A SELECT of some columns of one entity, as [sql, params]. */
function byKey(core: CoreView, dc: DataClassModel, key: unknown, columns: Parameters<typeof compileSelect>[1]['columns'], access: Access): [string, readonly unknown[]] {
  const { sql, params } = compileSelect(core.storage.dialect, { dataClass: dc, columns, order: [], where: { kind: 'compare', path: directPath(dc.key), op: '=', value: key } }, access.restrict);
  return [sql, params];
}

/** Runs a write, turning an engine's unique-constraint failure into a DatasetError naming the attribute. */
async function unique<T>(dc: DataClassModel, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ConstraintError && e.constraint === 'unique') {
      const attr = dc.storage.find((a) => a.column === e.column);
      throw new DatasetError('VALUE_NOT_UNIQUE', `another ${dc.name} entity already has this value for '${attr?.name ?? e.column}'`, [], attr ? { attributeName: attr.name } : {});
    }
    throw e;
  }
}
