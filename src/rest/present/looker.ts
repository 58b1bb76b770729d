// $format=looker (reference §3.11): a page of entities as Google Looker Studio's community
// connectors answer getSchema and getData — a schema of fields (dataType, and semantics: a metric
// or a dimension, its group and type) and rows of values in the schema's order. Only values go in
// a table: relations, value lists, pictures and blobs are left out; a relation inlined by
// $attributes is refused. See docs/decisions.md for the types chosen where 4D shows none.

import type { FetchedEntity, Projection } from '../../datastore/index.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { AliasAttribute, CalculatedAttribute, StorageAttribute, StorageType } from '../../model/types.js';
import { WIRE } from '../../config/wire.js';

type ValueAttribute = StorageAttribute | AliasAttribute | CalculatedAttribute;

interface Field {
  readonly name: string;
  readonly dataType: 'NUMBER' | 'STRING' | 'BOOLEAN';
  readonly semantics: { readonly conceptType: 'METRIC' | 'DIMENSION'; readonly semanticGroup: string; readonly semanticType: string };
}

/** How a column is described and its values written. */
interface Column {
  readonly field: Field;
  readonly value: (v: unknown) => unknown;
}

const NUMBER: Field['semantics'] = { conceptType: 'METRIC', semanticGroup: 'NUMERIC', semanticType: 'NUMBER' };
const TEXT: Field['semantics'] = { conceptType: 'DIMENSION', semanticGroup: 'TEXT', semanticType: 'TEXT' };
const BOOLEAN: Field['semantics'] = { conceptType: 'DIMENSION', semanticGroup: 'BOOLEAN', semanticType: 'BOOLEAN' };
const DAY: Field['semantics'] = { conceptType: 'DIMENSION', semanticGroup: 'DATETIME', semanticType: 'YEAR_MONTH_DAY' };
const SECOND: Field['semantics'] = { conceptType: 'DIMENSION', semanticGroup: 'DATETIME', semanticType: 'YEAR_MONTH_DAY_SECOND' };

const NUMERIC_TYPES = new Set<string>(['byte', 'word', 'long', 'long64', 'number', 'duration']);

const keep = (v: unknown) => v;
/** Looker's date forms: YYYYMMDD and YYYYMMDDHHmmss, in UTC (date-only values are stored at midnight UTC). */
const day = (v: unknown) => (v instanceof Date ? v.toISOString().slice(0, 10).replaceAll('-', '') : v);
const second = (v: unknown) => (v instanceof Date ? v.toISOString().slice(0, 19).replace(/[-T:]/g, '') : v);
const text = (v: unknown) => (v === null || v === undefined || typeof v === 'string' ? v : JSON.stringify(v));

/** The column of a value attribute, or undefined for one a table cannot hold (a picture, a blob, an alias to a relation). */
function columnOf(attr: ValueAttribute): Column | undefined {
  let type: string;
  let dateOnly = false;
  if (attr.kind === 'alias') {
    const target = attr.steps[attr.steps.length - 1];
    if (target.kind !== 'storage' && target.kind !== 'calculated') return undefined;
    type = target.type;
    dateOnly = target.kind === 'storage' && target.dateOnly;
  } else {
    type = attr.type;
    dateOnly = attr.kind === 'storage' && attr.dateOnly;
  }
  if ((type as StorageType) === 'image' || (type as StorageType) === 'blob') return undefined;
  const column = (dataType: Field['dataType'], semantics: Field['semantics'], value: Column['value']): Column => ({ field: { name: attr.name, dataType, semantics }, value });
  if (NUMERIC_TYPES.has(type)) return column('NUMBER', NUMBER, keep);
  if (type === 'bool') return column('BOOLEAN', BOOLEAN, keep);
  if (type === 'date') return dateOnly ? column('STRING', DAY, day) : column('STRING', SECOND, second);
  return column('STRING', TEXT, text);
}

/** The Looker Studio answer of a page: `count` entities in all, the page starting at `first`. */
export function serializeLooker(count: number, first: number, entities: readonly FetchedEntity[], p: Projection): Record<string, unknown> {
  const columns: { name: string; calculated: boolean; column: Column }[] = [];
  for (const a of p.attributes) {
    if (a.kind === 'entity' || a.kind === 'entities') {
      throw new DatasetError('INVALID_OPTION', `$format=looker answers a table of ${p.dataClass.name}'s values: '${a.attr.name}' is a relation sent inline; name the values you want (an alias reaches a related value)`);
    }
    if (a.kind !== 'value') continue; // deferred relations and value lists: no value of the row
    const column = columnOf(a.attr);
    if (column) columns.push({ name: a.attr.name, calculated: a.attr.kind === 'calculated', column });
  }
  return {
    [WIRE.COUNT]: count,
    [WIRE.FIRST]: first,
    schema: columns.map((c) => c.column.field),
    rows: entities.map((f) => ({
      values: columns.map((c) => {
        const v = c.calculated ? f.related.get(c.name) : f.entity.get(c.name);
        return v === null || v === undefined ? null : c.column.value(v);
      }),
    })),
    filtersApplied: false,
  };
}

/**
 * What a Looker table needs fetched beyond each entity's row: its calculated values, nothing of
 * the relations and value lists the JSON projection would fetch (a table has no column for them).
 */
export function lookerFetch(p: Projection): Projection {
  const attributes = p.attributes.filter((a) => a.kind === 'value');
  return { dataClass: p.dataClass, attributes, related: attributes.some((a) => a.attr.kind === 'calculated') };
}
