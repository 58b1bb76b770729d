// The wire JSON of entities written as text straight from their rows, without making an Entity
// and without an object per entity: for answers whose projection one SELECT can read whole —
// stored values, scalar aliases, relations sent as deferred URIs (an N→1 one with its target's
// key, read through the caller's row filter, so that a target gone or hidden reads null), and N→1
// related entities inline (through a LEFT JOIN each), of dataclasses without a user entity class
// (whose constructor runs for every entity read). Rows arrive as arrays of the writer's columns.
// A page of 100 then costs no entity objects, no property stores and no JSON.stringify walk: most
// of what it cost above the SQL (issue 16). Values are decoded as an entity decodes them and
// written by serialize.ts's own rules (plainValue, deferredEntity, relationUri); strings, numbers
// and dates stored in the text they are sent as are written directly. The differential test in
// row-writer.test.ts holds both ways to the same bytes on both engines.
//
// Unlike an entity, a row decodes only the columns the answer sends: a value that could not be
// decoded (JSON written by raw SQL that is not JSON) fails the answers that show it, not the others.

import { type DataClassCore, leadsTo, PLAIN, type ProjectedAttribute, type Projection } from '../../datastore/index.js';
import { WIRE } from '../../config/wire.js';
import type { AliasAttribute, DataClassModel, RelatedEntityAttribute, StorageAttribute } from '../../model/types.js';
import type { ColumnSpec, RowColumnSpec } from '../../query/plan.js';
import type { Dialect } from '../../sql/dialect.js';
import { isoOfMs } from '../../util/iso-time.js';
import { REST_PREFIX } from '../request/constants.js';
import { deferredEntity, plainValue, relationUri } from './serialize.js';

type Row = readonly unknown[];

/** Writes entities of one projection from rows of its columns. */
export interface RowWriter {
  /** what the statement selects, in order: a row is the array of these columns' values (more may follow: they are not read) */
  readonly columns: readonly ColumnSpec[];
  /** one entity's wire JSON, as serializeEntity writes it (`model` adds __entityModel, for a top-level entity) */
  write(row: Row, model?: boolean): string;
  /** the entity's key in a row, as the entity holds it */
  keyOf(row: Row): unknown;
  /** the entity's stamp in a row (its ETag) */
  stampOf(row: Row): number;
  /** the entity's last save time in a row, in ms (its ETag) */
  timestampOf(row: Row): number;
}

/** Built once per projection object (the full projection of a dataclass is one object per visibility; others are cached by resolveProjection). */
const writers = new WeakMap<Projection, RowWriter | null>();

/** The row writer of a projection of `dc`, or undefined when entities must be made (then the answer takes serialize.ts's way). */
export function rowWriterFor(p: Projection, dc: DataClassCore, dialect: Dialect): RowWriter | undefined {
  let w = writers.get(p);
  if (w === undefined) writers.set(p, (w = compile(p, dc, dialect) ?? null));
  return w ?? undefined;
}

/** A value's text, from the row and its entity's key. */
type Field = (row: Row, key: unknown) => string;
/** An entity's text from `head` ('{', or '{"__entityModel":…,') on, or 'null' when the row holds none (a joined entity gone). */
type EntityText = (row: Row, head: string) => string;

/** The columns of one statement, each selected once. */
class Columns {
  readonly list: ColumnSpec[] = [];
  readonly #at = new Map<string, number>();

  /** The position of an attribute's column of the entity reached by `via` (the page's own entity: []). */
  attribute(via: readonly RelatedEntityAttribute[], name: string, spec: RowColumnSpec): number {
    return this.#own(via, `a:${name}`, spec);
  }

  /** The position of a hidden column (the stamp, the timestamp) of the entity reached by `via`: ids of their own, so that an attribute named `stamp` is not given it. */
  hidden(via: readonly RelatedEntityAttribute[], spec: RowColumnSpec & { kind: 'stamp' | 'timestamp' }): number {
    return this.#own(via, `h:${spec.kind}`, spec);
  }

  #own(via: readonly RelatedEntityAttribute[], id: string, spec: RowColumnSpec): number {
    return this.#add(`${pathKey(via)}|${id}`, via.length === 0 ? spec : { kind: 'joined', via, column: spec });
  }

  /** The position of the key of the entity an N→1 path leads to (null when gone or hidden). */
  relatedKey(via: readonly RelatedEntityAttribute[]): number {
    return this.#add(`${pathKey(via)}|→`, { kind: 'relatedKey', via });
  }

  #add(id: string, spec: ColumnSpec): number {
    let at = this.#at.get(id);
    if (at === undefined) this.#at.set(id, (at = this.list.push(spec) - 1));
    return at;
  }
}

const pathKey = (via: readonly RelatedEntityAttribute[]): string => via.map((r) => r.name).join('.');

