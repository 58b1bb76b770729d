// Built-in users (datastore/users/): one row a user, keyed by the fold of its name (the form a
// login looks it up by: case, accents and compatibility forms alike), with its Argon2id hash and
// its roles; one row an API token, keyed by a public id and found by the SHA-256 of its secret
// (the secret itself is never stored); the one-time passcodes that resume a session (4D's
// createOTP / $4DSID), kept by their hash until used or expired; and the lockout count of each
// folded user name. In the database: every instance sees every change at once.

import type { Reader, Storage } from '../adapter.js';
import { API_TOKEN_TABLE, LOCKOUT_TABLE, OTP_TABLE, USER_TABLE } from './tables.js';

export interface UserRow {
  /** the fold of the name: what a login looks it up by */
  readonly key: string;
  /** the name as it was given */
  readonly userName: string;
  readonly hash: string;
  /** JSON: the role names */
  readonly roles: string;
  readonly created: number;
  /** when its password was last set (ms) */
  readonly changed: number;
}

export interface TokenRow {
  readonly id: string;
  /** the SHA-256 of its secret */
  readonly hash: string;
  readonly name: string;
  /** its user's key */
  readonly user: string;
  /** JSON: the privilege names it carries */
  readonly privileges: string;
  readonly created: number;
  /** when it stops working (ms), or null: never */
  readonly expires: number | null;
  /** when it was last used (ms, written at most once a minute), or null */
  readonly lastUsed: number | null;
}

const USER_COLUMNS = ['key', 'userName', 'hash', 'roles', 'created', 'changed'] as const;
const TOKEN_COLUMNS = ['id', 'hash', 'name', 'user', 'privileges', 'created', 'expires', 'lastUsed'] as const;

function userFromRow(row: Record<string, unknown>): UserRow {
  return { key: String(row.key), userName: String(row.userName), hash: String(row.hash), roles: String(row.roles), created: Number(row.created), changed: Number(row.changed) };
}

function tokenFromRow(row: Record<string, unknown>): TokenRow {
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return { id: String(row.id), hash: String(row.hash), name: String(row.name), user: String(row.user), privileges: String(row.privileges), created: Number(row.created), expires: n(row.expires), lastUsed: n(row.lastUsed) };
}

const cols = (r: Reader, names: readonly string[], prefix = '') => names.map((c) => `${prefix}${r.dialect.sql.quote(c)} AS ${r.dialect.sql.quote(c)}`).join(', ');

export async function readUser(r: Reader, key: string): Promise<UserRow | undefined> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(`SELECT ${cols(r, USER_COLUMNS)} FROM ${q(USER_TABLE)} WHERE ${q('key')} = ${p(1)}`, [key]);
  return row ? userFromRow(row) : undefined;
}

/** Stores a new user; resolves to false when one of that (folded) name exists. */
export async function insertUser(s: Storage, row: UserRow): Promise<boolean> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  return (await s.run(
    `INSERT INTO ${q(USER_TABLE)} (${USER_COLUMNS.map((c) => q(c)).join(', ')}) VALUES (${USER_COLUMNS.map((_, i) => p(i + 1)).join(', ')}) ON CONFLICT (${q('key')}) DO NOTHING`,
    [row.key, row.userName, row.hash, row.roles, row.created, row.changed],
  )) === 1;
}

/** Changes a user's hash (and when it was set) and/or roles, in one statement; resolves to 0 when there is no such user. */
export async function updateUser(s: Storage, key: string, parts: { readonly hash?: { readonly hash: string; readonly changed: number }; readonly roles?: string }): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const sets: string[] = [];
  const values: unknown[] = [];
  const set = (column: string, value: unknown) => {
    values.push(value);
    sets.push(`${q(column)} = ${p(values.length)}`);
  };
  if (parts.hash !== undefined) {
    set('hash', parts.hash.hash);
    set('changed', parts.hash.changed);
  }
  if (parts.roles !== undefined) set('roles', parts.roles);
  if (sets.length === 0) return (await readUser(s, key)) ? 1 : 0;
  values.push(key);
  return s.run(`UPDATE ${q(USER_TABLE)} SET ${sets.join(', ')} WHERE ${q('key')} = ${p(values.length)}`, values);
}

