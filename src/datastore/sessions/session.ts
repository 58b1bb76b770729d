// A session for one request: 4D's Session object as user code reaches it through session() (its
// user name, privileges, storage, idle timeout), what a login or a logout does to it (a new
// token, a new id, the locks it held as its user going), and the core's doors into it
// (sessionInternals: its token and cookie, its grants with what a running function promotes, what
// the request changed, the undo of a store). The store (datastore/sessions/store.ts) makes one
// per request and stores what it changed when the request ends.

import { MAX_SESSION_IDLE_MINUTES, MIN_OTP_LIFESPAN_S, MIN_SESSION_IDLE_MINUTES, OTPS_PER_REQUEST } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { Grants, Policy } from '../../permissions/policy.js';
import { NOTHING_PROMOTED, grantsOf, holds, privilegeSettings, who, type PrivilegeSettings } from './privileges.js';
import { storageText, type Changes, type Passcode, type State } from './state.js';
import { hashOf, newPasscode, newToken } from './tokens.js';

/** What a session needs of the store it came from. */
export interface SessionHome {
  readonly policy: Policy;
  now(): number;
  /** the idle timeout of a new session, in milliseconds: a guest with another one keeps something */
  readonly idleMs: number;
}

// The core's doors into a session (never reachable from user code): functions made once, taking
// the session (not an object of closures per session: a cookieless guest is a new session at
// every request, and the hot path would pay for them).
export let sessionInternals: SessionInternals;

interface SessionInternals {
  /** the token the database knows it by, once stored */
  token(s: Session): string;
  /** its id, for the core's own bookkeeping: unlike `session.id` (what user code and $info read), reading it does not make a guest never stored keep its cookie */
  id(s: Session): string;
  /**
   * A guest never stored gets its cookie, so that its next request is the same session: its id
   * was shown (to user code, $info), or it asked what only a session its client keeps may have
   * (a lock, a recorded query path: wantCookie)
   */
  cookieWanted(s: Session): boolean;
  /** what it asked needs a session its client keeps: the answer gives a guest never stored its cookie (the next request is the same guest, and may then have it) */
  wantCookie(s: Session): void;
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
  /** it acts for an API token (Authorization: Bearer): never stored, no cookie */
  bearer(s: Session): boolean;
  /** its token is new to its client (a passcode resumed it): the answer sets the cookie */
  markNewToken(s: Session): void;
  /** how it logged in (State.login) */
  login(s: Session): string;
  /** says how it logged in, right after the setPrivileges of that login */
  setLogin(s: Session, login: string): void;
  /**
   * The undo of a store made inside a caller's transaction (datastore/sessions/locks.ts): if that
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
  #store: SessionHome;
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
  #userPromoted: readonly string[] = NOTHING_PROMOTED;
  #grants: Grants | undefined;
  #replaced: string | undefined;
  #keep = false;
  #privilegesSet = 0;
  #loggedOut = false;
  // the id it had before a login in this request gave it a new one
  #previousId: string | undefined;
  // a guest never stored whose client sent its cookie back (in lower case): the client keeps it
  #sentLower = false;
  #bearer = false;
  // its id was read through `id` (user code, $info), or wantCookie: see cookieWanted
  #cookieWanted = false;
  // the passcodes createOTP made in this request (kept when the session is stored)
  #otps: Passcode[] = [];
  // what promote() added, by the id it answered (demote takes it back)
  #promotions: Map<number, readonly string[]> | undefined;
  #promotionIds = 0;

  static {
    sessionInternals = {
      token: (s) => s.#token,
      id: (s) => s.#state.id,
      cookieWanted: (s) => s.#cookieWanted,
      wantCookie: (s) => {
        s.#cookieWanted = true;
      },
      cookie: (s) => (s.#stored ? s.#token : s.#token.toLowerCase()),
      newToken: (s) => s.#newToken,
      stored: (s) => s.#stored,
      storedStorage: (s) => s.#savedStorage ?? '{}',
      grants: (s) => (s.#grants ??= grantsOf(s.#store.policy, s.#state.privileges, s.#allPromoted())),
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
      bearer: (s) => s.#bearer,
      markNewToken: (s) => {
        s.#newToken = true;
      },
      login: (s) => s.#state.login,
      setLogin: (s, login) => {
        if (s.#state.login === login) return;
        s.#state.login = login;
        s.#whoChanged = true;
      },
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
        s.#otps = [];
      },
    };
  }

  /** Sessions come from the store (one per request); a stored one with its storage's text as stored. */
  constructor(store: SessionHome, state: State, token: string, flags: { newToken: boolean; stored: boolean; storageText?: string; sentLower?: boolean; bearer?: boolean }) {
    this.#store = store;
    this.#state = state;
    this.#token = token;
    this.#newToken = flags.newToken;
    this.#stored = flags.stored;
    this.#sentLower = flags.sentLower ?? false;
    this.#bearer = flags.bearer ?? false;
    this.#savedStorage = flags.stored ? (flags.storageText ?? storageText(state.storage)) : undefined;
    this.#savedIdle = state.idleMs;
  }

