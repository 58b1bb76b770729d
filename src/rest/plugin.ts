// The Fastify side of the REST API: one catch-all route per verb under /rest, our own URL grammar
// behind it (rest/pipeline.ts), and the error handler that turns every failure into an __ERROR
// answer. Uploads get a scope of their own where no body parser runs: their handler reads the
// bytes as they arrive (POST /rest/$upload, and a POST with $rawPict or $binary into an entity's
// attribute, told apart by a route constraint on the query string).

import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import fastifyCookie from '@fastify/cookie';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { loggedUrl, type Logger } from '../util/log.js';
import { MAX_BODY_DEPTH } from '../config/limits.js';
import { DatasetError, isDatasetError } from '../errors/dataset-error.js';
import { REST_PREFIX } from './request/constants.js';
import { allowedRestMethods, handleRest } from './pipeline.js';
import { isAttributeUpload } from './plan/request.js';
import { dropAnswer, errorBody, send, sendError, SECURITY_HEADERS, type RestResponse } from './present/response.js';
import { Session, sessionInternals } from '../datastore/index.js';
import { cookieAttributesOf, keepSession, sessionOf } from './session-http.js';
import type { Services } from './scope/scope.js';
import { endWatchStreams } from './run/handlers/watch.js';
import type { HttpGuard } from './request/http-guards.js';

const VERBS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
// HEAD is routed as a method of its own, not Fastify's HEAD-from-GET: the answer is made (and
// compressed) as for GET, and Node sends its headers alone, so that Content-Encoding and
// Content-Length are GET's (RFC 9110 §9.3.2)
const ROUTED = [...VERBS, 'HEAD'] as const;

type ConstraintStrategy = Parameters<FastifyInstance['addConstraintStrategy']>[0];
type ConstrainedHandler = ReturnType<ReturnType<ConstraintStrategy['storage']>['get']>;

