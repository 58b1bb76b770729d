// The settings of a server, in sections by who reads them, built once — by the command from its
// flags, DATASET_REST_* variables and configuration file (process/cli-options.ts, commandSettings),
// or by buildServer from an embedder's options (serverSettings() below) — with every default
// applied there, and then passed down as they are: the HTTP server reads `http`, the REST
// services `limits` and `functions`, openProject `project` and `datastore`. Nothing below
// applies a default again.

import { DEFAULT_BODY_TIMEOUT_MS, DEFAULT_CONNECTIONS_PER_ADDRESS, DEFAULT_CONVERSIONS_PER_CLIENT, DEFAULT_FUNCTION_TIMEOUT_MS, DEFAULT_LOCKS_PER_SESSION, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_ANSWERS_IN_FLIGHT, DEFAULT_MAX_BATCH_ENTITIES, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_UPLOAD_BYTES, DEFAULT_PENDING_UPLOAD_BYTES_PER_CLIENT, DEFAULT_PENDING_UPLOADS_PER_CLIENT, DEFAULT_QUEUED_CONVERSIONS, DEFAULT_REQUESTS_PER_MINUTE, DEFAULT_SEND_TIMEOUT_MS, DEFAULT_SETS_PER_SESSION, MAX_BODY_SIZE, MAX_INLINED_ENTITIES, MAX_PAGE_SIZE, UPLOAD_PROGRESS, WEBHOOK_LEASE_MS, WEBHOOK_LEASE_RENEW_MS, WEBHOOK_RETRY_FIRST_MS, WEBHOOK_RETRY_LAST_MS, WEBHOOK_TIMEOUT_MS } from './limits.js';

/** The HTTP server's own (Fastify, the guards, the plugins around the routes). */
export interface HttpSettings {
  /** host names the server answers for; '*': any */
  readonly allowedHosts: readonly string[];
  /** origins whose web pages may call the API with credentials (CORS); none: no CORS */
  readonly corsOrigins: readonly string[];
  /** read the client's address, scheme and host from X-Forwarded-* (behind a proxy only) */
  readonly trustProxy: boolean;
  /** the session cookie is Secure even over plain HTTP (a TLS-terminating proxy in front) */
  readonly secureCookies: boolean;
  /** serve the Data Explorer at /$explorer */
  readonly explorer: boolean;
  /** serve Prometheus metrics at /metrics */
  readonly metrics: boolean;
  /** the largest request body (JSON) accepted, in bytes (uploads have limits.maxUploadBytes) */
  readonly maxBodyBytes: number;
  /** connections open at once, in all and from one address (0: no limit); a JSON body's time to arrive; an upload's least progress (http/slow-clients.ts) */
  readonly maxConnections: number;
  readonly maxConnectionsPerAddress: number;
  readonly bodyTimeoutMs: number;
  readonly uploadProgress: { readonly windowMs: number; readonly minBytes: number };
}

/** What one request, one client or this process may cost (the REST services). */
export interface LimitSettings {
  /** the largest upload accepted, in bytes */
  readonly maxUploadBytes: number;
  /** the most entities one page may ask for with $top (an export has no page) */
  readonly maxPageSize: number;
  /** the most related entities one answer may inline through $attributes / $expand, all levels together */
  readonly maxInlinedEntities: number;
  /** the most bytes of values one answer may hold, measured before a big read */
  readonly maxAnswerBytes: number;
  /** the answer bytes this process holds in flight at most, measured and not yet taken by the kernel (0: no limit) */
  readonly maxAnswersInFlight: number;
  /** a socket with answer bytes waiting whose kernel takes none of them this long, in ms, is reset; a connection whose followed answer the kernel took whole waits this long at most for its next request (0: no timeout) */
  readonly sendTimeoutMs: number;
  /** the most entities one $method=update or validate may carry */
  readonly maxBatchEntities: number;
  /** per client (a session, a guest's address): uploads waiting for an entity at once, and their bytes */
  readonly pendingUploads: { readonly count: number; readonly bytes: number };
  /** requests a minute per session (per address for a guest), per instance (0: no limit) */
  readonly requestsPerMinute: number;
  /** entity sets one session may hold at once */
  readonly setsPerSession: number;
  /** entity locks one session may hold at once */
  readonly locksPerSession: number;
  /** image conversions ($imageformat) waiting, everyone's, and running or waiting, one client's */
  readonly conversions: { readonly queued: number; readonly perClient: number };
  /** the webhooks' timing (webhooks.json): retry delays, lease, a delivery's time limit */
  readonly webhooks: WebhookTiming;
}

