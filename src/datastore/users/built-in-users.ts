// Built-in users (auth.json's "users"): a store the REST API never exposes as data, each user with
// a name, an Argon2id hash and roles of roles.json. A user is found by the fold of its name (util/
// fold.ts foldedUserName: "Alice", "ALICE" and "alíce" are one user), the same form the login
// throttle counts by. Each attempt counts toward a lock of that folded name before its password
// is checked (attempts at once each see the others; a right password takes its count back), and
// past the lockout's limit in a row the name is refused for a while, whether a user has it or
// not: the answer says nothing of which names exist, and every attempt costs one Argon2
// verification, for unknown and locked names too. A new password, new roles or a removal end
// the sessions logged in as the user: what they hold was given by what changed.

import { MAX_USER_NAME, MAX_USERS_LISTED } from '../../config/limits.js';
import type { UsersSettings } from '../../config/auth.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { Policy } from '../../permissions/policy.js';
import type { Storage } from '../../storage/adapter.js';
import { deleteUserSessions } from '../../storage/system-tables/sessions.js';
import { clearLockout, countAttempt, countUsers, deleteUser, insertUser, listUsers, lockedUntil, readUser, updateUser, type UserRow } from '../../storage/system-tables/users.js';
import { foldedUserName, storedFold } from '../../util/fold.js';
import { checkPassword, hashPassword, passwordMatches } from './passwords.js';

/** A user as listings show it (never its hash). */
export interface UserInfo {
  readonly userName: string;
  readonly roles: readonly string[];
  /** ISO 8601 */
  readonly created: string;
  /** when its password was last set, ISO 8601 */
  readonly passwordChanged: string;
}

export function userInfo(row: UserRow): UserInfo {
  return { userName: row.userName, roles: JSON.parse(row.roles) as string[], created: new Date(row.created).toISOString(), passwordChanged: new Date(row.changed).toISOString() };
}

/** The longest name looked up (in UTF-16 units): longer ones name no user, and cost no fold. */
const LOOKUP_LIMIT = MAX_USER_NAME * 4;
/** A fold longer than this would be cut, so that two names could share it: such names are refused. */
const FOLD_LIMIT = 400;

/** The key a name is found by, or undefined for a text no user can have. */
function keyOf(userName: unknown): string | undefined {
  return typeof userName === 'string' && userName.length <= LOOKUP_LIMIT ? foldedUserName(userName) : undefined;
}

export class BuiltInUsers {
  /** `sessionsEnded`: told the user whose sessions were just ended in the database (the session store forgets what it read of them) */
  constructor(readonly storage: Storage, readonly settings: UsersSettings, readonly policyOf: () => Policy, readonly now: () => number = Date.now, readonly sessionsEnded: (userName: string) => void = () => {}) {}

