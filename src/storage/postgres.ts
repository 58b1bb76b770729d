// The PostgreSQL driver, over node-postgres (pg) with a pool: each statement on its own takes a
// pooled connection for its time; a transaction or a snapshot holds one until it is given back.
// Several write transactions run at once (READ COMMITTED: the stamp check stays in the UPDATE that
// writes, which waits for a concurrent writer of the same row and then sees its stamp).

import { connect as netConnect } from 'node:net';
import pg from 'pg';
import { PG_CANCEL_WAIT_MS, PG_CONNECT_TIMEOUT_MS, PG_NAMED_STATEMENTS, PG_POOL_SIZE } from '../config/limits.js';
import { postgresDialect } from '../sql/dialect-postgres.js';
import { DatasetError } from '../errors/dataset-error.js';
import { queryTimedOut, type StatementBudget } from './budget.js';
import { ConstraintError, type Connection, type Driver, type ExecuteOptions, type QueryResult, type Row } from './driver.js';

const NO_PARAMS: readonly unknown[] = [];

export interface PostgresOptions {
  /** the most connections open at once (PG_POOL_SIZE by default) */
  readonly poolSize?: number;
  /** how long a statement waits for a connection (connecting, or for one of the pool to come free) before it fails with 503 (PG_CONNECT_TIMEOUT_MS) */
  readonly waitMs?: number;
  /** the query time limit (ms): PostgreSQL's statement_timeout on every connection, a statement past it stopped with QUERY_TIMEOUT; none by default (0) */
  readonly queryTimeoutMs?: number;
}

// Numbers come back as numbers: 64-bit integers (counts, sums, long64 values, stamps) and numerics
// (averages) are read as JavaScript numbers, as SQLite gives them. Dates stay Dates (UTC).
const INT8 = 20;
const NUMERIC = 1700;
const TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8) return (v: string) => Number(v);
    if (oid === NUMERIC) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format ?? 'text');
  },
} as pg.CustomTypesConfig;

/** SQLSTATEs of a transaction that another one got in the way of (serialization failure, deadlock): running it again may succeed. */
const CONFLICTS = new Set(['40001', '40P01']);

/**
 * Names of prepared statements, shared by every connection: a statement text gets one the first
 * time it is run (parsed once per connection, then only bound), up to PG_NAMED_STATEMENTS texts;
 * past that, texts run unnamed (parsed every time), so a server's prepared statements stay bounded.
 */
class StatementNames {
  readonly #names = new Map<string, string>();

  nameOf(sql: string): string | undefined {
    let name = this.#names.get(sql);
    if (name === undefined && this.#names.size < PG_NAMED_STATEMENTS) {
      name = `ds${this.#names.size + 1}`;
      this.#names.set(sql, name);
    }
    return name;
  }
}

async function query(
  client: pg.Pool | pg.PoolClient,
  names: StatementNames,
  sql: string,
  params: readonly unknown[],
  options: ExecuteOptions | undefined,
): Promise<QueryResult> {
  const pluck = options?.pluck === true;
  try {
    const config: pg.QueryArrayConfig | pg.QueryConfig = {
      text: sql,
      values: params as unknown[],
      name: names.nameOf(sql),
      ...(pluck || options?.arrays === true ? { rowMode: 'array' as const } : {}),
    };
    const r = await client.query(config as pg.QueryConfig);
    const all = options?.first === true && r.rows.length > 1 ? r.rows.slice(0, 1) : r.rows;
    const rows = pluck ? (all as unknown as unknown[][]).map((row) => row[0] as Row) : (all as Row[]);
    // a statement without rows (INSERT, UPDATE, DELETE) reports the rows it changed
    return { rows, rowCount: r.fields.length > 0 ? rows.length : (r.rowCount ?? 0) };
  } catch (e) {
    throw translate(e);
  }
}

/** What a pg client knows of its server process: what a cancel request names (pg keeps it, untyped). */
interface BackendKey {
  readonly processID?: number | null;
  readonly secretKey?: number | null;
  readonly host?: string;
  readonly port?: number;
}

/**
 * Asks the server to stop what `client`'s server process runs now, by PostgreSQL's cancel
 * request (a connection of its own, no pool connection needed: the pool may be full), as libpq's
 * PQcancel does. Resolves once the server has taken it (it closes the connection then), or
 * after PG_CANCEL_WAIT_MS; never fails. A cancel that comes once the statement is over stops
 * nothing: the connection runs no other statement before this resolves.
 */
