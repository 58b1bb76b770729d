// Disk space of an SQLite file: the file gives back the pages of removed rows (incremental
// vacuum) rather than keeping its largest size forever, and its WAL is cut back after checkpoints.

import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { VACUUM_AT_START_MAX_BYTES, WAL_SIZE_LIMIT_BYTES } from '../config/limits.js';

/** SQLite's auto_vacuum modes (PRAGMA auto_vacuum reads a number). */
const INCREMENTAL = 2;

/**
 * Sets up a writer connection, before anything else runs on it: incremental vacuum for a new file
 * (it can only be chosen before the first table); a file made without it is converted by one
 * VACUUM when small enough (and no other process holds it), else left as it is; the WAL's size cut.
 */
export function prepareSpace(db: Database.Database, file: string): void {
  try {
    db.pragma('auto_vacuum = INCREMENTAL');
  } catch (e) {
    // another process writes (a second instance starting while the first converts a table): the
    // mode is only for a new file anyway, and this one is not new
    if (!String((e as { code?: unknown }).code).startsWith('SQLITE_BUSY')) throw e;
  }
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  if (db.pragma('auto_vacuum', { simple: true }) === INCREMENTAL || file === '' || file === ':memory:') return;
  let size = 0;
  try {
    size = statSync(file).size;
  } catch {
    return;
  }
  if (size > VACUUM_AT_START_MAX_BYTES) return;
  try {
    db.exec('VACUUM');
  } catch {
    // another process has the file open in a transaction (a second instance starting): the next start converts it
  }
}
