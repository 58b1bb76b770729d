// SQLite storage over better-sqlite3 in WAL mode. One writer connection (writes and everything
// inside a transaction, serialised by a lock) and one reader connection (reads outside a
// transaction see committed data only and never wait for a writer).

import { AsyncLocalStorage } from 'node:async_hooks';
import Database from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { sqliteDialect } from '../sql/dialect-sqlite.js';
import { fold } from '../util/fold.js';
import { ConstraintError, type Row, type StorageAdapter } from './adapter.js';

/** Prepared statements kept per connection; the oldest is dropped past this many. */
const STATEMENT_CACHE_SIZE = 500;

class Connection {
  readonly db: Database.Database;
  readonly #cache = new Map<string, Statement>();

  constructor(file: string, readonly: boolean) {
    this.db = new Database(file, { readonly, fileMustExist: readonly });
    this.db.pragma('busy_timeout = 5000');
    // the text fold of queries on values not stored folded (properties of object attributes)
    this.db.function('dataset_fold', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? fold(v) : v));
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
}

/** Where a call stands in a transaction: nested calls under one frame take turns (their savepoints must not overlap). */
interface Frame {
  readonly t: Transaction;
  chain: Promise<void>;
}

/** One open transaction: its savepoint counter and its rollback and after-commit hooks. */
interface Transaction {
  readonly onRollback: (() => void)[];
  readonly afterCommit: (() => Promise<void>)[];
  /** set when an abort signal rolled it back before fn ended: fn's result is refused with it */
  aborted?: unknown;
  /** set the moment COMMIT ran: an abort after it changes nothing */
  committed?: boolean;
}

export class SqliteAdapter implements StorageAdapter {
  readonly dialect = sqliteDialect;
  readonly #writer: Connection;
  readonly #reader: Connection;
  readonly #tx = new AsyncLocalStorage<Frame>();
  /** the transaction holding the writer, if any; a call whose token is another one is outside it */
  #current: Transaction | undefined;
  /** resolves when the writer is free; each writer user chains onto it */
  #writerFree: Promise<void> = Promise.resolve();
  /** savepoint names are numbered on the connection, never reused */
  #savepointSeq = 0;

  constructor(file: string) {
    this.#writer = new Connection(file, false);
    this.#writer.db.pragma('journal_mode = WAL');
    this.#writer.db.pragma('synchronous = NORMAL');
    // An in-memory database cannot be opened twice: it reads through the writer (and so sees
    // an open transaction's writes; use a file for real isolation).
    this.#reader = file === ':memory:' || file === '' ? this.#writer : new Connection(file, true);
  }

