// API tokens of built-in users: `Authorization: Bearer dsr_…` acts as the token's user with the
// privileges chosen when it was made (a subset of the user's: it never holds more than its user
// holds now either). A token is shown once, when made; the database keeps its SHA-256 only, so
// that a copy of the database gives no token. Every request with one reads its row — a revoked
// or expired token, or one whose user is gone, answers 401 at once on every instance — and its
// last use is written at most once a minute.

import { randomBytes, randomUUID } from 'node:crypto';
import { MAX_USER_NAME, MAX_USERS_LISTED, TOKEN_TOUCH_MS, TOKENS_PER_USER } from '../../config/limits.js';
import type { TokensSettings } from '../../config/auth.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { Policy } from '../../permissions/policy.js';
import type { Storage } from '../../storage/adapter.js';
import { countTokens, deleteToken, insertToken, listTokens, readTokenByHash, readUser, touchToken, type TokenRow } from '../../storage/system-tables/users.js';
import { hashOf } from '../sessions/tokens.js';
import { checkShownName } from './built-in-users.js';
import { foldedUserName } from '../../util/fold.js';

/** What a token looks like: dsr_ and 43 characters of base64url (256 random bits); the prefix lets secret scanners find leaked ones. */
export const API_TOKEN = /^dsr_[A-Za-z0-9_-]{43}$/;
const MAX_TOKEN_NAME = 100;
/** Tokens listed by one answer at most: every user's, each holding at most TOKENS_PER_USER. */
const TOKENS_LISTED = MAX_USERS_LISTED;
const DAY_MS = 86_400_000;
/** The furthest expiry taken (a Date holds about 270,000 years; past it, none could be shown). */
const MAX_TOKEN_YEARS = 100;

/** A token as listings show it (never its secret). */
export interface TokenInfo {
  readonly id: string;
  readonly name: string;
  readonly userName: string;
  readonly privileges: readonly string[];
  readonly created: string;
  /** ISO 8601, or null: never */
  readonly expires: string | null;
  readonly lastUsed: string | null;
}

/** Who a token acts as, for one request. */
export interface TokenHolder {
  /** the token's id */
  readonly id: string;
  /** the id of the session it makes each request (its entity sets, its query path are kept by it) */
  readonly sessionId: string;
  readonly userName: string;
  readonly privileges: readonly string[];
}

export interface NewToken {
  /** the user it acts as */
  readonly userName: unknown;
  readonly name?: unknown;
  /** privilege names (each its user holds; default: all the user holds now) */
  readonly privileges?: unknown;
  /** when it stops working: an ISO date, a Date, or a number of days from now; undefined: never (or auth.json's tokens.maxDays) */
  readonly expires?: unknown;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function tokenInfo(row: TokenRow, userName: string): TokenInfo {
  return { id: row.id, name: row.name, userName, privileges: JSON.parse(row.privileges) as string[], created: new Date(row.created).toISOString(), expires: iso(row.expires), lastUsed: iso(row.lastUsed) };
}

export class ApiTokens {
  constructor(readonly storage: Storage, readonly settings: TokensSettings, readonly policyOf: () => Policy, readonly now: () => number = Date.now) {}

  /** Makes a token: its secret (shown this once) and what listings show of it. */
  async create(request: NewToken): Promise<{ token: string; info: TokenInfo }> {
    const refuse = (message: string) => new DatasetError('INVALID_TOKEN_REQUEST', message);
    if (typeof request.userName !== 'string') throw refuse('a token is made for a user: give its name');
    const user = request.userName.length <= MAX_USER_NAME * 4 ? await readUser(this.storage, foldedUserName(request.userName)) : undefined;
    if (!user) throw new DatasetError('USER_NOT_FOUND', `there is no user '${request.userName.slice(0, 100)}'`);
    const name = request.name === undefined ? `token of ${user.userName}` : request.name;
    if (typeof name !== 'string' || name.trim() === '' || [...name].length > MAX_TOKEN_NAME) throw refuse(`a token's name is a text of 1 to ${MAX_TOKEN_NAME} characters`);
    // (listings print it, on an administrator's terminal too)
    checkShownName(name, "a token's name", 'INVALID_TOKEN_REQUEST');
    const policy = this.policyOf();
    const held = policy.expand({ roles: JSON.parse(user.roles) as string[] });
    let privileges = held;
    if (request.privileges !== undefined) {
      const asked = typeof request.privileges === 'string' ? request.privileges.split(',').map((p) => p.trim()).filter(Boolean) : request.privileges;
      if (!Array.isArray(asked) || asked.some((p) => typeof p !== 'string')) throw refuse('privileges are a list of privilege names');
      const lower = new Map(held.map((p) => [p.toLowerCase(), p]));
      const missing = (asked as string[]).filter((p) => !lower.has(p.toLowerCase()));
      if (missing.length > 0) throw refuse(`${user.userName} does not hold ${missing.map((m) => `'${m.slice(0, 100)}'`).join(', ')}: a token carries some of its user's privileges (${held.join(', ') || 'none'})`);
      privileges = [...new Set((asked as string[]).map((p) => lower.get(p.toLowerCase()) as string))];
    }
    const now = this.now();
    const expires = this.#expiry(request.expires, now, refuse);
    if ((await countTokens(this.storage, user.key)) >= TOKENS_PER_USER) throw refuse(`${user.userName} holds ${TOKENS_PER_USER} tokens already: revoke one first`);
    const token = `dsr_${randomBytes(32).toString('base64url')}`;
    const row: TokenRow = { id: randomUUID(), hash: hashOf(token), name, user: user.key, privileges: JSON.stringify(privileges), created: now, expires, lastUsed: null };
    await insertToken(this.storage, row);
    return { token, info: tokenInfo(row, user.userName) };
  }

