// Web sessions (datastore/sessions/: the store, store.ts; guest admission and its caps,
// admission.ts; the sweep, expiry.ts): one row a stored session, keyed by the hash of its cookie's
// token, so that every server instance sees every session; and the failed logins counted per
// client address and per user name, in fixed windows (rest/scope/quotas.ts).

import type { Reader, Storage } from '../adapter.js';
import { LOGIN_FAILURE_TABLE, SESSION_TABLE } from './tables.js';

export interface SessionRow {
  /** the SHA-256 of the cookie's token (the token itself is never stored) */
  readonly token: string;
  /** the session's public id ($info, session().id): not the cookie */
  readonly id: string;
  readonly userName: string;
  /** JSON: the privilege names held, expanded */
  readonly privileges: string;
  /** JSON: the session's storage object */
  readonly storage: string;
  /** the idle timeout, in ms */
  readonly idle: number;
  /** when it expires unless used again (ms since the epoch) */
  readonly expires: number;
  readonly guest: boolean;
}

/** A session as it is stored: with the address of the client that stored it and when it was last used (ms; written with its expiry). */
export interface StoredSessionRow extends SessionRow {
  readonly address: string;
  readonly used: number;
}

const SESSION_COLUMNS = ['token', 'id', 'userName', 'privileges', 'storage', 'idle', 'expires', 'guest'] as const;
const STORED_COLUMNS = [...SESSION_COLUMNS, 'address', 'used'] as const;

function sessionFromRow(row: Record<string, unknown>): SessionRow {
  return {
    token: String(row.token), id: String(row.id), userName: String(row.userName), privileges: String(row.privileges), storage: String(row.storage),
    idle: Number(row.idle), expires: Number(row.expires), guest: Number(row.guest) === 1,
  };
}

export async function readSession(r: Reader, token: string): Promise<SessionRow | undefined> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(`SELECT ${SESSION_COLUMNS.map((c) => q(c)).join(', ')} FROM ${q(SESSION_TABLE)} WHERE ${q('token')} = ${p(1)}`, [token]);
  return row ? sessionFromRow(row) : undefined;
}

/** Stores a new session (its token is new: never one stored before). */
export async function insertSession(s: Storage, row: StoredSessionRow): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(
    // (a guest kept by its cookie, stored by two of its requests at once: one row, the same)
    `INSERT INTO ${q(SESSION_TABLE)} (${STORED_COLUMNS.map((c) => q(c)).join(', ')}) VALUES (${STORED_COLUMNS.map((_, i) => p(i + 1)).join(', ')}) ON CONFLICT (${q('token')}) DO NOTHING`,
    [row.token, row.id, row.userName, row.privileges, row.storage, row.idle, row.expires, row.guest ? 1 : 0, row.address, row.used],
  );
}

/** Whether a token's session is stored (live or not). */
export async function sessionExists(r: Reader, token: string): Promise<boolean> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  return (await r.get(`SELECT 1 AS x FROM ${q(SESSION_TABLE)} WHERE ${q('token')} = ${p(1)}`, [token])) !== undefined;
}

/** The live guest sessions stored from one client address. */
export async function countGuestsFrom(r: Reader, address: string, now: number): Promise<number> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(`SELECT COUNT(*) AS n FROM ${q(SESSION_TABLE)} WHERE ${q('address')} = ${p(1)} AND ${q('guest')} = 1 AND ${q('expires')} > ${p(2)}`, [address, now]);
  return Number(row?.n ?? 0);
}

/**
 * Removes the `count` least recently used live guest sessions (of one address, when given);
 * resolves to their ids. One statement: the rows are chosen by the index on their last use.
 */
export async function evictGuests(s: Storage, count: number, now: number, address?: string): Promise<string[]> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const from = address === undefined ? '' : ` AND ${q('address')} = ${p(2)}`;
  const rows = await s.all(
    `DELETE FROM ${q(SESSION_TABLE)} WHERE ${q('token')} IN (SELECT ${q('token')} FROM ${q(SESSION_TABLE)} WHERE ${q('guest')} = 1 AND ${q('expires')} > ${p(1)}${from} ORDER BY ${q('used')} LIMIT ${p(address === undefined ? 2 : 3)}) RETURNING ${q('id')} AS id`,
    address === undefined ? [now, count] : [now, address, count],
  );
  return rows.map((r) => String(r.id));
}

/**
 * Writes the parts of a stored session that a request changed (who it is, its storage, its idle
 * timeout) and its expiry, never the others; resolves to 0 when it is gone (a gone session is not
 * brought back).
 */
export async function updateSession(s: Storage, row: StoredSessionRow, parts: { readonly who: boolean; readonly storage: boolean; readonly idle: boolean }): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const sets: string[] = [];
  const values: unknown[] = [];
  const set = (column: string, value: unknown) => {
    values.push(value);
    sets.push(`${q(column)} = ${p(values.length)}`);
  };
  if (parts.who) {
    set('userName', row.userName);
    set('privileges', row.privileges);
    set('guest', row.guest ? 1 : 0);
  }
  if (parts.storage) set('storage', row.storage);
  if (parts.idle) set('idle', row.idle);
  set('expires', row.expires);
  set('used', row.used);
  values.push(row.token);
  return s.run(`UPDATE ${q(SESSION_TABLE)} SET ${sets.join(', ')} WHERE ${q('token')} = ${p(values.length)}`, values);
}

