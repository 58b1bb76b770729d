// Web sessions: who a REST request is. A request names its session by a cookie holding a random
// token (128 bits); the database keeps each stored session under the token's SHA-256 (never the
// token), with its user name, privileges, storage object and expiry, so every server instance
// sees every session. A guest session is stored only once it keeps something (storage, a set,
// privileges): a client without a cookie jar costs no write, and one with a jar no read either
// (the cookie of a session never stored holds its token in lower case, which names no stored
// one: sent back, it is the same guest, stored under the upper-case token once it keeps
// something). Sessions are read through a short per-instance cache (SESSION_CACHE_MS) and their
// expiry is written again only when it has moved by SESSION_TOUCH_MS. Expired sessions come back
// as new guests and are swept. Stored guests are capped per client address and in all, in the
// database (every instance counts every other's): past a cap the least recently used guest
// gives way, its entity sets with it, and a newcomer is never refused.

import { createHash, randomBytes } from 'node:crypto';
import {
  DEFAULT_MAX_GUEST_SESSIONS, DEFAULT_MAX_GUESTS_PER_ADDRESS, DEFAULT_MAX_SESSIONS, LOGIN_FAILURE_WINDOW_MS, MAX_SESSION_ADDRESS, SESSION_SWEEP_MS, MAX_SESSION_IDLE_MINUTES, MIN_SESSION_IDLE_MINUTES, SESSION_CACHE_MS, SESSION_CACHE_SIZE, SESSION_TOUCH_MS,
} from '../config/limits.js';
import { DatasetError } from '../errors/dataset-error.js';
import type { Grants, Policy } from '../permissions/policy.js';
import type { Storage } from '../storage/adapter.js';
import {
  countGuestsFrom, countSessions, deleteExpiredSessions, deleteSession, deleteSessionLocks, deleteVoidLocks, deleteVoidQueryPaths, evictGuests, insertSession, listSessions, lockNamed, readSession, sessionExists, touchSession, updateSession,
  type SessionRow, type StoredSessionRow,
} from '../storage/system-tables.js';

/** What setPrivileges() takes: "a,b", ["a", "b"], or { privileges, roles, userName }. */
export type PrivilegeSettings = string | readonly string[] | { readonly privileges?: string | readonly string[]; readonly roles?: string | readonly string[]; readonly userName?: string };

/** A session as $info lists it. */
export interface SessionInfo {
  readonly sessionID: string;
  readonly userName: string;
  readonly privileges: readonly string[];
  /** the idle timeout, in seconds (4D's lifeTime) */
  readonly lifeTime: number;
  readonly expiration: string;
}

/**
 * What a request changed of its session, part by part: a stored session is written back only in
 * the parts its request changed, so that two requests of one session at once (a logout and a
 * storage write, say) do not undo each other's work.
 */
export interface Changes {
  readonly state: State;
  /** a new row (a guest that now keeps something, or a new token) rather than an update */
  readonly insert: boolean;
  /** the user name or the privileges */
  readonly who: boolean;
  readonly storage: boolean;
  readonly idle: boolean;
  /** it logged out: the entity locks it holds go (datastore/locks.ts) */
  readonly loggedOut: boolean;
  /** the id it had before a login gave it a new one (what its locks were held by, when it logged out as another user) */
  readonly previousId: string | undefined;
}

/** No privilege promoted: what every session starts with. */
const NOTHING_PROMOTED: readonly string[] = Object.freeze([]);

/** The state of a session, as stored. */
interface State {
  id: string;
  userName: string;
  privileges: readonly string[];
  storage: Record<string, unknown>;
  idleMs: number;
  expires: number;
}

// The core's doors into a session (never reachable from user code): functions made once, taking
// the session (not an object of closures per session: a cookieless guest is a new session at
// every request, and the hot path would pay for them).
export let sessionInternals: SessionInternals;

