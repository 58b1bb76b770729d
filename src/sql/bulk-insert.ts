// The multi-row INSERT of an import (datastore/writes/import-writes.ts): the same columns a single insert
// (compiler/statements.ts compileInsert) writes — each value, the folded form beside every string, the stamp
// and the save time — for many rows in one statement. The values come bound and already encoded
// by the caller (it checks each row before the statement, so that a bad row is refused alone).

import type { DataClassModel, StorageAttribute } from '../model/types.js';
import { foldColumn } from '../util/fold.js';
import type { Dialect } from './dialect.js';
import { STAMP_COLUMN, TIMESTAMP_COLUMN } from './hidden-columns.js';

/** Bound values a row takes with these attributes: one each, one more per string (its fold), then stamp and time. */
export function bulkRowWidth(attrs: readonly StorageAttribute[]): number {
  let n = 2;
  for (const a of attrs) n += a.type === 'string' ? 2 : 1;
  return n;
}

/**
 * INSERT INTO table (columns) VALUES (…), (…) for `rows` rows of `attrs`, no row filter (an insert
 * reads no rows) and nothing returned (an import needs no keys back). Each row's bound values, in
 * order: for each attribute its value, then its fold if it is a string; then the stamp and the time.
 */
export function compileBulkInsert(d: Dialect, dc: DataClassModel, attrs: readonly StorageAttribute[], rows: number): string {
  const cols: string[] = [];
  for (const a of attrs) {
    cols.push(d.sql.quote(a.column));
    if (a.type === 'string') cols.push(d.sql.quote(foldColumn(a.column)));
  }
  cols.push(d.sql.quote(STAMP_COLUMN), d.sql.quote(TIMESTAMP_COLUMN));
  const width = cols.length;
  const tuples: string[] = [];
  let n = 0;
  for (let r = 0; r < rows; r++) {
    const marks: string[] = [];
    for (let c = 0; c < width; c++) marks.push(d.sql.placeholder(++n));
    tuples.push(`(${marks.join(', ')})`);
  }
  return `INSERT INTO ${d.sql.quote(dc.table)} (${cols.join(', ')}) VALUES ${tuples.join(', ')}`;
}

/**
 * After rows were inserted with keys of their own into an autoincrement key: the statement that
 * moves the engine's key counter past the largest key, so that the next entity it makes does not
 * collide with an imported one; null where there is no such key, or the engine's counter follows
 * the keys inserted (Dialect.schema.keyCounterCatchUp).
 */
export function compileKeyCounterCatchUp(d: Dialect, dc: DataClassModel): { sql: string; params: unknown[] } | null {
  if (!dc.key.autoincrement) return null;
  return d.schema.keyCounterCatchUp(dc.table, dc.key.column);
}
