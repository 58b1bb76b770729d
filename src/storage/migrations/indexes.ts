// The statements on a dataclass's indexes and folded text columns, shared by the planner's steps.
// Text is queried and sorted through its folded twin (util/fold.ts): an indexed string attribute
// indexes that one; its own column has an index only to be unique.

import type { DataClassModel, StorageAttribute } from '../../model/types.js';
import type { Dialect } from '../../sql/dialect.js';
import { foldColumn, FOLD_PREFIX_LENGTH } from '../../util/fold.js';
import { foldIndexName, indexName, type ColumnSnapshot } from './snapshot.js';

/** Fills a folded column from its text column, in one statement (the engine's fold: dialect.sql.fold), cut as util/fold.ts storedFold cuts it. */
export function refold(d: Dialect, table: string, column: string): string {
  const q = d.sql.quote;
  return `UPDATE ${q(table)} SET ${q(foldColumn(column))} = substr(${d.sql.fold(q(column))}, 1, ${FOLD_PREFIX_LENGTH}) WHERE ${q(column)} IS NOT NULL`;
}

/** The index on a string attribute's folded column (what equality and prefix queries use), created or dropped. */
export function foldIndex(d: Dialect, dc: DataClassModel, a: StorageAttribute, create: boolean): string {
  const name = d.sql.quote(foldIndexName(dc.table, a.column));
  return create ? `CREATE INDEX IF NOT EXISTS ${name} ON ${d.sql.quote(dc.table)} (${d.sql.quote(foldColumn(a.column))}${d.sql.nullsOrder(false)})` : `DROP INDEX IF EXISTS ${name}`;
}

/** The index (or unique index) on the column itself, from what it had to what the model wants. */
export function indexStatements(d: Dialect, dc: DataClassModel, a: StorageAttribute, was: ColumnSnapshot | undefined): string[] {
  const out: string[] = [];
  // Text is queried through its folded column (see foldIndex): its own column needs an index only to be unique.
  const wanted = a.unique ? 'unique' : a.indexed && a.type !== 'string' ? 'index' : 'none';
  const had = !was || was.retired ? 'none' : was.unique ? 'unique' : was.indexed && was.type !== 'string' ? 'index' : 'none';
  if (wanted === had) return out;
  if (had !== 'none') out.push(`DROP INDEX IF EXISTS ${d.sql.quote(indexName(dc.table, a.column, had === 'unique'))}`);
  if (wanted !== 'none') {
    out.push(`CREATE ${wanted === 'unique' ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${d.sql.quote(indexName(dc.table, a.column, wanted === 'unique'))} ON ${d.sql.quote(dc.table)} (${d.sql.quote(a.column)}${d.sql.nullsOrder(false)})`);
  }
  return out;
}