/** Removes a user and its tokens; resolves to 0 when there was no such user. */
export async function deleteUser(s: Storage, key: string): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(`DELETE FROM ${q(API_TOKEN_TABLE)} WHERE ${q('user')} = ${p(1)}`, [key]);
  return s.run(`DELETE FROM ${q(USER_TABLE)} WHERE ${q('key')} = ${p(1)}`, [key]);
}

/** The users by name, at most `limit`. */
export async function listUsers(r: Reader, limit: number): Promise<UserRow[]> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  return (await r.all(`SELECT ${cols(r, USER_COLUMNS)} FROM ${q(USER_TABLE)} ORDER BY ${q('key')} LIMIT ${p(1)}`, [limit])).map(userFromRow);
}

export async function countUsers(r: Reader): Promise<number> {
  const { quote: q } = r.dialect.sql;
  return Number((await r.get(`SELECT COUNT(*) AS n FROM ${q(USER_TABLE)}`))?.n ?? 0);
}

export async function insertToken(s: Storage, row: TokenRow): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(
    `INSERT INTO ${q(API_TOKEN_TABLE)} (${TOKEN_COLUMNS.map((c) => q(c)).join(', ')}) VALUES (${TOKEN_COLUMNS.map((_, i) => p(i + 1)).join(', ')})`,
    [row.id, row.hash, row.name, row.user, row.privileges, row.created, row.expires, row.lastUsed],
  );
}

/** The token of a secret's hash, with its user's row (undefined: no such token, or its user is gone). */
export async function readTokenByHash(r: Reader, hash: string): Promise<{ token: TokenRow; user: UserRow } | undefined> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(
    `SELECT ${cols(r, TOKEN_COLUMNS, 't.')}, u.${q('userName')} AS ${q('u_userName')}, u.${q('hash')} AS ${q('u_hash')}, u.${q('roles')} AS ${q('u_roles')}, u.${q('created')} AS ${q('u_created')}, u.${q('changed')} AS ${q('u_changed')}`
    + ` FROM ${q(API_TOKEN_TABLE)} t JOIN ${q(USER_TABLE)} u ON u.${q('key')} = t.${q('user')} WHERE t.${q('hash')} = ${p(1)}`,
    [hash],
  );
  if (!row) return undefined;
  const token = tokenFromRow(row);
  return { token, user: { key: token.user, userName: String(row.u_userName), hash: String(row.u_hash), roles: String(row.u_roles), created: Number(row.u_created), changed: Number(row.u_changed) } };
}

/** The tokens (no secrets: none are stored), of one user when given, newest first, at most `limit`. */
export async function listTokens(r: Reader, limit: number, user?: string): Promise<(TokenRow & { userName: string })[]> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  // (placeholders in the order they appear: SQLite's are positional)
  const where = user === undefined ? '' : ` WHERE t.${q('user')} = ${p(1)}`;
  const rows = await r.all(
    `SELECT ${cols(r, TOKEN_COLUMNS, 't.')}, u.${q('userName')} AS ${q('u_userName')} FROM ${q(API_TOKEN_TABLE)} t JOIN ${q(USER_TABLE)} u ON u.${q('key')} = t.${q('user')}${where}`
    + ` ORDER BY t.${q('created')} DESC, t.${q('id')} LIMIT ${p(user === undefined ? 1 : 2)}`,
    user === undefined ? [limit] : [user, limit],
  );
  return rows.map((row) => ({ ...tokenFromRow(row), userName: String(row.u_userName) }));
}

export async function countTokens(r: Reader, user: string): Promise<number> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  return Number((await r.get(`SELECT COUNT(*) AS n FROM ${q(API_TOKEN_TABLE)} WHERE ${q('user')} = ${p(1)}`, [user]))?.n ?? 0);
}

/** Revokes a token (its row goes); resolves to 0 when there was none. */
export async function deleteToken(s: Storage, id: string): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  return s.run(`DELETE FROM ${q(API_TOKEN_TABLE)} WHERE ${q('id')} = ${p(1)}`, [id]);
}

/** Notes a token's use. */
export async function touchToken(s: Storage, id: string, at: number): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(`UPDATE ${q(API_TOKEN_TABLE)} SET ${q('lastUsed')} = ${p(1)} WHERE ${q('id')} = ${p(2)}`, [at, id]);
}

