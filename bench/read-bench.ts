// The read bench (`npm run bench`): our server against a hand-written node:http + better-sqlite3
// baseline over the same SQLite file (100,000 rows), for a read by key and a page of 100, loaded
// with autocannon on 127.0.0.1. Both servers run as child processes; all is removed at the end.
//
// Options (after `npm run bench --`): --rows N, --duration S (per server and scenario, split into
// --rounds R alternating runs), --warmup S, --connections N, --max-skip N, --fill core|sql,
// --profile (CPU profiles of both servers, kept and summarised per request).

import { deepStrictEqual, strictEqual } from 'node:assert/strict';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { formatSummary, mainProfile } from './cpuprofile.js';
import { createProject, itemValues, type FillMode } from './fixture.js';
import { startServer, temporaryFolder, type ServerProcess } from './processes.js';
import { formatTable, Latencies, processCpuMs } from './measure.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PAGE = 100;
const TARGET = 0.7;

interface Settings {
  rows: number;
  duration: number;
  rounds: number;
  warmup: number;
  connections: number;
  maxSkip: number;
  fill: FillMode;
  profile: boolean;
}

function settings(): Settings {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '100000' },
      duration: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '10' },
      'max-skip': { type: 'string' },
      fill: { type: 'string', default: 'core' },
      profile: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const num = (name: string, text: string | undefined, min: number, whole = true): number => {
    const n = Number(text);
    if (!Number.isFinite(n) || (whole && !Number.isInteger(n)) || n < min) throw new Error(`--${name} takes a ${whole ? 'whole ' : ''}number of ${min} or more, got '${text}'`);
    return n;
  };
  if (values.fill !== 'core' && values.fill !== 'sql') throw new Error(`--fill is core or sql, got '${values.fill}'`);
  const rows = num('rows', values.rows, PAGE + 1);
  return {
    rows,
    duration: num('duration', values.duration, 1, false),
    rounds: num('rounds', values.rounds, 1),
    warmup: num('warmup', values.warmup, 0, false),
    connections: num('connections', values.connections, 1),
    maxSkip: values['max-skip'] === undefined ? rows - PAGE : Math.min(num('max-skip', values['max-skip'], 0), rows - PAGE),
    fill: values.fill,
    profile: values.profile,
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
  /** CPU ms of this process (the load generator) while loading */
  clientCpuMs: number;
  latencies: Latencies;
  /** requests per second of each round */
  rounds: number[];
}

const newTotals = (): Totals => ({ requests: 0, seconds: 0, non2xx: 0, errors: 0, timeouts: 0, serverCpuMs: 0, clientCpuMs: 0, latencies: new Latencies(), rounds: [] });

async function load(server: ServerProcess, path: (n: number) => string, range: number, seconds: number, s: Settings, into?: Totals): Promise<number> {
  const cpu0 = processCpuMs(server.pid);
  const client0 = process.cpuUsage();
  const instance = autocannon({
    url: server.url,
    connections: s.connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    // a new random key (or offset) for every request
    requests: [{ setupRequest: (request) => ({ ...request, path: path(Math.floor(Math.random() * range)) }) }],
  });
  if (into) instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => into.latencies.add(ms));
  const r = await instance;
  const client = process.cpuUsage(client0);
  const cpu1 = processCpuMs(server.pid);
  const answered = r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'];
  if (into) {
    into.requests += answered;
    into.seconds += r.duration;
    into.non2xx += r.non2xx;
    into.errors += r.errors;
    into.timeouts += r.timeouts;
    into.serverCpuMs = into.serverCpuMs === undefined || cpu0 === undefined || cpu1 === undefined ? undefined : into.serverCpuMs + cpu1 - cpu0;
    into.clientCpuMs += (client.user + client.system) / 1000;
    into.rounds.push(answered / r.duration);
  }
  return answered;
}

