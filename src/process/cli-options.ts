// The dataset-rest command's options: its flags, each with the parser that checks its value, and
// how the same settings come from DATASET_REST_* variables and a configuration file
// (src/process/cli-settings.ts); then the one settings object they mean (commandSettings: the
// sections of config/settings.ts, passed down as they are). A contract other tools rely on: the
// flag names. src/process/cli.ts runs it.

import { DEFAULT_CONVERSIONS_PER_CLIENT, DEFAULT_QUEUED_CONVERSIONS, DEFAULT_MAX_TEXT_LENGTH, DEFAULT_MAX_GUESTS_PER_ADDRESS, DEFAULT_MAX_SESSIONS, DEFAULT_REQUESTS_PER_MINUTE, DEFAULT_LOCKS_PER_SESSION, DEFAULT_SESSION_IDLE_MINUTES, DEFAULT_SETS_PER_SESSION } from '../config/limits.js';
import { DEFAULT_FUNCTION_TIMEOUT_MS, DEFAULT_QUERY_TIMEOUT_MS, DEFAULT_MAX_SET_MEMBERS, DEFAULT_MAX_SET_MEMORY, DEFAULT_MAX_UPLOAD_BYTES, DEFAULT_PENDING_UPLOAD_BYTES_PER_CLIENT, DEFAULT_PENDING_UPLOADS_PER_CLIENT, DEFAULT_BODY_TIMEOUT_MS, DEFAULT_CONNECTIONS_PER_ADDRESS, DEFAULT_MAX_CONNECTIONS, MAX_BODY_SIZE, MAX_INLINED_ENTITIES, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_ANSWERS_IN_FLIGHT, DEFAULT_SEND_TIMEOUT_MS, DEFAULT_MAX_BATCH_ENTITIES, MAX_PAGE_SIZE, MAX_TIMER_MS, MAX_WORKERS, PG_POOL_SIZE } from '../config/limits.js';
import { readFileSync } from 'node:fs';
import { availableParallelism, hostname, networkInterfaces } from 'node:os';
import { fileURLToPath } from 'node:url';
import bytes from 'bytes';
import { Command, InvalidArgumentError } from 'commander';
import { LOOPBACK_HOSTS, serverSettings, type Settings } from '../config/settings.js';
import { CONFIG_FILE, type SettingsSpec } from './cli-settings.js';
import { DEFAULT_REPLICA_MAX_LAG_MS } from '../storage/replicas/limits.js';

/** The project served without --project. */
export const DEMO = fileURLToPath(new URL('../../demo', import.meta.url));
/** The package's version, from its package.json (beside src/ in the checkout, beside dist/ in the package). */
export const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The options as the command reads them, once resolved. */
export interface CommandOptions {
  project?: string; db?: string; dbReplica?: string[]; dbReplicaMaxLag: number; roles?: string; poolSize: number; port: number; host: string; logLevel: string; maxSetMembers: number; maxSetMemory: number; functionTimeout: number; queryTimeout: number; maxUploadSize: number; maxBodySize: number; maxPageSize: number; maxTextLength: number; maxInlinedEntities: number; maxAnswerSize: number; maxAnswersInFlight: number; sendTimeout: number; maxBatchEntities: number; maxPendingUploads: number; maxPendingUploadSize: number; bodyTimeout: number; maxConnections: number; maxConnectionsPerAddress?: number;
  sessionIdleTimeout: number; secureCookies?: boolean; allowedHosts?: string[]; corsOrigin?: string[]; trustProxy?: boolean; exposeErrors?: boolean; maxRequestsPerMinute: number; maxSetsPerSession: number;
  maxLocksPerSession: number; maxQueuedConversions: number; maxConversionsPerClient: number; maxSessions: number; maxGuestsPerAddress: number; explorer: boolean; workers: number; metrics?: boolean; config?: string; printConfig?: boolean;
}

/** How the options are also set by variables and the configuration file. */
export const SETTINGS: SettingsSpec = {
  actions: ['printConfig', 'version'],
  lists: ['allowedHosts', 'corsOrigin', 'dbReplica'],
  paths: ['project', 'db', 'roles'],
  configKey: 'config',
  projectKey: 'project',
  defaultProject: DEMO,
  unset: {
    project: 'the built-in demo',
    db: '<project>/data/data.sqlite',
    dbReplica: 'none: every read on the primary',
    roles: "the project's roles.json, if it has one",
    allowedHosts: 'the listen address and localhost',
    corsOrigin: 'none',
    config: `<project>/${CONFIG_FILE}`,
  },
};

