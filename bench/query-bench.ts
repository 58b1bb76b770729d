// The query bench (`node --import tsx bench/query-bench.ts`): $filter on a dataclass of 1,000,000
// rows (Person, bench/people.ts) through our server, loaded with autocannon on 127.0.0.1:
//   (a) equality on the indexed text attribute lastName, with case and accent variants of the names
//   (b) prefix on it (lastName begin <3 letters>)
//   (c) equality on the non-indexed text attribute city (a table scan per request)
//   (d) equality on lastName with $orderby=firstName
// It first checks every answer's __COUNT against the generator's own counts (a variant must find
// what the exact name finds) and prints SQLite's plan of each scenario's SQL (compiled with the
// server's own parser, resolver and compiler). The server runs as a child process; it and the
// temporary project are removed at the end, however the bench ends.
//
// Each scenario is one autocannon run whose first --warmup seconds are not counted, then a few
// requests sent one at a time (the latency with no queue); every request carries one of 4096
// values drawn from the rows (so common surnames come up more often), typed in a random variant.
//
// Options: --rows N (1000000), --duration S per indexed scenario (5), --scan-duration S for (c) (3),
// --warmup S (1; at least 3 for the scan), --connections N (10), --top N (100).

import { strictEqual } from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { MAX_PAGE_SIZE } from '../src/config/limits.js';
import { buildModel } from '../src/model/load-model.js';
import type { DataClassModel } from '../src/model/types.js';
import { parseQuery } from '../src/query/parser.js';
import type { ColumnSpec, SelectSpec } from '../src/query/plan.js';
import { resolveQuery } from '../src/query/resolve.js';
import { compileCount, compileSelect } from '../src/sql/compiler/statements.js';
import { sqliteDialect } from '../src/sql/dialect-sqlite.js';
import { fold } from '../src/util/fold.js';
import { createPeopleProject, MODEL, personValues, TABLE, type PeopleProject } from './people.js';
import { startServer, temporaryFolder, type ServerProcess } from './processes.js';
import { formatTable, Latencies, processCpuMs } from './measure.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ms = (x: number): string => `${x.toFixed(x < 10 ? 2 : 1)} ms`;
const INDEX = `idx_${TABLE}_lastName__fold`;

interface Settings {
  rows: number;
  duration: number;
  scanDuration: number;
  warmup: number;
  connections: number;
  top: number;
}

function settings(): Settings {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '1000000' },
      duration: { type: 'string', default: '5' },
      'scan-duration': { type: 'string', default: '3' },
      warmup: { type: 'string', default: '1' },
      connections: { type: 'string', default: '10' },
      top: { type: 'string', default: '100' },
    },
    strict: true,
  });
  const num = (name: string, text: string | undefined, min: number, whole = true, max = Infinity): number => {
    const n = Number(text);
    if (!Number.isFinite(n) || (whole && !Number.isInteger(n)) || n < min || n > max) {
      throw new Error(`--${name} takes a ${whole ? 'whole ' : ''}number of ${min} or more${max < Infinity ? ` up to ${max}` : ''}, got '${text}'`);
    }
    return n;
  };
  return {
    rows: num('rows', values.rows, 1000),
    duration: num('duration', values.duration, 1, false),
    scanDuration: num('scan-duration', values['scan-duration'], 1, false),
    warmup: num('warmup', values.warmup, 0, false),
    connections: num('connections', values.connections, 1),
    top: num('top', values.top, 1, true, MAX_PAGE_SIZE),
  };
}

// ---- values sent: names as stored, and as a user would type them ----

/** A 32-bit integer hash: the bench's choices are the same on every run. */
function pick(i: number, salt: number, range: number): number {
  let x = (Math.imul(i, 0x9e3779b1) + salt) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d) >>> 0;
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b) >>> 0;
  return ((x ^ (x >>> 16)) >>> 0) % range;
}

const stripAccents = (s: string): string => s.normalize('NFKD').replace(/\p{M}/gu, '');
const mixedCase = (s: string): string => Array.from(s, (c, i) => (i % 2 ? c.toLowerCase() : c.toUpperCase())).join('');

