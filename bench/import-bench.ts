// The import bench (`npm run bench:import`): `dataset-rest import --no-events` of a 10-attribute
// dataclass (strings, numbers, integers, a boolean, dates, an object) from CSV and from NDJSON,
// each into a new database, run as the command runs (a child process). For each: the rows a second
// the command reports (its import, not its start-up), the rows per second of CPU the command used
// (start-up included: a figure other load on the machine changes less), the wall time, and the
// command's peak resident memory (VmHWM, read from /proc until it exits). As a yardstick, measured
// in the same run: the same rows (values and folds already made, in memory) inserted straight
// through better-sqlite3 with multi-row statements, 1000 rows a transaction, into the same table,
// right after each import; the ratio says what parsing, checking and the core cost on top of the
// raw inserts (above 1: the import's worker thread parses while its main thread inserts). Every import
// is checked: its row count.
//
// Options: --rows N (1000000), --engine sqlite|postgres (sqlite; postgres: an embedded server, or
// DATASET_REST_BENCH_PG), --batch-size N (1000), --profile DIR (the command run with --cpu-prof, its
// profiles written there: read them with bench/cpuprofile.ts).

import { strictEqual } from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { openProject } from '../src/project/open.js';
import { fold } from '../src/util/fold.js';
import { formatTable, processCpuMs } from './measure.js';
import { benchDatabase } from './postgres.js';
import { temporaryFolder } from './processes.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({ options: { rows: { type: 'string', default: '1000000' }, engine: { type: 'string', default: 'sqlite' }, 'batch-size': { type: 'string', default: '1000' }, profile: { type: 'string' } } });
const rows = Number(args.rows);
const engine = args.engine === 'postgres' ? 'postgres' : 'sqlite';

const MODEL = {
  name: 'ImportBench',
  dataClasses: [{
    name: 'Person',
    attributes: [
      { name: 'ID', type: 'long', identifying: true, autoincrement: true },
      { name: 'firstName', type: 'string' },
      { name: 'lastName', type: 'string', indexed: true },
      { name: 'email', type: 'string' },
      { name: 'city', type: 'string' },
      { name: 'age', type: 'long' },
      { name: 'salary', type: 'number' },
      { name: 'active', type: 'bool' },
      { name: 'birthDate', type: 'date', dateOnly: true },
      { name: 'hiredAt', type: 'date' },
      { name: 'tags', type: 'object' },
    ],
  }],
};
const COLUMNS = ['firstName', 'lastName', 'email', 'city', 'age', 'salary', 'active', 'birthDate', 'hiredAt', 'tags'] as const;
const FIRST = ['Anna', 'Bruno', 'Chloé', 'Dmitri', 'Eva', 'François', 'Günther', 'Hélène', 'Ivan', 'Júlia'];
const LAST = ['Martin', 'Müller', 'Dubois', 'Rossi', 'Nowak', 'García', 'Smith', 'Lefèvre', 'Novák', 'Öztürk'];
const CITIES = ['Paris', 'Berlin', 'Zürich', 'Kraków', 'São Paulo', 'Montréal', 'Oslo', 'Lyon'];

/** Row n's values, as the file writes them (text for CSV, JSON for NDJSON). */
function person(n: number) {
  return {
    firstName: FIRST[n % 10],
    lastName: `${LAST[(n * 7) % 10]}-${n}`,
    email: `user${n}@example.com`,
    city: CITIES[n % CITIES.length],
    age: 18 + (n % 60),
    salary: 20000 + ((n * 7919) % 100000) + 0.5,
    active: n % 3 !== 0,
    birthDate: new Date(Date.UTC(1950, 0, 1) + (n % 18000) * 86_400_000).toISOString().slice(0, 10),
    hiredAt: new Date(Date.UTC(2000, 0, 1) + n * 61_000).toISOString(),
    tags: { team: n % 12, remote: n % 2 === 0 },
  };
}

const csvField = (v: unknown) => {
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

async function writeFile(file: string, format: 'csv' | 'ndjson'): Promise<void> {
  const out = createWriteStream(file);
  if (format === 'csv') out.write(`${COLUMNS.join(',')}\r\n`);
  let chunk = '';
  for (let n = 0; n < rows; n++) {
    const p = person(n);
    chunk += format === 'csv' ? `${COLUMNS.map((c) => csvField(p[c])).join(',')}\r\n` : `${JSON.stringify(p)}\n`;
    if (n % 5000 === 4999) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'close');
}

/** A new project folder with the model, its database created (schema) and empty. */
async function newProject(name: string, pgUrl?: string): Promise<{ dir: string; db: string }> {
  const dir = join(work, name);
  rmSync(dir, { recursive: true, force: true });
  const { mkdirSync } = await import('node:fs');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'model.json'), JSON.stringify(MODEL));
  const db = pgUrl ?? join(dir, 'data', 'data.sqlite');
  const ds = await openProject(dir, { db });
  await ds.close();
  return { dir, db };
}

