// Calling an exposed function of a user class: the lookup (only @exposed functions exist for
// REST), the GET rule (@onHttpGet), and the failure of user code turned into a clear error.

import { DatasetError } from '../errors/dataset-error.js';
import { didYouMean } from '../util/suggest.js';
import { exposedFunctions } from './exposure.js';

/** Where the function is looked for: the object it runs on and the core class its chain stops at. */
export interface CallTarget {
  /** `this` of the call (the datastore, a dataclass, an entity, a selection) */
  readonly self: object;
  /** the core prototype: functions of the core itself are never callable */
  readonly stop: object;
  /** how errors name the class: "the DataStore class" */
  readonly label: string;
}

/** Calls `name` on the first target exposing it; a function that throws answers FUNCTION_FAILED with its message. */
export async function callExposed(targets: readonly CallTarget[], name: string, args: readonly unknown[], viaGet: boolean, timeoutMs: number): Promise<unknown> {
  for (const t of targets) {
    const f = exposedFunctions(Object.getPrototypeOf(t.self) as object, t.stop).find((x) => x.name === name);
    if (!f) continue;
    if (viaGet && !f.onHttpGet) {
      throw new DatasetError('METHOD_NOT_ALLOWED', `GET cannot call ${name} of ${t.label}: call it with POST, or mark it @onHttpGet`);
    }
    const fn = (t.self as Record<string, (...a: unknown[]) => unknown>)[name];
    try {
      return await withTimeLimit(Promise.resolve().then(() => fn.apply(t.self, args as unknown[])), timeoutMs, `${name} of ${t.label}`);
    } catch (e) {
      if (e instanceof DatasetError) throw e;
      throw new DatasetError('FUNCTION_FAILED', `${name} of ${t.label} failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const known = targets.flatMap((t) => exposedFunctions(Object.getPrototypeOf(t.self) as object, t.stop).map((f) => f.name));
  throw new DatasetError('UNKNOWN_MEMBER_METHOD', `Unknown member method: '${name}' is no exposed function of ${targets.map((t) => t.label).join(' or ')}${didYouMean(name, known)}`);
}

/**
 * The function's answer, or FUNCTION_TIMEOUT once `ms` have passed. JavaScript cannot stop the
 * function: it runs on, and what it does in ds.transaction() still commits or rolls back by
 * itself. A synchronous CPU-bound loop holds the event loop, so the limit fires only when it yields.
 */
function withTimeLimit<T>(run: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatasetError('FUNCTION_TIMEOUT', `${what} took longer than ${ms} ms (the server's --function-timeout); it was not stopped and may still finish`)), ms);
  });
  run.catch(() => undefined); // a failure after the time limit is nobody's answer
  return Promise.race([run, limit]).finally(() => clearTimeout(timer));
}
