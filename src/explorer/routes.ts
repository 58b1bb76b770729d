// Serves the Data Explorer at /$explorer: the page (a fresh CSP nonce in each answer, never
// cached) and its hashed scripts and styles (cached for a year, immutable). Helmet sets the
// security headers in this scope only; the REST answers keep their own. The page talks to the
// server through the public REST API and nothing else.

import fastifyHelmet from '@fastify/helmet';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DatasetError } from '../errors/dataset-error.js';
import { sendError } from '../rest/present/response.js';
import type { HttpGuard } from '../rest/request/http-guards.js';
import type { Logger } from '../util/log.js';
import { explorerBundle } from './bundle.js';

/** where the explorer is served */
export const EXPLORER_PATH = '/$explorer';
const ASSETS = `${EXPLORER_PATH}/assets/`;

export async function explorerRoutes(app: FastifyInstance, guard: HttpGuard, log: Logger): Promise<void> {
  await app.register(async (scope) => {
    // a Host not ours (DNS rebinding) is refused here as on /rest
    scope.addHook('onRequest', async (request, reply) => {
      const refused = guard(request);
      if (refused) return sendError(reply, refused);
    });
    await scope.register(fastifyHelmet, {
      enableCSPNonces: true,
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'none'"],
          scriptSrc: ["'self'"],
          // the grid injects its theme as <style> elements carrying the page's nonce
          styleSrc: ["'self'"],
          // thumbnails come from /rest; the grid's icons are data: URLs; a chosen file is previewed as a blob:
          imgSrc: ["'self'", 'data:', 'blob:'],
          connectSrc: ["'self'"],
          fontSrc: ["'self'"],
          formAction: ["'self'"],
          baseUri: ["'none'"],
          frameAncestors: ["'none'"],
        },
      },
      // the page is plain HTTP on loopback by default: no HSTS from here (a proxy with TLS sets it)
      strictTransportSecurity: false,
    });

    const page = async (request: FastifyRequest, reply: FastifyReply) => {
      const bundle = await load(reply, log);
      if (!bundle) return reply;
      return reply
        .header('content-type', 'text/html; charset=utf-8')
        // each answer carries its own nonce: never kept by a cache
        .header('cache-control', 'no-store')
        .send(bundle.html.replaceAll('{{nonce}}', reply.cspNonce.style));
    };
    scope.get(EXPLORER_PATH, page);
    scope.get(`${EXPLORER_PATH}/`, page);
    scope.get(`${ASSETS}:name`, async (request: FastifyRequest<{ Params: { name: string } }>, reply) => {
      const bundle = await load(reply, log);
      if (!bundle) return reply;
      const asset = bundle.assets.get(request.params.name);
      if (!asset) {
        return sendError(reply, new DatasetError('UNKNOWN_RESOURCE', `the Data Explorer has no file ${request.params.name.slice(0, 100)} (an old page? reload ${EXPLORER_PATH})`));
      }
      reply.header('etag', asset.etag).header('cache-control', 'public, max-age=31536000, immutable');
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
      return reply.header('content-type', asset.type).send(asset.body);
    });
  });
}

async function load(reply: FastifyReply, log: Logger) {
  try {
    return await explorerBundle(ASSETS);
  } catch (err) {
    log.error({ err }, 'building the Data Explorer failed');
    sendError(reply, new DatasetError('INTERNAL', 'the Data Explorer could not be built: the server log says why'));
    return undefined;
  }
}