/** Keeps a one-time passcode (its hash) for a session's id until `expires`. */
export async function insertOtp(s: Storage, hash: string, session: string, expires: number): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(`INSERT INTO ${q(OTP_TABLE)} (${q('hash')}, ${q('session')}, ${q('expires')}) VALUES (${p(1)}, ${p(2)}, ${p(3)})`, [hash, session, expires]);
}

/**
 * Uses a passcode: its row goes in the same statement that reads it (two requests with one
 * passcode, on any instances: one gets the session, the other nothing). Resolves to the session's
 * id, or undefined when the passcode is unknown, used or expired.
 */
export async function takeOtp(s: Storage, hash: string, now: number): Promise<string | undefined> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const row = await s.get(`DELETE FROM ${q(OTP_TABLE)} WHERE ${q('hash')} = ${p(1)} RETURNING ${q('session')} AS session, ${q('expires')} AS expires`, [hash]);
  return row && Number(row.expires) > now ? String(row.session) : undefined;
}

/** The passcodes one session holds (bounded per session). */
export async function countOtps(r: Reader, session: string, now: number): Promise<number> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  return Number((await r.get(`SELECT COUNT(*) AS n FROM ${q(OTP_TABLE)} WHERE ${q('session')} = ${p(1)} AND ${q('expires')} > ${p(2)}`, [session, now]))?.n ?? 0);
}

/** Removes expired passcodes and lockouts past. */
export async function sweepUsersTables(s: Storage, now: number): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(`DELETE FROM ${q(OTP_TABLE)} WHERE ${q('expires')} <= ${p(1)}`, [now]);
  await s.run(`DELETE FROM ${q(LOCKOUT_TABLE)} WHERE ${q('until')} <= ${p(1)} AND ${q('seen')} <= ${p(2)}`, [now, now - 24 * 3_600_000]);
}

/**
 * Counts an attempt for a user name before its password is checked, in one statement (attempts at
 * once each see the others): a right password takes it back (clearLockout), a wrong one leaves
 * it. The attempt that goes past `limit` in a row locks the name until `until`; a lock past starts
 * the count again. Resolves to the count after it and the lock (until > now: refused).
 */
export async function countAttempt(s: Storage, key: string, limit: number, until: number, now: number): Promise<{ failures: number; until: number }> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const t = q(LOCKOUT_TABLE);
  // (each value its own placeholder: SQLite's are positional; none where PostgreSQL cannot tell its type from a column)
  const values: unknown[] = [];
  const v = (value: unknown) => {
    values.push(value);
    return p(values.length);
  };
  const old = (c: string) => `${t}.${q(c)}`;
  // the count after this attempt: 1 after a lock that has ended, else one more (the SET's
  // expressions all read the row as it was)
  const ended = () => `${old('until')} > 0 AND ${old('until')} <= ${v(now)}`;
  const after = () => `CASE WHEN ${ended()} THEN 1 ELSE ${old('failures')} + 1 END`;
  const sql = `INSERT INTO ${t} (${q('key')}, ${q('failures')}, ${q('until')}, ${q('seen')}) VALUES (${v(key)}, 1, ${v(limit < 1 ? until : 0)}, ${v(now)})`
    + ` ON CONFLICT (${q('key')}) DO UPDATE SET`
    + ` ${q('until')} = CASE WHEN ${after()} > ${v(limit)} THEN ${v(until)} WHEN ${ended()} THEN 0 ELSE ${old('until')} END,`
    + ` ${q('failures')} = ${after()},`
    + ` ${q('seen')} = ${v(now)}`
    + ` RETURNING ${q('failures')} AS failures, ${q('until')} AS ${q('until')}`;
  const row = await s.get(sql, values);
  return { failures: Number(row?.failures ?? 0), until: Number(row?.until ?? 0) };
}

/** Until when a user name's logins are refused (0 or past: they are not). */
export async function lockedUntil(r: Reader, key: string): Promise<number> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(`SELECT ${q('until')} AS ${q('until')} FROM ${q(LOCKOUT_TABLE)} WHERE ${q('key')} = ${p(1)}`, [key]);
  return Number(row?.until ?? 0);
}

/** A right password: the name's failures in a row start again. */
export async function clearLockout(s: Storage, key: string): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(`DELETE FROM ${q(LOCKOUT_TABLE)} WHERE ${q('key')} = ${p(1)}`, [key]);
}
