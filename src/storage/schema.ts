// Brings the database in line with the model at start-up: creates tables, columns and indexes,
// never drops data. The schema last applied is kept in the database itself (__dataset_meta), so a
// change that cannot be applied safely (a type change, a new unique on duplicate data) is caught
// and reported before the server starts.

import { SCHEMA_BATCH_ROWS } from '../config/limits.js';
import type { DataClassModel, Model, StorageAttribute, StorageType } from '../model/types.js';
import { fold, FOLD_VERSION, foldColumn } from '../util/fold.js';
import { STAMP_COLUMN, TIMESTAMP_COLUMN } from '../sql/hidden-columns.js';
import type { Storage } from './adapter.js';
import { createSystemTables, lockSchema, readMeta, tableColumns, writeMeta } from './system-tables.js';

/** Hidden columns every dataclass table has (defined in sql/, which the compiler reads them from). */
export { STAMP_COLUMN, TIMESTAMP_COLUMN } from '../sql/hidden-columns.js';
/** Internal tables (system-tables.ts). */
export { BLOB_CHUNK_TABLE, BLOB_TABLE, GLOBAL_STAMP_TABLE, META_TABLE, QUERY_PATH_TABLE } from './system-tables.js';

/**
 * Schema sync is run again from the start this many times when another instance holds the
 * database (SQLITE_BUSY past busy_timeout, a PostgreSQL serialization failure).
 */
const SYNC_RETRIES = 5;

interface ColumnSnapshot {
  type: StorageType;
  /** a string column has a folded twin (util/fold.ts) that queries and sorts use */
  fold?: boolean;
  /** date-only dates are stored as YYYY-MM-DD, others as full ISO times: not interchangeable */
  dateOnly?: boolean;
  indexed: boolean;
  unique: boolean;
  /** still in the table, no longer in the model */
  retired?: boolean;
}
interface TableSnapshot {
  key: string;
  keyAutoincrement?: boolean;
  columns: Record<string, ColumnSnapshot>;
}
interface SchemaSnapshot {
  version: 1;
  tables: Record<string, TableSnapshot>;
}

export class SchemaError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`the database cannot be brought in line with the model:\n  - ${problems.join('\n  - ')}`);
    this.name = 'SchemaError';
  }
}

export async function syncSchema(storage: Storage, model: Model): Promise<void> {
  await storage.transaction(async () => {
    // instances starting together: one at a time, each reading what the one before recorded
    await lockSchema(storage);
    await createSystemTables(storage);

    const recorded = await readMeta(storage, 'schema');
    const before: SchemaSnapshot = recorded !== undefined ? (JSON.parse(recorded) as SchemaSnapshot) : { version: 1, tables: {} };
    const after: SchemaSnapshot = { version: 1, tables: {} };
    const problems: string[] = [];
    const statements: string[] = [];
    /** string attributes of existing tables that just got their folded column */
    const backfill: StorageAttribute[] = [];

    for (const dc of model.dataClasses) {
      const old = before.tables[dc.table];
      const existing = await tableColumns(storage, dc.table);
      if (!old && existing.length > 0) {
        problems.push(`table "${dc.table}" already exists but was not created by dataset-rest; rename the dataclass or use another database`);
        continue;
      }
      after.tables[dc.table] = old ? await alterTable(storage, dc, old, problems, statements, backfill) : createTable(storage, dc, statements);
    }
    // Tables of dataclasses no longer in the model stay, with their data, and stay recorded.
    for (const [table, snap] of Object.entries(before.tables)) after.tables[table] ??= snap;
    if (problems.length > 0) throw new SchemaError(problems);
    for (const sql of statements) await storage.exec(sql);
    const foldVersion = await readMeta(storage, 'foldVersion');
    const refold = recorded !== undefined && Number(foldVersion ?? 1) !== FOLD_VERSION;
    for (const dc of model.dataClasses) {
      for (const a of dc.storage) {
        // a folded column just added, or all of them when the fold function changed since
        if (a.type === 'string' && (backfill.includes(a) || (refold && before.tables[dc.table]))) await backfillFold(storage, a, refold);
      }
    }
    if (foldVersion === undefined || refold) await writeMeta(storage, 'foldVersion', String(FOLD_VERSION));
    const json = JSON.stringify(after);
    if (recorded !== json) await writeMeta(storage, 'schema', json);
  }, { retries: SYNC_RETRIES });
}

