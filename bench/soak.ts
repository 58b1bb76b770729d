// The soak (`npm run soak`, issue 19): the server started as a child process (the built-in demo
// project on a fresh database in a temporary folder, 127.0.0.1, one process: no supervisor), then
// N minutes (default 30) of mixed load from a few concurrent clients — reads (pages, by key,
// filters, $attributes through relations), writes (create, update, delete), entity sets (create,
// read a page, release), uploads ($upload, then attached to an entity), function calls, and slow
// clients (a body trickled within the limits; a body that stalls and must get 408). The server's
// RSS is read every 10 s from /proc (and its heap from /metrics); after the warm-up (the first
// 20%), averaged over each fifth of the rest (judgeMemory: single samples swing with the garbage
// collector), memory must stay flat within 10%. Every answer is counted by status; a 5xx is a
// failure (the soak forces no contention, so no 503 is expected; a 507 would mean the disk filled).
// At the end the server must still be alive and the database intact (SQLite: PRAGMA
// integrity_check; every dataclass counted). Written into bench/results/: soak-<engine>-<time>.svg (RSS and heap over
// time) and .json (the samples and the summary); an ASCII sparkline of RSS is printed.
//
// Options: --minutes M (30), --engine sqlite|postgres (sqlite; postgres: a throwaway embedded
// cluster, or a new database on DATASET_REST_BENCH_PG's server), --clients C (4 load loops),
// --sample-seconds S (10), --seed N (19), --out DIR (bench/results); --report FILE.json judges a
// saved run again and redraws its chart, running nothing.
// Exit code 1 on a 5xx, a dead server or a damaged database; 2 when memory was not flat (judged
// only when at least 10 samples follow the warm-up).
//
// The short mode (`--minutes 0.5`) runs in `npm test` as test/faults/soak-short.test.ts, through runSoak().

import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { benchDatabase, type BenchDatabase } from './postgres.js';
import { alive, onCleanup, temporaryFolder } from './processes.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(REPO, 'bin', 'dataset-rest.mjs');
/** The JSON body limit the soak's server runs with: short, so that the stalled client's 408 comes soon. */
const BODY_TIMEOUT_MS = 2000;
const MB = 2 ** 20;
/** an answer's parsed body: read loosely, as a client would */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export interface SoakOptions {
  readonly minutes: number;
  readonly engine: 'sqlite' | 'postgres';
  /** the database to serve (a SQLite file, or a PostgreSQL URL of `engine`); default: a new one in a temporary folder, or on a throwaway cluster */
  readonly db?: string;
  readonly clients: number;
  readonly sampleSeconds: number;
  readonly seed: number;
  /** where the chart and the JSON go */
  readonly outDir: string;
  /** the share of the run that is warm-up, not judged (0.2) */
  readonly warmup?: number;
  /** progress lines (default: console.log) */
  readonly print?: (line: string) => void;
}

export interface MemorySample {
  /** seconds since the load began */
  readonly t: number;
  readonly rssMB: number;
  /** V8's heap in use, from /metrics (undefined when it did not answer) */
  readonly heapMB?: number;
}

export interface SoakSummary {
  readonly engine: string;
  readonly minutes: number;
  readonly requests: number;
  readonly statuses: Record<string, number>;
  /** answers of 500 and above, by status and what was asked (the first few) */
  readonly serverErrors: readonly string[];
  /** a request that got no answer at all (a reset, a hang) */
  readonly transportErrors: readonly string[];
  /** what should have happened and did not (a stalled body not answered 408, a read after a write that misses) */
  readonly surprises: readonly string[];
  /** the first few refusals (4xx) other than the expected 404, 408 and 409 */
  readonly refusals: readonly string[];
  readonly alive: boolean;
  readonly integrity: readonly string[];
  readonly counts: Record<string, number>;
  readonly samples: readonly MemorySample[];
  readonly memory: MemoryVerdict;
  readonly chart: string;
  /** the server's stderr (errors only) */
  readonly serverLog: string;
  readonly sparkline: string;
}

interface SoakServer {
  readonly url: string;
  readonly pid: number;
  /** SIGTERM, then SIGKILL after `graceMs` */
  stop(graceMs: number): Promise<void>;
}

