// The live bench's latency parts: `streams` watch streams with mixed filters open on one server,
// a writer updating entities at `rate` a second for `seconds` through a server (the same one, or
// another instance on the same PostgreSQL database), and the time from each write to each event
// it caused, at each stream: an event's id is the global stamp of its write, and the writer notes
// when it sent the write of each stamp its answers name. (From sent, not committed: the write's
// own time to commit, its p50 printed beside, is in it.)

import { Latencies, processCpuMs } from '../measure.js';
import { openStreams, sourceAddress, WatchStream } from './sse.js';
import { paced, seedValues, WORDS, type Owned, type PacedResult, type Written } from './writer.js';

/** What the n-th stream watches: its filter as a predicate over an entity's values, one entity, or the whole dataclass. */
type Watched = { readonly kind: 'filter'; readonly text: string; readonly meets: (v: Values) => boolean } | { readonly kind: 'entity'; readonly key: string } | { readonly kind: 'all' };

interface Values {
  readonly name: string;
  readonly bucket: number;
  readonly price: number;
}

/** The n-th stream's watch: a mix of filters (a bucket, a price range, a name prefix, two conditions, a bucket range), one entity, the whole dataclass. */
export function watched(n: number, keys: readonly string[]): Watched {
  if (n % 100 === 99) return { kind: 'all' };
  const filter = (text: string, meets: (v: Values) => boolean): Watched => ({ kind: 'filter', text, meets });
  switch (n % 10) {
    case 0: case 1: case 2: case 3: {
      const b = n % 100;
      return filter(`bucket = ${b}`, (v) => v.bucket === b);
    }
    case 4: case 5: {
      const p = (n * 37) % 950;
      return filter(`price >= ${p} and price < ${p + 50}`, (v) => v.price >= p && v.price < p + 50);
    }
    case 6: {
      const w = WORDS[n % WORDS.length];
      return filter(`name begin ${w}`, (v) => v.name.startsWith(w));
    }
    case 7: {
      const b = n % 20;
      return filter(`bucket < ${b} and price > 500`, (v) => v.bucket < b && v.price > 500);
    }
    case 8:
      return { kind: 'entity', key: keys[n % keys.length] };
    default: {
      const b = n % 95;
      return filter(`bucket >= ${b} and bucket < ${b + 5}`, (v) => v.bucket >= b && v.bucket < b + 5);
    }
  }
}

/** The n-th stream's URL path (see watched()). */
export function watchPath(dc: string, n: number, keys: readonly string[]): string {
  const w = watched(n, keys);
  if (w.kind === 'all') return `/rest/${dc}?$method=watch`;
  if (w.kind === 'entity') return `/rest/${dc}(${w.key})?$method=watch`;
  return `/rest/${dc}?$filter=${encodeURIComponent(`"${w.text}"`)}&$method=watch`;
}

/** An entity's values before and after one write that succeeded, in the order they applied. */
interface Transition {
  readonly key: string;
  readonly before: Values;
  readonly after: Values;
}

/** The transitions of the writes of `log`, the entities' values before them given by `initial`. */
export function transitions(log: readonly Written[], initial: ReadonlyMap<string, Values>): Transition[] {
  const now = new Map(initial);
  const out: Transition[] = [];
  for (const write of log) {
    if (!write.ok) continue;
    const before = now.get(write.key) as Values;
    const after = { ...before, bucket: write.bucket, price: write.price };
    now.set(write.key, after);
    out.push({ key: write.key, before, after });
  }
  return out;
}

/**
 * The events the writes cause at a stream watching `w`: an entity event for a write that leaves
 * the entity in the selection, a remove for one that takes it out (a stream is told nothing of an
 * entity that stays out), every write for the whole dataclass, its entity's for an entity's.
 */
export function eventsDue(w: Watched, writes: readonly Transition[]): number {
  if (w.kind === 'all') return writes.length;
  let due = 0;
  for (const t of writes) {
    if (w.kind === 'entity') due += w.key === t.key ? 1 : 0;
    else due += w.meets(t.after) || w.meets(t.before) ? 1 : 0;
  }
  return due;
}

/** What the streams received: each event's stamp and arrival time (typed arrays: millions of them). */
class Receipts {
  stamps = new Float64Array(1 << 16);
  times = new Float64Array(1 << 16);
  /** an entity event's commit time (its __TIMESTAMP, the server's clock: this machine's), else NaN */
  committed = new Float64Array(1 << 16);
  n = 0;
  entity = 0;
  remove = 0;
  other = 0;
  add(type: string, stamp: number | undefined, at: number, committed: number): void {
    if (type === 'entity') this.entity++;
    else if (type === 'remove') this.remove++;
    else this.other++;
    if (stamp === undefined) return;
    if (this.n === this.stamps.length) {
      const grow = (a: Float64Array) => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.stamps = grow(this.stamps);
      this.times = grow(this.times);
      this.committed = grow(this.committed);
    }
    this.stamps[this.n] = stamp;
    this.committed[this.n] = committed;
    this.times[this.n++] = at;
  }
}

/** When the entity of an event's data was saved (its __TIMESTAMP, ms since the epoch), or NaN. */
function savedAt(data: string): number {
  const m = /"__TIMESTAMP":"([^"]+)"/.exec(data);
  return m ? Date.parse(m[1]) : Number.NaN;
}

