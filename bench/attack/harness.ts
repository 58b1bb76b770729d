// What the attack cases (bench/attack.ts) are made of: the server they attack (the command's own
// start path, a child process on 127.0.0.1), clients that speak HTTP from an address of their own
// (127.0.0.x: every address of 127/8 reaches the loopback, so one machine plays many clients),
// keeping their session cookie as a browser would, and the measures a case reports: the server's
// RSS sampled from /proc/<pid>/status, and probes — a client asking /health, or a read by key, one
// request after another — whose latencies show how long the event loop was held and what other
// clients waited. Each case is an AttackCase: what the probe found, the target the issue sets, and
// a run() that replays the finding and judges what it measured against the target.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alive, startServer, type ServerProcess } from '../processes.js';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = fileURLToPath(new URL('../../bin/dataset-rest.mjs', import.meta.url));
export const MB = 2 ** 20;

export type Engine = 'sqlite' | 'postgres';

/** an answer's parsed body, read loosely as a client would */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
export const round = (x: number, digits = 0) => Math.round(x * 10 ** digits) / 10 ** digits;

// ---------------------------------------------------------------------------------------------
// The server

export interface AttackServer {
  readonly engine: Engine;
  /** the database it serves (a SQLite file, or a PostgreSQL URL) */
  readonly db: string;
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  /** http://127.0.0.1:PORT/rest */
  readonly base: string;
  readonly port: number;
  readonly pid: number;
  /** its flags */
  readonly args: readonly string[];
  /** SIGTERM, then SIGKILL after `graceMs` */
  stop(graceMs?: number): Promise<void>;
  alive(): boolean;
}

/**
 * Starts `dataset-rest --db DB --port 0 --host 127.0.0.1 FLAGS` as one server process (no
 * supervisor: its pid is the server's, whose memory is read), the demo project with its
 * roles.json; resolves once it prints its URL.
 */
export async function startAttackServer(engine: Engine, db: string, flags: readonly string[], name = `server (${engine})`): Promise<AttackServer> {
  const args = ['--db', db, '--port', '0', '--host', '127.0.0.1', '--log-level', 'error', ...flags];
  const server: ServerProcess = await startServer({ name, args: [BIN, ...args], cwd: REPO, ready: /(http:\/\/127\.0\.0\.1:\d+)\/rest/, timeoutMs: 180_000 });
  const port = Number(new URL(server.url).port);
  return {
    engine, db, origin: server.url, base: `${server.url}/rest`, port, pid: server.pid, args,
    stop: (graceMs = 10_000) => server.stop(graceMs),
    alive: () => alive(server.pid),
  };
}

export { alive };

/** A process's resident memory in MB, from /proc (Linux); undefined once it is gone. */
export function rssMB(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? round(Number(m[1]) / 1024, 1) : undefined;
  } catch {
    return undefined;
  }
}