/**
 * Starts the server (one process, no supervisor: DATASET_REST_INSTANCE) and resolves once it
 * prints its URL; its stderr (errors only: --log-level error) is appended to `logFile`, so that a
 * 5xx's cause can be read after the run.
 */
function startSoakServer(args: readonly string[], logFile: string): Promise<SoakServer> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DATASET_REST_INSTANCE: '1' } });
  // however the soak ends (a failure, SIGINT), the server goes with it
  const drop = onCleanup(() => child.kill('SIGKILL'));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => appendFileSync(logFile, chunk));
  const exited = new Promise<void>((done) => child.once('exit', () => {
    drop();
    done();
  }));
  const stop = async (graceMs: number) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolvePromise, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      void stop(1000);
      reject(new Error(`the server was not ready after 120 s (its stderr: ${logFile})`));
    }, 120_000);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the server exited before it was ready (${signal ?? `code ${code}`}; its stderr: ${logFile})`));
    });
    child.stdout.setEncoding('utf8').on('data', function onData(chunk: string) {
      out += chunk;
      const m = /(http:\/\/\S+?)\/rest/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.stdout.resume(); // (drained: a full pipe would block the server)
      resolvePromise({ url: m[1], pid: child.pid as number, stop });
    });
  });
}

/** How the RSS curve after the warm-up is judged. */
export interface MemoryVerdict {
  readonly warmupSeconds: number;
  /** at least 10 samples after the warm-up */
  readonly judged: boolean;
  /** the lowest and highest sample after warm-up (a garbage collector's saw-tooth lies between) */
  readonly minMB: number;
  readonly maxMB: number;
  /** (max − min) / min of the samples after warm-up, in % */
  readonly spreadPercent: number;
  /** the mean of each of MEMORY_WINDOWS equal stretches after warm-up: what the saw-tooth averages to */
  readonly windowMeansMB: readonly number[];
  /** (highest − lowest) / lowest of those means, in %: the measure of flatness */
  readonly windowSpreadPercent: number;
  /** least-squares slope of RSS after warm-up, MB per hour */
  readonly slopeMBPerHour: number;
  /** the lowest V8 heap in use of each fifth (what is left after a major collection: a leak raises it), and their spread in % */
  readonly heapFloorsMB: readonly number[];
  readonly heapFloorSpreadPercent: number;
  /** flat: the window means within FLAT_PERCENT of each other */
  readonly flat: boolean;
}

const MEMORY_WINDOWS = 5;
const FLAT_PERCENT = 10;
const round1 = (x: number) => Math.round(x * 10) / 10;

/**
 * Memory is flat when RSS, averaged over each fifth of the time after the warm-up, stays within
 * 10%: single samples swing with each major garbage collection (the heap grows for a minute or
 * two, then drops by half), which says nothing of a leak; a leak moves the means, and the slope.
 */
export function judgeMemory(samples: readonly MemorySample[], warmupSeconds: number): MemoryVerdict {
  const after = samples.filter((s) => s.t >= warmupSeconds);
  const rss = after.map((s) => s.rssMB);
  const minMB = rss.length ? Math.min(...rss) : 0;
  const maxMB = rss.length ? Math.max(...rss) : 0;
  const end = after.length ? after[after.length - 1].t : warmupSeconds;
  const span = Math.max(1e-9, end - warmupSeconds);
  const fifths = Array.from({ length: MEMORY_WINDOWS }, (_, i) => after.filter((s) => Math.min(MEMORY_WINDOWS - 1, Math.floor(((s.t - warmupSeconds) / span) * MEMORY_WINDOWS)) === i)).filter((part) => part.length > 0);
  const windowMeansMB = fifths.map((part) => round1(part.reduce((sum, s) => sum + s.rssMB, 0) / part.length));
  const heapFloorsMB = fifths.map((part) => Math.min(...part.map((s) => s.heapMB ?? Infinity))).filter(Number.isFinite);
  const spreadOf = (xs: readonly number[]) => (xs.length && Math.min(...xs) > 0 ? round1(((Math.max(...xs) - Math.min(...xs)) / Math.min(...xs)) * 100) : 0);
  const windowSpreadPercent = spreadOf(windowMeansMB);
  return {
    warmupSeconds, judged: after.length >= 10, minMB, maxMB, spreadPercent: minMB ? round1(((maxMB - minMB) / minMB) * 100) : 0,
    windowMeansMB, windowSpreadPercent, slopeMBPerHour: round1(slope(after.map((s) => ({ x: s.t / 3600, y: s.rssMB })))),
    heapFloorsMB, heapFloorSpreadPercent: spreadOf(heapFloorsMB), flat: windowSpreadPercent <= FLAT_PERCENT,
  };
}

/** The verdict in one line. */
export function describeMemory(m: MemoryVerdict): string {
  return `after the warm-up (${Math.round(m.warmupSeconds)} s): RSS ${m.minMB}–${m.maxMB} MB sample to sample (${m.spreadPercent}%, the GC saw-tooth); means of each fifth ${m.windowMeansMB.join(', ')} MB: spread ${m.windowSpreadPercent}% (limit ${FLAT_PERCENT}%); slope ${m.slopeMBPerHour} MB/h; heap after collection (lowest of each fifth) ${m.heapFloorsMB.join(', ')} MB: spread ${m.heapFloorSpreadPercent}%: ${!m.judged ? 'too few samples to judge' : m.flat ? 'flat' : 'NOT FLAT'}`;
}

/** The chart's title. */
function chartTitle(engine: string, minutes: number, requests: number, m: MemoryVerdict): string {
  return `dataset-rest soak: ${engine}, ${minutes} min, ${requests} requests; RSS means after warm-up ${Math.min(...m.windowMeansMB)}–${Math.max(...m.windowMeansMB)} MB (${m.windowSpreadPercent}%), slope ${m.slopeMBPerHour} MB/h`;
}

/** A small seeded PRNG (mulberry32): the same seed, the same mix of requests. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** RSS of a process, in MB, from /proc (Linux). */
function rssOf(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** A client keeping its session cookie (4DSID_…), as a browser would. */
class Client {
  private cookie: string | undefined;
  constructor(readonly name: string, private readonly base: string, private readonly tally: (status: number, what: string) => void, private readonly lost: (what: string, e: unknown) => void) {}

  async call(method: string, path: string, body?: unknown, raw?: { bytes: Uint8Array<ArrayBuffer>; type: string }): Promise<{ status: number; json: Json } | undefined> {
    const headers: Record<string, string> = {};
    if (this.cookie) headers.cookie = this.cookie;
    let payload: string | Blob | undefined;
    if (raw) {
      payload = new Blob([raw.bytes]);
      headers['content-type'] = raw.type;
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const what = `${this.name}: ${method} ${path}`;
    try {
      const res = await fetch(`${this.base}${path}`, { method, headers, body: payload, signal: AbortSignal.timeout(60_000) });
      const set = res.headers.getSetCookie().find((c) => c.startsWith('4DSID_'));
      if (set) this.cookie = set.split(';')[0];
      const text = await res.text();
      let json: Json;
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
      this.tally(res.status, res.status >= 500 ? `${what} → ${text.slice(0, 300)}` : what);
      return { status: res.status, json };
    } catch (e) {
      this.lost(what, e);
      return undefined;
    }
  }

  get cookieHeader(): string | undefined {
    return this.cookie;
  }
}

/** Sends a raw request over one socket: the body in `chunks`, `gapMs` apart; resolves to the status (or undefined when the socket closed without one). */
function rawRequest(url: string, method: string, headers: Record<string, string>, chunks: readonly string[], gapMs: number, stallMs = 0): Promise<number | undefined> {
  return new Promise((resolvePromise) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolvePromise(res.statusCode));
      res.on('error', () => resolvePromise(res.statusCode));
    });
    req.on('error', () => resolvePromise(undefined));
    req.setTimeout(BODY_TIMEOUT_MS * 10, () => {
      req.destroy();
      resolvePromise(undefined);
    });
    let i = 0;
    const next = (): void => {
      if (req.destroyed) return;
      if (i < chunks.length) {
        req.write(chunks[i++]);
        setTimeout(next, gapMs);
      } else if (stallMs === 0) req.end();
      // (a stall: nothing more is sent; the server must answer 408 and close)
    };
    next();
  });
}

/** Least-squares slope of y over x. */
function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

export function sparkline(values: readonly number[], width = 60): string {
  if (values.length === 0) return '';
  const blocks = '▁▂▃▄▅▆▇█';
  // (more samples than columns: each column the mean of its share)
  const cols = Math.min(width, values.length);
  const per = values.length / cols;
  const v = Array.from({ length: cols }, (_, i) => {
    const part = values.slice(Math.floor(i * per), Math.max(Math.floor((i + 1) * per), Math.floor(i * per) + 1));
    return part.reduce((s, x) => s + x, 0) / part.length;
  });
  const lo = Math.min(...v);
  const hi = Math.max(...v);
  return v.map((x) => blocks[hi === lo ? 0 : Math.min(7, Math.floor(((x - lo) / (hi - lo)) * 8))]).join('');
}

/** An SVG line chart of RSS (and heap) over time, the warm-up shaded, the ±10% band of the post-warm-up minimum drawn. */
export function svgChart(samples: readonly MemorySample[], memory: MemoryVerdict, title: string): string {
  const { warmupSeconds } = memory;
  const W = 800;
  const H = 360;
  const L = 60;
  const R = 20;
  const T = 40;
  const B = 50;
  const tMax = Math.max(1, ...samples.map((s) => s.t));
  const yMax = Math.max(1, ...samples.map((s) => Math.max(s.rssMB, s.heapMB ?? 0))) * 1.1;
  const x = (t: number) => L + (t / tMax) * (W - L - R);
  const y = (mb: number) => H - B - (mb / yMax) * (H - T - B);
  const line = (pick: (s: MemorySample) => number | undefined) => samples.filter((s) => pick(s) !== undefined).map((s) => `${x(s.t).toFixed(1)},${y(pick(s) as number).toFixed(1)}`).join(' ');
  // the band: +10% of the lowest fifth's mean; each fifth's mean drawn as a step
  const base = memory.windowMeansMB.length ? Math.min(...memory.windowMeansMB) : 0;
  const span = tMax - warmupSeconds;
  const steps = memory.windowMeansMB.map((m, i) => {
    const x0 = x(warmupSeconds + (span * i) / memory.windowMeansMB.length);
    const x1 = x(warmupSeconds + (span * (i + 1)) / memory.windowMeansMB.length);
    return `<line x1="${x0.toFixed(1)}" x2="${x1.toFixed(1)}" y1="${y(m).toFixed(1)}" y2="${y(m).toFixed(1)}" stroke="#933" stroke-width="2" stroke-dasharray="6 3"/>`;
  }).join('\n');
  const ticks = 5;
  const yTicks = Array.from({ length: ticks + 1 }, (_, i) => (yMax / ticks) * i);
  const xTicks = Array.from({ length: ticks + 1 }, (_, i) => (tMax / ticks) * i);
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">
<rect width="${W}" height="${H}" fill="white"/>
<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${esc(title)}</text>
<rect x="${L}" y="${T}" width="${(x(warmupSeconds) - L).toFixed(1)}" height="${H - T - B}" fill="#eee"/>
<text x="${L + 4}" y="${T + 14}" fill="#777">warm-up</text>
${base ? `<rect x="${x(warmupSeconds).toFixed(1)}" y="${y(base * 1.1).toFixed(1)}" width="${(W - R - x(warmupSeconds)).toFixed(1)}" height="${(y(base) - y(base * 1.1)).toFixed(1)}" fill="#d8f0d8"/>
<text x="${W - R - 4}" y="${(y(base * 1.1) - 4).toFixed(1)}" text-anchor="end" fill="#393">+10% of the lowest mean of a fifth after warm-up</text>` : ''}
${yTicks.map((v) => `<line x1="${L}" x2="${W - R}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#ddd"/><text x="${L - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v.toFixed(0)}</text>`).join('\n')}
${xTicks.map((t) => `<text x="${x(t).toFixed(1)}" y="${H - B + 16}" text-anchor="middle">${(t / 60).toFixed(1)}</text>`).join('\n')}
<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">minutes</text>
<text x="14" y="${(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 14 ${(T + H - B) / 2})">MB</text>
<line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="black"/><line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="black"/>
<polyline fill="none" stroke="#c33" stroke-width="2" points="${line((s) => s.rssMB)}"/>
<polyline fill="none" stroke="#36c" stroke-width="1.5" points="${line((s) => s.heapMB)}"/>
${steps}
<text x="${L + 10}" y="${H - B - 24}" fill="#c33">RSS</text><text x="${L + 50}" y="${H - B - 24}" fill="#933">RSS mean of each fifth</text><text x="${L + 210}" y="${H - B - 24}" fill="#36c">V8 heap used</text>
</svg>
`;
}

/** The server's V8 heap in use, in MB, from /metrics (prom-client's default metrics). */
async function heapOf(origin: string): Promise<number | undefined> {
  try {
    const text = await (await fetch(`${origin}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
    const m = /^dataset_rest_nodejs_heap_size_used_bytes\s+([\d.e+]+)/m.exec(text);
    return m ? Number(m[1]) / MB : undefined;
  } catch {
    return undefined;
  }
}