interface SessionInternals {
  /** the token the database knows it by, once stored */
  token(s: Session): string;
  /**
   * What its cookie holds: the token; for a session not stored (a guest that keeps nothing), the
   * token in lower case, which no stored session has, so that the cookie sent back is known for
   * a new guest without a lookup.
   */
  cookie(s: Session): string;
  /** the token was made (or replaced) by this request: the answer sets the cookie */
  newToken(s: Session): boolean;
  /** the session is stored (in the database) */
  stored(s: Session): boolean;
  /** its storage as stored when the request began ('{}' for one not stored): what a request's reads may depend on, without marking the storage seen */
  storedStorage(s: Session): string;
  /** what it may do now: its privileges and those a running function promotes */
  grants(s: Session): Grants;
  /** adds privileges while a function with `promote` runs; returns the undo */
  promote(s: Session, names: readonly string[]): () => void;
  /** what the request changed, to store: undefined when nothing needs storing */
  changed(s: Session): Changes | undefined;
  /** the token it had before a login gave it a new one, until stored */
  replaced(s: Session): string | undefined;
  /** the store saved it */
  markStored(s: Session): void;
  /** it holds something of its own elsewhere (an entity set): stored even as a guest */
  keep(s: Session): void;
  /** how many times setPrivileges() was called on it (a login call that calls it succeeded) */
  privilegesSet(s: Session): number;
  /** what the database keys its current token by */
  tokenHash(s: Session): string;
  /**
   * The undo of a store made inside a caller's transaction (datastore/locks.ts): if that
   * transaction rolls back, the session is again as before the store (not stored, its old token
   * replaced still), so that it is stored again, not trusted to be.
   */
  storeUndo(s: Session): () => void;
}

/**
 * The session of a request, as user code reaches it through session(): 4D's Session object. Its
 * changes (privileges, user name, storage) are stored when the request ends.
 */
export class Session {
  #store: SessionStore;
  #state: State;
  #token: string;
  #newToken: boolean;
  #stored: boolean;
  // what tells which parts of a stored session the request changed: who it is (set when
  // setPrivileges or clearPrivileges change it), its storage (compared with the stored text, once
  // code has looked at it), its idle timeout
  #whoChanged = false;
  #storageSeen = false;
  #savedStorage: string | undefined;
  #savedIdle: number;
  // (replaced, never changed in place: a session starts with the one empty list)
  #promoted: readonly string[] = NOTHING_PROMOTED;
  #grants: Grants | undefined;
  #replaced: string | undefined;
  #keep = false;
  #privilegesSet = 0;
  #loggedOut = false;
  // the id it had before a login in this request gave it a new one
  #previousId: string | undefined;
  // a guest never stored whose client sent its cookie back (in lower case): the client keeps it
  #sentLower = false;

