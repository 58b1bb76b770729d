// Builds the HTTP server (Fastify) around a datastore, with pino logs on stderr.

import Fastify, { type FastifyInstance } from 'fastify';
import { DEFAULT_FUNCTION_TIMEOUT_MS, DEFAULT_MAX_UPLOAD_BYTES, MAX_BODY_SIZE, MAX_URL_LENGTH, UPLOAD_SWEEP_MS } from './config/limits.js';
import type { Datastore } from './datastore/datastore.js';
import { createLogger, type Logger } from './util/log.js';
import { refusedBeforeBody } from './rest/pipeline.js';
import { frameworkError, restRoutes } from './rest/plugin.js';
import { errorBody } from './rest/response.js';
import { servicesFor } from './rest/scope.js';

export interface ServerOptions {
  /** the logger; by default one at `logLevel` on stderr */
  readonly log?: Logger;
  /** pino level when no logger is given ('silent' for none); requests are logged at debug */
  readonly logLevel?: string;
  /** the largest upload accepted, in bytes (default 100 MB) */
  readonly maxUploadBytes?: number;
  /** the time limit of a function called over REST, in ms (default 30 s) */
  readonly functionTimeoutMs?: number;
}

export async function buildServer(ds: Datastore, options: ServerOptions = {}): Promise<FastifyInstance> {
  const log = options.log ?? createLogger(options.logLevel ?? 'info');
  const services = servicesFor(ds, {
    maxUploadBytes: options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES,
    functionTimeoutMs: options.functionTimeoutMs ?? DEFAULT_FUNCTION_TIMEOUT_MS,
  });
  const app = Fastify({
    // Fastify's request logger stays off (see log.ts); ours is below.
    logger: false,
    bodyLimit: MAX_BODY_SIZE,
    // Keys such as Company("a/b") or long $filter values should not be cut by the router.
    routerOptions: { maxParamLength: MAX_URL_LENGTH },
    frameworkErrors: frameworkError,
    // On SIGTERM a request already on its way is served, not answered 503 (in a shape that is
    // not ours): closing waits for it.
    return503OnClosing: false,
  });
  if (log.isLevelEnabled('debug')) {
    app.addHook('onResponse', (request, reply, done) => {
      log.debug({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 }, 'request');
      done();
    });
  }
  await restRoutes(app, services, log);
  // Expect: 100-continue — an upload the request stage refuses (announced past the limit, bad options) is refused before its body is sent
  app.server.on('checkContinue', (request, response) => {
    const refused = refusedBeforeBody(services, request, request.socket.remoteAddress ?? '');
    if (!refused) {
      response.writeContinue();
      app.server.emit('request', request, response);
      return;
    }
    const body = errorBody(refused);
    response.writeHead(refused.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' }).end(body);
  });
  // files no entity claimed in time (uploads, and what a crash cut off) go, whichever instance sees them first
  const sweep = setInterval(() => void services.core.files.sweep().catch((err: unknown) => log.warn({ err }, 'sweeping expired uploads failed')), UPLOAD_SWEEP_MS).unref();
  // Closing waits for the requests in flight; a keep-alive connection whose last request ends
  // meanwhile is idle from then on, and would hold the close until the client's keep-alive ran out.
  let idle: NodeJS.Timeout | undefined;
  app.addHook('preClose', (done) => {
    idle = setInterval(() => app.server.closeIdleConnections(), 50).unref();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearInterval(sweep);
    clearInterval(idle);
    done();
  });
  return app;
}
