// The context of one function call over REST: who called (the request; later its session), the
// time limit, and a signal that aborts at that limit. It travels with the call through
// AsyncLocalStorage, so two calls running at once never see each other's, and a function needs no
// module-level state to know who it serves.

import { AsyncLocalStorage } from 'node:async_hooks';
import { canonical } from '../util/canonical.js';
import { DatasetError } from '../errors/dataset-error.js';

/** The request that called a function, as the function may read it. */
export interface CallRequest {
  readonly method: string;
  /** the request target as received: /rest/…?… */
  readonly url: string;
  /** who asks: the session when sessions exist; until then the client address */
  readonly caller: string;
  /** the request headers, names in lower case */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** the request's id: its X-Request-Id, or one the server made (every log line of the request carries it) */
  readonly id?: string;
}

export interface CallContext {
  /** the function, as errors name it: "counts of the DataStore class" */
  readonly name: string;
  readonly request: CallRequest;
  /** when the call started and when its time limit passes (Date.now() milliseconds) */
  readonly startedAt: number;
  readonly deadline: number;
  /** aborts when the time limit passes: hand it to fetch() and other cancellable work */
  readonly signal: AbortSignal;
}

// One store for the process, shared through the canonical registry: user modules import
// callContext() from their own copy of 'dataset-rest' and must read the server's store.
const STORE = canonical('callContext', new AsyncLocalStorage<CallContext>());
const RUNNING = canonical('callsRunning', { count: 0 });

/** The context of the function call running now; throws outside one. */
export function callContext(): CallContext {
  const ctx = STORE.getStore();
  if (!ctx) throw new Error('callContext() is only available while a function called over REST runs (and until its time limit)');
  return ctx;
}

/** The context of the function call running now, if any. */
export function currentCall(): CallContext | undefined {
  return STORE.getStore();
}

/**
 * FUNCTION_TIMEOUT when the function call running now is past its time limit, else undefined: the
 * datastore asks before every statement, so a function that overstays stops at its next database
 * call.
 */
export function deadlinePassed(): DatasetError | undefined {
  const ctx = STORE.getStore();
  return ctx?.signal.aborted ? timeoutError(ctx) : undefined;
}

export function timeoutError(ctx: CallContext): DatasetError {
  return new DatasetError(
    'FUNCTION_TIMEOUT',
    `${ctx.name} took longer than ${ctx.deadline - ctx.startedAt} ms (the server's --function-timeout): it is stopped at its next datastore call, and its open transaction is rolled back`,
  );
}

/**
 * Starts `start` in ctx, in a macrotask of its own: its synchronous part then runs with nothing
 * else queued behind it (what the watchdog relies on; see watchdog.ts). Pair with leaveContext().
 */
export function runInContext<T>(ctx: CallContext, start: () => T | Promise<T>): Promise<T> {
  RUNNING.count++;
  return STORE.run(ctx, () => new Promise<T>((resolve, reject) => {
    setImmediate(() => {
      try {
        resolve(start());
      } catch (e) {
        reject(e);
      }
    });
  }));
}

/** A call started with runInContext() has ended or is given up. */
export function leaveContext(): void {
  // On Node 20 an enabled AsyncLocalStorage makes every promise of the process pay for async
  // hooks: with no call running it is switched off (run() switches it on again).
  if (--RUNNING.count === 0) STORE.disable();
}
