// The storage a datastore works through: the engine's, with one check before every statement —
// a function called over REST that is past its time limit gets FUNCTION_TIMEOUT instead of a
// result, so its work stops — and its transactions carry the call's abort signal, so one still
// open at the time limit is rolled back then (functions/context.ts).

import { currentCall, deadlinePassed } from './context.js';
import type { TransactionManager } from '../storage/transactions.js';

const defaultSignal = (): AbortSignal | undefined => currentCall()?.signal;

/** The same storage (its transactions included), with the time limit of function calls checked. */
export function withDeadlines(s: TransactionManager): TransactionManager {
  return s.withHooks({ beforeStatement: deadlinePassed, defaultSignal });
}
