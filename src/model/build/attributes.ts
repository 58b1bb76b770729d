// The model's second pass: each dataclass's attributes (model/load-model.ts). It reads every
// attribute entry — its kind, its name (unique in its dataclass, case-insensitively), its common
// options — and finishes the storage attributes (type, flags, rename); the other kinds wait, as
// Pending entries keeping their JSON, for the passes that resolve them (relations.ts,
// derived.ts). What it guarantees the next passes: every storage attribute the model declares
// is complete, renames among them are checked, and a dataclass with exactly one identifying
// attribute has it as its `key` (one with none or several is reported, its key left unset).

import { didYouMean } from '../../util/suggest.js';
import { STORAGE_TYPES, type AttributeModel, type DataClassModel, type StorageAttribute, type StorageType } from '../types.js';
import { attributesOf, checkKeys, checkName, checkRenamedFrom, checkRenames, isObject, optionalBool, type Draft, type Fail, type Json } from './checks.js';

const KINDS = ['storage', 'relatedEntity', 'relatedEntities', 'alias', 'calculated'] as const;
const COMMON_ATTR_KEYS = ['name', 'kind', 'exposed', 'defaultFormat', 'multiLine', 'extraProperties'];
const ATTR_KEYS: Record<(typeof KINDS)[number], string[]> = {
  storage: [...COMMON_ATTR_KEYS, 'type', 'identifying', 'autoincrement', 'autogenerate', 'indexed', 'unique', 'dateOnly', 'notNull', 'renamedFrom'],
  relatedEntity: [...COMMON_ATTR_KEYS, 'type', 'foreignKey', 'path', 'renamedFrom'],
  relatedEntities: [...COMMON_ATTR_KEYS, 'type', 'path', 'reversePath', 'deleteRule'],
  alias: [...COMMON_ATTR_KEYS, 'path', 'type'],
  calculated: [...COMMON_ATTR_KEYS, 'type'],
};
/** Types a client may supply as a primary key, besides the generated long/long64/uuid keys. */
const KEY_TYPES: ReadonlySet<StorageType> = new Set(['long', 'long64', 'word', 'byte', 'uuid', 'string', 'number']);
const NOT_INDEXABLE: ReadonlySet<StorageType> = new Set(['image', 'blob', 'object']);

/** Reads the attributes of every dataclass of the draft, and finds each one's key. */
export function readAttributes(draft: Draft, fail: Fail): void {
  for (const dc of draft.classes) {
    const entries = draft.rawAttrs.get(dc) ?? [];
    const attrs = attributesOf(dc);
    const names = new Set<string>();
    for (const { raw, path } of entries) {
      const attr = readAttribute(raw, path, dc, names, fail);
      if (attr) attrs.push(attr);
    }
    const storagePaths = new Map(entries.map(({ raw, path }) => [isObject(raw) ? raw.name : undefined, path]));
    checkRenames(attrs.filter((a): a is StorageAttribute => a.kind === 'storage'), (a) => `${storagePaths.get(a.name) ?? '$'}.renamedFrom`, `an attribute of ${dc.name}`, fail, attrs);
    const keys = attrs.filter((a) => a.kind === 'storage' && a.identifying) as StorageAttribute[];
    const cpath = `$.dataClasses[${draft.jsonIndex.get(dc)}]`;
    if (keys.length === 0) fail(cpath, `dataclass ${dc.name} has no identifying attribute (exactly one is required)`);
    else if (keys.length > 1) fail(cpath, `dataclass ${dc.name} has ${keys.length} identifying attributes (${keys.map((k) => k.name).join(', ')}); exactly one is required`);
    else dc.key = keys[0];
  }
}

