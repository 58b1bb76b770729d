// The bench data set: the one-dataclass model (Item), the deterministic values of row n, and the
// temporary project folder filled with them, through the datastore core or plain SQL, on SQLite
// (data/data.sqlite) or on a PostgreSQL database (the schema made by opening the project on it).

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openProject } from '../src/project/open.js';
import { fold } from '../src/util/fold.js';
import { connect } from './postgres.js';

export const TABLE = 'Item';

export const MODEL = {
  name: 'Bench',
  dataClasses: [
    {
      name: TABLE,
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string', indexed: true },
        { name: 'price', type: 'number' },
        { name: 'qty', type: 'long' },
        { name: 'created', type: 'date' },
      ],
    },
  ],
};

export interface ItemValues {
  name: string;
  price: number;
  qty: number;
  created: Date;
}

const WORDS = ['bolt', 'nut', 'washer', 'screw', 'hinge', 'bracket', 'spring', 'gear', 'valve', 'pulley'];

/** The values of the n-th row (0-based); its key is n + 1 (autoincrement on an empty table). */
export function itemValues(n: number): ItemValues {
  return {
    name: `${WORDS[n % WORDS.length]}-${String(n).padStart(6, '0')}`,
    price: ((n * 7919) % 100_000) / 100,
    qty: (n * 31) % 1000,
    created: new Date(Date.UTC(2020, 0, 1) + n * 37_000),
  };
}

export type FillMode = 'core' | 'sql';

export interface Project {
  readonly dir: string;
  /** the SQLite file, or the PostgreSQL database's URL */
  readonly db: string;
  readonly fillMs: number;
}

/**
 * Writes model.json into `dir` (an empty folder) and fills data/data.sqlite with `rows` items, or
 * the PostgreSQL database at `pgUrl` (empty) when given.
 */
export async function createProject(dir: string, rows: number, mode: FillMode, pgUrl?: string): Promise<Project> {
  writeFileSync(join(dir, 'model.json'), JSON.stringify(MODEL, null, 2));
  const db = pgUrl ?? join(dir, 'data', 'data.sqlite');
  const started = performance.now();
  // Opening the project creates the database and the table (schema sync).
  const ds = await openProject(dir, pgUrl === undefined ? {} : { db: pgUrl });
  try {
    if (mode === 'core') {
      const items = ds[TABLE];
      await ds.transaction(async () => {
        for (let n = 0; n < rows; n++) {
          const v = itemValues(n);
          const e = items.new();
          e.set('name', v.name);
          e.set('price', v.price);
          e.set('qty', v.qty);
          e.set('created', v.created);
          await e.save();
        }
      });
    }
  } finally {
    await ds.close();
  }
  if (mode === 'sql') {
    if (pgUrl === undefined) fillWithSql(db, rows);
    else await fillPostgresWithSql(pgUrl, rows);
  }
  // PostgreSQL: the planner's statistics and the visibility map (index-only scans), as autovacuum
  // would leave them some time after a bulk load; not counted in the fill time
  const fillMs = performance.now() - started;
  if (pgUrl !== undefined) {
    const c = await connect(pgUrl);
    try {
      await c.query(`VACUUM ANALYZE "${TABLE}"`);
    } finally {
      await c.end();
    }
  }
  return { dir, db, fillMs };
}

/** Inserts straight into the table the schema sync created (hidden columns: the fold of name, __stamp, __timestamp). */
function fillWithSql(file: string, rows: number): void {
  const db = new Database(file);
  try {
    const insert = db.prepare(`INSERT INTO "${TABLE}" ("name", "price", "qty", "created", "name__fold", "__stamp", "__timestamp") VALUES (?, ?, ?, ?, ?, 1, ?)`);
    const now = Date.now();
    db.transaction(() => {
      for (let n = 0; n < rows; n++) {
        const v = itemValues(n);
        insert.run(v.name, v.price, v.qty, v.created.toISOString(), fold(v.name), now);
      }
    })();
  } finally {
    db.close();
  }
}

/** The same on PostgreSQL: 10,000 rows a statement (INSERT … SELECT FROM unnest of one array a column), in one transaction. */
async function fillPostgresWithSql(url: string, rows: number): Promise<void> {
  const c = await connect(url);
  try {
    const now = Date.now();
    await c.query('BEGIN');
    for (let from = 0; from < rows; from += 10_000) {
      const cols: [string[], number[], number[], string[], string[]] = [[], [], [], [], []];
      for (let n = from; n < Math.min(rows, from + 10_000); n++) {
        const v = itemValues(n);
        cols[0].push(v.name);
        cols[1].push(v.price);
        cols[2].push(v.qty);
        cols[3].push(v.created.toISOString());
        cols[4].push(fold(v.name));
      }
      await c.query(
        `INSERT INTO "${TABLE}" ("name", "price", "qty", "created", "name__fold", "__stamp", "__timestamp") ` +
          `SELECT *, 1, ${now} FROM unnest($1::text[], $2::float8[], $3::integer[], $4::timestamptz[], $5::text[])`,
        cols,
      );
    }
    await c.query('COMMIT');
  } finally {
    await c.end();
  }
}
