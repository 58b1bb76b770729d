// BENCHMARKS.md and its chart (bench/suite/report.ts, bench/suite/chart.ts) from a small made-up
// run: the SVG is well-formed, escapes its text, marks the targets and colours each bar by met /
// not met / no target; the Markdown has its sections in order, each table with the run's figures,
// never says "met" where a ratio is below its target; the same input gives the same bytes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COLOURS, escapeXml, formatRatio, groupDigits, renderChart, sizeLabel, targetStatus } from '../../bench/suite/chart.js';
import { renderReport } from '../../bench/suite/report.js';
import type { Comparison, Measurement, SuiteResults } from '../../bench/suite/results.js';

function measurement(requestsPerSecond: number, cpuUsPerRequest?: number, extra: Partial<Measurement> = {}): Measurement {
  return { requests: requestsPerSecond * 10, seconds: 10, requestsPerSecond, cpuUsPerRequest, p50Ms: 1.2, p99Ms: 4.56, failures: 0, rounds: [requestsPerSecond], ...extra };
}

function comparison(c: Partial<Comparison> & Pick<Comparison, 'scenario' | 'title' | 'size' | 'ratio'>): Comparison {
  const baseline = measurement(20_000, 50);
  return {
    group: 'reads',
    engine: 'sqlite',
    workers: 1,
    unitsPerRequest: 1,
    ours: measurement(Math.round(20_000 * c.ratio), 55),
    baseline,
    ...c,
  };
}

const RESULTS: SuiteResults = {
  startedAt: '2025-06-01T10:20:30.000Z',
  seconds: 1234,
  args: ['--only', 'reads,writes', '--sizes', '10k,1m', '--peers'],
  machine: { cpus: 4, model: 'AMD EPYC 7763 64-Core Processor', memoryGiB: 15.62, os: 'Linux 6.8.0 x64' },
  versions: { node: 'v20.20.2', 'better-sqlite3': '12.6.2', sqlite: '3.50.4', autocannon: '9.0.0' },
  settings: { connections: 32, duration: 20, rounds: 4, sizes: '10k,1m', only: 'reads,writes', peers: true },
  generated: [
    { engine: 'sqlite', rows: 1_000_000, ms: 12_345, rowsPerSecond: 81_004, bytes: 180 * 2 ** 20, fromCache: false },
    { engine: 'sqlite', rows: 10_000, ms: 150, rowsPerSecond: 66_667, bytes: 2 * 2 ** 20, fromCache: true },
  ],
  comparisons: [
    comparison({ scenario: 'byKey', title: 'By "key" & <id>', size: 10_000, ratio: 0.93, cpuRatio: 0.91, target: 0.85, ours: measurement(18_600, 54.9), baseline: measurement(20_000, 50) }),
    comparison({ scenario: 'filtered', title: 'Filtered page', size: 10_000, ratio: 0.8496, cpuRatio: 0.88, target: 0.85 }),
    comparison({ scenario: 'expanded', title: 'Page with an N→1 expanded', size: 10_000, ratio: 0.95, target: 0.9 }),
    comparison({ scenario: 'orderBy', title: 'Sorted page', size: 10_000, ratio: 0.7 }),
    comparison({ scenario: 'byKey', title: 'By "key" & <id>', size: 1_000_000, ratio: 0.86, cpuRatio: 0.9, target: 0.85 }),
    comparison({ scenario: 'filtered', title: 'Filtered page', size: 1_000_000, ratio: 0.71, target: 0.9 }),
    comparison({
      group: 'writes',
      scenario: 'batch',
      title: 'Batch of 1,000 creates',
      size: 1_000_000,
      ratio: 1.2,
      unitsPerRequest: 1000,
      ours: measurement(24, 40_000, { failures: 2 }),
      baseline: measurement(20, 48_000),
    }),
  ],
  peers: [
    {
      scenario: 'filtered',
      title: 'Filtered page',
      size: 10_000,
      peer: 'json-server 0.17.4',
      node: 'v22.23.3',
      ours: measurement(15_000, 60),
      other: measurement(300, 3000),
      ratio: 50,
      cpuRatio: 50,
      target: 1,
    },
    {
      scenario: 'expanded',
      title: 'Page with an N→1 expanded',
      size: 10_000,
      peer: 'json-server 0.17.4',
      node: 'v22.23.3',
      ours: measurement(14_000, 65),
      note: 'its _expand takes a single key | not <a page>',
    },
    { scenario: 'byKey', title: 'By "key" & <id>', size: 10_000, peer: 'Platformatic DB 3.67.0', node: 'v22.23.3', ours: measurement(20_000, 50), other: measurement(25_000, 40), ratio: 0.8, cpuRatio: 0.8 },
  ],
  scaling: [
    { scenario: 'byKey', title: 'By "key" & <id>', smallSize: 10_000, largeSize: 1_000_000, small: 50, large: 55, ratio: 1.1, target: 1.5 },
    { scenario: 'filtered', title: 'Filtered page', smallSize: 10_000, largeSize: 1_000_000, small: 60, large: 120, ratio: 2, target: 1.5, why: 'the count reads every match; a kept count would fix it' },
  ],
  memory: [{ size: 10_000, connections: 100, seconds: 4, requests: 80_000, idle: 92.4, loaded: 131.6, after: 118.2 }],
  notes: ['The load generator shares the 4 cores with the servers: read the CPU ratio.', 'Figures from `--quick` runs are not to be quoted.'],
};

