// The benchmark suite (`npm run bench`): generates the shop data set (model.ts) at each size,
// measures every scenario of ours against a hand-written baseline in the same run (reads.ts,
// writes.ts), our server with several workers against one, and with --peers other servers over
// the same data (peers.ts); keeps the results as JSON in bench/results/ and rewrites
// BENCHMARKS.md and docs/benchmarks.svg from them (report.ts, chart.ts).
//
//   npm run bench                                    everything at 10k, 1M and 10M items
//   npm run bench -- --only reads --sizes 10k,1m     some groups, some sizes
//   npm run bench -- --peers                         and the peers (installed into a cache once)
//   npm run bench -- --quick                         a short run to try it (its figures are not to be quoted)
//
// Flags: --only reads,sets,writes,uploads,workers (all), --sizes LIST (10k,1m,10m), --engine sqlite,
// --workers N (our server's for the comparisons: 1), --peers, --duration S per server and
// scenario (6), --rounds R (2), --warmup S (1), --connections N (10), --quick, --no-report,
// --contract-baseline (the read baseline sends our security headers too; else it is minimal).

import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, homedir, totalmem, type, release, arch } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { temporaryFolder } from '../processes.js';
import { renderChart } from './chart.js';
import { generateProject, type Generated } from './generate.js';
import { loadBoth, type LoadSettings } from './load.js';
import { READS, runReads, startOurs } from './reads.js';
import { renderReport } from './report.js';
import type { Comparison, Generation, Measurement, PeerComparison, Scaling, SizedMemory, SuiteResults, WorkersComparison } from './results.js';
import { runPeers } from './peers.js';
import { runWriteScenarios } from './writes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GROUPS = ['reads', 'sets', 'writes', 'uploads', 'workers'] as const;
type GroupName = (typeof GROUPS)[number];
const CACHE = process.env.DATASET_REST_BENCH_CACHE ?? join(homedir(), '.cache', 'dataset-rest-bench', 'data');
/** the sizes writes run at (each needs two copies of the data): the middle one of a full run */
const WRITE_SIZE = 1_000_000;

interface Settings {
  readonly groups: readonly GroupName[];
  readonly sizes: readonly number[];
  readonly workers: number;
  readonly peers: boolean;
  readonly load: LoadSettings;
  readonly writeSeconds: number;
  readonly report: boolean;
  readonly quick: boolean;
  /** the read baseline sends our contract's security headers (else the minimal one: content-type, content-length) */
  readonly contractBaseline: boolean;
}

function sizeOf(text: string): number {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim());
  if (!m) throw new Error(`--sizes takes sizes like 10k, 1m or 250000, got '${text}'`);
  const n = Math.round(Number(m[1]) * (m[2].toLowerCase() === 'k' ? 1e3 : m[2].toLowerCase() === 'm' ? 1e6 : 1));
  if (n < 1000) throw new Error(`--sizes: ${text} is fewer than 1,000 items`);
  return n;
}