  /** The transaction this call belongs to: only the one open now (a finished one's stray calls are outside). */
  #inTx(): boolean {
    const frame = this.#tx.getStore();
    return frame !== undefined && frame.t === this.#current;
  }

  async all(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    if (this.#inTx()) return this.#writer.statement(sql).all(...params) as Row[];
    return this.#reader.statement(sql).all(...params) as Row[];
  }

  async column(sql: string, params: readonly unknown[] = []): Promise<unknown[]> {
    const stmt = (this.#inTx() ? this.#writer : this.#reader).statement(sql);
    // pluck() is a mode of the (cached, shared) statement: on for this call only
    stmt.pluck(true);
    try {
      return stmt.all(...params) as unknown[];
    } finally {
      stmt.pluck(false);
    }
  }

  async get(sql: string, params: readonly unknown[] = []): Promise<Row | undefined> {
    if (this.#inTx()) {
      try {
        return this.#writer.statement(sql).get(...params) as Row | undefined;
      } catch (e) {
        throw translate(e);
      }
    }
    return this.#reader.statement(sql).get(...params) as Row | undefined;
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    if (this.#inTx()) return this.#write(sql, params);
    return this.#withWriter(async () => this.#write(sql, params));
  }

  /** A write statement (INSERT … RETURNING goes through get() inside a transaction). */
  #write(sql: string, params: readonly unknown[]): number {
    try {
      return this.#writer.statement(sql).run(...params).changes;
    } catch (e) {
      throw translate(e);
    }
  }

  async exec(sql: string): Promise<void> {
    if (this.#inTx()) return void this.#writer.db.exec(sql);
    return this.#withWriter(async () => void this.#writer.db.exec(sql));
  }

  async transaction<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const db = this.#writer.db;
    const frame = this.#tx.getStore();
    if (frame && frame.t === this.#current) {
      // Nested: a savepoint, so that an inner failure the caller catches undoes only the inner
      // writes. Calls under one frame (two saves awaited together, say) take turns: savepoints
      // must nest, never interleave.
      const run = frame.chain.then(() => this.#savepoint(frame.t, fn));
      frame.chain = run.then(() => undefined, () => undefined);
      return run;
    }
    const t: Transaction = { onRollback: [], afterCommit: [] };
    const result = await this.#withWriter(async (release) => {
      if (signal?.aborted) throw signal.reason; // aborted while it waited for the writer
      this.#current = t;
      const rollback = () => {
        if (db.inTransaction) db.exec('ROLLBACK');
        for (const undo of t.onRollback.reverse()) undo();
      };
      // A function past its time limit: its transaction is undone now, and the writer freed, rather
      // than when (if ever) the function next touches the datastore.
      const onAbort = () => {
        if (this.#current !== t || t.committed) return;
        t.aborted = signal?.reason ?? new Error('the transaction was aborted');
        rollback();
        this.#current = undefined;
        release();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        return await this.#tx.run({ t, chain: Promise.resolve() }, async () => {
          db.exec('BEGIN IMMEDIATE');
          let value: T;
          try {
            value = await fn();
          } catch (e) {
            if (t.aborted === undefined) rollback();
            throw e;
          }
          if (t.aborted !== undefined) throw t.aborted; // undone already: nothing of it commits
          db.exec('COMMIT');
          t.committed = true;
          return value;
        });
      } finally {
        signal?.removeEventListener('abort', onAbort);
        if (this.#current === t) this.#current = undefined;
        // On Node 20 an enabled AsyncLocalStorage makes every promise of the process pay for
        // async hooks; with no transaction open it is switched off (run() switches it on again).
        if (this.#current === undefined) this.#tx.disable();
      }
    });
    // committed: what waited for the commit runs now, with the writer free again (it may write)
    for (const run of t.afterCommit) await run().catch(() => undefined);
    return result;
  }

  async #savepoint<T>(t: Transaction, fn: () => Promise<T>): Promise<T> {
    const db = this.#writer.db;
    // A transaction aborted (or ended) while this call waited its turn: the connection may be
    // another transaction's by now, so nothing more of this one touches it.
    const alive = () => t.aborted === undefined && this.#current === t;
    if (!alive()) throw t.aborted ?? new Error('the transaction this call belonged to has ended');
    // unique on the connection, so that a stray command could never name another transaction's
    const name = `sp${++this.#savepointSeq}`;
    const hooks = t.onRollback.length;
    const commits = t.afterCommit.length;
    db.exec(`SAVEPOINT ${name}`);
    let result: T;
    try {
      result = await this.#tx.run({ t, chain: Promise.resolve() }, fn);
    } catch (e) {
      if (alive()) {
        db.exec(`ROLLBACK TO ${name}`);
        db.exec(`RELEASE ${name}`);
        for (const undo of t.onRollback.splice(hooks).reverse()) undo();
        t.afterCommit.splice(commits); // what the savepoint did will never be committed
      }
      throw alive() ? e : (t.aborted ?? e);
    }
    if (!alive()) throw t.aborted ?? new Error('the transaction this call belonged to has ended');
    db.exec(`RELEASE ${name}`);
    return result;
  }

  onRollback(undo: () => void): void {
    if (this.#inTx()) (this.#current as Transaction).onRollback.push(undo);
  }

  async afterCommit(run: () => Promise<void>): Promise<void> {
    if (this.#inTx()) (this.#current as Transaction).afterCommit.push(run);
    else await run();
  }

  async columns(table: string): Promise<string[]> {
    const rows = this.#writer.db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[];
    return rows.map((r) => r.name);
  }

  async close(): Promise<void> {
    await this.#writerFree;
    if (this.#reader !== this.#writer) this.#reader.db.close();
    this.#writer.db.close();
  }

  /** Runs fn once every earlier user of the writer has finished; the next one waits until fn ends, or until fn calls release(). */
  #withWriter<T>(fn: (release: () => void) => Promise<T>): Promise<T> {
    let release!: () => void;
    const freed = new Promise<void>((resolve) => (release = resolve));
    const before = this.#writerFree;
    this.#writerFree = freed;
    return before.then(() => fn(release)).finally(release);
  }
}

/** SQLite's "UNIQUE constraint failed: Company.companyCode" becomes a ConstraintError. */
function translate(e: unknown): unknown {
  const code = (e as { code?: string }).code ?? '';
  if (!code.startsWith('SQLITE_CONSTRAINT')) return e;
  const m = /constraint failed: ([^.\s]+)\.(\S+)/.exec((e as Error).message);
  const kind = code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ? 'unique' : code === 'SQLITE_CONSTRAINT_NOTNULL' ? 'notNull' : 'other';
  return new ConstraintError(kind, m?.[1], m?.[2], e);
}
