// The wire JSON of an entity written straight from its row, without making an Entity: for answers
// whose projection needs nothing beyond the row (stored values, scalar aliases, relations sent as
// deferred URIs, an N→1 one after one look-up of its targets for a whole page), of a dataclass
// without a user entity class (whose constructor runs for every entity read). A page of 100 then
// costs no entity objects and, where dates are stored as text, no Date round trip per date: most
// of what a page cost above the SQL (issue 16). Values are decoded as an entity decodes them and
// written by serialize.ts's own rules (plainValue, deferredEntity, relationUri); only a date
// stored in the very text it would be sent as skips both. The differential test in
// row-writer.test.ts holds both ways to the same bytes on both engines.
//
// Unlike an entity, a row decodes only the columns the answer sends: a value that could not be
// decoded (JSON written by raw SQL that is not JSON) fails the answers that show it, not the others.

import type { Access } from '../datastore/access.js';
import { PLAIN, type DataClassCore } from '../datastore/dataclass-core.js';
import type { EntityRow } from '../datastore/entity.js';
import { existingKeys } from '../datastore/fetch.js';
import { leadsTo, type Projection, type ProjectedAttribute } from '../datastore/projection.js';
import { WIRE } from '../config/wire.js';
import type { DataClassModel, StorageAttribute } from '../model/types.js';
import type { Dialect } from '../sql/dialect.js';
import { STAMP_COLUMN, TIMESTAMP_COLUMN } from '../sql/hidden-columns.js';
import { deferredEntity, plainValue, relationUri } from './serialize.js';

type Json = Record<string, unknown>;

/**
 * Writes entities of one projection from their rows. `targets` gives, per N→1 relation the
 * projection sends as a deferred URI (`lookups`), the keys of the targets that exist: 4D reads a
 * relation to a dropped entity as null, so they are looked up once for a whole page (targetsOf).
 */
export interface RowWriter {
  /** one entity's wire object, as serializeEntity writes it (`model` adds __entityModel, for a top-level entity) */
  write(row: EntityRow, targets: Targets, model?: boolean): Json;
  readonly lookups: readonly Lookup[];
}

/** An N→1 relation sent deferred: the target, and its key as an entity reads it from the row. */
interface Lookup {
  readonly target: DataClassModel;
  readonly key: (row: EntityRow) => unknown;
}

/** Per lookup (in order), the keys of its targets that exist. */
export type Targets = readonly ReadonlySet<unknown>[];

export const NO_TARGETS: Targets = [];

/** Built once per projection object (the full projection of a dataclass is one object per visibility). */
const writers = new WeakMap<Projection, RowWriter | null>();

/** The row writer of a projection of `dc`, or undefined when entities must be made (then the answer takes serialize.ts's way). */
export function rowWriterFor(p: Projection, dc: DataClassCore, dialect: Dialect): RowWriter | undefined {
  if (dc.constructsOnRead) return undefined;
  let w = writers.get(p);
  if (w === undefined) writers.set(p, (w = compile(p, dialect) ?? null));
  return w ?? undefined;
}

/** The targets that exist of the writer's N→1 relations, for these rows: one query per relation (per KEYS_PER_QUERY keys), through the caller's access. */
export async function targetsOf(writer: RowWriter, rows: readonly EntityRow[], access: Access): Promise<Targets> {
  if (writer.lookups.length === 0) return NO_TARGETS;
  const out: ReadonlySet<unknown>[] = [];
  for (const l of writer.lookups) out.push(await existingKeys(l.target, rows.map(l.key), access));
  return out;
}

type Field = (row: EntityRow, key: unknown, targets: Targets) => unknown;

function compile(p: Projection, dialect: Dialect): RowWriter | undefined {
  const dc = p.dataClass;
  const fields: { name: string; value: Field }[] = [];
  const lookups: Lookup[] = [];
  for (const a of p.attributes) {
    const value = fieldOf(a, dc, dialect, lookups);
    if (!value) return undefined;
    fields.push({ name: a.attr.name, value });
  }
  const keyOf = columnReader(dc.key, dc.key.name, dialect);
  return {
    lookups,
    write(row, targets, model = false) {
      const key = keyOf(row);
      const out: Json = {};
      if (model) out[WIRE.ENTITY_MODEL] = dc.name;
      out[WIRE.KEY] = String(key);
      out[WIRE.TIMESTAMP] = new Date(Number(row[TIMESTAMP_COLUMN])).toISOString();
      out[WIRE.STAMP] = Number(row[STAMP_COLUMN]);
      for (const f of fields) out[f.name] = f.value(row, key, targets);
      return out;
    },
  };
}

/** A column's value as an entity holds it: decoded by the dialect unless its type arrives as it is. */
function columnReader(attr: StorageAttribute, column: string, dialect: Dialect): (row: EntityRow) => unknown {
  if (PLAIN.has(attr.type)) return (row) => row[column] ?? null;
  return (row) => {
    const v = row[column];
    return v === null || v === undefined ? null : dialect.decode(attr.type, v, attr.dateOnly);
  };
}

/** How one projected attribute is written from the row, or undefined when the row is not enough. */
function fieldOf(a: ProjectedAttribute, dc: DataClassModel, dialect: Dialect, lookups: Lookup[]): Field | undefined {
  const name = a.attr.name;
  if (a.kind === 'deferred') {
    const leads = leadsTo(a.attr) as { target: DataClassModel; many: boolean };
    if (leads.many) return (_row, key) => ({ [WIRE.DEFERRED]: { uri: relationUri(dc, key, name) } });
    // an N→1 relation's key: its foreign key, or the column of an alias that ends on a relation
    // (read as it is, as an entity reads it)
    const attr = a.attr;
    const key = attr.kind === 'relatedEntity' ? columnReader(attr.foreignKey, attr.foreignKey.name, dialect) : (row: EntityRow) => row[name] ?? null;
    const at = lookups.push({ target: leads.target, key }) - 1;
    return (row, _key, targets) => {
      const k = key(row);
      return deferredEntity(leads.target, k !== null && targets[at].has(k) ? k : null);
    };
  }
  if (a.kind !== 'value') return undefined;
  const attr = a.attr;
  const last = attr.kind === 'alias' ? attr.steps[attr.steps.length - 1] : attr;
  // calculated values run user code; aliases to lists or entities are read by queries
  if (last.kind !== 'storage' || (attr.kind === 'alias' && attr.toMany)) return undefined;
  const value = columnReader(last, name, dialect);
  const asIs = last.type === 'date' ? dialect.storedDateText : undefined;
  if (asIs) {
    const { dateOnly } = last;
    return (row, key) => {
      const text = asIs(row[name], dateOnly);
      if (text === undefined) return plainValue(value(row), attr, dc, key, false);
      // 4D's d!m!yyyy for a date alone, as formatDate writes it
      return dateOnly ? `${Number(text.slice(8, 10))}!${Number(text.slice(5, 7))}!${Number(text.slice(0, 4))}` : text;
    };
  }
  // (plainValue sends these types as they are)
  if (PLAIN.has(last.type)) return value;
  return (row, key) => plainValue(value(row), attr, dc, key, false);
}