/** Ways of typing a value: each must fold to the value's own fold (else the exact value is sent). */
const VARIANTS: readonly { name: string; of: (s: string) => string }[] = [
  { name: 'as stored', of: (s) => s },
  { name: 'upper case', of: (s) => s.toUpperCase() },
  { name: 'lower case', of: (s) => s.toLowerCase() },
  { name: 'no accents', of: stripAccents },
  { name: 'no accents, upper', of: (s) => stripAccents(s).toUpperCase() },
  { name: 'mIxEd', of: mixedCase },
];

interface Typed {
  value: string;
  /** the variant did not fold like the value (a letter whose case change changes its fold) */
  fellBack: boolean;
}

function variant(value: string, i: number): Typed {
  const v = VARIANTS[pick(i, 77, VARIANTS.length)].of(value);
  return fold(v) === fold(value) ? { value: v, fellBack: false } : { value, fellBack: true };
}

const codePoints = (s: string, n: number): string => Array.from(s).slice(0, n).join('');

// ---- URLs ----

const q = (v: string): string => encodeURIComponent(v);
const params = (...values: unknown[]): string => q(`'${JSON.stringify(values)}'`);

const filterPath = (filter: string, value: string, top: number, orderby?: string): string =>
  `/rest/${TABLE}?$filter=${q(`"${filter}"`)}&$params=${params(value)}${orderby ? `&$orderby=${q(orderby)}` : ''}&$top=${top}`;

interface Scenario {
  readonly key: string;
  readonly name: string;
  /** query text (its :1 is the varying value) and $orderby, as sent */
  readonly filter: string;
  readonly orderby?: string;
  readonly seconds: number;
  /** a table scan per request: fewer samples */
  readonly scan?: boolean;
  /** the value of request i, and the rows it must count */
  readonly value: (i: number) => Typed;
  readonly expected: (value: string) => number;
  /** what the plan of its SQL must show */
  readonly plan: RegExp;
  readonly planText: string;
}

/** Distinct request paths per scenario (each request picks one at random). */
const PATHS = 4096;

function scenarios(p: PeopleProject, s: Settings): Scenario[] {
  const row = (i: number, salt: number) => personValues(pick(i, salt, p.rows));
  const usesIndex = new RegExp(`USING (COVERING )?INDEX ${INDEX}\\b`);
  return [
    {
      key: 'a', name: 'lastName = :1 (indexed)', filter: 'lastName=:1', seconds: s.duration,
      value: (i) => variant(row(i, 1).lastName, i), expected: (v) => p.lastNames.equal(v), plan: usesIndex, planText: `uses ${INDEX}`,
    },
    {
      key: 'b', name: 'lastName begin :1 (3 letters)', filter: 'lastName begin :1', seconds: s.duration,
      value: (i) => { const t = variant(row(i, 2).lastName, i); return { ...t, value: codePoints(t.value, 3) }; }, expected: (v) => p.lastNames.prefix(v), plan: usesIndex, planText: `uses ${INDEX}`,
    },
    {
      key: 'c', name: 'city = :1 (not indexed)', filter: 'city=:1', seconds: s.scanDuration, scan: true,
      value: (i) => variant(row(i, 3).city, i), expected: (v) => p.cities.equal(v), plan: /^SCAN t0$/m, planText: 'scans the table',
    },
    {
      key: 'd', name: 'lastName = :1, $orderby=firstName', filter: 'lastName=:1', orderby: 'firstName', seconds: s.duration,
      value: (i) => variant(row(i, 4).lastName, i), expected: (v) => p.lastNames.equal(v), plan: usesIndex, planText: `uses ${INDEX}`,
    },
  ];
}

// ---- plans: the SQL the server runs for a page and for its __COUNT ----

/** The page SELECT as EntitySelection.page compiles it: the entity's columns, the order then the key, LIMIT top. */
function pageSql(dc: DataClassModel, scenario: Scenario, value: string, top: number): { page: { sql: string; params: readonly unknown[] }; count: { sql: string; params: readonly unknown[] } } {
  const text = scenario.orderby ? `${scenario.filter} order by ${scenario.orderby}` : scenario.filter;
  const { where, order } = resolveQuery(dc, parseQuery(text), [value], () => true);
  const columns: ColumnSpec[] = [...dc.storage.map((attr) => ({ kind: 'storage' as const, attr })), { kind: 'stamp' }, { kind: 'timestamp' }];
  const spec: SelectSpec = { dataClass: dc, columns, where, order: [...order, { path: { via: [], attr: dc.key }, descending: false }], limit: top, offset: 0 };
  return { page: compileSelect(sqliteDialect, spec, null), count: compileCount(sqliteDialect, dc, where, null) };
}

