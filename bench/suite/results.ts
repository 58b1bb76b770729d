// What the benchmark suite measures and keeps (bench/results/*.json), and what BENCHMARKS.md and its
// chart are written from. Every figure of ours sits beside the figure of what it is compared with,
// measured in the same run on the same data: a hand-written baseline, or a peer.

import type { MemoryReport } from './memory.js';

/** One server loaded with one scenario (all its rounds together). */
export interface Measurement {
  /** answered requests (a batch counts as one request; see Comparison.unitsPerRequest) */
  readonly requests: number;
  /** seconds measured (warm-up excluded) */
  readonly seconds: number;
  readonly requestsPerSecond: number;
  /** the server process's CPU time (user + system, all threads) per request, in µs; undefined where it cannot be read */
  readonly cpuUsPerRequest?: number;
  /** the database server's CPU time per request, in µs (PostgreSQL started by the suite only) */
  readonly dbCpuUsPerRequest?: number;
  /** response time percentiles, ms */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** answers that were not 2xx, connection errors, timeouts */
  readonly failures: number;
  /** requests per second of each round */
  readonly rounds: readonly number[];
}

export type Group = 'reads' | 'writes' | 'sets' | 'uploads';
export type Engine = 'sqlite' | 'postgres';

/** Ours against the hand-written baseline, one scenario at one size. */
export interface Comparison {
  readonly group: Group;
  /** a stable identifier (byKey, filtered, expanded, deepSkip, orderBy, compute, setPage, create, update, batch, upload) */
  readonly scenario: string;
  /** what it does, in a few words (shown in tables) */
  readonly title: string;
  /** the items in the datastore */
  readonly size: number;
  readonly engine: Engine;
  /** our server's --workers */
  readonly workers: number;
  /** entities per request (a batch of 1,000: 1000), for entities per second */
  readonly unitsPerRequest: number;
  readonly ours: Measurement;
  readonly baseline: Measurement;
  /** ours / baseline, requests per second */
  readonly ratio: number;
  /** baseline / ours, CPU per request (the figure that holds when the load generator shares the cores) */
  readonly cpuRatio?: number;
  /** the target for `ratio`, when it sets one */
  readonly target?: number;
}

/** Ours against another server over a copy of the same data. */
export interface PeerComparison {
  readonly scenario: string;
  readonly title: string;
  readonly size: number;
  /** e.g. "Platformatic DB 3.67.0", "json-server 0.17.4" */
  readonly peer: string;
  /** the Node.js version both ran on */
  readonly node: string;
  readonly ours: Measurement;
  /** undefined when the peer cannot answer this read in one request (`note` says why) */
  readonly other?: Measurement;
  readonly ratio?: number;
  readonly cpuRatio?: number;
  readonly target?: number;
  readonly note?: string;
}

/** How a read's cost at the largest size compares with its cost at the smallest ("cost follows the page"). */
export interface Scaling {
  readonly scenario: string;
  readonly title: string;
  readonly smallSize: number;
  readonly largeSize: number;
  /** our CPU µs per request at each size (requests per second where CPU cannot be read) */
  readonly small: number;
  readonly large: number;
  /** large / small */
  readonly ratio: number;
  /** 1.5: within it, the cost follows the page */
  readonly target: number;
  /** why it does not follow the page, and what would fix it, when it does not */
  readonly why?: string;
}

/** Our server with several workers against itself with one (--workers), one read at one size. */
export interface WorkersComparison {
  readonly scenario: string;
  readonly title: string;
  readonly size: number;
  readonly workers: number;
  readonly one: Measurement;
  readonly many: Measurement;
  /** many / one, requests per second */
  readonly ratio: number;
  /** the target: 1.6 */
  readonly target: number;
}

/** Our server's memory at one size (bench/suite/memory.ts). */
export interface SizedMemory extends MemoryReport {
  readonly size: number;
}

/** The data set made for one size. */
export interface Generation {
  readonly engine: Engine;
  readonly rows: number;
  readonly ms: number;
  readonly rowsPerSecond: number;
  readonly bytes: number;
  readonly fromCache: boolean;
}

export interface SuiteResults {
  /** ISO time the run began */
  readonly startedAt: string;
  readonly seconds: number;
  /** the command line after `npm run bench --` */
  readonly args: readonly string[];
  readonly machine: { readonly cpus: number; readonly model: string; readonly memoryGiB: number; readonly os: string };
  /** node, better-sqlite3, SQLite, PostgreSQL, autocannon, and the peers' */
  readonly versions: Readonly<Record<string, string>>;
  /** connections, durations, rounds … as run */
  readonly settings: Readonly<Record<string, string | number | boolean>>;
  readonly generated: readonly Generation[];
  readonly comparisons: readonly Comparison[];
  readonly peers: readonly PeerComparison[];
  readonly scaling: readonly Scaling[];
  /** --workers N against one worker (absent from runs made before it was measured) */
  readonly workers?: readonly WorkersComparison[];
  /** our server's RSS idle, under 100 connections and after, per size (absent from older runs) */
  readonly memory?: readonly SizedMemory[];
  /** what a reader must know to read the figures (the load generator sharing the cores, figures quoted and not measured …) */
  readonly notes: readonly string[];
}
