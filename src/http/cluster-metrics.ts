// Metrics of every worker in one scrape (--workers N with --metrics): the worker a scrape reaches
// asks the supervisor, which gathers each worker's registry (prom-client's AggregatorRegistry,
// over the cluster's IPC channel) and answers the sum. Without it a scrape would count the
// requests of whichever worker took the connection.

import cluster, { type Worker } from 'node:cluster';
import type { Registry } from 'prom-client';

const ASK = 'dataset-rest:metrics?';
const ANSWER = 'dataset-rest:metrics';
/** How long a worker waits for the supervisor's sum (prom-client waits 5 s for each worker). */
const ANSWER_TIMEOUT_MS = 6_000;

interface Answer {
  readonly type: typeof ANSWER;
  readonly id: number;
  readonly text?: string;
  readonly error?: string;
}

/** In the supervisor: answers a worker's requests for everyone's metrics. */
export function answerMetricsOf(worker: Worker): void {
  worker.on('message', (m: { type?: unknown; id?: unknown }) => {
    if (m?.type !== ASK || typeof m.id !== 'number') return;
    const id = m.id;
    void gather().then(
      (text) => worker.isConnected() && worker.send({ type: ANSWER, id, text } satisfies Answer),
      (e: unknown) => worker.isConnected() && worker.send({ type: ANSWER, id, error: (e as Error).message } satisfies Answer),
    );
  });
}

let aggregator: Promise<{ clusterMetrics(): Promise<string> }> | undefined;

/** prom-client is loaded in the supervisor only once a worker asks (the command itself loads little). */
function gather(): Promise<string> {
  aggregator ??= import('prom-client').then(({ AggregatorRegistry }) => new AggregatorRegistry());
  return aggregator.then((a) => a.clusterMetrics());
}

/** In a worker of several: its registry answers the supervisor's requests. */
export async function shareWithSupervisor(registry: Registry): Promise<void> {
  const { AggregatorRegistry } = await import('prom-client');
  AggregatorRegistry.setRegistries([registry]);
  // (constructing one sets up the worker's side of prom-client's requests)
  new AggregatorRegistry();
}

/** True in a cluster worker (--workers 2 or more): a scrape needs every worker's numbers. */
export function isOneOfSeveral(): boolean {
  return cluster.isWorker && typeof process.send === 'function';
}

let asked = 0;
const waiting = new Map<number, (a: Answer) => void>();

/** In a worker: every worker's metrics, summed by the supervisor. */
export function askSupervisor(): Promise<string> {
  if (waiting.size === 0) process.on('message', onAnswer);
  const id = ++asked;
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => settle({ type: ANSWER, id, error: `no answer from the supervisor in ${ANSWER_TIMEOUT_MS} ms` }), ANSWER_TIMEOUT_MS);
    const settle = (a: Answer) => {
      clearTimeout(timer);
      waiting.delete(id);
      if (waiting.size === 0) process.off('message', onAnswer);
      if (a.text !== undefined) resolve(a.text);
      else reject(new Error(a.error ?? 'no metrics'));
    };
    waiting.set(id, settle);
    process.send?.({ type: ASK, id });
  });
}

function onAnswer(m: Partial<Answer>): void {
  if (m?.type === ANSWER && typeof m.id === 'number') waiting.get(m.id)?.(m as Answer);
}