/** The server's RSS sampled every `everyMs` while a case runs: before, the peak, and after (sampled when asked). */
export class RssWatch {
  readonly beforeMB: number;
  #peak: number;
  readonly #timer: NodeJS.Timeout;
  constructor(readonly pid: number, everyMs = 50) {
    this.beforeMB = rssMB(pid) ?? 0;
    this.#peak = this.beforeMB;
    this.#timer = setInterval(() => {
      this.#peak = Math.max(this.#peak, rssMB(pid) ?? 0);
    }, everyMs);
  }

  get peakMB(): number {
    return Math.max(this.#peak, rssMB(this.pid) ?? 0);
  }

  /** Stops sampling; `settleMs` later, the RSS then. */
  async stop(settleMs = 0): Promise<{ beforeMB: number; peakMB: number; afterMB: number }> {
    const peakMB = this.peakMB;
    clearInterval(this.#timer);
    if (settleMs) await sleep(settleMs);
    return { beforeMB: this.beforeMB, peakMB, afterMB: rssMB(this.pid) ?? 0 };
  }
}

export const describeRss = (m: { beforeMB: number; peakMB: number; afterMB: number }) => `RSS ${Math.round(m.beforeMB)}→${Math.round(m.peakMB)}→${Math.round(m.afterMB)} MB`;

// ---------------------------------------------------------------------------------------------
// Clients

export interface Answer {
  /** 0: no answer (the connection failed, was closed, or the client's time ran out: `error` says which) */
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly json: Json;
  /** from the request's start to the answer's last byte */
  readonly ms: number;
  readonly bytes: number;
  readonly error?: string;
}

export interface RequestOptions {
  readonly body?: unknown;
  /** a raw body (an upload) */
  readonly raw?: Buffer;
  readonly headers?: Record<string, string>;
  readonly timeoutMs?: number;
  /** keep the text of the answer (default: at most 1 MB of it) */
  readonly keepText?: number;
}

/** The errCode of an answer's first __ERROR. */
export const errCode = (a: Answer): number | undefined => a.json?.__ERROR?.[0]?.errCode;
/** "status (errCode)" */
export const statusOf = (a: Answer): string => (a.status === 0 ? `no answer (${a.error})` : `${a.status}${errCode(a) ? ` (${errCode(a)})` : ''}`);

/**
 * A client from one address, keeping its session cookie (4DSID_…) as a browser would, over
 * connections it keeps alive (`connections` at most).
 */
export class Client {
  cookie: string | undefined;
  readonly agent: Agent;
  constructor(readonly name: string, readonly base: string, readonly address = '127.0.0.1', connections = 8) {
    this.agent = new Agent({ keepAlive: true, maxSockets: connections, localAddress: address });
  }

  /**
   * One request; resolves to its answer (status 0 when none came). A connection kept alive that
   * the server closed just as it was reused (ECONNRESET before any answer: the request never
   * reached it) is tried once more on a new one.
   */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<Answer> {
    const first = await this.#send(method, path, options);
    return first.retry ? this.#send(method, path, options) : first;
  }

  #send(method: string, path: string, options: RequestOptions): Promise<Answer & { retry?: boolean }> {
    const url = new URL(`${this.base}${path}`);
    const headers: Record<string, string> = { ...options.headers };
    if (this.cookie && headers.cookie === undefined) headers.cookie = this.cookie;
    let payload: Buffer | undefined;
    if (options.raw) {
      payload = options.raw;
      headers['content-type'] ??= 'application/octet-stream';
    } else if (options.body !== undefined) {
      payload = Buffer.from(JSON.stringify(options.body));
      headers['content-type'] ??= 'application/json';
    }
    if (payload) headers['content-length'] = String(payload.length);
    const started = performance.now();
    const keep = options.keepText ?? MB;
    return new Promise((resolve) => {
      let settled = false;
      const done = (a: Omit<Answer, 'ms'> & { retry?: boolean }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...a, ms: performance.now() - started });
      };
      const req = httpRequest(url, { method, headers, agent: this.agent }, (res) => {
        const set = (res.headers['set-cookie'] ?? []).find((c) => c.startsWith('4DSID_'));
        if (set) this.cookie = set.split(';')[0];
        const chunks: Buffer[] = [];
        let kept = 0;
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (kept < keep) {
            chunks.push(chunk);
            kept += chunk.length;
          }
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: Json;
          try {
            json = bytes === kept ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          done({ status: res.statusCode ?? 0, headers: res.headers, text, json, bytes });
        });
        res.on('error', (e) => done({ status: 0, headers: res.headers, text: '', json: undefined, bytes, error: e.message }));
      });
      const timer = setTimeout(() => {
        req.destroy(new Error(`no answer within ${options.timeoutMs ?? 120_000} ms`));
      }, options.timeoutMs ?? 120_000);
      req.on('error', (e: NodeJS.ErrnoException) => done({ status: 0, headers: {}, text: '', json: undefined, bytes: 0, error: e.message, retry: req.reusedSocket && e.code === 'ECONNRESET' }));
      req.end(payload);
    });
  }

  get(path: string, options?: RequestOptions): Promise<Answer> {
    return this.request('GET', path, options);
  }

  post(path: string, body?: unknown, options?: RequestOptions): Promise<Answer> {
    return this.request('POST', path, { ...options, body });
  }

  /** $directory/login as `user`; throws when refused (a case's setup failed). */
  async login(user: string, password: string): Promise<void> {
    const a = await this.post('/$directory/login', [user, password, 7200]);
    if (a.status !== 200) throw new Error(`${user} cannot log in: ${statusOf(a)} ${a.text.slice(0, 200)}`);
  }

  close(): void {
    this.agent.destroy();
  }
}

