// The read bench (`npm run bench`): our server against a hand-written node:http + better-sqlite3
// baseline over the same SQLite file (100,000 rows), for a read by key and a page of 100, loaded
// with autocannon on 127.0.0.1. Both servers run as child processes; all is removed at the end.
//
// Options (after `npm run bench --`): --rows N, --duration S (per server and scenario, split into
// --rounds R alternating runs), --warmup S, --connections N, --max-skip N, --fill core|sql,
// --profile (CPU profiles of both servers, kept and summarised per request), --bare-baseline (the
// baseline without the headers the contract puts on every answer; by default it sends the same
// security headers and a new guest's session cookie as ours, so that both answers are the same bytes),
// --workers N (our server's; above 1 it runs under its supervisor), --scenarios byKey,page,filtered,compute,samePage,notModified
// (compute: $compute=sum over a filtered selection);
// (samePage: one filtered page asked again and again while nothing writes — ours answers it from
// memory, the baseline queries every time; notModified: the same with the page's If-None-Match,
// 304 from us, the page again from the baseline); --fresh: our requests of byKey, page and
// filtered say Cache-Control: no-cache, so that each is read again (a random page may be one
// asked before: 200 prefixes of filtered pages at 20,000 rows, kept while nothing writes);
// --dist: our server runs the JavaScript tsc compiles (npm run build, done first), as the npm
// package does, instead of the sources through tsx (the repository's bin/dataset-rest.mjs).

import { deepStrictEqual, strictEqual } from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { formatSummary, mainProfile } from './cpuprofile.js';
import { createProject, itemValues, MODEL, type FillMode, type Project } from './fixture.js';
import { cookieName } from '../src/rest/scope/scope.js';
import { benchDatabase, type BenchDatabase } from './postgres.js';
import { startServer, temporaryFolder, type ServerProcess } from './processes.js';
import { formatTable, Latencies, processCpuMs, processTreeCpuMs } from './measure.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PAGE = 100;

type Engine = 'sqlite' | 'postgres';
const ENGINE_NAME: Record<Engine, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
/** ours/baseline req/s at least; undefined: reported, no target */
const TARGETS: Record<Engine, Partial<Record<ScenarioKind, number>>> = {
  // issue 39's, against the minimal baseline (--bare-baseline); random reads measured with --fresh
  // (else a page asked before may come from memory)
  sqlite: { byKey: 0.85, filtered: 0.9, compute: 0.9, samePage: 2, notModified: 2 },
  postgres: { byKey: 0.9, page: 0.9, filtered: 0.9, compute: 0.9, samePage: 2, notModified: 2 },
};

interface Settings {
  engines: Engine[];
  poolSize: number;
  rows: number;
  duration: number;
  rounds: number;
  warmup: number;
  connections: number;
  maxSkip: number;
  /** undefined: core on SQLite, sql on PostgreSQL */
  fill: FillMode | undefined;
  profile: boolean;
  /** the baseline without the contract's headers (security headers, the guest's cookie) */
  bareBaseline: boolean;
  /** our server's --workers */
  workers: number;
  /** the scenarios to run (all when undefined) */
  scenarios: ScenarioKind[] | undefined;
  /** our random reads say Cache-Control: no-cache (read again, never answered from memory) */
  fresh: boolean;
  /** our server runs dist/ (built first), as the package does */
  dist: boolean;
}

