// Builds the HTTP server (Fastify) around a datastore, with pino logs on stderr.

import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import fastifyCors from '@fastify/cors';
import { MAX_URL_LENGTH, SESSION_SWEEP_MS, UPLOAD_SWEEP_MS } from '../config/limits.js';
import { serverSettings, type ServerOptionValues, type ServerSettings } from '../config/settings.js';
import { httpGuard } from '../rest/request/http-guards.js';
import type { Datastore } from '../datastore/datastore.js';
import { createLogger, loggedUrl, type Logger } from '../util/log.js';
import { explorerRoutes } from '../explorer/routes.js';
import { healthRoutes } from './health.js';
import { metricsRoutes } from './metrics.js';
import { startWebhooks } from '../rest/webhooks/webhooks.js';
import { allowOnPreflight, compression, optionsRoute } from './conventions.js';
import { refusedBeforeBody } from '../rest/pipeline.js';
import { clientError, errorHandler, frameworkError, restRoutes } from '../rest/plugin.js';
import { errorBody, SECURITY_HEADERS } from '../rest/present/response.js';
import { DatasetError } from '../errors/dataset-error.js';
import { servicesFor } from '../rest/scope/scope.js';
import { limitSlowClients } from './slow-clients.js';

/** An embedder's options: a logger, and any setting by its own name (config/settings.ts, ServerOptionValues), left out for its default. */
export interface ServerOptions extends ServerOptionValues {
  /** the logger; by default one at `logLevel` on stderr */
  readonly log?: Logger;
  /** pino level when no logger is given ('silent' for none); requests are logged at debug */
  readonly logLevel?: string;
}

/** An X-Request-Id taken as it is: a token of up to 128 letters, digits and ._-:/ (what proxies and tracers send), nothing a log line could be forged with. */
const REQUEST_ID = /^[A-Za-z0-9._:/-]{1,128}$/;

function requestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/** The path and query of a request target in absolute form (http://host:port/path?q → /path?q); any other form as it is. */
function originForm(url: string): string {
  if (url.startsWith('/')) return url;
  const m = /^https?:\/\/[^/?#]*/i.exec(url);
  if (!m) return url;
  const rest = url.slice(m[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** The server an embedder builds: its options mean the settings serverSettings() makes of them. */
export function buildServer(ds: Datastore, options: ServerOptions = {}): Promise<FastifyInstance> {
  return serverWith(ds, serverSettings(options), options.log ?? createLogger(options.logLevel ?? 'info'));
}

/** The server of these settings, as they are (the command builds them from its flags: process/cli-options.ts). */
export async function serverWith(ds: Datastore, settings: ServerSettings, log: Logger): Promise<FastifyInstance> {
  const { http } = settings;
  const services = servicesFor(ds, settings, (what) => log.info(what, 'closed a connection whose client stopped reading its answer (--send-timeout)'));
  const app = Fastify({
    // Fastify's request logger stays off (see log.ts); ours is below.
    logger: false,
    bodyLimit: http.maxBodyBytes,
    // Keys such as Company("a/b") or long $filter values should not be cut by the router.
    routerOptions: { maxParamLength: MAX_URL_LENGTH },
    frameworkErrors: frameworkError,
    // what Node's parser refuses is answered in our shape too
    clientErrorHandler: clientError,
    // On SIGTERM a request already on its way is served, not answered 503 (in a shape that is
    // not ours): closing waits for it.
    return503OnClosing: false,
    // one hop: the proxy in front; the addresses it was told before it (X-Forwarded-For's first
    // entries, which any client may write) are not believed
    // (a hop count would not do: Fastify then trusts no peer at all)
    trustProxy: http.trustProxy ? (_address: string, hop: number) => hop === 0 : false,
    // the client's (or a proxy's) X-Request-Id when it is a plain token, else one of ours
    genReqId: requestId,
    // a request line in absolute form (GET http://host/rest/… HTTP/1.1, RFC 9112 §3.2.2: what a
    // client talking to a proxy sends) is routed by its path, as every route reads it
    rewriteUrl: (request) => originForm(request.url ?? '/'),
  });
  // every failure in the __ERROR shape, on every route (a route keeps the handler set before it is added)
  app.setErrorHandler(errorHandler(app, services, log));
  // in every log line of the request; echoed on the answer when the client sent one (a tracer's,
  // a proxy's: ours in its place when it cannot be used), and on every error (response.ts
  // sendError) — an answer that went well carries no id nobody asked for (the header costs
  // every read: issue #39)
  app.addHook('onRequest', (request, reply, done) => {
    if (request.headers['x-request-id'] !== undefined) reply.header('x-request-id', request.id);
    done();
  });
  const { corsOrigins } = http;
  const guard = httpGuard({ allowedHosts: http.allowedHosts, corsOrigins });
  if (corsOrigins.length > 0) {
    // CORS answers preflights in a hook of its own, before any route: the guard and the headers go
    // before it (a hook only here: without CORS the routes guard themselves, at no hook's cost)
    app.addHook('onRequest', (request, reply, done) => {
      reply.headers(SECURITY_HEADERS);
      const refused = guard(request);
      if (refused || request.method !== 'OPTIONS') return done(refused);
      allowOnPreflight(app, services, request, reply).then(() => done(), done);
    });
    // browser front ends on the listed origins may call the API with the session's cookie (an
    // OPTIONS that is no preflight is answered 204 with Allow, not refused in plain text)
    await app.register(fastifyCors, { origin: [...corsOrigins], credentials: true, methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], maxAge: 600, strictPreflight: false,
      // (a page on another origin reads only the CORS-safelisted answer headers unless told: a
      // browser client needs the ETag for If-Match and If-None-Match, the request id to quote
      // an error, Retry-After to wait, Location after a create)
      exposedHeaders: ['etag', 'x-request-id', 'retry-after', 'location', 'allow'] });
  } else optionsRoute(app, guard);
  await compression(app);
  if (log.isLevelEnabled('debug')) {
    app.addHook('onResponse', (request, reply, done) => {
      log.debug({ reqId: request.id, method: request.method, url: loggedUrl(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 }, 'request');
      done();
    });
  }
  healthRoutes(app, ds, log);
  if (http.metrics) await metricsRoutes(app, ds, log, services.answers);
  await (await import('../rest/openapi/page.js')).apiReferenceRoutes(app, guard); // the API reference page at /$api (Swagger UI over GET /rest/$openapi)
  await restRoutes(app, services, guard);
  await import('./oidc/routes.js').then(({ oidcRoutes, oidcProvidersOf }) => oidcRoutes(app, services, guard, oidcProvidersOf(ds))); // single sign-on at /rest/$oidc (after restRoutes: it uses its cookie package)
  // the project's webhooks (webhooks.json): delivered while the server runs, given up when it closes
  const stopWebhooks = await startWebhooks(services, log);
  app.addHook('onClose', async () => stopWebhooks());
  if (http.explorer) await explorerRoutes(app, guard, log);
  // Expect: 100-continue — an upload the request stage refuses (announced past the limit, bad options) is refused before its body is sent
  app.server.on('checkContinue', (request, response) => {
    const refused = refusedBeforeBody(services, request, request.socket.remoteAddress ?? '');
    if (!refused) {
      response.writeContinue();
      app.server.emit('request', request, response);
      return;
    }
    const body = errorBody(refused);
    response.writeHead(refused.status, { ...SECURITY_HEADERS, 'x-request-id': requestId(request), 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' }).end(body);
  });
  limitSlowClients(app.server, { maxConnections: http.maxConnections, maxConnectionsPerAddress: http.maxConnectionsPerAddress, bodyTimeoutMs: http.bodyTimeoutMs, upload: http.uploadProgress });
  // any other expectation (Expect: 200-ok …) is one no server meets: Node's bare 417, in our shape
  app.server.on('checkExpectation', (request, response) => {
    const body = errorBody(new DatasetError('EXPECTATION_FAILED', `Expect: ${String(request.headers.expect).slice(0, 100)} is no expectation this server meets (only 100-continue)`));
    response.writeHead(417, { ...SECURITY_HEADERS, 'x-request-id': requestId(request), 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' }).end(body);
  });
  // files no entity claimed in time (uploads, and what a crash cut off) go, whichever instance sees them first
  const sweep = setInterval(() => void services.core.files.sweep().catch((err: unknown) => log.warn({ err }, 'sweeping expired uploads failed')), UPLOAD_SWEEP_MS).unref();
  // and sessions past their idle timeout
  const sessionSweep = setInterval(() => void services.core.sessions.sweep().catch((err: unknown) => log.warn({ err }, 'sweeping expired sessions failed')), SESSION_SWEEP_MS).unref();
  // Closing waits for the requests in flight; a keep-alive connection whose last request ends
  // meanwhile is idle from then on, and would hold the close until the client's keep-alive ran out.
  let idle: NodeJS.Timeout | undefined;
  app.addHook('preClose', (done) => {
    idle = setInterval(() => app.server.closeIdleConnections(), 50).unref();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearInterval(sweep);
    clearInterval(sessionSweep);
    clearInterval(idle);
    done();
  });
  return app;
}