/** A raw TCP connection to the server from `address` (for what an HTTP client would not do: stop reading, trickle bytes). */
export function rawSocket(port: number, address = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress: address });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/**
 * Whether the server still holds this connection, as the kernel sees the server's end of it
 * (/proc/net/tcp, both ends are on this machine: ESTABLISHED). A socket this side does not read
 * (paused) never sees the server's reset or FIN — Node reads nothing from it — and a FIN queued
 * behind bytes the client will not take never arrives; the server's end tells: once the server
 * has let the connection go (reset, or closed with bytes left to the kernel) it is ESTABLISHED no
 * more.
 */
export function heldByServer(socket: Socket): boolean {
  const hex = (address: string | undefined, port: number | undefined) => {
    const [a, b, c, d] = (address ?? '').split('.').map(Number);
    // (little-endian, as the kernel prints an IPv4 address)
    return `${[d, c, b, a].map((x) => x.toString(16).padStart(2, '0')).join('')}:${(port ?? 0).toString(16).padStart(4, '0')}`.toUpperCase();
  };
  if (socket.destroyed || !socket.localPort) return false;
  const server = hex(socket.remoteAddress, socket.remotePort);
  const client = hex(socket.localAddress, socket.localPort);
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, local, remote, state] = line.trim().split(/\s+/);
    if (local === server && remote === client) return state === '01';
  }
  return false;
}

/** Resolves when the socket is closed by either side; `ms` is how long that took from now. */
export function closed(socket: Socket): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    if (socket.destroyed) resolve(0);
    socket.once('close', () => resolve(performance.now() - started));
  });
}

// ---------------------------------------------------------------------------------------------
// Probes: another client's view of the server while a case attacks it

export interface LatencyStats {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** answers other than 2xx (and requests with no answer) */
  readonly failures: number;
  /** the first few failures */
  readonly failed: readonly string[];
}

export function stats(ms: readonly number[], failed: readonly string[] = []): LatencyStats {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : 0);
  return { count: sorted.length, p50: round(at(0.5)), p99: round(at(0.99)), max: round(sorted.at(-1) ?? 0), failures: failed.length, failed: failed.slice(0, 5) };
}

export const describeLatency = (what: string, s: LatencyStats) => `${what} p99 ${seconds(s.p99)} (max ${seconds(s.max)}, ${s.count} asked${s.failures ? `, ${s.failures} failed: ${s.failed.join('; ')}` : ''})`;

/**
 * A client asking `path` one request after another (`gapMs` apart) from its own address, while
 * a case runs: with one request in flight at a time, its latency is how long the server kept it
 * waiting — for /health, how long the event loop was held.
 */
export class Probe {
  readonly #client: Client;
  readonly #ms: number[] = [];
  readonly #failed: string[] = [];
  #running = true;
  readonly #done: Promise<void>;
  constructor(base: string, readonly path: string, address: string, gapMs = 25, readonly accept: (a: Answer) => boolean = (a) => a.status >= 200 && a.status < 300) {
    const client = new Client(`probe ${path}`, base, address, 1);
    this.#client = client;
    this.#done = (async () => {
      while (this.#running) {
        const a = await client.get(path, { timeoutMs: 60_000 });
        // (the last one may be cut by stop(): only whole answers count)
        if (!this.#running && a.status === 0) break;
        this.#ms.push(a.ms);
        if (!accept(a)) this.#failed.push(statusOf(a));
        await sleep(gapMs);
      }
    })();
  }

  async stop(): Promise<LatencyStats> {
    this.#running = false;
    await this.#done;
    this.#client.close();
    return stats(this.#ms, this.#failed);
  }
}

// ---------------------------------------------------------------------------------------------
// Cases

/** What the cases know of the server they attack: the limits it was started with. */
export interface Limits {
  readonly queryTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly maxBatchEntities: number;
  readonly connectionsPerAddress: number;
  readonly maxConnections: number;
  readonly pendingUploads: number;
  readonly pendingUploadBytes: number;
  readonly maxTextLength: number;
  readonly maxAnswerBytes: number;
  readonly maxSetMembers: number;
  readonly maxSessions: number;
  readonly setsPerSession: number;
  /** image conversions waiting behind the one running */
  readonly queuedConversions: number;
  readonly functionTimeoutMs: number;
  /** the send timeout (a client that stops reading), when the server has the option */
  readonly sendTimeoutMs?: number;
}

