// Builds the storage the core uses: an engine's driver under the one transaction manager, the
// engine chosen from what `--db` names: a postgres:// (or postgresql://) URL is PostgreSQL, any
// other URL is refused, and anything else is a SQLite file (or ':memory:').

import type { PostgresDriver, PostgresOptions } from './postgres.js';
import type { ReplicaOptions, ReplicatedDriver } from './replicas/router.js';
import { SqliteDriver, type SqliteOptions } from './sqlite.js';
import { TransactionManager } from './transactions.js';

export type DatabaseTarget =
  | { readonly engine: 'sqlite'; readonly file: string }
  | { readonly engine: 'postgres'; readonly url: string };

/** What `--db` names cannot be opened (an unsupported URL, an unreachable server …): one line for the operator. */
export class StorageConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'StorageConfigError';
  }
}

/** `scheme://…` (a Windows path like C:\data has no `//` after its colon) */
const URL_LIKE = /^([a-z][a-z0-9+.-]*):\/\//i;

/** The engine and address of a database named by `--db`; throws StorageConfigError for a URL of no supported engine. */
export function databaseTarget(db: string): DatabaseTarget {
  const scheme = URL_LIKE.exec(db)?.[1].toLowerCase();
  if (scheme === undefined) return { engine: 'sqlite', file: db };
  if (scheme === 'postgres' || scheme === 'postgresql') return { engine: 'postgres', url: db };
  throw new StorageConfigError(`${scheme}:// is not a database this server can use: give a postgres:// (or postgresql://) URL, or a SQLite file path`);
}

/** The storage of a SQLite file (WAL mode), or of an in-memory database (':memory:'). */
export function sqliteStorage(file: string, options: SqliteOptions = {}): TransactionManager {
  return new TransactionManager(new SqliteDriver(file, options));
}

export interface PostgresStorageOptions extends PostgresOptions {
  /** read replicas (--db-replica): hot standbys of the primary that answer reads (storage/replicas/router.ts) */
  readonly replicas?: ReplicaOptions;
}

/**
 * The storage of a PostgreSQL database, once a first connection shows it can be used (reachable,
 * the password accepted, the database there and in UTF8): else a StorageConfigError naming what failed.
 * Replicas are checked too, but one that cannot be reached is left out (until it can), not an error.
 */
export async function postgresStorage(url: string, options: PostgresStorageOptions = {}): Promise<TransactionManager> {
  // (the driver, and pg with it, loaded only for PostgreSQL: a SQLite process never pays for them)
  const { PostgresDriver: Driver } = await import('./postgres.js');
  const replicas = options.replicas?.urls.length ? options.replicas : undefined;
  let driver: PostgresDriver | ReplicatedDriver;
  try {
    driver = replicas === undefined ? new Driver(url, options) : new (await import('./replicas/router.js')).ReplicatedDriver(url, replicas, options);
  } catch (e) {
    if (e instanceof RangeError) throw e; // a pool size the caller gives
    throw new StorageConfigError(`${replicas === undefined ? '--db: the' : '--db or --db-replica: a'} PostgreSQL URL cannot be read (${(e as Error).message}): write it postgres://user:password@host:5432/database`, { cause: e });
  }
  try {
    await driver.check();
  } catch (e) {
    await driver.close().catch(() => undefined);
    throw new StorageConfigError(`PostgreSQL at ${driver.address}: ${(e as Error).message}`, { cause: e });
  }
  return new TransactionManager(driver);
}

/** The storage `--db` names. */
export async function openStorage(target: DatabaseTarget, options: { readonly poolSize?: number; readonly queryTimeoutMs?: number; readonly replicas?: ReplicaOptions } = {}): Promise<TransactionManager> {
  if (target.engine !== 'postgres' && options.replicas?.urls.length) {
    throw new StorageConfigError('--db-replica names read replicas of a PostgreSQL database: --db must be a postgres:// URL');
  }
  for (const u of options.replicas?.urls ?? []) {
    if (!/^postgres(?:ql)?:\/\//i.test(u)) throw new StorageConfigError(`--db-replica: a replica is named by a postgres:// (or postgresql://) URL, not ${JSON.stringify(u.replace(/\/\/[^@/]*@/, '//***@'))}`);
  }
  return target.engine === 'postgres' ? postgresStorage(target.url, options) : sqliteStorage(target.file, { queryTimeoutMs: options.queryTimeoutMs });
}
