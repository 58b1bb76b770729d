// The SQLite driver, over better-sqlite3 in WAL mode: one writer connection (writes and write
// transactions, one user at a time behind a lock), one reader connection for reads on their own
// (committed data only, never waiting for the writer), and read-only connections lent for snapshots.

import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { IDLE_SNAPSHOT_CONNECTIONS, LOCK_POLL_MAX_MS, MAX_SNAPSHOT_CONNECTIONS, SQLITE_BUSY_TIMEOUT_MS, STATEMENT_CACHE_SIZE, STATEMENT_SLICE_MS } from '../config/limits.js';
import { DatasetError } from '../errors/dataset-error.js';
import Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { CONNECTION_FUNCTION, FOLD_FUNCTION, LIKE_FUNCTION, PROGRESS_FUNCTION, sqliteDialect } from '../sql/dialect-sqlite.js';
import { foldChecked } from '../util/fold.js';
import { likeMatch } from '../util/like.js';
import { queryTimedOut, type StatementBudget } from './budget.js';
import { prepareSpace } from './sqlite-space.js';
import { ConstraintError, type Connection, type Driver, type ExecuteOptions, type QueryResult, type Row } from './driver.js';

const NO_PARAMS: readonly unknown[] = [];
/** the last number given to a connection (Dialect.concurrency.dataVersion tells connections apart by it) */
let connections = 0;

/**
 * The time statements have held the event loop since its last turn (one loop for the process,
 * whatever the connection; set back to 0 as the loop turns): past STATEMENT_SLICE_MS the next
 * statement waits for a turn first (setImmediate: pending I/O, other requests' callbacks run), so
 * that a request's statements in a row (a count, a page, its inlined levels; each chunk of a
 * delete) hold the loop no longer than one of them, while a statement that comes after a turn
 * (another request's) runs at once.
 */
const held = { ms: 0, counting: false };
const turned = (): void => {
  held.ms = 0;
  held.counting = false;
};

/** Counts a statement's time against the loop's current turn. */
function holding(ms: number): void {
  held.ms += ms;
  if (held.counting) return;
  held.counting = true;
  setImmediate(turned);
}

/** A turn of the event loop when statements have held it long enough since its last one, else nothing (one comparison). */
function turnIfHeld(): Promise<void> | undefined {
  return held.ms < STATEMENT_SLICE_MS ? undefined : nextTurn();
}

export interface SqliteOptions {
  /** how long a statement waits for another connection's lock before SQLITE_BUSY (ms; SQLITE_BUSY_TIMEOUT_MS by default) */
  readonly busyTimeoutMs?: number;
  /** the query time limit (ms): a statement whose subqueries are still visiting rows then is stopped with QUERY_TIMEOUT; none by default (0) */
  readonly queryTimeoutMs?: number;
}


class SqliteConnection implements Connection {
  readonly db: Database.Database;
  readonly #cache = new Map<string, Statement>();
  /**
   * The transaction statements, prepared once (as better-sqlite3's own db.transaction() keeps
   * them): exec() parses its text at every call, and every write runs two of them.
   */
  #control: { begin: Statement; beginWrite: Statement; commit: Statement; rollback: Statement } | undefined;