function settings(): Settings {
  const { values } = parseArgs({
    options: {
      engine: { type: 'string', default: 'sqlite' },
      'pool-size': { type: 'string', default: '10' },
      rows: { type: 'string', default: '100000' },
      duration: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '10' },
      'max-skip': { type: 'string' },
      fill: { type: 'string' },
      profile: { type: 'boolean', default: false },
      'bare-baseline': { type: 'boolean', default: false },
      workers: { type: 'string', default: '1' },
      scenarios: { type: 'string' },
      fresh: { type: 'boolean', default: false },
      dist: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const num = (name: string, text: string | undefined, min: number, whole = true): number => {
    const n = Number(text);
    if (!Number.isFinite(n) || (whole && !Number.isInteger(n)) || n < min) throw new Error(`--${name} takes a ${whole ? 'whole ' : ''}number of ${min} or more, got '${text}'`);
    return n;
  };
  if (values.fill !== undefined && values.fill !== 'core' && values.fill !== 'sql') throw new Error(`--fill is core or sql, got '${values.fill}'`);
  const engines: Record<string, Engine[]> = { sqlite: ['sqlite'], postgres: ['postgres'], both: ['sqlite', 'postgres'] };
  if (!engines[values.engine]) throw new Error(`--engine is sqlite, postgres or both, got '${values.engine}'`);
  const rows = num('rows', values.rows, 1000);
  return {
    engines: engines[values.engine],
    poolSize: num('pool-size', values['pool-size'], 2),
    rows,
    duration: num('duration', values.duration, 1, false),
    rounds: num('rounds', values.rounds, 1),
    warmup: num('warmup', values.warmup, 0, false),
    connections: num('connections', values.connections, 1),
    maxSkip: values['max-skip'] === undefined ? rows - PAGE : Math.min(num('max-skip', values['max-skip'], 0), rows - PAGE),
    fill: values.fill,
    profile: values.profile,
    bareBaseline: values['bare-baseline'],
    workers: num('workers', values.workers, 1),
    fresh: values.fresh,
    dist: values.dist,
    scenarios: values.scenarios === undefined ? undefined : values.scenarios.split(',').map((k) => {
      if (!SCENARIO_KINDS.includes(k as ScenarioKind)) throw new Error(`--scenarios takes ${SCENARIO_KINDS.join(', ')}, got '${k}'`);
      return k as ScenarioKind;
    }),
  };
}

// ---- CPU time of a process (Linux /proc; elsewhere the CPU columns read n/a) ----


// ---- one load run ----


interface Totals {
  requests: number;
  seconds: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** CPU ms of the server while loaded; undefined when it cannot be read */
  serverCpuMs: number | undefined;
  /** PostgreSQL: CPU ms of the whole database server while loaded; undefined when it cannot be read (SQLite, a server not started here) */
  dbCpuMs: number | undefined;
  /** CPU ms of this process (the load generator) while loading */
  clientCpuMs: number;
  latencies: Latencies;
  /** requests per second of each round */
  rounds: number[];
}

const newTotals = (): Totals => ({ requests: 0, seconds: 0, non2xx: 0, errors: 0, timeouts: 0, serverCpuMs: 0, dbCpuMs: 0, clientCpuMs: 0, latencies: new Latencies(), rounds: [] });

async function load(server: ServerProcess, path: (n: number) => string, range: number, seconds: number, s: Settings, dbPid: number | undefined, into?: Totals, headers?: Record<string, string>): Promise<number> {
  // (several workers: the supervisor's process tree)
  const cpuOf = (pid: number) => (s.workers > 1 && server.name === 'ours' ? processTreeCpuMs(pid) : processCpuMs(pid));
  const cpu0 = cpuOf(server.pid);
  const db0 = dbPid === undefined ? undefined : processTreeCpuMs(dbPid);
  const client0 = process.cpuUsage();
  const instance = autocannon({
    url: server.url,
    connections: s.connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    // a new random key (or offset) for every request
    requests: [{ setupRequest: (request) => ({ ...request, path: path(Math.floor(Math.random() * range)), ...(headers ? { headers: { ...request.headers, ...headers } } : {}) }) }],
  });
  if (into) instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => into.latencies.add(ms));
  const r = await instance;
  const client = process.cpuUsage(client0);
  const cpu1 = cpuOf(server.pid);
  const db1 = dbPid === undefined ? undefined : processTreeCpuMs(dbPid);
  const answered = r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'];
  if (into) {
    into.requests += answered;
    into.seconds += r.duration;
    // (a 304 is the answer a request with If-None-Match expects)
    into.non2xx += r.non2xx - (headers?.['if-none-match'] !== undefined ? r['3xx'] : 0);
    into.errors += r.errors;
    into.timeouts += r.timeouts;
    into.serverCpuMs = into.serverCpuMs === undefined || cpu0 === undefined || cpu1 === undefined ? undefined : into.serverCpuMs + cpu1 - cpu0;
    into.dbCpuMs = into.dbCpuMs === undefined || db0 === undefined || db1 === undefined ? undefined : into.dbCpuMs + db1 - db0;
    into.clientCpuMs += (client.user + client.system) / 1000;
    into.rounds.push(answered / r.duration);
  }
  return answered;
}

// ---- sanity ----

/** The filter of the filtered page for a random n: name begin "<word>-<first 3 digits>", 100 rows of each full 1,000. */
function prefixOf(n: number): string {
  const name = itemValues(n).name;
  return name.slice(0, name.indexOf('-') + 4);
}
const filteredPath = (prefix: string, skip = 0): string =>
  `/rest/Item?$filter=${encodeURIComponent('"name begin :1"')}&$params=${encodeURIComponent(JSON.stringify([prefix]))}&$top=${PAGE}${skip ? `&$skip=${skip}` : ''}`;

/** $compute=sum of price over the filtered page's selection (one aggregate statement; the answer is the number). */
const computePath = (prefix: string): string =>
  `/rest/Item/price?$compute=sum&$filter=${encodeURIComponent('"name begin :1"')}&$params=${encodeURIComponent(JSON.stringify([prefix]))}`;

/** A page's text with its global stamp set to 0 (the baseline does not read it). */
const stampless = (text: string): string => text.replace(/^\{"__entityModel":"Item","__GlobalStamp":\d+,/, '{"__entityModel":"Item","__GlobalStamp":0,');

/** The names of an answer's headers, with the length of each value (a cookie's token varies, not its length; the date and the keep-alive time are the server's). */
const headerNames = (r: Response): string[] => [...r.headers].map(([name, value]) => `${name}: ${name === 'date' || name === 'keep-alive' ? '' : value.length}`).sort();

/** Our answer must be the entity stored, and byte for byte what the baseline sends. */
async function sanity(ours: string, baseline: string, s: Settings): Promise<void> {
  const key = Math.min(12345, s.rows);
  const v = itemValues(key - 1);
  const a = await fetch(`${ours}/rest/Item(${key})`);
  const aText = await a.text();
  strictEqual(a.status, 200, `GET /rest/Item(${key}) answered ${a.status}: ${aText}`);
  const entity = JSON.parse(aText) as Record<string, unknown>;
  deepStrictEqual(
    { ...entity, __TIMESTAMP: undefined },
    { __entityModel: 'Item', __KEY: String(key), __TIMESTAMP: undefined, __STAMP: 1, ID: key, name: v.name, price: v.price, qty: v.qty, created: v.created.toISOString() },
    `GET /rest/Item(${key}) is not the stored entity`,
  );
  const b = await fetch(`${baseline}/item/${key}`);
  const bText = await b.text();
  strictEqual(b.status, 200, `baseline /item/${key} answered ${b.status}`);
  strictEqual(aText, bText, 'our entity and the baseline entity differ: the comparison would not be fair');
  if (!s.bareBaseline) deepStrictEqual(headerNames(b), headerNames(a), 'our answer and the baseline answer carry different headers: the comparison would not be fair');

  const skip = Math.min(500, s.maxSkip);
  const c = await fetch(`${ours}/rest/Item?$top=${PAGE}&$skip=${skip}`);
  const cText = await c.text();
  strictEqual(c.status, 200, `GET /rest/Item?$top=${PAGE}&$skip=${skip} answered ${c.status}: ${cText}`);
  const d = await fetch(`${baseline}/items?skip=${skip}`);
  const dText = await d.text();
  strictEqual(d.status, 200, `baseline /items?skip=${skip} answered ${d.status}`);
  const page = JSON.parse(cText) as { __COUNT: number; __SENT: number; __ENTITIES: { ID: number; name: string }[]; __GlobalStamp?: number };
  strictEqual(page.__COUNT, s.rows, '__COUNT');
  strictEqual(page.__SENT, PAGE, '__SENT');
  strictEqual(page.__ENTITIES[0]?.ID, skip + 1, 'first ID of the page');
  strictEqual(stampless(cText), dText, 'our page and the baseline page differ (the global stamp aside)');

  // the filtered page: the rows the generator wrote with that prefix, in key order
  const at = Math.min(12345, s.rows - 1);
  const prefix = prefixOf(at);
  const want: number[] = [];
  for (let n = 0; n < s.rows; n++) if (itemValues(n).name.startsWith(prefix)) want.push(n + 1);
  const e = await fetch(`${ours}${filteredPath(prefix)}`);
  const eText = await e.text();
  strictEqual(e.status, 200, `GET ${filteredPath(prefix)} answered ${e.status}: ${eText}`);
  const f = await fetch(`${baseline}/items?prefix=${encodeURIComponent(prefix)}&skip=0`);
  const fText = await f.text();
  strictEqual(f.status, 200, `baseline /items?prefix=${prefix} answered ${f.status}`);
  const filtered = JSON.parse(eText) as typeof page;
  strictEqual(filtered.__COUNT, want.length, `name begin "${prefix}": __COUNT`);
  strictEqual(filtered.__ENTITIES.map((x) => x.ID).join(','), want.slice(0, PAGE).join(','), `name begin "${prefix}": not the rows with that prefix`);
  strictEqual(stampless(eText), fText, 'our filtered page and the baseline one differ (the global stamp aside)');
  const g = await fetch(`${ours}${computePath(prefix)}`);
  const gText = await g.text();
  strictEqual(g.status, 200, `GET ${computePath(prefix)} answered ${g.status}: ${gText}`);
  const h = await fetch(`${baseline}/sum?prefix=${encodeURIComponent(prefix)}`);
  strictEqual(gText, await h.text(), 'our $compute=sum and the baseline sum differ');
  console.log(
    `sanity: GET /rest/Item(${key}) → 200, the stored entity, the same bytes as the baseline's (${aText.length} B); ` +
      `page of ${PAGE} at $skip=${skip} → 200, the same bytes (${cText.length} B); ` +
      `name begin "${prefix}" → 200, ${filtered.__COUNT} rows, the same bytes (${eText.length} B) — global stamps aside`,
  );
}

/**
 * The If-None-Match of the 304 scenario: the tag our server gives the page. Checked: the page asked
 * again is the same bytes with the same tag (from memory), and the tag is answered 304.
 */
async function notModifiedHeaders(url: string, path: string): Promise<Record<string, string>> {
  const first = await fetch(`${url}${path}`);
  const text = await first.text();
  const tag = first.headers.get('etag');
  strictEqual(first.status, 200, `GET ${path} answered ${first.status}: ${text}`);
  if (tag === null) throw new Error(`GET ${path} carries no ETag`);
  const again = await fetch(`${url}${path}`);
  strictEqual(await again.text(), text, 'the page asked again is not the same bytes');
  strictEqual(again.headers.get('etag'), tag, 'the page asked again carries another tag');
  const not = await fetch(`${url}${path}`, { headers: { 'if-none-match': tag } });
  strictEqual(not.status, 304, `GET ${path} with If-None-Match ${tag} answered ${not.status}`);
  return { 'if-none-match': tag };
}

// ---- servers ----

const profiling = (dir: string | undefined): string[] => (dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []);

interface Target {
  engine: Engine;
  project: Project;
  /** PostgreSQL started here: the postmaster's pid */
  dbPid?: number;
}

function startOurs(t: Target, s: Settings, profileDir: string | undefined): Promise<ServerProcess> {
  const db = t.engine === 'postgres' ? ['--db', t.project.db, '--pool-size', String(s.poolSize)] : [];
  return startServer({
    name: 'ours',
    args: [...profiling(profileDir), s.dist ? 'dist/main.js' : 'bin/dataset-rest.mjs', '--project', t.project.dir, ...db, '--port', '0', '--workers', String(s.workers), '--log-level', 'warn'],
    cwd: ROOT,
    ready: /dataset-rest listening on (http:\/\/\S+)\/rest/,
    supervised: s.workers > 1,
  });
}

function startBaseline(t: Target, s: Settings, profileDir: string | undefined): Promise<ServerProcess> {
  const args = t.engine === 'postgres' ? ['bench/baseline-server-pg.ts', t.project.db, String(s.poolSize)] : ['bench/baseline-server.ts', t.project.db];
  // the headers the contract puts on every answer (our server's session cookie among them), unless --bare-baseline
  const headers = s.bareBaseline ? [] : ['--cookie', cookieName(MODEL.name)];
  return startServer({
    name: 'baseline',
    args: [...profiling(profileDir), '--import', 'tsx', ...args, ...headers],
    cwd: ROOT,
    ready: /baseline listening on (http:\/\/\S+)/,
  });
}

// ---- the run ----

const SCENARIO_KINDS = ['byKey', 'page', 'filtered', 'compute', 'samePage', 'notModified'] as const;
type ScenarioKind = (typeof SCENARIO_KINDS)[number];
/** the scenarios of random reads, read again with --fresh */
const RANDOM_READS: ReadonlySet<ScenarioKind> = new Set(['byKey', 'page', 'filtered', 'compute']);

interface Scenario {
  readonly kind: ScenarioKind;
  readonly name: string;
  readonly ours: (n: number) => string;
  readonly baseline: (n: number) => string;
  /** the random n given to the path functions is in [0, range) */
  readonly range: number;
  /** the headers of our requests, found once our server is up (an If-None-Match with the tag it gave) */
  readonly oursHeaders?: (url: string) => Promise<Record<string, string>>;
}

interface Outcome {
  engine: Engine;
  /** ours/baseline req/s at least, or no target */
  target: number | undefined;
  scenario: Scenario;
  ours: Totals;
  baseline: Totals;
  /** requests each server answered in all (warm-up and sanity included), for profiles */
  served: { ours: number; baseline: number };
}

const rps = (t: Totals): number => t.requests / t.seconds;
const ms = (x: number): string => `${x.toFixed(x < 10 ? 2 : 1)} ms`;
const faults = (t: Totals): string => `${t.non2xx}/${t.errors}/${t.timeouts}`;
const cpuPerRequest = (t: Totals): number | undefined => (t.serverCpuMs === undefined ? undefined : (t.serverCpuMs * 1000) / t.requests);
const dbCpuPerRequest = (t: Totals): number | undefined => (t.dbCpuMs === undefined ? undefined : (t.dbCpuMs * 1000) / t.requests);

async function runScenario(scenario: Scenario, target: Target, s: Settings, profileRoot: string | undefined, check: boolean): Promise<Outcome> {
  const folder = join(profileRoot ?? '', target.engine, scenario.name.replaceAll(' ', '-'));
  const dirs = profileRoot ? { ours: join(folder, 'ours'), baseline: join(folder, 'baseline') } : undefined;
  if (dirs) for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  // Fresh processes per scenario: a clean JIT state, and one CPU profile per scenario.
  const started = await Promise.allSettled([startOurs(target, s, dirs?.ours), startBaseline(target, s, dirs?.baseline)]);
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    // the other one may be up: stop it, or its open pipes would keep this process alive
    await Promise.all(started.map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
    throw failed.reason;
  }
  const [ours, baseline] = started.map((r) => (r as PromiseFulfilledResult<ServerProcess>).value);
  const outcome: Outcome = { engine: target.engine, target: undefined, scenario, ours: newTotals(), baseline: newTotals(), served: { ours: 0, baseline: 0 } };
  try {
    if (check) await sanity(ours.url, baseline.url, s);
    const headers = scenario.oursHeaders ? await scenario.oursHeaders(ours.url) : s.fresh && RANDOM_READS.has(scenario.kind) ? { 'cache-control': 'no-cache' } : undefined;
    const sides = [
      { server: ours, path: scenario.ours, totals: outcome.ours, side: 'ours' as const, headers },
      { server: baseline, path: scenario.baseline, totals: outcome.baseline, side: 'baseline' as const, headers: undefined },
    ];
    if (s.warmup > 0) {
      for (const x of sides) outcome.served[x.side] += await load(x.server, x.path, scenario.range, s.warmup, s, target.dbPid, undefined, x.headers);
    }
    // Alternating rounds (ours first, then baseline first, …) so that a drift in machine speed
    // weighs on both alike.
    for (let round = 0; round < s.rounds; round++) {
      for (const x of round % 2 === 0 ? sides : [...sides].reverse()) {
        outcome.served[x.side] += await load(x.server, x.path, scenario.range, s.duration / s.rounds, s, target.dbPid, x.totals, x.headers);
      }
    }
    for (const x of sides) {
      const t = x.totals;
      const cpu = cpuPerRequest(t);
      console.log(
        `  ${ENGINE_NAME[target.engine]}, ${scenario.name}, ${x.side}: ${rps(t).toFixed(0)} req/s (rounds ${t.rounds.map((r) => r.toFixed(0)).join(', ')}), ` +
          `p50 ${ms(t.latencies.percentile(50))}, p99 ${ms(t.latencies.percentile(99))}, ${t.requests} requests, ` +
          `server CPU ${cpu === undefined ? 'n/a' : `${cpu.toFixed(1)} µs/req (${((t.serverCpuMs as number) / 10 / t.seconds).toFixed(0)}% of a core)`}, ` +
          `${target.engine === 'postgres' ? `PostgreSQL CPU ${dbCpuPerRequest(t)?.toFixed(1) ?? 'n/a'} µs/req, ` : ''}` +
          `load generator ${(t.clientCpuMs / 10 / t.seconds).toFixed(0)}% of a core, non-2xx/errors/timeouts ${faults(t)}`,
      );
    }
  } finally {
    await Promise.all([ours.stop(), baseline.stop()]);
  }
  if (dirs) {
    const [o, b] = [mainProfile(dirs.ours), mainProfile(dirs.baseline)];
    console.log(`\nCPU profile of our server, ${scenario.name} (start-up and warm-up included): ${o?.file}\n${o ? formatSummary(o, outcome.served.ours) : 'missing'}`);
    console.log(`\nCPU profile of the baseline, ${scenario.name}: ${b?.file}\n${b ? formatSummary(b, outcome.served.baseline) : 'missing'}\n`);
  }
  return outcome;
}

function table(outcomes: Outcome[]): string {
  const pg = outcomes.some((o) => o.engine === 'postgres');
  const head = [
    'scenario', 'ours req/s', 'baseline req/s', 'ours/baseline', 'target', 'ours p99', 'baseline p99', 'CPU µs/req ours', 'baseline',
    ...(pg ? ['PG CPU µs/req ours', 'baseline'] : []), 'ours non2xx/err/to', 'baseline',
  ];
  const us = (x: number | undefined): string => (x === undefined ? 'n/a' : x.toFixed(1));
  const rows = outcomes.map(({ scenario, ours, baseline, target }) => [
    scenario.name, rps(ours).toFixed(0), rps(baseline).toFixed(0), (rps(ours) / rps(baseline)).toFixed(2), target === undefined ? '—' : `≥ ${target.toFixed(2)}`,
    ms(ours.latencies.percentile(99)), ms(baseline.latencies.percentile(99)), us(cpuPerRequest(ours)), us(cpuPerRequest(baseline)),
    ...(pg ? [us(dbCpuPerRequest(ours)), us(dbCpuPerRequest(baseline))] : []), faults(ours), faults(baseline),
  ]);
  return formatTable(head, rows);
}

const ratio = (o: Outcome): number => rps(o.ours) / rps(o.baseline);
const cpuRatio = (o: Outcome): number | undefined => {
  const [a, b] = [cpuPerRequest(o.ours), cpuPerRequest(o.baseline)];
  return a === undefined || b === undefined ? undefined : a / b;
};
const verdict = (o: Outcome): string => (o.target === undefined ? 'no target' : `target ≥ ${o.target.toFixed(2)}: ${ratio(o) >= o.target ? 'met' : 'NOT met'}`);

/** Fills the engine's database, runs every scenario on it, prints its table; the database goes at the end. */
async function runEngine(engine: Engine, s: Settings, profileRoot: string | undefined): Promise<Outcome[]> {
  const fill: FillMode = s.fill ?? (engine === 'sqlite' ? 'core' : 'sql');
  let pg: BenchDatabase | undefined;
  try {
    if (engine === 'postgres') {
      pg = await benchDatabase();
      console.log(`\n== PostgreSQL: ${pg.where}; pool of ${s.poolSize} connections for our server and for the baseline ==`);
    } else {
      console.log('\n== SQLite ==');
    }
    const dir = temporaryFolder('dataset-rest-bench-');
    const project = await createProject(dir, s.rows, fill, pg?.url);
    console.log(
      `fill: ${s.rows} rows through ${fill === 'core' ? 'the datastore core (new/set/save in one transaction)' : engine === 'sqlite' ? 'plain SQL' : 'plain SQL (INSERT … SELECT FROM unnest, 10,000 rows a statement, one transaction), then VACUUM ANALYZE'} ` +
        `in ${(project.fillMs / 1000).toFixed(2)} s`,
    );
    const target: Target = { engine, project, dbPid: pg?.pid };
    // the hot page of samePage and notModified: one filtered page, the same every time
    const hot = prefixOf(Math.min(4321, s.rows - 1));
    const hotBaseline = `/items?prefix=${encodeURIComponent(hot)}&skip=0`;
    const scenarios: Scenario[] = [
      { kind: 'byKey', name: 'by key', ours: (n) => `/rest/Item(${n + 1})`, baseline: (n) => `/item/${n + 1}`, range: s.rows },
      { kind: 'page', name: `page of ${PAGE}`, ours: (n) => `/rest/Item?$top=${PAGE}&$skip=${n}`, baseline: (n) => `/items?skip=${n}`, range: s.maxSkip + 1 },
      {
        kind: 'filtered', name: `filtered page of ${PAGE}`, ours: (n) => filteredPath(prefixOf(n)),
        baseline: (n) => `/items?prefix=${encodeURIComponent(prefixOf(n))}&skip=0`, range: s.rows,
      },
      {
        kind: 'compute', name: '$compute=sum filtered', ours: (n) => computePath(prefixOf(n)),
        baseline: (n) => `/sum?prefix=${encodeURIComponent(prefixOf(n))}`, range: s.rows,
      },
      { kind: 'samePage', name: `the same page of ${PAGE} again`, ours: () => filteredPath(hot), baseline: () => hotBaseline, range: 1 },
      {
        kind: 'notModified', name: `the same page, If-None-Match (304)`, ours: () => filteredPath(hot), baseline: () => hotBaseline, range: 1,
        oursHeaders: (url) => notModifiedHeaders(url, filteredPath(hot)),
      },
    ];
    const outcomes: Outcome[] = [];
    for (const [i, scenario] of scenarios.filter((x) => !s.scenarios || s.scenarios.includes(x.kind)).entries()) outcomes.push({ ...(await runScenario(scenario, target, s, profileRoot, i === 0)), engine, target: TARGETS[engine][scenario.kind] });
    console.log(`\n${ENGINE_NAME[engine]}:\n${table(outcomes)}`);
    return outcomes;
  } finally {
    await pg?.close();
  }
}

async function main(): Promise<number> {
  const s = settings();
  const started = performance.now();
  if (s.dist) {
    console.log('building dist/ (npm run build) for --dist');
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  }
  console.log(
    `read bench on ${s.engines.map((e) => ENGINE_NAME[e]).join(' and ')}: ${s.rows} rows; ${s.connections} connections, pipelining 1, 127.0.0.1; per server and scenario ${s.warmup} s warm-up, ` +
      `then ${s.duration} s in ${s.rounds} alternating rounds; ours runs ${s.dist ? 'dist/ (compiled by tsc)' : 'the sources through tsx'}${s.profile ? '; CPU profiling on (it slows both servers)' : ''}`,
  );
  console.log(
    `scenarios: by key (GET /rest/Item(k), k random); page of ${PAGE} ($top=${PAGE}&$skip=random, with the count of all rows); ` +
      `filtered page of ${PAGE} ($filter="name begin :1", a random prefix like "bolt-012" that ${PAGE} rows of each 1,000 have, $top=${PAGE}, with its count); ` +
      '$compute=sum filtered (/rest/Item/price?$compute=sum over the same $filter)',
  );
  // Profiles are kept (outside the temporary folder) so they can be opened afterwards.
  const profileRoot = s.profile ? mkdtempSync(join(tmpdir(), 'dataset-rest-bench-profile-')) : undefined;

  const outcomes: Outcome[] = [];
  for (const engine of s.engines) outcomes.push(...(await runEngine(engine, s, profileRoot)));

  console.log(
    '\nreq/s: answered requests over the measured time; p99: response time; CPU µs/req: server CPU time (all threads) per request while loaded; ' +
      'PG CPU µs/req: the PostgreSQL server\'s CPU time (postmaster, backends, background processes) per request while that side was loaded (n/a on a server not started here). When the load generator is near 100% of a core, req/s ratios understate the difference; the CPU ratio does not.',
  );
  const faulty = outcomes.some(({ ours, baseline }) => [ours, baseline].some((t) => t.non2xx + t.errors + t.timeouts > 0));
  console.log(`\nratios ours/baseline (req/s; CPU per request in brackets, baseline/ours):`);
  const kinds = [...new Set(outcomes.map((o) => o.scenario.kind))];
  const cell = (o: Outcome | undefined): string => {
    if (!o) return '';
    const c = cpuRatio(o);
    return `${ratio(o).toFixed(2)}${c === undefined ? '' : ` (${(1 / c).toFixed(2)})`} — ${verdict(o)}`;
  };
  console.log(formatTable(
    ['scenario', ...s.engines.map((e) => ENGINE_NAME[e])],
    kinds.map((k) => [
      (outcomes.find((o) => o.scenario.kind === k) as Outcome).scenario.name,
      ...s.engines.map((e) => cell(outcomes.find((o) => o.engine === e && o.scenario.kind === k))),
    ]),
  ).replace(/^/gm, '  '));
  const missed = outcomes.filter((o) => o.target !== undefined && ratio(o) < o.target).map((o) => `${ENGINE_NAME[o.engine]} ${o.scenario.name}`);
  console.log(
    `\n${missed.length ? `target NOT met: ${missed.join(', ')}` : 'every target met'}; ${faulty ? 'SOME REQUESTS FAILED (see non2xx/err/to)' : 'every request answered 2xx'}; ` +
      `${((performance.now() - started) / 1000).toFixed(0)} s in all`,
  );
  return faulty ? 1 : 0;
}
main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    console.error(`read bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exitCode = 1;
  },
);
