// Reads model.json and turns it into the resolved Model. Validation is strict and reports every
// mistake at once, each with its JSON path, before anything touches the database.

import { readFile } from 'node:fs/promises';
import { didYouMean } from '../util/suggest.js';
import {
  INTEGER_TYPES, STORAGE_TYPES,
  type AttributeModel, type DataClassModel, type Model, type StorageAttribute, type StorageType,
} from './types.js';

export class ModelError extends Error {
  constructor(readonly problems: readonly string[], source: string) {
    super(`${source}: ${problems.length} problem${problems.length === 1 ? '' : 's'} in the model:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ModelError';
  }
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const KINDS = ['storage', 'relatedEntity', 'relatedEntities', 'alias', 'calculated'] as const;
const MODEL_KEYS = ['name', 'dataClasses'];
const CLASS_KEYS = ['name', 'className', 'collectionName', 'defaultTopSize', 'exposed', 'extraProperties', 'attributes', 'renamedFrom'];
const COMMON_ATTR_KEYS = ['name', 'kind', 'exposed', 'defaultFormat', 'multiLine', 'extraProperties'];
const ATTR_KEYS: Record<(typeof KINDS)[number], string[]> = {
  storage: [...COMMON_ATTR_KEYS, 'type', 'identifying', 'autoincrement', 'autogenerate', 'indexed', 'unique', 'dateOnly', 'notNull', 'renamedFrom'],
  relatedEntity: [...COMMON_ATTR_KEYS, 'type', 'foreignKey', 'path', 'renamedFrom'],
  relatedEntities: [...COMMON_ATTR_KEYS, 'type', 'path', 'reversePath'],
  alias: [...COMMON_ATTR_KEYS, 'path', 'type'],
  calculated: [...COMMON_ATTR_KEYS, 'type'],
};
/** Types a client may supply as a primary key, besides the generated long/long64/uuid keys. */
const KEY_TYPES: ReadonlySet<StorageType> = new Set(['long', 'long64', 'word', 'byte', 'uuid', 'string', 'number']);
const NOT_INDEXABLE: ReadonlySet<StorageType> = new Set(['image', 'blob', 'object']);

type Json = Record<string, unknown>;
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export async function loadModelFile(file: string): Promise<Model> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ModelError([`cannot read the model file (${(e as NodeJS.ErrnoException).code ?? String(e)})`], file);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ModelError([`not valid JSON: ${(e as Error).message}`], file);
  }
  return buildModel(json, file);
}

/** Validates a parsed model.json and resolves it; throws ModelError listing every problem. */
export function buildModel(json: unknown, source = 'model.json'): Model {
  const problems: string[] = [];
  const fail = (path: string, msg: string): void => void problems.push(`${path}: ${msg}`);
  if (!isObject(json)) throw new ModelError(['$: the model must be a JSON object'], source);
  checkKeys(json, MODEL_KEYS, '$', fail);
  if (typeof json.name !== 'string' || json.name.trim() === '') fail('$.name', 'must be a non-empty string');
  if (!Array.isArray(json.dataClasses) || json.dataClasses.length === 0) {
    fail('$.dataClasses', 'must be a non-empty array of dataclasses');
    throw new ModelError(problems, source);
  }

  // Pass 1: dataclasses and their storage attributes; relations wait until every class exists.
  const classes: Mutable<DataClassModel>[] = [];
  /** where each dataclass stands in the JSON (some entries may have been skipped) */
  const jsonIndex = new Map<DataClassModel, number>();
  const rawAttrs = new Map<DataClassModel, { raw: Json; path: string }[]>();
  json.dataClasses.forEach((rawClass: unknown, i: number) => {
    const path = `$.dataClasses[${i}]`;
    if (!isObject(rawClass)) return fail(path, 'must be an object');
    checkKeys(rawClass, CLASS_KEYS, path, fail);
    const name = rawClass.name;
    if (!checkName(name, `${path}.name`, fail)) return;
    // SQLite's names are case-insensitive: Company and company would be one table.
    const clash = classes.find((c) => c.name.toLowerCase() === name.toLowerCase());
    if (clash) return fail(`${path}.name`, clash.name === name ? `duplicate dataclass name '${name}'` : `'${name}' and '${clash.name}' differ only by case; dataclass names must differ otherwise`);
    const topSize = rawClass.defaultTopSize;
    if (topSize !== undefined && !(Number.isInteger(topSize) && (topSize as number) > 0)) {
      fail(`${path}.defaultTopSize`, 'must be a positive integer');
    }
    optionalBool(rawClass, 'exposed', path, fail);
    if (rawClass.extraProperties !== undefined && !isObject(rawClass.extraProperties)) fail(`${path}.extraProperties`, 'must be an object');
    for (const key of ['className', 'collectionName'] as const) {
      if (rawClass[key] !== undefined) checkName(rawClass[key], `${path}.${key}`, fail);
    }
    const renamedFrom = checkRenamedFrom(rawClass.renamedFrom, name, `${path}.renamedFrom`, fail);
    const dc: Mutable<DataClassModel> = {
      name,
      ...(renamedFrom !== undefined ? { renamedFrom } : {}),
      className: (rawClass.className as string | undefined) ?? name,
      collectionName: (rawClass.collectionName as string | undefined) ?? `${name}Selection`,
      tableNumber: classes.length + 1,
      table: name,
      defaultTopSize: topSize as number | undefined,
      exposed: rawClass.exposed !== false,
      extraProperties: (rawClass.extraProperties as Json | undefined) ?? {},
      attributes: [],
      attributesByName: new Map(),
      key: undefined as unknown as StorageAttribute,
      storage: [],
    };
    classes.push(dc);
    jsonIndex.set(dc, i);
    if (!Array.isArray(rawClass.attributes) || rawClass.attributes.length === 0) {
      fail(`${path}.attributes`, 'must be a non-empty array of attributes');
      rawAttrs.set(dc, []);
      return;
    }
    rawAttrs.set(dc, rawClass.attributes.map((raw: unknown, j: number) => ({ raw: raw as Json, path: `${path}.attributes[${j}]` })));
  });
  checkRenames(classes, (dc) => `$.dataClasses[${jsonIndex.get(dc)}].renamedFrom`, 'a dataclass', fail);
  const byName = new Map(classes.map((c) => [c.name, c]));
  const byCollection = new Map(classes.map((c) => [c.collectionName, c]));

  for (const dc of classes) {
    const attrs = dc.attributes as AttributeModel[];
    const names = new Set<string>();
    for (const { raw, path } of rawAttrs.get(dc) ?? []) {
      if (!isObject(raw)) {
        fail(path, 'must be an object');
        continue;
      }
      const kind = raw.kind ?? 'storage';
      if (!KINDS.includes(kind as (typeof KINDS)[number])) {
        fail(`${path}.kind`, `unknown kind '${String(kind)}'${didYouMean(String(kind), KINDS)} (one of ${KINDS.join(', ')})`);
        continue;
      }
      checkKeys(raw, ATTR_KEYS[kind as (typeof KINDS)[number]], path, fail);
      if (!checkName(raw.name, `${path}.name`, fail)) continue;
      const clash = [...names].find((n) => n.toLowerCase() === (raw.name as string).toLowerCase());
      if (clash !== undefined) {
        fail(`${path}.name`, clash === raw.name ? `duplicate attribute name '${raw.name}' in ${dc.name}` : `'${raw.name}' and '${clash}' in ${dc.name} differ only by case; attribute names must differ otherwise`);
        continue;
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
      // Only storage attributes are complete after pass 1; the rest are finished in pass 2.
      if (kind === 'storage') {
        const attr = storageAttribute(raw, base, path, fail);
        if (attr) attrs.push(attr);
      } else {
        attrs.push({ ...base, kind, __raw: raw, __path: path } as unknown as AttributeModel);
      }
    }
    const storagePaths = new Map((rawAttrs.get(dc) ?? []).map(({ raw, path }) => [isObject(raw) ? raw.name : undefined, path]));
    checkRenames(attrs.filter((a): a is StorageAttribute => a.kind === 'storage'), (a) => `${storagePaths.get(a.name) ?? '$'}.renamedFrom`, `an attribute of ${dc.name}`, fail, attrs);
    const keys = attrs.filter((a) => a.kind === 'storage' && a.identifying) as StorageAttribute[];
    const cpath = `$.dataClasses[${jsonIndex.get(dc)}]`;
    if (keys.length === 0) fail(cpath, `dataclass ${dc.name} has no identifying attribute (exactly one is required)`);
    else if (keys.length > 1) fail(cpath, `dataclass ${dc.name} has ${keys.length} identifying attributes (${keys.map((k) => k.name).join(', ')}); exactly one is required`);
    else dc.key = keys[0];
  }

  // Pass 2: relations (creating implicit foreign keys), then inverses, aliases and calculated types.
  for (const dc of classes) {
    const attrs = dc.attributes as AttributeModel[];
    for (let i = 0; i < attrs.length; i++) {
      const pending = attrs[i] as unknown as { kind: string; __raw?: Json; __path: string };
      if (pending.kind !== 'relatedEntity' || !pending.__raw) continue;
      const raw = pending.__raw;
      const path = pending.__path;
      const target = typeof raw.type === 'string' ? byName.get(raw.type) : undefined;
      if (!target) {
        fail(`${path}.type`, `relatedEntity '${raw.name}' must name a dataclass in 'type'; '${String(raw.type)}' is not one${didYouMean(String(raw.type), byName.keys())}`);
        continue;
      }
      if (raw.path !== undefined && raw.path !== target.name) fail(`${path}.path`, `for a relatedEntity, 'path' is the target dataclass name ('${target.name}')`);
      const fkName = raw.foreignKey ?? `${String(raw.name)}ID`;
      if (typeof fkName !== 'string' || !NAME.test(fkName)) {
        fail(`${path}.foreignKey`, 'must be an attribute name');
        continue;
      }
      let fk = attrs.find((a) => a.name === fkName);
      const caseClash = attrs.find((a) => a.name !== fkName && a.name.toLowerCase() === fkName.toLowerCase());
      if (!fk && caseClash) {
        fail(`${path}.foreignKey`, `the foreign key '${fkName}' would differ only by case from the attribute '${caseClash.name}'; name it in 'foreignKey'`);
        continue;
      }
      if (fk && fk.kind !== 'storage') {
        fail(`${path}.foreignKey`, `'${fkName}' is a ${fk.kind} attribute; a foreign key must be a storage attribute`);
        continue;
      }
      if (!target.key) continue; // already reported
      if (fk) {
        if (fk.identifying) fail(`${path}.foreignKey`, `'${fkName}' is the primary key of ${dc.name}; a foreign key must be another attribute`);
        else if (!keyTypesMatch(fk.type, target.key.type)) {
          fail(`${path}.foreignKey`, `'${fkName}' is ${fk.type} but ${target.name}'s key '${target.key.name}' is ${target.key.type}`);
        }
      } else {
        // a relation renamed takes its implicit foreign key along: <old>ID becomes <name>ID (storage/schema.ts)
        const from = checkRenamedFrom(raw.renamedFrom, raw.name as string, `${path}.renamedFrom`, fail);
        const oldKey = from === undefined || raw.foreignKey !== undefined ? undefined : `${from}ID`;
        fk = implicitForeignKey(dc, fkName, target.key.type, oldKey !== undefined && !attrs.some((a) => a.name.toLowerCase() === oldKey.toLowerCase()) ? oldKey : undefined);
        attrs.push(fk);
      }
      attrs[i] = { ...omitPending(pending), kind: 'relatedEntity', target, foreignKey: fk, inverse: undefined } as unknown as AttributeModel;
    }
  }
  for (const dc of classes) {
    const attrs = dc.attributes as AttributeModel[];
    for (let i = 0; i < attrs.length; i++) {
      const pending = attrs[i] as unknown as { kind: string; name: string; __raw?: Json; __path: string };
      if (pending.kind !== 'relatedEntities' || !pending.__raw) continue;
      const raw = pending.__raw;
      const path = pending.__path;
      const target = typeof raw.type === 'string' ? byCollection.get(raw.type) : undefined;
      if (!target) {
        fail(`${path}.type`, `relatedEntities '${pending.name}' must name a selection ('<Dataclass>Selection') in 'type'; '${String(raw.type)}' is not one${didYouMean(String(raw.type), byCollection.keys())}`);
        continue;
      }
      const inverse = target.attributes.find((a) => a.name === raw.path);
      if (typeof raw.path !== 'string' || !inverse) {
        fail(`${path}.path`, `must name the relatedEntity attribute of ${target.name} that points to ${dc.name}; '${String(raw.path)}' is not an attribute of ${target.name}${didYouMean(String(raw.path), target.attributes.map((a) => a.name))}`);
        continue;
      }
      if (inverse.kind === 'relatedEntity' && !inverse.target) continue; // its own problem is already reported
      if (inverse.kind !== 'relatedEntity' || inverse.target !== dc) {
        fail(`${path}.path`, `inverse mismatch: ${target.name}.${inverse.name} must be a relatedEntity to ${dc.name}, it is ${inverse.kind === 'relatedEntity' ? `a relatedEntity to ${inverse.target.name}` : `a ${inverse.kind} attribute`}`);
        continue;
      }
      if (raw.reversePath !== undefined && raw.reversePath !== true) fail(`${path}.reversePath`, 'can only be true');
      const attr = { ...omitPending(pending), kind: 'relatedEntities', target, inverse } as unknown as AttributeModel;
      attrs[i] = attr;
      if (inverse.inverse) fail(`${path}.path`, `${target.name}.${inverse.name} is already the inverse of ${dc.name}.${inverse.inverse.name}`);
      else (inverse as Mutable<typeof inverse>).inverse = attr as never;
    }
  }
  // Calculated attributes first, so that aliases ending on one (in any dataclass) find their type.
  for (const pass of ['calculated', 'alias'])
  for (const dc of classes) {
    const attrs = dc.attributes as AttributeModel[];
    for (let i = 0; i < attrs.length; i++) {
      const pending = attrs[i] as unknown as { kind: string; name: string; __raw?: Json; __path: string };
      if (!pending.__raw || pending.kind !== pass) continue;
      const raw = pending.__raw;
      const path = pending.__path;
      if (pending.kind === 'calculated') {
        const t = raw.type;
        if (typeof t !== 'string' || !(STORAGE_TYPES.includes(t as StorageType) || byName.has(t) || byCollection.has(t))) {
          fail(`${path}.type`, `a calculated attribute needs a 'type': a storage type (${STORAGE_TYPES.join(', ')}), a dataclass or a selection name${didYouMean(String(t), STORAGE_TYPES)}`);
        }
        attrs[i] = { ...omitPending(pending), kind: 'calculated', type: String(t) } as unknown as AttributeModel;
      } else if (pending.kind === 'alias') {
        const resolved = resolveAliasPath(dc, raw.path, `${path}.path`, fail);
        if (!resolved) continue;
        if (raw.type !== undefined && raw.type !== resolved.type) fail(`${path}.type`, `an alias takes its type from its target ('${resolved.type}'); leave 'type' out`);
        attrs[i] = { ...omitPending(pending), kind: 'alias', path: raw.path as string, ...resolved } as unknown as AttributeModel;
      }
    }
  }
  if (problems.length > 0) throw new ModelError(problems, source);

  for (const dc of classes) {
    dc.attributesByName = new Map(dc.attributes.map((a) => [a.name, a]));
    dc.storage = dc.attributes.filter((a): a is StorageAttribute => a.kind === 'storage');
    // fieldPos is a field's position in its table (storage attributes); a relation shows the
    // position of the field it is built on, as 4D does; alias and calculated attributes have none.
    dc.storage.forEach((a, i) => ((a as Mutable<AttributeModel>).fieldPos = i + 1));
  }
  for (const dc of classes) {
    for (const a of dc.attributes as Mutable<AttributeModel>[]) {
      if (a.kind === 'relatedEntity') a.fieldPos = a.foreignKey.fieldPos;
      else if (a.kind === 'relatedEntities') a.fieldPos = dc.key.fieldPos;
    }
  }
  // read-only from here on, for every layer and for user code alike
  return deepFreeze({ name: json.name as string, dataClasses: classes, dataClassesByName: byName });
}