  #controls(): { begin: Statement; beginWrite: Statement; commit: Statement; rollback: Statement } {
    return (this.#control ??= {
      begin: this.db.prepare('BEGIN'),
      beginWrite: this.db.prepare('BEGIN IMMEDIATE'),
      commit: this.db.prepare('COMMIT'),
      rollback: this.db.prepare('ROLLBACK'),
    });
  }

  /** how long a write waits for another process's lock, without blocking (lockedWrite) */
  readonly #lockWaitMs: number;
  /** the query time limit in ms (0: none), and when the statement running now passes it */
  readonly #queryTimeoutMs: number;
  #deadline = Infinity;
  /** the budget whose end is that deadline (it comes before the statement's own limit), if so */
  #endsBudget: StatementBudget | undefined;
  /** throws once the statement running now is past its deadline: what every function it calls checks */
  readonly #check = (): void => {
    if (performance.now() > this.#deadline) throw this.#timedOut();
  };

  constructor(file: string, readonly: boolean, busyTimeoutMs: number, queryTimeoutMs: number) {
    this.db = new Database(file, { readonly, fileMustExist: readonly });
    this.#lockWaitMs = busyTimeoutMs;
    this.#queryTimeoutMs = queryTimeoutMs;
    // SQLite's own wait is a sleep inside the statement, holding the event loop: the writer waits
    // for the lock in lockedWrite() instead. Once BEGIN IMMEDIATE holds it, nothing in WAL mode
    // waits for another process (a COMMIT's checkpoint is a passive one).
    this.db.pragma(`busy_timeout = ${readonly ? busyTimeoutMs : 0}`);
    // The functions below run inside statements, on texts of any length: each checks the
    // statement's deadline as it goes, so that no call of them holds the event loop long past it
    // (a filter may fold a 1,000,000-character text in each of hundreds of ORs on one row).
    // The text fold of queries on values not stored folded (properties of object attributes, the
    // whole of texts longer than their folded column keeps):
    this.db.function(FOLD_FUNCTION, { deterministic: true }, (v: unknown) => (typeof v === 'string' ? foldChecked(v, this.#check) : v));
    // LIKE over such texts: SQLite's own costs the text's length times the pattern's in one call
    // nothing interrupts (24 s for a 7,000-character pattern over 1,000,000 characters); this one
    // is linear in both (util/like.ts), with SQLite's answers; a third argument 1 folds the text first
    this.db.function(LIKE_FUNCTION, { deterministic: true, varargs: true }, (text: unknown, pattern: unknown, folded?: unknown) => {
      if (text === null || pattern === null) return null;
      this.#check();
      const s = String(text);
      return likeMatch(folded === 1 ? foldChecked(s, this.#check) : s, String(pattern), this.#check) ? 1 : 0;
    });
    const id = ++connections;
    this.db.function(CONNECTION_FUNCTION, { deterministic: true }, () => id);
    // SQLite runs a statement on this thread, and better-sqlite3 offers no interrupt: the compiler
    // puts this check in the subqueries where a query's work multiplies (Dialect.concurrency.progressCheck),
    // and it throws out of the statement once the time limit has passed. Not deterministic, so
    // that SQLite calls it for each row rather than once.
    // (its argument, a column of the row, is what makes SQLite call it for each row)
    this.db.function(PROGRESS_FUNCTION, { deterministic: false }, (_row: unknown) => {
      if (performance.now() > this.#deadline) throw this.#timedOut();
      return 1;
    });
  }

  #timedOut(): Error {
    const budget = this.#endsBudget;
    this.#deadline = Infinity; // thrown once: the statement is over
    return budget !== undefined ? budget.exceeded() : queryTimedOut(this.#queryTimeoutMs);
  }

  statement(sql: string): Statement {
    let stmt = this.#cache.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      if (this.#cache.size >= STATEMENT_CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value as string);
      this.#cache.set(sql, stmt);
    }
    return stmt;
  }

  /**
   * Runs a statement prepared on this connection, synchronously, until its deadline: the query
   * time limit, or what is left of its budget if less (none left: refused before it starts),
   * counted from `start` (before it was prepared: preparing a statement of thousands of terms
   * takes a while, on the event loop too).
   */
  run(stmt: Statement, params: readonly unknown[], options: ExecuteOptions | undefined, start = performance.now()): QueryResult {
    const budget = options?.budget;
    let ms = this.#queryTimeoutMs > 0 ? this.#queryTimeoutMs : Infinity;
    if (budget !== undefined) {
      const left = budget.left();
      if (left <= 0) throw budget.exceeded();
      if (left < ms) {
        ms = left;
        this.#endsBudget = budget;
      }
    }
    this.#deadline = start + ms;
    try {
      if (performance.now() > this.#deadline) throw this.#timedOut();
      if (!stmt.reader) return { rows: [], rowCount: stmt.run(...params).changes };
      if (options?.first === true) {
        // get() steps once (an INSERT … RETURNING has made all its changes by then)
        const row = stmt.get(...params) as Row | undefined;
        return row === undefined ? { rows: [], rowCount: 0 } : { rows: [row], rowCount: 1 };
      }
      if (options?.pluck !== true && options?.arrays !== true) {
        const rows = stmt.all(...params) as Row[];
        return { rows, rowCount: rows.length };
      }
      // pluck() and raw() are modes of the (cached, shared) statement: on for this call only
      if (options.pluck === true) stmt.pluck(true);
      else stmt.raw(true);
      try {
        const rows = stmt.all(...params) as Row[];
        return { rows, rowCount: rows.length };
      } finally {
        if (options.pluck === true) stmt.pluck(false);
        else stmt.raw(false);
      }
    } catch (e) {
      throw translate(e);
    } finally {
      this.#deadline = Infinity;
      this.#endsBudget = undefined;
      const ms = performance.now() - start;
      holding(ms);
      budget?.spend(ms);
    }
  }

  async execute(sql: string, params: readonly unknown[] = NO_PARAMS, options?: ExecuteOptions): Promise<QueryResult> {
    const turn = turnIfHeld();
    if (turn !== undefined) await turn;
    const start = performance.now();
    return this.run(this.statement(sql), params, options, start);
  }

  async begin(mode: 'write' | 'snapshot'): Promise<void> {
    // IMMEDIATE takes the write lock now (other processes wait, or get SQLITE_BUSY, here rather
    // than at a later write). A deferred BEGIN fixes the snapshot at its first read.
    const c = this.#controls();
    if (mode === 'write') await this.lockedWrite(() => c.beginWrite.run());
    else c.begin.run();
  }

  /**
   * Runs `write`, which needs the database's write lock, waiting for it while another process
   * holds it — between tries, so that other requests are served meanwhile (SQLite's busy_timeout
   * would sleep in the statement). Past the wait: STORAGE_BUSY (503, Retry-After).
   */
  async lockedWrite<T>(write: () => T): Promise<T> {
    const deadline = Date.now() + this.#lockWaitMs;
    for (let delay = 2; ; delay = Math.min(delay * 2, LOCK_POLL_MAX_MS)) {
      try {
        return write();
      } catch (e) {
        if (!isLocked(e)) throw translate(e);
        if (Date.now() >= deadline) throw lockedOut(this.#lockWaitMs, e);
        await sleep(Math.min(delay, Math.max(1, deadline - Date.now())));
      }
    }
  }

  async commit(): Promise<void> {
    // (a full disk shows here, when the pages are written)
    try {
      this.#controls().commit.run();
    } catch (e) {
      throw translate(e);
    }
  }

  async rollback(): Promise<void> {
    if (this.db.inTransaction) this.#controls().rollback.run();
  }

  async savepoint(name: string): Promise<void> {
    this.db.exec(`SAVEPOINT ${name}`);
  }

  async rollbackTo(name: string): Promise<void> {
    this.db.exec(`ROLLBACK TO ${name}`);
  }

  async releaseSavepoint(name: string): Promise<void> {
    this.db.exec(`RELEASE ${name}`);
  }

  /** better-sqlite3 runs statements synchronously: none can be running while JavaScript has control. */
  async cancel(): Promise<void> {}
}

/**
 * The snapshot of an in-memory database, which has one connection only: its reads go through that
 * connection and see what it sees, an open transaction's writes included. There is no other
 * connection whose commits it could be kept from seeing.
 */
class SharedReads implements Connection {
  constructor(readonly c: SqliteConnection) {}
  execute(sql: string, params?: readonly unknown[], options?: ExecuteOptions): Promise<QueryResult> {
    return this.c.execute(sql, params, options);
  }
  async begin(): Promise<void> {}
  async commit(): Promise<void> {}
  async rollback(): Promise<void> {}
  async savepoint(): Promise<void> {
    throw new Error('a snapshot does not write');
  }
  rollbackTo = this.savepoint;
  releaseSavepoint = this.savepoint;
  async cancel(): Promise<void> {}
}

export class SqliteDriver implements Driver {
  readonly dialect = sqliteDialect;
  readonly #file: string;
  readonly #busyTimeoutMs: number;
  readonly queryTimeoutMs: number;
  readonly #writer: SqliteConnection;
  readonly #reader: SqliteConnection;
  /** an in-memory database's snapshots (undefined for a file) */
  readonly #shared: SharedReads | undefined;
  readonly #idle: SqliteConnection[] = [];
  readonly #lent = new Set<SqliteConnection>();
  /** snapshots waiting for a connection, all MAX_SNAPSHOT_CONNECTIONS being lent */
  readonly #waiting: ((c: SqliteConnection) => void)[] = [];
  /** callers in line for the writer (the one before them may hold it) */
  #writersWaiting = 0;

  waiting(): number {
    return this.#writersWaiting + this.#waiting.length;
  }
  /** resolves when the writer is free; each writer user chains onto it */
  #writerFree: Promise<void> = Promise.resolve();
  /** frees the writer for the next user */
  #freeWriter: (() => void) | undefined;
  #closing: Promise<void> | undefined;

  constructor(file: string, options: SqliteOptions = {}) {
    this.#file = file;
    this.#busyTimeoutMs = options.busyTimeoutMs ?? SQLITE_BUSY_TIMEOUT_MS;
    this.queryTimeoutMs = options.queryTimeoutMs ?? 0;
    this.#writer = new SqliteConnection(file, false, this.#busyTimeoutMs, this.queryTimeoutMs);
    // Setting the file up may meet another process's lock (a second instance starting while the
    // first makes the file WAL or seeds it): SQLite's own wait is fine here, before anything is
    // served, and then the writer waits in lockedWrite() again (busy_timeout 0).
    this.#writer.db.pragma(`busy_timeout = ${this.#busyTimeoutMs}`);
    prepareSpace(this.#writer.db, file);
    this.#writer.db.pragma('journal_mode = WAL');
    this.#writer.db.pragma('synchronous = NORMAL');
    this.#writer.db.pragma('busy_timeout = 0');
    // An in-memory database cannot be opened twice: it reads through the writer (and so sees
    // an open transaction's writes; use a file for real isolation).
    const memory = file === ':memory:' || file === '';
    this.#reader = memory ? this.#writer : new SqliteConnection(file, true, this.#busyTimeoutMs, this.queryTimeoutMs);
    this.#shared = memory ? new SharedReads(this.#writer) : undefined;
  }

  /** A read runs on the reader; a statement that writes (readonly false) waits for the writer. */
  async execute(sql: string, params: readonly unknown[] = NO_PARAMS, options?: ExecuteOptions): Promise<QueryResult> {
    const turn = turnIfHeld();
    if (turn !== undefined) await turn;
    const start = performance.now();
    const stmt = this.#reader.statement(sql);
    if (stmt.readonly) return this.#reader.run(stmt, params, options, start);
    await this.acquire('write');
    try {
      const writer = this.#writer;
      return await writer.lockedWrite(() => writer.run(writer.statement(sql), params, options));
    } finally {
      this.release(this.#writer);
    }
  }

  async acquire(kind: 'write' | 'snapshot'): Promise<Connection> {
    switch (kind) {
      case 'write': {
        const before = this.#writerFree;
        let free!: () => void;
        this.#writerFree = new Promise<void>((resolve) => (free = resolve));
        this.#writersWaiting++;
        try {
          await before;
        } finally {
          this.#writersWaiting--;
        }
        this.#freeWriter = free;
        return this.#writer;
      }
      case 'snapshot': {
        if (this.#shared) return this.#shared;
        // bounded: past the most connections open at once, wait for one to be given back
        if (this.#lent.size >= MAX_SNAPSHOT_CONNECTIONS) return new Promise<SqliteConnection>((resolve) => this.#waiting.push(resolve));
        const c = this.#idle.pop() ?? new SqliteConnection(this.#file, true, this.#busyTimeoutMs, this.queryTimeoutMs);
        this.#lent.add(c);
        return c;
      }
      default:
        throw new Error(`unknown connection kind ${kind satisfies never}`);
    }
  }

  release(c: Connection): void {
    if (c === this.#shared) return;
    const conn = c as SqliteConnection;
    if (conn.db.open && conn.db.inTransaction) conn.db.exec('ROLLBACK');
    if (conn === this.#writer) {
      const free = this.#freeWriter;
      this.#freeWriter = undefined;
      free?.();
      return;
    }
    const next = this.#waiting.shift();
    if (next && conn.db.open) return next(conn); // handed to a waiting snapshot, still lent
    this.#lent.delete(conn);
    if (this.#idle.length < IDLE_SNAPSHOT_CONNECTIONS && conn.db.open) this.#idle.push(conn);
    else if (conn.db.open) conn.db.close();
  }

  /** Another connection (another process) holds the database's lock: SQLITE_BUSY, or SQLITE_LOCKED. */
  isRetryable(error: unknown): boolean {
    // (STORAGE_BUSY: the lock waited for in vain; the whole unit may be run again, when asked)
    return isLocked(error) || (error instanceof DatasetError && error.code === 'STORAGE_BUSY');
  }

  /** Closes once (later calls wait for the same close). */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    await this.acquire('write'); // never given back: the driver is done
    for (const c of [...this.#idle, ...this.#lent]) c.db.close();
    if (this.#reader !== this.#writer) this.#reader.db.close();
    this.#writer.db.close();
  }
}

/** Another connection (another process) holds the database's lock: SQLITE_BUSY, or SQLITE_LOCKED. */
function isLocked(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

function lockedOut(waitedMs: number, cause: unknown): DatasetError {
  return new DatasetError('STORAGE_BUSY', `another process holds the database's write lock: waited ${waitedMs / 1000} s for it, nothing was changed; try again`, { retryAfterS: 1, cause });
}

/** SQLite's "UNIQUE constraint failed: Company.companyCode" becomes a ConstraintError; a full disk STORAGE_FULL. */
function translate(e: unknown): unknown {
  const code = (e as { code?: string }).code ?? '';
  if (code === 'SQLITE_FULL') return new DatasetError('STORAGE_FULL', 'the disk holding the database is full: the write was not made; free space, then try again', { cause: e });
  if (!code.startsWith('SQLITE_CONSTRAINT')) return e;
  const m = /constraint failed: ([^.\s]+)\.(\S+)/.exec((e as Error).message);
  const kind = code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ? 'unique' : code === 'SQLITE_CONSTRAINT_NOTNULL' ? 'notNull' : 'other';
  return new ConstraintError(kind, m?.[1], m?.[2], e);
}
