// The model's first pass: the dataclasses themselves (model/load-model.ts). It reads each entry
// of `dataClasses` — its name (unique, case-insensitively: SQLite's table names are), its
// options, its rename — and leaves its attributes unread. What it guarantees the next passes:
// every dataclass in the draft has a valid unique name, its defaults applied (class and
// collection names, table number, exposure), its attribute entries waiting in `rawAttrs`, and
// the lookups by name and by collection name built; an entry with a problem in its own name
// (or not an object) is left out, reported.

import type { DataClassModel, StorageAttribute } from '../types.js';
import { checkKeys, checkName, checkRenamedFrom, checkRenames, isObject, optionalBool, type Draft, type Fail, type Json, type Mutable, type RawAttribute } from './checks.js';

const CLASS_KEYS = ['name', 'className', 'collectionName', 'defaultTopSize', 'exposed', 'extraProperties', 'attributes', 'renamedFrom', 'trackChanges', 'label'];

/** The draft of the dataclasses of `dataClasses` (a non-empty array). */
export function readDataClasses(dataClasses: readonly unknown[], fail: Fail): Draft {
  const classes: Mutable<DataClassModel>[] = [];
  const jsonIndex = new Map<DataClassModel, number>();
  const rawAttrs = new Map<DataClassModel, RawAttribute[]>();
  dataClasses.forEach((rawClass: unknown, i: number) => {
    const path = `$.dataClasses[${i}]`;
    if (!isObject(rawClass)) return fail(path, 'must be an object');
    const dc = readDataClass(rawClass, path, classes, fail);
    if (!dc) return;
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
  return { classes, jsonIndex, rawAttrs, byName: new Map(classes.map((c) => [c.name, c])), byCollection: new Map(classes.map((c) => [c.collectionName, c])) };
}

/** One dataclass entry, its attributes not read yet; undefined when its name is no good (reported). */
function readDataClass(rawClass: Json, path: string, classes: readonly DataClassModel[], fail: Fail): Mutable<DataClassModel> | undefined {
  checkKeys(rawClass, CLASS_KEYS, path, fail);
  const name = rawClass.name;
  if (!checkName(name, `${path}.name`, fail)) return undefined;
  // SQLite's names are case-insensitive: Company and company would be one table.
  const clash = classes.find((c) => c.name.toLowerCase() === name.toLowerCase());
  if (clash) {
    fail(`${path}.name`, clash.name === name ? `duplicate dataclass name '${name}'` : `'${name}' and '${clash.name}' differ only by case; dataclass names must differ otherwise`);
    return undefined;
  }
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
  return {
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
}
