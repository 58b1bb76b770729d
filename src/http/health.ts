// /health and /ready, outside /rest, for load balancers and orchestrators (issue 17): /health says
// the process answers; /ready that it can serve (its database answers a statement, its schema was
// applied when the datastore opened, and it is not draining on its way out). Neither reads data
// nor needs a session, and both answer whatever the Host header says: a probe names the instance
// by its address, which --allowed-hosts need not list, and the answer tells nothing of the data.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { coreOf, type Datastore } from '../datastore/datastore.js';
import { SECURITY_HEADERS } from '../rest/present/response.js';
import type { Logger } from '../util/log.js';

/** How long /ready waits for the database before it answers 503. */
const READY_TIMEOUT_MS = 2000;

export function healthRoutes(app: FastifyInstance, ds: Datastore, log: Logger): void {
  // Once closing, the listening socket is closed (a probe's new connection is refused); a probe
  // on a connection still open is answered 503. (Not covered by a test: Fastify closes idle
  // connections at once, so only a request already being read can see it.)
  let draining = false;
  app.addHook('preClose', (done) => {
    draining = true;
    done();
  });
  // (a 503 names its request, as every error does: server.ts)
  const answer = (reply: FastifyReply, status: number, body: Record<string, unknown>) =>
    (status >= 400 ? reply.header('x-request-id', reply.request.id) : reply).code(status).headers(SECURITY_HEADERS).header('cache-control', 'no-store').type('application/json; charset=utf-8').send(JSON.stringify(body));

  app.get('/health', (_request, reply) => answer(reply, 200, { status: 'ok' }));

  app.get('/ready', async (request, reply) => {
    if (draining) return answer(reply, 503, { status: 'draining' });
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        coreOf(ds).storage.get('SELECT 1 AS ok'),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS))),
      ]);
      return answer(reply, 200, { status: 'ready' });
    } catch (err) {
      log.warn({ err, reqId: request.id }, '/ready: the database does not answer');
      return answer(reply, 503, { status: 'database unreachable' });
    } finally {
      clearTimeout(timer);
    }
  });
}
