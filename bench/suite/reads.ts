// The suite's reads: each scenario asked of our server and of the hand-written baseline
// (baseline-reads.ts) over the same SQLite file, after a check that both answer the same bytes
// (the global stamp aside), then loaded in alternating rounds (load.ts).

import { strictEqual } from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { cookieName } from '../../src/rest/scope/scope.js';
import { startServer, type ServerProcess } from '../processes.js';
import { loadBoth, type LoadSettings, type Loaded } from './load.js';
import { itemValues, keysWithPrefix, MODEL, prefixOf } from './model.js';
import { measureMemory, rssMiB, type MemoryReport } from './memory.js';
import type { Comparison, Measurement } from './results.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = 100;
/** the furthest $skip of the sorted page: the same at every size, so that its cost can follow the page */
const SORTED_SKIP = 1000;
/** the page of the entity set read: 9,000 (or the last one of a smaller set) */
const SET_PAGE = 9000;

export interface ReadScenario {
  readonly id: string;
  readonly title: string;
  /** the issue's target for ours / baseline, requests per second */
  readonly target?: number;
  /** our path and the baseline's for a random n in [0, range(size)) */
  readonly ours: (n: number, size: number, set: string) => string;
  readonly baseline: (n: number, size: number) => string;
  readonly range: (size: number) => number;
}

const filter = (n: number): string => `$filter=${encodeURIComponent('"name begin :1"')}&$params=${encodeURIComponent(JSON.stringify([prefixOf(n)]))}`;
/** the entity set's page for a random n: one of the 100 pages before SET_PAGE (or before the last one) */
const setSkip = (n: number, size: number): number => Math.max(0, Math.min(SET_PAGE, Math.floor(size / PAGE) - 1) - (n % 100)) * PAGE;

export const READS: readonly ReadScenario[] = [
  { id: 'byKey', title: 'By key', target: 0.85, ours: (n) => `/rest/Item(${n + 1})`, baseline: (n) => `/item/${n + 1}`, range: (size) => size },
  {
    id: 'filtered', title: 'Filtered page (name prefix)', target: 0.9,
    ours: (n) => `/rest/Item?${filter(n)}&$top=${PAGE}`, baseline: (n) => `/items?prefix=${encodeURIComponent(prefixOf(n))}`, range: (size) => size,
  },
  {
    id: 'expanded', title: 'Page with an N→1 expanded', target: 0.9,
    ours: (n) => `/rest/Item?${filter(n)}&$top=${PAGE}&$expand=category`, baseline: (n) => `/items?prefix=${encodeURIComponent(prefixOf(n))}&expand=1`, range: (size) => size,
  },
  { id: 'deepSkip', title: 'Page at a deep $skip', ours: (n) => `/rest/Item?$top=${PAGE}&$skip=${n}`, baseline: (n) => `/items?skip=${n}`, range: (size) => size - PAGE + 1 },
  {
    id: 'orderBy', title: '$orderby on an indexed attribute', ours: (n) => `/rest/Item?$orderby=${encodeURIComponent('price desc')}&$top=${PAGE}&$skip=${n}`,
    baseline: (n) => `/items?order=price&skip=${n}`, range: (size) => Math.min(SORTED_SKIP, size - PAGE) + 1,
  },
  {
    id: 'compute', title: '$compute (count, sum, average, min, max)', ours: (n) => `/rest/Item/price?$compute=$all&${filter(n)}`,
    baseline: (n) => `/compute?prefix=${encodeURIComponent(prefixOf(n))}`, range: (size) => size,
  },
  {
    id: 'setPage', title: `Page ${SET_PAGE.toLocaleString('en-US')} of an entity set`, ours: (n, size, set) => `${set}?$skip=${setSkip(n, size)}&$top=${PAGE}`,
    baseline: (n, size) => `/set?skip=${setSkip(n, size)}`, range: () => 100,
  },
];

