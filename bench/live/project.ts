// The live bench's project and servers: a model of three identical dataclasses — Live and Other
// track their changes ("trackChanges": true: what $method=watch follows), Plain does not (the
// write cost's untracked twin) — in a temporary folder, and our server on it as a child process
// on 127.0.0.1 (SQLite, or a PostgreSQL database: several instances share it).

import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, temporaryFolder, type ServerProcess } from '../processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const attributes = [
  { name: 'ID', type: 'long', identifying: true, autoincrement: true },
  { name: 'name', type: 'string', indexed: true },
  { name: 'bucket', type: 'long', indexed: true },
  { name: 'price', type: 'number' },
  // the writer's clock (Date.now()) at the write: each write changes the entity
  { name: 'sentAt', type: 'number' },
];

export const MODEL = {
  name: 'LiveBench',
  dataClasses: [
    { name: 'Live', trackChanges: true, attributes },
    { name: 'Other', trackChanges: true, attributes },
    { name: 'Plain', attributes },
  ],
};

/** A temporary project folder holding the model. */
export function liveProject(): string {
  const dir = temporaryFolder('dataset-rest-live-bench-');
  writeFileSync(join(dir, 'model.json'), JSON.stringify(MODEL, null, 2));
  return dir;
}

export interface StartLive {
  readonly name: string;
  readonly dir: string;
  /** a PostgreSQL database's URL (else the project's SQLite file) */
  readonly db?: string;
  /** more arguments to the server */
  readonly extra?: readonly string[];
  /** a folder to write a CPU profile into (node --cpu-prof), read when the server has stopped */
  readonly profileDir?: string;
}

/** Our server on the project, one process (no supervisor), quiet logs. */
export function startLive(o: StartLive): Promise<ServerProcess> {
  if (o.profileDir) mkdirSync(o.profileDir, { recursive: true });
  return startServer({
    name: o.name,
    args: [
      ...(o.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${o.profileDir}`] : []),
      'bin/dataset-rest.mjs', '--project', o.dir, ...(o.db ? ['--db', o.db] : []), '--port', '0', '--log-level', 'warn', ...(o.extra ?? []),
    ],
    cwd: ROOT,
    ready: /dataset-rest listening on (http:\/\/\S+)\/rest/,
    timeoutMs: 60_000,
  });
}

/** A process's resident set (VmRSS) and its peak (VmHWM), in bytes; undefined off Linux. */
export function rss(pid: number): { rss: number; peak: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return undefined;
  }
}

/** File descriptors a process has open (undefined off Linux). */
export function openFds(pid: number | 'self'): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

/** This process's open-file limit (soft, hard), from /proc/self/limits (undefined off Linux). */
export function fileLimit(): { soft: number; hard: number } | undefined {
  try {
    const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    if (!m) return undefined;
    const n = (v: string) => (v === 'unlimited' ? Infinity : Number(v));
    return { soft: n(m[1]), hard: n(m[2]) };
  } catch {
    return undefined;
  }
}