function createTable(storage: Storage, dc: DataClassModel, statements: string[]): TableSnapshot {
  const d = storage.dialect;
  const cols = dc.storage.map((a) => (a.identifying ? `${d.quote(a.column)} ${d.keyColumn(a)}` : `${d.quote(a.column)} ${d.columnType(a.type)}`));
  for (const a of dc.storage) if (a.type === 'string') cols.push(`${d.quote(foldColumn(a.column))} ${d.columnType('string')}`);
  cols.push(`${d.quote(STAMP_COLUMN)} ${d.bigint} NOT NULL DEFAULT 1`, `${d.quote(TIMESTAMP_COLUMN)} ${d.bigint} NOT NULL DEFAULT 0`);
  statements.push(`CREATE TABLE ${d.quote(dc.table)} (\n  ${cols.join(',\n  ')}\n)`);
  const snap: TableSnapshot = { key: dc.key.name, keyAutoincrement: dc.key.autoincrement, columns: {} };
  for (const a of dc.storage) {
    snap.columns[a.column] = columnSnapshot(a);
    if (!a.identifying) statements.push(...indexStatements(storage, dc, a, { type: a.type, indexed: false, unique: false }));
    if (a.type === 'string' && a.indexed) statements.push(foldIndex(storage, dc, a, true));
  }
  return snap;
}

async function alterTable(
  storage: Storage, dc: DataClassModel, old: TableSnapshot, problems: string[], statements: string[], backfill: StorageAttribute[],
): Promise<TableSnapshot> {
  const d = storage.dialect;
  const snap: TableSnapshot = { key: dc.key.name, keyAutoincrement: dc.key.autoincrement, columns: {} };
  const oldKey = old.columns[old.key];
  if (old.key !== dc.key.name || oldKey?.type !== dc.key.type || (old.keyAutoincrement ?? dc.key.autoincrement) !== dc.key.autoincrement) {
    problems.push(`${dc.name}: the primary key changed from ${old.key} (${oldKey?.type}${old.keyAutoincrement ? ', autoincrement' : ''}) to ${dc.key.name} (${dc.key.type}${dc.key.autoincrement ? ', autoincrement' : ''}); a key change cannot be applied to existing data`);
    return old;
  }
  for (const a of dc.storage) {
    const was = old.columns[a.column];
    snap.columns[a.column] = columnSnapshot(a);
    if (a.identifying) continue;
    if (!was) {
      statements.push(`ALTER TABLE ${d.quote(dc.table)} ADD COLUMN ${d.quote(a.column)} ${d.columnType(a.type)}`);
    } else if (was.type !== a.type) {
      problems.push(`${dc.name}.${a.name}: the type changed from ${was.type} to ${a.type}; a type change cannot be applied to existing data safely (add a new attribute and copy the values instead)`);
      continue;
    } else if ((was.dateOnly ?? false) !== a.dateOnly) {
      problems.push(`${dc.name}.${a.name}: dateOnly changed to ${a.dateOnly}; the stored dates have the other form (add a new attribute and copy the values instead)`);
      continue;
    }
    // (a column added now holds only nulls: nothing to check)
    if (a.unique && was && !(was.unique && !was.retired)) {
      const dup = await storage.get(
        `SELECT ${d.quote(a.column)} AS v, COUNT(*) AS n FROM ${d.quote(dc.table)} WHERE ${d.quote(a.column)} IS NOT NULL GROUP BY ${d.quote(a.column)} HAVING COUNT(*) > 1 LIMIT 1`,
      );
      if (dup) {
        problems.push(`${dc.name}.${a.name}: cannot become unique, the value ${JSON.stringify(dup.v)} is held by ${String(dup.n)} entities`);
        continue;
      }
    }
    statements.push(...indexStatements(storage, dc, a, was && !was.retired ? was : { type: a.type, indexed: false, unique: false }));
    if (a.type === 'string') {
      if (!was?.fold) {
        statements.push(`ALTER TABLE ${d.quote(dc.table)} ADD COLUMN ${d.quote(foldColumn(a.column))} ${d.columnType('string')}`);
        if (was) backfill.push(a);
      }
      if (a.indexed !== Boolean(was?.fold && !was.retired && was.indexed)) statements.push(foldIndex(storage, dc, a, a.indexed));
    }
  }
  for (const [column, was] of Object.entries(old.columns)) {
    if (snap.columns[column]) continue;
    // A column that left the model keeps its data; its indexes go (they would slow writes for nothing).
    snap.columns[column] = { ...was, indexed: false, unique: false, retired: true };
    if (!was.retired && (was.indexed || was.unique)) statements.push(`DROP INDEX IF EXISTS ${d.quote(indexName(dc, column, was.unique))}`);
  }
  return snap;
}