const OPTIONS = { chartPath: 'docs/benchmarks.svg', jsonPath: 'bench/results/latest.json' };

interface Element {
  name: string;
  attrs: Record<string, string>;
  children: Element[];
  text: string;
}

/**
 * A small XML reader (no regular expressions): elements, attributes in double quotes, text, the
 * XML declaration; throws on a tag closed out of order, an unclosed one, a raw `<` or `&` that is
 * no entity in text or attributes.
 */
function parseXml(source: string): Element {
  const root: Element = { name: '#document', attrs: {}, children: [], text: '' };
  const stack: Element[] = [root];
  const checkText = (t: string, where: number): void => {
    for (let i = 0; i < t.length; i++) {
      if (t[i] === '<') throw new Error(`raw < at ${where + i}`);
      if (t[i] === '&') {
        const end = t.indexOf(';', i);
        const entity = end < 0 ? '' : t.slice(i + 1, end);
        if (!['amp', 'lt', 'gt', 'quot', 'apos'].includes(entity)) throw new Error(`raw & at ${where + i}`);
      }
    }
  };
  let i = 0;
  while (i < source.length) {
    if (source[i] !== '<') {
      const next = source.indexOf('<', i);
      const end = next < 0 ? source.length : next;
      const t = source.slice(i, end);
      checkText(t, i);
      stack[stack.length - 1].text += t;
      i = end;
      continue;
    }
    const close = source.indexOf('>', i);
    if (close < 0) throw new Error(`unclosed tag at ${i}`);
    const tag = source.slice(i + 1, close);
    if (tag.startsWith('?')) {
      if (i !== 0 || !tag.endsWith('?')) throw new Error('misplaced XML declaration');
    } else if (tag.startsWith('/')) {
      const open = stack.pop();
      if (open === undefined || open.name !== tag.slice(1)) throw new Error(`</${tag.slice(1)}> closes <${open?.name}> at ${i}`);
    } else {
      const selfClosing = tag.endsWith('/');
      const inner = selfClosing ? tag.slice(0, -1) : tag;
      let j = 0;
      while (j < inner.length && inner[j] !== ' ') j++;
      const element: Element = { name: inner.slice(0, j), attrs: {}, children: [], text: '' };
      while (j < inner.length) {
        while (inner[j] === ' ' || inner[j] === '\n') j++;
        if (j >= inner.length) break;
        const eq = inner.indexOf('=', j);
        if (eq < 0 || inner[eq + 1] !== '"') throw new Error(`bad attribute in <${tag}>`);
        const end = inner.indexOf('"', eq + 2);
        if (end < 0) throw new Error(`unclosed attribute in <${tag}>`);
        const name = inner.slice(j, eq);
        if (name in element.attrs) throw new Error(`attribute ${name} twice in <${tag}>`);
        const value = inner.slice(eq + 2, end);
        checkText(value, i);
        element.attrs[name] = value;
        j = end + 1;
      }
      stack[stack.length - 1].children.push(element);
      if (!selfClosing) stack.push(element);
    }
    i = close + 1;
  }
  if (stack.length !== 1) throw new Error(`<${stack[stack.length - 1].name}> not closed`);
  return root;
}

