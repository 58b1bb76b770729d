// The compile functions of the statements that read and change entities: a SELECT, a row lock,
// counts, INSERT, UPDATE and DELETE (with the stamp check) and a big delete's chunk. Each that
// reads or changes rows takes the caller's row filter (`restrict`, null for every row): there is
// no default to forget. Aggregates are aggregates.ts's, answer sizes sizes.ts's.

import type { DataClassModel, StorageAttribute } from '../../model/types.js';
import { and, directPath, type Condition, type RowFilter, type SelectSpec } from '../../query/plan.js';
import { foldColumn, storedFold } from '../../util/fold.js';
import type { Dialect } from '../dialect.js';
import { STAMP_COLUMN, TIMESTAMP_COLUMN } from '../hidden-columns.js';
import type { CompiledSql } from './builder.js';
import { SelectBuilder } from './selects.js';

/** `restrict` (every compile function that reads or changes rows takes one): the caller's row filter, null for every row. */
export function compileSelect(d: Dialect, spec: SelectSpec, restrict: RowFilter | null): CompiledSql {
  const b = new SelectBuilder(d, restrict);
  return { sql: b.select(spec), params: b.params };
}

/**
 * The key of one entity (if the caller may reach it), its row locked until the transaction ends
 * where the engine locks rows (Dialect.concurrency.rowLock): what a pessimistic lock (datastore/sessions/locks.ts)
 * reads, so that it waits for a save of that entity under way, and such a save waits for it.
 */
export function compileLockRow(d: Dialect, dataClass: DataClassModel, key: unknown, restrict: RowFilter | null): CompiledSql {
  const b = new SelectBuilder(d, restrict);
  const sql = b.select({ dataClass, columns: [{ kind: 'storage', attr: dataClass.key }], order: [], where: { kind: 'compare', path: directPath(dataClass.key), op: '=', value: key } });
  // (the first alias a statement gives is its FROM's)
  return { sql: sql + d.concurrency.rowLock('t0'), params: b.params };
}

/** COUNT(*) of the rows matching `where`; grouped by `groupBy` (rows `g`, `n`) when given. */
export function compileCount(d: Dialect, dataClass: DataClassModel, where: Condition | null, restrict: RowFilter | null, groupBy?: StorageAttribute): CompiledSql {
  const b = new SelectBuilder(d, restrict);
  const t = b.alias();
  const group = groupBy ? b.col(t, groupBy.column) : '';
  let sql = `SELECT ${group ? `${group} AS g, ` : ''}COUNT(*) AS n FROM ${d.sql.quote(dataClass.table)} ${t}${b.where(dataClass, t, where)}`;
  if (group) sql += ` GROUP BY ${group}`;
  return { sql, params: b.params };
}

/** COUNT(*) of the rows matching `where` (as `n`), with the global stamp and the data version the statement saw (GLOBAL_STAMP_COLUMN, DATA_VERSION_COLUMN). */
export function compileCountWithVersion(d: Dialect, dataClass: DataClassModel, where: Condition | null, restrict: RowFilter | null): CompiledSql {
  const b = new SelectBuilder(d, restrict);
  const t = b.alias();
  const stamp = b.column(t, { kind: 'globalStamp' }, { dataClass, columns: [], where: null, order: [] }, new Map());
  const version = b.column(t, { kind: 'dataVersion' }, { dataClass, columns: [], where: null, order: [] }, new Map());
  return { sql: `SELECT COUNT(*) AS n, ${stamp}, ${version} FROM ${d.sql.quote(dataClass.table)} ${t}${b.where(dataClass, t, where)}`, params: b.params };
}

export function compileInsert(
  d: Dialect, dataClass: DataClassModel, values: ReadonlyMap<StorageAttribute, unknown>, stamp: number, timestamp: number,
): CompiledSql {
  // (no row filter: an insert reads no rows)
  const b = new SelectBuilder(d, null);
  const cols: string[] = [];
  const marks: string[] = [];
  for (const [attr, value] of values) {
    cols.push(d.sql.quote(attr.column));
    marks.push(b.bind(attr, value));
    if (attr.type === 'string') {
      cols.push(d.sql.quote(foldColumn(attr.column)));
      marks.push(b.bindRaw(typeof value === 'string' ? storedFold(value) : null));
    }
  }
  cols.push(d.sql.quote(STAMP_COLUMN), d.sql.quote(TIMESTAMP_COLUMN));
  b.params.push(stamp, timestamp);
  marks.push(d.sql.placeholder(b.params.length - 1), d.sql.placeholder(b.params.length));
  const key = d.sql.quote(dataClass.key.column);
  return { sql: `INSERT INTO ${d.sql.quote(dataClass.table)} (${cols.join(', ')}) VALUES (${marks.join(', ')}) RETURNING ${key} AS ${d.sql.quote(dataClass.key.name)}`, params: b.params };
}