  static {
    sessionInternals = {
      token: (s) => s.#token,
      cookie: (s) => (s.#stored ? s.#token : s.#token.toLowerCase()),
      newToken: (s) => s.#newToken,
      stored: (s) => s.#stored,
      storedStorage: (s) => s.#savedStorage ?? '{}',
      grants: (s) => (s.#grants ??= s.#store.policy.grantsFor(s.#promoted.length === 0 ? s.#state.privileges : [...s.#state.privileges, ...s.#promoted])),
      promote: (s, names) => {
        const before = s.#promoted;
        s.#promoted = [...before, ...names];
        s.#grants = undefined;
        return () => {
          s.#promoted = before;
          s.#grants = undefined;
        };
      },
      changed: (s) => s.#changed(),
      keep: (s) => {
        s.#keep = true;
      },
      replaced: (s) => s.#replaced,
      privilegesSet: (s) => s.#privilegesSet,
      tokenHash: (s) => hashOf(s.#token),
      storeUndo: (s) => {
        const was = { stored: s.#stored, replaced: s.#replaced, whoChanged: s.#whoChanged, storageSeen: s.#storageSeen, savedStorage: s.#savedStorage, savedIdle: s.#savedIdle, loggedOut: s.#loggedOut, newToken: s.#newToken, sentLower: s.#sentLower, previousId: s.#previousId };
        return () => {
          s.#stored = was.stored;
          s.#replaced = was.replaced;
          s.#whoChanged = was.whoChanged;
          s.#storageSeen = was.storageSeen;
          s.#savedStorage = was.savedStorage;
          s.#savedIdle = was.savedIdle;
          s.#loggedOut = was.loggedOut;
          s.#newToken = was.newToken;
          s.#sentLower = was.sentLower;
          s.#previousId = was.previousId;
        };
      },
      markStored: (s) => {
        // a guest kept by its lower-case cookie is stored under the token in upper case: the
        // answer gives the client that form
        if (s.#sentLower) s.#newToken = true;
        s.#sentLower = false;
        s.#stored = true;
        s.#replaced = undefined;
        s.#whoChanged = false;
        s.#storageSeen = false;
        s.#savedStorage = storageText(s.#state.storage);
        s.#savedIdle = s.#state.idleMs;
        s.#loggedOut = false;
        s.#previousId = undefined;
      },
    };
  }

  /** Sessions come from the store (one per request); a stored one with its storage's text as stored. */
  constructor(store: SessionStore, state: State, token: string, flags: { newToken: boolean; stored: boolean; storageText?: string; sentLower?: boolean }) {
    this.#store = store;
    this.#state = state;
    this.#token = token;
    this.#newToken = flags.newToken;
    this.#stored = flags.stored;
    this.#sentLower = flags.sentLower ?? false;
    this.#savedStorage = flags.stored ? (flags.storageText ?? storageText(state.storage)) : undefined;
    this.#savedIdle = state.idleMs;
  }

  /** The session's id (what $info shows; not the cookie, which is never shown). */
  get id(): string {
    return this.#state.id;
  }

  get userName(): string {
    return this.#state.userName;
  }

  /** The idle timeout, in minutes: the session expires when no request uses it for that long. */
  get idleTimeout(): number {
    return this.#state.idleMs / 60_000;
  }

  /** As 4D: at least 60 minutes (a lower value is raised to 60); at most MAX_SESSION_IDLE_MINUTES (a week: a higher one is lowered to it). */
  set idleTimeout(minutes: number) {
    if (typeof minutes !== 'number' || !Number.isFinite(minutes)) throw new TypeError('idleTimeout is a number of minutes');
    // (whole milliseconds: the database keeps them as integers)
    this.#state.idleMs = Math.round(Math.min(MAX_SESSION_IDLE_MINUTES, Math.max(MIN_SESSION_IDLE_MINUTES, minutes)) * 60_000);
    this.#state.expires = this.#store.now() + this.#state.idleMs;
  }

  /** When the session expires unless used again (ISO 8601). */
  get expirationDate(): string {
    return new Date(this.#state.expires).toISOString();
  }

  /** An object kept with the session (JSON values only), shared by its requests on every instance. */
  get storage(): Record<string, unknown> {
    this.#storageSeen = true;
    return this.#state.storage;
  }

  /**
   * Gives the session these privileges (and those of these roles), replacing the ones it had;
   * names roles.json does not know are ignored. A session whose user or privileges change to a
   * privileged state gets a new token (its cookie changes): a token planted before the login,
   * or known from another user's session, is worth nothing after it. A login — a guest, or
   * another user, becoming this one — gives it a new id as well, unrelated to any token: what
   * the user's session then holds (its entity sets, its query path, its locks, all kept by the
   * id) is out of reach of the cookie it had before, even of a guest's cookie never stored,
   * whose id is derived from its token. What it held before the login goes: a guest's sets are
   * released (no cookie reaches them any more), its locks end with its old row. The
   * same user whose privileges change keeps its id. A session that was a user and becomes
   * another one (or a guest) ends what it held as the first: its entity locks go, as at a logout.
   */
  setPrivileges(settings: PrivilegeSettings): boolean {
    this.#privilegesSet++;
    const wanted = privilegeSettings(settings);
    const before = who(this.#state);
    const wasUser = !this.isGuest() || this.#state.userName !== '';
    const userBefore = this.#state.userName;
    this.#state.privileges = this.#store.policy.expand(wanted);
    if (wanted.userName !== undefined) this.#state.userName = wanted.userName;
    this.#grants = undefined;
    if (who(this.#state) !== before) {
      this.#whoChanged = true;
      if (wasUser && (this.#state.userName !== userBefore || (this.isGuest() && this.#state.userName === ''))) this.#loggedOut = true;
      // (a user whose roles give no privilege is a user all the same: its login rotates too)
      if (!this.isGuest() || this.#state.userName !== '') {
        this.#rotate();
        if (!wasUser || this.#state.userName !== userBefore) this.#renewId();
      }
    }
    return true;
  }

  /** The privileges held (roles and includes expanded; promoted ones not listed, as 4D). */
  getPrivileges(): string[] {
    return [...this.#state.privileges];
  }

  /** Holds the privilege (promoted ones count). Case-insensitive. */
  hasPrivilege(name: string): boolean {
    const wanted = String(name).toLowerCase();
    return wanted === 'guest' || [...this.#state.privileges, ...this.#promoted].some((p) => p.toLowerCase() === wanted);
  }

  /** Holds no privilege. */
  isGuest(): boolean {
    return this.#state.privileges.length === 0;
  }

  /** Removes every privilege (a logout); the user name goes too, and the token (the old cookie is worth nothing). */
  clearPrivileges(): boolean {
    const wasGuest = this.isGuest() && this.#state.userName === '';
    this.#state.privileges = [];
    this.#state.userName = '';
    this.#grants = undefined;
    if (!wasGuest) {
      this.#whoChanged = true;
      this.#loggedOut = true;
      this.#rotate();
    }
    return true;
  }

  toJSON(): Record<string, unknown> {
    return { id: this.id, userName: this.userName, privileges: this.getPrivileges(), idleTimeout: this.idleTimeout, expirationDate: this.expirationDate };
  }

  /** A new id (a login): the first one the request began with is kept until stored, for what was held by it. */
  #renewId(): void {
    this.#previousId ??= this.#state.id;
    this.#state.id = newToken();
  }

  /** A new token for the same session (the old one stops working once it is stored). */
  #rotate(): void {
    if (this.#stored) this.#replaced ??= this.#token;
    this.#token = newToken();
    this.#newToken = true;
    this.#stored = false;
  }

  #changed(): Changes | undefined {
    const state = this.#state;
    if (!this.#stored || this.#savedStorage === undefined) {
      // a guest that keeps nothing (no user name, storage, set or idle timeout of its own) and
      // was never logged in is not stored; a logout keeps its session (4D's), as a guest
      const empty = this.isGuest() && state.userName === '' && Object.keys(state.storage).length === 0 && state.idleMs === this.#store.idleMs;
      return empty && this.#replaced === undefined && !this.#keep ? undefined : { state, insert: true, who: true, storage: true, idle: true, loggedOut: this.#loggedOut, previousId: this.#previousId };
    }
    const changes = { state, insert: false, who: this.#whoChanged, storage: this.#storageSeen && storageText(state.storage) !== this.#savedStorage, idle: state.idleMs !== this.#savedIdle, loggedOut: this.#loggedOut, previousId: this.#previousId };
    return changes.who || changes.storage || changes.idle ? changes : undefined;
  }
}

/** The storage object as JSON: refused, naming the cause, when server code put in it what JSON cannot hold (a BigInt, a cycle). */
function storageText(storage: Record<string, unknown>): string {
  try {
    return JSON.stringify(storage);
  } catch (e) {
    throw new DatasetError('FUNCTION_FAILED', `session().storage holds a value JSON cannot hold (${(e as Error).message}): the session's changes were not stored`);
  }
}

/** Who the session is: its user name and privileges, as one string. */
function who(state: State): string {
  return JSON.stringify([state.userName, state.privileges]);
}

/** setPrivileges()'s argument in its one form. */
function privilegeSettings(settings: PrivilegeSettings): { privileges: string[]; roles: string[]; userName?: string } {
  const list = (v: unknown): string[] => (typeof v === 'string' ? v.split(',').map((x) => x.trim()).filter(Boolean) : Array.isArray(v) ? v.map(String) : []);
  if (typeof settings === 'string' || Array.isArray(settings)) return { privileges: list(settings), roles: [] };
  const o = settings as { privileges?: unknown; roles?: unknown; userName?: unknown };
  return { privileges: list(o.privileges), roles: list(o.roles), userName: typeof o.userName === 'string' ? o.userName : undefined };
}

/** Random bytes drawn 4 KB at a time: a token each request (every cookieless guest gets one) costs a slice, not a system call. */
let pool = Buffer.alloc(0);
let used = 0;

/** A new cookie token: 128 random bits, as 32 upper-case hex digits (4D's UUID look; a session never stored shows them in lower case). */
function newToken(): string {
  if (used + 16 > pool.length) {
    pool = randomBytes(4096);
    used = 0;
  }
  used += 16;
  return pool.toString('hex', used - 16, used).toUpperCase();
}

/** What the database keys a token by. */
function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

const TOKEN = /^[0-9A-F]{32}$/;
/** the cookie of a guest never stored */
const GUEST_TOKEN = /^[0-9a-f]{32}$/;

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

export class SessionStore {
  readonly now: () => number;
  /** rows read lately, by cookie token (this process's memory only: the database keeps hashes) */
  readonly #cache = new Map<string, Cached>();
  readonly #maxSessions: number;
  readonly #maxGuests: number;
  readonly #maxGuestsPerAddress: number;
  readonly #holdings: SessionHoldings | undefined;
  idleMs: number;

  constructor(readonly storage: Storage, readonly policyOf: () => Policy, options: SessionStoreOptions, holdings?: SessionHoldings) {
    this.now = options.now ?? Date.now;
    this.idleMs = options.idleMinutes * 60_000;
    this.#maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.#maxGuests = options.maxGuestSessions ?? DEFAULT_MAX_GUEST_SESSIONS;
    this.#maxGuestsPerAddress = options.maxGuestsPerAddress ?? DEFAULT_MAX_GUESTS_PER_ADDRESS;
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

  /**
   * A guest never stored whose client sent its cookie back: its token is the cookie's, its id
   * drawn from the token (one-way, and not the hash the database keys the token by), so that
   * every request of that client is the same session, stored or not.
   */
  #keptGuest(token: string): Session {
    const id = createHash('sha256').update(`session id:${token}`).digest('hex').slice(0, 32).toUpperCase();
    const state: State = { id, userName: '', privileges: [], storage: {}, idleMs: this.idleMs, expires: this.now() + this.idleMs };
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
    const state: State = { id: row.id, userName: row.userName, privileges: cached.privileges, storage: row.storage === '{}' ? {} : (JSON.parse(row.storage) as Record<string, unknown>), idleMs: row.idle, expires: now + row.idle };
    return new Session(this, state, token, { newToken: false, stored: true, storageText: row.storage });
  }

  /** A new guest session, not stored until it keeps something. */
  guest(): Session {
    const state: State = { id: newToken(), userName: '', privileges: [], storage: {}, idleMs: this.idleMs, expires: this.now() + this.idleMs };
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
      token: hashOf(token), id: state.id, userName: state.userName, privileges: JSON.stringify(state.privileges), storage: storageText(state.storage),
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
    internals.markStored(session);
  }

  /**
   * Refuses a new stored logged-in session past the cap on live ones. A guest is never refused:
   * room is made for it when it is stored (#admitGuest).
   */
  async makeRoom(guest: boolean): Promise<void> {
    if (guest) return;
    if ((await countSessions(this.storage, false, this.now())) >= this.#maxSessions) {
      throw new DatasetError('TOO_MANY_REQUESTS', `the server holds its most sessions (${this.#maxSessions}): try again later`, [], { retryAfterS: 60 });
    }
  }

  /**
   * Stores a guest's new row, making room for it first: past its address's cap, that address's
   * least recently used guests go; past the cap of all guests, the least recently used anywhere.
   * Their entity sets go with them (their locks are void with their rows, and swept). One guest
   * is admitted at a time, every instance together (a named lock on PostgreSQL, SQLite's one
   * writer): the counts see every other admission, and the caps hold across instances. "Least
   * recently used" is by the last use written with the expiry (within SESSION_TOUCH_MS, or a
   * tenth of the idle timeout).
   */
  async #admitGuest(row: StoredSessionRow, now: number): Promise<void> {
    const storage = this.storage;
    const evicted = await storage.transaction(async () => {
      await lockNamed(storage, 'guest sessions');
      // (stored meanwhile by another request of the same guest: the same row, no room to make)
      if (await sessionExists(storage, row.token)) return [];
      const gone: string[] = [];
      if (this.#maxGuestsPerAddress > 0) {
        const mine = await countGuestsFrom(storage, row.address, now);
        if (mine >= this.#maxGuestsPerAddress) gone.push(...(await evictGuests(storage, mine - this.#maxGuestsPerAddress + 1, now, row.address)));
      }
      const all = await countSessions(storage, true, now);
      if (all >= this.#maxGuests) gone.push(...(await evictGuests(storage, all - this.#maxGuests + 1, now)));
      await insertSession(storage, row);
      return gone;
    }, { retries: storage.dialect.concurrency.conflictRetries });
    for (const id of evicted) await this.#holdings?.releaseOwned(id);
  }

  /** The live sessions, for an administrator's $info. */
  async list(limit: number): Promise<SessionInfo[]> {
    return (await listSessions(this.storage, this.now(), limit)).map((r) => ({
      sessionID: r.id, userName: r.userName, privileges: JSON.parse(r.privileges) as string[], lifeTime: Math.round(r.idle / 1000), expiration: isoSeconds(r.expires),
    }));
  }

  /** Removes expired sessions, the entity locks and query paths of sessions gone (void already) and old login-failure counts; resolves to how many sessions went. */
  async sweep(): Promise<number> {
    const now = this.now();
    for (const [token, c] of this.#cache) if (c.row.expires <= now) this.#cache.delete(token);
    const gone = await deleteExpiredSessions(this.storage, now, now - 2 * LOGIN_FAILURE_WINDOW_MS);
    await deleteVoidLocks(this.storage, now);
    await deleteVoidQueryPaths(this.storage, now - SESSION_SWEEP_MS);
    return gone;
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

/** A session's expiry is written again once it has moved enough (a tenth of its idle timeout, SESSION_TOUCH_MS at most). */
function dueForTouch(row: SessionRow, now: number): boolean {
  return now + row.idle - row.expires >= Math.min(SESSION_TOUCH_MS, row.idle / 10);
}

/** $info's date format: no milliseconds (a date past JavaScript's last one reads as that one). */
export function isoSeconds(ms: number): string {
  return new Date(Math.min(ms, 8.64e15)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