export async function runSoak(options: SoakOptions): Promise<SoakSummary> {
  const print = options.print ?? ((line: string) => console.log(line));
  const warmupShare = options.warmup ?? 0.2;
  const random = prng(options.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const int = (n: number) => Math.floor(random() * n);

  let pgdb: BenchDatabase | undefined;
  let db: string;
  if (options.db !== undefined) db = options.db;
  else if (options.engine === 'postgres') {
    pgdb = await benchDatabase();
    db = pgdb.url;
    print(`# ${pgdb.where}`);
  } else db = join(temporaryFolder('dataset-rest-soak-'), 'demo.sqlite');

  mkdirSync(options.outDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
  const serverLog = join(options.outDir, `soak-${options.engine}-${stamp}-server.log`);
  writeFileSync(serverLog, '');
  let server: SoakServer | undefined;
  try {
    server = await startSoakServer(['--db', db, '--port', '0', '--host', '127.0.0.1', '--metrics', '--log-level', 'error', '--body-timeout', String(BODY_TIMEOUT_MS), '--function-timeout', '10000'], serverLog);
    const origin = server.url;
    const base = `${origin}/rest`;
    const pid = server.pid;

    const statuses = new Map<number, number>();
    const serverErrors: string[] = [];
    const transportErrors: string[] = [];
    const surprises: string[] = [];
    // the first few 4xx other than the expected 404/408/409, to show what was refused
    const refusals: string[] = [];
    let requests = 0;
    const tally = (status: number, what: string) => {
      requests++;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status >= 500 && serverErrors.length < 50) serverErrors.push(`${status} ${what}`);
      else if (status >= 400 && status !== 408 && status !== 404 && status !== 409 && refusals.length < 20) refusals.push(`${status} ${what}`);
    };
    const lost = (what: string, e: unknown) => {
      if (transportErrors.length < 50) transportErrors.push(`${what}: ${(e as Error).message ?? String(e)}`);
    };
    const surprise = (what: string) => {
      if (surprises.length < 50) surprises.push(what);
    };

    // the demo's users: alice (Editor: edit), bob (Payroll: salaries), admin (edit and salaries); a guest reads
    const guest = new Client('guest', base, tally, lost);
    const alice = new Client('alice', base, tally, lost);
    const bob = new Client('bob', base, tally, lost);
    const admin = new Client('admin', base, tally, lost);
    for (const [c, user, password] of [[alice, 'alice', 'alice123'], [bob, 'bob', 'bob123'], [admin, 'admin', 'admin123']] as const) {
      const res = await c.call('POST', '/$directory/login', [user, password, 7200]);
      if (res?.status !== 200) throw new Error(`${user} cannot log in: ${JSON.stringify(res?.json)}`);
    }
    const employeeKeys: string[] = ((await admin.call('GET', '/Employee?$top=50&$attributes=ID'))?.json?.__ENTITIES ?? []).map((e: Json) => String(e.__KEY));
    const companyKeys: string[] = ((await guest.call('GET', '/Company?$top=50&$attributes=ID'))?.json?.__ENTITIES ?? []).map((e: Json) => String(e.__KEY));
    if (employeeKeys.length === 0 || companyKeys.length === 0) throw new Error('the demo holds no employees or companies');
    // the cities this soak made and has not deleted (created, updated and deleted by the writers)
    const cities: string[] = [];
    let made = 0;

    const actions: readonly { weight: number; run: () => Promise<unknown> }[] = [
      // reads
      { weight: 10, run: () => guest.call('GET', `/Employee?$top=20&$skip=${int(200)}&$orderby=lastName`) },
      { weight: 10, run: () => guest.call('GET', `/Company(${pick(companyKeys)})`) },
      { weight: 6, run: () => bob.call('GET', `/Employee(${pick(employeeKeys)})?$attributes=firstName,lastName,salary,employer.name`) },
      { weight: 8, run: () => guest.call('GET', `/Employee?$filter=${encodeURIComponent(`"lastName >= '${String.fromCharCode(65 + int(26))}' and level < ${int(10)}"`)}&$top=10`) },
      { weight: 6, run: () => guest.call('GET', `/Company?$top=5&$skip=${int(20)}&$attributes=name,city.name,staff.lastName`) },
      { weight: 4, run: () => guest.call('GET', '/City?$top=20&$filter=%22country%20=%20Soak%22&$orderby=ID%20desc') },
      // writes: create, update (with its stamp), delete — Cities named by the soak
      {
        weight: 6, run: async () => {
          const res = await alice.call('POST', '/City?$method=update', { name: `Soak ${made++}`, country: 'Soak', population: int(1e6) });
          if (res?.status === 200) cities.push(String(res.json.__KEY));
        },
      },
      {
        weight: 6, run: async () => {
          if (cities.length === 0) return;
          const key = pick(cities);
          const got = await alice.call('GET', `/City(${key})`);
          if (got?.status !== 200) return;
          const res = await alice.call('POST', '/City?$method=update', { __KEY: key, __STAMP: got.json.__STAMP, population: int(1e6) });
          // (another loop may have deleted or changed it in between: 404 or 409 are answers, not failures)
          if (res && res.status !== 200 && res.status !== 404 && res.status !== 409) surprise(`update of City(${key}) answered ${res.status}: ${JSON.stringify(res.json).slice(0, 200)}`);
        },
      },
      {
        weight: 4, run: async () => {
          // keep a few hundred: the table must not grow without end in a long run
          if (cities.length < 50) return;
          const key = cities.splice(int(cities.length), 1)[0];
          await alice.call('POST', `/City(${key})?$method=delete`);
        },
      },
      // entity sets: create, read a page, release
      {
        weight: 5, run: async () => {
          const made = await guest.call('GET', `/Employee?$method=entityset&$top=5&$filter=${encodeURIComponent(`"level >= ${int(5)}"`)}`);
          const uri: string | undefined = made?.json?.__ENTITYSET;
          if (!uri) return;
          const path = uri.replace(/^\/rest/, '');
          await guest.call('GET', `${path}?$top=5&$skip=5`);
          await guest.call('GET', `${path}?$method=release`);
        },
      },
      // uploads: $upload, then attached to an employee's resume (admin: edit, and the salary readable)
      {
        weight: 3, run: async () => {
          const bytes = new Uint8Array(1024 + int(64 * 1024)).map(() => int(256));
          const up = await admin.call('POST', '/$upload?$binary=true', undefined, { bytes, type: 'application/octet-stream' });
          if (up?.status !== 200) return;
          const key = pick(employeeKeys);
          const got = await admin.call('GET', `/Employee(${key})?$attributes=ID`);
          if (got?.status !== 200) return;
          await admin.call('POST', '/Employee?$method=update', { __KEY: key, __STAMP: got.json.__STAMP, resume: { ID: up.json.ID } });
        },
      },
      // functions any role may call
      { weight: 3, run: () => guest.call('GET', '/$catalog/counts') },
      { weight: 3, run: () => bob.call('POST', '/$catalog/earningAtLeast', [40_000 + int(60_000)]) },
      { weight: 2, run: () => admin.call('POST', '/$catalog/topEarner', []) },
      // a slow client within the limits: a JSON body trickled in 5 pieces, 200 ms apart (well within --body-timeout)
      {
        weight: 1, run: async () => {
          const body = JSON.stringify({ name: `Soak trickled ${made++}`, country: 'Soak' });
          const cut = Math.ceil(body.length / 5);
          const pieces = Array.from({ length: 5 }, (_, i) => body.slice(i * cut, (i + 1) * cut));
          const cookie = alice.cookieHeader;
          const status = await rawRequest(`${base}/City?$method=update`, 'POST', { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...(cookie ? { cookie } : {}) }, pieces, 200);
          if (status === undefined) lost('trickled body', new Error('no answer'));
          else tally(status, 'alice: trickled POST /City?$method=update');
          if (status !== 200) surprise(`a body trickled within the limits answered ${status ?? 'nothing'}`);
        },
      },
      // a client that stalls: 10 of 200 promised bytes, then nothing — the server must answer 408 and close
      {
        weight: 1, run: async () => {
          const status = await rawRequest(`${base}/City?$method=update`, 'POST', { 'content-type': 'application/json', 'content-length': '200' }, ['{"name": "'], 0, 1);
          if (status === undefined) lost('stalled body', new Error('no answer'));
          else tally(status, 'guest: stalled POST /City?$method=update');
          if (status !== 408) surprise(`a stalled body answered ${status ?? 'nothing'}, not 408`);
        },
      },
    ];
    const totalWeight = actions.reduce((s, a) => s + a.weight, 0);
    const choose = () => {
      let r = random() * totalWeight;
      for (const a of actions) {
        r -= a.weight;
        if (r < 0) return a;
      }
      return actions[actions.length - 1];
    };

    const durationMs = options.minutes * 60_000;
    const started = Date.now();
    const deadline = started + durationMs;
    const samples: MemorySample[] = [];
    const sample = async () => {
      const rss = rssOf(pid);
      if (rss === undefined) return;
      const heap = await heapOf(origin);
      const s = { t: Math.round((Date.now() - started) / 100) / 10, rssMB: Math.round(rss * 10) / 10, heapMB: heap === undefined ? undefined : Math.round(heap * 10) / 10 };
      samples.push(s);
      print(`# ${(s.t / 60).toFixed(1)} min: ${requests} requests, rss ${s.rssMB} MB, heap ${s.heapMB ?? '?'} MB, 5xx ${serverErrors.length}, lost ${transportErrors.length}`);
    };
    print(`# soak: ${options.minutes} min, ${options.engine}, ${options.clients} clients, server pid ${pid} at ${origin}, memory every ${options.sampleSeconds} s`);
    await sample();
    const sampler = setInterval(() => void sample(), options.sampleSeconds * 1000);
    await Promise.all(Array.from({ length: options.clients }, async () => {
      while (Date.now() < deadline && alive(pid)) await choose().run();
    }));
    clearInterval(sampler);
    await sample();

    const isAlive = alive(pid) && (await guest.call('GET', '/$catalog'))?.status === 200;
    const counts: Record<string, number> = {};
    const integrity: string[] = [];
    if (isAlive) {
      // the demo's counts function: every dataclass the caller (admin) may read, counted in the database
      const res = await admin.call('GET', '/$catalog/counts');
      if (res?.status === 200 && typeof res.json?.result === 'object') Object.assign(counts, res.json.result);
      else integrity.push(`counting the dataclasses answers ${res?.status ?? 'nothing'}: ${JSON.stringify(res?.json).slice(0, 200)}`);
    } else integrity.push('the server is not alive at the end');
    await server.stop(10_000);
    server = undefined;
    if (options.engine === 'sqlite') {
      const file = new Database(db, { readonly: true });
      try {
        const rows = file.prepare('PRAGMA integrity_check').all() as { integrity_check: string }[];
        if (rows.length !== 1 || rows[0].integrity_check !== 'ok') integrity.push(`PRAGMA integrity_check: ${rows.map((r) => r.integrity_check).join('; ')}`);
      } finally {
        file.close();
      }
    }

    const warmupSeconds = (durationMs / 1000) * warmupShare;
    const memory = judgeMemory(samples, warmupSeconds);
    const chart = join(options.outDir, `soak-${options.engine}-${stamp}.svg`);
    const title = chartTitle(options.engine, options.minutes, requests, memory);
    writeFileSync(chart, svgChart(samples, memory, title));
    const line = sparkline(samples.map((s) => s.rssMB));
    const summary: SoakSummary = {
      engine: options.engine, minutes: options.minutes, requests, statuses: Object.fromEntries([...statuses].sort(([a], [b]) => a - b)),
      serverErrors, transportErrors, surprises, refusals, alive: isAlive, integrity, counts, samples, memory, chart, serverLog, sparkline: line,
    };
    writeFileSync(chart.replace(/\.svg$/, '.json'), `${JSON.stringify(summary, null, 2)}\n`);

    print('\n## soak summary');
    print(`requests: ${requests} in ${options.minutes} min (${Math.round(requests / (options.minutes * 60))}/s), ${options.engine}, ${options.clients} clients`);
    print(`statuses: ${Object.entries(summary.statuses).map(([s, n]) => `${s}: ${n}`).join(', ')}`);
    print(`5xx: ${serverErrors.length} (expected: none)${serverErrors.length ? `\n  ${serverErrors.slice(0, 10).join('\n  ')}` : ''}`);
    print(`no answer: ${transportErrors.length}${transportErrors.length ? `\n  ${transportErrors.slice(0, 10).join('\n  ')}` : ''}`);
    print(`other refusals (4xx but 404, 408, 409): ${refusals.length}${refusals.length ? `\n  ${refusals.slice(0, 10).join('\n  ')}` : ''}`);
    print(`surprises: ${surprises.length}${surprises.length ? `\n  ${surprises.slice(0, 10).join('\n  ')}` : ''}`);
    print(`server alive at the end: ${isAlive}; database: ${integrity.length ? integrity.join('; ') : 'intact'}; counts ${JSON.stringify(counts)}`);
    print(`RSS (MB) over ${samples.length} samples: ${line}`);
    print(describeMemory(memory));
    print(`chart: ${chart}`);
    print(`the server's errors: ${serverLog}${readFileSync(serverLog, 'utf8').trim() ? '' : ' (none)'}`);
    return summary;
  } finally {
    await server?.stop(5000);
    await pgdb?.close();
  }
}

/** --report FILE.json: a saved run judged again and its chart drawn again (beside it), without running anything. */
function rejudge(file: string): void {
  const saved = JSON.parse(readFileSync(file, 'utf8')) as SoakSummary;
  const memory = judgeMemory(saved.samples, saved.memory.warmupSeconds);
  const chart = file.replace(/\.json$/, '.svg');
  writeFileSync(chart, svgChart(saved.samples, memory, chartTitle(saved.engine, saved.minutes, saved.requests, memory)));
  writeFileSync(file, `${JSON.stringify({ ...saved, memory, chart }, null, 2)}\n`);
  console.log(`statuses: ${Object.entries(saved.statuses).map(([st, n]) => `${st}: ${n}`).join(', ')}; 5xx ${saved.serverErrors.length}`);
  console.log(`RSS (MB) over ${saved.samples.length} samples: ${sparkline(saved.samples.map((x) => x.rssMB))}`);
  console.log(describeMemory(memory));
  console.log(`chart: ${chart}`);
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      minutes: { type: 'string', default: '30' },
      engine: { type: 'string', default: 'sqlite' },
      clients: { type: 'string', default: '4' },
      'sample-seconds': { type: 'string', default: '10' },
      seed: { type: 'string', default: '19' },
      out: { type: 'string', default: join(REPO, 'bench', 'results') },
      report: { type: 'string' },
    },
  });
  if (args.report) {
    rejudge(resolve(args.report));
    return;
  }
  const summary = await runSoak({
    minutes: Number(args.minutes), engine: args.engine === 'postgres' ? 'postgres' : 'sqlite', clients: Math.max(1, Number(args.clients)),
    sampleSeconds: Math.max(1, Number(args['sample-seconds'])), seed: Number(args.seed), outDir: resolve(args.out),
  });
  const failed = summary.serverErrors.length > 0 || !summary.alive || summary.integrity.length > 0;
  process.exitCode = failed ? 1 : summary.memory.judged && !summary.memory.flat ? 2 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