/** The socket's file descriptor (-1 or none under inject and on Windows). Node keeps it on the socket's internal handle. */
function socketFd(request: FastifyRequest): number | undefined {
  const fd = (request.raw.socket as unknown as { _handle?: { fd?: unknown } } | undefined)?._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

/** Whether a request target is the REST API's: /rest, /rest/…, /rest?… */
export function isRestUrl(url: string): boolean {
  return url === REST_PREFIX || url.startsWith(`${REST_PREFIX}/`) || url.startsWith(`${REST_PREFIX}?`);
}

/** The methods the REST API takes at a request's URL for its session, as the planner finds them (pipeline.ts allowedRestMethods): what OPTIONS and a 405 answer list. */
export async function restAllowed(services: Services, request: FastifyRequest, session?: Session): Promise<string[]> {
  return allowedRestMethods(services, { url: request.raw.url ?? REST_PREFIX, caller: request.ip, id: request.id }, session ?? (await sessionOf(services, request)));
}

/** The methods Fastify's routes take at `url` (OPTIONS added), for the routes outside the REST API; none: no route there. */
export function routeMethods(app: FastifyInstance, url: string): string[] {
  const path = url.split('?', 1)[0];
  const allowed: string[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((method) => Boolean(app.findRoute({ method, url: path })));
  return allowed.length === 0 ? [] : [...allowed, 'OPTIONS'];
}

/**
 * A 405 carries Allow (RFC 9110 §15.5.6): the methods the URL takes. Where the URL names nothing
 * (an unknown dataclass: 404) or cannot be read (400), there is no method to list: that refusal
 * is returned, to be answered instead, as a GET would be.
 */
async function allowOn405(services: Services, request: FastifyRequest, reply: FastifyReply, session?: Session): Promise<DatasetError | undefined> {
  try {
    reply.header('allow', (await restAllowed(services, request, session)).join(', '));
    return undefined;
  } catch (e) {
    if (isDatasetError(e)) return e;
    throw e;
  }
}

export async function restRoutes(app: FastifyInstance, services: Services, guard: HttpGuard): Promise<void> {
  // (a watch stream never ends by itself: a closing server ends them, or its close would wait for them)
  app.addHook('preClose', (done) => {
    endWatchStreams(services);
    done();
  });
  // (rawBody: the request came by an upload route, its body unread)
  const handler = async (request: FastifyRequest, reply: FastifyReply, rawBody = false) => {
    // a Host not ours, or a write from another site's page: refused before its session is read
    const refused = guard(request);
    if (refused) throw refused;
    // (awaited only when it is a promise: the hot path takes no extra turn)
    const opened = sessionOf(services, request, { passcodes: true });
    const session = opened instanceof Session ? opened : await opened;
    let response: RestResponse | undefined;
    try {
      // a guest whose session is not stored has a new one each time: it is counted by its address
      if (services.requests.perMinute > 0) services.requests.take(sessionInternals.stored(session) ? `session:${sessionInternals.id(session)}` : `address:${request.ip}`);
      // a read while the answers in flight hold the whole budget: 503 before anything is read
      if (request.method === 'GET' || request.method === 'HEAD') services.answers.admit();
      response = await handleRest(services, {
        method: request.method,
        url: request.raw.url ?? REST_PREFIX,
        caller: request.ip,
        session,
        body: request.body,
        rawBody,
        headers: request.headers,
        socketFd: socketFd(request),
        // (a string, not a getter: an object literal with an accessor costs the hot path three times
        // the garbage collection of the whole request — measured with the read bench)
        origin: `${request.protocol}://${request.host}`,
        raw: request.raw,
        id: request.id,
        // (a write from another origin's page was refused above; a GET is judged once planned)
        foreignPage: request.method === 'GET' ? guard.foreignPage(request) : undefined,
      });
    } catch (e) {
      if (e instanceof DatasetError && e.code === 'METHOD_NOT_ALLOWED') throw (await allowOn405(services, request, reply, session)) ?? e;
      throw e;
    } finally {
      // what the request changed of its session is stored before the answer leaves (an answer
      // not sent lets go of what it holds)
      await keepSession(services, request, reply, session, cookieAttributes, () => dropAnswer(response));
    }
    // a batch's answer whose entity failed for want of the database (busy, unreachable) is a
    // 503 built by the write handler: when to try again goes with it, as with a thrown 503
    if (response.status === 503) reply.header('retry-after', '1');
    // a failure answered as an answer, not thrown (a failed update's or a login's body, a 416):
    // it names its request as sendError's do
    if (response.status >= 400) reply.header('x-request-id', request.id);
    // (a tag names a read's answer: a write's If-None-Match is not ours to judge)
    return send(reply, response, request.method === 'GET' || request.method === 'HEAD' ? request.headers['if-none-match'] : undefined, services.answers);
  };
  // 4D's clients do not always label their JSON (wakanda-client posts it as a form, others as
  // text): every body the REST routes take is read as JSON whatever its label, and one that is not
  // JSON is refused naming the label. An empty body (a delete, say) is no body rather than an
  // error. (Uploads read raw bytes in a scope of their own, below.)
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, text, done) => {
    let body: unknown;
    try {
      body = (text as string).trim() === '' ? undefined : JSON.parse(text as string);
    } catch (e) {
      const label = request.headers['content-type'];
      const labelled = label === undefined || /^application\/json\b/i.test(label) ? '' : ` (labelled ${JSON.stringify(label.slice(0, 100))}, read as JSON whatever the label)`;
      done(new DatasetError('INVALID_BODY', `the body is not valid JSON${labelled}: ${(e as Error).message}`), undefined);
      return;
    }
    if (nestsDeeperThan(body, MAX_BODY_DEPTH)) {
      done(new DatasetError('INVALID_BODY', `the body's objects and arrays nest deeper than ${MAX_BODY_DEPTH} levels`), undefined);
      return;
    }
    done(null, body);
  });
  // (no hook: the handler reads the session's cookie itself; the plugin serialises the cookie's attributes)
  await app.register(fastifyCookie, { hook: false });
  // the cookie's attributes, serialised once by the cookie package: a token is 32 hex digits, written as it is
  const cookieAttributes = cookieAttributesOf(app);
  app.route({ method: [...ROUTED], url: REST_PREFIX, handler });
  app.route({ method: [...ROUTED], url: `${REST_PREFIX}/*`, handler });
  // OPTIONS: 204 with the methods the planner takes at this URL for this session (an unknown
  // dataclass answers 404, as a GET). With --cors-origin, a preflight is the CORS plugin's.
  const options = async (request: FastifyRequest, reply: FastifyReply) => {
    const refused = guard(request);
    if (refused) throw refused;
    const allowed = await restAllowed(services, request);
    return reply.code(204).headers(SECURITY_HEADERS).header('allow', allowed.join(', ')).send();
  };
  app.route({ method: 'OPTIONS', url: REST_PREFIX, handler: options });
  app.route({ method: 'OPTIONS', url: `${REST_PREFIX}/*`, handler: options });

  app.setNotFoundHandler(async (request, reply) => {
    const refused = guard(request);
    if (refused) return sendError(reply, refused);
    if (isRestUrl(request.url)) {
      // (the methods of the caller's session: what it may do there)
      const instead = await allowOn405(services, request, reply, await sessionOf(services, request));
      return sendError(reply, instead ?? new DatasetError('METHOD_NOT_ALLOWED', `${request.method} is not a method of the REST API: use ${VERBS.join(', ')} or HEAD`));
    }
    // a route of another method at this URL (POST /health): 405 with the methods it takes
    // (a route of this very method that found nothing, a static file, calls this handler too: 404)
    const allowed = routeMethods(app, request.url);
    if (allowed.length > 0 && !allowed.includes(request.method)) return sendError(reply.header('allow', allowed.join(', ')), new DatasetError('METHOD_NOT_ALLOWED', `${request.method} is not served at ${request.url.split('?', 1)[0]}: use ${allowed.filter((m) => m !== 'OPTIONS').join(' or ')}`));
    return sendError(reply, new DatasetError('UNKNOWN_RESOURCE', `nothing is served at ${request.method} ${request.url}: the REST API lives under ${REST_PREFIX}/, the Data Explorer at /$explorer`));
  });

  // (the error handler, errorHandler below, is the server's: set before any route, server.ts)

  // Uploads read the raw body as it arrives: in a scope of their own, no body parser runs.
  app.addConstraintStrategy(ATTRIBUTE_UPLOAD);
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    const uploadRoute = async (request: FastifyRequest, reply: FastifyReply) => {
      try {
        return await handler(request, reply, true);
      } catch (e) {
        // refused before the body was read to its end: the rest is not waited for
        if (!request.raw.readableEnded) reply.header('connection', 'close');
        throw e;
      }
    };
    // (GET on $upload has no body to skip: it takes the main route)
    for (const url of [`${REST_PREFIX}/$upload`, `${REST_PREFIX}/$upload/`]) scope.route({ method: ['POST', 'PUT', 'PATCH', 'DELETE'], url, handler: uploadRoute });
    // POST /rest/{dc}({key})/{attribute}?$rawPict=… or ?$binary=true: the file's bytes into that attribute
    scope.route({ method: 'POST', url: `${REST_PREFIX}/*`, constraints: { [ATTRIBUTE_UPLOAD.name]: true }, handler: uploadRoute });
  });
}

