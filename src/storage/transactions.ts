// The transaction manager: the storage the core uses (adapter.ts), built once over any engine's
// driver. It owns the transaction frames (AsyncLocalStorage), savepoints, rollback and
// after-commit hooks, abort by signal, retries on contention, and read snapshots.

import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { MAX_RETRY_DELAY_MS } from '../config/limits.js';
import type { Dialect } from '../sql/dialect.js';
import type { Reader, Snapshot, Storage, TransactionOptions } from './adapter.js';
import { RequestBudget, type StatementBudget } from './budget.js';
import type { Connection, Driver, ExecuteOptions, QueryResult, Row } from './driver.js';

/** Checks a layer above adds to every statement and transaction through withHooks (functions/deadlines.ts's withDeadlines: a function call's time limit). */
export interface StatementHooks {
  /** asked before every statement and transaction: an error it returns is thrown instead */
  readonly beforeStatement?: () => unknown;
  /** the abort signal of a transaction started without one */
  readonly defaultSignal?: () => AbortSignal | undefined;
  /** the budget of the statement about to run (a function call's, what is left of its time), before any its reader or transaction carries */
  readonly budget?: () => StatementBudget | undefined;
}

/** One open write transaction: its connection and its rollback and after-commit hooks. */
interface Transaction {
  readonly conn: Connection;
  /** the budget of its statements that carry none of their own (a request's writes) */
  readonly budget: StatementBudget | undefined;
  /** false once it ended (committed, rolled back, aborted): calls still carrying it are outside */
  open: boolean;
  readonly onRollback: (() => void)[];
  readonly afterCommit: (() => Promise<void>)[];
  /** set when an abort signal rolled it back before fn ended: fn's result is refused with it */
  aborted?: unknown;
  /** the rollback an abort started; the connection is released once it is done */
  aborting?: Promise<void>;
  /** set as COMMIT starts: an abort after it changes nothing */
  committing?: boolean;
  /** counted among the open ones (the frames stay enabled) until its function has settled */
  counted?: boolean;
}

/** Where a call stands in a transaction: nested calls under one frame take turns (their savepoints must not overlap). */
interface Frame {
  readonly t: Transaction;
  chain: Promise<void>;
}

/** What the views of one manager (withHooks) share: the frames, the open count, the savepoint names. */
interface Shared {
  readonly frames: AsyncLocalStorage<Frame>;
  open: number;
  savepoints: number;
  /** rollbacks (of transactions and to savepoints) so far */
  rollbacks: number;
}

const NO_PARAMS: readonly unknown[] = [];
const PLUCK: ExecuteOptions = { pluck: true };
const FIRST: ExecuteOptions = { first: true };
const ARRAYS: ExecuteOptions = { arrays: true };
const rowsOf = (r: QueryResult): Row[] => r.rows;
const firstRow = (r: QueryResult): Row | undefined => r.rows[0];
const countOf = (r: QueryResult): number => r.rowCount;
const nothing = (): void => undefined;
const ended = () => new Error('the transaction this call belonged to has ended');

/** all/get/column over execute(): the reads the manager and its snapshots both offer. */
abstract class Reads implements Reader {
  abstract readonly dialect: Dialect;
  abstract execute(sql: string, params?: readonly unknown[], options?: ExecuteOptions): Promise<QueryResult>;

  within(budget: StatementBudget | undefined): Reader {
    return budget === undefined ? this : new BudgetedReads(this, budget);
  }

  all(sql: string, params: readonly unknown[] = NO_PARAMS): Promise<Row[]> {
    return this.execute(sql, params).then(rowsOf);
  }

  column(sql: string, params: readonly unknown[] = NO_PARAMS): Promise<unknown[]> {
    return this.execute(sql, params, PLUCK).then(rowsOf);
  }

  arrays(sql: string, params: readonly unknown[] = NO_PARAMS): Promise<unknown[][]> {
    return this.execute(sql, params, ARRAYS).then(rowsOf) as Promise<unknown[][]>;
  }

