// The big-writes bench (`node --import tsx bench/big-writes-bench.ts`, issue 19): how long one big
// write holds the server's event loop, and whether other requests get through while it runs.
// In one process (the server is built in-process and driven through Fastify's inject, so the loop
// measured is the server's own), on the bench's one-dataclass model (Item, bench/fixture.ts):
//   1. a filtered delete: POST /rest/Item?$filter="ID > :1"&$method=delete over --delete-rows rows
//      (250,000) of a table of that many plus 10,000;
//   2. a batch create: POST /rest/Item?$method=update with an array of --batch new entities;
//   3. a batch update of as many existing entities (__KEY and __STAMP each), and the same with $atomic=true.
// For each: the write's time, the longest event-loop stall while it ran (perf_hooks
// monitorEventLoopDelay, 10 ms resolution: its max is the longest time a timer waited), and a probe
// that reads one entity by key (GET /rest/Item(1)) over and over meanwhile: how many reads were
// answered before the write finished, and the slowest.
// Options: --engine sqlite|postgres|both (sqlite), --delete-rows N (250000), --batch N (20000),
// --probe-interval MS (5; 0: no probe, to time the write alone).
// On PostgreSQL: a throwaway embedded cluster, or a new database on DATASET_REST_BENCH_PG's server.

import { strictEqual } from 'node:assert/strict';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { openProject } from '../src/project/open.js';
import { buildServer } from '../src/http/server.js';
import { createProject, TABLE } from './fixture.js';
import { benchDatabase } from './postgres.js';
import { temporaryFolder } from './processes.js';

const { values } = parseArgs({ options: { engine: { type: 'string', default: 'sqlite' }, 'delete-rows': { type: 'string', default: '250000' }, batch: { type: 'string', default: '20000' }, 'probe-interval': { type: 'string', default: '5' } } });
const engines = ({ sqlite: ['sqlite'], postgres: ['postgres'], both: ['sqlite', 'postgres'] } as Record<string, string[]>)[values.engine];
if (!engines) throw new Error(`--engine is sqlite, postgres or both, got '${values.engine}'`);
const deleteRows = Number(values['delete-rows']);
const batch = Number(values.batch);
const KEPT = 10_000;
/** ms between two reads of the probe; 0: no probe (the write's own time, alone on the loop) */
const probeInterval = Number(values['probe-interval']);

interface Figures {
  ms: number;
  stallMs: number;
  gapMs: number;
  probes: number;
  slowestProbeMs: number;
}

type Inject = (method: 'GET' | 'POST', url: string, body?: unknown) => Promise<{ status: number; body: string }>;

/** Runs `write` with the loop monitored and a probe reading Item(1) in a loop until it ends. */
async function measured(inject: Inject, write: () => Promise<void>): Promise<Figures> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  // (a few samples first: the histogram ignores its first, and a write that starts at once would
  // block the loop before it — its stall would go unrecorded)
  await new Promise((r) => setTimeout(r, 50));
  let done = false;
  let probes = 0;
  let slowest = 0;
  const probe = (async () => {
    // (the first read starts once the write has begun: it has to get through while the write runs)
    await new Promise((r) => setImmediate(r));
    while (!done && probeInterval > 0) {
      const t = performance.now();
      const res = await inject('GET', `/rest/${TABLE}(1)`);
      strictEqual(res.status, 200, res.body);
      if (done) break;
      probes++;
      slowest = Math.max(slowest, performance.now() - t);
      await new Promise((r) => setTimeout(r, probeInterval));
    }
  })();
  // the same seen from a 1 ms interval timer: the longest gap between two of its ticks
  let last = performance.now();
  let gap = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, 1);
  const started = performance.now();
  try {
    await write();
  } finally {
    done = true;
  }
  const ms = performance.now() - started;
  // (a timer's turn, so that the stall that ends with the write is sampled too)
  await new Promise((r) => setTimeout(r, 20));
  h.disable();
  clearInterval(tick);
  await probe;
  return { ms, stallMs: h.max / 1e6, gapMs: gap, probes, slowestProbeMs: slowest };
}

