// The columns of an import and the values of their fields. A column names a storage attribute
// (its value), or an N→1 relation (the key of the related entity: what its foreign key holds,
// as an export writes it under the foreign key's name). Anything else is refused before anything
// is imported. A CSV field is
// text: it becomes the value a JSON client would have sent (a boolean from true/false/1/0, an
// object from its JSON text), which the core then converts and checks as it does for a REST write
// (numbers, dates and uuids from text included). An empty CSV field is null.

import { DatasetError, isDatasetError } from '../errors/dataset-error.js';
import type { DataClassModel, StorageAttribute } from '../model/types.js';
import { didYouMean } from '../util/suggest.js';
import { UsageError } from './common.js';
import type { SourceRecord } from './import-read.js';

/** A column of the file and what it sets. */
export interface ImportColumn {
  /** its name in the file */
  readonly name: string;
  /** the storage attribute it fills (a relation's: its foreign key) */
  readonly attr: StorageAttribute;
  /** given as a relation: a JSON value may be {"__KEY": k} */
  readonly relation: boolean;
}

/** The columns `names` name (`where`: the header's place, for messages); a UsageError for a name that cannot be imported. */
export function resolveColumns(dc: DataClassModel, names: readonly string[], where: string): ImportColumn[] {
  const columns: ImportColumn[] = [];
  const filled = new Map<StorageAttribute, string>();
  for (const name of names) {
    if (name === '') throw new UsageError(`${where}: a column has no name`);
    const attr = dc.attributesByName.get(name);
    if (!attr) throw new UsageError(`${where}: '${name}' is not an attribute of ${dc.name}${didYouMean(name, dc.attributesByName.keys())}`);
    let column: ImportColumn;
    if (attr.kind === 'storage') {
      if (attr.serverSet) throw new UsageError(`${where}: ${dc.name}.${name} is kept by the server (change tracking stores the global stamp of each write there): leave the column out`);
      if (attr.type === 'image' || attr.type === 'blob') throw new UsageError(`${where}: ${dc.name}.${name} is ${attr.type === 'image' ? 'a picture' : 'a blob'}: an import holds values, not files`);
      column = { name, attr, relation: false };
    } else if (attr.kind === 'relatedEntity') {
      column = { name, attr: attr.foreignKey, relation: true };
    } else {
      const what = attr.kind === 'relatedEntities' ? 'a 1→N relation' : attr.kind === 'alias' ? 'an alias' : 'a calculated attribute';
      throw new UsageError(`${where}: ${dc.name}.${name} is ${what}: an import sets storage attributes and N→1 relations`);
    }
    const before = filled.get(column.attr);
    if (before !== undefined) throw new UsageError(`${where}: '${name}' ${before === name ? 'is named twice' : `and '${before}' set the same attribute`}`);
    filled.set(column.attr, name);
    columns.push(column);
  }
  return columns;
}

/**
 * Every column an import of JSON objects may fill: the storage attributes but pictures, blobs and
 * the server's own (__GlobalStamp) (a property absent is null, as in a REST create); a foreign key's column is also its relation's.
 */
export function storageColumns(dc: DataClassModel): ImportColumn[] {
  const foreignKeys = new Set(dc.attributes.flatMap((a) => (a.kind === 'relatedEntity' ? [a.foreignKey] : [])));
  return dc.storage.filter((a) => a.type !== 'image' && a.type !== 'blob' && !a.serverSet).map((attr) => ({ name: attr.name, attr, relation: foreignKeys.has(attr) }));
}

const TRUE = /^(?:true|1)$/i;
const FALSE = /^(?:false|0)$/i;

/** The value a CSV field gives its column: what a JSON client would send for that text. */
export function fromCsv(column: ImportColumn, text: string | null | undefined): unknown {
  if (text === null || text === undefined) return null;
  switch (column.attr.type) {
    case 'bool':
      return TRUE.test(text) ? true : FALSE.test(text) ? false : text;
    case 'object':
      try {
        return JSON.parse(text);
      } catch (e) {
        throw new DatasetError('INVALID_VALUE', `${column.attr.dataClass.name}.${column.attr.name} (object) cannot take ${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)}: it is not JSON (${(e as Error).message})`, [], { attributeName: column.attr.name });
      }
    default:
      return text;
  }
}

/** The value a JSON property gives its column: a relation's {"__KEY": k} is its key k. */
export function fromJson(column: ImportColumn, value: unknown): unknown {
  if (value === undefined) return null;
  if (column.relation && typeof value === 'object' && value !== null && !Array.isArray(value) && '__KEY' in value) return (value as { __KEY: unknown }).__KEY;
  return value;
}

/** Refuses the record at `at` (a line, an array index) for `reason`. */
export type Refuse = (at: string, reason: string) => void;

/** JSON properties by name: each storage column's, and each N→1 relation's (its foreign key's column). */
export function jsonIndex(model: DataClassModel, columns: readonly ImportColumn[]): Map<string, number> {
  const index = new Map(columns.map((c, i) => [c.name, i]));
  for (const a of model.attributes) {
    if (a.kind === 'relatedEntity' && index.has(a.foreignKey.name)) index.set(a.name, index.get(a.foreignKey.name) as number);
  }
  return index;
}

/**
 * A record's values in the order of `columns` (undefined: not given, in a JSON object), in `into`
 * when given (an array of columns.length, reused from row to row), or undefined after refusing it (a field count that is not the header's, an unknown property, a
 * CSV text that cannot be its column's value).
 */
export function recordValues(model: DataClassModel, columns: readonly ImportColumn[], byName: Map<string, number> | undefined, record: SourceRecord, refuse: Refuse, into?: unknown[]): unknown[] | undefined {
  if (record.error !== undefined) return void refuse(record.at, record.error);
  const out = into ?? new Array<unknown>(columns.length);
  if (into && !record.fields) out.fill(undefined);
  try {
    if (record.fields) {
      if (record.fields.length !== columns.length) return void refuse(record.at, `${record.fields.length} fields where the header names ${columns.length}`);
      for (let i = 0; i < columns.length; i++) out[i] = fromCsv(columns[i], record.fields[i]);
      return out;
    }
    const object = record.object as Record<string, unknown>;
    for (const name in object) {
      const at = byName?.get(name);
      if (at === undefined) return void refuse(record.at, `'${name}' is not an attribute of ${model.name} that an import sets`);
      if (out[at] !== undefined) return void refuse(record.at, `'${name}' sets ${columns[at].name}, given another way too`);
      out[at] = fromJson(columns[at], object[name]);
    }
    return out;
  } catch (e) {
    if (!isDatasetError(e)) throw e;
    return void refuse(record.at, e.message);
  }
}
