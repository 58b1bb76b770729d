// Builds the HTTP server (Fastify + pino) around a datastore.

import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { MAX_BODY_SIZE } from './config/limits.js';
import type { Datastore } from './datastore/datastore.js';
import { frameworkError, restRoutes } from './rest/plugin.js';

export interface ServerOptions {
  /** pino level; 'silent' for none. Logs go to stderr, so stdout stays for the ready line. */
  readonly logLevel?: string;
}

export async function buildServer(ds: Datastore, options: ServerOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: options.logLevel ?? 'info', stream: process.stderr },
    // Per-request logs cost as much as a key lookup; they are on at debug level only.
    // A child logger per request costs more than the lookup it would describe: requests share
    // the server's logger unless requests are logged.
    ...(quiet(options.logLevel) ? { childLoggerFactory: (logger: FastifyBaseLogger) => logger } : {}),
    logController: new LogController({ disableRequestLogging: quiet(options.logLevel) }),
    bodyLimit: MAX_BODY_SIZE,
    // Keys such as Company("a/b") or long $filter values should not be cut by the router.
    routerOptions: { maxParamLength: 16 * 1024 },
    frameworkErrors: frameworkError,
  });
  await restRoutes(app, ds);
  return app;
}

/** Requests are logged at debug and trace only. */
function quiet(level: string | undefined): boolean {
  return level !== 'debug' && level !== 'trace';
}