export interface LatencyRun {
  /** where the writes go, and where the streams are (the same server, or two instances) */
  readonly writeOrigin: string;
  readonly watchOrigin: string;
  /** the streams' server (its CPU) and the writes' (when another) */
  readonly watchPid: number;
  readonly writePid?: number;
  readonly dc: string;
  readonly entities: Owned[];
  readonly streams: number;
  readonly rate: number;
  readonly seconds: number;
  /** how long to wait, after the last write, for the events still on their way */
  readonly drainMs: number;
}

export interface LatencyResult {
  readonly writes: PacedResult;
  readonly openMs: number;
  /** events each stream should get (one a write since it opened, or its entity's writes), all streams together */
  readonly expected: number;
  readonly received: { readonly total: number; readonly entity: number; readonly remove: number; readonly other: number; readonly withStamp: number };
  readonly latencies: Latencies;
  readonly measured: number;
  /** the entity events' latency from the commit of their write (its __TIMESTAMP) to their arrival */
  readonly fromCommit: Latencies;
  /** ms, from the first write to the end of the drain */
  readonly watchCpuMs?: number;
  readonly writeCpuMs?: number;
  readonly clientCpuMs: number;
  readonly wallMs: number;
  readonly closedEarly: number;
  readonly resets: number;
  readonly drainedMs: number;
}

const debug = Boolean(process.env.LIVE_BENCH_DEBUG);

export async function latencyRun(r: LatencyRun): Promise<LatencyResult> {
  const late: [number, string, number, number][] = [];
  const receipts = new Receipts();
  const keys = r.entities.map((e) => e.key);
  const t0 = performance.now();
  const streams = await openStreams(r.streams, (n) => new WatchStream({ origin: r.watchOrigin, path: watchPath(r.dc, n, keys), localAddress: sourceAddress(n), onEvent: (type, id, data, at) => {
    receipts.add(type, id, at, type === 'entity' ? savedAt(data) : Number.NaN);
    if (debug && id !== undefined) late.push([n, type, id, at]);
  } }));
  const openMs = performance.now() - t0;
  try {
    const sentAt = new Map<number, number>();
    const cpu = () => ({ watch: processCpuMs(r.watchPid), write: r.writePid === undefined ? undefined : processCpuMs(r.writePid), client: process.cpuUsage() });
    const before = cpu();
    const started = performance.now();
    const writes = await paced(r.writeOrigin, r.dc, r.entities, r.rate, r.seconds, sentAt);
    // what every stream should get (eventsDue): the entities' values before the writes are the seed's
    // (counted a few streams at a time: the events still arriving are timed by this process's loop)
    const writesDone = transitions(writes.log, new Map(r.entities.map((e, i) => [e.key, seedValues(i) as unknown as Values])));
    let expected = 0;
    for (let n = 0; n < r.streams; n++) {
      expected += eventsDue(watched(n, keys), writesDone);
      if (n % 20 === 19) await new Promise((resolve) => setImmediate(resolve));
    }
    const drainStart = performance.now();
    while (receipts.entity + receipts.remove < expected && performance.now() - drainStart < r.drainMs) await new Promise((resolve) => setTimeout(resolve, 50));
    const drainedMs = performance.now() - drainStart;
    const after = cpu();
    const wallMs = performance.now() - started;
    const latencies = new Latencies();
    let measured = 0;
    const fromCommit = new Latencies();
    for (let i = 0; i < receipts.n; i++) {
      if (!Number.isNaN(receipts.committed[i])) fromCommit.add(performance.timeOrigin + receipts.times[i] - receipts.committed[i]);
    }
    const bySecond = new Map<number, number>();
    for (let i = 0; i < receipts.n; i++) {
      const sent = sentAt.get(receipts.stamps[i]);
      if (sent === undefined) continue;
      latencies.add(receipts.times[i] - sent);
      const second = Math.floor((sent - started) / 1000);
      bySecond.set(second, Math.max(bySecond.get(second) ?? 0, receipts.times[i] - sent));
      measured++;
    }
    if (debug) {
      const worst = late.map(([n, type, id, at]) => [n, type, id, at - (sentAt.get(id) ?? at)] as const).sort((a, b) => b[3] - a[3]).slice(0, 15);
      console.log('  worst events (stream, kind, type, stamp, ms):', worst.map(([n, type, id, ms]) => `#${n} ${watched(n, keys).kind} ${type} ${id} ${ms.toFixed(0)}`).join('; '));
      const last = late.reduce((a, b) => (b[2] > a[2] ? b : a));
      console.log(`  the last stamp's event: ${last[2]} received at ${(performance.timeOrigin + last[3]).toFixed(0)} (epoch ms); writes ended at ${(performance.timeOrigin + performance.now()).toFixed(0)} less the drain`);
    }
    if (debug) console.log('  max latency by second of the write:', [...bySecond].sort((a, b) => a[0] - b[0]).map(([sec, v]) => `${sec}s ${v.toFixed(0)}`).join(', '));
    const diff = (a?: number, b?: number) => (a === undefined || b === undefined ? undefined : b - a);
    return {
      writes,
      openMs,
      expected,
      received: { total: receipts.entity + receipts.remove + receipts.other, entity: receipts.entity, remove: receipts.remove, other: receipts.other, withStamp: receipts.n },
      latencies,
      measured,
      fromCommit,
      watchCpuMs: diff(before.watch, after.watch),
      writeCpuMs: diff(before.write, after.write),
      clientCpuMs: (after.client.user + after.client.system - before.client.user - before.client.system) / 1000,
      wallMs,
      closedEarly: streams.filter((s) => s.closed).length,
      resets: streams.reduce((n, s) => n + s.resets, 0),
      drainedMs,
    };
  } finally {
    for (const s of streams) s.close();
  }
}