/** How webhooks are delivered in time (config/limits.ts WEBHOOK_*): tests and embedders may shorten them. */
export interface WebhookTiming {
  readonly retryFirstMs: number;
  readonly retryLastMs: number;
  readonly leaseMs: number;
  readonly renewMs: number;
  readonly timeoutMs: number;
}

/** Functions called over REST. */
export interface FunctionSettings {
  /** the time limit of a call, in ms */
  readonly timeoutMs: number;
  /** answer a function's unexpected exception with its message and stack, not only log them (during development) */
  readonly exposeErrors: boolean;
}

/** What a server is built with, besides its datastore and logger. */
export interface ServerSettings {
  readonly http: HttpSettings;
  readonly limits: LimitSettings;
  readonly functions: FunctionSettings;
}

/** Opening the project: its folder, its database and roles.json (openProject's options, as they are). */
export interface ProjectSettings {
  readonly dir: string;
  /** the SQLite file, or a postgres:// URL (undefined: DIR/data/data.sqlite) */
  readonly db?: string;
  /** the roles.json to enforce (undefined: DIR/roles.json when there is one; false: none, everything open) */
  readonly roles?: string | false;
  /** PostgreSQL: connections in the pool at most */
  readonly poolSize: number;
  /** the time the statements of one request may take together, in ms (0: no limit) */
  readonly queryTimeoutMs: number;
  /** PostgreSQL read replicas (--db-replica), and how far behind one may be (--db-replica-max-lag, ms) */
  readonly replicas?: { readonly urls: readonly string[]; readonly maxLagMs: number };
}

/** The datastore's own bounds (Datastore.open's options, as they are). */
export interface DatastoreSettings {
  readonly maxSetMembers: number;
  readonly maxSetMemory: number;
  readonly maxTextLength: number;
  readonly sessions: { readonly idleMinutes: number; readonly maxSessions: number; readonly maxGuestSessions: number; readonly maxGuestsPerAddress: number };
}

/** The command's whole settings: the server's, and what opens the project, where it listens, how many processes. */
export interface Settings extends ServerSettings {
  readonly project: ProjectSettings;
  readonly datastore: DatastoreSettings;
  readonly listen: { readonly host: string; readonly port: number };
  readonly process: { readonly workers: number; readonly logLevel: string };
}

/** Who a server answers for unless told: the loopback names. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];

/** An embedder's options of buildServer(): each setting by its own name, any of them left out for its default. */
export interface ServerOptionValues {
  /** the largest upload accepted, in bytes (default 100 MB) */
  readonly maxUploadBytes?: number;
  /** the largest request body (JSON) accepted, in bytes (default 10 MB; uploads have maxUploadBytes) */
  readonly maxBodyBytes?: number;
  /** the most entities one page may ask for with $top (default 10,000; an export has no page) */
  readonly maxPageSize?: number;
  /** the most related entities one answer may inline through $attributes / $expand, all levels together (default 100,000) */
  readonly maxInlinedEntities?: number;
  /** the most bytes of values one answer may hold, measured before a big read (default 64 MB) */
  readonly maxAnswerBytes?: number;
  /** the answer bytes this process holds in flight at most (default 256 MB; 0: no limit) */
  readonly maxAnswersInFlight?: number;
  /** the send timeout, in ms (default 30 s; 0: no timeout): LimitSettings.sendTimeoutMs */
  readonly sendTimeoutMs?: number;
  /** the most entities one $method=update or validate may carry (default 10,000) */
  readonly maxBatchEntities?: number;
  /** per client: uploads waiting for an entity at once, and their bytes (default 100 files, 1 GB) */
  readonly pendingUploads?: { readonly count: number; readonly bytes: number };
  /** the time limit of a function called over REST, in ms (default 30 s) */
  readonly functionTimeoutMs?: number;
  /** host names the server answers for (default localhost, 127.0.0.1, ::1); '*': any */
  readonly allowedHosts?: readonly string[];
  /** origins whose web pages may call the API with credentials (CORS) */
  readonly corsOrigins?: readonly string[];
  /** read the client's address, scheme and host from X-Forwarded-* (behind a proxy only) */
  readonly trustProxy?: boolean;
  /** the session cookie is Secure even over plain HTTP (a TLS-terminating proxy in front) */
  readonly secureCookies?: boolean;
  /** requests a minute per session (per address for a guest), per instance */
  readonly requestsPerMinute?: number;
  /** entity sets one session may hold at once */
  readonly setsPerSession?: number;
  /** entity locks one session may hold at once */
  readonly locksPerSession?: number;
  /** image conversions ($imageformat) waiting, everyone's, and running or waiting, one client's */
  readonly conversions?: { readonly queued: number; readonly perClient: number };
  /** the webhooks' timing (default: config/limits.ts WEBHOOK_*) */
  readonly webhookTiming?: Partial<WebhookTiming>;
  /** serve the Data Explorer at /$explorer (default true) */
  readonly explorer?: boolean;
  /** serve Prometheus metrics at /metrics (default false) */
  readonly metrics?: boolean;
  /** answer a function's unexpected exception with its message and stack (during development; default false) */
  readonly exposeErrors?: boolean;
  /** connections open at once, in all and from one address (0: no limit; per address, default none behind a proxy); a JSON body's time to arrive; an upload's least progress */
  readonly maxConnections?: number;
  readonly maxConnectionsPerAddress?: number;
  readonly bodyTimeoutMs?: number;
  readonly uploadProgress?: { readonly windowMs: number; readonly minBytes: number };
}