function all(element: Element, predicate: (e: Element) => boolean): Element[] {
  return [...(predicate(element) ? [element] : []), ...element.children.flatMap((c) => all(c, predicate))];
}

const hasClass = (e: Element, name: string): boolean => (e.attrs.class ?? '').split(' ').includes(name);

/** The table of a section: its rows' cells (the header and the rule left out) */
function tableOf(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `no section ${heading}`);
  const lines = markdown.slice(start + heading.length + 2).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const nextHeading = lines.findIndex((l) => l.startsWith('#'));
  assert.ok(first >= 0 && (nextHeading < 0 || first < nextHeading), `no table under ${heading}`);
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(2, -2)
        .split(/(?<!\\) \| /)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

describe('bench report: formatting', () => {
  it('groups digits, labels sizes, shows more decimals where two would look like a met target', () => {
    assert.equal(groupDigits(1234567.8), '1,234,568');
    assert.equal(groupDigits(999), '999');
    assert.equal(groupDigits(-1234.5, 1), '-1,234.5');
    assert.equal(sizeLabel(10_000), '10k');
    assert.equal(sizeLabel(1_000_000), '1M');
    assert.equal(sizeLabel(10_000_000), '10M');
    assert.equal(sizeLabel(2_500_000), '2.5M');
    assert.equal(formatRatio(0.93, 0.85), '0.93');
    assert.equal(formatRatio(0.8496, 0.85), '0.8496');
    assert.equal(formatRatio(0.84999, 0.85), '0.84999');
    assert.equal(formatRatio(0.8499999999, 0.85), '<0.85');
    assert.equal(formatRatio(0.8499999999), '0.85');
    assert.equal(formatRatio(1.504, 1.5, 'atMost'), '1.504');
    assert.equal(targetStatus(0.85, 0.85), 'met');
    assert.equal(targetStatus(0.8499, 0.85), 'not-met');
    assert.equal(targetStatus(1.2, undefined), 'none');
    assert.equal(targetStatus(1.5, 1.5, 'atMost'), 'met');
    assert.equal(targetStatus(Number.NaN, 0.9), 'not-met');
    assert.equal(escapeXml(`a & <b> "c" 'd'`), 'a &amp; &lt;b&gt; &quot;c&quot; &apos;d&apos;');
  });
});

