// The attack's short mode (bench/attack.ts, issue 34) in `npm test`: every finding of the two
// black-box probes (issues 19 and 34) replayed, each case scaled down (limits lowered through the
// server's own options so that a smaller attack crosses them), against a real server process on
// SQLite and on PostgreSQL — a fresh database of the run's server (freshDatabase), not one of
// this file's own. One test per case and engine: it held, or the line says what was measured.
// test/run.ts runs this file alone: its cases time the answers other clients get while one
// attacks. Those time bounds are printed (HELD* when one was missed) but fail a case only with
// DATASET_REST_TIMED_BOUNDS=1: a shared machine misses them with the server at fault in nothing,
// and speed is the full attack's and the benches' to judge (Verdict.timed). A case that fails is
// run once more, both tries told in its line (runJudged); the full attack tries each once.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CASES, caseLine, runAttack, type AttackReport } from '../../bench/attack.js';
import { freshDatabase } from '../support/postgres-server.js';

const ENGINES = ['sqlite', 'postgres'] as const;

describe('the attack, short mode: the findings of both probes, on both engines', () => {
  let report: AttackReport;
  let drop: (() => Promise<void>) | undefined;
  const lines: string[] = [];
  before(async () => {
    const pg = await freshDatabase();
    drop = pg.drop;
    report = await runAttack({ engines: ENGINES, short: true, databases: { postgres: pg.url }, print: (line) => lines.push(line) });
  }, { timeout: 540_000 });
  after(async () => {
    // (how long it took is printed, never judged: timings belong to the benches)
    if (report) console.log(`# the attack's short mode: ${report.cases.filter((c) => c.held && !c.skipped).length} of ${report.cases.length} cases held in ${report.seconds} s`);
    await drop?.();
  });

  for (const engine of ENGINES) {
    for (const c of CASES.filter((x) => (x.engines ?? ENGINES).includes(engine))) {
      it(`${engine}: ${c.id} (#${c.issue}) holds: ${c.target}`, (t) => {
        const r = report.cases.find((x) => x.engine === engine && x.id === c.id);
        assert.ok(r, `the case did not run:\n${lines.join('\n')}`);
        if (r.skipped) {
          t.skip(r.skipped);
          return;
        }
        t.diagnostic(caseLine(r));
        assert.ok(r.held, caseLine(r));
      });
    }
  }
});
