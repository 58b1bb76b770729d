// The session store: which session a request is, and storing what it changed. A request names
// its session by a cookie holding a random token (datastore/sessions/tokens.ts); the database
// keeps each stored session under the token's SHA-256 (never the token), with its user name,
// privileges, storage object and expiry, so every server instance sees every session. A guest
// session is stored only once it keeps something (storage, a set, privileges): a client without
// a cookie jar costs no write, and one with a jar no read either (the cookie of a session never
// stored holds its token in lower case, which names no stored one: sent back, it is the same
// guest, stored under the upper-case token once it keeps something). Sessions are read through a
// short per-instance cache (SESSION_CACHE_MS) and their expiry is written again only when it has
// moved by SESSION_TOUCH_MS (datastore/sessions/expiry.ts). Expired sessions come back as new
// guests and are swept. Stored guests are capped per client address and in all
// (datastore/sessions/admission.ts): past a cap the least recently used guest gives way, its
// entity sets with it, and a newcomer is never refused.

import {
  DEFAULT_MAX_GUEST_SESSIONS, DEFAULT_MAX_GUESTS_PER_ADDRESS, DEFAULT_MAX_SESSIONS, MAX_SESSION_ADDRESS, OTPS_PER_SESSION, SESSION_CACHE_MS, SESSION_CACHE_SIZE,
} from '../../config/limits.js';
import type { Policy } from '../../permissions/policy.js';
import type { Storage } from '../../storage/adapter.js';
import { deleteSessionLocks } from '../../storage/system-tables/locks.js';
import { deleteSession, insertSession, listSessions, readSession, rotateSessionToken, touchSession, updateSession, type SessionRow, type StoredSessionRow } from '../../storage/system-tables/sessions.js';
import { countOtps, insertOtp, takeOtp } from '../../storage/system-tables/users.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { admitGuest, refusePastSessionCap, type GuestCaps } from './admission.js';
import { dueForTouch, isoSeconds, sweepExpired } from './expiry.js';
import { Session, sessionInternals } from './session.js';
import { BUILT_IN_LOGIN, storageText, type Changes, type State } from './state.js';
import { GUEST_TOKEN, PASSCODE, TOKEN, hashOf, keptGuestId, newToken } from './tokens.js';

/** A session as $info lists it. */
export interface SessionInfo {
  readonly sessionID: string;
  readonly userName: string;
  readonly privileges: readonly string[];
  /** the idle timeout, in seconds (4D's lifeTime) */
  readonly lifeTime: number;
  readonly expiration: string;
}

export interface SessionStoreOptions {
  /** the idle timeout of a new session, in minutes */
  readonly idleMinutes: number;
  /** the clock (tests move it) */
  readonly now?: () => number;
  readonly maxSessions?: number;
  /** stored guests at most, every address together: past it the least recently used give way */
  readonly maxGuestSessions?: number;
  /** stored guests from one client address at most (0: no cap of its own): past it that address's least recently used give way */
  readonly maxGuestsPerAddress?: number;
}

/** What a session holds elsewhere by its id, that goes when its session is evicted (its entity sets). */
export interface SessionHoldings {
  releaseOwned(owner: string): Promise<unknown>;
}

interface Cached {
  readonly row: SessionRow;
  readonly at: number;
  /** the row's privileges, parsed once */
  readonly privileges: readonly string[];
}

/**
 * A guest's privileges: one array for every guest, never changed in place (a login replaces it),
 * so that the policy's grants, cached by the array, are found at once for each new guest instead
 * of made again from a new empty list.
 */
export const NO_PRIVILEGES: readonly string[] = Object.freeze([]);

export class SessionStore {
  readonly now: () => number;
  /** rows read lately, by cookie token (this process's memory only: the database keeps hashes) */
  readonly #cache = new Map<string, Cached>();
  readonly #maxSessions: number;
  readonly #guestCaps: GuestCaps;
  readonly #holdings: SessionHoldings | undefined;
  idleMs: number;

  constructor(readonly storage: Storage, readonly policyOf: () => Policy, options: SessionStoreOptions, holdings?: SessionHoldings) {
    this.now = options.now ?? Date.now;
    this.idleMs = options.idleMinutes * 60_000;
    this.#maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.#guestCaps = { maxGuests: options.maxGuestSessions ?? DEFAULT_MAX_GUEST_SESSIONS, maxGuestsPerAddress: options.maxGuestsPerAddress ?? DEFAULT_MAX_GUESTS_PER_ADDRESS };
    this.#holdings = holdings;
  }

  get policy(): Policy {
    return this.policyOf();
  }