function settings(argv: string[]): Settings {
  const { values } = parseArgs({
    args: argv,
    options: {
      only: { type: 'string' }, sizes: { type: 'string' }, engine: { type: 'string', default: 'sqlite' }, workers: { type: 'string', default: '1' },
      peers: { type: 'boolean', default: false }, duration: { type: 'string' }, rounds: { type: 'string' }, warmup: { type: 'string' },
      connections: { type: 'string', default: '10' }, quick: { type: 'boolean', default: false }, 'no-report': { type: 'boolean', default: false },
      'contract-baseline': { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.engine !== 'sqlite') throw new Error(`--engine: the suite runs on SQLite (its hand-written baselines are better-sqlite3 servers); PostgreSQL has its own read bench: npm run bench:postgres`);
  const number = (name: string, text: string | undefined, fallback: number, min: number): number => {
    if (text === undefined) return fallback;
    const n = Number(text);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} takes a number of at least ${min}, got '${text}'`);
    return n;
  };
  const groups = values.only === undefined ? GROUPS : values.only.split(',').map((g) => {
    if (!(GROUPS as readonly string[]).includes(g)) throw new Error(`--only takes ${GROUPS.join(', ')}, got '${g}'`);
    return g as GroupName;
  });
  const quick = values.quick;
  const sizes = (values.sizes ?? (quick ? '10k' : '10k,1m,10m')).split(',').map(sizeOf).sort((a, b) => a - b);
  const seconds = number('duration', values.duration, quick ? 2 : 6, 1);
  return {
    groups, sizes, quick, peers: values.peers, report: !values['no-report'], contractBaseline: values['contract-baseline'],
    workers: number('workers', values.workers, 1, 1),
    load: { connections: number('connections', values.connections, 10, 1), seconds, rounds: number('rounds', values.rounds, quick ? 1 : 2, 1), warmupSeconds: number('warmup', values.warmup, quick ? 0.5 : 1, 0) },
    writeSeconds: seconds,
  };
}

const log = (line: string): void => console.log(line);

/** Writes the copies just made to disk before measuring: 1.3 GB of dirty pages written back during a measurement slowed the servers by a varying share. */
function settle(): void {
  spawnSync('sync', { stdio: 'ignore' });
}

/** A second copy of a generated project (model.json and its database), for a server that will change it. */
function copyProject(g: Generated, into: string): { dir: string; db: string } {
  mkdirSync(join(into, 'data'), { recursive: true });
  copyFileSync(join(g.dir, 'model.json'), join(into, 'model.json'));
  const db = join(into, 'data', 'data.sqlite');
  cpSync(g.db, db);
  return { dir: into, db };
}

/** Our server with `workers` workers against itself with one: the reads every core should speed up. */
async function runWorkers(g: Generated, size: number, workers: number, load: LoadSettings): Promise<WorkersComparison[]> {
  const [one, many] = await Promise.all([startOurs(g.dir, 1), startOurs(g.dir, workers)]);
  const out: WorkersComparison[] = [];
  try {
    for (const s of READS.filter((r) => r.id === 'byKey' || r.id === 'filtered')) {
      const [m, o] = await loadBoth(
        { server: { url: many.url, pid: many.pid, tree: true }, path: (n) => s.ours(n, size, '') },
        { server: { url: one.url, pid: one.pid }, path: (n) => s.ours(n, size, '') },
        s.range(size),
        load,
      );
      const c: WorkersComparison = { scenario: s.id, title: s.title, size, workers, one: o, many: m, ratio: m.requestsPerSecond / o.requestsPerSecond, target: 1.6 };
      const cpu = (x: Measurement): string => (x.cpuUsPerRequest === undefined ? 'n/a' : `${x.cpuUsPerRequest.toFixed(0)} µs`);
      log(`  ${s.title}: ${workers} workers ${m.requestsPerSecond.toFixed(0)} req/s (${cpu(m)} CPU/req), 1 worker ${o.requestsPerSecond.toFixed(0)} req/s (${cpu(o)} CPU/req): ${c.ratio.toFixed(2)}×`);
      out.push(c);
    }
  } finally {
    await Promise.all([one.stop(), many.stop()]);
  }
  return out;
}

/** Why a read's cost grows with the table, where it does by its nature (the report's "why"). */
const WHY: Record<string, string> = {
  deepSkip: 'a random $skip over the whole table: OFFSET steps over the rows it skips, so the cost grows with the skip (5,000 rows on average at 10k, 5,000,000 at 10M), not with the table; paging by key (a filter on the key after the last one read) would keep it flat',
  setPage: 'page 9,000 of a 10,000-item set is its last page (page 99): the pages read differ by size',
};
/** Where a read through an index grows past the target: the same number of rows, read from a larger file. */
const INDEXED_WHY =
  'the same rows read through an index, but each one a look-up in a deeper B-tree of a file 1,000 times larger, with far fewer of its pages in the processor\'s caches (the statements and their plans are the same at every size)';
for (const id of ['byKey', 'filtered', 'expanded', 'orderBy', 'compute']) WHY[id] = INDEXED_WHY;

/** Each read's CPU per request at the largest size against the smallest. */
function scalingOf(comparisons: readonly Comparison[]): Scaling[] {
  const sizes = [...new Set(comparisons.map((c) => c.size))].sort((a, b) => a - b);
  if (sizes.length < 2) return [];
  const [small, large] = [sizes[0], sizes[sizes.length - 1]];
  const out: Scaling[] = [];
  for (const a of comparisons.filter((c) => c.size === small && (c.group === 'reads' || c.group === 'sets'))) {
    const b = comparisons.find((c) => c.size === large && c.scenario === a.scenario);
    if (!b) continue;
    const cost = (c: Comparison) => c.ours.cpuUsPerRequest ?? 1e6 / c.ours.requestsPerSecond;
    const ratio = cost(b) / cost(a);
    out.push({ scenario: a.scenario, title: a.title, smallSize: small, largeSize: large, small: cost(a), large: cost(b), ratio, target: 1.5, why: ratio > 1.5 ? WHY[a.scenario] : undefined });
  }
  return out;
}

function versions(): Record<string, string> {
  const pkg = (name: string): string => (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  const db = new Database(':memory:');
  const sqlite = db.prepare('SELECT sqlite_version() AS v').pluck().get() as string;
  db.close();
  return { 'Node.js': process.version, 'dataset-rest': (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version, SQLite: sqlite, 'better-sqlite3': pkg('better-sqlite3'), fastify: pkg('fastify'), autocannon: pkg('autocannon') };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const s = settings(argv);
  const started = Date.now();
  log(`benchmark suite: ${s.groups.join(', ')}${s.peers ? ', peers' : ''} at ${s.sizes.map((n) => n.toLocaleString('en-US')).join(', ')} items; ${s.load.connections} connections, ${s.load.warmupSeconds} s warm-up then ${s.load.seconds} s in ${s.load.rounds} alternating rounds per server and scenario`);
  const generated: Generation[] = [];
  const comparisons: Comparison[] = [];
  const workers: WorkersComparison[] = [];
  const memory: SizedMemory[] = [];
  let peers: PeerComparison[] = [];
  const peerVersions: Record<string, string> = {};
  const projects = new Map<number, Generated>();
  const writeSize = s.sizes.includes(WRITE_SIZE) ? WRITE_SIZE : s.sizes[0];
  const peerSize = s.sizes.find((n) => n >= 100_000 && n <= WRITE_SIZE) ?? s.sizes[0];
  for (const size of s.sizes) {
    log(`\n== ${size.toLocaleString('en-US')} items ==`);
    const g = await generateProject(join(temporaryFolder('dataset-rest-suite-'), 'project'), size, { cacheDir: CACHE, log: (line) => log(`  ${line}`) });
    projects.set(size, g);
    generated.push({ engine: 'sqlite', rows: size, ms: g.ms, rowsPerSecond: g.rowsPerSecond, bytes: g.bytes, fromCache: g.fromCache });
    log(`  data: ${g.fromCache ? 'copied from the cache' : `generated at ${g.rowsPerSecond.toLocaleString('en-US')} rows/s`} (${(g.ms / 1000).toFixed(1)} s, ${(g.bytes / 2 ** 20).toFixed(0)} MiB)`);
    settle();
    const reads = READS.map((r) => r.id).filter((id) => (id === 'setPage' ? s.groups.includes('sets') : s.groups.includes('reads')));
    if (reads.length > 0) {
      comparisons.push(...(await runReads({
        dir: g.dir, db: g.db, size, workers: s.workers, only: reads, load: s.load, log, contractBaseline: s.contractBaseline,
        memory: (m) => memory.push({ size, ...m }),
      })));
    }
    if (s.groups.includes('workers') && size === writeSize) {
      log(`  --workers 2 against 1:`);
      workers.push(...(await runWorkers(g, size, Math.max(2, s.workers), s.load)));
    }
    const writes = [...(s.groups.includes('writes') ? ['create', 'update', 'batch'] : []), ...(s.groups.includes('uploads') ? ['upload'] : [])];
    if (writes.length > 0 && size === writeSize) {
      const work = temporaryFolder('dataset-rest-suite-writes-');
      const ours = copyProject(g, join(work, 'ours'));
      const baseline = copyProject(g, join(work, 'baseline'));
      settle();
      comparisons.push(...(await runWriteScenarios({
        projectDir: ours.dir, baselineDb: baseline.db, size, seconds: s.writeSeconds, rounds: s.load.rounds, warmupSeconds: s.load.warmupSeconds,
        clients: s.load.connections, workers: s.workers, only: writes, log: (line) => log(`  ${line}`),
      })));
    }
    if (s.peers && size === peerSize) {
      const small = projects.get(10_000) ?? (await generateProject(join(temporaryFolder('dataset-rest-suite-'), 'project'), 10_000, { cacheDir: CACHE }));
      log(`  peers (ours on Node 22 against each):`);
      const run = await runPeers({ dir: g.dir, db: g.db, size, small: { dir: small.dir, size: 10_000 }, load: s.load, log });
      peers = run.comparisons;
      Object.assign(peerVersions, run.versions);
    }
  }
  const cpu = cpus();
  const results: SuiteResults = {
    startedAt: new Date(started).toISOString(),
    seconds: (Date.now() - started) / 1000,
    args: argv,
    machine: { cpus: cpu.length, model: cpu[0]?.model ?? 'unknown', memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10, os: `${type()} ${release()} ${arch()}` },
    versions: { ...versions(), ...peerVersions },
    settings: {
      only: s.groups.join(','), sizes: s.sizes.join(','), engine: 'sqlite', workers: s.workers, peers: s.peers, duration: s.load.seconds, rounds: s.load.rounds,
      warmup: s.load.warmupSeconds, connections: s.load.connections, quick: s.quick,
      baseline: s.contractBaseline ? 'contract headers (nosniff, CSP, no-store)' : 'minimal (content-type, content-length)',
    },
    generated,
    comparisons,
    peers,
    scaling: scalingOf(comparisons),
    workers,
    memory,
    notes: [
      s.contractBaseline
        ? 'The read baseline sends the security headers our contract puts on every answer (nosniff, a CSP, no-store): both sides put the same headers on the wire.'
        : 'The read baseline is minimal: content-type and content-length only. Ours also sends nosniff, a CSP and no-store (and an ETag): what those cost is in the ratios (--contract-baseline measures without it).',
      `The load generator (autocannon, ${s.load.connections} connections, 127.0.0.1) runs on the same ${cpu.length} cores as the servers: where it takes a large share of a core (reads by key), ratios of requests per second understate the difference; the CPU per request ratio does not.`,
      'Both servers answer the same bytes for every read (checked before each size is loaded), the global stamp aside: the baseline sends 0 where ours reads it from the database.',
      'Our server keeps a selection\'s count with the data version it was read at and reads it again only when the data changed; the baseline counts at every request, as a hand-written server would. Pages whose count is a large part of their cost (deep $skip, sorted pages) gain from it.',
      'Writes run at one size, each server on its own copy of the data.',
      ...(s.quick ? ['A --quick run: short rounds on the smallest data; not figures to quote.'] : []),
    ],
  };
  const stamp = results.startedAt.replace(/[:.]/g, '-');
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const json = `${JSON.stringify(results, null, 2)}\n`;
  writeFileSync(join(dir, `${stamp}.json`), json);
  writeFileSync(join(dir, 'latest.json'), json);
  log(`\nresults: bench/results/${stamp}.json (and latest.json)`);
  if (s.report) {
    mkdirSync(join(ROOT, 'docs'), { recursive: true });
    writeFileSync(join(ROOT, 'docs', 'benchmarks.svg'), renderChart(results));
    writeFileSync(join(ROOT, 'BENCHMARKS.md'), renderReport(results, { chartPath: 'docs/benchmarks.svg', jsonPath: 'bench/results/latest.json' }));
    log('BENCHMARKS.md and docs/benchmarks.svg rewritten');
  }
  log(`${((Date.now() - started) / 1000).toFixed(0)} s in all`);
}

main().catch((e: unknown) => {
  console.error(`benchmark suite failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exitCode = 1;
});
