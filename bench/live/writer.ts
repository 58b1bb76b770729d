// The live bench's writes: updates by key through REST ($method=update with __KEY and __STAMP),
// from 127.0.0.1 — paced (so many a second, open loop: a late answer does not slow the next
// write) for the latency parts, or as fast as a few clients go (closed loop) for the write cost.
// Each paced write notes when it was sent under the global stamp its answer names: the stamp is
// the id of the events it causes, so an event's latency is its arrival less that time.

import { Latencies, processCpuMs } from '../measure.js';

export interface Owned {
  readonly key: string;
  stamp: number;
}

interface Answer {
  readonly __KEY: string;
  readonly __STAMP: number;
  readonly __GlobalStamp?: number;
}

export const WORDS = ['bolt', 'nut', 'washer', 'screw', 'hinge', 'bracket', 'spring', 'gear', 'valve', 'pulley'];

/** The n-th seeded entity's values (bucket 0–99, price 0–999.99). */
export function seedValues(n: number): Record<string, unknown> {
  return { name: `${WORDS[n % WORDS.length]}-${String(n).padStart(6, '0')}`, bucket: n % 100, price: ((n * 7919) % 100_000) / 100, sentAt: 0 };
}

async function post<T>(url: string, body: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : {}) as T };
}

/** Creates `count` entities of `dc` (batches of 1,000) and returns their keys and stamps. */
export async function seed(origin: string, dc: string, count: number): Promise<Owned[]> {
  const owned: Owned[] = [];
  for (let from = 0; from < count; from += 1000) {
    const batch = Array.from({ length: Math.min(1000, count - from) }, (_, i) => seedValues(from + i));
    const r = await post<{ __ENTITIES: Answer[] }>(`${origin}/rest/${dc}?$method=update`, batch);
    if (r.status !== 200) throw new Error(`seeding ${dc}: ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
    for (const e of r.json.__ENTITIES) owned.push({ key: e.__KEY, stamp: e.__STAMP });
  }
  return owned;
}

let draw = 1;
/** A cheap deterministic sequence (the bench's runs write the same values). */
function next(): number {
  draw = (draw * 48271) % 2147483647;
  return draw;
}

/** One update of `e`: a new bucket and price (so it moves in and out of the streams' filters); false when refused. */
async function update(origin: string, dc: string, e: Owned, onStamp?: (globalStamp: number) => void, log?: Written[]): Promise<boolean> {
  const values = { bucket: next() % 100, price: (next() % 100_000) / 100 };
  const written: Written | undefined = log ? { key: e.key, ...values, ok: false } : undefined;
  if (written) log?.push(written);
  const r = await post<Answer>(`${origin}/rest/${dc}?$method=update`, { __KEY: e.key, __STAMP: e.stamp, ...values, sentAt: Date.now() });
  if (written) written.ok = r.status === 200;
  if (r.status !== 200) return false;
  e.stamp = r.json.__STAMP;
  if (r.json.__GlobalStamp !== undefined) onStamp?.(r.json.__GlobalStamp);
  return true;
}

/** One paced write as it was sent (a key's writes are sent one after another: in this order they apply). */
export interface Written {
  readonly key: string;
  readonly bucket: number;
  readonly price: number;
  ok: boolean;
}

export interface PacedResult {
  /** every write in the order it was sent */
  readonly log: readonly Written[];
  readonly sent: number;
  readonly ok: number;
  readonly failed: number;
  /** seconds from the first write to the last answer */
  readonly elapsed: number;
  /** each write's time from sent to answered */
  readonly writeLatencies: Latencies;
  /** writes that waited (the in-flight bound reached, or the key still being written) */
  readonly delayed: number;
}

/**
 * `rate` updates a second for `seconds`, over `entities` in turn (a key is written again only once
 * its last write answered), at most `maxInFlight` at once; `sentAt` gets each write's global
 * stamp → the performance.now() it was sent at.
 */
export async function paced(origin: string, dc: string, entities: Owned[], rate: number, seconds: number, sentAt: Map<number, number>, maxInFlight = 64): Promise<PacedResult> {
  const writeLatencies = new Latencies();
  const log: Written[] = [];
  const busy = new Set<Owned>();
  let sent = 0;
  let ok = 0;
  let failed = 0;
  let delayed = 0;
  let inFlight = 0;
  let turn = 0;
  const total = Math.round(rate * seconds);
  const started = performance.now();
  const all: Promise<void>[] = [];
  await new Promise<void>((done) => {
    const tick = (): void => {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - started) * rate) / 1000) + 1);
      while (sent < due) {
        const e = entities[turn % entities.length];
        if (inFlight >= maxInFlight || busy.has(e)) {
          delayed++;
          break;
        }
        turn++;
        sent++;
        inFlight++;
        busy.add(e);
        const t = performance.now();
        all.push(update(origin, dc, e, (stamp) => sentAt.set(stamp, t), log).then((good) => {
          writeLatencies.add(performance.now() - t);
          if (good) ok++;
          else failed++;
        }, () => {
          failed++;
        }).finally(() => {
          inFlight--;
          busy.delete(e);
        }));
      }
      if (sent >= total) done();
      else setTimeout(tick, 2);
    };
    tick();
  });
  await Promise.all(all);
  return { log, sent, ok, failed, elapsed: (performance.now() - started) / 1000, writeLatencies, delayed };
}

export interface LoopResult {
  readonly count: number;
  readonly failed: number;
  readonly elapsed: number;
  readonly latencies: Latencies;
  /** the server's CPU time over the run and until it was idle after it, in ms (undefined off Linux) */
  readonly serverCpuMs: number | undefined;
}

/** `entities.length` clients, each updating its own entity one write after another, for `seconds`. */
export async function closedLoop(origin: string, dc: string, entities: Owned[], seconds: number, serverPid: number): Promise<LoopResult> {
  const latencies = new Latencies();
  let count = 0;
  let failed = 0;
  const cpu0 = processCpuMs(serverPid);
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(entities.map(async (e) => {
    while (performance.now() < end) {
      const t = performance.now();
      if (await update(origin, dc, e)) {
        latencies.add(performance.now() - t);
        count++;
      } else failed++;
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  // (what the writes left the server to do — telling the streams — counts too: until it is idle)
  const cpu1 = await untilIdle(serverPid);
  return { count, failed, elapsed, latencies, serverCpuMs: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0 };
}

/** The process's CPU time once it has been idle (under 3 ms of CPU in 100 ms) or after `maxMs`. */
export async function untilIdle(pid: number, maxMs = 15_000): Promise<number | undefined> {
  let last = processCpuMs(pid);
  const end = performance.now() + maxMs;
  while (last !== undefined && performance.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = processCpuMs(pid) as number;
    if (now - last < 3) return now;
    last = now;
  }
  return last;
}