/** Our server on `dir`'s project (supervised with workers > 1). */
export function startOurs(dir: string, workers: number, extraArgs: readonly string[] = []): Promise<ServerProcess> {
  return startServer({
    name: 'ours',
    args: ['bin/dataset-rest.mjs', '--project', dir, '--port', '0', '--workers', String(workers), '--log-level', 'warn', ...extraArgs],
    cwd: ROOT,
    ready: /dataset-rest listening on (http:\/\/\S+)\/rest/,
    supervised: workers > 1,
    timeoutMs: 120_000,
  });
}

/**
 * The hand-written read baseline: minimal (content-type and content-length, what a team writes by
 * hand: the targets are against it), or with the security headers our contract puts on every
 * answer (`contract`: the wire the same on both sides, headers included).
 */
export function startBaseline(dbFile: string, contract = false): Promise<ServerProcess> {
  return startServer({
    name: contract ? 'baseline (contract headers)' : 'baseline',
    args: ['--import', 'tsx', 'bench/suite/baseline-reads.ts', dbFile, ...(contract ? ['--cookie', cookieName(MODEL.name)] : [])],
    cwd: ROOT,
    ready: /baseline listening on (http:\/\/\S+)/,
  });
}

const loaded = (s: ServerProcess, workers = 1): Loaded => ({ url: s.url, pid: s.pid, tree: workers > 1 });

/** The answer's text with its global stamp set to 0 (the baseline does not read it). */
const stampless = (text: string): string => text.replace(/"__GlobalStamp":\d+/g, '"__GlobalStamp":0');

async function text(url: string): Promise<string> {
  const r = await fetch(url);
  const body = await r.text();
  if (r.status !== 200) throw new Error(`GET ${url} answered ${r.status}: ${body.slice(0, 300)}`);
  return body;
}

/** Every scenario answers the same bytes on both sides, and what model.ts says. */
export async function checkReads(ours: string, baseline: string, size: number, set: string, scenarios: readonly ReadScenario[]): Promise<void> {
  for (const s of scenarios) {
    for (const n of [0, Math.floor(s.range(size) / 2), s.range(size) - 1]) {
      const [a, b] = await Promise.all([text(`${ours}${s.ours(n, size, set)}`), text(`${baseline}${s.baseline(n, size)}`)]);
      strictEqual(stampless(a), b, `${s.id} (n = ${n}): our answer and the baseline's differ, the comparison would not be fair:\nours     ${a.slice(0, 400)}\nbaseline ${b.slice(0, 400)}`);
    }
  }
  // and the data is what the model says
  const item = JSON.parse(await text(`${ours}/rest/Item(7)`)) as { name: string; price: number };
  strictEqual(item.name, itemValues(6).name);
  const page = JSON.parse(await text(`${ours}/rest/Item?${filter(size - 1)}&$top=${PAGE}`)) as { __COUNT: number; __ENTITIES: { ID: number }[] };
  const want = keysWithPrefix(prefixOf(size - 1), size);
  strictEqual(page.__COUNT, want.length);
  strictEqual(page.__ENTITIES.map((e) => e.ID).join(','), want.slice(0, PAGE).join(','));
}