function sendCancel(client: pg.PoolClient): Promise<void> {
  const key = client as unknown as BackendKey;
  if (typeof key.processID !== 'number' || typeof key.secretKey !== 'number') return Promise.resolve();
  const { processID, secretKey } = key;
  return new Promise<void>((resolve) => {
    const host = key.host ?? 'localhost';
    const port = key.port ?? 5432;
    const socket = host.startsWith('/') ? netConnect(`${host}/.s.PGSQL.${port}`) : netConnect(port, host);
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, PG_CANCEL_WAIT_MS);
    socket.on('connect', () => {
      // CancelRequest: length 16, code 80877102, the process id and its secret key
      const message = Buffer.alloc(16);
      message.writeInt32BE(16, 0);
      message.writeInt32BE(80877102, 4);
      message.writeInt32BE(processID, 8);
      message.writeInt32BE(secretKey, 12);
      socket.end(message);
    });
    socket.on('close', done);
    socket.on('error', done);
  });
}

/** The error of a statement stopped by a cancel (ours, or an abort's). */
const isCancelled = (e: unknown): boolean => (e as { code?: unknown } | null)?.code === '57014';

/**
 * Runs one statement (`run`, on `client` where it has one) within `budget`: refused when nothing
 * is left; where what is left ends before the connection's own statement_timeout (the query time
 * limit), stopped then by a cancel request; its time spent from the budget. The cancel costs
 * nothing unless it is sent: a timer.
 */
async function withinBudget(budget: StatementBudget, limitMs: number, client: pg.PoolClient | undefined, run: () => Promise<QueryResult>): Promise<QueryResult> {
  const left = budget.left();
  if (left <= 0) throw budget.exceeded();
  let cancel: Promise<void> | undefined;
  const timer = client !== undefined && bindsBefore(left, limitMs) ? setTimeout(() => (cancel = sendCancel(client)), Math.ceil(left)) : undefined;
  const start = performance.now();
  try {
    return await run();
  } catch (e) {
    throw cancel !== undefined && isCancelled(e) ? budget.exceeded() : e;
  } finally {
    clearTimeout(timer);
    budget.spend(performance.now() - start);
    if (cancel !== undefined) await cancel;
  }
}

/** What is left of a budget ends before a statement's own limit (0: none)? */
function bindsBefore(leftMs: number, limitMs: number): boolean {
  return limitMs === 0 || leftMs < limitMs;
}

class PostgresConnection implements Connection {
  /** a transaction is open on it (so that release rolls it back) */
  inTransaction = false;
  /** the connection broke while lent (the server went away between two statements): dropped, not pooled, when given back */
  broken: Error | undefined;
  /**
   * A lent client whose connection breaks between statements emits 'error' (the pool listens
   * only to idle ones): unheard, it would end the process. The next statement fails on its own.
   */
  readonly onError = (e: Error): void => {
    this.broken = e;
  };

  constructor(
    readonly client: pg.PoolClient,
    readonly driver: PostgresDriver,
    /** lent for a snapshot (it counts against the snapshots' share of the pool) */
    readonly snapshot: boolean,
  ) {
    client.on('error', this.onError);
  }

  /** Gives the client back to the pool (dropping it when it broke or failed to roll back). */
  giveBack(failure?: unknown): void {
    this.client.off('error', this.onError);
    const bad = this.broken ?? failure;
    this.client.release(bad === undefined ? undefined : bad instanceof Error ? bad : true);
  }

  /** the last statement asked for: a connection runs one at a time, so each waits for the one before */
  #last: Promise<unknown> = Promise.resolve();

