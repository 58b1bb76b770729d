// The suite's write scenarios (issue 16): our server against the hand-written baseline
// (bench/suite/baseline-writes.ts), each over its own copy of the same SQLite file, in the same run:
//
//   create  POST /rest/Item?$method=update  {name, price, qty, created, category: {"__KEY": "k"}}
//           → 200, the created entity                     baseline: POST /create, the same body
//   update  POST /rest/Item?$method=update  {"__KEY": "k", "__STAMP": s, "qty": q}
//           → 200, the entity with its new stamp          baseline: POST /update, the same body
//   batch   POST /rest/Item?$method=update&$atomic=true  [1,000 new items]
//           → 200, {"__ENTITIES": [the created entities]} baseline: POST /batch, the same body
//   upload  POST /rest/$upload?$binary=true  64 KB of bytes (application/octet-stream)
//           → 200, {"ID": "<32 hex>"}                     baseline: POST /upload, the same body
//
// Load: `clients` closed-loop clients, each on its own keep-alive connection (node:http Agent,
// one socket), on 127.0.0.1; each sends its next request when its answer has come back. Request
// bodies are made before the clock starts (a create or a batch sends the same few bodies again:
// they carry no key), so that the load generator's CPU goes to HTTP; its CPU is measured and
// logged with every figure. The update's clients each own a disjoint range of keys and pick a
// random key of theirs each time: they never read first, since the generator wrote every item
// with __stamp 1 and each answer returns the next stamp, which the client keeps (per server: each
// has its own file). A refused stamp is a failure.
//
// Servers: both started fresh for each scenario (a scenario's leftovers — a heap grown by 1,000-
// entity answers, pending uploads, JIT state tuned to another request — stay out of the next
// one; it costs a couple of seconds a scenario), then a sanity check: the first request of the
// scenario on both, whose answers must be the same JSON (the same keys in the same order; the
// keys, times and port aside) with the same headers, and whose rows must be stored the same in
// both files (every column but the key and the time, the global stamp moved as much); then
// warm-up on each, then `rounds` rounds alternating ours, baseline, baseline, ours, … The
// servers' CPU is read from /proc around each round (the supervisor's process tree with
// --workers above 1).