function columnSnapshot(a: StorageAttribute): ColumnSnapshot {
  return { type: a.type, ...(a.dateOnly ? { dateOnly: true } : {}), ...(a.type === 'string' ? { fold: true } : {}), indexed: a.indexed, unique: a.unique };
}

/** The index on a string attribute's folded column (what equality and prefix queries use), created or dropped. */
function foldIndex(storage: Storage, dc: DataClassModel, a: StorageAttribute, create: boolean): string {
  const d = storage.dialect;
  const name = d.quote(`idx_${dc.table}_${foldColumn(a.column)}`);
  return create ? `CREATE INDEX IF NOT EXISTS ${name} ON ${d.quote(dc.table)} (${d.quote(foldColumn(a.column))}${d.nullsOrder(false)})` : `DROP INDEX IF EXISTS ${name}`;
}

/** Fills a folded column from the values stored (every row, or those not folded yet), a batch at a time in key order. */
async function backfillFold(storage: Storage, a: StorageAttribute, all: boolean): Promise<void> {
  const d = storage.dialect;
  const q = d.quote;
  const table = q(a.dataClass.table);
  const key = q(a.dataClass.key.column);
  const which = all ? '' : ` AND ${q(foldColumn(a.column))} IS NULL`;
  let after: unknown = null;
  for (;;) {
    const from = after === null ? '' : ` AND ${key} > ${d.placeholder(1)}`;
    const rows = await storage.all(
      `SELECT ${key} AS k, ${q(a.column)} AS v FROM ${table} WHERE ${q(a.column)} IS NOT NULL${which}${from} ORDER BY ${key} LIMIT ${SCHEMA_BATCH_ROWS}`,
      after === null ? [] : [after],
    );
    for (const r of rows) await storage.run(`UPDATE ${table} SET ${q(foldColumn(a.column))} = ${d.placeholder(1)} WHERE ${key} = ${d.placeholder(2)}`, [fold(String(r.v)), r.k]);
    if (rows.length < SCHEMA_BATCH_ROWS) return;
    after = rows[rows.length - 1].k;
  }
}

function indexStatements(storage: Storage, dc: DataClassModel, a: StorageAttribute, was: ColumnSnapshot): string[] {
  const d = storage.dialect;
  const out: string[] = [];
  // Text is queried through its folded column (see foldIndex): its own column needs an index only to be unique.
  const wanted = a.unique ? 'unique' : a.indexed && a.type !== 'string' ? 'index' : 'none';
  const had = was.unique ? 'unique' : was.indexed ? 'index' : 'none';
  if (wanted === had) return out;
  if (had !== 'none') out.push(`DROP INDEX IF EXISTS ${d.quote(indexName(dc, a.column, had === 'unique'))}`);
  if (wanted !== 'none') {
    out.push(`CREATE ${wanted === 'unique' ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${d.quote(indexName(dc, a.column, wanted === 'unique'))} ON ${d.quote(dc.table)} (${d.quote(a.column)}${d.nullsOrder(false)})`);
  }
  return out;
}

function indexName(dc: DataClassModel, column: string, unique: boolean): string {
  return `${unique ? 'uq' : 'idx'}_${dc.table}_${column}`;
}
