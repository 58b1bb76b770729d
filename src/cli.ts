// The dataset-rest command: serves a project folder (by default the built-in demo) over HTTP.
// A contract other tools rely on: flag names, the ready line, exit code 2 for bad input. The
// command itself only supervises (src/supervisor.ts); the server runs in its child process.

import { DEFAULT_MAX_SESSIONS, DEFAULT_REQUESTS_PER_MINUTE, DEFAULT_LOCKS_PER_SESSION, DEFAULT_SESSION_IDLE_MINUTES, DEFAULT_SETS_PER_SESSION } from './config/limits.js';
import { DEFAULT_FUNCTION_TIMEOUT_MS, DEFAULT_MAX_SET_MEMBERS, DEFAULT_MAX_UPLOAD_BYTES, MAX_TIMER_MS, MAX_WORKERS, PG_POOL_SIZE, SHUTDOWN_GRACE_MS } from './config/limits.js';
import { fileURLToPath } from 'node:url';
import bytes from 'bytes';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { ModelError } from './model/load-model.js';
import type { DatastoreWithClasses } from './datastore/datastore.js';
import { openProject, ProjectError } from './project.js';
import { eventErrorLogger } from './datastore/events.js';
import { createLogger } from './util/log.js';
import { buildServer, LOOPBACK_HOSTS } from './server.js';
import { EXPLORER_PATH } from './explorer/routes.js';
import { availableParallelism, hostname, networkInterfaces } from 'node:os';
import { coreOf } from './datastore/datastore.js';
import { SchemaError } from './storage/schema.js';
import { StorageConfigError } from './storage/open.js';
import { watchdog } from './functions/watchdog.js';
import { INSTANCE_ENV, supervise, type ReadyMessage } from './supervisor.js';

const DEMO = fileURLToPath(new URL('../demo', import.meta.url));
/** A second stop signal within this long of the first is the same stop, not "stop now". */
const REPEAT_MS = 1_000;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('a port is a whole number from 0 to 65535 (0 picks a free one)');
  return Number(value);
}

/** A time limit: setTimeout takes at most 2^31 - 1 ms (about 24.8 days). */
function milliseconds(value: string): number {
  const n = positiveInt(value);
  if (n > MAX_TIMER_MS) throw new InvalidArgumentError(`at most ${MAX_TIMER_MS} (about 24 days)`);
  return n;
}

function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('a whole number (0 or more)');
  return Number(value);
}

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('a whole number of 1 or more');
  return Number(value);
}

/** A size: bytes, or with a unit (KB, MB, GB, TB: powers of 1024; any case). */
function size(value: string): number {
  const n = /^\s*\d+(?:\.\d+)?(?:\s*[kmgt]?b)?\s*$/i.test(value) ? bytes.parse(value) : null;
  if (n === null || !Number.isFinite(n) || n < 1) throw new InvalidArgumentError('a size in bytes, or with a unit: 500KB, 100MB, 2GB (powers of 1024)');
  return Math.floor(n);
}

/** A request reading a snapshot may need a second connection: a pool of one could never serve it. */
function poolSize(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 2) throw new InvalidArgumentError('a whole number of 2 or more (a request reading a snapshot may need a second connection)');
  return Number(value);
}

/** A comma-separated list (repeating the flag adds to it). */
function list(value: string, previous: string[] | undefined): string[] {
  const items = value.split(',').map((x) => x.trim()).filter(Boolean);
  if (items.length === 0) throw new InvalidArgumentError('a comma-separated list');
  return [...(previous ?? []), ...items];
}

/** An origin: scheme://host[:port], nothing after. */
function origins(value: string, previous: string[] | undefined): string[] {
  const items = list(value, undefined);
  for (const o of items) {
    let url: URL | undefined;
    try {
      url = new URL(o);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== o.replace(/\/$/, '')) throw new InvalidArgumentError(`'${o}' is not an origin: scheme://host[:port], e.g. https://app.example.com`);
  }
  return [...(previous ?? []), ...items];
}

/** Server processes: a whole number of 1 or more, or auto (one per core). */
function workerCount(value: string): number {
  if (value === 'auto') return Math.min(availableParallelism(), MAX_WORKERS);
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_WORKERS) throw new InvalidArgumentError(`a whole number from 1 to ${MAX_WORKERS}, or auto (one per core)`);
  return Number(value);
}

function logLevel(value: string): string {
  if (!LOG_LEVELS.includes(value)) throw new InvalidArgumentError(`one of ${LOG_LEVELS.join(', ')}`);
  return value;
}

function fail(message: string): never {
  process.stderr.write(`dataset-rest: ${message.replace(/[^\S\n]*\n\s*/g, ' ')}\n`);
  process.exit(2);
}

