// BENCHMARKS.md and its chart again, from a saved results file, without measuring anything:
//
//   node --import tsx bench/suite/report-cli.ts [bench/results/latest.json] [--report BENCHMARKS.md] [--chart docs/benchmarks.svg]
//
// Paths are relative to the repository root (found from this file, not from the working directory);
// absolute ones are taken as they are. The report links the chart and the results file by their
// paths relative to the report's folder.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderChart } from './chart.js';
import { renderReport } from './report.js';
import type { SuiteResults } from './results.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const { values, positionals } = parseArgs({
  options: {
    report: { type: 'string', default: 'BENCHMARKS.md' },
    chart: { type: 'string', default: 'docs/benchmarks.svg' },
  },
  allowPositionals: true,
  strict: true,
});
if (positionals.length > 1) throw new Error(`one results file at most, got ${positionals.length}: ${positionals.join(' ')}`);

const fromRoot = (path: string): string => (isAbsolute(path) ? path : resolve(ROOT, path));
/** a link from the report's folder, with forward slashes */
const link = (from: string, to: string): string => relative(dirname(from), to).split(sep).join('/');

const resultsFile = fromRoot(positionals[0] ?? 'bench/results/latest.json');
const reportFile = fromRoot(values.report);
const chartFile = fromRoot(values.chart);

const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as SuiteResults;
const lists = ['args', 'generated', 'comparisons', 'peers', 'scaling', 'notes'] as const;
const missing = lists.filter((key) => !Array.isArray(results[key]));
if (missing.length > 0 || typeof results.machine !== 'object' || typeof results.versions !== 'object' || typeof results.settings !== 'object') {
  throw new Error(`${resultsFile} is not the suite's results (bench/suite/results.ts): ${missing.length > 0 ? `no ${missing.join(', ')}` : 'no machine, versions or settings'}`);
}

mkdirSync(dirname(chartFile), { recursive: true });
mkdirSync(dirname(reportFile), { recursive: true });
writeFileSync(chartFile, renderChart(results));
writeFileSync(reportFile, renderReport(results, { chartPath: link(reportFile, chartFile), jsonPath: link(reportFile, resultsFile) }));
/** a path as given to the reader: from the root when it is inside the repository */
const shown = (file: string): string => (relative(ROOT, file).startsWith('..') ? file : relative(ROOT, file));
console.log(`${shown(reportFile)} and ${shown(chartFile)} written from ${shown(resultsFile)}`);
