// The chart of BENCHMARKS.md (issue 16): one SVG document, written as text (no dependencies), from
// one run's SuiteResults. Three panels:
//
//   1. ours / hand-written baseline (requests per second) per scenario, rows grouped by size, a line
//      at 1.0 (parity), a marker at the issue's target, the bar's colour saying met / not met / no
//      target, and the CPU ratio (baseline CPU / ours, per request) as a thin bar under it;
//   2. ours / peer per scenario on a log scale, bars from 1.0 (right: we are faster), "n/a" where
//      the peer cannot answer the read in one request;
//   3. scaling: cost at the largest size / cost at the smallest per read, with the 1.5 line.
//
// White background (readable in GitHub's light and dark themes), 900 px wide, text ≥ 12 px, every
// text escaped, the same input giving the same bytes (no locale, no clock, no random).
// Also the formatting shared with report.ts (sizes, ratios, met / not met).

import type { Comparison, PeerComparison, Scaling, SuiteResults } from './results.js';

// ---------------------------------------------------------------------------------------------
// Shared formatting (report.ts uses these too)

/** met / not met / no target; `atLeast` for ratios of speed (≥ target), `atMost` for scaling (≤ target) */
export type TargetStatus = 'met' | 'not-met' | 'none';

export function targetStatus(ratio: number | undefined, target: number | undefined, direction: 'atLeast' | 'atMost' = 'atLeast'): TargetStatus {
  if (target === undefined) return 'none';
  if (ratio === undefined || !Number.isFinite(ratio)) return 'not-met';
  return (direction === 'atLeast' ? ratio >= target : ratio <= target) ? 'met' : 'not-met';
}

/**
 * A ratio with 2 decimals (`compact`: 1 from 10 on); with more (up to 6) when 2 would show a figure that looks like it meets
 * the target while it does not (0.8496 against 0.85 shows "0.8496", not "0.85").
 */
export function formatRatio(ratio: number | undefined, target?: number, direction: 'atLeast' | 'atMost' = 'atLeast', compact = false): string {
  if (ratio === undefined || !Number.isFinite(ratio)) return '—';
  const status = targetStatus(ratio, target, direction);
  const looksMet = (shown: string): boolean => target !== undefined && (direction === 'atLeast' ? Number(shown) >= target : Number(shown) <= target);
  // (the chart: 1 decimal from 10× on, where it tells no target's side wrong)
  if (compact && Math.abs(ratio) >= 10 && (target === undefined || looksMet(ratio.toFixed(1)) === (status === 'met'))) return ratio.toFixed(1);
  for (let decimals = 2; decimals <= 6; decimals++) {
    const text = ratio.toFixed(decimals);
    if (status !== 'not-met' || !looksMet(text)) return text;
  }
  // closer to the target than a millionth: say on which side
  return `${direction === 'atLeast' ? '<' : '>'}${formatTarget(target ?? 0)}`;
}

/** A target as a number without trailing zeros: 0.85, 0.9, 1.5 */
export function formatTarget(target: number): string {
  return String(Number(target.toFixed(4)));
}

/** 1234567.8 → "1,234,568" (decimals 0); no locale involved */
export function groupDigits(value: number, decimals = 0): string {
  if (!Number.isFinite(value)) return '—';
  const fixed = Math.abs(value).toFixed(decimals);
  const [whole, fraction] = fixed.split('.');
  let grouped = '';
  for (let i = 0; i < whole.length; i++) {
    if (i > 0 && (whole.length - i) % 3 === 0) grouped += ',';
    grouped += whole[i];
  }
  const negative = value < 0 && Number(fixed) !== 0;
  return `${negative ? '-' : ''}${grouped}${fraction !== undefined ? `.${fraction}` : ''}`;
}

/** 10000 → "10k", 1000000 → "1M", 2500000 → "2.5M", 512 → "512" */
export function sizeLabel(size: number): string {
  const trim = (n: number): string => String(Number(n.toFixed(2)));
  if (size >= 1e9) return `${trim(size / 1e9)}G`;
  if (size >= 1e6) return `${trim(size / 1e6)}M`;
  if (size >= 1e3) return `${trim(size / 1e3)}k`;
  return String(size);
}

/**
 * The results with every null left out: a results file written by JSON.stringify holds null where
 * a figure was NaN or written as null, and an absent target must never read as a target of 0.
 */