  #expiry(value: unknown, now: number, refuse: (m: string) => DatasetError): number | null {
    const { maxDays } = this.settings;
    if (value === undefined || value === null) return maxDays > 0 ? now + maxDays * DAY_MS : null;
    // (whole milliseconds: the database keeps them as integers)
    const at = Math.round(typeof value === 'number' ? now + value * DAY_MS : value instanceof Date ? value.getTime() : typeof value === 'string' ? Date.parse(value) : NaN);
    if (!Number.isFinite(at)) throw refuse(`expires is an ISO 8601 date or a number of days, not ${JSON.stringify(value)?.slice(0, 100)}`);
    if (at <= now) throw refuse(`expires (${at < -8.64e15 ? JSON.stringify(value)?.slice(0, 100) : new Date(at).toISOString()}) is not in the future`);
    if (at > now + MAX_TOKEN_YEARS * 365.25 * DAY_MS) throw refuse(`expires is more than ${MAX_TOKEN_YEARS} years away: give none for a token that never expires`);
    if (maxDays > 0 && at > now + maxDays * DAY_MS) throw refuse(`expires is past the ${maxDays} days auth.json allows a token (tokens.maxDays)`);
    return at;
  }

  async list(userName?: string): Promise<TokenInfo[]> {
    let key: string | undefined;
    if (userName !== undefined) {
      const user = userName.length <= MAX_USER_NAME * 4 ? await readUser(this.storage, (key = foldedUserName(userName))) : undefined;
      if (!user) throw new DatasetError('USER_NOT_FOUND', `there is no user '${userName.slice(0, 100)}'`);
    }
    const rows = await listTokens(this.storage, TOKENS_LISTED, key);
    return rows.map((r) => tokenInfo(r, r.userName));
  }

  /** Revokes a token by its id: at once, on every instance. */
  async revoke(id: unknown): Promise<void> {
    if (typeof id !== 'string' || (await deleteToken(this.storage, id)) === 0) throw new DatasetError('TOKEN_NOT_FOUND', `there is no token '${String(id).slice(0, 100)}'`);
  }

  /** Who a Bearer token acts as; TOKEN_INVALID when it is of the wrong shape, unknown, revoked or expired, or its user is gone. */
  async holder(token: string): Promise<TokenHolder> {
    if (!API_TOKEN.test(token)) throw new DatasetError('TOKEN_INVALID', 'the Bearer token is not an API token of this server (dsr_ and 43 characters)');
    const found = await readTokenByHash(this.storage, hashOf(token));
    const now = this.now();
    if (!found) throw new DatasetError('TOKEN_INVALID', 'the Bearer token is unknown or revoked');
    if (found.token.expires !== null && found.token.expires <= now) throw new DatasetError('TOKEN_INVALID', `the Bearer token expired at ${new Date(found.token.expires).toISOString()}`);
    // never more than its user holds now (roles taken away take them from its tokens too)
    const held = new Set(this.policyOf().expand({ roles: JSON.parse(found.user.roles) as string[] }).map((p) => p.toLowerCase()));
    const privileges = (JSON.parse(found.token.privileges) as string[]).filter((p) => held.has(p.toLowerCase()));
    if (found.token.lastUsed === null || now - found.token.lastUsed >= TOKEN_TOUCH_MS) await touchToken(this.storage, found.token.id, now);
    // (the session it makes is known by an id drawn from the token's: its sets and query path are found again by the next request)
    return { id: found.token.id, sessionId: hashOf(`api token session:${found.token.id}`).slice(0, 32).toUpperCase(), userName: found.user.userName, privileges };
  }
}
