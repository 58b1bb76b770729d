// Quotas a REST request meets before any work: requests a minute, when asked (per session; per client
// address for a guest whose session is not stored, since it has a new one each time), and failed
// logins (per client address and per user name — by its fold, the form a lookup finds the user by —, counted in the database so that every instance
// sees them: guessing passwords through several instances gains nothing). Over a quota: 429 with
// Retry-After, the seconds until its window ends. Request counts are per instance (a count in the
// database on every request would cost a write each): with N instances a client may make up to N
// times the limit.

import { LOGIN_FAILURE_WINDOW_MS, LOGIN_FAILURES_PER_CLIENT, LOGIN_FAILURES_PER_USER } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { Storage } from '../../storage/adapter.js';
import { countLogins } from '../../storage/system-tables/sessions.js';
import { foldedUserName } from '../../util/fold.js';

const MINUTE = 60_000;
/** Keys counted at most (the oldest window's go first): a flood of new addresses cannot grow the map without bound. */
const MAX_KEYS = 100_000;

export class RequestQuota {
  #window = 0;
  readonly #counts = new Map<string, number>();

  constructor(readonly perMinute: number, readonly now: () => number = Date.now) {}

  /** Counts one request of `key`; throws 429 past the limit. */
  take(key: string): void {
    if (this.perMinute === 0) return;
    const now = this.now();
    const window = Math.floor(now / MINUTE);
    if (window !== this.#window) {
      this.#window = window;
      this.#counts.clear();
    }
    const n = (this.#counts.get(key) ?? 0) + 1;
    if (this.#counts.size >= MAX_KEYS && n === 1) return; // past the bound, new keys go uncounted rather than growing the map
    this.#counts.set(key, n);
    if (n > this.perMinute) {
      throw new DatasetError('TOO_MANY_REQUESTS', `more than ${this.perMinute} requests in a minute from this ${key.startsWith('session:') ? 'session' : 'address'}: wait for the next minute`, [], { retryAfterS: ((window + 1) * MINUTE - now) / 1000 });
    }
  }
}

/** The user name a login call tries: its first parameter, or that parameter's userName, name, user, login or email. */
export function loginName(args: readonly unknown[]): string | undefined {
  const first = args[0];
  if (typeof first === 'string') return first;
  if (typeof first !== 'object' || first === null) return undefined;
  const o = first as Record<string, unknown>;
  const name = [o.userName, o.username, o.name, o.user, o.login, o.email].find((v) => typeof v === 'string');
  return name === undefined ? undefined : String(name);
}

/**
 * The block an address is counted by: an IPv4 address itself, an IPv6 address's /64 (one
 * machine is given a whole /64 and may draw a new address from it for each attempt).
 */
export function addressBlock(address: string): string {
  if (!address.includes(':') || /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address)) return address;
  const [head, tail = ''] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

export class LoginThrottle {
  constructor(readonly storage: Storage, readonly now: () => number = Date.now) {}

  #keys(client: string, user: string | undefined): string[] {
    // A user name is counted by its fold (util/fold.ts: case, accents, compatibility forms — ｂｏｂ,
    // bób, BÖB, ᵇob are all bob), the form a lookup by 4D's comparison (==, ===) finds the user
    // by: names that reach one user share one count. A project whose lookup is exact counts a
    // little more strictly, never less. (The caller's text: its key is bounded.)
    const from = `client:${addressBlock(client)}`;
    return user === undefined ? [from] : [from, `user:${foldedUserName(user)}`];
  }

  /**
   * Counts an attempt before it is evaluated (one statement per key: attempts arriving at once
   * each see the others), and throws 429 when the address, then the user name, is past its
   * limit (an address past its limit is refused before its attempt counts against the user name).
   * The user name's limit is across addresses, against guessing from many: it can keep its
   * rightful user out too, for the rest of the window (a minute).
   */
  async attempt(client: string, user: string | undefined): Promise<void> {
    const now = this.now();
    const window = Math.floor(now / LOGIN_FAILURE_WINDOW_MS);
    const [clientKey, userKey] = this.#keys(client, user);
    const refuse = (what: string) => new DatasetError('TOO_MANY_REQUESTS', `too many failed logins ${what}: try again later`, [], {
      retryAfterS: ((window + 1) * LOGIN_FAILURE_WINDOW_MS - now) / 1000,
    });
    const [byClient] = await countLogins(this.storage, [clientKey], window, 1);
    if (byClient > LOGIN_FAILURES_PER_CLIENT) throw refuse('from this address');
    if (userKey === undefined) return;
    const [byUser] = await countLogins(this.storage, [userKey], window, 1);
    if (byUser > LOGIN_FAILURES_PER_USER) throw refuse('for this user name');
  }

  /** The attempt succeeded: it is not a failure (its count is taken back). */
  async succeeded(client: string, user: string | undefined): Promise<void> {
    await countLogins(this.storage, this.#keys(client, user), Math.floor(this.now() / LOGIN_FAILURE_WINDOW_MS), -1);
  }
}
