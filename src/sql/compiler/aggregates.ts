// Aggregates of a path over the rows a condition selects: count, sum, average, min and max in
// one row, distinct values (paged), the lowest or highest text by its fold. A JSON value's min,
// max and distinct values come in two columns, its number class and its text class, which
// jsonExtreme() reads back as SQLite orders them (numbers before text).

import type { DataClassModel } from '../../model/types.js';
import type { AttributePath, Condition, RowFilter } from '../../query/plan.js';
import type { Dialect } from '../dialect.js';
import type { CompiledSql } from './builder.js';
import { SelectBuilder } from './selects.js';

export type AggregateFn = 'count' | 'sum' | 'average' | 'min' | 'max';

/**
 * One row (`count`, `sum`, `average`, `min`, `max` columns, those asked) of aggregates of a path
 * over the rows matching `where`. Null values are left out, as SQL's aggregates do.
 */
export function compileAggregate(
  d: Dialect, dataClass: DataClassModel, where: Condition | null, path: AttributePath, fns: readonly AggregateFn[], restrict: RowFilter | null,
): CompiledSql {
  const b = new SelectBuilder(d, restrict);
  const t = b.alias();
  const sqlFn: Record<AggregateFn, string> = { count: 'COUNT', sum: 'SUM', average: 'AVG', min: 'MIN', max: 'MAX' };
  // the value is compiled at each place it appears: a JSON path binds a parameter each time
  const columns = fns.map((f) => {
    if (f === 'sum' || f === 'average') return `${sqlFn[f]}(${d.sql.sumOperand(b.numberPath(t, path))}) AS ${f}`;
    // booleans as 0 and 1 (PostgreSQL has no MIN or MAX of boolean; SQLite stores them so)
    if (!path.json && path.attr.type === 'bool' && f !== 'count') return `${sqlFn[f]}(${asBit(b.path(t, path))}) AS ${f}`;
    if (!path.json) return `${sqlFn[f]}(${b.path(t, path)}) AS ${f}`;
    if (f === 'count') return `COUNT(CASE WHEN ${b.jsonPresent(t, path)} THEN 1 END) AS count`;
    // min and max of each class: jsonExtreme() picks (numbers come before text)
    return `${sqlFn[f]}(${b.jsonScalar(t, path, 'number')}) AS ${f}, ${sqlFn[f]}(${b.jsonScalar(t, path, 'text')}) AS ${f}${TEXT_SUFFIX}`;
  });
  const sql = `SELECT ${columns.join(', ')} FROM ${d.sql.quote(dataClass.table)} ${t}${b.where(dataClass, t, where)}`;
  return { sql, params: b.params };
}

/** A boolean expression as 1, 0 or null, on any engine. */
function asBit(expr: string): string {
  return `CASE WHEN ${expr} THEN 1 WHEN NOT ${expr} THEN 0 END`;
}

/** The column of the text class of a JSON value beside its number class (`min` and `min__text`, `v` and `v__text`). */
const TEXT_SUFFIX = '__text';

/** The min or max of a JSON path from compileAggregate's row, or a distinct value from compileDistinct's: numbers before text, as SQLite orders them. */
export function jsonExtreme(row: Record<string, unknown>, column: string, highest: boolean): unknown {
  const n = row[column] ?? null;
  const s = row[`${column}${TEXT_SUFFIX}`] ?? null;
  return highest ? (s ?? n) : (n ?? s);
}

/** The distinct non-null values of a path over the rows matching `where`, sorted (text by its fold). */
export function compileDistinct(
  d: Dialect, dataClass: DataClassModel, where: Condition | null, path: AttributePath, limit: number | null, offset: number, restrict: RowFilter | null,
): CompiledSql {
  const b = new SelectBuilder(d, restrict);
  const t = b.alias();
  const from = ` FROM ${d.sql.quote(dataClass.table)} ${t}`;
  // grouped and sorted by position: the values' expressions (and their parameters) once, for both dialects
  let sql: string;
  if (path.json) {
    // numbers, then text (a number has no text class, and the other way round)
    const rank = `CASE WHEN ${b.jsonScalar(t, path, 'number')} IS NOT NULL THEN 1 ELSE 2 END`;
    sql = `SELECT ${rank} AS r, ${b.jsonScalar(t, path, 'number')} AS v, ${b.jsonScalar(t, path, 'text')} AS v${TEXT_SUFFIX}${from}${b.whereAfter(dataClass, t, b.jsonPresent(t, path), where)}`;
  } else if (path.attr.type === 'string') {
    // text: one value per folded form (4D's distinct ignores case and accents), the lowest spelling
    const select = `SELECT ${b.path(t, { ...path, fold: true })} AS o, MIN(${b.path(t, path)}) AS v${from}`;
    sql = select + b.whereAfter(dataClass, t, `${b.path(t, path)} IS NOT NULL`, where);
  } else {
    const select = `SELECT ${b.path(t, path)} AS v${from}`;
    sql = select + b.whereAfter(dataClass, t, `${b.path(t, path)} IS NOT NULL`, where);
  }
  sql += path.json ? ' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3' : ' GROUP BY 1 ORDER BY 1';
  const l = limit === null ? null : b.bindNumber(limit);
  const o = offset ? b.bindNumber(offset) : null;
  return { sql: sql + d.sql.paging(l, o), params: b.params };
}

/** The lowest or highest text of a path (by its fold), for min/max of text. */
export function compileTextExtreme(
  d: Dialect, dataClass: DataClassModel, where: Condition | null, path: AttributePath, highest: boolean, restrict: RowFilter | null,
): CompiledSql {
  const b = new SelectBuilder(d, restrict);
  const t = b.alias();
  const select = `SELECT ${b.path(t, path)} AS v FROM ${d.sql.quote(dataClass.table)} ${t}`;
  const sql = select + b.whereAfter(dataClass, t, `${b.path(t, path)} IS NOT NULL`, where);
  return { sql: `${sql} ORDER BY ${b.path(t, { ...path, fold: true })}${highest ? ' DESC' : ''}${d.sql.paging(b.bindNumber(1), null)}`, params: b.params };
}