/** One attribute entry: a finished storage attribute, another kind pending, or undefined (its problem reported). `names` are those of the dataclass so far. */
function readAttribute(raw: Json, path: string, dc: DataClassModel, names: Set<string>, fail: Fail): AttributeModel | undefined {
  if (!isObject(raw)) {
    fail(path, 'must be an object');
    return undefined;
  }
  const kind = raw.kind ?? 'storage';
  if (!KINDS.includes(kind as (typeof KINDS)[number])) {
    fail(`${path}.kind`, `unknown kind '${String(kind)}'${didYouMean(String(kind), KINDS)} (one of ${KINDS.join(', ')})`);
    return undefined;
  }
  checkKeys(raw, ATTR_KEYS[kind as (typeof KINDS)[number]], path, fail);
  if (!checkName(raw.name, `${path}.name`, fail)) return undefined;
  const clash = [...names].find((n) => n.toLowerCase() === (raw.name as string).toLowerCase());
  if (clash !== undefined) {
    fail(`${path}.name`, clash === raw.name ? `duplicate attribute name '${raw.name}' in ${dc.name}` : `'${raw.name}' and '${clash}' in ${dc.name} differ only by case; attribute names must differ otherwise`);
    return undefined;
  }
  names.add(raw.name);
  optionalBool(raw, 'exposed', path, fail);
  optionalBool(raw, 'multiLine', path, fail);
  if (raw.defaultFormat !== undefined && !(isObject(raw.defaultFormat) && typeof raw.defaultFormat.format === 'string')) {
    fail(`${path}.defaultFormat`, 'must be an object { "format": string }');
  }
  const base = {
    name: raw.name,
    fieldPos: 0,
    exposed: raw.exposed !== false,
    dataClass: dc,
    ...(raw.defaultFormat !== undefined ? { defaultFormat: raw.defaultFormat as { format: string } } : {}),
    ...(raw.multiLine === true ? { multiLine: true } : {}),
    ...(isObject(raw.extraProperties) ? { extraProperties: raw.extraProperties } : {}),
  };
  // Only storage attributes are complete after this pass; the rest are finished by the next ones.
  if (kind === 'storage') return storageAttribute(raw, base, path, fail);
  return { ...base, kind, __raw: raw, __path: path } as unknown as AttributeModel;
}

function storageAttribute(raw: Json, base: object, path: string, fail: Fail): StorageAttribute | undefined {
  const type = raw.type;
  if (!STORAGE_TYPES.includes(type as StorageType)) {
    fail(`${path}.type`, `unknown type '${String(type)}'${didYouMean(String(type), STORAGE_TYPES)} (one of ${STORAGE_TYPES.join(', ')})`);
    return undefined;
  }
  for (const flag of ['identifying', 'autoincrement', 'autogenerate', 'indexed', 'unique', 'dateOnly', 'notNull']) optionalBool(raw, flag, path, fail);
  const t = type as StorageType;
  const identifying = raw.identifying === true;
  const renamedFrom = checkRenamedFrom(raw.renamedFrom, raw.name as string, `${path}.renamedFrom`, fail);
  if (raw.autoincrement === true && !(identifying && (t === 'long' || t === 'long64'))) {
    fail(`${path}.autoincrement`, 'only an identifying long or long64 attribute can be autoincrement');
  }
  if (raw.autogenerate === true && !(identifying && t === 'uuid')) fail(`${path}.autogenerate`, 'only an identifying uuid attribute can be autogenerate');
  if (identifying && !KEY_TYPES.has(t)) fail(`${path}.type`, `a ${t} attribute cannot be identifying (use long, long64, uuid, string or number)`);
  if ((raw.indexed === true || raw.unique === true) && NOT_INDEXABLE.has(t)) fail(path, `a ${t} attribute cannot be indexed or unique`);
  if (raw.dateOnly === true && t !== 'date') fail(`${path}.dateOnly`, 'only a date attribute can be dateOnly');
  return {
    ...(base as Omit<StorageAttribute, 'kind'>),
    kind: 'storage',
    type: t,
    column: raw.name as string,
    identifying,
    autoincrement: raw.autoincrement === true,
    autogenerate: raw.autogenerate === true,
    // The primary key is always indexed (catalog shows `indexed: true` on it).
    indexed: raw.indexed === true || raw.unique === true || identifying,
    unique: raw.unique === true,
    dateOnly: raw.dateOnly === true,
    notNull: raw.notNull === true,
    implicit: false,
    ...(renamedFrom !== undefined ? { renamedFrom } : {}),
  };
}