import { deepStrictEqual, ok, strictEqual } from 'node:assert/strict';
import { statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { cookieName } from '../../src/rest/scope/scope.js';
import { Latencies, processCpuMs, processTreeCpuMs } from '../measure.js';
import { startServer, temporaryFolder, type ServerProcess } from '../processes.js';
import { itemValues, MODEL } from './model.js';
import type { Comparison, Group, Measurement } from './results.js';

export interface WriteOptions {
  /** a project folder (model.json + data/data.sqlite) of `size` items, ours to change (a fresh copy) */
  projectDir: string;
  /** another copy of the same SQLite file, for the baseline to change */
  baselineDb: string;
  /** items in it */
  size: number;
  /** measured seconds per server and scenario (split into `rounds` alternating rounds: ours, baseline, baseline, ours …) */
  seconds: number;
  rounds: number;
  warmupSeconds: number;
  /** concurrent closed-loop clients (each sends its next request when its answer came back) */
  clients: number;
  /** our server's --workers (default 1; above 1 it runs under its supervisor and its CPU is that of the process tree) */
  workers?: number;
  /** scenarios to run: create, update, batch, upload (all by default) */
  only?: string[];
  /**
   * the minimal baseline (issue 39): the same hand-written server sending `content-type` and
   * `content-length` only — none of the contract's headers (cookie, request id, CSP …) that ours
   * sends, so the comparison shows what every request of ours costs beyond the SQL and the JSON
   */
  minimal?: boolean;
  log: (line: string) => void;
}

export const WRITE_SCENARIOS = ['create', 'update', 'batch', 'upload'] as const;
export type WriteScenario = (typeof WRITE_SCENARIOS)[number];

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** entities in a batch */
export const BATCH = 1000;
/** bytes in an upload */
export const UPLOAD_BYTES = 64 * 1024;
/** an answer slower than this is a failure (and the client goes on) */
const TIMEOUT_MS = 10_000;
/** distinct create bodies (sent in turn) and batch bodies */
const CREATE_BODIES = 1000;
const BATCH_BODIES = 4;

const TITLES: Record<WriteScenario, string> = {
  create: 'create one entity',
  update: 'update one entity with its stamp',
  batch: `create ${BATCH.toLocaleString('en-US')} entities, $atomic`,
  upload: `upload ${UPLOAD_BYTES / 1024} KB`,
};
const GROUPS: Record<WriteScenario, Group> = { create: 'writes', update: 'writes', batch: 'writes', upload: 'uploads' };

// ── The load generator ──

interface Answer {
  status: number;
  /** the body as text when asked for, else undefined */
  text?: string;
  headers: Record<string, string | string[] | undefined>;
}

/** One client's keep-alive connection to one server. */
class Connection {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 });
  constructor(readonly port: number) {}

  /** POSTs `body`; resolves to the answer (its text only if `keepText`), rejects on a network error or after TIMEOUT_MS. */
  post(path: string, body: Buffer, type: string, keepText: boolean): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: this.port, path, method: 'POST', agent: this.#agent, headers: { 'content-type': type, 'content-length': body.length } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => {
            if (keepText) chunks.push(chunk);
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: keepText ? Buffer.concat(chunks).toString('utf8') : undefined, headers: res.headers }));
          res.on('error', reject);
        },
      );
      req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error(`no answer in ${TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** What one server answered over the measured rounds of one scenario. */
interface Totals {
  /** 2xx answers */
  requests: number;
  /** non-2xx answers, network errors, timeouts, refused stamps */
  failures: number;
  seconds: number;
  /** undefined once a read of /proc failed */
  serverCpuMs: number | undefined;
  clientCpuMs: number;
  latencies: Latencies;
  rounds: number[];
  /** the server's CPU µs per request of each round (NaN where unread) */
  cpuRounds: number[];
}

const newTotals = (): Totals => ({ requests: 0, failures: 0, seconds: 0, serverCpuMs: 0, clientCpuMs: 0, latencies: new Latencies(), rounds: [], cpuRounds: [] });

type SideName = 'ours' | 'baseline';

/** One server under one scenario: its process, its clients' connections, its paths and state. */
interface Side {
  readonly name: SideName;
  readonly server: ServerProcess;
  readonly connections: Connection[];
  readonly cpuMs: () => number | undefined;
  readonly path: Record<WriteScenario, string>;
  /** update: the stamp of each key (index = key) as this server's answers gave it */
  stamps?: Uint32Array;
  /** the baseline without the contract's headers (WriteOptions.minimal) */
  minimal?: boolean;
}

/** One request of a scenario by client `c`: true when it succeeded. */
type Step = (side: Side, c: number) => Promise<boolean>;

/** Runs every client in a closed loop for `seconds`; adds the round to `into` (not a warm-up). */
async function round(side: Side, step: Step, clients: number, seconds: number, into?: Totals): Promise<void> {
  const cpu0 = side.cpuMs();
  const client0 = process.cpuUsage();
  const started = performance.now();
  const end = started + seconds * 1000;
  let requests = 0;
  let failures = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      while (performance.now() < end) {
        const t = performance.now();
        let good = false;
        try {
          good = await step(side, c);
        } catch {
          good = false;
        }
        if (good) {
          requests++;
          into?.latencies.add(performance.now() - t);
        } else {
          failures++;
          // (a server that fails at once would have the loop spin)
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const client = process.cpuUsage(client0);
  const cpu1 = side.cpuMs();
  if (!into) return;
  into.requests += requests;
  into.failures += failures;
  into.seconds += elapsed;
  into.serverCpuMs = into.serverCpuMs === undefined || cpu0 === undefined || cpu1 === undefined ? undefined : into.serverCpuMs + cpu1 - cpu0;
  into.clientCpuMs += (client.user + client.system) / 1000;
  into.rounds.push(requests / elapsed);
  into.cpuRounds.push(cpu0 === undefined || cpu1 === undefined ? Number.NaN : ((cpu1 - cpu0) * 1000) / requests);
}

// ── Request bodies ──

/** A new item's body: the values of item n (model.ts), its category as a relation. */
function newItem(n: number): Record<string, unknown> {
  const v = itemValues(n);
  return { name: v.name, price: v.price, qty: v.qty, created: v.created, category: { __KEY: String(v.categoryID) } };
}

const JSON_TYPE = 'application/json';
const BINARY_TYPE = 'application/octet-stream';

/** The upload's bytes: a fixed pattern (the same on every run). */
function uploadBody(): Buffer {
  const b = Buffer.alloc(UPLOAD_BYTES);
  for (let at = 0; at < UPLOAD_BYTES; at += 4) b.writeUInt32LE((at * 2654435761) >>> 0, at);
  return b;
}

const STAMP = /"__STAMP":(\d+)/;

/** A client's keys for the update: client c of `clients` owns [from, to). */
function keyRange(size: number, clients: number, c: number): [number, number] {
  return [Math.floor((c * size) / clients) + 1, Math.floor(((c + 1) * size) / clients) + 1];
}

interface Plan {
  readonly step: Step;
  /** the first request on both servers and the checks of their answers and rows */
  readonly sanity: (ours: Side, baseline: Side, files: DbFiles) => Promise<string>;
}

function plan(scenario: WriteScenario, o: WriteOptions): Plan {
  switch (scenario) {
    case 'create': {
      const bodies = Array.from({ length: CREATE_BODIES }, (_, i) => Buffer.from(JSON.stringify(newItem(o.size + i))));
      const next = new Array<number>(o.clients).fill(0);
      return {
        step: async (side, c) => {
          const body = bodies[(c + o.clients * next[c]++) % CREATE_BODIES];
          return (await side.connections[c].post(side.path.create, body, JSON_TYPE, false)).status === 200;
        },
        sanity: async (ours, baseline, files) => {
          const body = Buffer.from(JSON.stringify(newItem(o.size + CREATE_BODIES)));
          const [a, b] = await bothOnce(ours, baseline, 'create', body, JSON_TYPE, files);
          const entity = JSON.parse(a.answer.text as string) as Record<string, unknown>;
          const v = itemValues(o.size + CREATE_BODIES);
          deepStrictEqual(
            { name: entity.name, price: entity.price, qty: entity.qty, created: entity.created, categoryID: entity.categoryID, __STAMP: entity.__STAMP },
            { name: v.name, price: v.price, qty: v.qty, created: v.created, categoryID: v.categoryID, __STAMP: 1 },
            `ours: the created entity is not the values sent: ${a.answer.text}`,
          );
          sameEntities(a, b, 1);
          return `create → 200, the entity (${a.answer.text?.length} B), the same JSON and row as the baseline's`;
        },
      };
    }
    case 'update': {
      const q = (key: number, stamp: number): number => (key * 7 + stamp) % 1000;
      const body = (side: Side, key: number): Buffer => {
        const stamp = (side.stamps as Uint32Array)[key];
        return Buffer.from(JSON.stringify({ __KEY: String(key), __STAMP: stamp, qty: q(key, stamp) }));
      };
      const ranges = Array.from({ length: o.clients }, (_, c) => keyRange(o.size, o.clients, c));
      if (ranges.some(([from, to]) => to <= from)) throw new Error(`update: ${o.clients} clients need ${o.clients} items at least`);
      return {
        step: async (side, c) => {
          const [from, to] = ranges[c];
          const key = from + Math.floor(Math.random() * (to - from));
          const stamps = side.stamps as Uint32Array;
          const a = await side.connections[c].post(side.path.update, body(side, key), JSON_TYPE, true);
          // the stamp the server holds now (an error answer of ours carries it too)
          const m = STAMP.exec(a.text as string);
          const before = stamps[key];
          if (m) stamps[key] = Number(m[1]);
          return a.status === 200 && stamps[key] === before + 1;
        },
        sanity: async (ours, baseline, files) => {
          const key = 1;
          const [a, b] = await bothOnce(ours, baseline, 'update', body(ours, key), JSON_TYPE, files, body(baseline, key));
          for (const [side, x] of [[ours, a], [baseline, b]] as const) {
            const e = JSON.parse(x.answer.text as string) as { __STAMP: number; qty: number };
            strictEqual(e.__STAMP, 2, `${side.name}: the stamp after the first update`);
            strictEqual(e.qty, q(key, 1), `${side.name}: qty after the first update`);
            (side.stamps as Uint32Array)[key] = 2;
          }
          sameEntities(a, b, 1);
          return `update → 200, the entity with __STAMP 2 (${a.answer.text?.length} B), the same JSON and row as the baseline's`;
        },
      };
    }
    case 'batch': {
      const bodies = Array.from({ length: BATCH_BODIES }, (_, i) => Buffer.from(JSON.stringify(Array.from({ length: BATCH }, (_, j) => newItem(o.size + i * BATCH + j)))));
      const next = new Array<number>(o.clients).fill(0);
      return {
        step: async (side, c) => {
          const b = bodies[(c + next[c]++) % BATCH_BODIES];
          return (await side.connections[c].post(side.path.batch, b, JSON_TYPE, false)).status === 200;
        },
        sanity: async (ours, baseline, files) => {
          const [a, b] = await bothOnce(ours, baseline, 'batch', bodies[0], JSON_TYPE, files);
          sameEntities(a, b, BATCH);
          return `batch → 200, ${BATCH} entities (${((a.answer.text?.length ?? 0) / 1024).toFixed(0)} KB), the same JSON and rows as the baseline's`;
        },
      };
    }
    case 'upload': {
      const bytes = uploadBody();
      return {
        step: async (side, c) => (await side.connections[c].post(side.path.upload, bytes, BINARY_TYPE, false)).status === 200,
        sanity: async (ours, baseline, files) => {
          const [a, b] = await bothOnce(ours, baseline, 'upload', bytes, BINARY_TYPE, files);
          const ids = [a, b].map((x) => {
            ok(/^\{"ID":"[0-9A-F]{32}"\}$/.test(x.answer.text as string), `an upload's answer: ${x.answer.text}`);
            return (JSON.parse(x.answer.text as string) as { ID: string }).ID;
          });
          const stored = files.ours.prepare('SELECT "size", "kind" FROM "__dataset_blobs" WHERE "upload" = ?').get(ids[0]) as { size: number; kind: string } | undefined;
          deepStrictEqual(stored, { size: UPLOAD_BYTES, kind: 'binary' }, 'ours: the upload as stored');
          strictEqual(statSync(join(files.uploads, ids[1])).size, UPLOAD_BYTES, 'baseline: the upload as stored');
          return `upload → 200, {"ID": …} on both; ${UPLOAD_BYTES} bytes stored by both`;
        },
      };
    }
  }
}