export interface CaseContext {
  readonly engine: Engine;
  /** the scaled-down mode of `npm test` */
  readonly short: boolean;
  readonly server: AttackServer;
  readonly limits: Limits;
  /** the demo's users, logged in (each from an address of its own) */
  readonly alice: Client;
  readonly bob: Client;
  readonly admin: Client;
  /** a guest of this case, from `address` (default: one of its own), its cookie kept */
  client(name: string, address?: string): Client;
  /** an address no other client of this run uses: 127.0.x.y */
  address(): string;
  /** a temporary folder of this run (removed at the end) */
  readonly folder: string;
  /** progress lines */
  log(line: string): void;
  /** a second server (more flags; on the same database unless `db` names another), stopped when the case ends */
  startServer(flags: readonly string[], db?: string): Promise<AttackServer>;
}

export interface CaseResult {
  /** every check held (time bounds aside) */
  readonly held: boolean;
  /** how many of its time bounds were missed (Verdict.timed) */
  readonly timeBoundsMissed?: number;
  /** it could not run here (why): neither held nor failed */
  readonly skipped?: string;
  /** what was measured, in a line */
  readonly measured: string;
  /** numbers for the JSON report */
  readonly data?: Record<string, unknown>;
}

export interface AttackCase {
  /** the name --only takes */
  readonly id: string;
  /** the issue whose probe found it */
  readonly issue: 19 | 34;
  /** the finding, in a few words */
  readonly finding: string;
  /** what must hold, from the issue */
  readonly target: string;
  /** where it applies (default: both engines) */
  readonly engines?: readonly Engine[];
  /**
   * It waits for the server's own timers (a sweep every minute): started before the other cases,
   * it runs beside them, mostly waiting, and is reported at the end.
   */
  readonly background?: boolean;
  /** It stops the attacked server on purpose (it runs last): its end is not a crash. */
  readonly stopsServer?: boolean;
  run(ctx: CaseContext): Promise<CaseResult>;
}

/** A case that cannot run here (root is needed, an engine has nothing to attack). */
export const skipped = (why: string): CaseResult => ({ held: true, skipped: why, measured: `not run: ${why}` });

/** Checks gathered by a case: each is a condition and what it says when it fails. */
/**
 * What a case checked. `check`: what must hold; `timed`: a time bound (how long others waited,
 * how long an answer took), which a busy machine can miss with the server at fault in nothing.
 * A missed time bound fails the case unless the run judges no times (the short mode in `npm test`,
 * without DATASET_REST_TIMED_BOUNDS=1: speed is the benches' and the full attack's to judge); it
 * is printed either way.
 */
export class Verdict {
  readonly #failed: string[] = [];
  readonly #missed: string[] = [];
  check(ok: boolean, what: string): boolean {
    if (!ok) this.#failed.push(what);
    return ok;
  }

  timed(ok: boolean, what: string): boolean {
    if (!ok) this.#missed.push(what);
    return ok;
  }

  get held(): boolean {
    return this.#failed.length === 0 && this.#missed.length === 0;
  }

