// HTTP's conventions around every route (issue 17): answers compressed by Accept-Encoding, and
// OPTIONS answering which methods a URL takes. (HEAD comes with every GET route from Fastify;
// entity tags and conditional requests are the REST layer's: src/rest/request/etag.ts.)

import fastifyCompress from '@fastify/compress';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpGuard } from '../rest/request/http-guards.js';
import { encodedTag, negotiatedEncoding } from '../rest/request/etag.js';
import { isRestUrl, restAllowed, routeMethods } from '../rest/plugin.js';
import type { Services } from '../rest/scope/scope.js';
import { SECURITY_HEADERS, sendError, withheldBytes } from '../rest/present/response.js';

/** A request for an event stream (rest/run/handlers/watch.ts), as its URL asks, `$` escaped or not. */
const EVENT_STREAM = /[?&](?:\$|%24)method=watch(?:&|$)/i;

/** Answers smaller than this go as they are: compressing them saves less than it costs. */
export const COMPRESS_THRESHOLD = 1024;

/** The plugin's own list less octet-stream (a blob may be a zip): JSON, text, XML (SVG), YAML ($openapi?format=yaml). */
const COMPRESSIBLE = /^text\/(?!event-stream)|(?:\+|\/)json(?:;|$)|(?:\+|\/)text(?:;|$)|(?:\+|\/)xml(?:;|$)|^application\/(?:x-)?yaml(?:;|$)/u;

/**
 * br or gzip by the client's Accept-Encoding, for answers of a compressible type (JSON, text,
 * SVG: mime-db's list) over COMPRESS_THRESHOLD bytes; images, blobs and other media already
 * compressed go as they are. Registered before the routes: it is a hook on every answer.
 */
export async function compression(app: FastifyInstance): Promise<void> {
  await app.register(fastifyCompress, {
    threshold: COMPRESS_THRESHOLD,
    encodings: ['br', 'gzip'],
    // (and mime-db's compressible types, which the plugin adds)
    customTypes: COMPRESSIBLE,
    // request bodies are not taken compressed: the routes read JSON and uploads as they come
    globalDecompression: false,
    // (brotli's quality 4, the plugin's default, is near gzip's speed and smaller; not 11, which costs ~100× the time)
  });
  // The plugin reads `*` as gzip even where gzip is refused (`gzip;q=0, *`): it is given the
  // choice made here by RFC 9110's rules instead, as the one coding asked for (or identity).
  app.addHook('onRequest', async (request) => {
    const header = request.headers['accept-encoding'];
    // an event stream ($method=watch) goes uncompressed: a compressor would hold its events back
    if (header !== undefined && EVENT_STREAM.test(request.url)) request.headers['accept-encoding'] = 'identity';
    else if (header !== undefined) request.headers['accept-encoding'] = negotiatedEncoding(header) ?? 'identity';
  });
  // A strong tag names one representation: a body sent compressed carries its tag with the
  // encoding (rest/request/etag.ts encodedTag). The plugin compresses in an onSend hook it adds to each
  // route as it is made: this one, added after it, runs after it.
  app.addHook('onRoute', (route) => {
    route.onSend = [...(route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend]), tagEncoding];
  });
}

function tagEncoding(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void): void {
  const encoding = reply.getHeader('content-encoding');
  const tag = reply.getHeader('etag');
  if (reply.statusCode === 304) {
    // a 304 carries the tag the 200 would: with the encoding the 200's body would have been sent in
    const bytes = withheldBytes.get(reply);
    const would = bytes !== undefined && bytes >= COMPRESS_THRESHOLD && request.headers['x-no-compression'] === undefined ? negotiatedEncoding(request.headers['accept-encoding']) : undefined;
    if (would !== undefined && typeof tag === 'string') reply.header('etag', encodedTag(tag, would));
  } else if (typeof encoding === 'string' && encoding !== 'identity') {
    if (typeof tag === 'string') reply.header('etag', encodedTag(tag, encoding));
  } else if (couldCompress(reply, payload)) varyOnEncoding(reply);
  done(null, payload);
}

/**
 * Whether the compression above would have compressed this answer for another Accept-Encoding:
 * a compressible type, a body past the threshold (a stream's size is not known: it may be), not
 * a range. Sent as it is (no Accept-Encoding, identity, deflate only), it still depends on the
 * header — its strong tag differs from the compressed variant's — so it says so (Vary), as the
 * compressed one does (RFC 9110 §12.5.5).
 */
function couldCompress(reply: FastifyReply, payload: unknown): boolean {
  if (payload === null || payload === undefined || reply.statusCode === 206 || reply.getHeader('content-range') !== undefined) return false;
  const type = reply.getHeader('content-type');
  if (typeof type !== 'string' || !COMPRESSIBLE.test(type)) return false;
  if (typeof payload === 'string' || Buffer.isBuffer(payload)) return Buffer.byteLength(payload) >= COMPRESS_THRESHOLD;
  return true;
}

/** Adds accept-encoding to the answer's Vary (kept: what another hook put there, an Origin). */
function varyOnEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  const list = Array.isArray(vary) ? vary.join(', ') : vary === undefined ? '' : String(vary);
  if (/(?:^|,)\s*(?:accept-encoding|\*)\s*(?:,|$)/i.test(list)) return;
  reply.header('vary', list.trim() === '' ? 'accept-encoding' : `${list}, accept-encoding`);
}

/**
 * OPTIONS on any URL outside the REST API (which answers its own, from its planner: rest/plugin.ts):
 * 204 with Allow (RFC 9110 §9.3.7), or the usual 404 where nothing is served. Behind the Host guard
 * as every route. (With --cors-origin, the CORS plugin answers preflights itself: the hook in
 * server.ts sets Allow on its answer.)
 */
export function optionsRoute(app: FastifyInstance, guard: HttpGuard): void {
  app.options('*', (request, reply) => {
    const refused = guard(request);
    if (refused) return sendError(reply, refused);
    const allowed = routeMethods(app, request.url);
    if (allowed.length === 0) return reply.callNotFound();
    return reply.code(204).headers(SECURITY_HEADERS).header('allow', allowed.join(', ')).send();
  });
}

/** Sets Allow on an OPTIONS answer the CORS plugin gives (a preflight): the REST planner's methods under /rest, the routes' elsewhere. */
export async function allowOnPreflight(app: FastifyInstance, services: Services, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.method !== 'OPTIONS') return;
  let allowed: string[];
  try {
    allowed = isRestUrl(request.url) ? await restAllowed(services, request) : routeMethods(app, request.url);
  } catch {
    return; // the URL names nothing: no Allow
  }
  if (allowed.length > 0) reply.header('allow', allowed.join(', '));
}
