// Which statements a replica may answer, and how they read the global stamp there.
//
// A standby can only read: a statement goes to one when it is a plain SELECT that locks nothing and
// calls nothing that writes, waits on a lock or names the primary's own WAL. Anything else (and
// every statement of a transaction: the manager runs those on connections it acquired for writing)
// stays on the primary. A text that only looks like a write (a column named "update") goes to the
// primary too: that costs a little, never correctness.
//
// The global stamp is a sequence, and a standby does not see a sequence's value: the primary logs
// a sequence 32 numbers ahead and hands the next 32 out without logging, so a standby shows that
// logged value while up to 32 writes come and go under it (measured: 33 on the standby, 2 on the
// primary). A statement that reads the stamp therefore gets the primary's value, read before the
// replica's (as a parameter, so that the text, and its prepared statement, stay the same).

import { postgresDialect } from '../../sql/dialect-postgres.js';
import { GLOBAL_STAMP_TABLE } from '../system-tables/tables.js';

/** At most this many statement texts have their verdict kept (past it, the verdict is made again each time). */
const KEPT_VERDICTS = 4000;

const SELECT = /^\s*\(?\s*(?:select|with)\b/i;
/** a locking read, a SELECT … INTO (makes a table), a data-modifying WITH */
const WRITES_OR_LOCKS = /\bfor\s+(?:update|share|no\s+key\s+update|key\s+share)\b|\binto\b|\b(?:insert|update|delete|merge)\b/i;
/** functions that write, wait on or take locks, or only mean something on the primary */
const PRIMARY_FUNCTIONS = /\b(?:nextval|setval|currval|lastval|pg_advisory\w*|pg_try_advisory\w*|pg_notify|pg_current_wal\w*|txid_current|pg_current_xact_id|set_config|pg_sleep\w*|lo_\w+|dblink\w*)\s*\(/i;

/** views whose rows are the primary's own: its locks (the answer caches' watch counts the writes under way: dialect-postgres.ts globalStamp.watch) */
const PRIMARY_VIEWS = /\bpg_locks\b|\bpg_stat_activity\b/i;

const verdicts = new Map<string, boolean>();

/** May a standby run `sql` on its own (outside any transaction)? */
export function readsOnly(sql: string): boolean {
  let verdict = verdicts.get(sql);
  if (verdict === undefined) {
    verdict = SELECT.test(sql) && !WRITES_OR_LOCKS.test(sql) && !PRIMARY_FUNCTIONS.test(sql) && !PRIMARY_VIEWS.test(sql) && !readsStampOtherwise(sql);
    if (verdicts.size < KEPT_VERDICTS) verdicts.set(sql, verdict);
  }
  return verdict;
}

const STAMP_TABLE = postgresDialect.sql.quote(GLOBAL_STAMP_TABLE);
const STAMP_READ = postgresDialect.schema.globalStamp(STAMP_TABLE).read;
/** the stamp's value as the dialect's statements read it (its read, its data version): `CASE WHEN is_called THEN last_value ELSE 0 END` */
export const STAMP_VALUE = STAMP_READ.slice('SELECT '.length, STAMP_READ.indexOf(' AS v'));

/** Reads the stamp's sequence other than by STAMP_VALUE: no value can be given for it (the primary runs it). */
function readsStampOtherwise(sql: string): boolean {
  return sql.includes(STAMP_TABLE) && /\b(?:last_value|is_called|log_cnt)\b/.test(sql.replaceAll(STAMP_VALUE, ''));
}

/** The texts with the stamp's value turned into a parameter, by text and by the parameters' count. */
const rewritten = new Map<string, string>();

/**
 * `sql` and `params` with each read of the stamp's value replaced by `stamp` (the primary's), as
 * one more parameter; as they are when `sql` does not read it.
 */
export function withPrimaryStamp(sql: string, params: readonly unknown[], stamp: number): { sql: string; params: readonly unknown[] } {
  if (!sql.includes(STAMP_TABLE) || !sql.includes(STAMP_VALUE)) return { sql, params };
  const key = `${params.length}:${sql}`;
  let text = rewritten.get(key);
  if (text === undefined) {
    text = sql.replaceAll(STAMP_VALUE, `$${params.length + 1}::bigint`);
    if (rewritten.size < KEPT_VERDICTS) rewritten.set(key, text);
  }
  return { sql: text, params: [...params, stamp] };
}