  get(sql: string, params: readonly unknown[] = NO_PARAMS): Promise<Row | undefined> {
    return this.execute(sql, params, FIRST).then(firstRow);
  }
}

export class TransactionManager extends Reads implements Storage {
  readonly dialect: Dialect;
  readonly #driver: Driver;
  #shared: Shared = { frames: new AsyncLocalStorage<Frame>(), open: 0, savepoints: 0, rollbacks: 0 };
  readonly #check: (() => unknown) | undefined;
  readonly #defaultSignal: (() => AbortSignal | undefined) | undefined;
  readonly #budget: (() => StatementBudget | undefined) | undefined;

  readonly notify?: (channel: string, payload: string) => Promise<void>;
  readonly listen?: (channel: string, onMessage: (payload: string) => void, onLost: () => void) => Promise<() => Promise<void>>;

  constructor(driver: Driver, hooks: StatementHooks = {}) {
    super();
    this.dialect = driver.dialect;
    this.#driver = driver;
    if (driver.notify && driver.listen) {
      this.notify = driver.notify.bind(driver);
      this.listen = driver.listen.bind(driver);
    }
    this.#check = hooks.beforeStatement;
    this.#defaultSignal = hooks.defaultSignal;
    this.#budget = hooks.budget;
  }

  requestBudget(): StatementBudget | undefined {
    const limit = this.#driver.queryTimeoutMs;
    return limit > 0 ? new RequestBudget(limit) : undefined;
  }

  /** The same storage (its driver, its transactions), with these hooks. */
  withHooks(hooks: StatementHooks): TransactionManager {
    const view = new TransactionManager(this.#driver, hooks);
    view.#shared = this.#shared;
    return view;
  }

  /** The transaction this call belongs to, if it is still open (a finished one's stray calls are outside). */
  #current(): Transaction | undefined {
    const frame = this.#shared.frames.getStore();
    return frame !== undefined && frame.t.open ? frame.t : undefined;
  }

  /** A statement: in the current transaction if there is one, else on its own (the driver picks the connection). */
  execute(sql: string, params: readonly unknown[] = NO_PARAMS, options?: ExecuteOptions): Promise<QueryResult> {
    return this.#route(undefined, sql, params, options);
  }

