// Reads a V8 .cpuprofile (node --cpu-prof) and summarises it: where the time went by area
// (our src/, fastify, pino, node internals, GC…) and the functions with the most self and total
// time, optionally per request. Also runnable alone: node --import tsx bench/cpuprofile.ts FILE [TOP]

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Entry {
  readonly name: string;
  readonly ms: number;
  readonly share: number;
}
export interface Summary {
  readonly file: string;
  /** sampled time, idle excluded */
  readonly busyMs: number;
  readonly idleMs: number;
  readonly areas: Entry[];
  readonly self: Entry[];
  /** total (inclusive) time of the project's own functions (src/ or bench/) */
  readonly ownTotal: Entry[];
}

const OWN = new Set(['our src/', 'bench/']);

/** The part of the code base a frame belongs to. */
function area(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(program)') return 'V8/native (program)';
  if (url.includes('/src/')) return 'our src/';
  if (url.includes('/bench/')) return 'bench/';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `node_modules/${pkg[1]}`;
  if (url.startsWith('node:') || url === '') return 'node internals / native';
  return url;
}

function label(frame: CallFrame): string {
  const file = frame.url.replace(/^file:\/\//, '').replace(/^.*\/(src|node_modules|bench)\//, '$1/');
  // tsx-compiled files report line 1 for every function: the line is left out then
  const line = frame.lineNumber > 0 ? `:${frame.lineNumber + 1}` : '';
  return `${frame.functionName || '(anonymous)'} ${file ? `${file}${line}` : '(native)'}`;
}

export function summarize(file: string, top = 15): Summary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const areas = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id);
    if (!node) return;
    const a = area(node.callFrame);
    if (a === 'idle') {
      idle += us;
      return;
    }
    busy += us;
    areas.set(a, (areas.get(a) ?? 0) + us);
    const own = label(node.callFrame);
    self.set(own, (self.get(own) ?? 0) + us);
    // total time: each own function on the stack, once per sample (recursion counted once)
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = (byId.get(at) as ProfileNode).callFrame;
      if (!OWN.has(area(frame))) continue;
      const name = label(frame);
      if (seen.has(name)) continue;
      seen.add(name);
      total.set(name, (total.get(name) ?? 0) + us);
    }
  });
  const entries = (m: Map<string, number>, n: number): Entry[] =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, us]) => ({ name, ms: us / 1000, share: busy > 0 ? us / busy : 0 }));
  return { file, busyMs: busy / 1000, idleMs: idle / 1000, areas: entries(areas, 12), self: entries(self, top), ownTotal: entries(total, top) };
}

/**
 * The main thread's profile among those a process wrote into `dir` (tsx's module loader thread
 * writes one too): the one with the most busy time.
 */
export function mainProfile(dir: string, top = 15): Summary | undefined {
  const all = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).map((f) => summarize(join(dir, f), top));
  return all.sort((a, b) => b.busyMs - a.busyMs)[0];
}

/** The summary as text; with `requests`, each line also gives microseconds per request. */
export function formatSummary(s: Summary, requests?: number): string {
  const per = (e: Entry) => (requests ? `  ${((e.ms * 1000) / requests).toFixed(2).padStart(7)} µs/req` : '');
  const rows = (list: Entry[]) => list.map((e) => `  ${(e.share * 100).toFixed(1).padStart(5)}%  ${e.ms.toFixed(0).padStart(6)} ms${per(e)}  ${e.name}`).join('\n');
  return [
    `busy ${s.busyMs.toFixed(0)} ms${requests ? ` (${((s.busyMs * 1000) / requests).toFixed(1)} µs per request over ${requests} requests)` : ''}, idle ${s.idleMs.toFixed(0)} ms; shares are of busy time`,
    'by area (self time):',
    rows(s.areas),
    // Seen on Linux: V8's sampling signal is mostly taken on the way out of a system call, so
    // writev and SQLite calls (which lock with fcntl) come out about twice what `perf` measures.
    'functions by self time (a native call, such as a SQLite statement, counts for its JS caller; ' +
      'functions that make system calls are over-counted, often about 2x: check with perf before acting on them):',
    rows(s.self),
    ...(s.ownTotal.length > 0 ? ['own functions by total time (callees included):', rows(s.ownTotal)] : []),
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node --import tsx bench/cpuprofile.ts FILE.cpuprofile [TOP]\n');
    process.exit(2);
  }
  process.stdout.write(`${formatSummary(summarize(file, Number(process.argv[3] ?? 15)))}\n`);
}
