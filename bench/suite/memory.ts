// What our server holds in memory: its resident set idle (started, checked, before any load),
// while 100 connections read by key, and a few seconds after (what outlived the requests). A
// guest that keeps nothing is no session, stored or remembered (issue 39): the RSS after the load
// settles back near the idle one, and the sessions table holds no row the load made.

import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadOne, type Loaded } from './load.js';

export interface MemoryReport {
  readonly connections: number;
  readonly seconds: number;
  readonly requests: number;
  /** MiB */
  readonly idle: number;
  /** MiB, the highest seen while loaded */
  readonly loaded: number;
  /** MiB, SETTLE_MS after the load */
  readonly after: number;
}

/** how long the server is left alone after the load before its RSS is read again */
const SETTLE_MS = 3000;

/** A process's resident set, MiB (Linux); undefined where /proc does not say. */
export function rssMiB(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Loads `server` with `connections` connections on `path` for `seconds`, sampling its RSS; `idle` is the RSS read before any load (rssMiB). */
export async function measureMemory(server: Loaded, idle: number | undefined, path: (n: number) => string, range: number, connections: number, seconds: number): Promise<MemoryReport | undefined> {
  if (idle === undefined) return undefined;
  let high = idle;
  const sampler = setInterval(() => {
    high = Math.max(high, rssMiB(server.pid) ?? high);
  }, 100);
  let requests = 0;
  try {
    requests = (await loadOne({ server, path }, range, { connections, seconds, rounds: 1, warmupSeconds: 0 })).requests;
  } finally {
    clearInterval(sampler);
  }
  await sleep(SETTLE_MS);
  return { connections, seconds, requests, idle, loaded: high, after: rssMiB(server.pid) ?? high };
}
