// The time the statements of one piece of work may take together: a REST request's (the query
// time limit, --query-timeout, for all its statements: a page and its count and inlined levels,
// each chunk of a delete, each save of a batch), or a function call's (what is left of its own
// time limit). Each statement also has the query time limit to itself at most: a driver stops a
// statement at whichever comes first (storage/sqlite.ts, storage/postgres.ts), and refuses one
// when nothing is left. It is carried by objects (a request's Access, its snapshot, its
// transaction: datastore/access/access.ts, transactions.ts), not by an AsyncLocalStorage, which would
// cost every promise of the process.

import { DatasetError } from '../errors/dataset-error.js';

export interface StatementBudget {
  /** milliseconds its statements may still run (0 or less: none may start) */
  left(): number;
  /** a statement of it ran `ms` milliseconds */
  spend(ms: number): void;
  /** the error of a statement stopped, or refused, because nothing is left */
  exceeded(): Error;
}

/** What stops a statement past the query time limit of its own: what every engine answers. */
export function queryTimedOut(limitMs: number, cause?: unknown): DatasetError {
  return new DatasetError('QUERY_TIMEOUT', `the query ran past its time limit${limitMs > 0 ? ` of ${limitMs / 1000} s` : ''} (--query-timeout) and was stopped, nothing of it kept: ask for fewer levels of relations, a narrower filter or a smaller page`, cause === undefined ? undefined : { cause });
}

/**
 * The budget of one REST request: `limitMs` of statement time in all, whatever the number of
 * statements. Only the statements' own time counts (waiting for the writer or for a connection
 * has its own limits), measured by the driver around each.
 */
export class RequestBudget implements StatementBudget {
  #spent = 0;

  constructor(readonly limitMs: number) {}

  left(): number {
    return this.limitMs - this.#spent;
  }

  spend(ms: number): void {
    this.#spent += ms;
  }

  exceeded(): Error {
    return new DatasetError('QUERY_TIMEOUT', `the request's statements ran past the query time limit of ${this.limitMs / 1000} s together (--query-timeout, one budget for all the statements of a request) and were stopped, nothing of them kept: ask for fewer levels of relations, a narrower filter, a smaller page, or fewer entities at once`);
  }
}
