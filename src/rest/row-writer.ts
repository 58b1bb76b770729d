// The wire JSON of an entity written straight from its row, without making an Entity: for answers
// whose projection needs nothing beyond the row (stored values, scalar aliases, relations sent as
// deferred URIs, an N→1 one after one look-up of its targets for a whole page). A page of 100 then
// costs no entity objects and no Date round trip per date, which were most of what a page cost
// above the SQL (issue 16). Every value goes through serialize.ts's
// own rules (plainValue) after the dialect's decode, so both ways write the same bytes: the
// differential test in row-writer.test.ts holds them to it on both engines.

import type { EntityRow } from '../datastore/entity.js';
import { leadsTo, type Projection, type ProjectedAttribute } from '../datastore/projection.js';
import { WIRE } from '../config/wire.js';
import type { DataClassModel, StorageAttribute, StorageType } from '../model/types.js';
import type { Dialect } from '../sql/dialect.js';
import { STAMP_COLUMN, TIMESTAMP_COLUMN } from '../sql/hidden-columns.js';
import { entityUri, plainValue, relationUri } from './serialize.js';
import type { Access } from '../datastore/access.js';
import { existingKeys } from '../datastore/fetch.js';

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

/** An N→1 relation sent deferred: the target, and how its key is read from the row. */
interface Lookup {
  readonly target: DataClassModel;
  readonly key: (row: EntityRow) => unknown;
}

/** Per lookup (in order), the keys of its targets that exist. */
export type Targets = readonly ReadonlySet<unknown>[];

/** Types whose column values arrive as they are (no decode): as in DataClassCore. */
const PLAIN: ReadonlySet<StorageType> = new Set(['string', 'uuid', 'number', 'long', 'word', 'byte']);

/** A date-time as Date.toISOString() writes it (how SQLite stores one): sent as it is. */
const ISO_DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** A date-only value as SQLite stores it: sent as 4D's d!m!yyyy. */
const ISO_DATE = /^(\d{4})-(\d\d)-(\d\d)$/;

const writers = new WeakMap<Projection, WeakMap<Dialect, RowWriter | null>>();

/** The row writer of a projection on a dialect, or undefined when the projection needs more than the row (then entities are made). Built once per projection. */
export function rowWriterFor(p: Projection, dialect: Dialect): RowWriter | undefined {
  let byDialect = writers.get(p);
  if (!byDialect) writers.set(p, (byDialect = new WeakMap()));
  let w = byDialect.get(dialect);
  if (w === undefined) byDialect.set(dialect, (w = compile(p, dialect) ?? null));
  return w ?? undefined;
}

/** The targets that exist of the writer's N→1 relations, for these rows: one query per relation (per KEYS_PER_QUERY keys), through the caller's access. */
export async function targetsOf(writer: RowWriter, rows: readonly EntityRow[], access: Access): Promise<Targets> {
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
  const keyAttr = dc.key;
  const decodeKey = PLAIN.has(keyAttr.type) ? undefined : (v: unknown) => dialect.decode(keyAttr.type, v, keyAttr.dateOnly);
  const keyName = keyAttr.name;
  return {
    lookups,
    write(row, targets, model = false) {
      const raw = row[keyName] ?? null;
      const key = decodeKey && raw !== null ? decodeKey(raw) : raw;
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

/** How one projected attribute is written from the row, or undefined when the row is not enough. */
function fieldOf(a: ProjectedAttribute, dc: DataClassModel, dialect: Dialect, lookups: Lookup[]): Field | undefined {
  if (a.kind === 'deferred') {
    const name = a.attr.name;
    const leads = leadsTo(a.attr) as { target: DataClassModel; many: boolean };
    // a 1→N relation is only a URI
    if (leads.many) return (_row, key) => ({ [WIRE.DEFERRED]: { uri: relationUri(dc, key, name) } });
    // an N→1 one names its target if that exists; its key is the foreign key (decoded as an entity
    // decodes it), or an alias's own column
    const attr = a.attr;
    const fk = attr.kind === 'relatedEntity' ? attr.foreignKey : undefined;
    const column = fk ? fk.name : attr.name;
    const key = fk && !PLAIN.has(fk.type)
      ? (row: EntityRow) => { const v = row[column]; return v === null || v === undefined ? null : dialect.decode(fk.type, v, fk.dateOnly); }
      : (row: EntityRow) => row[column] ?? null;
    const at = lookups.push({ target: leads.target, key }) - 1;
    const target = leads.target;
    return (row, _key, targets) => {
      const k = key(row);
      return k !== null && targets[at].has(k) ? { [WIRE.DEFERRED]: { uri: entityUri(target, k), [WIRE.KEY]: String(k) } } : null;
    };
  }
  if (a.kind !== 'value') return undefined;
  const attr = a.attr;
  let target: StorageAttribute;
  if (attr.kind === 'storage') target = attr;
  else if (attr.kind === 'alias' && !attr.toMany && attr.steps[attr.steps.length - 1].kind === 'storage') target = attr.steps[attr.steps.length - 1] as StorageAttribute;
  else return undefined; // calculated values run user code; other aliases are read by queries
  const name = attr.name;
  const { type, dateOnly } = target;
  if (type === 'date') {
    return (row, key) => {
      const v = row[name];
      if (v === null || v === undefined) return null;
      if (typeof v === 'string') {
        if (!dateOnly && ISO_DATE_TIME.test(v)) return v;
        const m = dateOnly ? ISO_DATE.exec(v) : null;
        if (m) return `${Number(m[3])}!${Number(m[2])}!${Number(m[1])}`;
      }
      return plainValue(dialect.decode(type, v, dateOnly), attr, dc, key, false);
    };
  }
  if (PLAIN.has(type)) return (row) => row[name] ?? null;
  return (row, key) => {
    const v = row[name];
    return v === null || v === undefined ? null : plainValue(dialect.decode(type, v, dateOnly), attr, dc, key, false);
  };
}
