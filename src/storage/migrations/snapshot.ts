// The schema as last applied, recorded in __dataset_meta under `schema`: what the planner
// (plan.ts) compares model.json with. Keyed by table and column names (a dataclass's and an
// attribute's names), it also remembers what left the model (`retired`), so that its data stays
// reachable: a name that comes back, or a rename, finds it.

import type { StorageAttribute, StorageType } from '../../model/types.js';
import { foldColumn } from '../../util/fold.js';

export interface ColumnSnapshot {
  type: StorageType;
  /** a string column has a folded twin (util/fold.ts) that queries and sorts use */
  fold?: boolean;
  /** date-only dates are stored as YYYY-MM-DD on SQLite, others as full ISO times */
  dateOnly?: boolean;
  indexed: boolean;
  unique: boolean;
  /** absent in records made before notNull was checked: the model's flag is then taken as it is */
  notNull?: boolean;
  /** still in the table, no longer in the model */
  retired?: boolean;
}

export interface TableSnapshot {
  key: string;
  keyAutoincrement?: boolean;
  columns: Record<string, ColumnSnapshot>;
  /** still in the database, no longer in the model */
  retired?: boolean;
}

export interface SchemaSnapshot {
  version: 1;
  tables: Record<string, TableSnapshot>;
}

export const EMPTY_SNAPSHOT: SchemaSnapshot = { version: 1, tables: {} };

export function columnSnapshot(a: StorageAttribute): ColumnSnapshot {
  return {
    type: a.type, ...(a.dateOnly ? { dateOnly: true } : {}), ...(a.type === 'string' ? { fold: true } : {}),
    indexed: a.indexed, unique: a.unique, notNull: a.notNull,
  };
}

export function indexName(table: string, column: string, unique: boolean): string {
  return `${unique ? 'uq' : 'idx'}_${table}_${column}`;
}

export function foldIndexName(table: string, column: string): string {
  return `idx_${table}_${foldColumn(column)}`;
}

/**
 * The names of the indexes a recorded column may have (index names are the database's, not the
 * table's: a renamed table or column must take its indexes' names along, or a new one of the old
 * name would find them taken).
 */
export function indexesOf(table: string, column: string, c: ColumnSnapshot): string[] {
  if (c.retired) return [];
  const out: string[] = [];
  if (c.unique) out.push(indexName(table, column, true));
  else if (c.indexed && c.type !== 'string') out.push(indexName(table, column, false));
  if (c.fold && c.indexed) out.push(foldIndexName(table, column));
  return out;
}

/** How a type reads in a step's line: `long`, `date (date only)`. */
export function typeLabel(c: { type: StorageType; dateOnly?: boolean }): string {
  return c.type === 'date' ? (c.dateOnly ? 'date (date only)' : 'date (with time)') : c.type;
}

/** 1204 → "1,204" (a step's line counts values). */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}
