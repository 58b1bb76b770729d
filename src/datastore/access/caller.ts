// Who the code running now works for: the access (grants, row filters) and the session of the
// REST request that started it. A function, an event or a restrict() run on behalf of a request
// runs inside runAsCaller(); the datastore's public API (ds.Employee.query(), new(), get()) then
// reads with that caller's access, so user code is judged by its caller's privileges, and
// session() answers the caller's session. Outside a request (a seed, a script) code runs as the
// server: every row, every action.

import { AsyncLocalStorage } from 'node:async_hooks';
import { canonical } from '../../util/canonical.js';
import type { Access } from './access.js';
import type { Session } from '../sessions/session.js';

export interface Caller {
  readonly access: Access;
  readonly session: Session;
  /** the id of the request the code runs for, for the log lines it causes */
  readonly requestId?: string;
}

// One store for the process, shared through the canonical registry: user modules import
// session() from their own copy of 'dataset-rest' and must read the server's store.
const STORE = canonical('caller', new AsyncLocalStorage<Caller>());
const RUNNING = canonical('callersRunning', { count: 0 });

/** The id of the request the code running now works for, if any (log lines carry it). */
export function currentRequestId(): string | undefined {
  return STORE.getStore()?.requestId;
}

/** The access of the code running now: its caller's, or `root` (the server's own work). */
export function currentAccess(root: Access): Access {
  return STORE.getStore()?.access ?? root;
}

/**
 * Starts fn (and everything it starts) as `caller`; pair with leaveCaller() once what it started
 * has settled (a function past its time limit still runs as its caller until its code settles).
 */
export function startAsCaller<T>(caller: Caller, fn: () => T): T {
  RUNNING.count++;
  return STORE.run(caller, fn);
}

export function leaveCaller(): void {
  // On Node 20 an enabled AsyncLocalStorage makes every promise of the process pay for async
  // hooks: with no caller left it is switched off (run() switches it on again).
  if (--RUNNING.count === 0) STORE.disable();
}

/** Runs fn as `caller` until it settles. */
export async function runAsCaller<T>(caller: Caller, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await startAsCaller(caller, fn);
  } finally {
    leaveCaller();
  }
}

/** Runs fn synchronously as `caller` (a restrict() while a statement is built). */
export function runAsCallerSync<T>(caller: Caller, fn: () => T): T {
  try {
    return startAsCaller(caller, fn);
  } finally {
    leaveCaller();
  }
}

/** The session of the REST request the code running now serves; throws outside one. */
export function session(): Session {
  const caller = STORE.getStore();
  if (!caller) throw new Error('session() is only available in code run for a REST request (a function, an event, a restrict)');
  return caller.session;
}
