// The live bench's latency parts: `streams` watch streams with mixed filters open on one server,
// a writer updating entities at `rate` a second for `seconds` through a server (the same one, or
// another instance on the same PostgreSQL database), and the time from each write to each event
// it caused, at each stream: an event's id is the global stamp of its write, and the writer notes
// when it sent the write of each stamp its answers name. (From sent, not committed: the write's
// own time to commit, its p50 printed beside, is in it.)

import { Latencies, processCpuMs } from '../measure.js';
import { openStreams, sourceAddress, WatchStream } from './sse.js';
import { paced, type Owned, type PacedResult } from './writer.js';

/** The n-th stream's URL path: a mix of filters (a bucket, a price range, a name prefix, two conditions, one entity, the whole dataclass). */
export function watchPath(dc: string, n: number, keys: readonly string[]): string {
  const q = (filter: string) => `/rest/${dc}?$filter=${encodeURIComponent(`"${filter}"`)}&$method=watch`;
  if (n % 100 === 99) return `/rest/${dc}?$method=watch`;
  const words = ['bolt', 'nut', 'washer', 'screw', 'hinge', 'bracket', 'spring', 'gear', 'valve', 'pulley'];
  switch (n % 10) {
    case 0: case 1: case 2: case 3:
      return q(`bucket = ${n % 100}`);
    case 4: case 5: {
      const p = (n * 37) % 950;
      return q(`price >= ${p} and price < ${p + 50}`);
    }
    case 6:
      return q(`name begin ${words[n % words.length]}`);
    case 7:
      return q(`bucket < ${n % 20} and price > 500`);
    case 8:
      return `/rest/${dc}(${keys[n % keys.length]})?$method=watch`;
    default:
      return q(`bucket >= ${n % 95} and bucket < ${(n % 95) + 5}`);
  }
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

export async function latencyRun(r: LatencyRun): Promise<LatencyResult> {
  const receipts = new Receipts();
  const keys = r.entities.map((e) => e.key);
  const t0 = performance.now();
  const streams = await openStreams(r.streams, (n) => new WatchStream({ origin: r.watchOrigin, path: watchPath(r.dc, n, keys), localAddress: sourceAddress(n), onEvent: (type, id, _data, at) => receipts.add(type, id, at) }));
  const openMs = performance.now() - t0;
  try {
    const sentAt = new Map<number, number>();
    const cpu = () => ({ watch: processCpuMs(r.watchPid), write: r.writePid === undefined ? undefined : processCpuMs(r.writePid), client: process.cpuUsage() });
    const before = cpu();
    const started = performance.now();
    const writes = await paced(r.writeOrigin, r.dc, r.entities, r.rate, r.seconds, sentAt);
    // what every stream should get: a collection stream an event a write (its stamp: every stamp
    // since the streams opened is one of these writes), an entity's stream the writes of its entity
    const perKey = new Map<string, number>();
    for (let i = 0; i < writes.sent; i++) {
      // (paced writes take the entities in turn: the i-th write is of entities[i % length])
      const k = keys[i % keys.length];
      perKey.set(k, (perKey.get(k) ?? 0) + 1);
    }
    let expected = 0;
    for (let n = 0; n < r.streams; n++) {
      const one = /\(([^)]+)\)\?/.exec(watchPath(r.dc, n, keys))?.[1];
      expected += one === undefined ? writes.ok : (perKey.get(one) ?? 0);
    }
    const drainStart = performance.now();
    while (receipts.entity + receipts.remove < expected && performance.now() - drainStart < r.drainMs) await new Promise((resolve) => setTimeout(resolve, 50));
    const drainedMs = performance.now() - drainStart;
    const after = cpu();
    const wallMs = performance.now() - started;
    const latencies = new Latencies();
    let measured = 0;
    for (let i = 0; i < receipts.n; i++) {
      const sent = sentAt.get(receipts.stamps[i]);
      if (sent === undefined) continue;
      latencies.add(receipts.times[i] - sent);
      measured++;
    }
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
