// The last __queryPath of each session (datastore/sessions/query-paths.ts, GET /rest/$querypath),
// in the database so that every server instance sees it; the sweep removes those of sessions gone.

import type { Reader, Storage } from '../adapter.js';
import { QUERY_PATH_TABLE, SESSION_TABLE } from './tables.js';

/** Keeps the last query path of a caller. */
export async function recordQueryPath(s: Storage, caller: string, path: unknown, at: number): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(
    `INSERT INTO ${q(QUERY_PATH_TABLE)} (${q('caller')}, ${q('path')}, ${q('at')}) VALUES (${p(1)}, ${p(2)}, ${p(3)})`
    + ` ON CONFLICT (${q('caller')}) DO UPDATE SET ${q('path')} = excluded.${q('path')}, ${q('at')} = excluded.${q('at')}`,
    [caller, JSON.stringify(path), at],
  );
}

/**
 * Removes the query paths of sessions no longer stored (expired, evicted, or ended by a login's
 * new id), recorded before `before` (a path recorded by a guest whose row its request has yet to
 * store is left for the next sweep), and those of the address-keyed callers of older versions.
 */
export async function deleteVoidQueryPaths(s: Storage, before: number): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const paths = q(QUERY_PATH_TABLE);
  const sessions = q(SESSION_TABLE);
  return s.run(`DELETE FROM ${paths} WHERE ${paths}.${q('at')} < ${p(1)} AND NOT EXISTS (SELECT 1 FROM ${sessions} WHERE ${sessions}.${q('id')} = ${paths}.${q('caller')})`, [before]);
}

/** The last query path recorded for a caller, if any. */
export async function lastQueryPath(r: Reader, caller: string): Promise<unknown> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(`SELECT ${q('path')} AS p FROM ${q(QUERY_PATH_TABLE)} WHERE ${q('caller')} = ${p(1)}`, [caller]);
  return row ? JSON.parse(row.p as string) : undefined;
}
