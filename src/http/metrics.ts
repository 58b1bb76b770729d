// Prometheus metrics at GET /metrics (issue 17), served only with --metrics: requests by kind
// and status, their latency, function time-outs, the entity sets held (and their members), the
// uploads waiting for an entity, callers waiting for the database, and the process's own
// (CPU, memory, event-loop delay, GC: prom-client's default metrics), the answers being sent and
// the bytes they hold (rest/scope/answer-flight.ts), the webhooks' deliveries (rest/webhooks/).
//
// Like /health, the route answers whatever the Host header names (a scraper names the instance
// by its address) and needs no session: expose the port to the monitoring network only. With
// --workers N each worker counts its own requests, and a scrape answers the sum of all of them
// (cluster-metrics.ts); what is read from the database is taken once, not summed.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Logger } from '../util/log.js';
import { coreOf, type Datastore } from '../datastore/datastore.js';
import { plannedKind } from '../rest/pipeline.js';
import { REST_PREFIX } from '../rest/request/constants.js';
import { SECURITY_HEADERS } from '../rest/present/response.js';
import type { AnswerFlight } from '../rest/scope/answer-flight.js';
import { webhookStates, type WebhookState } from '../rest/webhooks/webhooks.js';
import { askSupervisor, isOneOfSeveral, shareWithSupervisor } from './cluster-metrics.js';

export const METRICS_PATH = '/metrics';

/** Request latency buckets, in seconds: a read by key takes well under a millisecond, a function may take its whole time limit. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The kind a request is counted as: the REST action it was planned as, else the route it took (few values: Prometheus labels must stay few). */
function kindOf(request: FastifyRequest, status: number): string {
  const planned = plannedKind(request.raw);
  if (planned) return planned;
  // (an OPTIONS plans nothing: it asks what the URL takes)
  if (request.method === 'OPTIONS') return 'options';
  const route = request.routeOptions.url;
  // (no route of this method: 405 where one of another method is, POST /health)
  if (route === undefined) return status === 405 ? 'methodNotAllowed' : 'notFound';
  if (route === REST_PREFIX || route.startsWith(`${REST_PREFIX}/`)) return 'refused';
  if (route === '/health' || route === '/ready' || route === METRICS_PATH) return route.slice(1);
  return 'page';
}

export async function metricsRoutes(app: FastifyInstance, ds: Datastore, log: Logger, answers?: AnswerFlight): Promise<Registry> {
  const core = coreOf(ds);
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry, prefix: 'dataset_rest_' });
  const requests = new Counter({ name: 'dataset_rest_requests_total', help: 'Requests answered, by kind (the REST action, or the route) and HTTP status.', labelNames: ['kind', 'status'], registers });
  const latency = new Histogram({ name: 'dataset_rest_request_duration_seconds', help: 'Time from the request\'s arrival to its answer, by kind.', labelNames: ['kind'], buckets: LATENCY_BUCKETS, registers });
  const timeouts = new Counter({ name: 'dataset_rest_function_timeouts_total', help: 'Function calls answered 504: past their time limit.', registers });
  // what is counted in the database is read when scraped (one statement each), shared by every instance
  const failed = (what: string) => (err: unknown) => {
    log.warn({ err }, `metrics: reading ${what} failed`);
    return undefined;
  };
  // (aggregator 'first': every worker reads the same rows, so their numbers are not added up)
  const sets = new Gauge({ name: 'dataset_rest_entity_sets', help: 'Entity sets held now (all instances: they are kept in the database), and their members.', labelNames: ['measure'], registers, aggregator: 'first',
    async collect() {
      const held = await core.sets.list().catch(failed('the entity sets'));
      if (!held) return;
      sets.set({ measure: 'sets' }, held.length);
      sets.set({ measure: 'members' }, held.reduce((n, s) => n + s.size, 0));
    },
  });
  const uploads = new Gauge({ name: 'dataset_rest_uploads_pending', help: 'Uploads no entity holds yet (all instances), and their bytes.', labelNames: ['measure'], registers, aggregator: 'first',
    async collect() {
      const pending = await core.files.pending().catch(failed('the pending uploads'));
      if (!pending) return;
      uploads.set({ measure: 'files' }, pending.count);
      uploads.set({ measure: 'bytes' }, pending.bytes);
    },
  });
  new Gauge({
    name: 'dataset_rest_database_waiting', help: 'Callers of this instance waiting now for a database connection or the writer.', registers,
    collect() {
      this.set(core.storage.waiting());
    },
  });

  // the webhooks (webhooks.json): each delivered by one instance (the lease's holder), whose numbers these are
  if (core.webhooks.configured.length > 0) {
    const labelNames = ['webhook'];
    const each = (set: (s: WebhookState) => void) => {
      for (const s of webhookStates(ds)) set(s);
    };
    new Gauge({ name: 'dataset_rest_webhook_delivering', help: 'Whether this instance delivers the webhook now (it holds its lease): 1 on one instance of all.', labelNames, registers,
      collect() { each((s) => this.set({ webhook: s.name }, s.delivering ? 1 : 0)); } });
    new Gauge({ name: 'dataset_rest_webhook_stamp', help: 'The stamp up to which the webhook\'s receiver has every change (its cursor).', labelNames, registers, aggregator: 'max',
      collect() { each((s) => this.set({ webhook: s.name }, s.stamp)); } });
    new Gauge({ name: 'dataset_rest_webhook_pending_changes', help: 'Changes read and not yet delivered to the webhook\'s receiver.', labelNames, registers,
      collect() { each((s) => this.set({ webhook: s.name }, s.pending)); } });
    new Gauge({ name: 'dataset_rest_webhook_deliveries', help: 'Deliveries since this instance started: taken by the receiver (a 2xx), and attempts that failed (each retried).', labelNames: ['webhook', 'outcome'], registers,
      collect() { each((s) => { this.set({ webhook: s.name, outcome: 'delivered' }, s.delivered); this.set({ webhook: s.name, outcome: 'failed' }, s.failed); }); } });
    new Gauge({ name: 'dataset_rest_webhook_failing', help: 'Attempts that failed in a row since the last delivery taken (0: the receiver takes them).', labelNames, registers,
      collect() { each((s) => this.set({ webhook: s.name }, s.failing)); } });
  }

  if (answers) {
    new Gauge({
      name: 'dataset_rest_answers_in_flight', help: 'Answers of this instance being sent now, and the bytes they hold (measured and not yet made into text, or made and not yet taken by the kernel: --max-answers-in-flight).', labelNames: ['measure'], registers,
      collect() {
        this.set({ measure: 'answers' }, answers.answers);
        this.set({ measure: 'bytes' }, answers.inFlight());
      },
    });
  }

  app.addHook('onResponse', (request, reply, done) => {
    const kind = kindOf(request, reply.statusCode);
    requests.inc({ kind, status: String(reply.statusCode) });
    latency.observe({ kind }, reply.elapsedTime / 1000);
    if (kind === 'callFunction' && reply.statusCode === 504) timeouts.inc();
    done();
  });
  const several = isOneOfSeveral();
  if (several) await shareWithSupervisor(registry);
  app.get(METRICS_PATH, async (_request, reply) => {
    const text = several ? await askSupervisor() : await registry.metrics();
    return reply.headers(SECURITY_HEADERS).type(registry.contentType).send(text);
  });
  return registry;
}