function compile(p: Projection, dc: DataClassCore, dialect: Dialect): RowWriter | undefined {
  const columns = new Columns();
  const entity = entityText(p, [], dc, dialect, columns);
  if (!entity) return undefined;
  const modelHead = `{${JSON.stringify(WIRE.ENTITY_MODEL)}:${JSON.stringify(p.dataClass.name)},`;
  const keyOf = reader(p.dataClass.key, columns.attribute([], p.dataClass.key.name, { kind: 'storage', attr: p.dataClass.key }), dialect);
  const stampAt = columns.hidden([], { kind: 'stamp' });
  const timestampAt = columns.hidden([], { kind: 'timestamp' });
  return { columns: columns.list, write: (row, model = false) => entity(row, model ? modelHead : '{'), keyOf, stampOf: (row) => Number(row[stampAt]), timestampOf: (row) => Number(row[timestampAt]) };
}

const KEY = `${JSON.stringify(WIRE.KEY)}:`;
const TIMESTAMP = `,${JSON.stringify(WIRE.TIMESTAMP)}:"`;
const STAMP = `",${JSON.stringify(WIRE.STAMP)}:`;

/** The text of an entity of projection `p` reached from the page's entity by `via`, or undefined when a row cannot give it. */
function entityText(p: Projection, via: readonly RelatedEntityAttribute[], dc: DataClassCore, dialect: Dialect, columns: Columns): EntityText | undefined {
  const model = p.dataClass;
  if (dc.core.classOf(model).constructsOnRead) return undefined;
  const keyAt = columns.attribute(via, model.key.name, { kind: 'storage', attr: model.key });
  const stampAt = columns.hidden(via, { kind: 'stamp' });
  const timestampAt = columns.hidden(via, { kind: 'timestamp' });
  const parts: Part[] = [];
  for (const a of p.attributes) {
    const part = partOf(a, model, via, dc, dialect, columns);
    if (!part) return undefined;
    parts.push(part);
  }
  return generate(model, keyAt, stampAt, timestampAt, parts, dialect);
}

/**
 * What an attribute adds to an entity's text after its `,"name":`: the value of a column written
 * by one of the generated function's helpers (`string`, `number`), or by a function of the row
 * and the entity's key.
 */
type Part = { readonly name: string } & ({ readonly kind: 'string' | 'number'; readonly at: number } | { readonly kind: 'call'; readonly text: Field });

/**
 * The writer of one entity's text, generated as JavaScript once per projection: one expression
 * concatenating the constant parts (names, punctuation) and each value's text, so that V8
 * compiles each projection's writer on its own (a loop over a list of closures, one call site for
 * every attribute of every projection, writes a page of 100 about a third slower). Only numbers
 * (column positions) and JSON string literals of model names go into the source.
 */
function generate(model: DataClassModel, keyAt: number, stampAt: number, timestampAt: number, parts: readonly Part[], dialect: Dialect): EntityText {
  const calls: Field[] = [];
  const literal = (text: string): string => JSON.stringify(text);
  const keyOf = reader(model.key, keyAt, dialect);
  let body = `${literal(`${KEY}`)} + string(String(key)) + ${literal(TIMESTAMP)} + iso(Number(row[${timestampAt}])) + ${literal(STAMP)} + number(Number(row[${stampAt}]))`;
  for (const part of parts) {
    body += ` + ${literal(`,${JSON.stringify(part.name)}:`)}`;
    if (part.kind === 'call') body += ` + calls[${calls.push(part.text) - 1}](row, key)`;
    else body += ` + ${part.kind}(row[${part.at}])`;
  }
  // (generated from column positions and JSON literals only, see above)
  const make = new Function('keyOf', 'string', 'number', 'iso', 'calls', `return function entityText(row, head) {
    const key = keyOf(row);
    if (key === null) return 'null';
    return head + ${body} + '}';
  };`) as (keyOf: (row: Row) => unknown, string: (v: unknown) => string, number: (v: unknown) => string, iso: (ms: number) => string, calls: Field[]) => EntityText;
  return make(keyOf, stringText, numberValueText, isoOfMs, calls);
}

/** A string column's value (or null) as JSON. */
function stringText(v: unknown): string {
  return JSON.stringify(v ?? null);
}

/** A numeric column's value as JSON (what JSON.stringify writes, without its call for a number). */
function numberValueText(v: unknown): string {
  return typeof v === 'number' ? numberText(v) : JSON.stringify(v ?? null);
}

/** A column's value as an entity holds it: decoded by the dialect unless its type arrives as it is. */
function reader(attr: StorageAttribute, at: number, dialect: Dialect): (row: Row) => unknown {
  if (PLAIN.has(attr.type)) return (row) => row[at] ?? null;
  return (row) => {
    const v = row[at];
    return v === null || v === undefined ? null : dialect.types.decode(attr.type, v, attr.dateOnly);
  };
}

