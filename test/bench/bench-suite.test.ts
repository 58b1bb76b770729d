// The benchmark suite compares our server with a hand-written baseline that must answer the same
// bytes for every read (bench/suite/baseline-reads.ts): if our answers change (a new attribute in
// the wire form, another order) the comparison would no longer be fair. This runs the suite's own
// check on a small data set, both servers as real processes on 127.0.0.1 — the short mode of
// `npm run bench`, whose loaded runs are too long for the tests.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateProject, type Generated } from '../../bench/suite/generate.js';
import { checkReads, makeSet, READS, startBaseline, startOurs } from '../../bench/suite/reads.js';
import type { ServerProcess } from '../../bench/processes.js';
import { tempDir } from '../support/helpers.js';

const SIZE = 2500;

describe('the benchmark suite\'s read baseline', () => {
  const tmp = tempDir();
  let g: Generated;
  let ours: ServerProcess;
  let baseline: ServerProcess;

  before(async () => {
    g = await generateProject(join(tmp.dir, 'project'), SIZE);
    [ours, baseline] = await Promise.all([startOurs(g.dir, 1), startBaseline(g.db)]);
  });
  after(async () => {
    await Promise.all([ours?.stop(), baseline?.stop()]);
    tmp.remove();
  });

  it('answers every read scenario with the bytes our server answers (the global stamp aside)', async () => {
    const set = await makeSet(ours.url);
    assert.match(set, /^\/rest\/Item\/\$entityset\/[0-9A-F]{32}$/);
    await checkReads(ours.url, baseline.url, SIZE, set, READS);
  });

  it('tells when the answers differ', async () => {
    const wrong = { ...READS[0], baseline: (n: number) => `/item/${n + 2}` };
    await assert.rejects(checkReads(ours.url, baseline.url, SIZE, '', [wrong]), /differ/);
  });
});