  #queue<T>(run: () => Promise<T>): Promise<T> {
    const next = this.#last.then(run, run);
    this.#last = next.catch(() => undefined);
    return next;
  }

  execute(sql: string, params: readonly unknown[] = NO_PARAMS, options?: ExecuteOptions): Promise<QueryResult> {
    const budget = options?.budget;
    const run = () => query(this.client, this.driver.names, sql, params, options);
    return this.#queue(budget === undefined ? run : () => withinBudget(budget, this.driver.queryTimeoutMs, this.client, run));
  }

  #command(sql: string): Promise<void> {
    return this.#queue(async () => {
      try {
        await this.client.query(sql);
      } catch (e) {
        throw translate(e);
      }
    });
  }

  async begin(mode: 'write' | 'snapshot'): Promise<void> {
    // a snapshot: REPEATABLE READ fixes what every read of it sees at its first statement
    await this.#command(mode === 'write' ? 'BEGIN' : 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    this.inTransaction = true;
  }

  async commit(): Promise<void> {
    try {
      await this.#command('COMMIT');
    } finally {
      this.inTransaction = false;
    }
  }

  async rollback(): Promise<void> {
    if (!this.inTransaction) return;
    try {
      await this.#command('ROLLBACK');
    } finally {
      this.inTransaction = false;
    }
  }

  savepoint(name: string): Promise<void> {
    return this.#command(`SAVEPOINT ${name}`);
  }

  rollbackTo(name: string): Promise<void> {
    return this.#command(`ROLLBACK TO SAVEPOINT ${name}`);
  }

  releaseSavepoint(name: string): Promise<void> {
    return this.#command(`RELEASE SAVEPOINT ${name}`);
  }

  /** Asks the server to stop the statement this connection is running. */
  cancel(): Promise<void> {
    return sendCancel(this.client);
  }
}

export class PostgresDriver implements Driver {
  readonly dialect = postgresDialect;
  readonly queryTimeoutMs: number;
  readonly pool: pg.Pool;
  readonly names = new StatementNames();
  #closing: Promise<void> | undefined;
  readonly #waitMs: number;
  /** snapshots lent now, at most #maxSnapshots; those waiting for a turn */
  #snapshots = 0;
  readonly #maxSnapshots: number;
  readonly #waiting: (() => void)[] = [];

  waiting(): number {
    return this.pool.waitingCount + this.#waiting.length;
  }

  /** user@host:port/database, as pg resolves them (the URL's parts, else PG* variables, else defaults): for messages; no password */
  readonly address: string;

  constructor(url: string, options: PostgresOptions = {}) {
    const size = options.poolSize ?? PG_POOL_SIZE;
    if (!(size >= 2)) throw new RangeError('a PostgreSQL pool needs 2 connections or more (a request reading a snapshot may need a second one)');
    this.#waitMs = options.waitMs ?? PG_CONNECT_TIMEOUT_MS;
    // a quarter of the pool, one at least, is kept from snapshots
    this.#maxSnapshots = size - Math.max(1, Math.floor(size / 4));
    const queryTimeoutMs = Math.trunc(options.queryTimeoutMs ?? 0);
    this.queryTimeoutMs = queryTimeoutMs;
    this.pool = new pg.Pool({
      connectionString: url,
      max: size,
      types: TYPES,
      // times in UTC, and backslashes in string literals taken as they are (the LIKE escapes and
      // the fold function's literals rely on it), whatever the server's or the role's settings
      // (and the query time limit: the schema sync lifts it for its transaction, noStatementTimeout)
      options: `-c TimeZone=UTC -c standard_conforming_strings=on${queryTimeoutMs > 0 ? ` -c statement_timeout=${queryTimeoutMs}` : ''}`,
      // a server that does not answer (or a pool with no connection free that long) fails the request, never hangs it
      connectionTimeoutMillis: this.#waitMs,
    });
    const resolved = new pg.Client({ connectionString: url });
    this.address = `${resolved.user ?? ''}@${resolved.host}:${resolved.port}/${resolved.database ?? ''}`;
    // A pooled connection that breaks while idle (the server restarted, say) is dropped by the
    // pool; without a listener, its error would end the process.
    this.pool.on('error', () => {});
  }

