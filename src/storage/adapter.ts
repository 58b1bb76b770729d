// The storage contract every engine implements (SQLite now, PostgreSQL next): asynchronous,
// parameterised SQL in, plain rows out, and scoped transactions.

import type { Dialect } from '../sql/dialect.js';

export type Row = Record<string, unknown>;

export interface StorageAdapter {
  readonly dialect: Dialect;
  /** every row of a query */
  all(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** the first column of every row of a query (no object per row: what key lists are read with) */
  column(sql: string, params?: readonly unknown[]): Promise<unknown[]>;
  /** the first row of a query, if any */
  get(sql: string, params?: readonly unknown[]): Promise<Row | undefined>;
  /** runs a write statement; resolves to the number of rows changed */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /** runs DDL, possibly several statements separated by semicolons, without parameters */
  exec(sql: string): Promise<void>;
  /**
   * Runs fn in a transaction: commit when it resolves, roll back when it throws. Calls made inside
   * fn (however deep, through AsyncLocalStorage) join the transaction; a nested call runs in a
   * savepoint, so that an inner failure the caller catches undoes only the inner writes. Calls
   * left running after the transaction ended are outside it. When `signal` aborts while the
   * transaction is open (a function past its time limit), it is rolled back at once and the
   * writer freed for others; fn's eventual result is then refused with the signal's reason, and
   * nothing of it commits.
   */
  transaction<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T>;
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
  /** the column names of a table, or [] when the table does not exist */
  columns(table: string): Promise<string[]>;
  close(): Promise<void>;
}

/** An engine's constraint failure, translated so the core need not know engine error codes. */
export class ConstraintError extends Error {
  constructor(
    readonly constraint: 'unique' | 'notNull' | 'other',
    readonly table: string | undefined,
    readonly column: string | undefined,
    cause: unknown,
  ) {
    super(`${constraint} constraint failed${table ? ` on ${table}.${column}` : ''}`, { cause });
    this.name = 'ConstraintError';
  }
}