/**
 * The error handler that answers every failure in the __ERROR shape. Fastify gives a route the
 * handler set when the route is added: the server sets this one before any route (server.ts), so
 * that the routes outside /rest (/health, OPTIONS *, /$api) answer a body they cannot read in
 * our shape too, not in Fastify's own.
 */
export function errorHandler(app: FastifyInstance, services: Services, log: Logger): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => FastifyReply {
  return (error, request, reply) => {
    if (isDatasetError(error)) {
      // an exception user code did not mean for the client (functions/call.ts): logged with its
      // stack; sent only when the server runs with --expose-errors
      if (error.cause !== undefined) {
        log.error({ err: error.cause, reqId: request.id, method: request.method, url: loggedUrl(request.url) }, error.message);
        if (services.exposeErrors) return sendError(reply, withCause(error));
      }
      return sendError(reply, error);
    }
    const status = error.statusCode ?? 500;
    if (status === 413) return sendError(reply, new DatasetError('BODY_TOO_LARGE', `the request body is larger than the ${app.initialConfig.bodyLimit} bytes accepted`));
    if (status >= 400 && status < 500) return sendError(reply, new DatasetError('INVALID_BODY', `the request cannot be read: ${error.message}`));
    // Unexpected: the cause goes to the log, not to the client.
    log.error({ err: error, reqId: request.id, method: request.method, url: loggedUrl(request.url) }, 'unexpected error');
    return sendError(reply, new DatasetError('INTERNAL', 'internal server error: the cause is in the server log'));
  };
}

