// Built-in users (auth.json's "users"): a store the REST API never exposes as data, each user with
// a name, an Argon2id hash and roles of roles.json. A user is found by the fold of its name (util/
// fold.ts: "Alice", "ALICE" and "alíce" are one user), the same form the login throttle counts
// by; wrong passwords in a row lock that folded name for a while, whether a user has it or not
// (the answer says nothing of which names exist), and every check costs one Argon2 verification,
// for unknown names too.

import { MAX_USER_NAME, MAX_USERS_LISTED } from '../../config/limits.js';
import type { UsersSettings } from '../../config/auth.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { Policy } from '../../permissions/policy.js';
import type { Storage } from '../../storage/adapter.js';
import {
  clearLockout, countFailure, countUsers, deleteUser, insertUser, listUsers, readLockout, readUser, updateUser, type UserRow,
} from '../../storage/system-tables/users.js';
import { foldedUserName } from '../../util/fold.js';
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

/** The key a user name is stored and counted by. */
export function userKey(userName: string): string {
  return foldedUserName(userName);
}

export function userInfo(row: UserRow): UserInfo {
  return { userName: row.userName, roles: JSON.parse(row.roles) as string[], created: new Date(row.created).toISOString(), passwordChanged: new Date(row.changed).toISOString() };
}

export class BuiltInUsers {
  constructor(readonly storage: Storage, readonly settings: UsersSettings, readonly policyOf: () => Policy, readonly now: () => number = Date.now) {}

  async add(userName: unknown, password: unknown, roles: unknown): Promise<UserInfo> {
    const name = checkName(userName);
    const pw = checkPassword(password, this.settings.minPasswordLength);
    const roleList = this.#roles(roles);
    const now = this.now();
    const row: UserRow = { key: userKey(name), userName: name, hash: await hashPassword(pw), roles: JSON.stringify(roleList), created: now, changed: now };
    if (!(await insertUser(this.storage, row))) {
      const other = await readUser(this.storage, row.key);
      throw new DatasetError('USER_EXISTS', `there is a user '${other?.userName ?? name}' already${other && other.userName !== name ? ` (names are compared without case or accents: '${name}' is the same name)` : ''}`);
    }
    return userInfo(row);
  }

  async get(userName: string): Promise<UserInfo | undefined> {
    const row = typeof userName === 'string' && userName.length <= MAX_USER_NAME * 4 ? await readUser(this.storage, userKey(userName)) : undefined;
    return row && userInfo(row);
  }

  /** The user's row, or USER_NOT_FOUND. */
  async #row(userName: unknown): Promise<UserRow> {
    const row = typeof userName === 'string' && userName.length <= MAX_USER_NAME * 4 ? await readUser(this.storage, userKey(userName)) : undefined;
    if (!row) throw new DatasetError('USER_NOT_FOUND', `there is no user '${String(userName).slice(0, MAX_USER_NAME)}'`);
    return row;
  }

  async setPassword(userName: unknown, password: unknown): Promise<UserInfo> {
    const row = await this.#row(userName);
    const pw = checkPassword(password, this.settings.minPasswordLength);
    const now = this.now();
    const hash = await hashPassword(pw);
    if ((await updateUser(this.storage, row.key, { hash, changed: now })) === 0) throw new DatasetError('USER_NOT_FOUND', `there is no user '${row.userName}'`);
    // (a lock from guessing ends with a new password)
    await clearLockout(this.storage, row.key);
    return userInfo({ ...row, hash, changed: now });
  }

  async setRoles(userName: unknown, roles: unknown): Promise<UserInfo> {
    const row = await this.#row(userName);
    const text = JSON.stringify(this.#roles(roles));
    if ((await updateUser(this.storage, row.key, { roles: text, changed: row.changed })) === 0) throw new DatasetError('USER_NOT_FOUND', `there is no user '${row.userName}'`);
    return userInfo({ ...row, roles: text });
  }

  /** Removes the user and its API tokens. (Sessions it has open keep what they hold until they end or log out.) */
  async remove(userName: unknown): Promise<UserInfo> {
    const row = await this.#row(userName);
    if ((await deleteUser(this.storage, row.key)) === 0) throw new DatasetError('USER_NOT_FOUND', `there is no user '${row.userName}'`);
    return userInfo(row);
  }

  async list(limit = MAX_USERS_LISTED): Promise<UserInfo[]> {
    return (await listUsers(this.storage, limit)).map(userInfo);
  }

  count(): Promise<number> {
    return countUsers(this.storage);
  }

  /**
   * The user whose name and password these are, or undefined. A name locked by wrong passwords in
   * a row is refused (ACCOUNT_LOCKED, after the same check as any other: its time says nothing);
   * a wrong password counts toward the lock of its folded name, a right one starts the count again.
   */
  async verify(userName: unknown, password: unknown): Promise<UserInfo | undefined> {
    if (typeof userName !== 'string' || typeof password !== 'string' || userName.length > MAX_USER_NAME * 4) {
      await passwordMatches(undefined, '');
      return undefined;
    }
    const key = userKey(userName);
    const now = this.now();
    const [row, lock] = await Promise.all([readUser(this.storage, key), readLockout(this.storage, key)]);
    const ok = await passwordMatches(row?.hash, password);
    if (lock.until > now) throw locked(lock.until, now);
    if (ok && row) {
      if (lock.failures > 0) await clearLockout(this.storage, key);
      return userInfo(row);
    }
    const { lockout } = this.settings;
    const after = await countFailure(this.storage, key, lockout.failures, now + lockout.minutes * 60_000, now);
    if (after.until > now) throw locked(after.until, now);
    return undefined;
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

/** A user name: 1 to MAX_USER_NAME characters, no control characters, no spaces around it. */
export function checkName(userName: unknown): string {
  if (typeof userName !== 'string' || userName === '') throw new DatasetError('INVALID_USER_NAME', 'a user name is a text of 1 character or more');
  const name = userName.normalize('NFC');
  if ([...name].length > MAX_USER_NAME) throw new DatasetError('INVALID_USER_NAME', `a user name is at most ${MAX_USER_NAME} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(name)) throw new DatasetError('INVALID_USER_NAME', 'a user name holds no control characters');
  if (name.trim() !== name) throw new DatasetError('INVALID_USER_NAME', `the user name '${name}' begins or ends with spaces`);
  return name;
}
