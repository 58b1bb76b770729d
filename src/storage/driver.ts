// The driver contract: what an engine implements (statements in, rows and counts out; begin,
// commit, rollback, savepoints, cancel), kept small. Transactions, hooks and snapshots are built
// on it once, for every engine, by the transaction manager (transactions.ts).

import type { Dialect } from '../sql/dialect.js';
import type { StatementBudget } from './budget.js';

export type Row = Record<string, unknown>;

export interface QueryResult {
  /** the rows of a statement that returns rows (a SELECT, an INSERT … RETURNING); else [] */
  readonly rows: Row[];
  /** rows.length for a statement that returns rows, else the number of rows it changed */
  readonly rowCount: number;
}

export interface ExecuteOptions {
  /** rows are the first column's values rather than objects (key lists: no object per row) */
  readonly pluck?: boolean;
  /** only the first row is wanted (a read by key): the driver may stop after it, and return just it */
  readonly first?: boolean;
  /** rows are arrays of the selected columns' values, in their order (no property set per value: pages written straight from rows) */
  readonly arrays?: boolean;
  /**
   * The time the statement shares with the others of its request or function call: it is
   * stopped once that is spent (or the query time limit, if that comes first), refused when
   * nothing is left, and its time is counted in it.
   */
  readonly budget?: StatementBudget;
}

/** One connection, held exclusively between Driver.acquire() and Driver.release(). */
export interface Connection {
  /** one statement (no `;`-separated scripts); engine errors come out translated (ConstraintError) */
  execute(sql: string, params?: readonly unknown[], options?: ExecuteOptions): Promise<QueryResult>;
  /** 'write': a transaction that will write; 'snapshot': reads that all see one state of the data */
  begin(mode: 'write' | 'snapshot'): Promise<void>;
  commit(): Promise<void>;
  /** rolls the transaction back, if one is open */
  rollback(): Promise<void>;
  /** `name`: a plain identifier, chosen by the manager, never reused on the connection */
  savepoint(name: string): Promise<void>;
  rollbackTo(name: string): Promise<void>;
  releaseSavepoint(name: string): Promise<void>;
  /** stops the statement running on the connection now, if any (before a rollback on abort) */
  cancel(): Promise<void>;
}

export interface Driver {
  readonly dialect: Dialect;
  /** the query time limit of each statement, in ms (0: none) */
  readonly queryTimeoutMs: number;
  /**
   * One statement on its own (autocommit): the driver picks the connection, so that a caller
   * need not know whether the engine reads and writes through different ones.
   */
  execute(sql: string, params?: readonly unknown[], options?: ExecuteOptions): Promise<QueryResult>;
  /** a connection for the caller alone until release(); 'write' waits for the engine's writer where it has one */
  acquire(kind: 'write' | 'snapshot'): Promise<Connection>;
  /** callers waiting now for a connection (or the engine's writer) */
  waiting?(): number;
  /** gives a connection back (a transaction left open on it is rolled back); once per acquire() */
  release(connection: Connection): void;
  /** an error that a transaction run again from the start may not meet (lock contention, a serialization failure) */
  isRetryable(error: unknown): boolean;
  /**
   * Engines that carry messages between the processes on one database (PostgreSQL's NOTIFY):
   * `notify` sends `payload` on `channel` to every listener, this process's too; `listen` hears
   * them on a connection of its own until the returned stop is called (`onLost`: the connection
   * broke first). Absent elsewhere: a listener then polls (datastore/live/change-feed.ts).
   */
  notify?(channel: string, payload: string): Promise<void>;
  listen?(channel: string, onMessage: (payload: string) => void, onLost: () => void): Promise<() => Promise<void>>;
  /** closes every connection, once the writer is free */
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