const program = new Command()
  .name('dataset-rest')
  .description('Serves a datastore (a project folder with model.json) through a 4D-style REST API under /rest.')
  .option('--project <dir>', 'project folder holding model.json (default: the built-in demo project)')
  .option('--db <file|url>', 'SQLite database file, created when absent (default: <project>/data/data.sqlite), or a PostgreSQL database: postgres://user:password@host:5432/name (PG* environment variables fill the parts it leaves out)')
  .option('--pool-size <n>', 'PostgreSQL: connections in the pool at most (2 or more)', poolSize, PG_POOL_SIZE)
  .option('--port <n>', 'TCP port; 0 picks a free one', port, 8080)
  .option('--host <h>', 'interface to listen on', '127.0.0.1')
  .option('--function-timeout <ms>', 'time limit of a function called over REST, in milliseconds', milliseconds, DEFAULT_FUNCTION_TIMEOUT_MS)
  .option('--max-set-members <n>', 'entity set members kept at most (all sets, in the database, shared by every instance); past it the least recently used sets go', positiveInt, DEFAULT_MAX_SET_MEMBERS)
  .option('--max-upload-size <size>', 'largest upload accepted (bytes, or 500KB, 100MB, 2GB: powers of 1024)', size, DEFAULT_MAX_UPLOAD_BYTES)
  .option('--roles <file>', "the roles.json to enforce (default: the project's roles.json, if it has one); none: no permissions at all, everything open (development only)")
  .option('--session-idle-timeout <minutes>', 'a session ends when unused for this long', positiveInt, DEFAULT_SESSION_IDLE_MINUTES)
  .option('--secure-cookies', 'mark the session cookie Secure even over plain HTTP (behind a TLS-terminating proxy)')
  .option('--allowed-hosts <names>', 'host names the server answers for, comma-separated (default: the listen address and localhost; * for any)', list)
  .option('--cors-origin <origins>', 'origins whose web pages may call the API with the session cookie, comma-separated (https://app.example.com)', origins)
  .option('--trust-proxy', 'read the client address, scheme and host from X-Forwarded-* headers (only behind a proxy that sets them)')
  .option('--max-requests-per-minute <n>', 'requests a session (or a guest\'s address) may make in a minute, per instance; 0: no limit', wholeNumber, DEFAULT_REQUESTS_PER_MINUTE)
  .option('--max-sets-per-session <n>', 'entity sets one session may hold at once', positiveInt, DEFAULT_SETS_PER_SESSION)
  .option('--max-locks-per-session <n>', 'entity locks ($lock=true) one session may hold at once', positiveInt, DEFAULT_LOCKS_PER_SESSION)
  .option('--max-sessions <n>', 'live logged-in sessions at most (guest sessions are counted apart, with the same cap)', positiveInt, DEFAULT_MAX_SESSIONS)
  .option('--no-explorer', 'do not serve the Data Explorer page at /$explorer')
  .option('--workers <n>', 'server processes sharing the port (and the database); auto: one per core', workerCount, 1)
  .option('--log-level <level>', `log level on stderr (${LOG_LEVELS.join(', ')}); requests are logged at debug`, logLevel, 'info')
  .showHelpAfterError(false)
  .exitOverride()
  .configureOutput({ writeErr: () => undefined });

try {
  program.parse();
} catch (e) {
  if (e instanceof CommanderError) {
    if (e.exitCode === 0) process.exit(0); // --help, --version
    fail(e.message.replace(/^error: /, ''));
  }
  throw e;
}
const opts = program.opts<{
  project?: string; db?: string; roles?: string; poolSize: number; port: number; host: string; logLevel: string; maxSetMembers: number; functionTimeout: number; maxUploadSize: number;
  sessionIdleTimeout: number; secureCookies?: boolean; allowedHosts?: string[]; corsOrigin?: string[]; trustProxy?: boolean; maxRequestsPerMinute: number; maxSetsPerSession: number; maxLocksPerSession: number; maxSessions: number; explorer: boolean; workers: number;
}>();

if (process.env[INSTANCE_ENV] === '1') await serve();
else supervise(process.argv[1], process.argv.slice(2), { workers: opts.workers, host: opts.host, port: opts.port });

/** Without --allowed-hosts: the loopback names, and the listen address (every interface's address and the machine's name when it listens on all). */
function defaultHosts(listen: string): string[] {
  const hosts = [...LOOPBACK_HOSTS, listen];
  if (listen === '0.0.0.0' || listen === '::') {
    hosts.push(hostname());
    for (const addresses of Object.values(networkInterfaces())) for (const a of addresses ?? []) hosts.push(a.address);
  }
  return hosts;
}

