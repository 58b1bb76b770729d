// The global stamp: the datastore's modification counter, increased by every transaction that
// saves or drops (answers show it; a client compares it to know whether anything changed). Its
// SQL is the dialect's (SQLite's one-row table, PostgreSQL's sequence).

import type { Reader, Storage } from '../adapter.js';
import { GLOBAL_STAMP_TABLE } from './tables.js';

/** Increases the global stamp: in every transaction that saves or drops. */
export async function bumpGlobalStamp(s: Storage): Promise<void> {
  await s.run(s.dialect.schema.globalStamp(s.dialect.sql.quote(GLOBAL_STAMP_TABLE)).bump);
}

/** The read of the modification counter, per dialect: built once (many answers show the counter). */
const stampReads = new WeakMap<Reader['dialect'], string>();

/** The datastore's modification counter. */
export async function readGlobalStamp(r: Reader): Promise<number> {
  let sql = stampReads.get(r.dialect);
  if (sql === undefined) stampReads.set(r.dialect, (sql = r.dialect.schema.globalStamp(r.dialect.sql.quote(GLOBAL_STAMP_TABLE)).read));
  const row = await r.get(sql);
  return Number(row?.v ?? 0);
}