/** A number as JSON writes it (a number that is not finite: null). */
function numberText(n: number): string {
  return Number.isFinite(n) ? `${n}` : 'null';
}

/** The N→1 relations an attribute follows to the entity it leads to (an N→1 relation, or an alias through N→1 relations only). */
function stepsOf(attr: RelatedEntityAttribute | AliasAttribute): readonly RelatedEntityAttribute[] {
  return attr.kind === 'relatedEntity' ? [attr] : (attr.steps as RelatedEntityAttribute[]);
}

/** How one projected attribute is written from the row, or undefined when the row is not enough. */
function partOf(a: ProjectedAttribute, model: DataClassModel, via: readonly RelatedEntityAttribute[], dc: DataClassCore, dialect: Dialect, columns: Columns): Part | undefined {
  const name = a.attr.name;
  switch (a.kind) {
    case 'deferred': {
      const leads = leadsTo(a.attr) as { target: DataClassModel; many: boolean };
      if (leads.many) return { name, kind: 'call', text: relationText(model, name) };
      // the target's key, read through the caller's row filter: null when gone or hidden (4D reads a dropped target as null)
      const target = reader(leads.target.key, columns.relatedKey([...via, ...stepsOf(a.attr as RelatedEntityAttribute | AliasAttribute)]), dialect);
      const text = deferredText(leads.target);
      return { name, kind: 'call', text: (row) => text(target(row)) };
    }
    case 'entity': {
      const entity = entityText(a.sub, [...via, ...stepsOf(a.attr)], dc, dialect, columns);
      return entity && { name, kind: 'call', text: (row) => entity(row, '{') };
    }
    case 'value': {
      const attr = a.attr;
      if (attr.kind === 'calculated') return undefined;
      const last = attr.kind === 'alias' ? attr.steps[attr.steps.length - 1] : attr;
      // aliases to lists or entities are read by queries
      if (last.kind !== 'storage' || (attr.kind === 'alias' && attr.toMany)) return undefined;
      const at = columns.attribute(via, attr.name, attr.kind === 'alias' ? { kind: 'alias', attr } : { kind: 'storage', attr });
      switch (last.type) {
        case 'string':
        case 'uuid':
          return { name, kind: 'string', at };
        case 'number':
        case 'long':
        case 'word':
        case 'byte':
          return { name, kind: 'number', at };
        default:
          return { name, kind: 'call', text: valueText(attr, last, at, model, dialect) };
      }
    }
    default:
      // lists, related selections inline: more than a row
      return undefined;
  }
}

/** The JSON of a quoted text's start, without its closing quote (a URI's constant part, to be continued). */
const opening = (text: string): string => JSON.stringify(text).slice(0, -1);
/** A key written as it is in a URI and as __KEY: an integer's digits (keyInUri leaves them as they are); other keys take serialize.ts's way. */
const plainKey = (key: unknown): key is number => typeof key === 'number' && Number.isSafeInteger(key);

/** An N→1 relation sent deferred, as deferredEntity writes it, from its target's key (or null). */
function deferredText(target: DataClassModel): (key: unknown) => string {
  const head = `{"${WIRE.DEFERRED}":{"uri":${opening(`${REST_PREFIX}/${target.name}(`)}`;
  return (key) => {
    if (key === null) return 'null';
    return plainKey(key) ? `${head}${key})","${WIRE.KEY}":"${key}"}}` : JSON.stringify(deferredEntity(target, key));
  };
}

/** A 1→N relation sent deferred, as relationUri writes its URI, from its entity's key. */
function relationText(model: DataClassModel, name: string): Field {
  const head = `{"${WIRE.DEFERRED}":{"uri":${opening(`${REST_PREFIX}/${model.name}(`)}`;
  const tail = `${JSON.stringify(`)/${name}?$expand=${name}`).slice(1)}}}`;
  return (_row, key) => (plainKey(key) ? `${head}${key}${tail}` : JSON.stringify({ [WIRE.DEFERRED]: { uri: relationUri(model, key, name) } }));
}

/** A value's JSON, as serializeEntity writes it, for the types a column does not hold as they are sent. */
function valueText(attr: StorageAttribute | AliasAttribute, last: StorageAttribute, at: number, model: DataClassModel, dialect: Dialect): Field {
  const value = reader(last, at, dialect);
  const generic: Field = (row, key) => JSON.stringify(plainValue(value(row), attr, model, key, false));
  const asIs = last.type === 'date' ? dialect.types.storedDateText : undefined;
  if (!asIs) return generic;
  const { dateOnly } = last;
  return (row, key) => {
    const text = asIs(row[at], dateOnly);
    if (text === undefined) return generic(row, key);
    // 4D's d!m!yyyy for a date alone, as formatDate writes it
    return dateOnly ? `"${Number(text.slice(8, 10))}!${Number(text.slice(5, 7))}!${Number(text.slice(0, 4))}"` : `"${text}"`;
  };
}