/** UPDATE … WHERE key = ? AND stamp = ?: zero rows changed means the stamp moved (or the entity went). */
export function compileUpdate(
  d: Dialect, dataClass: DataClassModel, key: unknown, expectedStamp: number,
  values: ReadonlyMap<StorageAttribute, unknown>, timestamp: number, restrict: RowFilter | null,
): CompiledSql {
  const b = new SelectBuilder(d, restrict);
  const sets = [...values].flatMap(([attr, value]) => {
    const set = `${d.sql.quote(attr.column)} = ${b.bind(attr, value)}`;
    return attr.type === 'string' ? [set, `${d.sql.quote(foldColumn(attr.column))} = ${b.bindRaw(typeof value === 'string' ? storedFold(value) : null)}`] : [set];
  });
  b.params.push(timestamp);
  sets.push(`${d.sql.quote(STAMP_COLUMN)} = ${d.sql.quote(STAMP_COLUMN)} + 1`, `${d.sql.quote(TIMESTAMP_COLUMN)} = ${d.sql.placeholder(b.params.length)}`);
  const where = `${d.sql.quote(dataClass.key.column)} = ${b.bind(dataClass.key, key)}`;
  b.params.push(expectedStamp);
  const stamp = `${d.sql.quote(STAMP_COLUMN)} = ${d.sql.placeholder(b.params.length)}`;
  // No table alias in UPDATE and DELETE: not every engine accepts one.
  return { sql: `UPDATE ${d.sql.quote(dataClass.table)} SET ${sets.join(', ')} WHERE ${where} AND ${stamp}${b.andFilter(dataClass, d.sql.quote(dataClass.table))}`, params: b.params };
}

/** The delete of one entity, if its stamp is still the one expected (and `restrict` lets the caller reach it). */
export function compileDelete(d: Dialect, dataClass: DataClassModel, key: unknown, expectedStamp: number, restrict: RowFilter | null): CompiledSql {
  const b = new SelectBuilder(d, restrict);
  const t = d.sql.quote(dataClass.table);
  const where = `${d.sql.quote(dataClass.key.column)} = ${b.bind(dataClass.key, key)}`;
  b.params.push(expectedStamp);
  return { sql: `DELETE FROM ${t} WHERE ${where} AND ${d.sql.quote(STAMP_COLUMN)} = ${d.sql.placeholder(b.params.length)}${b.andFilter(dataClass, t)}`, params: b.params };
}

/**
 * DELETE of the rows among `keys` that the caller reaches (its row filter) and that still meet
 * `where` (a big delete's chunk, datastore/writes/bulk-drop.ts), RETURNING `returning`'s columns in that
 * order: what was deleted, told by the same statement.
 */
export function compileDeleteAmong(
  d: Dialect, dataClass: DataClassModel, keys: readonly unknown[], where: Condition | null, returning: readonly StorageAttribute[], restrict: RowFilter | null,
): CompiledSql {
  const chosen = compileSelect(d, { dataClass, columns: [{ kind: 'storage', attr: dataClass.key }], order: [], where: and({ kind: 'in', path: directPath(dataClass.key), values: keys }, where) }, restrict);
  const columns = returning.map((a) => d.sql.quote(a.column)).join(', ');
  return { sql: `DELETE FROM ${d.sql.quote(dataClass.table)} WHERE ${d.sql.quote(dataClass.key.column)} IN (${chosen.sql}) RETURNING ${columns}`, params: chosen.params };
}

/**
 * The INSERT and the UPDATE … AND stamp = ? of one shape — a dataclass, which attributes are
 * written (in that order) — compiled once and kept (at most SHAPES_PER_DATACLASS shapes of each
 * per dataclass, the oldest let go past it): a client saving the same attributes again (every
 * update of a form, every create from one page) costs no compiling. The text is the one
 * compileInsert / compileUpdate give for that shape without a row filter (an update with one
 * compiles its statement each time: the filter is the caller's, its values bound in its text);
 * the values are bound by writeParams in the same order.
 */
