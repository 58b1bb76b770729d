// The write bench (`npm run bench:write`), in two parts.
//
// First, side by side with the MINIMAL hand-written baseline (issue 39: bench/suite/baseline-writes.ts
// without the contract's headers — node:http + better-sqlite3, prepared statements,
// JSON.stringify, content-type and content-length only), each over its own copy of the suite's
// shop data set (--rows items), in alternating rounds (bench/suite/writes.ts): create one entity,
// update one entity with its stamp, and a 1,000-entity $atomic batch. It prints, per scenario,
// the ratio of requests per second and the server CPU µs per request of each, with their ratio
// (the steadier figure: the load generator shares the cores).
//
// Then, through our server alone over the bench's one-dataclass model (bench/fixture.ts):
//   (a) single-entity updates ($method=update with __KEY and __STAMP), each client updating its
//       own entity in a loop with the stamp of the previous answer;
//   (b) 1,000-entity batch creates ($method=update with an array), one after another;
//   (c) the same batches with $atomic=true.
// It prints updates/s, entities/s and latencies.
//
// Options: --duration S (5: each part's measured seconds per server and scenario), --clients N (10),
// --rows N (10000), --rounds N (2), --only create,update,batch (the comparison's scenarios),
// --no-standalone (the comparison alone), --no-baseline (the standalone part alone).

import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MODEL } from './fixture.js';
import { formatTable, Latencies } from './measure.js';
import { startServer, temporaryFolder } from './processes.js';
import { generateProject } from './suite/generate.js';
import { runWriteScenarios } from './suite/writes.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BATCH = 1000;

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    clients: { type: 'string', default: '10' },
    rows: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '2' },
    only: { type: 'string', default: 'create,update,batch' },
    'no-standalone': { type: 'boolean', default: false },
    'no-baseline': { type: 'boolean', default: false },
  },
});
const seconds = Number(values.duration);
const clients = Number(values.clients);
const rows = Number(values.rows);
const rounds = Number(values.rounds);
if (!(seconds > 0) || !(clients > 0) || !(rows >= 1000) || !(rounds >= 1)) throw new Error('--duration, --clients, --rounds take positive numbers, --rows 1000 or more');

if (!values['no-baseline']) {
  const started = performance.now();
  const log = (line: string): void => console.log(`  ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s  ${line}`);
  console.log(`side by side with the minimal baseline: ${rows} items, ${clients} clients, ${seconds} s per server and scenario in ${rounds} alternating rounds (Node ${process.version})`);
  const cache = join(homedir(), '.cache', 'dataset-rest-bench', 'data');
  mkdirSync(cache, { recursive: true });
  const projectDir = temporaryFolder('dataset-rest-write-bench-ours-');
  const g = await generateProject(projectDir, rows, { cacheDir: cache });
  const baselineDb = join(temporaryFolder('dataset-rest-write-bench-baseline-'), 'data.sqlite');
  copyFileSync(g.db, baselineDb);
  const comparisons = await runWriteScenarios({
    projectDir, baselineDb, size: rows, seconds, rounds, warmupSeconds: 1, clients, only: values.only.split(',').map((x) => x.trim()), minimal: true, log,
  });
  const n = (x: number | undefined, digits = 0): string => (x === undefined || Number.isNaN(x) ? 'n/a' : x.toFixed(digits));
  console.log(`\n${formatTable(
    ['scenario', 'ours req/s', 'minimal baseline req/s', 'ratio', 'CPU µs/req ours', 'baseline', 'CPU ratio', 'p50 ms ours', 'baseline', 'failures'],
    comparisons.map((c) => [c.scenario, n(c.ours.requestsPerSecond), n(c.baseline.requestsPerSecond), n(c.ratio, 2), n(c.ours.cpuUsPerRequest), n(c.baseline.cpuUsPerRequest), n(c.cpuRatio, 2), n(c.ours.p50Ms, 2), n(c.baseline.p50Ms, 2), String(c.ours.failures + c.baseline.failures)]),
  )}`);
  console.log('ratio: ours/baseline req/s (target ≥ 0.8 for create and update, issue 39); CPU ratio: baseline/ours CPU per request\n');
  if (comparisons.some((c) => c.ours.failures + c.baseline.failures > 0)) process.exitCode = 1;
}
if (values['no-standalone']) process.exit();

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
