// The suite's write scenarios alone (bench/suite/writes.ts), from the command line:
//
//   node --import tsx bench/suite/writes-cli.ts [--rows 100000] [--seconds 10] [--rounds 4] [--warmup 2]
//        [--clients 10] [--workers 1] [--only create,update,batch,upload] [--cache DIR]
//
// The data set is generated (bench/suite/generate.ts) or copied from the cache folder (by default
// ~/.cache/dataset-rest-bench/data), once for our server's project and once more for the baseline,
// both in temporary folders removed at the end however the run ends. Prints a line per server and
// scenario as it goes, then a table.

import { copyFileSync, mkdirSync } from 'node:fs';
import { cpus, homedir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { formatTable } from '../measure.js';
import { temporaryFolder } from '../processes.js';
import { generateProject } from './generate.js';
import type { Comparison, Measurement } from './results.js';
import { runWriteScenarios, WRITE_SCENARIOS } from './writes.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '2' },
    clients: { type: 'string', default: '10' },
    workers: { type: 'string', default: '1' },
    only: { type: 'string' },
    cache: { type: 'string', default: join(homedir(), '.cache', 'dataset-rest-bench', 'data') },
  },
  strict: true,
});

const num = (name: string, text: string, min: number, whole = true): number => {
  const n = Number(text.replaceAll('_', ''));
  if (!Number.isFinite(n) || (whole && !Number.isInteger(n)) || n < min) throw new Error(`--${name} takes a ${whole ? 'whole ' : ''}number of ${min} or more, got '${text}'`);
  return n;
};
const rows = num('rows', values.rows, 1000);
const seconds = num('seconds', values.seconds, 0.1, false);
const rounds = num('rounds', values.rounds, 1);
const warmup = num('warmup', values.warmup, 0, false);
const clients = num('clients', values.clients, 1);
const workers = num('workers', values.workers, 1);
const only = values.only?.split(',').map((s) => s.trim());
for (const s of only ?? []) if (!(WRITE_SCENARIOS as readonly string[]).includes(s)) throw new Error(`--only takes ${WRITE_SCENARIOS.join(', ')}, got '${s}'`);

const started = performance.now();
const log = (line: string): void => console.log(`  ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s  ${line}`);

console.log(
  `write scenarios: ${rows.toLocaleString('en-US')} items; ${clients} closed-loop clients (keep-alive, 127.0.0.1); per server and scenario ${warmup} s warm-up, ` +
    `then ${seconds} s in ${rounds} alternating rounds; our server with --workers ${workers}; ${cpus().length} cores (shared with the load generator)`,
);
const projectDir = temporaryFolder('dataset-rest-writes-');
mkdirSync(values.cache, { recursive: true });
const g = await generateProject(projectDir, rows, { cacheDir: values.cache, log });
log(`data set: ${g.fromCache ? 'copied from the cache' : 'generated'} in ${(g.ms / 1000).toFixed(1)} s`);
const baselineDb = join(temporaryFolder('dataset-rest-writes-baseline-'), 'data.sqlite');
copyFileSync(g.db, baselineDb);

const comparisons = await runWriteScenarios({ projectDir, baselineDb, size: rows, seconds, rounds, warmupSeconds: warmup, clients, workers, only, log });

const n = (x: number | undefined, digits = 0): string => (x === undefined || Number.isNaN(x) ? 'n/a' : x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));
const perSecond = (c: Comparison, m: Measurement): string => (c.unitsPerRequest === 1 ? n(m.requestsPerSecond) : `${n(m.requestsPerSecond, 1)} (${n(m.requestsPerSecond * c.unitsPerRequest)} ent/s)`);
console.log(
  `\n${formatTable(
    ['scenario', 'ours req/s', 'baseline req/s', 'ratio', 'CPU µs/req ours', 'baseline', 'CPU ratio', 'p50 ms ours', 'baseline', 'p99 ms ours', 'baseline', 'failures ours', 'baseline'],
    comparisons.map((c) => [
      c.scenario, perSecond(c, c.ours), perSecond(c, c.baseline), n(c.ratio, 2), n(c.ours.cpuUsPerRequest), n(c.baseline.cpuUsPerRequest), n(c.cpuRatio, 2),
      n(c.ours.p50Ms, 2), n(c.baseline.p50Ms, 2), n(c.ours.p99Ms, 2), n(c.baseline.p99Ms, 2), String(c.ours.failures), String(c.baseline.failures),
    ]),
  )}`,
);
console.log('ratio: ours/baseline req/s; CPU ratio: baseline/ours CPU per request (the steadier figure: the load generator shares the cores)');
const failures = comparisons.reduce((s, c) => s + c.ours.failures + c.baseline.failures, 0);
if (failures > 0) {
  console.log(`${failures} requests FAILED`);
  process.exitCode = 1;
}
