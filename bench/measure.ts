// Measuring helpers shared by the benches: a process's CPU time, and exact response times.

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

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
  get count(): number {
    return this.#n;
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

/**
 * CPU time (ms) of a process and of all its children, live and ended: its own time, the time of
 * its children it has reaped (cutime, cstime) and that of each child still running. For a
 * PostgreSQL postmaster: the whole database server (backends, background workers). Undefined off Linux.
 */
export function processTreeCpuMs(pid: number): number | undefined {
  try {
    ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    const fields = (p: number | string): string[] => readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
    const own = fields(pid);
    let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const f = fields(entry);
        // f[1] is the parent's pid (the fields after "comm) ": state, ppid, …)
        if (Number(f[1]) === pid) ticks += Number(f[11]) + Number(f[12]);
      } catch {
        // ended while read
      }
    }
    return (ticks * 1000) / ticksPerSecond;
  } catch {
    return undefined;
  }
}