  /**
   * A statement in the current transaction, else on `lent` (a snapshot's connection), else on its
   * own; within the budget of the function call running it, else its own (its reader's), else
   * its transaction's.
   */
  #route(lent: Connection | undefined, sql: string, params: readonly unknown[], options: ExecuteOptions | undefined): Promise<QueryResult> {
    const stop = this.#check?.();
    if (stop !== undefined) return Promise.reject(stop);
    const call = this.#budget?.();
    if (call !== undefined && call !== options?.budget) options = { ...options, budget: call };
    const frame = this.#shared.frames.getStore();
    if (frame !== undefined) {
      if (frame.t.open) {
        const budget = frame.t.budget;
        if (budget !== undefined && options?.budget === undefined) options = { ...options, budget };
        return frame.t.conn.execute(sql, params, options);
      }
      // the code of an aborted transaction goes on: nothing more of it may reach the database
      if (frame.t.aborted !== undefined) return Promise.reject(frame.t.aborted);
    }
    return lent === undefined ? this.#driver.execute(sql, params, options) : lent.execute(sql, params, options);
  }

  run(sql: string, params: readonly unknown[] = NO_PARAMS): Promise<number> {
    return this.execute(sql, params).then(countOf);
  }

  exec(sql: string): Promise<void> {
    return this.execute(sql).then(nothing);
  }

  async transaction<T>(fn: () => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const stop = this.#check?.();
    if (stop !== undefined) throw stop;
    const frame = this.#shared.frames.getStore();
    if (frame !== undefined && frame.t.aborted !== undefined) throw frame.t.aborted;
    if (frame !== undefined && frame.t.open) {
      // Nested: a savepoint, so that an inner failure the caller catches undoes only the inner
      // writes. Calls under one frame (two saves awaited together, say) take turns: savepoints
      // must nest, never interleave.
      const run = frame.chain.then(() => this.#savepoint(frame.t, fn));
      frame.chain = run.then(nothing, nothing);
      return run;
    }
    const signal = options.signal ?? this.#defaultSignal?.();
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#topLevel(fn, signal, options.budget);
      } catch (e) {
        if (attempt >= (options.retries ?? 0) || signal?.aborted || !this.#driver.isRetryable(e)) throw e;
        // the other side holds the lock a while: back off a little more each time, with jitter
        await sleep(Math.min(5 * 2 ** attempt, MAX_RETRY_DELAY_MS) * (0.5 + Math.random()));
      }
    }
  }

  async #topLevel<T>(fn: () => Promise<T>, signal: AbortSignal | undefined, budget: StatementBudget | undefined): Promise<T> {
    const conn = await this.#driver.acquire('write');
    const t: Transaction = { conn, budget, open: false, onRollback: [], afterCommit: [] };
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#driver.release(conn);
    };
    // A function past its time limit: its transaction is undone now, and the connection freed,
    // rather than when (if ever) the function next touches the datastore.
    const onAbort = () => {
      if (!t.open || t.committing) return;
      t.aborted = signal?.reason ?? new Error('the transaction was aborted');
      // closed now, but its frames stay readable until fn settles: what fn still does is refused,
      // not run on its own (#route)
      t.open = false;
      t.aborting = conn.cancel().then(() => this.#rollback(t)).catch(nothing).finally(release);
    };
    let value: T;
    try {
      if (signal?.aborted) throw signal.reason; // aborted while it waited for the writer
      await conn.begin('write');
      t.open = true;
      t.counted = true;
      this.#shared.open++;
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        if (signal?.aborted) throw signal.reason; // while BEGIN ran (before the listener)
        value = await this.#shared.frames.run({ t, chain: Promise.resolve() }, fn);
      } catch (e) {
        if (t.aborted === undefined) await this.#rollback(t);
        throw e;
      }
      if (t.aborted !== undefined) throw t.aborted; // undone already: nothing of it commits
      t.committing = true;
      try {
        await conn.commit();
      } catch (e) {
        await this.#rollback(t);
        throw e;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.#end(t);
      await t.aborting;
      release();
    }
    // committed: what waited for the commit runs now, with the writer free again (it may write)
    for (const run of t.afterCommit) await run().catch(nothing);
    return value;
  }

  /** Marks a transaction ended; with none open, the frames are switched off. */
  #end(t: Transaction): void {
    t.open = false;
    if (!t.counted) return;
    t.counted = false;
    // On Node 20 an enabled AsyncLocalStorage makes every promise of the process pay for async
    // hooks; with no transaction open it is switched off (run() switches it on again).
    if (--this.#shared.open === 0) this.#shared.frames.disable();
  }

  /**
   * Rollbacks so far (of transactions and to savepoints): data read before one may have held
   * writes that are gone, with nothing else to tell (SQLite's total_changes() does not go back).
   * What is kept with a data version (datastore/selections/count-cache.ts) is kept with this too.
   */
  get rollbacks(): number {
    return this.#shared.rollbacks;
  }

  waiting(): number {
    return this.#driver.waiting?.() ?? 0;
  }

  async #rollback(t: Transaction): Promise<void> {
    this.#shared.rollbacks++;
    try {
      await t.conn.rollback();
    } finally {
      for (const undo of t.onRollback.reverse()) undo();
    }
  }

  async #savepoint<T>(t: Transaction, fn: () => Promise<T>): Promise<T> {
    // A transaction aborted (or ended) while this call waited its turn: the connection may be
    // another transaction's by now, so nothing more of this one touches it.
    const alive = () => t.aborted === undefined && t.open;
    if (!alive()) throw t.aborted ?? ended();
    // unique on the connection, so that a stray command could never name another transaction's
    const name = `sp${++this.#shared.savepoints}`;
    const hooks = t.onRollback.length;
    const commits = t.afterCommit.length;
    await t.conn.savepoint(name);
    let result: T;
    try {
      result = await this.#shared.frames.run({ t, chain: Promise.resolve() }, fn);
    } catch (e) {
      // alive() just before each statement: an abort may come between two (on an engine whose
      // statements really wait), and a statement sent once it did could reach the next user
      if (alive()) {
        for (const undo of t.onRollback.splice(hooks).reverse()) undo();
        t.afterCommit.splice(commits); // what the savepoint did will never be committed
        this.#shared.rollbacks++;
        await t.conn.rollbackTo(name);
        if (alive()) await t.conn.releaseSavepoint(name);
      }
      throw alive() ? e : (t.aborted ?? e);
    }
    if (!alive()) throw t.aborted ?? ended();
    await t.conn.releaseSavepoint(name);
    return result;
  }

  onRollback(undo: () => void): void {
    this.#current()?.onRollback.push(undo);
  }

  async afterCommit(run: () => Promise<void>): Promise<void> {
    const t = this.#current();
    if (t) t.afterCommit.push(run);
    else await run();
  }

  async snapshot(): Promise<Snapshot> {
    const stop = this.#check?.();
    if (stop !== undefined) throw stop;
    let lent: Connection | undefined = await this.#driver.acquire('snapshot');
    try {
      await lent.begin('snapshot');
    } catch (e) {
      this.#driver.release(lent);
      throw e;
    }
    const release = async () => {
      const conn = lent;
      if (conn === undefined) return;
      lent = undefined; // from now on, its reads are the storage's
      try {
        await conn.commit(); // reads only: ends the snapshot
      } finally {
        this.#driver.release(conn);
      }
    };
    return new DriverSnapshot(this.dialect, (sql, params = NO_PARAMS, options) => this.#route(lent, sql, params, options), release);
  }

  close(): Promise<void> {
    return this.#driver.close();
  }
}