const HELP_AFTER = `
Every flag can also be set by an environment variable, DATASET_REST_ and the flag's name in upper
snake case (DATASET_REST_PORT=9000, DATASET_REST_MAX_UPLOAD_SIZE=1GB; a flag without a value takes
true or false: DATASET_REST_TRUST_PROXY=true, DATASET_REST_EXPLORER=false for --no-explorer), and
by a key in ${CONFIG_FILE} in the project folder (JSON with comments: { "port": 9000,
"maxUploadSize": "1GB", "explorer": false }), or in the file --config names. Flags win, then the
environment, then the file, then the defaults. --print-config shows what that gives.

Commands on a project's database, each with its own --help:
  dataset-rest migrate --project DIR [--db …] [--dry-run]   brings the database in line with model.json
  dataset-rest import  [--project DIR] [--db …] DATACLASS FILE   CSV, JSON array or NDJSON in
  dataset-rest export  [--project DIR] [--db …] DATACLASS   CSV, NDJSON or a JSON array out
`;

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

/** A time limit, or 0 for none. */
/** A time in milliseconds, or 0: none. */
function millisecondsOrNone(value: string): number {
  return value === '0' ? 0 : milliseconds(value);
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

/** A size, or 0 for no limit. */
function sizeOrNone(value: string): number {
  return value.trim() === '0' ? 0 : size(value);
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

/** A new command-line program (parse it, then resolveSettings()). */
export function commandLine(): Command {
  return new Command()
    .name('dataset-rest')
    .description('Serves a datastore (a project folder with model.json) through a 4D-style REST API under /rest.')
    .version(VERSION, '-V, --version', 'print the version and exit')
    .option('--project <dir>', 'project folder holding model.json (default: the built-in demo project)')
    .option('--db <file|url>', 'SQLite database file, created when absent (default: <project>/data/data.sqlite), or a PostgreSQL database: postgres://user:password@host:5432/name (PG* environment variables fill the parts it leaves out)')
    .option('--db-replica <url>', 'PostgreSQL: a read replica (a hot standby of --db), repeated or comma-separated for more: reads outside a transaction go to one that has replayed what the primary had written when the read began, else to the primary (docs/scaling.md)', list)
    .option('--db-replica-max-lag <ms>', 'PostgreSQL: a replica further behind the primary than this, in milliseconds, is left out until it catches up', milliseconds, DEFAULT_REPLICA_MAX_LAG_MS)
    .option('--pool-size <n>', 'PostgreSQL: connections in the pool at most (2 or more)', poolSize, PG_POOL_SIZE)
    .option('--port <n>', 'TCP port; 0 picks a free one', port, 8080)
    .option('--host <h>', 'interface to listen on', '127.0.0.1')
    .option('--function-timeout <ms>', 'time limit of a function called over REST, in milliseconds', milliseconds, DEFAULT_FUNCTION_TIMEOUT_MS)
    .option('--query-timeout <ms>', 'the time the statements of one request may take together, in milliseconds: past it the one running is stopped (504); 0: no limit', millisecondsOrNone, DEFAULT_QUERY_TIMEOUT_MS)
    .option('--max-set-members <n>', 'entity set members kept at most (all sets, in the database, shared by every instance; each set counts 16 more, empty ones too); past it the least recently used sets of the session holding the most go', positiveInt, DEFAULT_MAX_SET_MEMBERS)
    .option('--max-set-memory <size>', 'memory this process keeps entity set members in, packed (bytes, or 64MB, 1GB: powers of 1024): sets read from the database kept at hand, or every set of an in-process store (past it the least recently used go; one set larger: 400)', size, DEFAULT_MAX_SET_MEMORY)
    .option('--max-upload-size <size>', 'largest upload accepted (bytes, or 500KB, 100MB, 2GB: powers of 1024)', size, DEFAULT_MAX_UPLOAD_BYTES)
    .option('--max-pending-uploads <n>', 'uploads one client (a session, a guest\'s address) may have waiting for an entity at once', positiveInt, DEFAULT_PENDING_UPLOADS_PER_CLIENT)
    .option('--max-pending-upload-size <size>', 'bytes of the uploads one client may have waiting for an entity at once', size, DEFAULT_PENDING_UPLOAD_BYTES_PER_CLIENT)
    .option('--max-body-size <size>', 'largest JSON request body accepted (bytes, or 500KB, 10MB: powers of 1024); uploads have --max-upload-size', size, MAX_BODY_SIZE)
    .option('--body-timeout <ms>', 'a JSON request body must arrive in full within this long, in milliseconds (an upload only has to keep coming)', milliseconds, DEFAULT_BODY_TIMEOUT_MS)
    .option('--max-connections <n>', 'connections open at once at most; 0: no limit', wholeNumber, DEFAULT_MAX_CONNECTIONS)
    .option('--max-connections-per-address <n>', `connections open at once from one client address; 0: no limit (the default with --trust-proxy, else ${DEFAULT_CONNECTIONS_PER_ADDRESS})`, wholeNumber)
    .option('--max-batch-entities <n>', 'entities one $method=update or validate may carry (an array of entities); past it 400, nothing written', positiveInt, DEFAULT_MAX_BATCH_ENTITIES)
    .option('--max-answer-size <size>', 'bytes of values one answer may hold (bytes, or 64MB, 1GB: powers of 1024), measured before a page or level is read (counted as it is read for pages of 100 entities or fewer), aliases and calculated values included; past it 400 (read less, or export: $format=ndjson or csv)', size, DEFAULT_MAX_ANSWER_BYTES)
    .option('--max-answers-in-flight <size>', 'bytes of answers this process holds at once, measured and not yet taken by the clients\' sockets (bytes, or 256MB, 1GB: powers of 1024; 0: no limit); past it a read is refused, 503 with Retry-After', sizeOrNone, DEFAULT_MAX_ANSWERS_IN_FLIGHT)
    .option('--send-timeout <ms>', 'a connection whose client takes nothing of its answer for this long, in milliseconds, is reset (a client reading steadily at 50 KB/s or more never is, with Linux\'s default buffers); 0: none', millisecondsOrNone, DEFAULT_SEND_TIMEOUT_MS)
    .option('--max-inlined-entities <n>', 'related entities one answer may inline through $attributes or $expand, all levels together', positiveInt, MAX_INLINED_ENTITIES)
    .option('--max-page-size <n>', 'most entities one page may ask for ($top); an export ($format=csv or ndjson) sends any number', positiveInt, MAX_PAGE_SIZE)
    .option('--max-text-length <n>', 'longest text a string attribute takes, in characters (a longer one: 400); longer documents belong in a blob', positiveInt, DEFAULT_MAX_TEXT_LENGTH)
    .option('--roles <file>', "the roles.json to enforce (default: the project's roles.json, if it has one); none: no permissions at all, everything open (development only)")
    .option('--session-idle-timeout <minutes>', 'a session ends when unused for this long', positiveInt, DEFAULT_SESSION_IDLE_MINUTES)
    .option('--secure-cookies', 'mark the session cookie Secure even over plain HTTP (behind a TLS-terminating proxy)')
    .option('--allowed-hosts <names>', 'host names the server answers for, comma-separated (default: the listen address and localhost; * for any)', list)
    .option('--cors-origin <origins>', 'origins whose web pages may call the API with the session cookie, comma-separated (https://app.example.com)', origins)
    .option('--trust-proxy', 'read the client address, scheme and host from X-Forwarded-* headers (only behind a proxy that sets them)')
    .option('--expose-errors', "answer a function's unexpected exception with its message and stack (development only: they may hold what clients must not see)")
    .option('--max-requests-per-minute <n>', 'requests a session (or a guest\'s address) may make in a minute, per instance; 0: no limit', wholeNumber, DEFAULT_REQUESTS_PER_MINUTE)
    .option('--max-sets-per-session <n>', 'entity sets one session may hold at once', positiveInt, DEFAULT_SETS_PER_SESSION)
    .option('--max-locks-per-session <n>', 'entity locks ($lock=true) one session may hold at once', positiveInt, DEFAULT_LOCKS_PER_SESSION)
    .option('--max-queued-conversions <n>', 'image conversions ($imageformat) that may wait behind the one running, everyone\'s together; past them 503; 0: none waits', wholeNumber, DEFAULT_QUEUED_CONVERSIONS)
    .option('--max-conversions-per-client <n>', 'image conversions one client (a user, all its sessions together, or a guest\'s address) may have running or waiting; past them 429', positiveInt, DEFAULT_CONVERSIONS_PER_CLIENT)
    .option('--max-sessions <n>', 'live logged-in sessions at most (guest sessions are counted apart, with the same cap: past it the least recently used guest gives way)', positiveInt, DEFAULT_MAX_SESSIONS)
    .option('--max-guests-per-address <n>', 'stored guest sessions from one client address at most (past it that address\'s least recently used gives way); 0: no cap of its own', wholeNumber, DEFAULT_MAX_GUESTS_PER_ADDRESS)
    .option('--no-explorer', 'do not serve the Data Explorer page at /$explorer')
    .option('--workers <n>', 'server processes sharing the port (and the database); auto: one per core', workerCount, 1)
    .option('--log-level <level>', `log level on stderr (${LOG_LEVELS.join(', ')}); requests are logged at debug`, logLevel, 'info')
    .option('--metrics', 'serve Prometheus metrics at /metrics')
    .option('--config <file>', `the configuration file to read (JSON with comments), instead of the project folder's ${CONFIG_FILE}`)
    .option('--print-config', 'print the resolved configuration (each setting, its value and where it came from; secrets masked) and exit')
    .addHelpText('after', HELP_AFTER)
    .showHelpAfterError(false)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined });
}

