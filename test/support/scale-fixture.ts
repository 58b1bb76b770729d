// A large SQLite database for the scale tests: the project of test/support/fixtures/scale (one dataclass,
// Reading) with N rows. The project is opened once so that the server's own schema code makes
// the tables, then the rows go in with one INSERT … SELECT over a recursive CTE (no row crosses
// into JavaScript): a million rows take a second or two. The file is kept in the system's
// temporary folder, named by N and the model's hash, and each caller gets a copy of its own.

import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { openProject } from '../../src/project/open.js';

export const SCALE_DIR = fileURLToPath(new URL('./fixtures/scale', import.meta.url));

/** the date of Reading n's takenOn: 2020-01-01 plus n % 1461 days */
const DAY0 = Date.UTC(2020, 0, 1);

/** What Reading n holds (the SQL below writes the same values), for the tests to compare. */
export function readingOf(n: number): { ID: number; sensor: string; value: number; count: number; valid: boolean; takenOn: string } {
  return {
    ID: n,
    sensor: `Sensor-${n % 97}`,
    value: (n * 37 % 100_000) / 100,
    count: n % 1000,
    valid: n % 3 === 0,
    takenOn: new Date(DAY0 + (n % 1461) * 86_400_000).toISOString().slice(0, 10),
  };
}

export interface ScaleDatabase {
  /** the SQLite file: the caller's own copy, to serve and change */
  readonly file: string;
  /** milliseconds spent making the cached file (0 when it was there already) */
  readonly generatedMs: number;
  /** milliseconds spent copying it */
  readonly copiedMs: number;
}

/** The scale project's database with `rows` Readings (keys 1 … rows), copied to `into/name`. */
export async function scaleDatabase(rows: number, into: string, name = 'scale.sqlite'): Promise<ScaleDatabase> {
  const hash = createHash('sha256').update(readFileSync(join(SCALE_DIR, 'model.json'))).update(GENERATE).digest('hex').slice(0, 12);
  const cached = join(tmpdir(), `dataset-rest-scale-${rows}-${hash}.sqlite`);
  let generatedMs = 0;
  if (!existsSync(cached)) {
    const started = performance.now();
    // made under another name and renamed when complete: a run stopped half-way leaves no cache
    const partial = `${cached}.${process.pid}.partial`;
    try {
      await generate(partial, rows);
      renameSync(partial, cached);
    } finally {
      for (const f of [partial, `${partial}-wal`, `${partial}-shm`, `${partial}-journal`]) rmSync(f, { force: true });
    }
    generatedMs = performance.now() - started;
  }
  const started = performance.now();
  const file = join(into, name);
  copyFileSync(cached, file);
  return { file, generatedMs, copiedMs: performance.now() - started };
}

/** the rows, in the columns the schema made ("sensor__fold" is the folded twin of every string column) */
const GENERATE = `
  WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
  INSERT INTO "Reading" ("ID", "sensor", "sensor__fold", "value", "count", "valid", "takenOn", "takenAt", "__stamp", "__timestamp")
  SELECT i, 'Sensor-' || (i % 97), 'sensor-' || (i % 97), (i * 37 % 100000) / 100.0, i % 1000, i % 3 = 0,
    date(${DAY0 / 1000} + (i % 1461) * 86400, 'unixepoch'),
    strftime('%Y-%m-%dT%H:%M:%fZ', ${DAY0 / 1000} + i * 60, 'unixepoch'),
    1, ${DAY0}
  FROM n`;

async function generate(file: string, rows: number): Promise<void> {
  // the server's schema code makes the tables (and its meta rows), as on any first start
  const ds = await openProject(SCALE_DIR, { db: file, roles: false });
  await ds.close();
  const db = new Database(file);
  try {
    // one writer, a file nobody reads yet: no journal to keep, nothing to sync before the end
    db.pragma('journal_mode = DELETE');
    db.pragma('synchronous = OFF');
    db.transaction(() => {
      db.prepare(GENERATE).run(rows);
    })();
    db.pragma('journal_mode = WAL');
  } finally {
    db.close();
  }
}
