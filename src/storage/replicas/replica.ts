// One read replica (a PostgreSQL standby) as the router sees it: its pool, whether it is up, the
// WAL position it has replayed as last seen, and how far behind the primary it was at the last
// check. The router's monitor checks every replica at each tick; a read that needs a later
// position than the one last seen asks the replica again (FreshReading: one question for all the
// reads waiting at once).

import { PostgresDriver, type PostgresOptions } from '../postgres.js';
import { FreshReading } from './fresh-reading.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { REPLICA_ANSWER_MS } from './limits.js';

/** pg_lsn as a number of bytes into the WAL (a JavaScript number holds 8 PB of it exactly) */
export const LSN_BYTES = (lsn: string): string => `(${lsn} - '0/0'::pg_lsn)`;

const REPLAYED = `SELECT pg_is_in_recovery() AS standby, ${LSN_BYTES('pg_last_wal_replay_lsn()')} AS replayed`;

export interface ReplicaState {
  /** the URL's address, no password */
  readonly address: string;
  /** answered its last check, and is a standby */
  readonly up: boolean;
  /** behind the primary by this many ms at the last check (Infinity: down, or further than the positions kept) */
  readonly lagMs: number;
  /** the WAL position replayed, as last seen (bytes) */
  readonly replayed: number;
  /** why it is left out, when it is */
  readonly problem?: string;
}

export class Replica {
  readonly driver: PostgresDriver;
  up = false;
  lagMs = Number.POSITIVE_INFINITY;
  replayed = -1;
  problem: string | undefined = 'not checked yet';
  readonly #replayed: FreshReading<number>;

  constructor(url: string, options: PostgresOptions) {
    this.driver = new PostgresDriver(url, options);
    this.#replayed = new FreshReading(() => this.#readReplayed());
  }

  get address(): string {
    return this.driver.address;
  }

  state(): ReplicaState {
    return { address: this.address, up: this.up, lagMs: this.lagMs, replayed: this.replayed, ...(this.problem === undefined ? {} : { problem: this.problem }) };
  }

  /** The position replayed, asked now (every caller waiting at once shares one question); -1 when it is no standby. */
  replayedNow(): Promise<number> {
    return this.#replayed.get();
  }

  async #readReplayed(): Promise<number> {
    // (bounded: a replica gone silent would hold the monitor, and every read asking, for as long as its TCP connection hangs)
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DatasetError('STORAGE_UNAVAILABLE', `the replica did not answer within ${REPLICA_ANSWER_MS} ms`)), REPLICA_ANSWER_MS);
      timer.unref();
    });
    const { rows } = await Promise.race([this.driver.execute(REPLAYED), silent]).finally(() => clearTimeout(timer));
    const row = rows[0] as { standby: boolean; replayed: number | null } | undefined;
    if (row?.standby !== true || row.replayed === null) {
      this.#down('it is not a standby (pg_is_in_recovery() is false): a replica is a hot standby of the primary');
      return -1;
    }
    if (row.replayed > this.replayed) this.replayed = row.replayed;
    return this.replayed;
  }

  /** Left out until a check finds it back. */
  markDown(e: unknown): void {
    this.#down((e as Error | undefined)?.message ?? String(e));
  }

  #down(problem: string): void {
    this.up = false;
    this.lagMs = Number.POSITIVE_INFINITY;
    this.problem = problem;
  }

  /** The monitor's check: up, and behind by `lagOf(replayed)` ms. */
  async check(lagOf: (replayed: number) => number): Promise<void> {
    try {
      const replayed = await this.replayedNow();
      if (replayed < 0) return;
      this.up = true;
      this.lagMs = lagOf(replayed);
      this.problem = undefined;
    } catch (e) {
      this.markDown(e);
    }
  }

  close(): Promise<void> {
    return this.driver.close();
  }
}