/** The entity set of every item, in key order, made through our server: its URI (/rest/Item/$entityset/ID). */
export async function makeSet(ours: string): Promise<string> {
  const r = await fetch(`${ours}/rest/Item?$method=entityset&$top=1&$timeout=86400`);
  const body = (await r.json()) as { __ENTITYSET?: string };
  if (r.status !== 200 || !body.__ENTITYSET) throw new Error(`making the entity set answered ${r.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body.__ENTITYSET;
}

export interface ReadRun {
  readonly dir: string;
  readonly db: string;
  readonly size: number;
  readonly workers: number;
  readonly only?: readonly string[];
  readonly load: LoadSettings;
  readonly log: (line: string) => void;
  /** the baseline sends our contract's security headers too (--contract-baseline); else the minimal one */
  readonly contractBaseline?: boolean;
  /** our server's memory is measured too (idle, under 100 connections, after): one worker only */
  readonly memory?: (report: MemoryReport) => void;
}

/** the connections of the memory measurement (issue 39: RSS under 100 connections) */
const MEMORY_CONNECTIONS = 100;
const MEMORY_SECONDS = 4;

const rps = (m: Measurement): string => `${m.requestsPerSecond.toFixed(0)} req/s, ${m.cpuUsPerRequest?.toFixed(0) ?? 'n/a'} µs CPU/req, p99 ${m.p99Ms.toFixed(1)} ms${m.failures ? `, ${m.failures} FAILED` : ''}`;

/** Every read scenario at one size: both servers started once, checked, then loaded scenario by scenario. */
export async function runReads(r: ReadRun): Promise<Comparison[]> {
  const scenarios = READS.filter((s) => !r.only || r.only.includes(s.id));
  const [ours, baseline] = await Promise.all([startOurs(r.dir, r.workers), startBaseline(r.db, r.contractBaseline)]);
  const out: Comparison[] = [];
  try {
    const set = scenarios.some((s) => s.id === 'setPage') ? await makeSet(ours.url) : '';
    await checkReads(ours.url, baseline.url, r.size, set, scenarios);
    r.log(`  both servers answer the same bytes for ${scenarios.map((s) => s.id).join(', ')} (global stamps aside)`);
    // (idle: before any load; the load of 100 connections after the scenarios, which it would otherwise warm for ours alone)
    const idle = r.memory && r.workers === 1 ? rssMiB(ours.pid) : undefined;
    // every scenario once on both fresh servers before any is measured: the first one measured
    // otherwise paid for the compilation of code paths the later ones share (ours has more of them)
    if (r.load.warmupSeconds > 0) {
      const warm = { ...r.load, seconds: r.load.warmupSeconds, rounds: 1, warmupSeconds: 0 };
      for (const s of scenarios) {
        await loadBoth({ server: loaded(ours, r.workers), path: (n) => s.ours(n, r.size, set) }, { server: loaded(baseline), path: (n) => s.baseline(n, r.size) }, s.range(r.size), warm);
      }
    }
    for (const s of scenarios) {
      const [o, b] = await loadBoth(
        { server: loaded(ours, r.workers), path: (n) => s.ours(n, r.size, set) },
        { server: loaded(baseline), path: (n) => s.baseline(n, r.size) },
        s.range(r.size),
        r.load,
      );
      const c: Comparison = {
        group: s.id === 'setPage' ? 'sets' : 'reads', scenario: s.id, title: s.title, size: r.size, engine: 'sqlite', workers: r.workers, unitsPerRequest: 1,
        ours: o, baseline: b, ratio: o.requestsPerSecond / b.requestsPerSecond,
        cpuRatio: o.cpuUsPerRequest && b.cpuUsPerRequest ? b.cpuUsPerRequest / o.cpuUsPerRequest : undefined, target: s.target,
      };
      r.log(`  ${s.title}: ours ${rps(o)}; baseline ${rps(b)}; ratio ${c.ratio.toFixed(2)}${c.cpuRatio ? ` (CPU ${c.cpuRatio.toFixed(2)})` : ''}${s.target ? `, target ${s.target}` : ''}`);
      out.push(c);
    }
    if (r.memory && idle !== undefined) {
      const byKey = READS[0];
      const m = await measureMemory(loaded(ours), idle, (n) => byKey.ours(n, r.size, set), byKey.range(r.size), MEMORY_CONNECTIONS, MEMORY_SECONDS);
      if (m) {
        r.log(`  memory: RSS ${m.idle.toFixed(0)} MiB idle, ${m.loaded.toFixed(0)} MiB at most under ${m.connections} connections reading by key (${m.requests} requests), ${m.after.toFixed(0)} MiB once it settled`);
        r.memory(m);
      }
    }
  } finally {
    await Promise.all([ours.stop(), baseline.stop()]);
  }
  return out;
}
