// The fuzz suite over the whole request surface (issue 19), short mode: a few thousand requests of
// test/support/fuzz-requests.ts — paths, keys, every $-option, bodies, headers, function calls, uploads,
// valid and near-valid and junk — sent in process to the demo (on SQLite, then on PostgreSQL). Every
// answer: no 5xx but a function's own failure (7019, 7020, 7022) or the storage's deliberate
// 503/507; every refusal a typed __ERROR. Afterwards the server still answers and the database is
// intact. The long mode is `npm run fuzz` (bench/fuzz.ts: a million requests).
//
// A fixed seed by default, printed; DATASET_REST_FUZZ_SEED and DATASET_REST_FUZZ_RUNS change the
// seed and the number of requests. A failure names fast-check's seed and path and the request that
// failed, as a curl command line.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DEMO_DIR, openDemo, TEST_ENGINE, type DemoFixture } from '../support/helpers.js';
import { describe as describeRequest, inject, check, integrityProblems, Learned, requestArbitrary, type FuzzRequest } from '../support/fuzz-requests.js';

const SEED = Number(process.env.DATASET_REST_FUZZ_SEED ?? 19_2026);
const RUNS = Number(process.env.DATASET_REST_FUZZ_RUNS ?? 3000);

fc.configureGlobal({ includeErrorInReport: true });

/** Sends `runs` requests to the demo, checks each answer, then that the server answers and the database is whole. */
async function fuzz(demo: DemoFixture, runs: number, label: string): Promise<void> {
  const employees = await demo.ds.dataClass('Employee')!.all().slice(0, 8).toArray();
  const ctx = { employeeKeys: employees.map((e) => String(e.getKey())) };
  const learned = new Learned();
  const statuses = new Map<number, number>();
  let sent = 0;
  const started = Date.now();
  console.log(`# surface-fuzz (${TEST_ENGINE}, ${label}): seed ${SEED}, ${runs} requests (DATASET_REST_FUZZ_SEED / DATASET_REST_FUZZ_RUNS)`);
  await fc.assert(
    fc.asyncProperty(requestArbitrary(ctx), async (generated: FuzzRequest) => {
      const r = learned.materialize(generated);
      const answer = await inject(demo.app, r);
      sent++;
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      learned.learn(r, answer);
      const wrong = await check(demo.app, r, answer);
      assert.equal(wrong, undefined, `${wrong}\n  request: ${describeRequest(r)}`);
    }),
    { seed: SEED, numRuns: runs, endOnFailure: true },
  );
  const histogram = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}:${n}`).join(' ');
  console.log(`# surface-fuzz (${TEST_ENGINE}, ${label}): ${sent} requests in ${((Date.now() - started) / 1000).toFixed(1)} s; statuses ${histogram}; ${learned.sets.length} sets, ${learned.images.length + learned.binaries.length} uploads, ${learned.logins.length} logins kept`);
  // the answers covered more than refusals
  assert.ok((statuses.get(200) ?? 0) > runs / 20, `few 200s: ${histogram}`);

  // the server still answers, and the database is whole
  assert.equal((await demo.request('/rest/$catalog')).status, 200);
  const page = await demo.request('/rest/Company?$top=1');
  assert.equal(page.status, 200, JSON.stringify(page.body).slice(0, 300));
  assert.deepEqual(await integrityProblems(demo.ds), []);
}

describe(`surface fuzz (${TEST_ENGINE})`, () => {
  it(`answers ${RUNS} requests to an open datastore without a server error, each refusal a typed __ERROR; the database intact afterwards`, { timeout: 600_000 }, async () => {
    // a short function time limit: a call told to wait ends early (504, its own failure)
    const demo = await openDemo({ functionTimeoutMs: 300 });
    try {
      await fuzz(demo, RUNS, 'open');
    } finally {
      await demo.close();
    }
  });

  it(`answers ${Math.ceil(RUNS / 4)} requests to the demo with its roles.json (guests refused, logins) the same way`, { timeout: 600_000 }, async () => {
    const demo = await openDemo({ functionTimeoutMs: 300, roles: join(DEMO_DIR, 'roles.json') });
    try {
      await fuzz(demo, Math.ceil(RUNS / 4), 'roles.json');
    } finally {
      await demo.close();
    }
  });
});