// ── Sanity ──

interface DbFiles {
  readonly ours: Database.Database;
  readonly baseline: Database.Database;
  /** the baseline's upload folder */
  readonly uploads: string;
}

interface Sent {
  answer: Answer;
  /** the global stamp's move */
  stampMoved: number;
  side: Side;
  db: Database.Database;
}

const globalStamp = (db: Database.Database): number => Number(db.prepare('SELECT "value" FROM "__dataset_global_stamp" WHERE "id" = 1').pluck().get());

/** One request of a scenario on each server (2xx expected), with the same headers on both answers. */
async function bothOnce(ours: Side, baseline: Side, scenario: WriteScenario, body: Buffer, type: string, files: DbFiles, baselineBody = body): Promise<[Sent, Sent]> {
  const minimal = baseline.minimal === true;
  const out: Sent[] = [];
  for (const [side, db, b] of [[ours, files.ours, body], [baseline, files.baseline, baselineBody]] as const) {
    const before = globalStamp(db);
    const answer = await side.connections[0].post(side.path[scenario], b, type, true);
    strictEqual(answer.status, 200, `${side.name}: ${scenario} answered ${answer.status}: ${answer.text?.slice(0, 500)}`);
    out.push({ answer, stampMoved: globalStamp(db) - before, side, db });
  }
  // the headers' names and the lengths of their values (a cookie's token differs, not its length; the date is the server's)
  const names = (a: Answer): string[] =>
    Object.entries(a.headers).map(([name, value]) => `${name}: ${name === 'date' || name === 'keep-alive' ? '' : String(value).length}`).sort();
  // (the minimal baseline sends fewer on purpose: the content's headers alone, which ours sends too)
  if (minimal) for (const name of ['content-type', 'content-length']) ok(out[0].answer.headers[name] !== undefined && out[1].answer.headers[name] !== undefined, `${scenario}: ${name} missing`);
  else deepStrictEqual(names(out[1].answer), names(out[0].answer), `${scenario}: our answer and the baseline's carry different headers: the comparison would not be fair`);
  return [out[0], out[1]];
}