  /**
   * Connects once and checks what the service needs of the server: UTF8 text (the text fold
   * normalizes Unicode) and PostgreSQL 13 or later (normalize()). Throws pg's error, or one saying
   * what is missing, in words an operator can act on.
   */
  async check(): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw new Error(connectFailure(e), { cause: e });
    }
    const ignore = () => {}; // a break shows in the query's own failure (see PostgresConnection.onError)
    client.on('error', ignore);
    try {
      const { rows } = await client.query<{ encoding: string; version: number }>(
        "SELECT current_setting('server_encoding') AS encoding, current_setting('server_version_num')::int AS version",
      );
      const [{ encoding, version }] = rows;
      if (version < 130000) throw new Error(`PostgreSQL ${Math.floor(version / 10000)} is too old: 13 or later is needed`);
      if (encoding !== 'UTF8') throw new Error(`the database's encoding is ${encoding}: create it with ENCODING 'UTF8'`);
    } finally {
      client.off('error', ignore);
      client.release();
    }
  }

  execute(sql: string, params: readonly unknown[] = NO_PARAMS, options?: ExecuteOptions): Promise<QueryResult> {
    const budget = options?.budget;
    if (budget === undefined) return query(this.pool, this.names, sql, params, options);
    return this.#onClientOfItsOwn(budget, sql, params, options as ExecuteOptions);
  }

  /**
   * A statement on its own with a budget: on a client taken for it (as pool.query takes one), so
   * that only the statement's own time is counted, not the wait for a client of a busy pool, and
   * so that it can be cancelled when its budget ends before its time limit; the client is given
   * back once no cancel can reach a later statement on it.
   */
  async #onClientOfItsOwn(budget: StatementBudget, sql: string, params: readonly unknown[], options: ExecuteOptions): Promise<QueryResult> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw translate(e);
    }
    let failure: unknown;
    // (a lent client whose connection breaks emits 'error': unheard, it would end the process; the
    // statement fails on its own, and the client is dropped)
    const broke = (e: unknown) => (failure ??= e);
    client.on('error', broke);
    try {
      return await withinBudget(budget, this.queryTimeoutMs, client, () => query(client, this.names, sql, params, options));
    } catch (e) {
      // (a connection that broke is dropped, not pooled)
      if (!isCancelled(e) && !(e instanceof ConstraintError) && !(e instanceof DatasetError && e.code !== 'STORAGE_UNAVAILABLE')) failure ??= e;
      throw e;
    } finally {
      client.off('error', broke);
      client.release(failure instanceof Error ? failure : failure === undefined ? undefined : new Error(String(failure)));
    }
  }

  async acquire(kind: 'write' | 'snapshot'): Promise<Connection> {
    if (kind === 'snapshot') await this.#snapshotTurn();
    try {
      return new PostgresConnection(await this.pool.connect(), this, kind === 'snapshot');
    } catch (e) {
      if (kind === 'snapshot') this.#snapshotDone();
      throw translate(e);
    }
  }

  /**
   * A request holding a snapshot may still need a connection of its own (an entity set kept, a
   * set's lifetime refreshed): snapshots never take the last connections of the pool, or N
   * requests holding N snapshots would each wait for an (N+1)th until their time ran out.
   */
  async #snapshotTurn(): Promise<void> {
    if (this.#snapshots < this.#maxSnapshots) {
      this.#snapshots++;
      return;
    }
    // as long as a connection of the pool may be waited for, then 503
    await new Promise<void>((resolve, reject) => {
      const turn = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiting.splice(this.#waiting.indexOf(turn), 1);
        reject(new DatasetError('STORAGE_UNAVAILABLE', `no database connection came free for reading within ${this.#waitMs / 1000} s (every one of the pool is busy): try again`));
      }, this.#waitMs);
      this.#waiting.push(turn);
    });
  }

  #snapshotDone(): void {
    const next = this.#waiting.shift();
    if (next) next(); // the turn passes on: the count stays
    else this.#snapshots--;
  }

  release(c: Connection): void {
    const conn = c as PostgresConnection;
    if (conn.snapshot) this.#snapshotDone();
    if (!conn.inTransaction || conn.broken) return conn.giveBack();
    // a transaction left open is rolled back first; a connection that cannot is dropped
    conn.rollback().then(
      () => conn.giveBack(),
      (e: unknown) => conn.giveBack(e ?? true),
    );
  }

  isRetryable(error: unknown): boolean {
    return error instanceof DatasetError && error.code === 'TRANSACTION_CONFLICT';
  }

  async notify(channel: string, payload: string): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  /**
   * LISTEN on a connection of its own (not the pool's: a pooled one goes back to others), at the
   * pool's address, kept alive by TCP keepalives; `onLost` once it breaks (the caller listens again
   * later: the feed polls meanwhile). Behind a pooler in transaction mode (PgBouncer) a LISTEN
   * hears nothing: the poll alone tells the other instances' changes there.
   */
  async listen(channel: string, onMessage: (payload: string) => void, onLost: () => void): Promise<() => Promise<void>> {
    const client = new pg.Client({ connectionString: this.pool.options.connectionString, connectionTimeoutMillis: this.#waitMs, keepAlive: true });
    let stopped = false;
    const lost = () => {
      if (stopped) return;
      stopped = true;
      onLost();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (m) => {
      if (m.channel === channel) onMessage(m.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (e) {
      stopped = true;
      await client.end().catch(() => undefined);
      throw e;
    }
    return async () => {
      stopped = true;
      await client.end().catch(() => undefined);
    };
  }

  close(): Promise<void> {
    this.#closing ??= this.pool.end();
    return this.#closing;
  }
}

/** Why a first connection failed, in an operator's words (pg's own message where it is clear already). */
function connectFailure(e: unknown): string {
  const err = e as { code?: string; message?: string };
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused: is the server running, and listening on that address and port?';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case '28P01':
    case '28000':
    case '3D000':
    case '42501':
      return err.message ?? String(e); // password authentication failed …, database "x" does not exist, permission denied …
    default:
      return /timeout/i.test(err.message ?? '') ? `no answer within ${PG_CONNECT_TIMEOUT_MS / 1000} s` : (err.message ?? String(e));
  }
}

/** `Key (email)=(a@b.c) already exists.` → email; `Key ("companyCode")=…` → companyCode */
function keyColumn(detail: string | undefined): string | undefined {
  const m = /^Key \((.+?)\)=/.exec(detail ?? '');
  if (!m) return undefined;
  const name = m[1];
  return name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name;
}

/**
 * A database that cannot serve now, whoever asks: a connection that failed or was lost (class 08),
 * a server going away or starting (57P01–57P04), out of resources (class 53: too many
 * connections, disk full, out of memory), the database itself gone (3D000, dropped while running).
 */
function isUnavailable(e: { code?: unknown }): boolean {
  const code = typeof e.code === 'string' ? e.code : '';
  return code.startsWith('08') || code.startsWith('53') || code.startsWith('57P') || code === '3D000'
    || ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND'].includes(code)
    || /Connection terminated|Client has encountered a connection error/.test(String((e as Error).message));
}

/** PostgreSQL's errors in the driver contract's terms: constraint failures, an unavailable server. */
function translate(e: unknown): unknown {
  if (e === null || typeof e !== 'object') return e;
  const err = e as pg.DatabaseError;
  switch (err.code) {
    case '23505':
      return new ConstraintError('unique', err.table, keyColumn(err.detail), e);
    case '23502':
      return new ConstraintError('notNull', err.table, err.column, e);
    default:
      if (typeof err.code === 'string' && err.code.startsWith('23')) return new ConstraintError('other', err.table, err.column, e);
      if (typeof err.code === 'string' && CONFLICTS.has(err.code)) {
        return new DatasetError('TRANSACTION_CONFLICT', 'the database stopped the transaction for a conflict with another one: nothing of it was kept; try again');
      }
      // statement_timeout (a cancel on abort is 57014 too, "due to user request")
      if (err.code === '57014' && /statement timeout/.test(String(err.message))) return queryTimedOut(0, e);
      // a pattern matched as a regular expression (sql/like-regex.ts) past what PostgreSQL compiles
      if (err.code === '2201B') {
        return new DatasetError('LIMIT_EXCEEDED', 'a pattern of the query is too long for PostgreSQL to match it (it matches long texts by a regular expression, and this one is too complex): shorten the pattern', { cause: e });
      }
      // text holding U+0000, which PostgreSQL text cannot (SQLite can): the caller's value, refused
      if (err.code === '22021' || err.code === '22P05') {
        return new DatasetError('INVALID_VALUE', 'a text holds the character U+0000 (NUL), which PostgreSQL cannot store or compare: remove it from the value');
      }
      if (/timeout exceeded when trying to connect/.test(String(err.message))) {
        return new DatasetError('STORAGE_UNAVAILABLE', `no database connection came free within ${PG_CONNECT_TIMEOUT_MS / 1000} s (every one of the pool is busy): try again`);
      }
      if (isUnavailable(err)) return new DatasetError('STORAGE_UNAVAILABLE', 'the database cannot be reached: try again once it is back');
      return e;
  }
}
