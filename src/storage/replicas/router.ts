// The driver of a PostgreSQL primary with read replicas (--db-replica): transactions, and every
// statement that may write or lock, go to the primary; reads outside a transaction (a statement on
// its own that only reads, or a request's read snapshot) go to a replica that has replayed every
// WAL record the primary had written when the read began — else to the primary.
//
// The primary's position is asked at each read (one small statement, shared by the reads asking at
// once: FreshReading): a replica then answers only what the primary would have, so a client reads
// its writes on every instance, with or without a session, and entity sets, sessions, uploads and
// locks stored by any instance are seen (docs/decisions.md, "Read replicas"). The same statement
// reads the global stamp, which a standby cannot show (statements.ts).
//
// A monitor checks each replica every REPLICA_CHECK_MS: one that does not answer, is no standby,
// or lags more than the bound (--db-replica-max-lag) is left out until a check finds it back; a
// read that fails on a replica because it went away, or that the standby cancelled for a conflict
// with recovery, is run again on the primary.

import { DatasetError } from '../../errors/dataset-error.js';
import { postgresDialect } from '../../sql/dialect-postgres.js';
import type { Connection, Driver, ExecuteOptions, QueryResult } from '../driver.js';
import { PostgresDriver, type PostgresOptions } from '../postgres.js';
import { FreshReading } from './fresh-reading.js';
import { isUnavailable, ReplicaConnection } from './replica-connection.js';
import { LSN_BYTES, Replica, type ReplicaState } from './replica.js';
import { DEFAULT_REPLICA_MAX_LAG_MS, REPLICA_CHECK_MS } from './limits.js';
import { readsOnly, withPrimaryStamp } from './statements.js';
import { GLOBAL_STAMP_TABLE } from '../system-tables/tables.js';

/** primary positions kept to tell a replica's lag in time (one per position seen to move) */
const KEPT_POSITIONS = 1024;

export interface ReplicaOptions {
  /** the replicas' URLs (each a hot standby of the primary) */
  readonly urls: readonly string[];
  /** a replica further behind than this (ms) is left out (DEFAULT_REPLICA_MAX_LAG_MS) */
  readonly maxLagMs?: number;
  /** told where each read outside a transaction went (a statement on its own, or a snapshot): for tests and benchmarks */
  readonly onRead?: (by: 'replica' | 'primary') => void;
}

/** What the primary's position read says: the WAL written so far (bytes), and the global stamp. */
interface PrimaryPosition {
  readonly lsn: number;
  readonly stamp: number;
}

const POSITION = `SELECT ${LSN_BYTES('pg_current_wal_insert_lsn()')} AS lsn, COALESCE(pg_sequence_last_value(to_regclass($1)), 0) AS stamp`;
const STAMP_NAME = [postgresDialect.sql.quote(GLOBAL_STAMP_TABLE)];

/** run again on the primary: the replica went away, or cancelled the read for a conflict with recovery */
const runsOnPrimary = (e: unknown): boolean => e instanceof DatasetError && (e.code === 'STORAGE_UNAVAILABLE' || e.code === 'TRANSACTION_CONFLICT');

export class ReplicatedDriver implements Driver {
  readonly dialect = postgresDialect;
  readonly queryTimeoutMs: number;
  readonly primary: PostgresDriver;
  readonly replicas: readonly Replica[];
  readonly maxLagMs: number;
  readonly #position: FreshReading<PrimaryPosition>;
  /** the primary's positions as they moved: when each was first seen */
  readonly #seen: { at: number; lsn: number }[] = [];
  #turn = 0;
  /** the latest position the primary answered */
  #last: PrimaryPosition | undefined;
  #timer: NodeJS.Timeout | undefined;
  #checking = false;
  /** reads outside a transaction answered by a replica, and by the primary */
  readonly served = { replica: 0, primary: 0 };
  readonly #onRead: ((by: 'replica' | 'primary') => void) | undefined;

  constructor(url: string, replicas: ReplicaOptions, options: PostgresOptions = {}) {
    this.primary = new PostgresDriver(url, options);
    this.queryTimeoutMs = this.primary.queryTimeoutMs;
    this.maxLagMs = replicas.maxLagMs ?? DEFAULT_REPLICA_MAX_LAG_MS;
    this.replicas = replicas.urls.map((u) => new Replica(u, options));
    this.#position = new FreshReading(() => this.#readPosition());
    this.#onRead = replicas.onRead;
  }