/**
 * Gives the live session of an id a new token (a passcode resumed it: the old cookie is worth
 * nothing after); resolves to its row under the new token, or undefined when it is gone.
 */
export async function rotateSessionToken(s: Storage, id: string, token: string, now: number): Promise<SessionRow | undefined> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const row = await s.get(
    `UPDATE ${q(SESSION_TABLE)} SET ${q('token')} = ${p(1)}, ${q('used')} = ${p(2)} WHERE ${q('id')} = ${p(3)} AND ${q('expires')} > ${p(4)} RETURNING ${SESSION_COLUMNS.map((c) => q(c)).join(', ')}`,
    [token, now, id, now],
  );
  return row ? sessionFromRow(row) : undefined;
}

/**
 * Ends the sessions logged in as a user (its password was reset, its roles changed, it was
 * removed), but the one of `exceptId`; resolves to their ids (their entity locks go with them).
 */
export async function deleteUserSessions(s: Storage, userName: string, exceptId?: string): Promise<string[]> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const rows = await s.all(
    `DELETE FROM ${q(SESSION_TABLE)} WHERE ${q('userName')} = ${p(1)}${exceptId === undefined ? '' : ` AND ${q('id')} <> ${p(2)}`} RETURNING ${q('id')} AS id`,
    exceptId === undefined ? [userName] : [userName, exceptId],
  );
  return rows.map((r) => String(r.id));
}

/** Moves a session's expiry and last use (it was used at `used`); resolves to 0 when it is gone. */
export async function touchSession(s: Storage, token: string, expires: number, used: number): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  return s.run(`UPDATE ${q(SESSION_TABLE)} SET ${q('expires')} = ${p(1)}, ${q('used')} = ${p(2)} WHERE ${q('token')} = ${p(3)}`, [expires, used, token]);
}

export async function deleteSession(s: Storage, token: string): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(`DELETE FROM ${q(SESSION_TABLE)} WHERE ${q('token')} = ${p(1)}`, [token]);
}

/** The live sessions, guests or not. */
export async function countSessions(r: Reader, guest: boolean, now: number): Promise<number> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(`SELECT COUNT(*) AS n FROM ${q(SESSION_TABLE)} WHERE ${q('guest')} = ${p(1)} AND ${q('expires')} > ${p(2)}`, [guest ? 1 : 0, now]);
  return Number(row?.n ?? 0);
}

/** The live sessions, soonest to expire last, at most `limit` (no tokens). */
export async function listSessions(r: Reader, now: number, limit: number): Promise<Omit<SessionRow, 'token' | 'storage'>[]> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const rows = await r.all(
    `SELECT ${q('id')} AS id, ${q('userName')} AS ${q('userName')}, ${q('privileges')} AS privileges, ${q('idle')} AS idle, ${q('expires')} AS expires, ${q('guest')} AS guest FROM ${q(SESSION_TABLE)}`
    + ` WHERE ${q('expires')} > ${p(1)} ORDER BY ${q('expires')} DESC LIMIT ${p(2)}`,
    [now, limit],
  );
  return rows.map((row) => ({ id: String(row.id), userName: String(row.userName), privileges: String(row.privileges), idle: Number(row.idle), expires: Number(row.expires), guest: Number(row.guest) === 1 }));
}

/** Removes expired sessions and login-failure counts of windows past; resolves to the sessions removed. */
export async function deleteExpiredSessions(s: Storage, now: number, failuresBefore: number): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const n = await s.run(`DELETE FROM ${q(SESSION_TABLE)} WHERE ${q('expires')} <= ${p(1)}`, [now]);
  await s.run(`DELETE FROM ${q(LOGIN_FAILURE_TABLE)} WHERE ${q('window')} < ${p(1)}`, [failuresBefore]);
  return n;
}

/**
 * Adds `delta` to the login count of each key in the window (an attempt: +1; a success forgiven:
 * -1), in one statement each, so that attempts arriving at once each see the others; resolves to
 * each key's count after it.
 */
export async function countLogins(s: Storage, keys: readonly string[], window: number, delta: number): Promise<number[]> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const out: number[] = [];
  for (const key of keys) {
    const row = await s.get(
      `INSERT INTO ${q(LOGIN_FAILURE_TABLE)} (${q('key')}, ${q('window')}, ${q('count')}) VALUES (${p(1)}, ${p(2)}, ${p(3)})`
      + ` ON CONFLICT (${q('key')}, ${q('window')}) DO UPDATE SET ${q('count')} = ${q(LOGIN_FAILURE_TABLE)}.${q('count')} + ${p(4)} RETURNING ${q('count')} AS n`,
      [key, window, delta, delta],
    );
    out.push(Number(row?.n ?? 0));
  }
  return out;
}