  /**
   * The session a cookie token names, or a new guest session (with a new token) when it names none
   * that is live. A session read lately (cached, not due for a touch) comes back at once, not as a
   * promise: the hot path of a logged-in read pays no await for it.
   */
  open(token: string | undefined): Session | Promise<Session> {
    if (token === undefined) return this.guest();
    const now = this.now();
    // (only tokens are cached: a hit needs no check of its form; a lower-case token, a guest's
    // that was never stored, is not one and is not looked up)
    const cached = this.#cached(token, now);
    if (cached && cached.row.expires > now && !dueForTouch(cached.row, now)) return this.#session(cached, token, now);
    if (TOKEN.test(token)) return this.#openStored(token, now);
    // the cookie of a guest never stored, sent back: the same guest (kept by its client), with
    // no lookup
    return GUEST_TOKEN.test(token) ? this.#keptGuest(token.toUpperCase()) : this.guest();
  }

  /** A guest never stored whose client sent its cookie back: its token is the cookie's, its id drawn from the token. */
  #keptGuest(token: string): Session {
    const state: State = { id: keptGuestId(token), userName: '', login: '', privileges: NO_PRIVILEGES, storage: {}, idleMs: this.idleMs, expires: this.now() + this.idleMs };
    return new Session(this, state, token, { newToken: false, stored: false, sentLower: true });
  }

  async #openStored(token: string, now: number): Promise<Session> {
    const cached = await this.#read(token, now);
    if (cached && cached.row.expires > now) {
      const row = cached.row;
      // used: its expiry moves, written again only once it has moved enough
      if (dueForTouch(row, now)) {
        const expires = now + row.idle;
        if ((await touchSession(this.storage, row.token, expires, now)) === 0) {
          // ended meanwhile (a logout, a login's new token, the sweep) through another instance: a new guest
          this.#cache.delete(token);
          return this.guest();
        }
        return this.#session(this.#remember(token, { ...row, expires }, now), token, now);
      }
      return this.#session(cached, token, now);
    }
    if (cached) {
      // expired: gone, and the request starts as a new guest
      this.#cache.delete(token);
      await deleteSession(this.storage, cached.row.token);
    }
    return this.guest();
  }

  /** The session of a stored row, for one request (its privileges shared with the cache: they are replaced, never changed in place). */
  #session(cached: Cached, token: string, now: number): Session {
    const row = cached.row;
    const state: State = { id: row.id, userName: row.userName, login: row.login, privileges: cached.privileges, storage: row.storage === '{}' ? {} : (JSON.parse(row.storage) as Record<string, unknown>), idleMs: row.idle, expires: now + row.idle };
    return new Session(this, state, token, { newToken: false, stored: true, storageText: row.storage });
  }

  /** A new guest session, not stored until it keeps something. */
  guest(): Session {
    const state: State = { id: newToken(), userName: '', login: '', privileges: NO_PRIVILEGES, storage: {}, idleMs: this.idleMs, expires: this.now() + this.idleMs };
    return new Session(this, state, newToken(), { newToken: true, stored: false });
  }

  /**
   * Stores what the request changed of its session: undefined, at once, when it changed nothing.
   * `address` is the client's: a guest stored now counts against that address's cap.
   */
  save(session: Session, address = ''): Promise<void> | undefined {
    const changes = sessionInternals.changed(session);
    return changes && this.#store(session, changes, address);
  }

  async #store(session: Session, changes: Changes, address: string): Promise<void> {
    const internals = sessionInternals;
    const { state } = changes;
    const now = this.now();
    // (a guest: no one logged in — a user whose roles give nothing is stored, and capped, as a user)
    const guest = state.privileges.length === 0 && state.userName === '';
    const replaced = internals.replaced(session);
    if (changes.insert && !guest) await this.makeRoom(false);
    const token = internals.token(session);
    // (made before anything is removed: storage JSON cannot hold is refused with nothing changed)
    const row: StoredSessionRow = {
      token: hashOf(token), id: state.id, userName: state.userName, login: state.login, privileges: JSON.stringify(state.privileges), storage: storageText(state.storage),
      idle: state.idleMs, expires: Math.max(state.expires, now + state.idleMs), guest, address: address.slice(0, MAX_SESSION_ADDRESS), used: now,
    };
    if (changes.insert) {
      // the new token's row first, the old one's then: a session keeping its id (a logout, a
      // change of privileges) is never without a live row meanwhile, so its entity locks (held by
      // the id) never look void to another instance
      if (guest) await this.#admitGuest(row, now);
      else await insertSession(this.storage, row);
      this.#remember(token, row, now);
      if (replaced !== undefined) {
        this.#cache.delete(replaced);
        await deleteSession(this.storage, hashOf(replaced));
      }
      // a login gave it a new id: the sets the old id made are reachable by no cookie now (its
      // row is gone, its token worthless), and would count against the caps until they expire
      // (their query path goes with the row, swept)
      if (changes.previousId !== undefined && changes.previousId !== state.id) await this.#holdings?.releaseOwned(changes.previousId);
    } else {
      // (the parts this request did not change may have changed meanwhile: the next request reads them)
      this.#cache.delete(token);
      // ended meanwhile (by another request of its own, or swept): it stays ended
      if ((await updateSession(this.storage, row, changes)) === 0) return;
    }
    // a logout (or a login as another user) ends what the session held as its user: its entity
    // locks. Removed once the row the user's requests are known by is gone or changed: a lock
    // taken meanwhile checks that row in its transaction (locks.ts), and either commits before
    // this delete (which removes it) or finds the row gone (and is refused)
    // (held by the id it had then: a login as another user gave it a new one)
    if (changes.loggedOut) await deleteSessionLocks(this.storage, changes.previousId ?? state.id);
    // the passcodes it made (createOTP), once its row is there to resume
    if (changes.otps.length > 0) {
      if ((await countOtps(this.storage, state.id, now)) + changes.otps.length > OTPS_PER_SESSION) {
        throw new DatasetError('LIMIT_EXCEEDED', `createOTP: a session holds at most ${OTPS_PER_SESSION} live passcodes`);
      }
      for (const otp of changes.otps) await insertOtp(this.storage, otp.hash, state.id, otp.expires);
    }
    internals.markStored(session);
  }

  /**
   * The session a one-time passcode names ($4DSID), which becomes the requester's: the passcode
   * is used up (once, on any instance), and the session gets a new token — the cookie this answer
   * sets — so that the link, seen by whoever saw it, is worth nothing after it. (The client that
   * made the passcode keeps the session by the old token no more: 4D's restore replaces the
   * session, here the one that restores it holds it.) Undefined: the passcode is unknown, used or
   * expired, or its session ended.
   */
  async restore(passcode: string): Promise<Session | undefined> {
    if (!PASSCODE.test(passcode)) return undefined;
    const now = this.now();
    const id = await takeOtp(this.storage, hashOf(passcode.toUpperCase()), now);
    if (id === undefined) return undefined;
    const token = newToken();
    const row = await rotateSessionToken(this.storage, id, hashOf(token), now);
    if (!row) return undefined;
    const session = this.#session(this.#remember(token, row, now), token, now);
    sessionInternals.markNewToken(session);
    return session;
  }

  /** A session acting for an API token (its user, the token's privileges): made each request, never stored, no cookie. */
  forToken(id: string, userName: string, privileges: readonly string[]): Session {
    const state: State = { id, userName, login: 'token', privileges, storage: {}, idleMs: this.idleMs, expires: this.now() + this.idleMs };
    return new Session(this, state, newToken(), { newToken: false, stored: false, bearer: true });
  }

  /**
   * Refuses a new stored logged-in session past the cap on live ones. A guest is never refused:
   * room is made for it when it is stored (#admitGuest).
   */
  async makeRoom(guest: boolean): Promise<void> {
    if (guest) return;
    await refusePastSessionCap(this.storage, this.#maxSessions, this.now());
  }

  /** Stores a guest's new row past the evictions that make room for it (admission.ts); the evicted guests' entity sets go with them. */
  async #admitGuest(row: StoredSessionRow, now: number): Promise<void> {
    const evicted = await admitGuest(this.storage, row, now, this.#guestCaps);
    for (const id of evicted) await this.#holdings?.releaseOwned(id);
  }

  /** The live sessions, for an administrator's $info. */
  async list(limit: number): Promise<SessionInfo[]> {
    return (await listSessions(this.storage, this.now(), limit)).map((r) => ({
      sessionID: r.id, userName: r.userName, privileges: JSON.parse(r.privileges) as string[], lifeTime: Math.round(r.idle / 1000), expiration: isoSeconds(r.expires),
    }));
  }

  /**
   * Forgets the rows read lately of the sessions logged in as a built-in user whose sessions were just
   * ended (its password, roles or removal): this instance sees it at once, the others within
   * SESSION_CACHE_MS.
   */
  forgetUser(userName: string): void {
    for (const [token, c] of this.#cache) if (c.row.userName === userName && c.row.login === BUILT_IN_LOGIN) this.#cache.delete(token);
  }

  /** Removes expired sessions (and what they held, expiry.ts); resolves to how many sessions went. */
  async sweep(): Promise<number> {
    const now = this.now();
    for (const [token, c] of this.#cache) if (c.row.expires <= now) this.#cache.delete(token);
    return sweepExpired(this.storage, now);
  }

  /** The stored row of a token: from the cache (kept by token: a hit costs no hash), else the database. */
  async #read(token: string, now: number): Promise<Cached | undefined> {
    const cached = this.#cached(token, now);
    if (cached) return cached;
    const row = await readSession(this.storage, hashOf(token));
    if (row) return this.#remember(token, row, now);
    this.#cache.delete(token);
    return undefined;
  }

  /** The row read for a token within the last SESSION_CACHE_MS (a clock moved back makes it stale too). */
  #cached(token: string, now: number): Cached | undefined {
    const cached = this.#cache.get(token);
    return cached && now - cached.at < SESSION_CACHE_MS && now >= cached.at ? cached : undefined;
  }

  #remember(token: string, row: SessionRow, now: number): Cached {
    const cached: Cached = { row, at: now, privileges: JSON.parse(row.privileges) as string[] };
    this.#cache.delete(token);
    this.#cache.set(token, cached);
    if (this.#cache.size > SESSION_CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value as string);
    return cached;
  }
}
