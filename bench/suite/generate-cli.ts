// The suite's data set generator from the command line (issue 16):
//
//   node --import tsx bench/suite/generate-cli.ts --rows 1000000 [--dir D] [--engine sqlite|postgres] [--pg URL] [--cache DIR]
//
// --dir: the project folder to make (empty or missing); without it a temporary one, removed at the
// end (a timing run). --engine postgres fills the database at --pg, else a new database of
// bench/postgres.ts (DATASET_REST_BENCH_PG's server, or a throwaway embedded cluster), dropped at
// the end. --cache (SQLite): the generated file is kept there and copied from there next time.
// Prints a progress line now and then, and the rows per second.

import { parseArgs } from 'node:util';
import { benchDatabase, type BenchDatabase } from '../postgres.js';
import { temporaryFolder } from '../processes.js';
import { generateProject, MAX_ROWS } from './generate.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    dir: { type: 'string' },
    engine: { type: 'string', default: 'sqlite' },
    pg: { type: 'string' },
    cache: { type: 'string' },
  },
  strict: true,
});

const rows = Number(values.rows.replaceAll('_', ''));
if (!Number.isInteger(rows) || rows < 0 || rows > MAX_ROWS) throw new Error(`--rows takes a whole number from 0 to ${MAX_ROWS}, got '${values.rows}'`);
if (values.engine !== 'sqlite' && values.engine !== 'postgres') throw new Error(`--engine is sqlite or postgres, got '${values.engine}'`);
if (values.engine === 'postgres' && values.cache !== undefined) throw new Error('--cache is for SQLite files only');

const dir = values.dir ?? temporaryFolder('dataset-rest-generate-');
let database: BenchDatabase | undefined;
let pgUrl: string | undefined;
if (values.engine === 'postgres') {
  if (values.pg !== undefined) pgUrl = values.pg;
  else {
    database = await benchDatabase();
    pgUrl = database.url;
    console.log(`PostgreSQL: ${database.where}`);
  }
}
const started = performance.now();
const cpu = process.cpuUsage();
try {
  const log = (line: string): void => console.log(`  ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s  ${line}`);
  const g = await generateProject(dir, rows, { pgUrl, cacheDir: values.cache, log });
  const used = process.cpuUsage(cpu);
  console.log(
    `${g.rows.toLocaleString('en-US')} items (+ categories) on ${values.engine}${g.fromCache ? ', copied from the cache' : ''}: ` +
      `${(g.ms / 1000).toFixed(2)} s, ${g.rowsPerSecond.toLocaleString('en-US')} rows/s; ` +
      `${(g.bytes / 2 ** 20).toFixed(0)} MiB; this process's CPU ${((used.user + used.system) / 1e6).toFixed(2)} s`,
  );
  console.log(values.dir !== undefined ? `project: ${g.dir} (database ${g.db})` : '(a temporary project folder: removed now; --dir keeps one)');
} finally {
  await database?.close();
}
