// BENCHMARKS.md (issue 16), written from one run's SuiteResults: what is compared and the headline,
// the chart (chart.ts), how to reproduce, the machine and versions, a table per group (ours against
// the hand-written baseline), the peers, the scaling ("cost follows the page"), the data generation
// and the run's notes. Every figure is the run's; "met" is written only where the ratio reaches its
// target. The same input gives the same text (no locale, no clock).

import {
  bareVersion,
  comparisonVariant,
  ENGINE_NAME,
  formatRatio,
  formatTarget,
  GROUP_ORDER,
  groupDigits,
  machineLine,
  orderedComparisons,
  runDate,
  sizeLabel,
  sizesOf,
  targetStatus,
  withoutNulls,
} from './chart.js';
import type { Comparison, Group, Measurement, PeerComparison, Scaling, SuiteResults } from './results.js';

export interface ReportOptions {
  /** the SVG's path relative to BENCHMARKS.md, e.g. 'docs/benchmarks.svg' */
  readonly chartPath: string;
  /** the results JSON's path relative to BENCHMARKS.md */
  readonly jsonPath: string;
}

const GROUP_TITLE: Record<Group, string> = { reads: 'Reads', writes: 'Writes', sets: 'Entity sets', uploads: 'Uploads' };

/** The suite's flags, for "How to reproduce" (the `This run` column reads results.settings and results.args) */
const FLAGS: readonly { flag: string; value?: string; what: string }[] = [
  { flag: '--only', value: 'GROUPS', what: 'the groups to run, comma-separated: reads, sets, writes, uploads, workers' },
  { flag: '--sizes', value: 'LIST', what: 'the data set sizes, comma-separated (10k, 1m, 10m)' },
  { flag: '--engine', value: 'sqlite', what: 'the database engine (SQLite only: the baselines are better-sqlite3 servers; PostgreSQL reads have npm run bench:postgres)' },
  { flag: '--workers', value: 'N', what: "our server's workers" },
  { flag: '--peers', what: 'also measure the peers (installed once into a cache outside the repository)' },
  { flag: '--duration', value: 'S', what: 'seconds measured per server and scenario' },
  { flag: '--rounds', value: 'R', what: 'the rounds that duration is split into, alternating the servers' },
  { flag: '--connections', value: 'N', what: "the load generator's connections" },
  { flag: '--quick', what: 'a short run to try the suite: its figures are not to be quoted' },
  { flag: '--contract-baseline', what: 'the read baseline sends the security headers our answers carry (else it is minimal: content-type and content-length)' },
];

// ---------------------------------------------------------------------------------------------
// Markdown text

/**
 * Text for a table cell or a paragraph: one line, pipes escaped (GitHub needs it inside code spans
 * too), and no HTML outside code spans (`<` written as &lt; there; code spans are shown as written).
 */