/** An entity of an answer with its key, time and origin left out. */
function normalized(e: Record<string, unknown>, side: SideName): Record<string, unknown> {
  const key = e.__KEY as string;
  ok(/^\d+$/.test(key) && e.ID === Number(key), `${side}: __KEY ${key} and ID ${String(e.ID)}`);
  ok(typeof e.__TIMESTAMP === 'string' && !Number.isNaN(Date.parse(e.__TIMESTAMP)), `${side}: __TIMESTAMP ${String(e.__TIMESTAMP)}`);
  ok(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/rest/Item\\(${key}\\)$`).test(e.uri as string), `${side}: uri ${String(e.uri)}`);
  return { ...e, __KEY: 'KEY', __TIMESTAMP: 'TIME', ID: 0, uri: 'URI' };
}

interface StoredItem {
  ID: number;
  __timestamp: number;
  [column: string]: unknown;
}

/**
 * Both answers hold the same entities (the same JSON: keys in the same order, the same values;
 * keys, times and origins aside), both files store them the same (every column but the key and
 * the time, which is the answer's) and both global stamps moved by `count`.
 */
function sameEntities(a: Sent, b: Sent, count: number): void {
  const entities = (x: Sent): Record<string, unknown>[] => {
    const body = JSON.parse(x.answer.text as string) as Record<string, unknown>;
    return count === 1 && !('__ENTITIES' in body) ? [body] : (body.__ENTITIES as Record<string, unknown>[]);
  };
  const [ea, eb] = [entities(a), entities(b)];
  strictEqual(ea.length, count, 'ours: entities in the answer');
  strictEqual(eb.length, count, 'baseline: entities in the answer');
  strictEqual(
    JSON.stringify(eb.map((e) => normalized(e, 'baseline'))),
    JSON.stringify(ea.map((e) => normalized(e, 'ours'))),
    'our answer and the baseline answer differ (keys, times and origins aside): the comparison would not be fair',
  );
  const rows = (x: Sent, list: Record<string, unknown>[]): Record<string, unknown>[] => {
    const get = x.db.prepare('SELECT * FROM "Item" WHERE "ID" = ?');
    return list.map((e) => {
      const row = get.get(e.ID) as StoredItem | undefined;
      ok(row, `${x.side.name}: Item ${String(e.ID)} is not stored`);
      strictEqual(new Date(row.__timestamp).toISOString(), e.__TIMESTAMP, `${x.side.name}: Item ${row.ID}: __timestamp is not the answer's __TIMESTAMP`);
      return { ...row, ID: 0, __timestamp: 0 };
    });
  };
  deepStrictEqual(rows(b, eb), rows(a, ea), 'our rows and the baseline rows differ (keys and times aside): the comparison would not be fair');
  // one transaction moves the global stamp once, however many entities it saves
  strictEqual(a.stampMoved, 1, 'ours: the global stamp moved by');
  strictEqual(b.stampMoved, 1, 'baseline: the global stamp moved by');
}