function storageAttribute(raw: Json, base: object, path: string, fail: (p: string, m: string) => void): StorageAttribute | undefined {
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

/** A `renamedFrom` is a name (the one it had before), not its own. */
function checkRenamedFrom(v: unknown, own: string, path: string, fail: (p: string, m: string) => void): string | undefined {
  if (v === undefined) return undefined;
  if (!checkName(v, path, fail)) return undefined;
  if (v === own) {
    fail(path, `'${v}' is its own name: renamedFrom names the name it had before`);
    return undefined;
  }
  if (v.toLowerCase() === own.toLowerCase()) {
    // (SQLite's names are case-insensitive: the column would be renamed onto itself)
    fail(path, `'${v}' differs from '${own}' only by case, which is no rename to the database: keep the former name, or rename through another name`);
    return undefined;
  }
  return v;
}

/**
 * Two names for one old table or column would make the rename ambiguous: a renamedFrom may not
 * name something the model still has (under that name it stays), nor be given twice.
 */
function checkRenames<T extends { name: string; renamedFrom?: string }>(
  items: readonly T[], pathOf: (item: T) => string, what: string, fail: (p: string, m: string) => void, all: readonly { name: string }[] = items,
): void {
  const seen = new Map<string, string>();
  for (const item of items) {
    const from = item.renamedFrom;
    if (from === undefined) continue;
    const still = all.find((o) => o.name.toLowerCase() === from.toLowerCase());
    if (still) fail(pathOf(item), `'${from}' is still the name of ${what} in the model: renamedFrom names a name no longer used`);
    else if (seen.has(from.toLowerCase())) fail(pathOf(item), `'${from}' is already the renamedFrom of ${seen.get(from.toLowerCase())}`);
    seen.set(from.toLowerCase(), item.name);
  }
}

function implicitForeignKey(dc: DataClassModel, name: string, type: StorageType, renamedFrom: string | undefined): StorageAttribute {
  return {
    ...(renamedFrom !== undefined ? { renamedFrom } : {}),
    name, fieldPos: 0, exposed: true, dataClass: dc, kind: 'storage', type, column: name,
    identifying: false, autoincrement: false, autogenerate: false,
    // Foreign keys are always indexed: 1→N navigation filters on them.
    indexed: true, unique: false, dateOnly: false, notNull: false, implicit: true,
  };
}

function resolveAliasPath(
  dc: DataClassModel, path: unknown, where: string, fail: (p: string, m: string) => void,
): { steps: AttributeModel[]; type: string; toMany: boolean } | undefined {
  if (typeof path !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(path)) {
    fail(where, `an alias needs a 'path' through a relation, like 'employer.name'; got ${JSON.stringify(path)}`);
    return undefined;
  }
  const steps: AttributeModel[] = [];
  let cls = dc;
  const parts = path.split('.');
  for (let i = 0; i < parts.length; i++) {
    const attr = cls.attributes.find((a) => a.name === parts[i]);
    if (!attr) {
      fail(where, `'${parts[i]}' in '${path}' is not an attribute of ${cls.name}${didYouMean(parts[i], cls.attributes.map((a) => a.name))}`);
      return undefined;
    }
    const kind = (attr as { kind: string }).kind;
    if (kind === 'alias') {
      fail(where, `'${path}' goes through the alias ${cls.name}.${attr.name}; an alias path must name the attributes themselves`);
      return undefined;
    }
    steps.push(attr);
    if (i < parts.length - 1) {
      if (attr.kind !== 'relatedEntity' && attr.kind !== 'relatedEntities') {
        fail(where, `'${parts[i]}' in '${path}' is a ${kind} attribute; only the last step of an alias path can be one`);
        return undefined;
      }
      if (!attr.target) return undefined; // the relation's own problem is already reported
      cls = attr.target;
    }
  }
  const last = steps[steps.length - 1];
  const toMany = steps.some((s) => s.kind === 'relatedEntities');
  let type: string;
  // reference §6.3: an alias to a relation takes the type <Class>Entity or <Class>Selection
  if (last.kind === 'relatedEntity') type = toMany ? last.target.collectionName : `${last.target.name}Entity`;
  else if (last.kind === 'relatedEntities') type = last.target.collectionName;
  else type = (last as { type: string }).type;
  return { steps, type, toMany };
}

function keyTypesMatch(a: StorageType, b: StorageType): boolean {
  return a === b || (INTEGER_TYPES.has(a) && INTEGER_TYPES.has(b));
}

function omitPending<T extends object>(p: T): T {
  const { __raw: _r, __path: _p, ...rest } = p as T & { __raw?: unknown; __path?: unknown };
  return rest as T;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkName(v: unknown, path: string, fail: (p: string, m: string) => void): v is string {
  if (typeof v !== 'string' || !NAME.test(v)) {
    fail(path, `must be a name made of letters, digits and _ (not starting with a digit); got ${JSON.stringify(v)}`);
    return false;
  }
  if (v.includes('__') || v.toLowerCase().startsWith('sqlite_')) {
    fail(path, `'${v}': names containing '__' (__KEY, __STAMP, the folded text columns …) or starting with 'sqlite_' are reserved`);
    return false;
  }
  return true;
}

function checkKeys(obj: Json, allowed: readonly string[], path: string, fail: (p: string, m: string) => void): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) fail(`${path}.${key}`, `unknown property '${key}'${didYouMean(key, allowed)}`);
  }
}

function optionalBool(obj: Json, key: string, path: string, fail: (p: string, m: string) => void): void {
  if (obj[key] !== undefined && typeof obj[key] !== 'boolean') fail(`${path}.${key}`, 'must be true or false');
}

/** Freezes an object graph (maps included: their setters throw), cycles and all. */
function deepFreeze<T>(root: T): T {
  const seen = new Set<unknown>();
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (v instanceof Map) {
      for (const [k, x] of v) {
        visit(k);
        visit(x);
      }
      const frozen = () => {
        throw new TypeError('the model is read-only');
      };
      Object.assign(v, { set: frozen, delete: frozen, clear: frozen });
    }
    for (const x of Object.values(v)) visit(x);
    Object.freeze(v);
  };
  visit(root);
  return root;
}