/** The settings an embedder's options mean: the defaults, here and nowhere else, for what they leave out. */
export function serverSettings(o: ServerOptionValues): ServerSettings {
  return {
    http: {
      allowedHosts: o.allowedHosts ?? LOOPBACK_HOSTS,
      corsOrigins: o.corsOrigins ?? [],
      trustProxy: o.trustProxy ?? false,
      secureCookies: o.secureCookies ?? false,
      explorer: o.explorer ?? true,
      metrics: o.metrics ?? false,
      maxBodyBytes: o.maxBodyBytes ?? MAX_BODY_SIZE,
      maxConnections: o.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
      maxConnectionsPerAddress: o.maxConnectionsPerAddress ?? connectionsPerAddress(o.trustProxy ?? false),
      bodyTimeoutMs: o.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
      uploadProgress: o.uploadProgress ?? UPLOAD_PROGRESS,
    },
    limits: {
      maxUploadBytes: o.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES,
      maxPageSize: o.maxPageSize ?? MAX_PAGE_SIZE,
      maxInlinedEntities: o.maxInlinedEntities ?? MAX_INLINED_ENTITIES,
      maxAnswerBytes: o.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES,
      maxAnswersInFlight: o.maxAnswersInFlight ?? DEFAULT_MAX_ANSWERS_IN_FLIGHT,
      sendTimeoutMs: o.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS,
      maxBatchEntities: o.maxBatchEntities ?? DEFAULT_MAX_BATCH_ENTITIES,
      pendingUploads: o.pendingUploads ?? { count: DEFAULT_PENDING_UPLOADS_PER_CLIENT, bytes: DEFAULT_PENDING_UPLOAD_BYTES_PER_CLIENT },
      requestsPerMinute: o.requestsPerMinute ?? DEFAULT_REQUESTS_PER_MINUTE,
      setsPerSession: o.setsPerSession ?? DEFAULT_SETS_PER_SESSION,
      locksPerSession: o.locksPerSession ?? DEFAULT_LOCKS_PER_SESSION,
      conversions: o.conversions ?? { queued: DEFAULT_QUEUED_CONVERSIONS, perClient: DEFAULT_CONVERSIONS_PER_CLIENT },
      webhooks: { retryFirstMs: WEBHOOK_RETRY_FIRST_MS, retryLastMs: WEBHOOK_RETRY_LAST_MS, leaseMs: WEBHOOK_LEASE_MS, renewMs: WEBHOOK_LEASE_RENEW_MS, timeoutMs: WEBHOOK_TIMEOUT_MS, ...o.webhookTiming },
    },
    functions: {
      timeoutMs: o.functionTimeoutMs ?? DEFAULT_FUNCTION_TIMEOUT_MS,
      exposeErrors: o.exposeErrors ?? false,
    },
  };
}

/** Connections from one address unless told: behind a proxy every connection comes from its address, so no limit. */
export function connectionsPerAddress(trustProxy: boolean): number {
  return trustProxy ? 0 : DEFAULT_CONNECTIONS_PER_ADDRESS;
}