/**
 * A route constraint: a POST whose query string gives $rawPict or $binary carries a file's bytes
 * (wakanda-client's media upload), read raw by its handler; every other request, derived
 * undefined, takes the routes without the constraint.
 */
const ATTRIBUTE_UPLOAD: ConstraintStrategy = {
  name: 'attributeUpload',
  storage() {
    let store: ConstrainedHandler = null;
    return { get: (value) => (value === true ? store : null), set: (_value, s) => { store = s; } };
  },
  deriveConstraint: (req) => (req.method === 'POST' && isAttributeUpload(req.url ?? '') ? true : undefined),
  mustMatchWhenDerived: false,
};

/** The value's objects and arrays nest deeper than `limit` (walked without recursion: the value may be deeper than the stack). */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

/** Failures Fastify meets before any route runs (a path it cannot decode), in our __ERROR shape. */
export function frameworkError(error: FastifyError, request: { url: string; id: string }, reply: FastifyReply): void {
  // (refused before the hooks run: the request id is echoed here)
  reply.header('x-request-id', request.id);
  if (error.code === 'FST_ERR_BAD_URL') {
    sendError(reply, new DatasetError('MALFORMED_URL', `bad percent-encoding in the URL '${request.url}'`));
  } else {
    sendError(reply, new DatasetError('INVALID_BODY', `the request cannot be read: ${error.message}`));
  }
}

/** The error with its cause's message and stack (--expose-errors, during development). */
function withCause(error: DatasetError): DatasetError {
  const cause = error.cause instanceof Error ? error.cause : new Error(String(error.cause));
  const [first, ...rest] = error.items;
  const message = `${first.message.replace(/: its cause is in the server log$/, '')}: ${cause.message}`;
  return new DatasetError(first.name, message, { items: [{ ...first, message, extraDescription: { stack: cause.stack?.split('\n') } }, ...rest], status: error.status });
}

/** The security headers as lines of a raw answer. */
const RAW_SECURITY_LINES = Object.entries(SECURITY_HEADERS).map(([name, value]) => `${name}: ${value}\r\n`).join('');

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (headers past the size it reads, a
 * request that is not HTTP, Content-Length beside Transfer-Encoding, one that never arrives in
 * full): answered on the socket in the __ERROR shape, then the connection is closed (what follows
 * on it cannot be read).
 */
export function clientError(error: Error & { code?: string }, socket: Duplex): void {
  // a connection the client reset has no one to answer
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal = error.code === 'HPE_HEADER_OVERFLOW'
    ? new DatasetError('HEADERS_TOO_LARGE', `the request's headers are larger than the ${maxHeaderSize} bytes this server reads`)
    : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new DatasetError('REQUEST_TIMEOUT', 'the request did not arrive in full in the time the server gives it')
      : new DatasetError('MALFORMED_REQUEST', `the request cannot be read as HTTP: ${error.message}`);
  answerOnSocket(socket, refusal);
  socket.destroy(error);
}

/**
 * Writes `refusal` as a whole HTTP answer straight on the socket (no request of Fastify's to answer
 * through: the parser refused it, or it is cut off), `connection: close`; the caller closes it.
 */
export function answerOnSocket(socket: Duplex, refusal: DatasetError, headers: Record<string, string> = {}): void {
  if (!socket.writable) return;
  const body = errorBody(refusal);
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.write(`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${RAW_SECURITY_LINES}${extra}connection: close\r\n\r\n${body}`);
}