  async #endSessions(userName: string, except?: string): Promise<void> {
    await deleteUserSessions(this.storage, userName, except);
    this.sessionsEnded(userName);
  }

  async add(userName: unknown, password: unknown, roles: unknown): Promise<UserInfo> {
    const name = checkName(userName);
    const pw = checkPassword(password, this.settings.minPasswordLength);
    const roleList = this.#roles(roles);
    const now = this.now();
    const row: UserRow = { key: foldedUserName(name), userName: name, hash: await hashPassword(pw), roles: JSON.stringify(roleList), created: now, changed: now };
    if (!(await insertUser(this.storage, row))) {
      const other = await readUser(this.storage, row.key);
      throw new DatasetError('USER_EXISTS', `there is a user '${other?.userName ?? name}' already${other && other.userName !== name ? ` (names are compared without case or accents: '${name}' is the same name)` : ''}`);
    }
    return userInfo(row);
  }

  async get(userName: unknown): Promise<UserInfo | undefined> {
    const row = await this.#find(userName);
    return row && userInfo(row);
  }

  async #find(userName: unknown): Promise<UserRow | undefined> {
    const key = keyOf(userName);
    return key === undefined ? undefined : readUser(this.storage, key);
  }

  /** The user's row, or USER_NOT_FOUND. */
  async #row(userName: unknown): Promise<UserRow> {
    const row = await this.#find(userName);
    if (!row) throw new DatasetError('USER_NOT_FOUND', `there is no user '${String(userName).slice(0, MAX_USER_NAME)}'`);
    return row;
  }

  /**
   * Sets a user's password and/or roles, both checked before either is written. The sessions
   * logged in as the user end (but `keepSession`'s: the user changing its own password stays in).
   */
  async change(userName: unknown, change: { readonly password?: unknown; readonly roles?: unknown }, keepSession?: string): Promise<UserInfo> {
    const row = await this.#row(userName);
    const pw = change.password === undefined ? undefined : checkPassword(change.password, this.settings.minPasswordLength);
    const roles = change.roles === undefined ? undefined : JSON.stringify(this.#roles(change.roles));
    const now = this.now();
    const hash = pw === undefined ? undefined : { hash: await hashPassword(pw), changed: now };
    if ((await updateUser(this.storage, row.key, { hash, roles })) === 0) throw new DatasetError('USER_NOT_FOUND', `there is no user '${row.userName}'`);
    // (a lock from guessing ends with a new password)
    if (hash) await clearLockout(this.storage, row.key);
    await this.#endSessions(row.userName, keepSession);
    return userInfo({ ...row, ...(hash ? { hash: hash.hash, changed: hash.changed } : {}), ...(roles ? { roles } : {}) });
  }

  setPassword(userName: unknown, password: unknown, keepSession?: string): Promise<UserInfo> {
    return this.change(userName, { password }, keepSession);
  }

  setRoles(userName: unknown, roles: unknown): Promise<UserInfo> {
    return this.change(userName, { roles });
  }

  /** Removes the user, its API tokens, and the sessions logged in as it. */
  async remove(userName: unknown): Promise<UserInfo> {
    const row = await this.#row(userName);
    if ((await deleteUser(this.storage, row.key)) === 0) throw new DatasetError('USER_NOT_FOUND', `there is no user '${row.userName}'`);
    await this.#endSessions(row.userName);
    return userInfo(row);
  }

  async list(limit = MAX_USERS_LISTED): Promise<UserInfo[]> {
    return (await listUsers(this.storage, limit)).map(userInfo);
  }

  count(): Promise<number> {
    return countUsers(this.storage);
  }

  /**
   * The user whose name and password these are, or undefined. The attempt is counted first: one
   * past the lockout's limit in a row is refused (ACCOUNT_LOCKED) after the same check as any
   * other, so its time says nothing; a right password takes the count back.
   */
  async verify(userName: unknown, password: unknown): Promise<UserInfo | undefined> {
    const key = keyOf(userName);
    if (key === undefined || typeof password !== 'string') {
      await passwordMatches(undefined, '');
      return undefined;
    }
    const now = this.now();
    const { lockout } = this.settings;
    const [row, lock] = await Promise.all([readUser(this.storage, key), countAttempt(this.storage, key, lockout.failures, now + lockout.minutes * 60_000, now)]);
    const ok = await passwordMatches(row?.hash, password);
    if (lock.until > now) throw locked(lock.until, now);
    if (!ok || !row) return undefined;
    // attempts at once with this one may have locked the name while its password was checked: a
    // lock on is a lock, for the right password too
    const until = await lockedUntil(this.storage, key);
    if (until > now) throw locked(until, now);
    await clearLockout(this.storage, key);
    return userInfo(row);
  }

  /** Roles as given (a list or "a,b"), each one roles.json declares (named as it declares it); INVALID_ROLE otherwise. */
  #roles(roles: unknown): string[] {
    const list = typeof roles === 'string' ? roles.split(',').map((r) => r.trim()).filter(Boolean) : roles === undefined || roles === null ? [] : roles;
    if (!Array.isArray(list) || list.some((r) => typeof r !== 'string')) throw new DatasetError('INVALID_ROLE', 'roles are a list of role names of roles.json');
    const policy = this.policyOf();
    const out: string[] = [];
    for (const r of list as string[]) {
      const declared = policy.role(r);
      if (declared === undefined) {
        const known = policy.roleList();
        throw new DatasetError('INVALID_ROLE', `roles.json declares no role '${r.slice(0, 100)}'${known.length === 0 ? ' (it declares none: add them to roles.json\'s "roles")' : `: its roles are ${known.join(', ')}`}`);
      }
      if (!out.includes(declared)) out.push(declared);
    }
    return out;
  }
}

function locked(until: number, now: number): DatasetError {
  const minutes = Math.ceil((until - now) / 60_000);
  return new DatasetError('ACCOUNT_LOCKED', `too many wrong passwords in a row for this user name: its logins are refused for ${minutes} more minute${minutes === 1 ? '' : 's'}`, [], { retryAfterS: Math.ceil((until - now) / 1000) });
}

/**
 * Characters a name may not hold: control characters, invisible format characters (zero-width
 * spaces and joiners, direction marks, soft hyphens: a second "root" that looks the same) and
 * every space but the plain one.
 */
const NOT_IN_NAMES = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/u;

/** A text shown as a name (a user's, a token's): no control or invisible characters, no spaces around it. */
export function checkShownName(text: string, what: string, code: 'INVALID_USER_NAME' | 'INVALID_TOKEN_REQUEST'): void {
  if (NOT_IN_NAMES.test(text)) throw new DatasetError(code, `${what} holds control or invisible characters (only letters, marks, digits, punctuation, symbols and plain spaces)`);
  if (text.trim() !== text) throw new DatasetError(code, `${what} '${text}' begins or ends with spaces`);
}

/** A user name: 1 to MAX_USER_NAME characters, none of NOT_IN_NAMES, no spaces around it, a fold within the bound. */
export function checkName(userName: unknown): string {
  if (typeof userName !== 'string' || userName === '') throw new DatasetError('INVALID_USER_NAME', 'a user name is a text of 1 character or more');
  const name = userName.normalize('NFC');
  if ([...name].length > MAX_USER_NAME) throw new DatasetError('INVALID_USER_NAME', `a user name is at most ${MAX_USER_NAME} characters`);
  checkShownName(name, 'a user name', 'INVALID_USER_NAME');
  if ([...storedFold(name, FOLD_LIMIT + 1)].length > FOLD_LIMIT) throw new DatasetError('INVALID_USER_NAME', `the user name '${name.slice(0, 40)}…' is too long once its characters are decomposed`);
  return name;
}
