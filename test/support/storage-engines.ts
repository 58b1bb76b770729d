// The engines every storage contract suite runs on (Hono's common.case pattern): one entry per
// driver configuration. PostgreSQL is a real server (postgres-server.ts), a new database per suite.

import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Driver } from '../../src/storage/driver.js';
import { PostgresDriver } from '../../src/storage/postgres.js';
import { SqliteDriver } from '../../src/storage/sqlite.js';
import { freshDatabase } from './postgres-server.js';
import { tempDir } from './helpers.js';

export interface DriverOptions {
  /** how long a statement waits for another connection's lock before it fails (ms) */
  readonly lockWaitMs?: number;
}

/** A new, empty database and what the suites can do with it. */
export interface TestDatabase {
  readonly driver: Driver;
  /** another driver over the same database (another server instance, as it were); absent where there can be none */
  readonly another?: (options?: DriverOptions) => Driver;
  /** holds the database's write lock from another connection until the function returned is called */
  readonly holdWriteLock?: () => () => void;
  /** closes the drivers made here, removes the database */
  cleanup(): Promise<void>;
}

export interface Engine {
  readonly name: string;
  /** a snapshot is kept from other connections' commits (one in-memory connection has no others) */
  readonly isolated: boolean;
  /** several transactions write at once (row locks), so two can cross and deadlock */
  readonly concurrentWriters?: boolean;
  open(options?: DriverOptions): Promise<TestDatabase>;
}

const sqliteOptions = (o: DriverOptions = {}) => (o.lockWaitMs === undefined ? {} : { busyTimeoutMs: o.lockWaitMs });

export const ENGINES: readonly Engine[] = [
  {
    name: 'sqlite (file, WAL)',
    isolated: true,
    async open(options) {
      const tmp = tempDir();
      const file = join(tmp.dir, 'contract.sqlite');
      const driver = new SqliteDriver(file, sqliteOptions(options));
      const others: Driver[] = [];
      return {
        driver,
        another: (o) => {
          const other = new SqliteDriver(file, sqliteOptions(o));
          others.push(other);
          return other;
        },
        holdWriteLock: () => {
          const db = new Database(file);
          db.exec('BEGIN IMMEDIATE');
          return () => {
            db.exec('ROLLBACK');
            db.close();
          };
        },
        async cleanup() {
          for (const d of [driver, ...others]) await d.close();
          tmp.remove();
        },
      };
    },
  },
  {
    name: 'sqlite (:memory:)',
    isolated: false,
    async open(options) {
      const driver = new SqliteDriver(':memory:', sqliteOptions(options));
      return { driver, cleanup: () => driver.close() };
    },
  },
  {
    name: 'postgres',
    isolated: true,
    concurrentWriters: true,
    async open() {
      const database = await freshDatabase();
      const driver = new PostgresDriver(database.url, { poolSize: 4 });
      const others: Driver[] = [];
      return {
        driver,
        another: () => {
          const other = new PostgresDriver(database.url, { poolSize: 4 });
          others.push(other);
          return other;
        },
        async cleanup() {
          for (const d of [driver, ...others]) await d.close();
          await database.drop();
        },
      };
    },
  },
];

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