/**
 * The settings the resolved options mean, in the sections their readers take as they are
 * (config/settings.ts). Built once, here: the flags' defaults are already in the options
 * (commander's, from commandLine() above), so only what a flag leaves unset is decided here.
 */
export function commandSettings(o: CommandOptions): Settings {
  // the server's sections through serverSettings, whose defaults (the one place they are) fill
  // what neither a flag's default nor the command gives
  const server = serverSettings({
    allowedHosts: o.allowedHosts ?? defaultHosts(o.host), corsOrigins: o.corsOrigin, trustProxy: o.trustProxy, secureCookies: o.secureCookies,
    explorer: o.explorer, metrics: o.metrics, maxBodyBytes: o.maxBodySize, bodyTimeoutMs: o.bodyTimeout,
    maxConnections: o.maxConnections, maxConnectionsPerAddress: o.maxConnectionsPerAddress,
    maxUploadBytes: o.maxUploadSize, maxPageSize: o.maxPageSize, maxInlinedEntities: o.maxInlinedEntities, maxAnswerBytes: o.maxAnswerSize,
    maxAnswersInFlight: o.maxAnswersInFlight, sendTimeoutMs: o.sendTimeout, maxBatchEntities: o.maxBatchEntities,
    pendingUploads: { count: o.maxPendingUploads, bytes: o.maxPendingUploadSize }, requestsPerMinute: o.maxRequestsPerMinute,
    setsPerSession: o.maxSetsPerSession, locksPerSession: o.maxLocksPerSession, conversions: { queued: o.maxQueuedConversions, perClient: o.maxConversionsPerClient },
    functionTimeoutMs: o.functionTimeout, exposeErrors: o.exposeErrors,
  });
  return {
    ...server,
    project: { dir: o.project ?? DEMO, db: o.db, roles: o.roles === 'none' ? false : o.roles, poolSize: o.poolSize, queryTimeoutMs: o.queryTimeout, ...(o.dbReplica?.length ? { replicas: { urls: o.dbReplica, maxLagMs: o.dbReplicaMaxLag } } : {}) },
    datastore: {
      maxSetMembers: o.maxSetMembers, maxSetMemory: o.maxSetMemory, maxTextLength: o.maxTextLength,
      // (guests are counted apart, with the same cap)
      sessions: { idleMinutes: o.sessionIdleTimeout, maxSessions: o.maxSessions, maxGuestSessions: o.maxSessions, maxGuestsPerAddress: o.maxGuestsPerAddress },
    },
    listen: { host: o.host, port: o.port },
    process: { workers: o.workers, logLevel: o.logLevel },
  };
}

/** Without --allowed-hosts: the loopback names, and the listen address (every interface's address and the machine's name when it listens on all). */
function defaultHosts(listen: string): string[] {
  const hosts = [...LOOPBACK_HOSTS, listen];
  if (listen === '0.0.0.0' || listen === '::') {
    hosts.push(hostname());
    for (const addresses of Object.values(networkInterfaces())) for (const a of addresses ?? []) hosts.push(a.address);
  }
  return hosts;
}