  /** The session's id (what $info shows; not the cookie, which is never shown). */
  get id(): string {
    this.#cookieWanted = true;
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
    // (the project's own code logs in: a built-in or sign-on login says so after this call)
    this.#state.login = '';
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
    return holds(this.#state.privileges, this.#allPromoted(), name);
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
    this.#state.login = '';
    this.#grants = undefined;
    if (!wasGuest) {
      this.#whoChanged = true;
      this.#loggedOut = true;
      this.#rotate();
    }
    return true;
  }

  /**
   * Adds a privilege (and what it includes) to the request running this code, as a function's
   * `promote` in roles.json does: counted by hasPrivilege() and every permission check, not listed
   * by getPrivileges(), gone when the request ends (4D 21's promote, per process; here per
   * request). Answers the id demote() takes it back by. A name roles.json does not declare adds
   * nothing (as setPrivileges ignores it).
   */
  promote(privilege: string): number {
    if (typeof privilege !== 'string') throw new TypeError('promote() takes a privilege name');
    const added = this.#store.policy.expand({ privileges: [privilege], roles: [] });
    const id = ++this.#promotionIds;
    (this.#promotions ??= new Map()).set(id, added);
    this.#setPromoted();
    return id;
  }

  /** Takes back what promote() added under that id (an id already taken back, or unknown, changes nothing). */
  demote(id: number): void {
    if (this.#promotions?.delete(id)) this.#setPromoted();
  }

  /**
   * A one-time passcode for this session (4D's createOTP, 20 R9): a request whose URL carries
   * `$4DSID=<passcode>` becomes this session (its user, privileges and storage) once — the link
   * of an e-mail, a payment site's redirect back. It works once, on any instance, until it expires:
   * `lifespan` seconds (at least MIN_OTP_LIFESPAN_S, as 4D), by default the session's idle
   * timeout. The session is kept (stored) for it. A session acting for an API token has none: ''.
   */
  createOTP(lifespan?: number): string {
    if (this.#bearer) return '';
    if (lifespan !== undefined && (typeof lifespan !== 'number' || !Number.isFinite(lifespan))) throw new TypeError('createOTP() takes a lifespan in seconds');
    if (this.#otps.length >= OTPS_PER_REQUEST) throw new DatasetError('LIMIT_EXCEEDED', `createOTP: at most ${OTPS_PER_REQUEST} passcodes a request`);
    const seconds = lifespan === undefined ? this.#state.idleMs / 1000 : Math.max(MIN_OTP_LIFESPAN_S, lifespan);
    const passcode = newPasscode();
    // (whole milliseconds: the database keeps them as integers)
    this.#otps.push({ hash: hashOf(passcode), expires: Math.round(this.#store.now() + Math.min(seconds * 1000, this.#state.idleMs)) });
    this.#keep = true;
    return passcode;
  }

  toJSON(): Record<string, unknown> {
    return { id: this.id, userName: this.userName, privileges: this.getPrivileges(), idleTimeout: this.idleTimeout, expirationDate: this.expirationDate };
  }

  #setPromoted(): void {
    this.#userPromoted = [...(this.#promotions?.values() ?? [])].flat();
    this.#grants = undefined;
  }

  /** What counts besides its privileges: what running functions promote, and what promote() added. */
  #allPromoted(): readonly string[] {
    return this.#userPromoted.length === 0 ? this.#promoted : [...this.#promoted, ...this.#userPromoted];
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
    // (a session acting for an API token is the token's, made anew each request: nothing of it is kept)
    if (this.#bearer) return undefined;
    const state = this.#state;
    const otps = this.#otps;
    if (!this.#stored || this.#savedStorage === undefined) {
      // a guest that keeps nothing (no user name, storage, set or idle timeout of its own) and
      // was never logged in is not stored; a logout keeps its session (4D's), as a guest
      const empty = this.isGuest() && state.userName === '' && Object.keys(state.storage).length === 0 && state.idleMs === this.#store.idleMs;
      return empty && this.#replaced === undefined && !this.#keep ? undefined : { state, insert: true, who: true, storage: true, idle: true, loggedOut: this.#loggedOut, previousId: this.#previousId, otps };
    }
    const changes = { state, insert: false, who: this.#whoChanged, storage: this.#storageSeen && storageText(state.storage) !== this.#savedStorage, idle: state.idleMs !== this.#savedIdle, loggedOut: this.#loggedOut, previousId: this.#previousId, otps };
    return changes.who || changes.storage || changes.idle || otps.length > 0 ? changes : undefined;
  }
}
