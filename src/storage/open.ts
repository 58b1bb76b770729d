// Builds the storage the core uses: an engine's driver under the one transaction manager. The
// place where the engine is chosen (from a URL, once PostgreSQL joins).

import { SqliteDriver, type SqliteOptions } from './sqlite.js';
import { TransactionManager } from './transactions.js';

/** The storage of a SQLite file (WAL mode), or of an in-memory database (':memory:'). */
export function sqliteStorage(file: string, options: SqliteOptions = {}): TransactionManager {
  return new TransactionManager(new SqliteDriver(file, options));
}

/** @deprecated use sqliteStorage(file): the former SQLite adapter's name and constructor, kept for embedders */
export class SqliteAdapter extends TransactionManager {
  constructor(file: string) {
    super(new SqliteDriver(file));
  }
}