/** Without roles.json every client may read, write and call everything: said at start-up, louder when the port is open to the network. */
function warnIfOpen(ds: DatastoreWithClasses, log: ReturnType<typeof createLogger>, port: number): void {
  if (!coreOf(ds).policy.isOpen) return;
  const network = !['127.0.0.1', 'localhost', '::1'].includes(opts.host);
  const where = network ? `on ${opts.host}:${port}, open to the network` : `on ${opts.host}:${port}`;
  log.warn(`the datastore is open: no roles.json in the project, so every client that reaches ${where} may read, change and delete every exposed entity and call every function (add a roles.json: see the README, "Sessions and permissions")`);
}

/** The server itself: what the supervisor runs in its child process. */
async function serve(): Promise<void> {
  // under the supervisor: if it goes away while this instance starts, there is no one to serve for
  const supervised = process.send !== undefined;
  const orphaned = () => supervised && !process.connected;
  if (supervised) process.once('disconnect', () => process.exit(0));
  if (orphaned()) process.exit(0); // gone before the listener was there
  const log = createLogger(opts.logLevel);
  let ds: DatastoreWithClasses;
  try {
    ds = await openProject(opts.project ?? DEMO, {
      db: opts.db,
      roles: opts.roles === 'none' ? false : opts.roles,
      poolSize: opts.poolSize,
      maxSetMembers: opts.maxSetMembers,
      sessions: { idleMinutes: opts.sessionIdleTimeout, maxSessions: opts.maxSessions, maxGuestSessions: opts.maxSessions },
      // failures of events that cannot stop anything (touched, afterSave, afterDrop) go to the server's log
      onEventError: eventErrorLogger(() => log),
    });
  } catch (e) {
    if (e instanceof ModelError) fail(`${e.problems.length} problem(s) in the model: ${e.problems.join('; ')}`);
    if (e instanceof ProjectError || e instanceof SchemaError || e instanceof StorageConfigError) fail(e.message);
    // PostgreSQL refusing the schema's statements to the user the URL names (insufficient_privilege)
    if ((e as { code?: unknown }).code === '42501') fail(`--db: PostgreSQL refused to bring the schema in line: ${(e as Error).message} (the user needs the right to create and alter tables in its schema: GRANT CREATE ON SCHEMA …)`);
    fail(`cannot open the project: ${(e as Error).message}`);
  }

  const app = await buildServer(ds, {
    log,
    maxUploadBytes: opts.maxUploadSize,
    functionTimeoutMs: opts.functionTimeout,
    allowedHosts: opts.allowedHosts ?? defaultHosts(opts.host),
    corsOrigins: opts.corsOrigin,
    trustProxy: opts.trustProxy,
    secureCookies: opts.secureCookies,
    requestsPerMinute: opts.maxRequestsPerMinute,
    setsPerSession: opts.maxSetsPerSession,
    locksPerSession: opts.maxLocksPerSession,
    explorer: opts.explorer,
  });
  let address: string;
  try {
    address = await app.listen({ port: opts.port, host: opts.host });
  } catch (e) {
    await ds.close();
    fail(`cannot listen on ${opts.host}:${opts.port}: ${(e as Error).message}`);
  }
  const { port: actual } = app.server.address() as { port: number };
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  log.info({ address, project: opts.project ?? DEMO, explorer: opts.explorer ? `http://${host}:${actual}${EXPLORER_PATH}` : undefined }, 'listening');
  warnIfOpen(ds, log, actual);
  const line = `dataset-rest listening on http://${host}:${actual}/rest`;
  // (under the supervisor, it prints the line once every worker listens)
  if (!supervised) process.stdout.write(`${line}\n`);
  if (orphaned()) process.exit(0);
  if (supervised) {
    process.send?.({ type: 'ready', port: actual, line } satisfies ReadyMessage);
    // a function stuck in code that never yields ends this instance; the supervisor starts another
    watchdog.action = 'exit';
  }

  let closingSince: number | undefined;
  async function shutdown(reason: string): Promise<void> {
    if (closingSince !== undefined) {
      // Ctrl-C or a service manager signals the whole process group: the same stop arrives twice
      // at once (directly, and through the supervisor). Only a later signal means "stop now".
      if (Date.now() - closingSince < REPEAT_MS) return;
      log.warn(`${reason} again: stopping now`);
      process.exit(1);
    }
    closingSince = Date.now();
    log.info(`${reason}: finishing in-flight requests`);
    // requests in flight get as long as a function call may take, and a little more
    setTimeout(() => {
      log.warn('in-flight requests did not finish in time: stopping now');
      process.exit(1);
    }, Math.min(opts.functionTimeout + SHUTDOWN_GRACE_MS, MAX_TIMER_MS)).unref();
    await app.close(); // waits for in-flight requests
    await ds.close();
    process.exit(0);
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM received'));
  process.on('SIGINT', () => void shutdown('SIGINT received'));
  process.removeAllListeners('disconnect');
  process.on('disconnect', () => void shutdown('the supervisor is gone'));
}
