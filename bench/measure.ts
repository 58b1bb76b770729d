// Measuring helpers shared by the benches: a process's CPU time, and exact response times.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;
/** CPU time (user + system, all threads) a process has used so far, in ms; undefined off Linux. */
export function processCpuMs(pid: number): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond;
  } catch {
    return undefined;
  }
}

/** Response times in ms, kept whole (autocannon's own histogram rounds them to whole ms). */
export class Latencies {
  #values = new Float64Array(1 << 16);
  #n = 0;
  add(ms: number): void {
    if (this.#n === this.#values.length) {
      const bigger = new Float64Array(this.#values.length * 2);
      bigger.set(this.#values);
      this.#values = bigger;
    }
    this.#values[this.#n++] = ms;
  }
  percentile(p: number): number {
    if (this.#n === 0) return NaN;
    const sorted = this.#values.slice(0, this.#n).sort();
    return sorted[Math.min(this.#n - 1, Math.floor((p / 100) * this.#n))];
  }
}

/** Rows under a head as aligned text: the first column left-aligned, the others right-aligned. */
export function formatTable(head: string[], rows: string[][]): string {
  const widths = head.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c].length)));
  const line = (cells: string[]) => cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
