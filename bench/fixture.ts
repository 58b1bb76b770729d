// The bench data set: the one-dataclass model (Item), the deterministic values of row n, and the
// temporary project folder filled with them, through the datastore core (default) or plain SQL.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openProject } from '../src/project.js';

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
  readonly db: string;
  readonly fillMs: number;
}

/** Writes model.json into `dir` (an empty folder) and fills data/data.sqlite with `rows` items. */
export async function createProject(dir: string, rows: number, mode: FillMode): Promise<Project> {
  writeFileSync(join(dir, 'model.json'), JSON.stringify(MODEL, null, 2));
  const db = join(dir, 'data', 'data.sqlite');
  const started = performance.now();
  // Opening the project creates the database and the table (schema sync).
  const ds = await openProject(dir);
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
  if (mode === 'sql') fillWithSql(db, rows);
  return { dir, db, fillMs: performance.now() - started };
}

/** Inserts straight into the table the schema sync created (hidden columns: __stamp, __timestamp). */
function fillWithSql(file: string, rows: number): void {
  const db = new Database(file);
  try {
    const insert = db.prepare(`INSERT INTO "${TABLE}" ("name", "price", "qty", "created", "__stamp", "__timestamp") VALUES (?, ?, ?, ?, 1, ?)`);
    const now = Date.now();
    db.transaction(() => {
      for (let n = 0; n < rows; n++) {
        const v = itemValues(n);
        insert.run(v.name, v.price, v.qty, v.created.toISOString(), now);
      }
    })();
  } finally {
    db.close();
  }
}
