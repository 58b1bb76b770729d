// Pessimistic entity locks (datastore/sessions/locks.ts, REST's $lock): one row a locked entity,
// held by a session's id while that session lives. Every read of a lock joins the sessions table,
// so a lock of a session gone (expired, swept) is void at once on every instance, before the sweep
// removes its row. A write probes the locks of what it changed with the increase of the global
// stamp (bumpStampProbingLock).

import type { Reader, Storage } from '../adapter.js';
import { globalStampStatements, stampMoving } from './global-stamp.js';
import { LOCK_TABLE, SESSION_TABLE } from './tables.js';

/** Who holds a lock: the session (its id and user name) and the client it locked from. */
export interface LockHolderRow {
  readonly session: string;
  readonly userName: string;
  readonly address: string;
  readonly host: string;
  readonly userAgent: string;
}

/** The live lock on an entity held by a session other than `except` (null: any session), if any. */
export async function lockHeldElsewhere(r: Reader, dataClass: string, key: string, now: number, except: string | null): Promise<LockHolderRow | undefined> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const l = q(LOCK_TABLE);
  const s = q(SESSION_TABLE);
  const row = await r.get(
    `SELECT ${l}.${q('session')} AS ${q('session')}, ${s}.${q('userName')} AS ${q('userName')}, ${l}.${q('address')} AS ${q('address')}, ${l}.${q('host')} AS ${q('host')}, ${l}.${q('userAgent')} AS ${q('userAgent')}`
    + ` FROM ${l} JOIN ${s} ON ${s}.${q('id')} = ${l}.${q('session')}`
    // (placeholders in the order they bind: SQLite's bind by position)
    + ` WHERE ${l}.${q('dataClass')} = ${p(1)} AND ${l}.${q('key')} = ${p(2)} AND ${s}.${q('expires')} > ${p(3)}${except === null ? '' : ` AND ${l}.${q('session')} <> ${p(4)}`} LIMIT 1`,
    except === null ? [dataClass, key, now] : [dataClass, key, now, except],
  );
  return row ? { session: String(row.session), userName: String(row.userName), address: String(row.address), host: String(row.host), userAgent: String(row.userAgent) } : undefined;
}

/**
 * In a lock's transaction: the session's row is still the one its request was opened with (its
 * token, id, user name and privileges; not expired), taken for update where the engine locks
 * rows, so that a logout or a login as another user (which changes or removes that row, then
 * removes the session's locks) waits for the lock to commit, or is seen by it.
 */
export async function sessionStillHeld(s: Storage, row: { token: string; id: string; userName: string; privileges: string }, now: number): Promise<boolean> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const t = q(SESSION_TABLE);
  const found = await s.get(
    `SELECT 1 AS ok FROM ${t} WHERE ${q('token')} = ${p(1)} AND ${q('id')} = ${p(2)} AND ${q('userName')} = ${p(3)} AND ${q('privileges')} = ${p(4)} AND ${q('expires')} > ${p(5)}${s.dialect.concurrency.rowLock(t)}`,
    [row.token, row.id, row.userName, row.privileges, now],
  );
  return found !== undefined;
}

/** How many locks a session holds, besides the one on an entity (the one it asks again). */
export async function countSessionLocks(r: Reader, session: string, dataClass: string, key: string): Promise<number> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(
    `SELECT COUNT(*) AS n FROM ${q(LOCK_TABLE)} WHERE ${q('session')} = ${p(1)} AND NOT (${q('dataClass')} = ${p(2)} AND ${q('key')} = ${p(3)})`,
    [session, dataClass, key],
  );
  return Number(row?.n ?? 0);
}

/** What a write asks of an entity's locks after its UPDATE or DELETE: another live session's lock on it, and any lock row at all (a drop removes it). */
export interface LockProbe {
  readonly heldElsewhere: boolean;
  readonly anyRow: boolean;
}

/** The statements of bumpStampProbingLock, per dialect and shape (built once: every update and drop runs one). */
const probeStatements = new WeakMap<Reader['dialect'], Map<string, string>>();

/**
 * Increases the global stamp (when `bump`) and asks the entity's locks (LockProbe): where the
 * increase is an expression (PostgreSQL's nextval), in one statement, a SELECT of it and the
 * look-ups, at no round trip more than the write's own; where it is a statement of its own
 * (SQLite's UPDATE of its one row, in-process: no round trip to save), that statement, then the
 * SELECT of the look-ups (SQLite runs them as the UPDATE's RETURNING clause five times slower:
 * 24 µs against 5). After the write's statement, so that it sees a lock committed while the
 * write waited for the row.
 */