function explain(db: Database.Database, sql: string, args: readonly unknown[]): string {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...(args as unknown[])) as { id: number; parent: number; detail: string }[];
  const depth = new Map<number, number>([[0, 0]]);
  return rows.map((r) => {
    const d = (depth.get(r.parent) ?? 0) + 1;
    depth.set(r.id, d);
    return `${'  '.repeat(d)}${r.detail}`;
  }).join('\n');
}

function printPlans(p: PeopleProject, list: Scenario[], s: Settings): boolean {
  const dc = buildModel(MODEL).dataClassesByName.get(TABLE) as DataClassModel;
  const db = new Database(p.db, { readonly: true });
  let ok = true;
  try {
    console.log('\nSQLite query plans (EXPLAIN QUERY PLAN of the SQL compiled by src/query + src/sql, as the server runs it):');
    for (const sc of list) {
      const value = sc.value(0).value;
      const { page, count } = pageSql(dc, sc, value, s.top);
      for (const [what, c] of [['page', page], ['__COUNT', count]] as const) {
        const plan = explain(db, c.sql, c.params);
        const met = sc.plan.test(plan.split('\n').map((l) => l.trim()).join('\n'));
        ok &&= met;
        console.log(`(${sc.key}) ${what}: ${c.sql}\n    params ${JSON.stringify(c.params)}\n${plan.replace(/^/gm, '  ')}\n    → ${met ? `${sc.planText}, as expected` : `EXPECTED IT TO ${sc.planText.toUpperCase()}`}`);
      }
    }
    // The two statements of a request timed alone in this process (same SQLite settings as the
    // server's reader: defaults), over the first values the load sends: where a request's time goes.
    console.log('\nSQL alone (better-sqlite3 in this process, one statement at a time, over the values the load sends first):');
    for (const sc of list) {
      const n = sc.scan ? 4 : 200;
      const times = { page: [] as number[], count: [] as number[] };
      let rows = 0;
      for (let i = 0; i < n; i++) {
        const { page, count } = pageSql(dc, sc, sc.value(i).value, s.top);
        const pageStmt = db.prepare(page.sql);
        const countStmt = db.prepare(count.sql);
        let t = performance.now();
        pageStmt.all(...(page.params as unknown[]));
        times.page.push(performance.now() - t);
        t = performance.now();
        rows += (countStmt.get(...(count.params as unknown[])) as { n: number }).n;
        times.count.push(performance.now() - t);
      }
      const stat = (x: number[]) => `mean ${ms(x.reduce((a, b) => a + b, 0) / x.length)}, max ${ms(Math.max(...x))}`;
      console.log(`  (${sc.key}) over ${n} values matching ${(rows / n).toFixed(0)} rows on average: page ${stat(times.page)}; __COUNT ${stat(times.count)}`);
    }
  } finally {
    db.close();
  }
  return ok;
}

// ---- sanity: __COUNT against the generator's counts, through HTTP ----

interface Page {
  __COUNT: number;
  __SENT: number;
  __ENTITIES: { ID: number; lastName: string; firstName: string; city: string }[];
}

