// The soak's short mode (bench/soak.ts, issue 19), in `npm test`: twenty seconds of the same mixed
// load (reads, writes, entity sets, uploads, function calls, a trickled body and a stalled one)
// against a real server process on a fresh demo database. It asserts what must hold on any
// machine — no 5xx, the process alive, the database intact — never a timing nor the memory curve
// (so short a run is all warm-up; `npm run soak` judges memory over 30 minutes).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { runSoak } from '../../bench/soak.js';
import { TEST_ENGINE, tempDir, testDatabase } from '../support/helpers.js';

describe('soak, short mode', () => {
  const tmp = tempDir();
  after(() => tmp.remove());

  it('serves twenty seconds of mixed load from concurrent clients with no 5xx, the server alive and the database intact at the end', async (t) => {
    const lines: string[] = [];
    const summary = await runSoak({
      minutes: 1 / 3, engine: TEST_ENGINE, db: await testDatabase(join(tmp.dir, 'soak.sqlite')),
      clients: 3, sampleSeconds: 5, seed: 19, outDir: tmp.dir, print: (line) => lines.push(line),
    });
    t.diagnostic(`statuses ${JSON.stringify(summary.statuses)}; RSS ${summary.sparkline}`);
    assert.ok(summary.requests > 0, 'no request was answered');
    assert.deepEqual(summary.serverErrors, [], `answers of 5xx:\n${lines.join('\n')}\nthe server's errors:\n${readFileSync(summary.serverLog, 'utf8').slice(-4000)}`);
    assert.ok(summary.alive, `the server is not alive at the end:\n${lines.join('\n')}`);
    assert.deepEqual(summary.integrity, [], 'the database afterwards');
    assert.ok(Object.keys(summary.counts).includes('Employee'), `the counts read at the end: ${JSON.stringify(summary.counts)}`);
  });
});
