// The storage a datastore works through: the engine's, with one check before every statement —
// a function called over REST that is past its time limit gets FUNCTION_TIMEOUT instead of a
// result, so its work stops — and its transactions carry the call's abort signal, so one still
// open at the time limit is rolled back then (functions/context.ts). The statements of a call
// share what is left of its time (each with the query time limit at most): one running at the
// call's time limit is stopped then, with FUNCTION_TIMEOUT. A call's statements do not count
// against its request's budget (storage/budget.ts): the function has a time limit of its own.

import { currentCall, deadlinePassed, timeoutError, type CallContext } from './context.js';
import type { StatementBudget } from '../storage/budget.js';
import type { TransactionManager } from '../storage/transactions.js';

const defaultSignal = (): AbortSignal | undefined => currentCall()?.signal;

/** What is left of a call's time, as the budget of its statements. */
class CallBudget implements StatementBudget {
  constructor(readonly call: CallContext) {}

  left(): number {
    return this.call.deadline - Date.now();
  }

  spend(): void {}

  exceeded(): Error {
    return timeoutError(this.call);
  }
}

const budgets = new WeakMap<CallContext, CallBudget>();

/** The budget of the statement about to run: its function call's, if one is running. */
function callBudget(): StatementBudget | undefined {
  const call = currentCall();
  if (call === undefined) return undefined;
  let budget = budgets.get(call);
  if (budget === undefined) budgets.set(call, (budget = new CallBudget(call)));
  return budget;
}

/** The same storage (its transactions included), with the time limit of function calls checked. */
export function withDeadlines(s: TransactionManager): TransactionManager {
  return s.withHooks({ beforeStatement: deadlinePassed, defaultSignal, budget: callBudget });
}