  #served(by: 'replica' | 'primary'): void {
    this.served[by]++;
    this.#onRead?.(by);
  }

  get address(): string {
    return this.primary.address;
  }

  /** The primary's check (storage/open.ts); then each replica's first check, which may find it down (it is then left out, not an error). */
  async check(): Promise<void> {
    await this.primary.check();
    await this.#checkReplicas();
    this.#timer = setInterval(() => void this.#checkReplicas(), REPLICA_CHECK_MS);
    this.#timer.unref();
  }

  /** Each replica as the last check saw it. */
  replicaStates(): ReplicaState[] {
    return this.replicas.map((r) => r.state());
  }

  /** Checks every replica now (the monitor's tick; tests call it to skip a wait). */
  async #checkReplicas(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    try {
      await this.#position.get().catch(() => undefined);
      await Promise.all(this.replicas.map((r) => r.check((replayed) => this.#lagOf(replayed))));
    } finally {
      this.#checking = false;
    }
  }

  checkReplicas(): Promise<void> {
    return this.#checkReplicas();
  }

  async #readPosition(): Promise<PrimaryPosition> {
    const { rows } = await this.primary.execute(POSITION, STAMP_NAME);
    const row = rows[0] as { lsn: number; stamp: number };
    const position = { lsn: Number(row.lsn), stamp: Number(row.stamp) };
    this.#saw(position.lsn);
    // (two readings may end out of order: the latest stays)
    const last = this.#last;
    if (last === undefined || (position.lsn >= last.lsn && position.stamp >= last.stamp)) this.#last = position;
    return position;
  }

  #saw(lsn: number): void {
    const last = this.#seen.at(-1);
    if (last !== undefined && lsn <= last.lsn) return;
    const now = performance.now();
    this.#seen.push({ at: now, lsn });
    // (kept: twice the bound back, and the latest whatever its age)
    const horizon = now - 2 * Math.max(this.maxLagMs, REPLICA_CHECK_MS * 5);
    while (this.#seen.length > 1 && (this.#seen.length > KEPT_POSITIONS || this.#seen[0].at < horizon)) this.#seen.shift();
  }

  /** How long (ms) the primary has held a position the replica has not replayed: 0 when it replayed the last one seen. */
  #lagOf(replayed: number): number {
    const missing = this.#seen.find((p) => p.lsn > replayed);
    return missing === undefined ? 0 : performance.now() - missing.at;
  }

  #usable(r: Replica): boolean {
    return r.up && r.lagMs <= this.maxLagMs;
  }

  /** A replica that has replayed `lsn`, as last seen or asked now (one of them asked), if any. */
  async #replicaFor(lsn: number): Promise<Replica | undefined> {
    const n = this.replicas.length;
    const start = this.#turn++ % n;
    let behind: Replica | undefined;
    for (let i = 0; i < n; i++) {
      const r = this.replicas[(start + i) % n];
      if (!this.#usable(r)) continue;
      if (r.replayed >= lsn) return r;
      behind ??= r;
    }
    if (behind === undefined) return undefined;
    try {
      return (await behind.replayedNow()) >= lsn ? behind : undefined;
    } catch (e) {
      behind.markDown(e);
      return undefined;
    }
  }

  /** A usable replica known to have replayed `lsn` (no question asked), if any. */
  #knownAt(lsn: number): Replica | undefined {
    const n = this.replicas.length;
    const start = this.#turn++ % n;
    for (let i = 0; i < n; i++) {
      const r = this.replicas[(start + i) % n];
      if (this.#usable(r) && r.replayed >= lsn) return r;
    }
    return undefined;
  }

  /**
   * While a replica is known to have replayed the latest position the primary answered, a read
   * goes to it at once, beside the question to the primary it needs (one round trip of waiting,
   * not two): it stands when what the replica had replayed before the read was sent covers what
   * the primary answers (a position taken after the read began); else it is dropped (undefined)
   * and read again as any read is. Its stamp is that latest position's: no newer than its data,
   * no older than a stamp answered before the read began.
   */
  #readAhead(sql: string, params: readonly unknown[], options: ExecuteOptions | undefined): Promise<QueryResult | undefined> | undefined {
    const last = this.#last;
    const replica = last === undefined ? undefined : this.#knownAt(last.lsn);
    if (last === undefined || replica === undefined) return undefined;
    const replayed = replica.replayed;
    const s = withPrimaryStamp(sql, params, last.stamp);
    return Promise.allSettled([this.#position.get(), replica.driver.execute(s.sql, s.params, options)]).then(([position, read]) => {
      if (read.status === 'rejected') {
        if (!runsOnPrimary(read.reason)) throw read.reason;
        if (isUnavailable(read.reason)) replica.markDown(read.reason);
        return undefined;
      }
      if (position.status === 'rejected') throw position.reason;
      if (replayed < position.value.lsn) return undefined;
      return this.#stampStands(s.sql !== sql, last.stamp).then((stands) => {
        if (!stands) return undefined;
        this.#served('replica');
        return read.value;
      });
    });
  }

  /**
   * Whether a replica's answer that read the stamp as `stamp` (the primary's, read before the
   * replica's read) may stand: the replica may show writes that committed after that stamp was
   * read, and the answer would then name a newer state of the data with an older stamp (a
   * collection's ETag W/"g<stamp>-…" naming two states: If-None-Match answering 304 over a
   * change). It stands when the primary's stamp, read after the replica's read ended, is still
   * `stamp`; else the read is made on the primary. (Only statements that read the stamp pay it.)
   */
  async #stampStands(readsStamp: boolean, stamp: number): Promise<boolean> {
    if (!readsStamp) return true;
    return (await this.#position.get()).stamp === stamp;
  }

  #anyUsable(): boolean {
    return this.replicas.some((r) => this.#usable(r));
  }

  async execute(sql: string, params: readonly unknown[] = [], options?: ExecuteOptions): Promise<QueryResult> {
    if (!readsOnly(sql)) return this.primary.execute(sql, params, options);
    if (!this.#anyUsable()) return this.#onPrimary(sql, params, options);
    const ahead = await this.#readAhead(sql, params, options);
    if (ahead !== undefined) return ahead;
    const position = await this.#position.get();
    const replica = await this.#replicaFor(position.lsn);
    if (replica === undefined) return this.#onPrimary(sql, params, options);
    const s = withPrimaryStamp(sql, params, position.stamp);
    let result: QueryResult;
    try {
      result = await replica.driver.execute(s.sql, s.params, options);
    } catch (e) {
      if (!runsOnPrimary(e)) throw e;
      if (isUnavailable(e)) replica.markDown(e);
      return this.#onPrimary(sql, params, options);
    }
    if (!(await this.#stampStands(s.sql !== sql, position.stamp))) return this.#onPrimary(sql, params, options);
    this.#served('replica');
    return result;
  }

  #onPrimary(sql: string, params: readonly unknown[], options: ExecuteOptions | undefined): Promise<QueryResult> {
    this.#served('primary');
    return this.primary.execute(sql, params, options);
  }

  async acquire(kind: 'write' | 'snapshot'): Promise<Connection> {
    if (kind === 'write') return this.primary.acquire(kind);
    if (!this.#anyUsable()) {
      this.#served('primary');
      return this.primary.acquire('snapshot');
    }
    const position = await this.#position.get();
    const replica = await this.#replicaFor(position.lsn);
    if (replica !== undefined) {
      let inner: Connection | undefined;
      try {
        inner = await replica.driver.acquire('snapshot');
        // the snapshot is fixed now (its first statement), and stands only while the primary's
        // stamp has not moved since `position`: else it could show writes newer than its stamp
        // (#stampStands); the manager's begin() then finds it begun (ReplicaConnection)
        await inner.begin('snapshot');
        await inner.execute('SELECT 1');
      } catch (e) {
        if (inner !== undefined) {
          await inner.rollback().catch(() => undefined);
          replica.driver.release(inner);
        }
        if (!isUnavailable(e)) throw e;
        replica.markDown(e);
        inner = undefined;
      }
      if (inner !== undefined) {
        // (the primary's failure here is no replica's: it is not left out for it)
        const stands = await this.#stampStands(true, position.stamp).catch((e: unknown) => {
          replica.driver.release(inner!);
          throw e;
        });
        if (stands) {
          this.#served('replica');
          return new ReplicaConnection(inner, replica, position.stamp, true);
        }
        await inner.rollback().catch(() => undefined);
        replica.driver.release(inner);
      }
    }
    this.#served('primary');
    return this.primary.acquire('snapshot');
  }

  release(c: Connection): void {
    if (c instanceof ReplicaConnection) c.replica.driver.release(c.inner);
    else this.primary.release(c);
  }

  waiting(): number {
    return this.primary.waiting() + this.replicas.reduce((n, r) => n + r.driver.waiting(), 0);
  }

  isRetryable(error: unknown): boolean {
    return this.primary.isRetryable(error);
  }

  notify(channel: string, payload: string): Promise<void> {
    return this.primary.notify(channel, payload);
  }

  listen(channel: string, onMessage: (payload: string) => void, onLost: () => void): Promise<() => Promise<void>> {
    return this.primary.listen(channel, onMessage, onLost);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await Promise.all([this.primary.close(), ...this.replicas.map((r) => r.close())]);
  }
}