  /** The result: `measured`, and what failed or missed its time bound when something did. */
  result(measured: string, data?: Record<string, unknown>): CaseResult {
    const failed = this.#failed.length > 0 ? ` — FAILED: ${this.#failed.join('; ')}` : '';
    const missed = this.#missed.length > 0 ? ` — TIME BOUND MISSED: ${this.#missed.join('; ')}` : '';
    return { held: this.#failed.length === 0, timeBoundsMissed: this.#missed.length, measured: `${measured}${failed}${missed}`, data };
  }
}

/** Runs `fn` while /health (and, if given, `readPath`) are probed from addresses of their own; resolves to fn's result and the probes' latencies. */
export async function underProbes<T>(ctx: CaseContext, fn: () => Promise<T>, readPath?: string): Promise<{ value: T; health: LatencyStats; read?: LatencyStats }> {
  const health = new Probe(ctx.server.origin, '/health', ctx.address());
  const read = readPath ? new Probe(ctx.server.base, readPath, ctx.address()) : undefined;
  let value: T;
  try {
    value = await fn();
  } catch (e) {
    // (a failed case leaves no probe running)
    await health.stop();
    await read?.stop();
    throw e;
  }
  return { value, health: await health.stop(), read: await read?.stop() };
}

/** `entities` created as `who`, `batch` a request; resolves to their keys (the answers' __KEY). */
export async function createMany(who: Client, dataClass: string, entities: readonly Record<string, unknown>[], batch: number): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < entities.length; i += batch) {
    const a = await who.post(`/${dataClass}?$method=update`, entities.slice(i, i + batch), { timeoutMs: 600_000, keepText: 64 * MB });
    if (a.status !== 200) throw new Error(`creating ${dataClass} entities: ${statusOf(a)} ${a.text.slice(0, 300)}`);
    for (const e of a.json.__ENTITIES ?? [a.json]) keys.push(String(e.__KEY));
  }
  return keys;
}

let imports = 0;

/**
 * Many new entities for a case's setup (not its attack), named by the case so that a filter finds
 * them: on SQLite through the server in batches of 1,000 (each well within the request's time
 * budget); on PostgreSQL, where a REST save costs a round trip per entity (minutes for tens of
 * thousands on a loaded machine), through `dataset-rest import` run in this process — the
 * command's bulk insert, as a second instance on the same database (relations as `{"__KEY": k}`,
 * no events).
 */
export async function bulkCreate(ctx: CaseContext, dataClass: string, rows: readonly Record<string, unknown>[]): Promise<void> {
  if (ctx.engine === 'sqlite' || rows.length <= 200) {
    await createMany(ctx.alice, dataClass, rows, 1000);
    return;
  }
  const file = join(ctx.folder, `import-${process.pid}-${imports++}.ndjson`);
  writeFileSync(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  // the command's lines (progress, its summary) kept, to explain a failure
  let said = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      said = (said + String(chunk)).slice(-2000);
      done();
    },
  });
  const { io } = await import('../../src/commands/common.js');
  const { main } = await import('../../src/commands/import.js');
  const was = { ...io };
  io.stdout = sink;
  io.stderr = sink;
  try {
    const code = await main(['--db', ctx.server.db, '--no-events', dataClass, file]);
    if (code !== 0) throw new Error(`dataset-rest import ${dataClass} ended with ${code}: ${said}`);
  } finally {
    Object.assign(io, was);
    rmSync(file, { force: true });
  }
}

/**
 * Deletes the entities a filter selects, as `who` (a case's cleanup); a delete past the request's
 * time budget (504: nothing deleted) is done again a slice of keys at a time.
 */
export async function deleteWhere(who: Client, dataClass: string, filter: string): Promise<void> {
  const where = `$filter=${encodeURIComponent(`"${filter}"`)}`;
  const a = await who.post(`/${dataClass}?${where}&$method=delete`, undefined, { timeoutMs: 600_000 });
  if (a.status === 200) return;
  if (a.status !== 504 && a.status !== 503) throw new Error(`deleting ${dataClass} where ${filter}: ${statusOf(a)} ${a.text.slice(0, 300)}`);
  for (;;) {
    const page = await who.get(`/${dataClass}?${where}&$attributes=ID&$top=500`, { timeoutMs: 120_000 });
    const keys = (page.json?.__ENTITIES ?? []).map((e: Json) => e.__KEY);
    if (page.status !== 200) throw new Error(`reading ${dataClass} where ${filter}: ${statusOf(page)}`);
    if (keys.length === 0) return;
    const slice = await who.post(`/${dataClass}?$filter=${encodeURIComponent('"ID in :1"')}&$params=${encodeURIComponent(JSON.stringify([keys]))}&$method=delete`, undefined, { timeoutMs: 120_000 });
    if (slice.status !== 200) throw new Error(`deleting a slice of ${dataClass} where ${filter}: ${statusOf(slice)} ${slice.text.slice(0, 300)}`);
  }
}

/** The id of an entity set from its answer's __ENTITYSET URI. */
export const setId = (a: Answer): string | undefined => (typeof a.json?.__ENTITYSET === 'string' ? a.json.__ENTITYSET.split('/').at(-1) : undefined);
