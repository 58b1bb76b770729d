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

/**
 * The events the writes of `log` cause at a stream watching `w`, the entities' values before
 * them given by `initial`: an entity event for a write that leaves the entity in the selection, a
 * remove for one that takes it out (a stream is told nothing of an entity that stays out).
 */
export function eventsDue(w: Watched, log: readonly Written[], initial: ReadonlyMap<string, Values>): number {
  let due = 0;
  const now = new Map(initial);
  for (const write of log) {
    if (!write.ok) continue;
    const before = now.get(write.key) as Values;
    const after = { ...before, bucket: write.bucket, price: write.price };
    now.set(write.key, after);
    if (w.kind === 'all') due++;
    else if (w.kind === 'entity') due += w.key === write.key ? 1 : 0;
    else due += w.meets(after) || w.meets(before) ? 1 : 0;
  }
  return due;
}

/** What the streams received: each event's stamp and arrival time (typed arrays: millions of them). */
class Receipts {
  stamps = new Float64Array(1 << 16);
  times = new Float64Array(1 << 16);
  n = 0;
  entity = 0;
  remove = 0;
  other = 0;
  add(type: string, stamp: number | undefined, at: number): void {
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
    }
    this.stamps[this.n] = stamp;
    this.times[this.n++] = at;
  }
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
  const streams = await openStreams(r.streams, (n) => new WatchStream({ origin: r.watchOrigin, path: watchPath(r.dc, n, keys), localAddress: sourceAddress(n), onEvent: (type, id, _data, at) => {
    receipts.add(type, id, at);
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
    const initial = new Map(r.entities.map((e, i) => [e.key, seedValues(i) as unknown as Values]));
    let expected = 0;
    for (let n = 0; n < r.streams; n++) expected += eventsDue(watched(n, keys), writes.log, initial);
    const drainStart = performance.now();
    while (receipts.entity + receipts.remove < expected && performance.now() - drainStart < r.drainMs) await new Promise((resolve) => setTimeout(resolve, 50));
    const drainedMs = performance.now() - drainStart;
    const after = cpu();
    const wallMs = performance.now() - started;
    const latencies = new Latencies();
    let measured = 0;
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