// ── The run ──

const ratio = (a: number, b: number): number => (b > 0 ? a / b : Number.NaN);

function measurement(t: Totals): Measurement {
  const cpu = t.serverCpuMs === undefined || t.requests === 0 ? undefined : (t.serverCpuMs * 1000) / t.requests;
  return {
    requests: t.requests,
    seconds: t.seconds,
    requestsPerSecond: t.requests / t.seconds,
    ...(cpu === undefined ? {} : { cpuUsPerRequest: cpu }),
    p50Ms: t.latencies.percentile(50),
    p99Ms: t.latencies.percentile(99),
    failures: t.failures,
    rounds: t.rounds,
  };
}

function startOurs(o: WriteOptions, workers: number): Promise<ServerProcess> {
  return startServer({
    name: 'ours',
    args: ['bin/dataset-rest.mjs', '--project', o.projectDir, '--port', '0', '--workers', String(workers), '--log-level', 'warn'],
    cwd: ROOT,
    ready: /dataset-rest listening on (http:\/\/\S+)\/rest/,
    supervised: workers > 1,
  });
}

function startBaseline(o: WriteOptions, uploads: string): Promise<ServerProcess> {
  return startServer({
    name: 'baseline',
    // the headers the contract puts on every answer, our server's session cookie among them (none for the minimal one)
    args: ['--import', 'tsx', 'bench/suite/baseline-writes.ts', o.baselineDb, uploads, ...(o.minimal ? [] : ['--cookie', cookieName(MODEL.name)])],
    cwd: ROOT,
    ready: /baseline listening on (http:\/\/\S+)/,
  });
}

/** Runs the write scenarios (all, or `only`) on both servers; one comparison each. */
export async function runWriteScenarios(o: WriteOptions): Promise<Comparison[]> {
  const workers = o.workers ?? 1;
  const scenarios = (o.only ?? [...WRITE_SCENARIOS]).map((s) => {
    if (!(WRITE_SCENARIOS as readonly string[]).includes(s)) throw new Error(`unknown write scenario '${s}': ${WRITE_SCENARIOS.join(', ')}`);
    return s as WriteScenario;
  });
  if (!(o.rounds >= 1) || !(o.seconds > 0) || !(o.clients >= 1)) throw new Error('write scenarios: rounds, seconds and clients must be positive');
  const uploads = temporaryFolder('dataset-rest-baseline-uploads-');
  const out: Comparison[] = [];
  for (const scenario of scenarios) out.push(await runScenario(scenario, o, workers, uploads));
  return out;
}

