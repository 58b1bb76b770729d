// Pessimistic entity locks (4D's $lock and entity.lock(), reference §3.13): a session's lock on one
// entity, kept in the database (every server instance sees it) and held while that session lives.
// It goes with an unlock by its session, the session's logout, its expiry (a lock whose session is
// gone is void at once: every read joins the sessions table; the session sweep removes the row),
// and the drop of the entity. Another session (and the server's own code) can neither lock,
// unlock, save nor drop it meanwhile: writes.ts asks bumpStampRefusingLocked() after its UPDATE or DELETE,
// under that row's lock, and a lock is taken under the same row lock (PostgreSQL: FOR UPDATE;
// SQLite has one writer), so a lock and a save of one entity never cross.

import { ADMIN_PRIVILEGE, DEFAULT_LOCKS_PER_SESSION, MAX_LOCK_CLIENT_TEXT } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { DataClassModel } from '../../model/types.js';
import { compileLockRow } from '../../sql/compiler/statements.js';
import { bumpStampProbingLock, countSessionLocks, deleteLock, lockHeldElsewhere, putLock, sessionStillHeld, type LockHolderRow } from '../../storage/system-tables/locks.js';
import { sessionOf, type Access } from '../access/access.js';
import type { ClassCoreView, CoreView } from '../core-types.js';
import { sessionInternals, type Session } from './session.js';

/** Where a lock was taken from: what 4D's lockInfo tells of a REST session's lock. */
export interface LockClient {
  /** the client's IP address */
  readonly address: string;
  /** the Host the client called */
  readonly host: string;
  readonly userAgent: string;
}

/** 4D's lockInfo of a lock taken by a REST session (host, IPAddr, userAgent), with the session holding it. */
export interface LockInfo {
  readonly host: string;
  readonly IPAddr: string;
  readonly userAgent: string;
  /** the locking session's user name ('' for a guest) */
  readonly userName: string;
  readonly sessionID: string;
}

/** The status object of 4D's lock() and unlock() (and of REST's $lock, under __STATUS). */
export type LockStatus =
  | { readonly success: true }
  | LockedStatus
  | { readonly success: false; readonly status: 5; readonly statusText: 'Entity does not exist anymore' };

/** 4D's dk status locked, for a REST session's lock (lockKind 7). */
export interface LockedStatus {
  readonly success: false;
  readonly status: 3;
  readonly statusText: 'Already locked';
  readonly lockKind: 7;
  readonly lockKindText: 'Locked by session';
  readonly lockInfo: LockInfo;
}

const SUCCESS: LockStatus = Object.freeze({ success: true });
const GONE: LockStatus = Object.freeze({ success: false, status: 5, statusText: 'Entity does not exist anymore' });

/** A lock taken by server code (entity.lock()): no client to tell of. */
export const NO_CLIENT: LockClient = Object.freeze({ address: '', host: '', userAgent: '' });

/** An entity locked by another live session (its save or drop refused): 7052, with 4D's save-failure stack and the locker's status. */
export class EntityLockedError extends DatasetError {
  /** 4D's status object of the refusal (a save's __STATUS) */
  readonly lockStatus: LockedStatus;

  constructor(database: string, dc: DataClassModel, key: unknown, held: LockHolderRow, what: 'saved' | 'dropped') {
    super('ENTITY_LOCKED', `The entity ${dc.name}(${String(key)}) is locked by ${describe(held)}: it cannot be ${what} until that session unlocks it ($lock=false), logs out or expires`, [
      { name: 'RECORD_NOT_SAVED', message: `Cannot ${what === 'saved' ? 'save' : 'delete'} record ${String(key)} in table ${dc.name} of database ${database}` },
      { name: 'ENTITY_NOT_SAVED', message: `The entity# ${String(key)} in the "${dc.name}" dataclass cannot be ${what}` },
    ]);
    this.lockStatus = locked(held);
  }
}

