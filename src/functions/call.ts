// Calling user code over REST — exposed class functions and project methods alike: the lookup
// (only @exposed functions exist for REST), the GET rule (@onHttpGet), the declared parameter
// types, the call's own context, the time limit, and the failure of user code (or a result that
// cannot be sent) turned into a clear error.

import { MAX_TIMER_MS } from '../config/limits.js';
import { leaveCaller, startAsCaller, type Caller } from '../datastore/access/caller.js';
import { refusal } from '../datastore/access/guard.js';
import { sessionInternals } from '../datastore/sessions/session.js';
import { DatasetError } from '../errors/dataset-error.js';
import { didYouMean } from '../util/suggest.js';
import { leaveContext, runInContext, timeoutError, type CallContext, type CallRequest } from './context.js';
import { exposedFunctions, type ExposedFunction } from './exposure.js';
import { convertArgs, type ParamType } from './params.js';
import { watchdog } from './watchdog.js';

/** Where a class function is looked for: a class (by prototype) and the core class its chain stops at. */
export interface CallTarget {
  /** the prototype of the object the function runs on (the datastore, a dataclass, an entity, a selection) */
  readonly proto: object;
  /** the core prototype: functions of the core itself are never callable */
  readonly stop: object;
  /** how errors name the class: "the DataStore class" */
  readonly label: string;
}

/** The first target exposing `name`, with the function's marks. */
export function findExposed<T extends CallTarget>(targets: readonly T[], name: string): { target: T; fn: ExposedFunction } | undefined {
  for (const target of targets) {
    const fn = exposedFunctions(target.proto, target.stop).find((x) => x.name === name);
    if (fn) return { target, fn };
  }
  return undefined;
}

/** -10729, naming where the function was looked for and the closest name that exists. */
export function unknownMember(name: string, where: readonly string[], known: readonly string[]): DatasetError {
  return new DatasetError('UNKNOWN_MEMBER_METHOD', `Unknown member method: '${name}' is no exposed function of ${where.join(' or ')}${didYouMean(name, [...known])}`);
}

/** The exposed function names of the targets (for did-you-mean). */
export function exposedNames(targets: readonly CallTarget[]): string[] {
  return targets.flatMap((t) => exposedFunctions(t.proto, t.stop).map((f) => f.name));
}

/** The GET rule, checked before any other work of the call: GET calls only @onHttpGet functions. */
export function checkHttpMethod(name: string, viaGet: boolean, onHttpGet: boolean): void {
  if (viaGet && !onHttpGet) throw new DatasetError('METHOD_NOT_ALLOWED', `GET cannot call ${name}: call it with POST, or mark it @onHttpGet`);
}

/** One call of user code. */
export interface Invocation {
  /** as errors name it: "counts of the DataStore class" */
  readonly name: string;
  /** runs the user code with the converted arguments */
  readonly run: (args: unknown[]) => unknown;
  readonly args: readonly unknown[];
  readonly params?: readonly ParamType[];
  readonly timeoutMs: number;
  readonly request: CallRequest;
  /** the caller's socket, where the watchdog answers a call stuck in code that never yields */
  readonly socketFd?: number;
  /** who calls (a REST request's access and session): the code runs as it, judged by its privileges */
  readonly caller?: Caller;
  /** the function as roles.json names it ("ds.authentify", "Employee.raise") and how errors name it ("method raise in dataClass Employee") */
  readonly resource?: { readonly name: string; readonly label: string };
  /** privileges roles.json's `promote` adds while the function runs */
  readonly promote?: readonly string[];
}

/** A call on its way: released once its code settles, even past its time limit. */
interface Running {
  readonly watchId: number;
  released: boolean;
  /** the call ran as a caller (left when the code settles, not at the time limit) */
  readonly asCaller: boolean;
  /** takes back what promote added */
  readonly demote?: () => void;
}

function release(r: Running): void {
  if (r.released) return;
  r.released = true;
  watchdog.leave(r.watchId);
  leaveContext();
  if (r.asCaller) leaveCaller();
  r.demote?.();
}

/**
 * The caller may run the function (roles.json's execute), checked before anything of the call.
 * REST's authorization step refuses it earlier (before the subject is read); this check is the
 * core's own, for every way into invoke().
 */
function requireExecute(inv: Invocation): void {
  if (!inv.caller || !inv.resource) return;
  const grants = inv.caller.access.grants;
  if (!grants.execute(inv.resource.name)) throw refusal(grants, 'execute', inv.resource.label);
}

/**
 * The caller the code runs as: with the privileges `promote` adds to its session while it runs
 * (its access reads the session's grants as they stand: what the request read before the call,
 * the function's `this` and its entity parameters, gets them too).
 */
function promoted(caller: Caller, names: readonly string[] | undefined): { caller: Caller; demote?: () => void } {
  if (!names || names.length === 0) return { caller };
  return { caller, demote: sessionInternals.promote(caller.session, names) };
}

/** Runs an invocation (its GET rule checked already, see checkHttpMethod): the parameter types, then the code in its own context under the time limit. */
export async function invoke(inv: Invocation): Promise<unknown> {
  requireExecute(inv);
  const args = inv.params ? convertArgs(inv.params, inv.args, inv.name) : [...inv.args];
  const controller = new AbortController();
  const startedAt = Date.now();
  // setTimeout waits at most 2^31 - 1 ms; a longer limit (set by an embedding program) is that
  const limit = Math.min(inv.timeoutMs, MAX_TIMER_MS);
  const ctx: CallContext = { name: inv.name, request: inv.request, startedAt, deadline: startedAt + limit, signal: controller.signal };
  const as = inv.caller ? promoted(inv.caller, inv.promote) : undefined;
  const r: Running = { watchId: watchdog.enter(inv.name, limit, inv.socketFd), released: false, asCaller: as !== undefined, demote: as?.demote };
  const start = () => runInContext(ctx, () => inv.run(args));
  const code = as ? startAsCaller(as.caller, start) : start();
  code.then(() => release(r), () => release(r));
  try {
    return await withTimeLimit(code, ctx, controller, () => watchdog.answered(r.watchId));
  } catch (e) {
    if (e instanceof DatasetError) throw e;
    // an exception the code did not mean for the client (a bug, a library's failure): its text may
    // tell what the client should not see, so it goes to the server's log (with its stack and the
    // request id) as the error's cause, and the client is told which function failed and where to
    // look; a refusal meant for the client is a DatasetError ('REFUSED', with its status and code)
    const id = inv.request.id;
    throw new DatasetError('FUNCTION_FAILED', `${inv.name} failed with an unexpected error${id === undefined ? '' : ` (request ${id})`}: its cause is in the server log`, { cause: e });
  }
}

/**
 * The code's answer, or FUNCTION_TIMEOUT once the limit has passed. The signal aborts then: a
 * transaction the call has open is rolled back at once (freeing the writer), the datastore refuses
 * its next statement, and user code can hand the signal to fetch() and the like.
 */
function withTimeLimit<T>(code: Promise<T>, ctx: CallContext, controller: AbortController, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      controller.abort(timeoutError(ctx));
      reject(timeoutError(ctx));
    }, ctx.deadline - ctx.startedAt);
  });
  return Promise.race([code, limit]).finally(() => clearTimeout(timer));
}