describe('bench report: the chart', () => {
  const svg = renderChart(RESULTS);
  const doc = parseXml(svg);

  it('is a well-formed SVG document 900 px wide on a white background, with the date, machine and Node version', () => {
    const root = doc.children[0];
    assert.equal(doc.children.length, 1);
    assert.equal(root.name, 'svg');
    assert.equal(root.attrs.xmlns, 'http://www.w3.org/2000/svg');
    assert.equal(root.attrs.width, '900');
    const background = root.children.find((e) => e.name === 'rect');
    assert.equal(background?.attrs.fill, '#ffffff');
    assert.equal(background?.attrs.width, '900');
    assert.equal(background?.attrs.height, root.attrs.height);
    const texts = all(doc, (e) => e.name === 'text' || e.name === 'tspan').map((e) => e.text);
    assert.ok(texts.some((t) => t.includes('2025-06-01 10:20 UTC')));
    assert.ok(texts.some((t) => t.includes('4 × AMD EPYC 7763 64-Core Processor') && t.includes('Node 20.20.2')));
    for (const e of all(doc, (x) => x.name === 'text' || x.name === 'tspan')) assert.ok(Number(e.attrs['font-size']) >= 12, `text of ${e.attrs['font-size']} px: ${e.text}`);
  });

  it('escapes every title, and keeps it whole in the row tooltip', () => {
    assert.ok(!svg.includes('By "key" & <id>'));
    assert.ok(svg.includes(escapeXml('By "key" & <id>')));
    for (const c of RESULTS.comparisons) {
      const rows = all(doc, (e) => hasClass(e, 'comparison') && e.attrs['data-scenario'] === c.scenario && e.attrs['data-size'] === String(c.size));
      assert.equal(rows.length, 1, `${c.scenario} ${c.size}`);
      const tip = rows[0].children.find((e) => e.name === 'title');
      assert.ok(tip?.text.startsWith(escapeXml(c.title)), tip?.text);
    }
    assert.ok(svg.includes(escapeXml('its _expand takes a single key | not <a page>')));
  });

  it('groups the rows by size with a heading each, in order', () => {
    const texts = all(doc, (e) => e.name === 'text').map((e) => e.text);
    const small = texts.indexOf('10k items (10,000)');
    const large = texts.indexOf('1M items (1,000,000)');
    assert.ok(small >= 0 && large > small, texts.join(' / '));
  });

  it('colours each bar by met / not met / no target, marks each target, writes the value at the bar', () => {
    const rows = all(doc, (e) => hasClass(e, 'comparison'));
    assert.equal(rows.length, RESULTS.comparisons.length);
    for (const row of rows) {
      const c = RESULTS.comparisons.find((x) => x.scenario === row.attrs['data-scenario'] && String(x.size) === row.attrs['data-size']);
      assert.ok(c);
      const expected = c.target === undefined ? 'none' : c.ratio >= c.target ? 'met' : 'not-met';
      assert.equal(row.attrs['data-status'], expected, `${c.scenario} ${c.size}`);
      const bar = row.children.find((e) => hasClass(e, 'bar'));
      assert.equal(bar?.attrs.fill, COLOURS[expected], `${c.scenario} ${c.size}`);
      assert.equal(row.children.filter((e) => hasClass(e, 'target-marker')).length, c.target === undefined ? 0 : 1);
      assert.equal(row.children.filter((e) => hasClass(e, 'cpu')).length, c.cpuRatio === undefined ? 0 : 1);
      const values = row.children.filter((e) => e.name === 'text').map((e) => e.text);
      assert.ok(values.some((t) => t.startsWith(`${formatRatio(c.ratio, c.target)}×`)), values.join(' / '));
    }
    // 0.8496 against 0.85: red, and written so that it does not read as 0.85
    const filtered = rows.find((e) => e.attrs['data-scenario'] === 'filtered' && e.attrs['data-size'] === '10000');
    assert.equal(filtered?.attrs['data-status'], 'not-met');
    assert.ok(filtered?.children.some((e) => e.name === 'text' && e.text.startsWith('0.8496×')));
  });

  it('shows the peers (n/a where they cannot) and the scaling with its 1.5 line', () => {
    const peers = all(doc, (e) => hasClass(e, 'peer'));
    assert.equal(peers.length, RESULTS.peers.length);
    const missing = peers.find((e) => e.attrs['data-scenario'] === 'expanded');
    assert.equal(missing?.attrs['data-status'], 'na');
    assert.ok(missing?.children.some((e) => e.name === 'text' && e.text === 'n/a — cannot in one request'));
    assert.equal(missing?.children.filter((e) => hasClass(e, 'bar')).length, 0);
    const fifty = peers.find((e) => e.attrs['data-scenario'] === 'filtered');
    assert.equal(fifty?.attrs['data-status'], 'met');
    assert.ok(fifty?.children.some((e) => e.name === 'text' && e.text.startsWith('50.0×')));
    const scaling = all(doc, (e) => hasClass(e, 'scaling'));
    assert.deepEqual(
      scaling.map((e) => e.attrs['data-status']),
      ['met', 'not-met'],
    );
    assert.ok(all(doc, (e) => e.name === 'text').some((e) => e.text === '1.5× target'));
  });

  it('is the same for the same input', () => {
    assert.equal(renderChart(JSON.parse(JSON.stringify(RESULTS)) as SuiteResults), svg);
  });

  it('cuts a bar past the scale, and says so, with its figure', () => {
    const wide: SuiteResults = { ...RESULTS, comparisons: [comparison({ scenario: 'batch', title: 'Batch', size: 10_000, ratio: 6.2 }), ...RESULTS.comparisons] };
    const row = all(parseXml(renderChart(wide)), (e) => hasClass(e, 'comparison') && e.attrs['data-scenario'] === 'batch')[0];
    assert.equal(row.children.filter((e) => hasClass(e, 'cut')).length, 1);
    assert.ok(row.children.some((e) => e.name === 'text' && e.text === '6.20×'));
  });

  it('renders a run without peers, scaling or comparisons', () => {
    const empty: SuiteResults = { ...RESULTS, comparisons: [], peers: [], scaling: [] };
    const root = parseXml(renderChart(empty));
    assert.ok(all(root, (e) => e.name === 'text').some((e) => e.text === 'No comparison measured in this run.'));
  });
});

