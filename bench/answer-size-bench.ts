// What measuring an answer's size before reading it costs (--max-answer-size, issue 19): over the
// read bench's table (100,000 items, a short text each), in process (app.inject), the time of a
// page of 1,000 (measured: more than 100 rows, a text column), of a page of 100 (not measured),
// and of an export ($format=ndjson, every chunk measured), with the share of it spent in the size
// statements (timed where statements are run). Ratios, not targets.
//
// `npx tsx bench/answer-size-bench.ts [--rows N] [--rounds N] [--postgres]`

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createProject } from './fixture.js';
import { benchDatabase } from './postgres.js';
import { temporaryFolder } from './processes.js';
import { openProject } from '../src/project/open.js';
import { buildServer } from '../src/http/server.js';
import { TransactionManager } from '../src/storage/transactions.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '200' }, postgres: { type: 'boolean', default: false } } });
const rows = Number(values.rows);
const rounds = Number(values.rounds);

type Reads = Record<'arrays' | 'all', (sql: string, params?: readonly unknown[]) => Promise<unknown[]>>;

/** Time spent in size statements (those summing octet_length) and in all statements. */
const spent = { size: 0, all: 0, sizeStatements: 0 };
const proto = Object.getPrototypeOf(TransactionManager.prototype) as Reads;
for (const name of ['arrays', 'all'] as const) {
  const original = proto[name];
  proto[name] = async function (this: unknown, sql: string, params?: readonly unknown[]) {
    const started = performance.now();
    try {
      return await original.call(this, sql, params);
    } finally {
      const ms = performance.now() - started;
      spent.all += ms;
      if (sql.includes('octet_length')) {
        spent.size += ms;
        spent.sizeStatements++;
      }
    }
  };
}

const folder = temporaryFolder('answer-size-bench-');
const pg = values.postgres ? await benchDatabase() : undefined;
try {
  const dir = join(folder, 'p');
  mkdirSync(dir, { recursive: true });
  const project = await createProject(dir, rows, 'sql', pg?.url);
  const ds = await openProject(dir, { db: project.db });
  const app = await buildServer(ds, { logLevel: 'silent' });
  const scenario = async (name: string, url: (i: number) => string, n: number) => {
    for (let i = 0; i < Math.min(20, n); i++) await app.inject({ method: 'GET', url: url(i) });
    spent.size = spent.all = spent.sizeStatements = 0;
    const started = performance.now();
    for (let i = 0; i < n; i++) {
      const res = await app.inject({ method: 'GET', url: url(i) });
      if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode} ${res.body.slice(0, 200)}`);
    }
    const ms = performance.now() - started;
    console.log(`${name.padEnd(34)} ${(ms / n).toFixed(2).padStart(8)} ms a request; statements ${(spent.all / n).toFixed(2)} ms, size statements ${(spent.size / n).toFixed(3)} ms (${spent.sizeStatements / n} a request): ${((100 * spent.size) / ms).toFixed(1)}% of the request`);
  };
  console.log(`${values.postgres ? 'PostgreSQL' : 'SQLite'}, ${rows} items`);
  const skip = (i: number, size: number) => (i * 997) % Math.max(1, rows - size);
  await scenario('page of 100 (not measured)', (i) => `/rest/Item?$top=100&$skip=${skip(i, 100)}`, rounds);
  await scenario('page of 1,000 (measured)', (i) => `/rest/Item?$top=1000&$skip=${skip(i, 1000)}`, rounds);
  await scenario('page of 1,000, no text (not measured)', (i) => `/rest/Item?$top=1000&$skip=${skip(i, 1000)}&$attributes=price,qty,created`, rounds);
  await scenario('page of 1,000 by name (measured)', (i) => `/rest/Item?$top=1000&$skip=${skip(i, 1000)}&$orderby=name`, Math.ceil(rounds / 4));
  await scenario('export, ndjson (each chunk measured)', () => '/rest/Item?$format=ndjson', 3);
  await app.close();
  await ds.close();
} finally {
  await pg?.close();
}