export function withoutNulls(results: SuiteResults): SuiteResults {
  return JSON.parse(JSON.stringify(results), (_key, value: unknown) => (value === null ? undefined : value)) as SuiteResults;
}

export const ENGINE_NAME: Readonly<Record<string, string>> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

/** "v20.20.2" or "20.20.2" → "20.20.2" */
export function bareVersion(version: string | undefined): string {
  if (version === undefined) return '?';
  return version.startsWith('v') ? version.slice(1) : version;
}

/** "2025-06-01T10:20:30.000Z" → "2025-06-01 10:20 UTC" (the text as given when it is no date) */
export function runDate(startedAt: string): string {
  const time = Date.parse(startedAt);
  if (Number.isNaN(time)) return startedAt;
  return `${new Date(time).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A machine in a few words: "4 × AMD EPYC 7763, 15.6 GiB, Linux 6.8" */
export function machineLine(results: SuiteResults): string {
  const m = results.machine;
  return `${m.cpus} × ${m.model}, ${Number(m.memoryGiB.toFixed(1))} GiB, ${m.os}`;
}

/** Sizes present, ascending */
export function sizesOf(items: readonly { readonly size: number }[]): number[] {
  return [...new Set(items.map((c) => c.size))].sort((a, b) => a - b);
}

export const GROUP_ORDER = ['reads', 'writes', 'sets', 'uploads'] as const;

/** Comparisons in the order of the chart and the tables: group, then the run's order */
export function orderedComparisons(comparisons: readonly Comparison[]): Comparison[] {
  return comparisons
    .map((c, i) => ({ c, i }))
    .sort((a, b) => GROUP_ORDER.indexOf(a.c.group) - GROUP_ORDER.indexOf(b.c.group) || a.i - b.i)
    .map(({ c }) => c);
}

/** What tells two comparisons of one scenario and size apart, when the run has several engines or worker counts */
export function comparisonVariant(c: Comparison, all: readonly Comparison[]): string {
  const parts: string[] = [];
  if (new Set(all.map((x) => x.engine)).size > 1) parts.push(ENGINE_NAME[c.engine] ?? c.engine);
  if (new Set(all.map((x) => x.workers)).size > 1) parts.push(`${c.workers} worker${c.workers === 1 ? '' : 's'}`);
  return parts.join(', ');
}

// ---------------------------------------------------------------------------------------------
// SVG

/** The colours of the bars (tests check them) */
export const COLOURS = {
  met: '#1a7f37',
  'not-met': '#cf222e',
  none: '#8c959f',
  cpu: '#0969da',
  target: '#1f2328',
  parity: '#57606a',
  grid: '#d0d7de',
  text: '#1f2328',
  muted: '#57606a',
  background: '#ffffff',
} as const;

const WIDTH = 900;
const LEFT = 20;
/** plots start here (labels left of it) */
const PLOT_X0 = 320;
const PLOT_X1 = 740;
/** the right column (CPU ratio's figure) */
const RIGHT_COLUMN = 792;
const ROW = 30;
const BAR = 14;
const CPU_BAR = 4;
const FONT = "font-family=\"system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif\"";
/** the widest a linear scale goes (ratios to the baseline, scaling); longer bars are cut and say so */
const LINEAR_CAP = { comparisons: 2.5, scaling: 4 } as const;

/** Escapes text and attribute values (&, <, >, quotes) */
export function escapeXml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&apos;');
}

/** A coordinate with at most 1 decimal, no "-0" */
function px(n: number): string {
  const r = Math.round(n * 10) / 10;
  return String(r === 0 ? 0 : r);
}

/** Labels longer than this are cut (the full text is the row's tooltip) */
const LABEL_CHARS = 44;
function cut(text: string, max = LABEL_CHARS): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

function text(x: number, y: number, content: string, attrs = ''): string {
  return `<text x="${px(x)}" y="${px(y)}"${attrs ? ` ${attrs}` : ''}>${escapeXml(content)}</text>`;
}

/** A linear scale from 0 to a round maximum above every value (at most `cap`) */
function linearScale(values: readonly number[], floor: number, cap: number): { max: number; step: number; x: (v: number) => number } {
  const finite = values.filter((v) => Number.isFinite(v) && v > 0);
  const top = Math.min(cap, Math.max(floor, ...finite) * 1.08);
  const step = top <= 1.5 ? 0.25 : top <= 3 ? 0.5 : 1;
  const max = Math.ceil(top / step - 1e-9) * step;
  return { max, step, x: (v: number) => PLOT_X0 + (Math.min(Math.max(v, 0), max) / max) * (PLOT_X1 - PLOT_X0) };
}

const LOG_STEPS = [1, 2, 5];
/** 1-2-5 values from lo to hi */
function logTicks(lo: number, hi: number): number[] {
  const ticks: number[] = [];
  for (let e = Math.floor(Math.log10(lo)) - 1; e <= Math.ceil(Math.log10(hi)) + 1; e++) {
    for (const s of LOG_STEPS) {
      const v = Number((s * 10 ** e).toPrecision(3));
      if (v >= lo - 1e-12 && v <= hi + 1e-12) ticks.push(v);
    }
  }
  return ticks;
}

/** A log scale over 1-2-5 values, at least 0.5 … 10 */
function logScale(values: readonly number[]): { lo: number; hi: number; x: (v: number) => number; ticks: number[] } {
  const finite = values.filter((v) => Number.isFinite(v) && v > 0);
  const candidates = logTicks(1e-4, 1e6);
  const min = Math.min(0.5, ...finite);
  const max = Math.max(10, ...finite);
  const lo = [...candidates].reverse().find((v) => v <= min) ?? 1e-4;
  const hi = candidates.find((v) => v >= max) ?? 1e6;
  const span = Math.log10(hi) - Math.log10(lo);
  const x = (v: number): number => PLOT_X0 + ((Math.log10(Math.min(Math.max(v, lo), hi)) - Math.log10(lo)) / span) * (PLOT_X1 - PLOT_X0);
  return { lo, hi, x, ticks: logTicks(lo, hi) };
}

function tickLabel(v: number): string {
  return `${String(Number(v.toPrecision(4)))}×`;
}

/** Gridlines and tick labels of a panel (labels under the rows) */
function axis(ticks: readonly number[], x: (v: number) => number, top: number, bottom: number): string[] {
  const out: string[] = [];
  for (const t of ticks) {
    out.push(`<line x1="${px(x(t))}" y1="${px(top)}" x2="${px(x(t))}" y2="${px(bottom)}" stroke="${COLOURS.grid}" stroke-width="1"/>`);
    out.push(text(x(t), bottom + 15, tickLabel(t), `font-size="12" fill="${COLOURS.muted}" text-anchor="middle"`));
  }
  return out;
}

/** A vertical reference line across a panel, labelled at its top */
function referenceLine(xv: number, top: number, bottom: number, label: string): string[] {
  return [
    `<line x1="${px(xv)}" y1="${px(top - 4)}" x2="${px(xv)}" y2="${px(bottom)}" stroke="${COLOURS.parity}" stroke-width="1.5" stroke-dasharray="5 3"/>`,
    text(xv, top - 8, label, `font-size="12" fill="${COLOURS.muted}" text-anchor="middle" ${HALO}`),
  ];
}

/** The target marker: a dark line across the row and a small triangle above it */
function targetMarker(xv: number, barTop: number): string {
  const y0 = barTop - 5;
  const y1 = barTop + BAR + CPU_BAR + 5;
  return (
    `<g class="target-marker">` +
    `<line x1="${px(xv)}" y1="${px(y0)}" x2="${px(xv)}" y2="${px(y1)}" stroke="${COLOURS.target}" stroke-width="2"/>` +
    `<path d="M${px(xv - 4)} ${px(y0 - 5)}L${px(xv + 4)} ${px(y0 - 5)}L${px(xv)} ${px(y0)}Z" fill="${COLOURS.target}"/>` +
    `</g>`
  );
}

/** The value at a bar's end, with a white halo so that it reads over lines */
function valueText(x: number, y: number, content: string, anchor: 'start' | 'end'): string {
  return text(x, y, content, `font-size="12" font-weight="600" fill="${COLOURS.text}" text-anchor="${anchor}" stroke="${COLOURS.background}" stroke-width="3" paint-order="stroke"`);
}

/** The value of a bar cut at the scale's end: inside the bar, in white, ahead of the cut's notch */
function cutValueText(end: number, y: number, content: string): string {
  return text(end - 10, y, content, `font-size="12" font-weight="700" fill="${COLOURS.background}" text-anchor="end"`);
}

/** The notch that says a bar goes on past the scale */
function cutNotch(end: number, barTop: number): string {
  return `<path class="cut" d="M${px(end - 6)} ${px(barTop)}L${px(end)} ${px(barTop + BAR / 2)}L${px(end - 6)} ${px(barTop + BAR)}L${px(end)} ${px(barTop + BAR)}L${px(end)} ${px(barTop)}Z" fill="${COLOURS.background}"/>`;
}

const MARK: Record<TargetStatus, string> = { met: ' ✓', 'not-met': ' ✗', none: '' };

function panelTitle(y: number, title: string, subtitle: string): string[] {
  return [text(LEFT, y, title, `font-size="16" font-weight="700" fill="${COLOURS.text}"`), text(LEFT, y + 18, subtitle, `font-size="12" fill="${COLOURS.muted}"`)];
}

/** a white outline under text, so that grid and reference lines do not cross it */
const HALO = `stroke="${COLOURS.background}" stroke-width="4" stroke-linejoin="round" paint-order="stroke"`;

function groupHeading(y: number, heading: string): string {
  return text(LEFT, y, heading, `font-size="13" font-weight="700" fill="${COLOURS.text}" ${HALO}`);
}

function rowLabel(y: number, label: string): string {
  return text(LEFT + 10, y, cut(label), `font-size="12" fill="${COLOURS.text}" ${HALO}`);
}

/** Panel 1: ours / baseline per scenario, grouped by size */
function comparisonPanel(results: SuiteResults, top: number): { parts: string[]; height: number } {
  const all = orderedComparisons(results.comparisons);
  const parts: string[] = [];
  const engines = new Set(all.map((c) => c.engine));
  const driver = engines.has('postgres') ? (engines.has('sqlite') ? 'better-sqlite3 (or pg)' : 'pg') : 'better-sqlite3';
  parts.push(...panelTitle(top + 16, 'Ours / hand-written baseline', `requests per second of our server ÷ those of a node:http + ${driver} server doing the same SQL, same bytes; right of 1.0: faster`));
  let y = top + 60;
  const plotTop = y;
  if (all.length === 0) {
    parts.push(text(LEFT + 10, y + 14, 'No comparison measured in this run.', `font-size="12" fill="${COLOURS.muted}"`));
    return { parts, height: y + 30 - top };
  }
  const scale = linearScale(all.flatMap((c) => [c.ratio, c.cpuRatio ?? 0, c.target ?? 0]), 1.25, LINEAR_CAP.comparisons);
  const rows: string[] = [];
  for (const size of sizesOf(all)) {
    rows.push(groupHeading(y + 16, `${sizeLabel(size)} items (${groupDigits(size)})`));
    y += 26;
    for (const c of all.filter((x) => x.size === size)) {
      const status = targetStatus(c.ratio, c.target);
      const variant = comparisonVariant(c, all);
      const label = variant ? `${c.title} (${variant})` : c.title;
      const barTop = y + 6;
      const end = Number.isFinite(c.ratio) ? scale.x(c.ratio) : PLOT_X0;
      const cutOff = Number.isFinite(c.ratio) && c.ratio > scale.max;
      const tip =
        `${c.title}, ${groupDigits(c.size)} items${variant ? `, ${variant}` : ''}: ours ${groupDigits(c.ours.requestsPerSecond)} req/s, baseline ${groupDigits(c.baseline.requestsPerSecond)} req/s, ` +
        `ratio ${formatRatio(c.ratio, c.target, 'atLeast', true)}` +
        (c.target !== undefined ? `, target ≥ ${formatTarget(c.target)} ${status === 'met' ? 'met' : 'not met'}` : ', no target') +
        (c.cpuRatio !== undefined ? `, CPU ratio ${formatRatio(c.cpuRatio, undefined, 'atLeast', true)}` : '');
      rows.push(`<g class="row comparison" data-group="${escapeXml(c.group)}" data-scenario="${escapeXml(c.scenario)}" data-size="${c.size}" data-status="${status}">`);
      rows.push(`<title>${escapeXml(tip)}</title>`);
      rows.push(rowLabel(barTop + 12, label));
      rows.push(`<rect class="bar" x="${px(PLOT_X0)}" y="${px(barTop)}" width="${px(end - PLOT_X0)}" height="${BAR}" fill="${COLOURS[status]}"/>`);
      if (cutOff) rows.push(cutNotch(end, barTop));
      if (c.cpuRatio !== undefined && Number.isFinite(c.cpuRatio)) {
        rows.push(`<rect class="cpu" x="${px(PLOT_X0)}" y="${px(barTop + BAR + 1)}" width="${px(scale.x(c.cpuRatio) - PLOT_X0)}" height="${CPU_BAR}" fill="${COLOURS.cpu}"/>`);
        rows.push(text(RIGHT_COLUMN, barTop + 12, `CPU ${formatRatio(c.cpuRatio, undefined, 'atLeast', true)}×`, `font-size="12" fill="${COLOURS.cpu}"`));
      }
      if (c.target !== undefined) rows.push(targetMarker(scale.x(c.target), barTop));
      const value = `${formatRatio(c.ratio, c.target, 'atLeast', true)}×${MARK[status]}`;
      rows.push(cutOff ? cutValueText(end, barTop + 11, value) : valueText(end + 5, barTop + 12, value, 'start'));
      rows.push('</g>');
      y += ROW;
    }
    y += 4;
  }
  const bottom = y;
  const ticks: number[] = [];
  for (let v = 0; v <= scale.max + 1e-9; v += scale.step) ticks.push(Number(v.toFixed(2)));
  parts.push(...axis(ticks, scale.x, plotTop, bottom));
  parts.push(...referenceLine(scale.x(1), plotTop, bottom, '1.0 = parity'));
  parts.push(...rows);
  return { parts, height: bottom + 26 - top };
}

/** Panel 2: ours / peer, log scale, bars from 1.0 */
function peerPanel(results: SuiteResults, top: number): { parts: string[]; height: number } {
  const peers = results.peers;
  const parts: string[] = [];
  parts.push(...panelTitle(top + 16, 'Ours / peers (log scale)', 'requests per second of our server ÷ those of another server over a copy of the same data; right of 1.0: we are faster'));
  let y = top + 60;
  const plotTop = y;
  const scale = logScale(peers.flatMap((p) => [p.ratio ?? 1, p.cpuRatio ?? 1, p.target ?? 1]));
  const rows: string[] = [];
  const names = [...new Set(peers.map((p) => p.peer))];
  for (const name of names) {
    const ofPeer: PeerComparison[] = peers.filter((p) => p.peer === name);
    const nodes = [...new Set(ofPeer.map((p) => bareVersion(p.node)))];
    rows.push(groupHeading(y + 16, `vs ${name} (both on Node ${nodes.join(', ')})`));
    y += 26;
    for (const p of ofPeer) {
      const barTop = y + 6;
      const has = p.other !== undefined && p.ratio !== undefined && Number.isFinite(p.ratio);
      const status = has ? targetStatus(p.ratio, p.target) : 'none';
      const label = `${p.title} · ${sizeLabel(p.size)}`;
      const tip = has
        ? `${p.title}, ${groupDigits(p.size)} items: ours ${groupDigits(p.ours.requestsPerSecond)} req/s, ${p.peer} ${groupDigits(p.other?.requestsPerSecond ?? 0)} req/s, ratio ${formatRatio(p.ratio, p.target, 'atLeast', true)}` +
          (p.target !== undefined ? `, target ≥ ${formatTarget(p.target)} ${status === 'met' ? 'met' : 'not met'}` : '') +
          (p.cpuRatio !== undefined ? `, CPU ratio ${formatRatio(p.cpuRatio, undefined, 'atLeast', true)}` : '') +
          (p.note ? ` (${p.note})` : '')
        : `${p.title}, ${groupDigits(p.size)} items: ${p.peer} cannot answer it in one request${p.note ? `: ${p.note}` : ''}`;
      rows.push(`<g class="row peer" data-scenario="${escapeXml(p.scenario)}" data-size="${p.size}" data-peer="${escapeXml(p.peer)}" data-status="${has ? status : 'na'}">`);
      rows.push(`<title>${escapeXml(tip)}</title>`);
      rows.push(rowLabel(barTop + 12, label));
      const one = scale.x(1);
      if (has && p.ratio !== undefined) {
        const end = scale.x(p.ratio);
        rows.push(`<rect class="bar" x="${px(Math.min(one, end))}" y="${px(barTop)}" width="${px(Math.max(Math.abs(end - one), 1))}" height="${BAR}" fill="${COLOURS[status]}"/>`);
        if (p.cpuRatio !== undefined && Number.isFinite(p.cpuRatio)) {
          const cpuEnd = scale.x(p.cpuRatio);
          rows.push(`<rect class="cpu" x="${px(Math.min(one, cpuEnd))}" y="${px(barTop + BAR + 1)}" width="${px(Math.max(Math.abs(cpuEnd - one), 1))}" height="${CPU_BAR}" fill="${COLOURS.cpu}"/>`);
          rows.push(text(RIGHT_COLUMN, barTop + 12, `CPU ${formatRatio(p.cpuRatio, undefined, 'atLeast', true)}×`, `font-size="12" fill="${COLOURS.cpu}"`));
        }
        if (p.target !== undefined) rows.push(targetMarker(scale.x(p.target), barTop));
        const value = `${formatRatio(p.ratio, p.target, 'atLeast', true)}×${MARK[status]}`;
        rows.push(p.ratio >= 1 ? valueText(end + 5, barTop + 12, value, 'start') : valueText(end - 5, barTop + 12, value, 'end'));
      } else {
        rows.push(text(one + 6, barTop + 12, 'n/a — cannot in one request', `font-size="12" font-style="italic" fill="${COLOURS.muted}"`));
      }
      rows.push('</g>');
      y += ROW;
    }
    y += 4;
  }
  const bottom = y;
  parts.push(...axis(scale.ticks, scale.x, plotTop, bottom));
  parts.push(...referenceLine(scale.x(1), plotTop, bottom, '1.0 = parity'));
  parts.push(...rows);
  return { parts, height: bottom + 26 - top };
}

/** Panel 3: cost at the large size / cost at the small size, per read */
function scalingPanel(results: SuiteResults, top: number): { parts: string[]; height: number } {
  const scaling: readonly Scaling[] = results.scaling;
  const parts: string[] = [];
  parts.push(...panelTitle(top + 16, 'Cost follows the page', 'our cost per request at the largest size ÷ at the smallest (CPU per request); within the target line, the cost does not grow with the data'));
  let y = top + 60;
  const plotTop = y;
  const scale = linearScale(scaling.flatMap((s) => [s.ratio, s.target]), 2, LINEAR_CAP.scaling);
  const rows: string[] = [];
  for (const s of scaling) {
    const barTop = y + 6;
    const status = targetStatus(s.ratio, s.target, 'atMost');
    const end = Number.isFinite(s.ratio) ? scale.x(s.ratio) : PLOT_X0;
    const tip =
      `${s.title}: ${groupDigits(s.small, 1)} at ${groupDigits(s.smallSize)} items, ${groupDigits(s.large, 1)} at ${groupDigits(s.largeSize)}, ratio ${formatRatio(s.ratio, s.target, 'atMost', true)}, ` +
      `target ≤ ${formatTarget(s.target)} ${status === 'met' ? 'met' : 'not met'}${s.why ? `: ${s.why}` : ''}`;
    rows.push(`<g class="row scaling" data-scenario="${escapeXml(s.scenario)}" data-status="${status}">`);
    rows.push(`<title>${escapeXml(tip)}</title>`);
    rows.push(rowLabel(barTop + 12, `${s.title} · ${sizeLabel(s.smallSize)} → ${sizeLabel(s.largeSize)}`));
    rows.push(`<rect class="bar" x="${px(PLOT_X0)}" y="${px(barTop)}" width="${px(end - PLOT_X0)}" height="${BAR}" fill="${COLOURS[status]}"/>`);
    const cutOff = Number.isFinite(s.ratio) && s.ratio > scale.max;
    if (cutOff) rows.push(cutNotch(end, barTop));
    const value = `${formatRatio(s.ratio, s.target, 'atMost', true)}×${MARK[status]}`;
    rows.push(cutOff ? cutValueText(end, barTop + 11, value) : valueText(end + 5, barTop + 12, value, 'start'));
    rows.push('</g>');
    y += ROW;
  }
  const bottom = y + 4;
  const ticks: number[] = [];
  for (let v = 0; v <= scale.max + 1e-9; v += scale.step) ticks.push(Number(v.toFixed(2)));
  parts.push(...axis(ticks, scale.x, plotTop, bottom));
  for (const target of [...new Set(scaling.map((s) => s.target))].sort((a, b) => a - b)) {
    parts.push(...referenceLine(scale.x(target), plotTop, bottom, `${formatTarget(target)}× target`));
  }
  parts.push(...rows);
  return { parts, height: bottom + 26 - top };
}

/** The legend: what each colour and mark is */
function legend(y: number): string[] {
  const out: string[] = [];
  let x = LEFT;
  const swatch = (status: TargetStatus, label: string): void => {
    out.push(`<rect x="${px(x)}" y="${px(y - 11)}" width="14" height="12" fill="${COLOURS[status]}"/>`);
    out.push(text(x + 19, y, label, `font-size="12" fill="${COLOURS.text}"`));
    x += 19 + label.length * 6.6 + 16;
  };
  swatch('met', 'target met ✓');
  swatch('not-met', 'target not met ✗');
  swatch('none', 'no target');
  out.push(`<line x1="${px(x + 5)}" y1="${px(y - 14)}" x2="${px(x + 5)}" y2="${px(y + 3)}" stroke="${COLOURS.target}" stroke-width="2"/>`);
  out.push(`<path d="M${px(x + 1)} ${px(y - 19)}L${px(x + 9)} ${px(y - 19)}L${px(x + 5)} ${px(y - 14)}Z" fill="${COLOURS.target}"/>`);
  out.push(text(x + 15, y, 'the target', `font-size="12" fill="${COLOURS.text}"`));
  x += 15 + 70 + 16;
  out.push(`<line x1="${px(x + 5)}" y1="${px(y - 14)}" x2="${px(x + 5)}" y2="${px(y + 3)}" stroke="${COLOURS.parity}" stroke-width="1.5" stroke-dasharray="5 3"/>`);
  out.push(text(x + 15, y, '1.0 = parity', `font-size="12" fill="${COLOURS.text}"`));
  const y2 = y + 20;
  out.push(`<rect x="${px(LEFT)}" y="${px(y2 - 6)}" width="30" height="${CPU_BAR}" fill="${COLOURS.cpu}"/>`);
  out.push(
    text(LEFT + 38, y2, 'thin bar, "CPU" figure: CPU ratio, baseline (or peer) CPU per request ÷ ours (right of 1.0: we use less CPU)', `font-size="12" fill="${COLOURS.text}"`),
  );
  return out;
}

/** The chart of one run: an SVG document */
export function renderChart(given: SuiteResults): string {
  const results = withoutNulls(given);
  const body: string[] = [];
  const engines = [...new Set(results.comparisons.map((c) => ENGINE_NAME[c.engine] ?? c.engine))];
  const workers = [...new Set(results.comparisons.map((c) => c.workers))].sort((a, b) => a - b);
  body.push(
    `<text x="${LEFT}" y="30" font-size="20" font-weight="700" fill="${COLOURS.text}">dataset-rest benchmarks` +
      `<tspan font-size="14" font-weight="400" fill="${COLOURS.muted}"> · run of ${escapeXml(runDate(results.startedAt))}</tspan></text>`,
  );
  const run =
    `${machineLine(results)} · Node ${bareVersion(results.versions.node)}` +
    (engines.length > 0 ? ` · ${engines.join(', ')}` : '') +
    (workers.length > 0 ? ` · our server's workers: ${workers.join(', ')}` : '');
  body.push(text(LEFT, 52, cut(run, 130), `font-size="12" fill="${COLOURS.muted}"`));
  body.push(...legend(82));
  let y = 112;
  const panels = [comparisonPanel];
  if (results.peers.length > 0) panels.push(peerPanel);
  if (results.scaling.length > 0) panels.push(scalingPanel);
  for (const panel of panels) {
    body.push(`<line x1="${LEFT}" y1="${px(y + 2)}" x2="${WIDTH - LEFT}" y2="${px(y + 2)}" stroke="${COLOURS.grid}" stroke-width="1"/>`);
    const { parts, height } = panel(results, y + 6);
    body.push(...parts);
    y += 6 + height;
  }
  const height = Math.ceil(y + 10);
  const title = `dataset-rest benchmarks, ${runDate(results.startedAt)}: ${machineLine(results)}, Node ${bareVersion(results.versions.node)}`;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" ${FONT} role="img">\n` +
    `<title>${escapeXml(title)}</title>\n` +
    `<rect width="${WIDTH}" height="${height}" fill="${COLOURS.background}"/>\n` +
    body.join('\n') +
    `\n</svg>\n`
  );
}
