// The storage the core works through, whatever the engine: reads, writes, scoped transactions
// and read snapshots. One implementation (the transaction manager, transactions.ts) serves every
// engine's driver (driver.ts).

import type { Dialect } from '../sql/dialect.js';
import type { StatementBudget } from './budget.js';
import type { Row } from './driver.js';

export { ConstraintError, type Row } from './driver.js';
export type { StatementBudget } from './budget.js';

/** What reads need: the storage itself, or a snapshot of it (what a request's reads will carry). */
export interface Reader {
  readonly dialect: Dialect;
  /** every row of a query */
  all(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** the first column of every row of a query (no object per row: what key lists are read with) */
  column(sql: string, params?: readonly unknown[]): Promise<unknown[]>;
  /** the first row of a query, if any */
  get(sql: string, params?: readonly unknown[]): Promise<Row | undefined>;
  /** every row of a query as an array of its columns' values, in the order selected */
  arrays(sql: string, params?: readonly unknown[]): Promise<unknown[][]>;
  /** the same reads, their statements sharing `budget` (storage/budget.ts); undefined: each statement with the query time limit to itself */
  within(budget: StatementBudget | undefined): Reader;
}

/**
 * Reads that all see one state of the data (a request's count, page and global stamp agree),
 * however many writers commit meanwhile. Inside an open transaction its reads go to that
 * transaction (they see its writes); once released, it reads as the storage does, so that what
 * was read through it may outlive the request.
 */
export interface Snapshot extends Reader {
  release(): Promise<void>;
}

export interface TransactionOptions {
  /**
   * When it aborts while the transaction is open (a function past its time limit), the
   * transaction is rolled back at once and its connection freed for others; fn's eventual
   * result is then refused with the signal's reason, and nothing of it commits.
   */
  readonly signal?: AbortSignal;
  /**
   * The time its statements share (a REST request's: storage/budget.ts), for those that carry
   * none of their own; past it the statement running is stopped, and the transaction rolled back.
   * Nested transactions ignore it (the outermost one's holds).
   */
  readonly budget?: StatementBudget;
  /**
   * How many times to run fn again from the start when the engine refuses it for contention
   * (Driver.isRetryable). Only for fn that may run twice: not user code with side effects.
   * Nested transactions ignore it (the outermost one decides).
   */
  readonly retries?: number;
}

export interface Storage extends Reader {
  /** runs a statement; resolves to the number of rows it changed (or returned) */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /** runs one statement without parameters or result (DDL) */
  exec(sql: string): Promise<void>;
  /**
   * Runs fn in a transaction: commit when it resolves, roll back when it throws. Calls made inside
   * fn (however deep, through AsyncLocalStorage) join the transaction; a nested call runs in a
   * savepoint, so that an inner failure the caller catches undoes only the inner writes. Calls
   * left running after the transaction ended are outside it.
   */
  transaction<T>(fn: () => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * Registers an undo for in-memory state changed by the current transaction (an entity's stamp,
   * say), run if that transaction, or the savepoint open now, rolls back. Outside a transaction:
   * nothing to undo, ignored.
   */
  onRollback(undo: () => void): void;
  /**
   * Runs `run` once the current transaction commits (dropped if it, or the savepoint open now,
   * rolls back); outside a transaction, runs it now. Errors of `run` are its own to handle.
   */
  afterCommit(run: () => Promise<void>): Promise<void>;
  /** a snapshot for the reads of one request; release it when they are done */
  snapshot(): Promise<Snapshot>;
  /** a new budget for the statements of one request: the query time limit for all of them (none without a limit) */
  requestBudget(): StatementBudget | undefined;
  /** rollbacks (of transactions and to savepoints) so far, in this process: a data version read before one may no longer hold */
  readonly rollbacks: number;
  /** callers waiting now for a connection or the engine's writer (the metrics' "database waits") */
  waiting(): number;
  /** messages between the processes on one database, where the engine carries them (Driver's notify and listen) */
  readonly notify?: (channel: string, payload: string) => Promise<void>;
  readonly listen?: (channel: string, onMessage: (payload: string) => void, onLost: () => void) => Promise<() => Promise<void>>;
  close(): Promise<void>;
}
