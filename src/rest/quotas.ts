// Quotas a REST request meets before any work: requests a minute, when asked (per session; per client
// address for a guest whose session is not stored, since it has a new one each time), and failed
// logins (per client address and per user name, counted in the database so that every instance
// sees them: guessing passwords through several instances gains nothing). Over a quota: 429 with
// Retry-After, the seconds until its window ends. Request counts are per instance (a count in the
// database on every request would cost a write each): with N instances a client may make up to N
// times the limit.

import { LOGIN_FAILURE_WINDOW_MS, LOGIN_FAILURES_PER_CLIENT, LOGIN_FAILURES_PER_USER } from '../config/limits.js';
import { DatasetError } from '../errors/dataset-error.js';
import type { Storage } from '../storage/adapter.js';
import { countLogins } from '../storage/system-tables.js';

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
      throw new DatasetError('TOO_MANY_REQUESTS', `more than ${this.perMinute} requests in a minute from this session: wait for the next minute`, [], { retryAfterS: ((window + 1) * MINUTE - now) / 1000 });
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

export class LoginThrottle {
  constructor(readonly storage: Storage, readonly now: () => number = Date.now) {}

  #keys(client: string, user: string | undefined): string[] {
    return user === undefined ? [`client:${client}`] : [`client:${client}`, `user:${user.toLowerCase()}`];
  }

  #limits(user: string | undefined): number[] {
    return user === undefined ? [LOGIN_FAILURES_PER_CLIENT] : [LOGIN_FAILURES_PER_CLIENT, LOGIN_FAILURES_PER_USER];
  }

  /**
   * Counts an attempt before it is evaluated (one statement per key: attempts arriving at once
   * each see the others), and throws 429 when the address or the user name is past its limit.
   */
  async attempt(client: string, user: string | undefined): Promise<void> {
    const now = this.now();
    const window = Math.floor(now / LOGIN_FAILURE_WINDOW_MS);
    const counts = await countLogins(this.storage, this.#keys(client, user), window, 1);
    const limits = this.#limits(user);
    const over = counts.findIndex((n, i) => n > limits[i]);
    if (over >= 0) {
      throw new DatasetError('TOO_MANY_REQUESTS', `too many failed logins ${over === 0 ? 'from this address' : 'for this user name'}: try again later`, [], {
        retryAfterS: ((window + 1) * LOGIN_FAILURE_WINDOW_MS - now) / 1000,
      });
    }
  }

  /** The attempt succeeded: it is not a failure (its count is taken back). */
  async succeeded(client: string, user: string | undefined): Promise<void> {
    await countLogins(this.storage, this.#keys(client, user), Math.floor(this.now() / LOGIN_FAILURE_WINDOW_MS), -1);
  }
}
