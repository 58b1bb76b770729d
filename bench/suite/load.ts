// Loading two servers with the same scenario, fairly: autocannon on 127.0.0.1 with a new random
// input for every request, a warm-up each, then alternating rounds (a, b, b, a, …) so that a drift
// in the machine's speed weighs on both; for each side its requests, time, CPU per request (the
// server's process, or its process tree when supervised; the database server's too when given),
// exact latencies and failures.

import autocannon from 'autocannon';
import { Latencies, processCpuMs, processTreeCpuMs } from '../measure.js';
import type { Measurement } from './results.js';

/** A server to load. */
export interface Loaded {
  readonly url: string;
  readonly pid: number;
  /** its CPU is that of its process tree (a supervisor and its workers) */
  readonly tree?: boolean;
}

export interface LoadSettings {
  readonly connections: number;
  /** measured seconds per side, split into `rounds` */
  readonly seconds: number;
  readonly rounds: number;
  readonly warmupSeconds: number;
  /** a database server's pid whose tree's CPU is counted apart (PostgreSQL) */
  readonly dbPid?: number;
}

/** What one side gathers over its rounds. */
class Tally {
  requests = 0;
  seconds = 0;
  failures = 0;
  cpuMs: number | undefined = 0;
  dbCpuMs: number | undefined = 0;
  readonly latencies = new Latencies();
  readonly rounds: number[] = [];

  measurement(): Measurement {
    const per = (ms: number | undefined): number | undefined => (ms === undefined || this.requests === 0 ? undefined : (ms * 1000) / this.requests);
    return {
      requests: this.requests,
      seconds: this.seconds,
      requestsPerSecond: this.seconds > 0 ? this.requests / this.seconds : 0,
      cpuUsPerRequest: per(this.cpuMs),
      dbCpuUsPerRequest: per(this.dbCpuMs),
      p50Ms: this.latencies.percentile(50),
      p99Ms: this.latencies.percentile(99),
      failures: this.failures,
      rounds: this.rounds,
    };
  }
}

const cpuOf = (server: Loaded): number | undefined => (server.tree ? processTreeCpuMs(server.pid) : processCpuMs(server.pid));

/** One autocannon run on `server`: `path(n)` for a random n in [0, range) each request; tallied when `into` is given. */
async function run(server: Loaded, path: (n: number) => string, range: number, seconds: number, s: LoadSettings, into?: Tally): Promise<void> {
  const cpu0 = cpuOf(server);
  const db0 = s.dbPid === undefined ? undefined : processTreeCpuMs(s.dbPid);
  const instance = autocannon({
    url: server.url,
    connections: s.connections,
    pipelining: 1,
    duration: seconds,
    timeout: 10,
    requests: [{ setupRequest: (request) => ({ ...request, path: path(Math.floor(Math.random() * range)) }) }],
  });
  if (into) instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => into.latencies.add(ms));
  const r = await instance;
  if (!into) return;
  const cpu1 = cpuOf(server);
  const db1 = s.dbPid === undefined ? undefined : processTreeCpuMs(s.dbPid);
  const answered = r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'];
  into.requests += answered;
  into.seconds += r.duration;
  into.failures += r.non2xx + r.errors + r.timeouts;
  into.cpuMs = into.cpuMs === undefined || cpu0 === undefined || cpu1 === undefined ? undefined : into.cpuMs + cpu1 - cpu0;
  into.dbCpuMs = into.dbCpuMs === undefined || db0 === undefined || db1 === undefined ? undefined : into.dbCpuMs + db1 - db0;
  into.rounds.push(answered / r.duration);
}

export interface Side {
  readonly server: Loaded;
  readonly path: (n: number) => string;
}

/** Both sides warmed up, then loaded in alternating rounds; the measurement of each. */
export async function loadBoth(a: Side, b: Side, range: number, s: LoadSettings): Promise<[Measurement, Measurement]> {
  const tallies = [new Tally(), new Tally()];
  const sides = [a, b];
  if (s.warmupSeconds > 0) for (const side of sides) await run(side.server, side.path, range, s.warmupSeconds, s);
  for (let round = 0; round < s.rounds; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    for (const i of order) await run(sides[i].server, sides[i].path, range, s.seconds / s.rounds, s, tallies[i]);
  }
  return [tallies[0].measurement(), tallies[1].measurement()];
}

/** One side alone (a peer compared in another run of ours, say). */
export async function loadOne(side: Side, range: number, s: LoadSettings): Promise<Measurement> {
  const tally = new Tally();
  if (s.warmupSeconds > 0) await run(side.server, side.path, range, s.warmupSeconds, s);
  for (let round = 0; round < s.rounds; round++) await run(side.server, side.path, range, s.seconds / s.rounds, s, tally);
  return tally.measurement();
}