/**
 * A reader whose statements share `budget` (a request's): each is stopped once it is spent, or
 * refused when nothing is left. Made for each request (and each snapshot it takes): kept plain,
 * a few fields and no options made ahead (a class over Reads with options built in its
 * constructor cost 4 µs a request, a third of a read by key in the core).
 */
class BudgetedReads implements Reader {
  readonly dialect: Dialect;

  constructor(readonly inner: Reads, readonly budget: StatementBudget) {
    this.dialect = inner.dialect;
  }

  within(budget: StatementBudget | undefined): Reader {
    return budget === this.budget ? this : this.inner.within(budget);
  }

  all(sql: string, params: readonly unknown[] = NO_PARAMS): Promise<Row[]> {
    return this.inner.execute(sql, params, { budget: this.budget }).then(rowsOf);
  }

  column(sql: string, params: readonly unknown[] = NO_PARAMS): Promise<unknown[]> {
    return this.inner.execute(sql, params, { pluck: true, budget: this.budget }).then(rowsOf);
  }

  arrays(sql: string, params: readonly unknown[] = NO_PARAMS): Promise<unknown[][]> {
    return this.inner.execute(sql, params, { arrays: true, budget: this.budget }).then(rowsOf) as Promise<unknown[][]>;
  }

  get(sql: string, params: readonly unknown[] = NO_PARAMS): Promise<Row | undefined> {
    return this.inner.execute(sql, params, { first: true, budget: this.budget }).then(firstRow);
  }
}

/**
 * A snapshot, carried as an object (never through AsyncLocalStorage, which would cost every
 * promise of the process while enabled); its manager routes its reads.
 */
class DriverSnapshot extends Reads implements Snapshot {
  constructor(
    readonly dialect: Dialect,
    readonly execute: (sql: string, params?: readonly unknown[], options?: ExecuteOptions) => Promise<QueryResult>,
    readonly release: () => Promise<void>,
  ) {
    super();
  }
}