/** How a refusal names the locker: its session, user and client. */
function describe(held: LockHolderRow): string {
  const who = held.userName === '' ? `the guest session ${held.session}` : `the session ${held.session} of user "${held.userName}"`;
  const from = [held.address && `from ${held.address}`, held.host && `host ${held.host}`, held.userAgent && `user agent "${held.userAgent.slice(0, 200)}"`].filter(Boolean);
  return from.length === 0 ? who : `${who} (${from.join(', ')})`;
}

function locked(held: LockHolderRow): LockedStatus {
  return {
    success: false, status: 3, statusText: 'Already locked', lockKind: 7, lockKindText: 'Locked by session',
    lockInfo: { host: held.host, IPAddr: held.address, userAgent: held.userAgent, userName: held.userName, sessionID: held.session },
  };
}

/** How a lock table row names an entity's key. */
function keyText(key: unknown): string {
  return String(key);
}

/** The session a lock is taken for: the access's, else a mistake of server code (a lock belongs to a session). */
function lockingSession(access: Access, what: string): Session {
  const session = sessionOf(access);
  if (!session) throw new Error(`${what}: a lock belongs to a REST session; call it from code serving a request (a function, an event), on an entity read there`);
  return session;
}

/**
 * Locks an entity for the session of `access` (4D's $lock=true, entity.lock()): success when it
 * was not locked or locked by this session already; 4D's status 3 with the locker's info when
 * another live session holds it; status 5 when the entity is not there (or not visible to the
 * caller). Only a session its client keeps may lock (one whose cookie came back, or that logged
 * in before this request): a client that drops its cookie would leave a lock nobody can release,
 * and a stored session per request. The session is stored first (a guest too, within the
 * sessions' caps), and the lock's transaction checks its row is still the one of this request
 * (a logout at the same time, another instance's included, ends it or waits for it): a lock
 * lives only as long as that session, and never answers success while holding nothing. A
 * session holds at most `limit` locks (429 past it).
 */
export async function lockEntity(dc: ClassCoreView, key: unknown, access: Access, client: LockClient, limit = DEFAULT_LOCKS_PER_SESSION): Promise<LockStatus> {
  const session = lockingSession(access, 'lock()');
  if (sessionInternals.newToken(session)) {
    // (the answer gives a guest never stored its cookie: sent back, it is the same guest, which may lock)
    sessionInternals.wantCookie(session);
    throw new DatasetError('LOCK_NEEDS_SESSION', 'a lock needs a session the client keeps: send its cookie back, or log in (this request\'s session is new: a lock taken by it could be released by no one)');
  }
  const core = dc.core;
  const storage = core.storage;
  sessionInternals.keep(session);
  // (inside a caller's transaction, the store goes with it: rolled back, the session is not stored)
  const undo = sessionInternals.storeUndo(session);
  const saving = core.sessions.save(session, client.address);
  if (saving) {
    await saving;
    storage.onRollback(undo);
  }
  return storage.transaction(async () => {
    if (!(await entityRow(core, dc.model, key, access))) return GONE;
    const text = keyText(key);
    const now = core.sessions.now();
    const held = await lockHeldElsewhere(storage, dc.name, text, now, sessionInternals.id(session));
    if (held) return locked(held);
    const row = { token: sessionInternals.tokenHash(session), id: sessionInternals.id(session), userName: session.userName, privileges: JSON.stringify(session.getPrivileges()) };
    if (!sessionInternals.stored(session) || !(await sessionStillHeld(storage, row, now))) {
      throw new DatasetError('LOCK_NEEDS_SESSION', 'the session ended while it asked the lock (a logout, a login as another user, its expiry, or its store undone): nothing is locked; ask again');
    }
    // (counted under the session row's lock where the engine locks rows: its locks are taken one at a time)
    const holding = await countSessionLocks(storage, sessionInternals.id(session), dc.name, text);
    if (holding >= limit) {
      throw new DatasetError('TOO_MANY_REQUESTS', `this session holds ${holding} entity locks, the most it may (--max-locks-per-session): unlock some ($lock=false) first`, [], { retryAfterS: 60 });
    }
    await putLock(storage, {
      dataClass: dc.name, key: text, session: sessionInternals.id(session), address: client.address.slice(0, MAX_LOCK_CLIENT_TEXT), host: client.host.slice(0, MAX_LOCK_CLIENT_TEXT), userAgent: client.userAgent.slice(0, MAX_LOCK_CLIENT_TEXT), at: now,
    });
    return SUCCESS;
  }, { retries: storage.dialect.concurrency.conflictRetries });
}