describe('bench report: the Markdown', () => {
  const markdown = renderReport(RESULTS, OPTIONS);

  it('has its sections in order, the chart and the results file linked', () => {
    const headings = markdown.split('\n').filter((l) => l.startsWith('#'));
    assert.deepEqual(headings, [
      '# Benchmarks',
      '## How to reproduce',
      '## Machine and versions',
      '## Ours against the hand-written baseline',
      '### Reads',
      '### Writes',
      '### Entity sets',
      '### Uploads',
      '## Against peers',
      '## Scaling: cost follows the page',
      '## Every core: `--workers`',
      '## Memory',
      '## Data generation',
      '## Notes',
    ]);
    const chart = markdown.indexOf('](docs/benchmarks.svg)');
    assert.ok(chart > 0 && chart < markdown.indexOf('## How to reproduce'));
    assert.ok(markdown.includes('(bench/results/latest.json)'));
    assert.ok(markdown.includes('`npm run bench -- --only reads,writes --sizes 10k,1m --peers`'));
    assert.ok(markdown.includes('node --import tsx bench/suite/report-cli.ts bench/results/latest.json'));
    assert.ok(markdown.includes('npm run bench -- --quick'));
  });

  it('writes tables whose every row has as many cells as the header (pipes in the text escaped)', () => {
    const cells = (line: string): number => line.slice(2, -2).split(/(?<!\\) \| /).length;
    const lines = markdown.split('\n');
    let tables = 0;
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i].startsWith('|') || lines[i - 1]?.startsWith('|')) continue;
      tables++;
      const width = cells(lines[i]);
      for (let j = i; j < lines.length && lines[j].startsWith('|'); j++) {
        assert.equal(cells(lines[j]), width, lines[j]);
        assert.equal(lines[j].replaceAll('\\|', '').split('|').length - 2, width, lines[j]);
      }
    }
    assert.equal(tables, 8); // flags, machine, reads, writes, peers, scaling, memory, generation
    assert.ok(markdown.includes('a single key \\| not'));
  });

  it('states the headline: the targets reached and the ones missed', () => {
    const headline = markdown.split('\n').find((l) => l.startsWith('**Headline.**')) ?? '';
    assert.ok(headline.includes('3 of 5 targets against the baseline reached'), headline);
    const [reached, missed] = headline.split('**Missed**');
    assert.ok(reached.includes('Page with an N→1 expanded at 10k (0.95× ≥ 0.9)'), reached);
    assert.ok(!reached.includes('Filtered page'), reached);
    assert.ok(missed.includes('Filtered page at 10k (0.8496× < 0.85)'), missed);
    assert.ok(missed.includes('Filtered page at 1M (0.71× < 0.9)'), missed);
    assert.ok(headline.includes('The cost follows the page for 1 of 2 reads; not for Filtered page (2.00×)'), headline);
  });

  it('writes the machine, versions and settings as a table', () => {
    const rows = tableOf(markdown, '## Machine and versions');
    const value = (name: string): string | undefined => rows.find((r) => r[1] === name)?.[2];
    assert.equal(value('CPUs'), '4');
    assert.equal(value('CPU model'), 'AMD EPYC 7763 64-Core Processor');
    assert.equal(value('Memory'), '15.6 GiB');
    assert.equal(value('better-sqlite3'), '12.6.2');
    assert.equal(value('node'), 'v20.20.2');
    assert.equal(value('connections'), '32');
  });

  it('writes a row per scenario and size with its figures, and "met" only where the ratio reaches the target', () => {
    const reads = tableOf(markdown, '### Reads');
    assert.equal(reads.length, 6);
    assert.deepEqual(reads[0], ['By "key" & &lt;id>', '10,000', '18,600', '20,000', '0.93×', '≥ 0.85: met', '54.9', '50.0', '0.91×', '4.56 / 4.56', '0 / 0']);
    const byTitle = (rows: string[][], title: string, size: string): string[] => rows.find((r) => r[0] === title && r[1] === size) ?? [];
    assert.deepEqual(byTitle(reads, 'Filtered page', '10,000').slice(4, 6), ['0.8496×', '≥ 0.85: **not met**']);
    assert.deepEqual(byTitle(reads, 'Filtered page', '1,000,000').slice(4, 6), ['0.71×', '≥ 0.9: **not met**']);
    assert.deepEqual(byTitle(reads, 'Sorted page', '10,000').slice(4, 6), ['0.70×', 'no target']);
    assert.equal(byTitle(reads, 'Sorted page', '10,000')[8], '—');
    const writes = tableOf(markdown, '### Writes');
    assert.deepEqual(writes[0].slice(0, 5), ['Batch of 1,000 creates', '1,000,000', '24.0 (24,000 entities/s)', '20.0 (20,000 entities/s)', '1.20×']);
    assert.equal(writes[0][6], '40,000');
    assert.equal(writes[0][10], '**2** / 0');
    // every row of every table: a ratio below its target never reads "met"
    for (const line of markdown.split('\n').filter((l) => l.startsWith('|'))) {
      const cells = line.split(' | ');
      const target = cells.find((c) => c.startsWith('≥ ') && c.includes(':'));
      if (target === undefined) continue;
      const ratio = Number(cells.find((c) => c.endsWith('×'))?.slice(0, -1));
      const goal = Number(target.slice(2, target.indexOf(':')));
      if (ratio < goal) assert.ok(!target.replace('not met', '').includes('met'), line);
      else assert.ok(!target.includes('not met'), line);
    }
    assert.ok(markdown.includes('### Entity sets\n\nNot measured in this run.'));
  });

  it('writes the peers, n/a with its note where a peer cannot, and PostgREST\'s published figures marked not measured here', () => {
    const peers = tableOf(markdown, '## Against peers');
    assert.equal(peers.length, 3);
    assert.deepEqual(peers[0].slice(0, 8), ['Filtered page', '10,000', 'json-server 0.17.4', '22.23.3', '15,000', '300', '50.00×', '≥ 1: met']);
    assert.deepEqual(peers[1].slice(5, 7), ['n/a', 'n/a — cannot in one request']);
    assert.equal(peers[1][10], 'its _expand takes a single key \\| not &lt;a page>');
    assert.deepEqual(peers[2].slice(6, 8), ['0.80×', 'no target']);
    assert.ok(markdown.includes('PostgREST'));
    assert.ok(markdown.includes('**not measured here**'));
    assert.ok(markdown.includes('not measured here'));
    assert.ok(markdown.includes('supabase/benchmarks-archive'));
  });

  it('writes the scaling, memory, generation and notes', () => {
    const scaling = tableOf(markdown, '## Scaling: cost follows the page');
    assert.deepEqual(scaling[0], ['By "key" & &lt;id>', '10k → 1M', '50.0', '55.0', '1.10×', '≤ 1.5: met', '']);
    assert.deepEqual(scaling[1], ['Filtered page', '10k → 1M', '60.0', '120', '2.00×', '≤ 1.5: **not met**', 'the count reads every match; a kept count would fix it']);
    assert.deepEqual(tableOf(markdown, '## Memory'), [['10k', '92', '132', '100', '80,000', '118']]);
    const generated = tableOf(markdown, '## Data generation');
    assert.deepEqual(generated, [
      ['10,000', 'SQLite', '0.15', '66,667', '2.0 MiB', 'yes (copied)'],
      ['1,000,000', 'SQLite', '12.35', '81,004', '180.0 MiB', 'no'],
    ]);
    assert.ok(markdown.endsWith('- The load generator shares the 4 cores with the servers: read the CPU ratio.\n- Figures from `--quick` runs are not to be quoted.\n'));
  });

  it('reads a null target (from a JSON file) as no target, a null ratio as no figure', () => {
    const withNulls = JSON.parse(JSON.stringify(RESULTS)) as { comparisons: Record<string, unknown>[] };
    withNulls.comparisons[3].target = null;
    withNulls.comparisons[1].ratio = null;
    const text = renderReport(withNulls as unknown as SuiteResults, OPTIONS);
    const reads = tableOf(text, '### Reads');
    assert.deepEqual(reads[3].slice(4, 6), ['0.70×', 'no target']);
    assert.deepEqual(reads[1].slice(4, 6), ['—', '≥ 0.85: **not met**']);
    parseXml(renderChart(withNulls as unknown as SuiteResults));
  });

  it('is the same for the same input', () => {
    assert.equal(renderReport(JSON.parse(JSON.stringify(RESULTS)) as SuiteResults, OPTIONS), markdown);
  });
});
