// The meta table (what the database records of itself: the schema last applied, the fold
// version) and the locks a transaction takes by name: the schema's (instances sync and seed one
// at a time) and the others' (Dialect.concurrency.transactionLock).

import type { Reader, Storage } from '../adapter.js';
import { META_TABLE } from './tables.js';

/** Takes the lock named `name` until the current transaction ends, where the engine needs one (see Dialect.concurrency.transactionLock). */
export async function lockNamed(s: Storage, name: string): Promise<void> {
  const sql = s.dialect.concurrency.transactionLock(name);
  if (sql !== null) await s.run(sql);
}

/**
 * Takes the schema's lock until the current transaction ends: instances bring the schema in line,
 * and seed, one at a time. The transaction runs without the query time limit from here: an
 * instance may wait for another's whole sync or seed, and a conversion goes through whole tables.
 */
export async function lockSchema(s: Storage): Promise<void> {
  if (s.dialect.concurrency.noStatementTimeout !== null) await s.run(s.dialect.concurrency.noStatementTimeout);
  await lockNamed(s, 'schema sync');
}

/** A value recorded in the meta table (the schema last applied, the fold version), if any. */
export async function readMeta(r: Reader, key: string): Promise<string | undefined> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(`SELECT ${q('value')} AS v FROM ${q(META_TABLE)} WHERE ${q('key')} = ${p(1)}`, [key]);
  return row === undefined ? undefined : String(row.v);
}

export async function writeMeta(s: Storage, key: string, value: string): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(
    `INSERT INTO ${q(META_TABLE)} (${q('key')}, ${q('value')}) VALUES (${p(1)}, ${p(2)}) ON CONFLICT (${q('key')}) DO UPDATE SET ${q('value')} = excluded.${q('value')}`,
    [key, value],
  );
}