// ---- sanity ----

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

  const skip = Math.min(500, s.maxSkip);
  const c = await fetch(`${ours}/rest/Item?$top=${PAGE}&$skip=${skip}`);
  const cText = await c.text();
  strictEqual(c.status, 200, `GET /rest/Item?$top=${PAGE}&$skip=${skip} answered ${c.status}: ${cText}`);
  const d = await fetch(`${baseline}/items?skip=${skip}`);
  const dText = await d.text();
  strictEqual(d.status, 200, `baseline /items?skip=${skip} answered ${d.status}`);
  const page = JSON.parse(cText) as { __COUNT: number; __SENT: number; __ENTITIES: { ID: number }[]; __GlobalStamp?: number };
  strictEqual(page.__COUNT, s.rows, '__COUNT');
  strictEqual(page.__SENT, PAGE, '__SENT');
  strictEqual(page.__ENTITIES[0]?.ID, skip + 1, 'first ID of the page');
  const other = JSON.parse(dText) as typeof page;
  deepStrictEqual({ ...page, __GlobalStamp: 0 }, { ...other, __GlobalStamp: 0 }, 'our page and the baseline page differ');
  console.log(
    `sanity: GET /rest/Item(${key}) → 200, the stored entity, the same bytes as the baseline's (${aText.length} B); ` +
      `page of ${PAGE} at $skip=${skip} → 200, the same entities (${cText.length} B ours, ${dText.length} B baseline)`,
  );
}

// ---- servers ----

const profiling = (dir: string | undefined): string[] => (dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []);

function startOurs(dir: string, profileDir: string | undefined): Promise<ServerProcess> {
  return startServer({
    name: 'ours',
    args: [...profiling(profileDir), 'bin/dataset-rest.mjs', '--project', dir, '--port', '0', '--log-level', 'warn'],
    cwd: ROOT,
    ready: /dataset-rest listening on (http:\/\/\S+)\/rest/,
  });
}

function startBaseline(db: string, profileDir: string | undefined): Promise<ServerProcess> {
  return startServer({
    name: 'baseline',
    args: [...profiling(profileDir), '--import', 'tsx', 'bench/baseline-server.ts', db],
    cwd: ROOT,
    ready: /baseline listening on (http:\/\/\S+)/,
  });
}

// ---- the run ----

interface Scenario {
  readonly name: string;
  readonly ours: (n: number) => string;
  readonly baseline: (n: number) => string;
  /** the random n given to the path functions is in [0, range) */
  readonly range: number;
}