/**
 * Unlocks an entity the session of `access` locked (4D's $lock=false, entity.unlock()): success
 * when it holds it no more (an entity it had not locked, or whose lock lapsed, is unlocked as
 * asked); status 3 when another live session holds it; status 5 when the entity is not there. A
 * session holding the administrator privilege (ADMIN_PRIVILEGE) releases whoever's lock: the way
 * out of a lock its holder keeps alive and never releases.
 */
export async function unlockEntity(dc: ClassCoreView, key: unknown, access: Access): Promise<LockStatus> {
  const session = lockingSession(access, 'unlock()');
  const core = dc.core;
  const storage = core.storage;
  const admin = session.hasPrivilege(ADMIN_PRIVILEGE);
  return storage.transaction(async () => {
    if (!(await entityRow(core, dc.model, key, access))) return GONE;
    const text = keyText(key);
    if (admin) {
      await deleteLock(storage, dc.name, text, null);
      return SUCCESS;
    }
    const held = await lockHeldElsewhere(storage, dc.name, text, core.sessions.now(), sessionInternals.id(session));
    if (held) return locked(held);
    await deleteLock(storage, dc.name, text, sessionInternals.id(session));
    return SUCCESS;
  }, { retries: storage.dialect.concurrency.conflictRetries });
}

/** The entity's row, locked until the transaction ends where the engine locks rows; undefined when the caller cannot reach it. */
function entityRow(core: CoreView, dc: DataClassModel, key: unknown, access: Access): Promise<Record<string, unknown> | undefined> {
  const { sql, params } = compileLockRow(core.storage.dialect, dc, key, access.restrict);
  return core.storage.get(sql, params);
}

/**
 * After a big delete's statement (writes.ts deleteKeys), for the deleted keys a lock row names:
 * a live lock of another session refuses the delete (7052, naming the first such entity), the
 * others (the caller's own, expired ones) go with their entities.
 */
export async function refuseLockedElsewhere(core: CoreView, dc: DataClassModel, keys: readonly string[], access: Access, what: 'saved' | 'dropped'): Promise<void> {
  const now = core.sessions.now();
  const except = idOf(sessionOf(access));
  for (const text of keys) {
    const held = await lockHeldElsewhere(core.storage, dc.name, text, now, except);
    if (held) throw new EntityLockedError(core.name, dc, text, held, what);
    await deleteLock(core.storage, dc.name, text, null);
  }
}

/** The id of a request's session, for the core's own checks (read without showing it: session.ts); null for the server's own code. */
function idOf(session: Session | undefined): string | null {
  return session === undefined ? null : sessionInternals.id(session);
}

/**
 * In a write's transaction, after its UPDATE or DELETE took the row: increases the global stamp
 * (unless `moveStamp` is false: a batch moved it already) and refuses (7052) the save or drop of
 * an entity another live session holds locked, in one statement where the engine allows (no
 * round trip more for the lock); a dropped entity's lock row, if any, goes with it. The server's
 * own code (no session) is refused too, as 4D's processes are by a REST session's lock.
 */
export async function bumpStampRefusingLocked(core: CoreView, dc: DataClassModel, key: unknown, access: Access, what: 'saved' | 'dropped', moveStamp: boolean): Promise<void> {
  const text = keyText(key);
  const now = core.sessions.now();
  const except = idOf(sessionOf(access));
  const probe = await bumpStampProbingLock(core.storage, dc.name, text, now, except, moveStamp);
  if (probe.heldElsewhere) {
    // (the locker's details, for the refusal: read only then)
    const held = await lockHeldElsewhere(core.storage, dc.name, text, now, except);
    if (held) throw new EntityLockedError(core.name, dc, key, held, what);
  }
  if (what === 'dropped' && probe.anyRow) await deleteLock(core.storage, dc.name, text, null);
}