function md(text: string): string {
  const flat = text.replace(/\s*[\r\n]+\s*/g, ' ').replaceAll('|', '\\|');
  return flat
    .split(/(`+[^`]*`+)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replaceAll('<', '&lt;')))
    .join('');
}

/** An inline code span that holds any text */
function code(text: string): string {
  const flat = text.replace(/[\r\n]+/g, ' ');
  if (!flat.includes('`')) return `\`${flat}\``;
  return `\`\` ${flat} \`\``;
}

/** A code span in a table cell: GitHub splits cells at every unescaped pipe, code spans too */
function codeCell(text: string): string {
  return code(text).replaceAll('|', '\\|');
}

function table(header: readonly string[], rows: readonly (readonly string[])[], align?: readonly ('l' | 'r')[]): string {
  const rule = header.map((_, i) => ((align?.[i] ?? 'l') === 'r' ? '---:' : '---'));
  return [header, rule, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** A shell word, quoted when it needs it */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

function benchCommand(args: readonly string[]): string {
  return args.length === 0 ? 'npm run bench' : `npm run bench -- ${args.map(shellWord).join(' ')}`;
}

/** Requests (or anything) per second: whole numbers, one decimal below 100 */
function perSecond(value: number): string {
  return groupDigits(value, Math.abs(value) < 100 ? 1 : 0);
}

function microseconds(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '—';
  return groupDigits(value, Math.abs(value) < 100 ? 1 : 0);
}

function milliseconds(value: number): string {
  if (!Number.isFinite(value)) return '—';
  return groupDigits(value, Math.abs(value) < 10 ? 2 : Math.abs(value) < 100 ? 1 : 0);
}

function bytes(value: number): string {
  if (value >= 2 ** 30) return `${groupDigits(value / 2 ** 30, 2)} GiB`;
  if (value >= 2 ** 20) return `${groupDigits(value / 2 ** 20, 1)} MiB`;
  if (value >= 2 ** 10) return `${groupDigits(value / 2 ** 10, 1)} KiB`;
  return `${groupDigits(value)} B`;
}

/** A ratio followed by ×, or — */
function times(ratio: number | undefined, target?: number, direction: 'atLeast' | 'atMost' = 'atLeast'): string {
  const text = formatRatio(ratio, target, direction);
  return text === '—' ? text : `${text}×`;
}

/** The target cell: "≥ 0.85: met", "≥ 0.85: **not met**", "no target" */
function targetCell(ratio: number | undefined, target: number | undefined, direction: 'atLeast' | 'atMost' = 'atLeast'): string {
  const status = targetStatus(ratio, target, direction);
  if (status === 'none' || target === undefined) return 'no target';
  return `${direction === 'atLeast' ? '≥' : '≤'} ${formatTarget(target)}: ${status === 'met' ? 'met' : '**not met**'}`;
}

/** CPU per request, with the database server's when it was read */
function cpuCell(m: Measurement): string {
  const own = microseconds(m.cpuUsPerRequest);
  return m.dbCpuUsPerRequest !== undefined ? `${own} (+ database ${microseconds(m.dbCpuUsPerRequest)})` : own;
}

function failures(n: number): string {
  return n === 0 ? '0' : `**${groupDigits(n)}**`;
}

function label(c: Comparison, all: readonly Comparison[]): string {
  const variant = comparisonVariant(c, all);
  return md(variant ? `${c.title} (${variant})` : c.title);
}

// ---------------------------------------------------------------------------------------------
// Sections

function introduction(results: SuiteResults, options: ReportOptions): string {
  const engines = [...new Set(results.comparisons.map((c) => c.engine))];
  const peerNames = [...new Set(results.peers.map((p) => p.peer))];
  const drivers = engines.includes('postgres') ? (engines.includes('sqlite') ? 'better-sqlite3 (pg on PostgreSQL)' : 'pg') : 'better-sqlite3';
  const engineText = engines.length > 0 ? ` on ${engines.map((e) => ENGINE_NAME[e] ?? e).join(' and ')}` : '';
  const paragraph =
    `This file compares dataset-rest (our server) with a hand-written server, node:http and ${drivers} and nothing else, ` +
    `that runs the same SQL and sends the same bytes${engineText}` +
    (peerNames.length > 0 ? `, and with peers over a copy of the same data (${peerNames.map(md).join(', ')})` : '') +
    `. All figures come from one run, ${code(benchCommand(results.args))} started ${runDate(results.startedAt)} and lasting ${groupDigits(results.seconds)} s, ` +
    `on the machine described below (${md(machineLine(results))}, Node ${md(bareVersion(results.versions['Node.js'] ?? results.versions.node))}); ` +
    `the figures themselves are in [${md(options.jsonPath)}](${options.jsonPath}). This file and the chart are written by the suite: edit the suite, not them.`;
  return `# Benchmarks\n\n${paragraph}\n\n${headline(results)}`;
}

function where(c: Comparison, all: readonly Comparison[]): string {
  const variant = comparisonVariant(c, all);
  return `${md(c.title)} at ${sizeLabel(c.size)}${variant ? ` (${md(variant)})` : ''}`;
}

function headline(results: SuiteResults): string {
  const all = orderedComparisons(results.comparisons);
  const targeted = all.filter((c) => c.target !== undefined);
  const lines: string[] = [];
  if (targeted.length === 0) lines.push('No scenario of this run has a target.');
  else {
    const met = targeted.filter((c) => targetStatus(c.ratio, c.target) === 'met');
    const notMet = targeted.filter((c) => targetStatus(c.ratio, c.target) !== 'met');
    const item = (c: Comparison, sign: string): string => `${where(c, all)} (${times(c.ratio, c.target)} ${sign} ${formatTarget(c.target ?? 0)})`;
    lines.push(`${met.length} of ${targeted.length} targets against the baseline reached.`);
    if (met.length > 0) lines.push(`Reached: ${met.map((c) => item(c, '≥')).join('; ')}.`);
    if (notMet.length > 0) lines.push(`**Missed**: ${notMet.map((c) => item(c, '<')).join('; ')}.`);
  }
  const untargeted = all.length - targeted.length;
  if (untargeted > 0) lines.push(`${untargeted} other measurement${untargeted === 1 ? ' has' : 's have'} no target.`);
  for (const name of [...new Set(results.peers.map((p) => p.peer))]) {
    const ofPeer = results.peers.filter((p) => p.peer === name);
    const ratios = ofPeer.flatMap((p) => (p.other !== undefined && p.ratio !== undefined && Number.isFinite(p.ratio) ? [p.ratio] : []));
    const missing = ofPeer.length - ratios.length;
    const range = ratios.length === 0 ? 'not measured' : ratios.length === 1 ? times(ratios[0]) : `${times(Math.min(...ratios))} to ${times(Math.max(...ratios))}`;
    lines.push(`Against ${md(name)}: ours / peer ${range}${missing > 0 ? ` (${missing} read${missing === 1 ? '' : 's'} it cannot answer in one request)` : ''}.`);
  }
  if (results.scaling.length > 0) {
    const follows = results.scaling.filter((s) => targetStatus(s.ratio, s.target, 'atMost') === 'met');
    const missed = results.scaling.filter((s) => targetStatus(s.ratio, s.target, 'atMost') !== 'met');
    lines.push(
      `The cost follows the page for ${follows.length} of ${results.scaling.length} reads` +
        (missed.length > 0 ? `; not for ${missed.map((s) => `${md(s.title)} (${times(s.ratio, s.target, 'atMost')})`).join(', ')}` : '') +
        '.',
    );
  }
  return `**Headline.** ${lines.join(' ')}`;
}

function chartSection(results: SuiteResults, options: ReportOptions): string {
  const alt = `Chart: ours / baseline per scenario and size, peers and scaling, run of ${runDate(results.startedAt)}`;
  return `![${md(alt).replaceAll('[', '(').replaceAll(']', ')')}](${options.chartPath})`;
}

function settingFor(results: SuiteResults, flag: string): string {
  const name = flag.slice(2);
  const camel = name.replace(/-([a-z])/g, (_, ch: string) => ch.toUpperCase());
  for (const key of [name, camel]) {
    if (Object.hasOwn(results.settings, key)) return codeCell(String(results.settings[key]));
  }
  const i = results.args.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
  if (i < 0) return '—';
  const arg = results.args[i];
  if (arg.includes('=')) return codeCell(arg.slice(arg.indexOf('=') + 1));
  const next = results.args[i + 1];
  return next !== undefined && !next.startsWith('--') && FLAGS.find((f) => f.flag === flag)?.value !== undefined ? codeCell(next) : 'yes';
}

function reproduce(results: SuiteResults, options: ReportOptions): string {
  const commands = [
    'npm ci',
    'npm run bench                                  # everything',
    'npm run bench -- --only reads --sizes 10k,1m   # some groups, some sizes',
    'npm run bench -- --peers                       # with the peers',
    'npm run bench -- --quick                       # a short run, to try it',
  ];
  const flags = table(
    ['Flag', 'What', 'This run'],
    FLAGS.map((f) => [codeCell(f.value ? `${f.flag} ${f.value}` : f.flag), md(f.what), settingFor(results, f.flag)]),
  );
  return [
    '## How to reproduce',
    'From a checkout of this repository, with Node 20 or later:',
    '```sh\n' + commands.join('\n') + '\n```',
    `This run was ${code(benchCommand(results.args))}. The flags (after \`npm run bench --\`; "This run" gives the value the run used, — for the default):`,
    flags,
    `The results land in \`bench/results/\` and this file and its chart are rewritten. To write them again from a saved results file, without measuring anything: ` +
      `${code(`node --import tsx bench/suite/report-cli.ts ${options.jsonPath}`)}.`,
  ].join('\n\n');
}

function machineSection(results: SuiteResults): string {
  const m = results.machine;
  const rows: string[][] = [
    ['Machine', 'CPUs', String(m.cpus)],
    ['', 'CPU model', md(m.model)],
    ['', 'Memory', `${groupDigits(m.memoryGiB, 1)} GiB`],
    ['', 'OS', md(m.os)],
  ];
  Object.keys(results.versions)
    .sort()
    .forEach((name, i) => rows.push([i === 0 ? 'Versions' : '', md(name), md(results.versions[name])]));
  Object.keys(results.settings)
    .sort()
    .forEach((name, i) => rows.push([i === 0 ? 'Settings' : '', md(name), md(String(results.settings[name]))]));
  rows.push(['Run', 'Started', runDate(results.startedAt)]);
  rows.push(['', 'Lasted', `${groupDigits(results.seconds)} s`]);
  rows.push(['', 'Command', codeCell(benchCommand(results.args))]);
  return `## Machine and versions\n\n${table(['', 'Name', 'Value'], rows)}`;
}

function comparisonSection(results: SuiteResults): string {
  const all = orderedComparisons(results.comparisons);
  const parts: string[] = [
    '## Ours against the hand-written baseline',
    'Per scenario and size: requests per second of each server (entities per second too where a request carries several), ' +
      'the ratio ours / baseline and its target (met when the ratio is at least the target), the CPU time of each server process per request (µs) ' +
      'and the CPU ratio baseline / ours (above 1: we use less CPU per request; the figure that holds when the load generator shares the cores), ' +
      'the 99th percentile of response times and the failed requests (not 2xx, connection errors, timeouts).',
  ];
  const header = ['Scenario', 'Size', 'Ours req/s', 'Baseline req/s', 'Ratio', 'Target', 'Ours CPU µs/req', 'Baseline CPU µs/req', 'CPU ratio', 'p99 ms ours / baseline', 'Failures ours / baseline'];
  const align: ('l' | 'r')[] = ['l', 'r', 'r', 'r', 'r', 'l', 'r', 'r', 'r', 'r', 'r'];
  for (const group of GROUP_ORDER) {
    parts.push(`### ${GROUP_TITLE[group]}`);
    const rows = all.filter((c) => c.group === group);
    if (rows.length === 0) {
      parts.push('Not measured in this run.');
      continue;
    }
    const sorted = sizesOf(rows).flatMap((size) => rows.filter((c) => c.size === size));
    parts.push(
      table(
        header,
        sorted.map((c) => {
          const rate = (m: Measurement): string =>
            c.unitsPerRequest > 1 ? `${perSecond(m.requestsPerSecond)} (${perSecond(m.requestsPerSecond * c.unitsPerRequest)} entities/s)` : perSecond(m.requestsPerSecond);
          return [
            label(c, all),
            groupDigits(c.size),
            rate(c.ours),
            rate(c.baseline),
            times(c.ratio, c.target),
            targetCell(c.ratio, c.target),
            cpuCell(c.ours),
            cpuCell(c.baseline),
            times(c.cpuRatio),
            `${milliseconds(c.ours.p99Ms)} / ${milliseconds(c.baseline.p99Ms)}`,
            `${failures(c.ours.failures)} / ${failures(c.baseline.failures)}`,
          ];
        }),
        align,
      ),
    );
  }
  return parts.join('\n\n');
}

function peerSection(results: SuiteResults): string {
  const parts: string[] = ['## Against peers'];
  const peers: readonly PeerComparison[] = results.peers;
  if (peers.length === 0) parts.push('The peers were not measured in this run (`npm run bench -- --peers` measures them).');
  else {
    parts.push(
      'Our server and another over a copy of the same data, both on the same Node.js, loaded the same way: requests per second of each, the ratio ours / peer ' +
        '(above 1: we are faster), CPU ratio peer / ours per request. Where a peer cannot answer a read in one request, it is not measured, and the note says why.',
    );
    parts.push(
      table(
        ['Scenario', 'Size', 'Peer', 'Node', 'Ours req/s', 'Peer req/s', 'Ours / peer', 'Target', 'CPU ratio', 'p99 ms ours / peer', 'Note'],
        peers.map((p) => {
          const measured = p.other !== undefined;
          return [
            md(p.title),
            groupDigits(p.size),
            md(p.peer),
            md(bareVersion(p.node)),
            perSecond(p.ours.requestsPerSecond),
            p.other !== undefined ? perSecond(p.other.requestsPerSecond) : 'n/a',
            measured ? times(p.ratio, p.target) : 'n/a — cannot in one request',
            measured ? targetCell(p.ratio, p.target) : p.target !== undefined ? `≥ ${formatTarget(p.target)}: not measured` : 'no target',
            measured ? times(p.cpuRatio) : '—',
            p.other !== undefined ? `${milliseconds(p.ours.p99Ms)} / ${milliseconds(p.other.p99Ms)}` : `${milliseconds(p.ours.p99Ms)} / —`,
            p.note ? md(p.note) : '',
          ];
        }),
        ['l', 'r', 'l', 'l', 'r', 'r', 'r', 'l', 'r', 'r', 'l'],
      ),
    );
  }
  if (!peers.some((p) => /postgrest/i.test(p.peer))) {
    parts.push(
      '**PostgREST** (SQL→REST over PostgreSQL) could not be installed on this machine, so it is not measured here. ' +
        'Its published figures, **not measured here** and not comparable figure for figure (another machine, another load): ' +
        'on an AWS t3a.nano (2 vCPUs, 0.5 GiB), PostgREST built from master in October 2020 (after v7.0.1), PostgreSQL on its own instance and ' +
        'the load generator (k6) on a third, in one VPC: a read of one row 2,068 req/s, one row with its embedded relation 805 req/s, ' +
        'a create of one row 1,547 req/s, a bulk create 608 req/s ' +
        '([supabase/benchmarks-archive#2](https://github.com/supabase/benchmarks-archive/issues/2), the comment of 2020-10-23). ' +
        'Its README says "subsecond response times for up to 2000 requests/sec on Heroku free tier". Our server here answers a read by key ' +
        'on a shared 2-core machine with the load generator on the same cores (see the tables above).',
    );
  }
  return parts.join('\n\n');
}

function scalingSection(results: SuiteResults): string {
  const scaling: readonly Scaling[] = results.scaling;
  const parts: string[] = ['## Scaling: cost follows the page'];
  if (scaling.length === 0) {
    parts.push('Not measured in this run (it needs the reads at two sizes).');
    return parts.join('\n\n');
  }
  parts.push(
    "Each read's cost per request at the largest size against the smallest: our CPU µs per request (requests per second where the CPU cannot be read). " +
      'Within the target, a read costs what its page costs, not what the data set holds.',
  );
  parts.push(
    table(
      ['Read', 'Sizes', 'Cost small', 'Cost large', 'Large / small', 'Target', 'Why'],
      scaling.map((s) => [
        md(s.title),
        `${sizeLabel(s.smallSize)} → ${sizeLabel(s.largeSize)}`,
        microseconds(s.small),
        microseconds(s.large),
        times(s.ratio, s.target, 'atMost'),
        targetCell(s.ratio, s.target, 'atMost'),
        s.why ? md(s.why) : '',
      ]),
      ['l', 'l', 'r', 'r', 'r', 'l', 'l'],
    ),
  );
  return parts.join('\n\n');
}

function workersSection(results: SuiteResults): string {
  const workers = results.workers ?? [];
  const parts = ['## Every core: `--workers`'];
  if (workers.length === 0) {
    parts.push('Not measured in this run (`--only workers`, or a full run, measures it).');
    return parts.join('\n\n');
  }
  parts.push(
    `Our server with several workers (node:cluster processes sharing the port and the database) against itself with one, ${results.machine.cpus} cores. ` +
      'The load generator runs on the same cores: it takes a share of the CPU the workers would use, so the gain measured here is below what a machine with the load coming from elsewhere would see; the CPU per request tells what each request costs.',
  );
  parts.push(
    table(
      ['Read', 'Size', 'Workers', 'Req/s, workers', 'Req/s, one', 'Workers / one', 'Target', 'CPU µs/req, workers', 'CPU µs/req, one', 'p99, workers / one'],
      workers.map((w) => [
        md(w.title), sizeLabel(w.size), String(w.workers), perSecond(w.many.requestsPerSecond), perSecond(w.one.requestsPerSecond),
        times(w.ratio, w.target), targetCell(w.ratio, w.target), cpuCell(w.many), cpuCell(w.one), `${milliseconds(w.many.p99Ms)} / ${milliseconds(w.one.p99Ms)}`,
      ]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'l', 'r', 'r', 'r'],
    ),
  );
  return parts.join('\n\n');
}

function memorySection(results: SuiteResults): string {
  const memory = results.memory ?? [];
  const parts = ['## Memory'];
  if (memory.length === 0) {
    parts.push('Not measured in this run (the reads measure it, with one worker).');
    return parts.join('\n\n');
  }
  parts.push(
    'Our server\'s resident set (RSS): idle once started and checked, at most while 100 connections read by key (cookie-less: each request a guest that keeps nothing), ' +
      'and three seconds after the load (measured after the scenarios, so as not to warm ours alone). A guest that keeps nothing is neither stored nor remembered: what the load leaves behind is the heap\'s growth, not sessions.',
  );
  parts.push(
    table(
      ['Size', 'Idle MiB', 'Under load MiB', 'Connections', 'Requests', 'After MiB'],
      memory.map((m) => [sizeLabel(m.size), groupDigits(m.idle), groupDigits(m.loaded), String(m.connections), groupDigits(m.requests), groupDigits(m.after)]),
      ['r', 'r', 'r', 'r', 'r', 'r'],
    ),
  );
  return parts.join('\n\n');
}

function generationSection(results: SuiteResults): string {
  const parts = ['## Data generation'];
  if (results.generated.length === 0) parts.push('No data set was made in this run.');
  else {
    parts.push(
      table(
        ['Rows', 'Engine', 'Seconds', 'Rows/s', 'Size on disk', 'From cache'],
        [...results.generated]
          .map((g, i) => ({ g, i }))
          .sort((a, b) => a.g.rows - b.g.rows || a.i - b.i)
          .map(({ g }) => [
            groupDigits(g.rows),
            ENGINE_NAME[g.engine] ?? md(g.engine),
            groupDigits(g.ms / 1000, 2),
            groupDigits(g.rowsPerSecond),
            bytes(g.bytes),
            g.fromCache ? 'yes (copied)' : 'no',
          ]),
        ['r', 'l', 'r', 'r', 'r', 'l'],
      ),
    );
  }
  return parts.join('\n\n');
}

function notesSection(results: SuiteResults): string {
  if (results.notes.length === 0) return '## Notes\n\nNone.';
  return `## Notes\n\n${results.notes.map((n) => `- ${md(n)}`).join('\n')}`;
}

/** The Markdown of BENCHMARKS.md */
export function renderReport(given: SuiteResults, options: ReportOptions): string {
  const results = withoutNulls(given);
  return (
    [
      introduction(results, options),
      chartSection(results, options),
      reproduce(results, options),
      machineSection(results),
      comparisonSection(results),
      peerSection(results),
      scalingSection(results),
      workersSection(results),
      memorySection(results),
      generationSection(results),
      notesSection(results),
    ].join('\n\n') + '\n'
  );
}
