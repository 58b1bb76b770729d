// The demo's database as its seed leaves it, made once per test run and copied for each opening
// of the demo (openDemo, twoInstances): seeding — 380 saves, three Argon2 hashes, images drawn —
// was about half of what an opening cost. The seed is deterministic, so a copy holds what a fresh
// seed would; the project's open finds it set up (the SQLite file exists, PostgreSQL's database
// has its setUp mark) and does not seed again. The run's test processes share one template: a
// SQLite file in the temporary folder (test/run.ts removes it at the end; a file run alone, at
// its exit), a PostgreSQL database t_<run>_seeded_demo (dropped with the run's others).

import { copyFileSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { databaseUrl, freshDatabase, loadPg, TEST_RUN, TEST_RUN_ENV, testPostgres } from './postgres-server.js';

const DEMO_DIR = fileURLToPath(new URL('../../demo', import.meta.url));

/** The run's seeded SQLite demo file. */
export function seededDemoFile(run: string): string {
  return join(tmpdir(), `dataset-rest-seeded-demo-${run}.sqlite`);
}

/** The demo opened once on `db` (which it seeds) and closed. */
async function seed(db: string): Promise<void> {
  // (imported here: test/run.ts imports this module for seededDemoFile alone, without the core)
  const { openProject } = await import('../../src/project/open.js');
  const ds = await openProject(DEMO_DIR, { db, roles: false, poolSize: 4 });
  await ds.close();
}

let sqliteTemplate: Promise<string> | undefined;
let postgresTemplate: Promise<string> | undefined;

/** The run's seeded SQLite file, seeded here unless another process of the run has. */
function seededSqlite(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const file = seededDemoFile(TEST_RUN);
    if (process.env[TEST_RUN_ENV] === undefined) process.once('exit', () => rmSync(file, { force: true }));
    if (existsSync(file)) return file;
    const dir = mkdtempSync(join(tmpdir(), 'dataset-rest-seeding-'));
    try {
      const building = join(dir, 'demo.sqlite');
      await seed(building);
      // closed, the database is all in its file (no -wal left); renamed at once, another process
      // of the run finds the whole file or none
      if (existsSync(`${building}-wal`)) throw new Error(`${building}-wal is left after close`);
      renameSync(building, file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return file;
  })();
  return sqliteTemplate;
}

/** The run's seeded PostgreSQL database's name: the first process to ask seeds it, the others wait for it. */
function seededPostgres(): Promise<string> {
  postgresTemplate ??= (async () => {
    const server = await testPostgres();
    const name = `t_${TEST_RUN}_seeded_demo`;
    const admin = new (await loadPg()).Client({ connectionString: server.url });
    await admin.connect();
    try {
      // (the lock goes with this session, at the end)
      await admin.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount === 0) {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8'`);
        try {
          await seed(databaseUrl(server, name));
        } catch (e) {
          await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          throw e;
        }
      }
    } finally {
      await admin.end();
    }
    return name;
  })();
  return postgresTemplate;
}

/** A new database holding the seeded demo: a copy of the run's template, at `sqliteFile` on SQLite, a new database on PostgreSQL. */
export async function seededDemoDatabase(engine: 'sqlite' | 'postgres', sqliteFile: string): Promise<string> {
  if (engine === 'postgres') return (await freshDatabase(await seededPostgres())).url;
  copyFileSync(await seededSqlite(), sqliteFile);
  return sqliteFile;
}