export async function bumpStampProbingLock(s: Storage, dataClass: string, key: string, now: number, except: string | null, bump = true): Promise<LockProbe> {
  const d = s.dialect;
  // (the answer caches count the move: rest/scope/answer-cache)
  if (bump) stampMoving(s);
  const stamp = globalStampStatements(s);
  const withStamp = bump && stamp.bumpExpression !== null;
  const name = `${withStamp ? 'select' : 'probe'}${except === null ? '' : ' except'}`;
  let byShape = probeStatements.get(d);
  if (!byShape) probeStatements.set(d, (byShape = new Map()));
  let sql = byShape.get(name);
  if (sql === undefined) {
    const { quote: q, placeholder: p } = d.sql;
    const l = q(LOCK_TABLE);
    const t = q(SESSION_TABLE);
    // (placeholders in the order they bind, the same as `values` below: SQLite's bind by position)
    let n = 0;
    const bind = () => p(++n);
    const onKey = () => `${l}.${q('dataClass')} = ${bind()} AND ${l}.${q('key')} = ${bind()}`;
    const held = `EXISTS (SELECT 1 FROM ${l} JOIN ${t} ON ${t}.${q('id')} = ${l}.${q('session')} WHERE ${onKey()} AND ${t}.${q('expires')} > ${bind()}${except === null ? '' : ` AND ${l}.${q('session')} <> ${bind()}`}) AS ${q('held')}`;
    const anyRow = `EXISTS (SELECT 1 FROM ${l} WHERE ${onKey()}) AS ${q('anyRow')}`;
    sql = `SELECT ${withStamp ? `${stamp.bumpExpression} AS ${q('stamp')}, ` : ''}${held}, ${anyRow}`;
    byShape.set(name, sql);
  }
  if (bump && !withStamp) await s.run(stamp.bump);
  const values = except === null ? [dataClass, key, now, dataClass, key] : [dataClass, key, now, except, dataClass, key];
  const row = await s.get(sql, values);
  return { heldElsewhere: truthy(row?.held), anyRow: truthy(row?.anyRow) };
}

function truthy(v: unknown): boolean {
  return v === true || v === 1 || v === 1n || v === '1' || v === 't';
}

/** Puts a session's lock on an entity, in place of any lock there (the caller checked it is void or the session's own). */
export async function putLock(s: Storage, row: { dataClass: string; key: string; session: string; address: string; host: string; userAgent: string; at: number }): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(
    `INSERT INTO ${q(LOCK_TABLE)} (${q('dataClass')}, ${q('key')}, ${q('session')}, ${q('address')}, ${q('host')}, ${q('userAgent')}, ${q('at')}) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)})`
    + ` ON CONFLICT (${q('dataClass')}, ${q('key')}) DO UPDATE SET ${['session', 'address', 'host', 'userAgent', 'at'].map((c) => `${q(c)} = excluded.${q(c)}`).join(', ')}`,
    [row.dataClass, row.key, row.session, row.address, row.host, row.userAgent, row.at],
  );
}

/** The keys among `keys` (as the lock table writes them) that a lock row names, live or not: a big delete's few to look at closer (datastore/sessions/locks.ts). */
export async function lockedKeysAmong(r: Reader, dataClass: string, keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const { quote: q, placeholder: p } = r.dialect.sql;
  const marks = keys.map((_, i) => p(i + 2)).join(', ');
  return (await r.column(`SELECT ${q('key')} FROM ${q(LOCK_TABLE)} WHERE ${q('dataClass')} = ${p(1)} AND ${q('key')} IN (${marks})`, [dataClass, ...keys])).map(String);
}

/** Removes the lock on an entity: the session's own (`session`), or whoever's (null: the entity was dropped). */
export async function deleteLock(s: Storage, dataClass: string, key: string, session: string | null): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  return s.run(
    `DELETE FROM ${q(LOCK_TABLE)} WHERE ${q('dataClass')} = ${p(1)} AND ${q('key')} = ${p(2)}${session === null ? '' : ` AND ${q('session')} = ${p(3)}`}`,
    session === null ? [dataClass, key] : [dataClass, key, session],
  );
}

/** Removes every lock a session holds (it logged out). */
export async function deleteSessionLocks(s: Storage, session: string): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  return s.run(`DELETE FROM ${q(LOCK_TABLE)} WHERE ${q('session')} = ${p(1)}`, [session]);
}

/** Removes the locks whose session is gone or expired (the session sweep). */
export async function deleteVoidLocks(s: Storage, now: number): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const l = q(LOCK_TABLE);
  const t = q(SESSION_TABLE);
  return s.run(`DELETE FROM ${l} WHERE NOT EXISTS (SELECT 1 FROM ${t} WHERE ${t}.${q('id')} = ${l}.${q('session')} AND ${t}.${q('expires')} > ${p(1)})`, [now]);
}
