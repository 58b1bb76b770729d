// The browsable reference of the REST API at /$api: Swagger UI, through its Fastify plugin, which
// serves swagger-ui-dist's scripts and styles from the package itself (nothing is loaded from the
// internet: the page's own CSP allows our origin only). The plugin reads its document from
// @fastify/swagger, registered here in static mode with a placeholder, and fetches it from
// /$api/json; that request is sent on to GET /rest/$openapi instead (a redirect the browser follows
// with the session's cookie), so that the page shows what the session may use, built and
// guarded by the REST pipeline like every other answer — one document, one source.
// (Scalar's plugin needs Node 22; this server runs on Node 20.) The page is this server's, not
// Swagger's: Swagger UI's BaseLayout (no top bar, so no Swagger logo and no "explore" box) and an
// icon of our own instead of the plugin's Swagger favicons.

import fastifyHelmet from '@fastify/helmet';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { REST_PREFIX } from '../request/constants.js';
import type { HttpGuard } from '../request/http-guards.js';
import { sendError } from '../present/response.js';
import { OPENAPI_VERSION } from './document.js';

/** Where the reference page is served. */
export const API_REFERENCE_PATH = '/$api';

/** The page's icon: a page of lines on the explorer's blue (the plugin's default is Swagger's). */
const ICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d4ed8"/><path d="M4 4.5h8M4 8h8M4 11.5h5" stroke="#fff" stroke-width="1.6"/></svg>';

/** The document the page shows, served by the REST pipeline. */
const DOCUMENT = `${REST_PREFIX}/$openapi`;

export async function apiReferenceRoutes(app: FastifyInstance, guard: HttpGuard): Promise<void> {
  await app.register(async (scope) => {
    // a Host not ours (DNS rebinding) is refused here as on /rest; the plugin's /json and /yaml
    // are answered by the REST pipeline's document, for the session the cookie names
    scope.addHook('onRequest', async (request, reply) => {
      const refused = guard(request);
      if (refused) return sendError(reply, refused);
      const path = request.url.split('?')[0];
      if (path === `${API_REFERENCE_PATH}/json`) return reply.redirect(DOCUMENT, 302);
      if (path === `${API_REFERENCE_PATH}/yaml`) return reply.redirect(`${DOCUMENT}?format=yaml`, 302);
    });
    await scope.register(fastifyHelmet, {
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'none'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'"],
          // Swagger UI's icons and logo are data: URLs
          imgSrc: ["'self'", 'data:'],
          // the document, and "Try it out" requests: this server only
          connectSrc: ["'self'"],
          fontSrc: ["'self'"],
          formAction: ["'self'"],
          baseUri: ["'none'"],
          frameAncestors: ["'none'"],
        },
      },
      // plain HTTP on loopback by default: no HSTS from here (a proxy with TLS sets it)
      strictTransportSecurity: false,
    });
    // a placeholder the plugin requires: its /json is never read (the hook above sends it on)
    await scope.register(fastifySwagger, { mode: 'static', specification: { document: { openapi: OPENAPI_VERSION, info: { title: 'see /rest/$openapi', version: '1.0.0' }, paths: {} } } });
    await scope.register(fastifySwaggerUi, {
      routePrefix: API_REFERENCE_PATH,
      // (no validatorUrl: the plugin then sets none, and the page calls no validator on the internet)
      // (BaseLayout: the operations without StandaloneLayout's top bar, its logo and URL box)
      uiConfig: { deepLinking: true, tryItOutEnabled: false, withCredentials: true, displayOperationId: false, docExpansion: 'list', layout: 'BaseLayout' },
      theme: { title: 'REST API reference', favicon: [{ filename: 'icon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: ICON }] },
      // (the page answers no-store like the rest: it says nothing of the session itself, but a cache need not keep it either)
      uiHooks: {
        onRequest: (_request, reply, done) => {
          reply.header('cache-control', 'no-store');
          done();
        },
      },
    });
  });
}