/** Runs the import command; its reported rows/s, wall time, CPU time (the whole command, start-up included: polled, to 50 ms) and peak RSS. */
async function runImport(dir: string, db: string, file: string): Promise<{ rate: number; wallMs: number; cpuMs: number; peakMb: number; out: string }> {
  const started = performance.now();
  const profile = args.profile ? ['--cpu-prof', '--cpu-prof-dir', args.profile] : [];
  const child = spawn(process.execPath, [...profile, 'bin/dataset-rest.mjs', 'import', '--project', dir, '--db', db, '--no-events', '--batch-size', String(args['batch-size']), 'Person', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  let peakKb = 0;
  let cpuMs = 0;
  const poll = setInterval(() => {
    cpuMs = processCpuMs(child.pid as number) ?? cpuMs;
    try {
      const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {
      // gone
    }
  }, 50);
  const [code] = (await once(child, 'exit')) as [number];
  clearInterval(poll);
  if (code !== 0) throw new Error(`import exited ${code}: ${err.slice(0, 2000)}`);
  const m = /\(([\d,]+) rows\/s\)/.exec(out);
  return { rate: m ? Number(m[1].replaceAll(',', '')) : Number.NaN, wallMs: performance.now() - started, cpuMs, peakMb: peakKb / 1024, out: out.trim() };
}

/** The yardstick: the same rows, values ready, straight into SQLite with 200-row statements, 1000 rows a transaction. */
function yardstick(file: string): { rate: number; perCpuSecond: number } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  const cols = ['firstName', 'firstName__fold', 'lastName', 'lastName__fold', 'email', 'email__fold', 'city', 'city__fold', 'age', 'salary', 'active', 'birthDate', 'hiredAt', 'tags', '__stamp', '__timestamp'];
  const perRow = `(${cols.map(() => '?').join(', ')})`;
  const statement = db.prepare(`INSERT INTO "Person" (${cols.map((c) => `"${c}"`).join(', ')}) VALUES ${Array(200).fill(perRow).join(', ')}`);
  const rowsOf = (n: number) => {
    const p = person(n);
    return [p.firstName, fold(p.firstName), p.lastName, fold(p.lastName), p.email, fold(p.email), p.city, fold(p.city), p.age, p.salary, p.active ? 1 : 0, p.birthDate, p.hiredAt, JSON.stringify(p.tags), 1, Date.now()];
  };
  // (the values are made before the clock starts: the yardstick measures the inserts alone)
  const all: unknown[][] = [];
  for (let n = 0; n < rows; n++) all.push(rowsOf(n));
  const started = performance.now();
  const cpu = process.cpuUsage();
  const batch = db.transaction((from: number) => {
    for (let at = from; at < Math.min(rows, from + 1000); at += 200) statement.run(...all.slice(at, at + 200).flat());
  });
  for (let from = 0; from < rows; from += 1000) batch(from);
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  strictEqual((db.prepare('SELECT count(*) AS n FROM "Person"').get() as { n: number }).n, rows);
  db.close();
  return { rate: Math.round(rows / (ms / 1000)), perCpuSecond: Math.round(rows / ((used.user + used.system) / 1e6)) };
}

async function count(db: string, dir: string): Promise<number> {
  const ds = await openProject(dir, { db });
  try {
    return await ds.dataClass('Person')!.all().length;
  } finally {
    await ds.close();
  }
}

const work = temporaryFolder('dataset-rest-import-bench-');
const pg = engine === 'postgres' ? await benchDatabase() : undefined;
try {
  console.log(`import bench: ${rows.toLocaleString('en')} rows of a 10-attribute dataclass, ${engine}${pg ? ` (${pg.where})` : ''}, batches of ${args['batch-size']}`);
  const table: string[][] = [];
  for (const format of ['csv', 'ndjson'] as const) {
    const file = join(work, `people.${format}`);
    await writeFile(file, format);
    const { dir, db } = await newProject(`p-${format}`, pg?.url);
    if (pg) {
      // one database for both imports: emptied between them
      const { connect } = await import('./postgres.js');
      const c = await connect(pg.url);
      await c.query('TRUNCATE "Person"');
      await c.end();
    }
    const r = await runImport(dir, db, file);
    strictEqual(await count(db, dir), rows, `${format}: rows imported`);
    const row = [`import ${format.toUpperCase()}`, r.rate.toLocaleString('en'), Math.round(rows / (r.cpuMs / 1000)).toLocaleString('en'), `${(r.wallMs / 1000).toFixed(1)} s`, `${r.peakMb.toFixed(0)} MB`];
    table.push(row);
    console.log(`  ${r.out}`);
    if (engine === 'sqlite') {
      // the yardstick run right after each import: on a shared machine the load changes within a
      // minute, and a ratio to a yardstick measured at another moment says more about the load
      const { dir: yardDir } = await newProject(`yardstick-${format}`);
      const { rate, perCpuSecond } = yardstick(join(yardDir, 'data', 'data.sqlite'));
      row.push(`${(r.rate / rate).toFixed(2)}`);
      table.push([`  yardstick right after: better-sqlite3, 200-row INSERTs, values in memory`, rate.toLocaleString('en'), perCpuSecond.toLocaleString('en'), '', '', '1.00']);
    }
  }
  console.log(formatTable(['', 'rows/s', 'rows per CPU second', 'wall (with start-up)', 'peak RSS', ...(engine === 'sqlite' ? ['ratio to yardstick'] : [])], table));
} finally {
  await pg?.close();
  rmSync(work, { recursive: true, force: true });
}
