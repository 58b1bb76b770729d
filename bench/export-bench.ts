// The export bench (`node --import tsx bench/export-bench.ts`): GET /rest/Item?$format=csv (and
// ndjson, sorted, filtered) over the whole bench dataclass (bench/fixture.ts, --rows items, filled
// with SQL), through our server run as a child process on 127.0.0.1, the body read as it comes and
// counted. For each export: rows a second, and the server's resident memory — its peak (VmHWM,
// /proc/PID/status, reset before each export through /proc/PID/clear_refs) against its RSS before
// the export. As a yardstick, the same CSV made in this process straight from better-sqlite3
// (SELECT of the columns in key order, iterated, each row written as the server writes it) on
// SQLite. Every export is checked: its line count.
//
// Options: --engine sqlite|postgres (sqlite), --rows N (1000000), --pool-size N (PostgreSQL: 10).

import { strictEqual } from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { createProject, TABLE } from './fixture.js';
import { formatTable } from './measure.js';
import { benchDatabase } from './postgres.js';
import { startServer, temporaryFolder } from './processes.js';
import { csvField } from '../src/rest/present/export-format.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const { values: args } = parseArgs({ options: { engine: { type: 'string', default: 'sqlite' }, rows: { type: 'string', default: '1000000' }, 'pool-size': { type: 'string', default: '10' } } });
const engine = args.engine === 'postgres' ? 'postgres' : 'sqlite';
const rows = Number(args.rows);

/** A /proc/PID/status field, in KB. */
function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : Number.NaN;
}

/** Resets the peak RSS (VmHWM) to the current RSS (Linux: "5" into clear_refs). */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** GETs `url`, reading the body as it comes: its bytes and lines, and the time to the last byte. */
function download(url: string): Promise<{ status: number; bytes: number; lines: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => {
      let bytes = 0;
      let lines = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, lines, ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const dir = temporaryFolder('dataset-rest-export-bench-');
const pg = engine === 'postgres' ? await benchDatabase() : undefined;
console.log(`export bench: ${rows} items, ${engine}${pg ? ` (${pg.where})` : ''}`);
const project = await createProject(dir, rows, 'sql', pg?.url);
console.log(`filled in ${(project.fillMs / 1000).toFixed(1)} s`);
const db = engine === 'postgres' ? ['--db', project.db, '--pool-size', String(args['pool-size'])] : [];
const server = await startServer({
  name: 'ours',
  args: ['bin/dataset-rest.mjs', '--project', dir, ...db, '--port', '0', '--log-level', 'warn'],
  cwd: ROOT,
  ready: /dataset-rest listening on (http:\/\/\S+)\/rest/,
  timeoutMs: 60_000,
});

try {
  const scenarios: [string, string, number][] = [
    ['CSV, key order (keyset)', '/rest/Item?$format=csv', rows + 1],
    ['NDJSON, key order (keyset)', '/rest/Item?$format=ndjson', rows],
    ['CSV, $orderby=name desc (keys, then rows)', '/rest/Item?$format=csv&$orderby="name desc"', rows + 1],
    ['CSV, $filter qty < 500 (keyset)', '/rest/Item?$format=csv&$filter="qty < 500"', rows / 2 + 1],
  ];
  // warm up: the first requests compile what they use
  await download(`${server.url}/rest/Item?$format=csv&$top=5000`);
  const table: string[][] = [];
  let peakOk = true;
  for (const [what, path, lines] of scenarios) {
    peakOk &&= resetPeak(server.pid);
    const rssBefore = statusKb(server.pid, 'VmRSS');
    const got = await download(`${server.url}${path}`);
    strictEqual(got.status, 200, what);
    strictEqual(got.lines, lines, `${what}: lines`);
    const peak = statusKb(server.pid, 'VmHWM');
    const n = lines - (path.includes('csv') ? 1 : 0);
    table.push([what, String(n), `${(got.ms / 1000).toFixed(2)} s`, `${Math.round(n / (got.ms / 1000)).toLocaleString('en')}`, `${(got.bytes / 1e6).toFixed(0)} MB`, `${(rssBefore / 1024).toFixed(0)} MB`, `${(peak / 1024).toFixed(0)} MB`, `${((peak - rssBefore) / 1024).toFixed(0)} MB`]);
  }
  if (engine === 'sqlite') {
    // the yardstick: the same CSV from better-sqlite3 in this process, no HTTP
    const started = performance.now();
    const sqlite = new Database(join(dir, 'data', 'data.sqlite'), { readonly: true });
    const stmt = sqlite.prepare(`SELECT "ID", "name", "price", "qty", "created" FROM "${TABLE}" ORDER BY "ID"`).raw();
    let bytes = 0;
    let chunk = '';
    let n = 0;
    for (const row of stmt.iterate() as Iterable<unknown[]>) {
      chunk += `${row.map(csvField).join(',')}\r\n`;
      if (++n % 1000 === 0) {
        bytes += Buffer.byteLength(chunk);
        chunk = '';
      }
    }
    bytes += Buffer.byteLength(chunk);
    sqlite.close();
    const ms = performance.now() - started;
    strictEqual(n, rows);
    table.push(['yardstick: better-sqlite3 → CSV text, in process', String(n), `${(ms / 1000).toFixed(2)} s`, `${Math.round(n / (ms / 1000)).toLocaleString('en')}`, `${(bytes / 1e6).toFixed(0)} MB`, '', '', '']);
  }
  console.log(formatTable(['export', 'rows', 'time', 'rows/s', 'body', 'server RSS before', 'peak RSS', 'peak − before'], table));
  if (!peakOk) console.log('(the peak RSS could not be reset between exports: each peak is the highest so far)');
} finally {
  await server.stop();
  await pg?.close();
}