export interface WriteShape {
  readonly sql: string;
  /** the attributes whose values are bound, in the order of the placeholders (each string's fold after it) */
  readonly attrs: readonly StorageAttribute[];
  /** an INSERT's: the column of its RETURNING that holds `returningAlso`'s value (insertShape), if asked */
  readonly also?: string;
}

const SHAPES_PER_DATACLASS = 64;
/** per dialect and dataclass: the shapes by name, and the last one used (a client saving the same attributes again finds it without making its name) */
interface Kept {
  readonly byName: Map<string, WriteShape>;
  last?: { readonly name: string; readonly shape: WriteShape };
}
const shapes = new WeakMap<Dialect, WeakMap<DataClassModel, Kept>>();
let shapeCompiles = 0;

/** How many write shapes were compiled so far (tests count them: a shape used again is not compiled again). */
export function writeShapeCompiles(): number {
  return shapeCompiles;
}

function sameAttributes(a: readonly StorageAttribute[], b: readonly StorageAttribute[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function keptShape(d: Dialect, dataClass: DataClassModel, kind: string, attrs: readonly StorageAttribute[], compile: () => Omit<WriteShape, 'attrs'>): WriteShape {
  let byClass = shapes.get(d);
  if (!byClass) shapes.set(d, (byClass = new WeakMap()));
  let kept = byClass.get(dataClass);
  if (!kept) byClass.set(dataClass, (kept = { byName: new Map() }));
  const last = kept.last;
  if (last !== undefined && last.name.startsWith(kind) && last.name.charCodeAt(kind.length) === 0 && sameAttributes(last.shape.attrs, attrs)) return last.shape;
  // (attribute names are unique in a dataclass; the order is the placeholders')
  let name = kind;
  for (const a of attrs) name += `\u0000${a.name}`;
  name += '\u0000';
  let shape = kept.byName.get(name);
  if (shape === undefined) {
    shapeCompiles++;
    shape = { ...compile(), attrs: [...attrs] };
    if (kept.byName.size >= SHAPES_PER_DATACLASS) kept.byName.delete(kept.byName.keys().next().value as string);
    kept.byName.set(name, shape);
  }
  kept.last = { name, shape };
  return shape;
}

/** The column of an INSERT's RETURNING that holds `returningAlso` (insertShape). */
const ALSO_COLUMN = '__dataset_also';

/**
 * The INSERT of a new entity writing `attrs` (its stamp and time after them, RETURNING its key),
 * kept per shape; with `returningAlso`, an expression its RETURNING evaluates too, once for the
 * one row (PostgreSQL's move of the global stamp, nextval: no statement more for it), in `also`.
 */
export function insertShape(d: Dialect, dataClass: DataClassModel, attrs: readonly StorageAttribute[], returningAlso?: string): WriteShape {
  return keptShape(d, dataClass, returningAlso === undefined ? 'insert' : `insert ${returningAlso}`, attrs, () => {
    const sql = compileInsert(d, dataClass, new Map(attrs.map((a) => [a, null])), 1, 0).sql;
    return returningAlso === undefined ? { sql } : { sql: `${sql}, ${returningAlso} AS ${d.sql.quote(ALSO_COLUMN)}`, also: ALSO_COLUMN };
  });
}

/** The UPDATE … WHERE key = ? AND stamp = ? writing `attrs` (then the time, the key and the stamp expected), with no row filter, kept per shape. */
export function updateShape(d: Dialect, dataClass: DataClassModel, attrs: readonly StorageAttribute[]): WriteShape {
  return keptShape(d, dataClass, 'update', attrs, () => ({ sql: compileUpdate(d, dataClass, null, 0, new Map(attrs.map((a) => [a, null])), 0, null).sql }));
}

/** The values of `shape`'s attributes as its statement binds them (each encoded, a string's fold after it), then `tail` as it is. */
export function writeParams(d: Dialect, shape: WriteShape, values: ReadonlyMap<StorageAttribute, unknown>, ...tail: unknown[]): unknown[] {
  const params: unknown[] = [];
  for (const attr of shape.attrs) {
    const value = values.get(attr);
    params.push(d.types.encode(attr.type, value, attr.dateOnly));
    if (attr.type === 'string') params.push(typeof value === 'string' ? storedFold(value) : null);
  }
  for (const v of tail) params.push(v);
  return params;
}