async function runScenario(scenario: WriteScenario, o: WriteOptions, workers: number, uploads: string): Promise<Comparison> {
  const p = plan(scenario, o);
  const started = await Promise.allSettled([startOurs(o, workers), startBaseline(o, uploads)]);
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.all(started.map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
    throw failed.reason;
  }
  const [oursServer, baselineServer] = started.map((r) => (r as PromiseFulfilledResult<ServerProcess>).value);
  const side = (name: SideName, server: ServerProcess, path: Record<WriteScenario, string>, tree: boolean): Side => ({
    name,
    server,
    connections: Array.from({ length: o.clients }, () => new Connection(Number(new URL(server.url).port))),
    cpuMs: () => (tree ? processTreeCpuMs(server.pid) : processCpuMs(server.pid)),
    path,
    stamps: scenario === 'update' ? new Uint32Array(o.size + 1).fill(1) : undefined,
  });
  const ours = side('ours', oursServer, {
    create: '/rest/Item?$method=update',
    update: '/rest/Item?$method=update',
    batch: '/rest/Item?$method=update&$atomic=true',
    upload: '/rest/$upload?$binary=true',
  }, workers > 1);
  const baseline = { ...side('baseline', baselineServer, { create: '/create', update: '/update', batch: '/batch', upload: '/upload' }, false), minimal: o.minimal };
  const totals = { ours: newTotals(), baseline: newTotals() };
  try {
    const files: DbFiles = {
      ours: new Database(join(o.projectDir, 'data', 'data.sqlite'), { readonly: true, fileMustExist: true }),
      baseline: new Database(o.baselineDb, { readonly: true, fileMustExist: true }),
      uploads,
    };
    try {
      o.log(`${scenario}: sanity: ${await p.sanity(ours, baseline, files)}`);
    } finally {
      files.ours.close();
      files.baseline.close();
    }
    const sides = [ours, baseline];
    if (o.warmupSeconds > 0) for (const s of sides) await round(s, p.step, o.clients, o.warmupSeconds);
    for (let r = 0; r < o.rounds; r++) {
      for (const s of r % 2 === 0 ? sides : [...sides].reverse()) await round(s, p.step, o.clients, o.seconds / o.rounds, totals[s.name]);
    }
  } finally {
    for (const s of [ours, baseline]) for (const c of s.connections) c.close();
    await Promise.all([oursServer.stop(), baselineServer.stop()]);
  }
  const m = { ours: measurement(totals.ours), baseline: measurement(totals.baseline) };
  for (const name of ['ours', 'baseline'] as const) {
    const t = totals[name];
    const x = m[name];
    o.log(
      `${scenario}, ${name}: ${x.requestsPerSecond.toFixed(0)} req/s (rounds ${x.rounds.map((r) => r.toFixed(0)).join(', ')}), ` +
        `p50 ${x.p50Ms.toFixed(2)} ms, p99 ${x.p99Ms.toFixed(2)} ms, ${x.requests} requests, ${x.failures} failures, ` +
        `server CPU ${x.cpuUsPerRequest === undefined ? 'n/a' : `${x.cpuUsPerRequest.toFixed(0)} µs/req (rounds ${t.cpuRounds.map((r) => r.toFixed(0)).join(', ')}; ${(((t.serverCpuMs ?? 0) / 10) / t.seconds).toFixed(0)}% of a core)`}, ` +
        `load generator ${((t.clientCpuMs * 1000) / Math.max(1, t.requests)).toFixed(0)} µs/req (${(t.clientCpuMs / 10 / t.seconds).toFixed(0)}% of a core)`,
    );
  }
  const cpuRatio = m.ours.cpuUsPerRequest === undefined || m.baseline.cpuUsPerRequest === undefined ? undefined : ratio(m.baseline.cpuUsPerRequest, m.ours.cpuUsPerRequest);
  return {
    group: GROUPS[scenario],
    scenario,
    title: `${TITLES[scenario]}${o.minimal ? ' (minimal baseline)' : ''}`,
    size: o.size,
    engine: 'sqlite',
    workers,
    unitsPerRequest: scenario === 'batch' ? BATCH : 1,
    ours: m.ours,
    baseline: m.baseline,
    ratio: ratio(m.ours.requestsPerSecond, m.baseline.requestsPerSecond),
    ...(cpuRatio === undefined ? {} : { cpuRatio }),
  };
}