interface Outcome {
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

async function runScenario(scenario: Scenario, project: { dir: string; db: string }, s: Settings, profileRoot: string | undefined, check: boolean): Promise<Outcome> {
  const dirs = profileRoot ? { ours: join(profileRoot, scenario.name.replaceAll(' ', '-'), 'ours'), baseline: join(profileRoot, scenario.name.replaceAll(' ', '-'), 'baseline') } : undefined;
  if (dirs) for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  // Fresh processes per scenario: a clean JIT state, and one CPU profile per scenario.
  const started = await Promise.allSettled([startOurs(project.dir, dirs?.ours), startBaseline(project.db, dirs?.baseline)]);
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    // the other one may be up: stop it, or its open pipes would keep this process alive
    await Promise.all(started.map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
    throw failed.reason;
  }
  const [ours, baseline] = started.map((r) => (r as PromiseFulfilledResult<ServerProcess>).value);
  const outcome: Outcome = { scenario, ours: newTotals(), baseline: newTotals(), served: { ours: 0, baseline: 0 } };
  try {
    if (check) await sanity(ours.url, baseline.url, s);
    const sides = [
      { server: ours, path: scenario.ours, totals: outcome.ours, side: 'ours' as const },
      { server: baseline, path: scenario.baseline, totals: outcome.baseline, side: 'baseline' as const },
    ];
    if (s.warmup > 0) {
      for (const x of sides) outcome.served[x.side] += await load(x.server, x.path, scenario.range, s.warmup, s);
    }
    // Alternating rounds (ours first, then baseline first, …) so that a drift in machine speed
    // weighs on both alike.
    for (let round = 0; round < s.rounds; round++) {
      for (const x of round % 2 === 0 ? sides : [...sides].reverse()) {
        outcome.served[x.side] += await load(x.server, x.path, scenario.range, s.duration / s.rounds, s, x.totals);
      }
    }
    for (const x of sides) {
      const t = x.totals;
      const cpu = cpuPerRequest(t);
      console.log(
        `  ${scenario.name}, ${x.side}: ${rps(t).toFixed(0)} req/s (rounds ${t.rounds.map((r) => r.toFixed(0)).join(', ')}), ` +
          `p50 ${ms(t.latencies.percentile(50))}, p99 ${ms(t.latencies.percentile(99))}, ${t.requests} requests, ` +
          `server CPU ${cpu === undefined ? 'n/a' : `${cpu.toFixed(1)} µs/req (${((t.serverCpuMs as number) / 10 / t.seconds).toFixed(0)}% of a core)`}, ` +
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
  const head = ['scenario', 'ours req/s', 'baseline req/s', 'ours/baseline', 'ours p99', 'baseline p99', 'CPU µs/req ours', 'baseline', 'ours non2xx/err/to', 'baseline'];
  const rows = outcomes.map(({ scenario, ours, baseline }) => {
    const [co, cb] = [cpuPerRequest(ours), cpuPerRequest(baseline)];
    return [
      scenario.name, rps(ours).toFixed(0), rps(baseline).toFixed(0), (rps(ours) / rps(baseline)).toFixed(2),
      ms(ours.latencies.percentile(99)), ms(baseline.latencies.percentile(99)),
      co === undefined ? 'n/a' : co.toFixed(1), cb === undefined ? 'n/a' : cb.toFixed(1), faults(ours), faults(baseline),
    ];
  });
  return formatTable(head, rows);
}

async function main(): Promise<number> {
  const s = settings();
  const started = performance.now();
  console.log(
    `read bench: ${s.rows} rows; ${s.connections} connections, pipelining 1, 127.0.0.1; per server and scenario ${s.warmup} s warm-up, ` +
      `then ${s.duration} s in ${s.rounds} alternating rounds${s.profile ? '; CPU profiling on (it slows both servers)' : ''}`,
  );

  const dir = temporaryFolder('dataset-rest-bench-');
  const project = await createProject(dir, s.rows, s.fill);
  console.log(`fill: ${s.rows} rows through ${s.fill === 'core' ? 'the datastore core (new/set/save in one transaction)' : 'plain SQL'} in ${(project.fillMs / 1000).toFixed(2)} s`);
  // Profiles are kept (outside the temporary folder) so they can be opened afterwards.
  const profileRoot = s.profile ? mkdtempSync(join(tmpdir(), 'dataset-rest-bench-profile-')) : undefined;

  const scenarios: Scenario[] = [
    { name: 'by key', ours: (n) => `/rest/Item(${n + 1})`, baseline: (n) => `/item/${n + 1}`, range: s.rows },
    { name: `page of ${PAGE}`, ours: (n) => `/rest/Item?$top=${PAGE}&$skip=${n}`, baseline: (n) => `/items?skip=${n}`, range: s.maxSkip + 1 },
  ];
  const outcomes: Outcome[] = [];
  for (const [i, scenario] of scenarios.entries()) outcomes.push(await runScenario(scenario, project, s, profileRoot, i === 0));

  console.log(`\n${table(outcomes)}\n`);
  console.log(
    'req/s: answered requests over the measured time; p99: response time; CPU µs/req: server CPU time (all threads) per request while loaded. ' +
      'When the load generator is near 100% of a core, req/s ratios understate the difference; the CPU ratio does not.',
  );
  const faulty = outcomes.some(({ ours, baseline }) => [ours, baseline].some((t) => t.non2xx + t.errors + t.timeouts > 0));
  const ratio = (o: Outcome) => rps(o.ours) / rps(o.baseline);
  const cpuRatio = (o: Outcome) => {
    const [a, b] = [cpuPerRequest(o.ours), cpuPerRequest(o.baseline)];
    return a === undefined || b === undefined ? '' : ` (CPU per request ×${(a / b).toFixed(2)})`;
  };
  const [byKey, page] = outcomes;
  console.log(
    `ratios ours/baseline: by key ${ratio(byKey).toFixed(2)}${cpuRatio(byKey)} — target ≥ ${TARGET.toFixed(2)}: ${ratio(byKey) >= TARGET ? 'met' : 'NOT met'}; ` +
      `page of ${PAGE} ${ratio(page).toFixed(2)}${cpuRatio(page)}; ${faulty ? 'SOME REQUESTS FAILED (see non2xx/err/to)' : 'every request answered 2xx'}; ` +
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