async function get(base: string, path: string): Promise<Page> {
  const r = await fetch(base + path);
  const text = await r.text();
  strictEqual(r.status, 200, `GET ${decodeURIComponent(path)} answered ${r.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as Page;
}

const utf8Order = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

async function sanity(base: string, p: PeopleProject, s: Settings): Promise<void> {
  console.log('\nsanity (__COUNT of every variant = the rows the generator wrote with that folded value):');
  const variantsOf = (v: string) => [...new Set(VARIANTS.map((x) => x.of(v)))];
  // the most common surname (Müller and Muller fold alike), accents, an apostrophe, spaces, a compound, a rare one
  const names = ['Müller', 'Lefèvre', "O'Brien", 'van den Berg', 'Nguyễn', 'Ó Súilleabháin', 'Schäfer-Krüger', 'Thériault'];
  for (const name of names) {
    const expected = p.lastNames.equal(name);
    const seen: string[] = [];
    for (const v of variantsOf(name)) {
      const page = await get(base, filterPath('lastName=:1', v, s.top));
      const stray = page.__ENTITIES.find((e) => fold(e.lastName) !== fold(name));
      strictEqual(stray, undefined, `lastName=${v} returned ${stray?.lastName}`);
      strictEqual(page.__SENT, Math.min(s.top, expected), `lastName=${v}: __SENT`);
      strictEqual(page.__COUNT, expected, `lastName=${v}: __COUNT ${page.__COUNT}, the generator wrote ${expected} rows folding to '${fold(name)}'`);
      seen.push(`${JSON.stringify(v)} ${page.__COUNT}`);
    }
    console.log(`  (a) lastName = ${seen.join(', ')}: all = ${expected} expected`);
  }
  const absent = await get(base, filterPath('lastName=:1', 'Zzyzx', s.top));
  strictEqual(absent.__COUNT, 0, 'an absent name');
  // 'ı' (dotless i) folds to 'i', as 'I' does: "Aydın" and "AYDIN" find the same rows
  const aydin = await get(base, filterPath('lastName=:1', 'Aydın', s.top));
  const upper = await get(base, filterPath('lastName=:1', 'AYDIN', s.top));
  strictEqual(aydin.__COUNT, upper.__COUNT, '"Aydın" and "AYDIN"');
  console.log(`  (a) "Zzyzx" 0 as expected; "Aydın" ${aydin.__COUNT} = "AYDIN" ${upper.__COUNT}`);

  for (const prefix of ['Mül', 'mul', 'MÜL', 'Lef', "O'B", 'Sch', 'van']) {
    const page = await get(base, filterPath('lastName begin :1', prefix, s.top));
    const expected = p.lastNames.prefix(prefix);
    strictEqual(page.__COUNT, expected, `lastName begin ${prefix}: __COUNT ${page.__COUNT}, expected ${expected}`);
    const stray = page.__ENTITIES.find((e) => !fold(e.lastName).startsWith(fold(prefix)));
    strictEqual(stray, undefined, `lastName begin ${prefix} returned ${stray?.lastName}`);
    // the same through the @ wildcard: = "Mül@"
    const at = await get(base, filterPath('lastName=:1', `${prefix}@`, s.top));
    strictEqual(at.__COUNT, expected, `lastName = ${prefix}@: __COUNT ${at.__COUNT}, expected ${expected}`);
  }
  console.log(`  (b) lastName begin "Mül"/"mul"/"MÜL" ${p.lastNames.prefix('mul')}, "Lef" ${p.lastNames.prefix('lef')}, "O'B" ${p.lastNames.prefix("o'b")}, "Sch" ${p.lastNames.prefix('sch')}, "van" ${p.lastNames.prefix('van')}: as expected, and the same as = "…@"`);

  const seen: string[] = [];
  for (const city of ['Besançon', 'BESANCON', 'besançon', 'Łódź', 'ŁÓDŹ', 'lodz', "L'Haÿ-les-Roses"]) {
    const page = await get(base, filterPath('city=:1', city, s.top));
    strictEqual(page.__COUNT, p.cities.equal(city), `city=${city}: __COUNT ${page.__COUNT}, expected ${p.cities.equal(city)}`);
    seen.push(`${JSON.stringify(city)} ${page.__COUNT}`);
  }
  console.log(`  (c) city = ${seen.join(', ')}: as expected ("lodz" finds "Łódź": 'ł' folds to 'l')`);

  for (const name of ['Schmidt', 'DUPONT', 'nguyen']) {
    const page = await get(base, filterPath('lastName=:1', name, s.top, 'firstName'));
    strictEqual(page.__COUNT, p.lastNames.equal(name), `lastName=${name} $orderby=firstName: __COUNT`);
    const keys = page.__ENTITIES.map((e) => fold(e.firstName));
    const sorted = [...keys].sort(utf8Order);
    strictEqual(keys.join('|'), sorted.join('|'), `lastName=${name} $orderby=firstName: not sorted by folded first name`);
    // the first page holds the smallest first names of all matching rows
    const all = await get(base, filterPath('lastName=:1', name, MAX_PAGE_SIZE, 'firstName'));
    strictEqual(all.__SENT, Math.min(MAX_PAGE_SIZE, page.__COUNT));
    strictEqual(keys.join('|'), all.__ENTITIES.slice(0, s.top).map((e) => fold(e.firstName)).join('|'));
  }
  console.log(`  (d) lastName = "Schmidt"/"DUPONT"/"nguyen" with $orderby=firstName: counts ${['Schmidt', 'DUPONT', 'nguyen'].map((n) => p.lastNames.equal(n)).join('/')} as expected, pages sorted by folded firstName`);
}

// ---- load ----



interface Outcome {
  scenario: Scenario;
  requests: number;
  seconds: number;
  faults: { non2xx: number; errors: number; timeouts: number };
  latencies: Latencies;
  serverCpuMs?: number;
  clientCpuMs: number;
  /** rows the values sent match: mean and largest */
  matched: { mean: number; max: number; min: number };
  /** values sent as stored because their variant folded otherwise */
  fellBack: number;
  distinct: number;
  /** latency of requests sent one at a time (no queue) */
  alone: { median: number; max: number; n: number };
}

/**
 * One autocannon run of `warmup + seconds`; only the responses after the warm-up are counted and
 * timed. (Measured from a run already going, not from a fresh one: with requests that block the
 * server for tens of ms, the connections of a new run take seconds to settle into their turns, and
 * a short run would time mostly that.)
 */
async function load(server: ServerProcess, paths: readonly string[], warmup: number, seconds: number, s: Settings) {
  const latencies = new Latencies();
  let requests = 0;
  let non2xx = 0;
  let counting = warmup === 0;
  let cpu0 = processCpuMs(server.pid);
  let client0 = process.cpuUsage();
  let t0 = performance.now();
  const instance = autocannon({
    url: server.url,
    connections: s.connections,
    pipelining: 1,
    duration: warmup + seconds,
    timeout: 30,
    requests: [{ setupRequest: (request) => ({ ...request, path: paths[Math.floor(Math.random() * paths.length)] }) }],
  });
  const mark = warmup > 0 ? setTimeout(() => {
    counting = true;
    cpu0 = processCpuMs(server.pid);
    client0 = process.cpuUsage();
    t0 = performance.now();
  }, warmup * 1000) : undefined;
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (!counting) return;
    requests++;
    if (status < 200 || status > 299) non2xx++;
    latencies.add(ms);
  });
  try {
    const r = await instance;
    const elapsed = (performance.now() - t0) / 1000;
    const cpu1 = processCpuMs(server.pid);
    const client = process.cpuUsage(client0);
    return {
      requests,
      seconds: elapsed,
      latencies,
      // errors and timeouts over the whole run, warm-up included
      faults: { non2xx, errors: r.errors, timeouts: r.timeouts },
      serverCpuMs: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0,
      clientCpuMs: (client.user + client.system) / 1000,
    };
  } finally {
    clearTimeout(mark);
  }
}

async function run(server: ServerProcess, sc: Scenario, s: Settings): Promise<Outcome> {
  const typed = Array.from({ length: PATHS }, (_, i) => sc.value(i));
  const values = typed.map((t) => t.value);
  const paths = values.map((v) => filterPath(sc.filter, v, s.top, sc.orderby));
  const distinct = [...new Set(values)];
  const memo = new Map(distinct.map((v) => [v, sc.expected(v)]));
  // over the requests (weighted as they are sent), not over the distinct values
  const counts = values.map((v) => memo.get(v) as number);
  const fellBack = typed.filter((t) => t.fellBack).length;
  const r = await load(server, paths, sc.scan ? Math.max(s.warmup, 3) : s.warmup, sc.seconds, s);
  // Then one request at a time: the time of a request with no queue in front of it. (The first
  // one, not timed, waits out what the load left queued in the server.)
  const alone: number[] = [];
  const n = sc.scan ? 5 : 50;
  for (let i = -1; i < n; i++) {
    const t = performance.now();
    const res = await fetch(server.url + paths[Math.max(0, i)]);
    await res.arrayBuffer();
    if (i >= 0) alone.push(performance.now() - t);
  }
  alone.sort((x, y) => x - y);
  return {
    scenario: sc, ...r, fellBack, distinct: distinct.length, alone: { median: alone[alone.length >> 1], max: alone[alone.length - 1], n },
    matched: { mean: counts.reduce((a, b) => a + b, 0) / counts.length, max: Math.max(...counts), min: Math.min(...counts) },
  };
}

function table(outcomes: Outcome[]): string {
  const head = ['scenario', 'req/s', 'p50', 'p99', 'alone p50', 'requests', 'server CPU µs/req', 'non2xx/err/to', 'distinct values', 'rows matched min/mean/max per request'];
  const rows = outcomes.map((o) => [
    `(${o.scenario.key}) ${o.scenario.name}`,
    (o.requests / o.seconds).toFixed(o.requests / o.seconds < 100 ? 1 : 0),
    ms(o.latencies.percentile(50)),
    ms(o.latencies.percentile(99)),
    ms(o.alone.median),
    String(o.requests),
    o.serverCpuMs === undefined ? 'n/a' : ((o.serverCpuMs * 1000) / o.requests).toFixed(0),
    `${o.faults.non2xx}/${o.faults.errors}/${o.faults.timeouts}`,
    String(o.distinct),
    `${o.matched.min}/${o.matched.mean.toFixed(0)}/${o.matched.max}`,
  ]);
  return formatTable(head, rows);
}

// ---- the run ----

async function main(): Promise<number> {
  const s = settings();
  const started = performance.now();
  console.log(
    `query bench: ${s.rows} rows; ${s.connections} connections, pipelining 1, 127.0.0.1; $top=${s.top}; per scenario ${s.warmup} s warm-up (not counted; ` +
      `${Math.max(s.warmup, 3)} s for the scan), then ${s.duration} s measured (${s.scanDuration} s for the scan); each request one of ${PATHS} paths at random`,
  );
  const dir = temporaryFolder('dataset-rest-query-bench-');
  const p = await createPeopleProject(dir, s.rows);
  console.log(
    `fill: schema through openProject in ${(p.schemaMs / 1000).toFixed(2)} s, then ${s.rows} rows through better-sqlite3 (one transaction, folds included, WAL checkpoint) in ` +
      `${(p.fillMs / 1000).toFixed(2)} s (${Math.round(s.rows / (p.fillMs / 1000))} rows/s); database ${(p.bytes / 2 ** 20).toFixed(0)} MiB; ` +
      `${p.lastNames.distinct} distinct folded last names, ${p.cities.distinct} cities`,
  );
  const list = scenarios(p, s);
  const plansOk = printPlans(p, list, s);

  const server = await startServer({
    name: 'dataset-rest',
    args: ['bin/dataset-rest.mjs', '--project', dir, '--port', '0', '--log-level', 'warn'],
    cwd: ROOT,
    ready: /dataset-rest listening on (http:\/\/\S+)\/rest/,
    timeoutMs: 60_000,
  });
  const outcomes: Outcome[] = [];
  try {
    await sanity(server.url, p, s);
    console.log('\nload:');
    for (const sc of list) {
      const o = await run(server, sc, s);
      outcomes.push(o);
      console.log(
        `  (${sc.key}) ${sc.name}: ${(o.requests / o.seconds).toFixed(1)} req/s, p50 ${ms(o.latencies.percentile(50))}, p99 ${ms(o.latencies.percentile(99))}, ` +
          `${o.requests} requests in ${o.seconds.toFixed(1)} s; one at a time: median ${ms(o.alone.median)}, max ${ms(o.alone.max)} of ${o.alone.n}; server CPU ${o.serverCpuMs === undefined ? 'n/a' : `${((o.serverCpuMs * 1000) / o.requests).toFixed(0)} µs/req (${(o.serverCpuMs / 10 / o.seconds).toFixed(0)}% of a core)`}, ` +
          `load generator ${(o.clientCpuMs / 10 / o.seconds).toFixed(0)}% of a core` +
          (o.fellBack > 0 ? `; ${o.fellBack} of ${PATHS} values sent as stored (their case/accent variant folds otherwise)` : ''),
      );
    }
  } finally {
    await server.stop();
  }
  console.log(`\n${table(outcomes)}\n`);
  const faulty = outcomes.some((o) => o.faults.non2xx + o.faults.errors + o.faults.timeouts > 0);
  console.log(
    `${plansOk ? 'plans as expected' : 'SOME PLANS ARE NOT AS EXPECTED'}; ${faulty ? 'SOME REQUESTS FAILED (non2xx/err/to)' : 'every request answered 2xx'}; ` +
      `${((performance.now() - started) / 1000).toFixed(0)} s in all`,
  );
  return faulty || !plansOk ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    console.error(`query bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exitCode = 1;
  },
);