const line = (name: string, f: Figures) => console.log(`  ${name.padEnd(34)} ${(f.ms / 1000).toFixed(2).padStart(7)} s   longest stall ${f.stallMs.toFixed(0).padStart(6)} ms (timer gap ${f.gapMs.toFixed(0).padStart(6)} ms)   reads by key answered meanwhile ${String(f.probes).padStart(5)} (slowest ${f.slowestProbeMs.toFixed(0)} ms)`);

async function run(engine: string): Promise<void> {
  const dir = temporaryFolder('dataset-rest-big-writes-');
  const pg = engine === 'postgres' ? await benchDatabase() : undefined;
  try {
    const project = await createProject(dir, deleteRows + KEPT, 'sql', pg?.url);
    console.log(`${engine}${pg ? ` (${pg.where})` : ''}: ${deleteRows + KEPT} rows filled in ${(project.fillMs / 1000).toFixed(1)} s`);
    const ds = await openProject(dir, { db: project.db, roles: false });
    const app = await buildServer(ds, { logLevel: 'silent', maxBodyBytes: 1 << 30, maxBatchEntities: Math.max(batch, 1) });
    const inject: Inject = async (method, url, body) => {
      // (a body given as a string: the bench's own JSON work is done before the write is timed)
      const payload = typeof body === 'string' ? { payload: body, headers: { 'content-type': 'application/json' } } : body === undefined ? {} : { payload: body as object };
      const res = await app.inject({ method, url, ...payload });
      return { status: res.statusCode, body: res.body };
    };
    try {
      // 1. the filtered delete
      const del = await measured(inject, async () => {
        const res = await inject('POST', `/rest/${TABLE}?$filter=${encodeURIComponent(`ID > ${KEPT}`)}&$method=delete`);
        strictEqual(res.status, 200, res.body);
      });
      const left = JSON.parse((await inject('GET', `/rest/${TABLE}?$top=0`)).body).__COUNT;
      strictEqual(left, KEPT);
      line(`filtered delete of ${deleteRows}`, del);
      // 2. a batch of new entities
      // (the bodies are made, and the answers read, outside the time measured: the bench's own JSON
      // work on this loop is not the server's)
      const created: { __KEY: string; __STAMP: number }[] = [];
      let answer = '';
      const items = JSON.stringify(Array.from({ length: batch }, (_, i) => ({ name: `new-${i}`, price: i / 10, qty: i % 1000 })));
      const create = await measured(inject, async () => {
        const res = await inject('POST', `/rest/${TABLE}?$method=update&$attributes=ID`, items);
        strictEqual(res.status, 200, res.body.slice(0, 500));
        answer = res.body;
      });
      for (const e of JSON.parse(answer).__ENTITIES) created.push({ __KEY: e.__KEY, __STAMP: e.__STAMP });
      line(`batch create of ${batch}`, create);
      // 3. the same entities updated, then again as one all-or-nothing batch
      for (const atomic of [false, true]) {
        const updates = JSON.stringify(created.map((e, i) => ({ ...e, qty: (i * 7) % 1000 })));
        const update = await measured(inject, async () => {
          const res = await inject('POST', `/rest/${TABLE}?$method=update&$attributes=ID${atomic ? '&$atomic=true' : ''}`, updates);
          strictEqual(res.status, 200, res.body.slice(0, 500));
          answer = res.body;
        });
        JSON.parse(answer).__ENTITIES.forEach((e: { __KEY: string; __STAMP: number }, i: number) => (created[i].__STAMP = e.__STAMP));
        line(`batch update of ${batch}${atomic ? ' ($atomic)' : ''}`, update);
      }
    } finally {
      await app.close();
      await ds.close();
    }
  } finally {
    await pg?.close();
  }
}

for (const engine of engines) await run(engine);
console.log('(stall: monitorEventLoopDelay max at 10 ms resolution; timer gap: the longest time between two ticks of a 1 ms setInterval while the write ran)');
