// The write bench (`npm run bench:write`): through our server (a child process, 127.0.0.1),
//   (a) single-entity updates ($method=update with __KEY and __STAMP), each client updating its
//       own entity in a loop with the stamp of the previous answer;
//   (b) 1,000-entity batch creates ($method=update with an array), one after another;
//   (c) the same batches with $atomic=true.
// It prints updates/s, entities/s and latencies. Options: --duration S (5), --clients N (10).

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MODEL } from './fixture.js';
import { Latencies } from './measure.js';
import { startServer, temporaryFolder } from './processes.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BATCH = 1000;

const { values } = parseArgs({ options: { duration: { type: 'string', default: '5' }, clients: { type: 'string', default: '10' } } });
const seconds = Number(values.duration);
const clients = Number(values.clients);
if (!(seconds > 0) || !(clients > 0)) throw new Error('--duration and --clients take positive numbers');

const dir = temporaryFolder('dataset-rest-write-bench-');
// the bench's one-dataclass model (Item); this bench fills it through the server itself
writeFileSync(join(dir, 'model.json'), JSON.stringify(MODEL));
const server = await startServer({
  name: 'ours',
  args: ['bin/dataset-rest.mjs', '--project', dir, '--port', '0', '--log-level', 'warn'],
  cwd: ROOT,
  ready: /dataset-rest listening on (http:\/\/\S+)\/rest/,
});
const base = `${server.url}/rest`;

async function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const item = (i: number) => ({ name: `item ${i}`, price: i * 1.5, qty: i % 100, created: new Date(Date.UTC(2020, 0, 1) + i * 60_000).toISOString() });

/** Runs `step` in `clients` loops for the duration; returns how many steps ran and their latencies. */
async function load(step: (client: number) => Promise<void>): Promise<{ count: number; elapsed: number; latencies: Latencies }> {
  const latencies = new Latencies();
  let count = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    while (performance.now() < end) {
      const t = performance.now();
      await step(c);
      latencies.add(performance.now() - t);
      count++;
    }
  }));
  return { count, elapsed: (performance.now() - started) / 1000, latencies };
}

try {
  // (a) each client owns one entity and updates it with the stamp of its last answer
  const own = await post('/Item?$method=update', Array.from({ length: clients }, (_, i) => item(i)));
  const entities = (own.json.__ENTITIES as { __KEY: string; __STAMP: number }[]).map((e) => ({ key: e.__KEY, stamp: e.__STAMP }));
  let failures = 0;
  const updates = await load(async (c) => {
    const e = entities[c];
    const r = await post('/Item?$method=update', { __KEY: e.key, __STAMP: e.stamp, qty: e.stamp });
    if (r.status !== 200) failures++;
    else e.stamp = r.json.__STAMP as number;
  });
  const report = (what: string, r: Awaited<ReturnType<typeof load>>, per = 1) =>
    console.log(`${what}: ${(r.count * per / r.elapsed).toFixed(0)} ${per === 1 ? 'updates' : 'entities'}/s (${(r.count / r.elapsed).toFixed(1)} requests/s), p50 ${r.latencies.percentile(50).toFixed(2)} ms, p99 ${r.latencies.percentile(99).toFixed(2)} ms, ${r.count} requests`);
  report(`(a) single-entity update, ${clients} clients`, updates);
  if (failures > 0) throw new Error(`${failures} updates failed`);

  // (b), (c) batches of 1,000 new entities, one client (a batch holds the writer anyway)
  let next = 1_000_000;
  for (const atomic of [false, true]) {
    const batches = await (async () => {
      const latencies = new Latencies();
      let count = 0;
      const started = performance.now();
      while (performance.now() < started + seconds * 1000) {
        const t = performance.now();
        const r = await post(`/Item?$method=update${atomic ? '&$atomic=true' : ''}`, Array.from({ length: BATCH }, () => item(next++)));
        if (r.status !== 200) throw new Error(`a batch failed with ${r.status}`);
        latencies.add(performance.now() - t);
        count++;
      }
      return { count, elapsed: (performance.now() - started) / 1000, latencies };
    })();
    report(`(${atomic ? 'c' : 'b'}) ${BATCH}-entity batch create${atomic ? ' with $atomic=true' : ''}`, batches, BATCH);
  }
} finally {
  await server.stop();
}
