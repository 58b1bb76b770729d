// The live-feed bench (`npm run bench:live`) in its short mode, as a process: it must run every
// part to its end and print its figures — the latency percentiles of parts 1 and 2 (part 2 on the
// run's PostgreSQL server when there is one, else an embedded one of its own; "SKIPPED" when none
// can start), the idle streams' RSS, the write cost ratios. Its numbers are not judged here (the
// test files run two at a time on this machine): only that it measures them.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { BENCH_PG_ENV } from '../../bench/postgres.js';
import { TEST_PG_ENV } from '../support/postgres-server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function run(args: string[], timeoutMs: number): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    // the run's PostgreSQL server, when test/run.ts has one: the bench makes its database there
    if (env[TEST_PG_ENV] && !env[BENCH_PG_ENV]) env[BENCH_PG_ENV] = env[TEST_PG_ENV];
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/live-bench.ts', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`the bench did not end in ${timeoutMs} ms; its output:\n${out}\n${err}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

describe('npm run bench:live -- --short', () => {
  it('runs the four parts and prints their figures', { timeout: 240_000 }, async () => {
    const { code, out, err } = await run(['--short'], 220_000);
    assert.equal(code, 0, `exit code ${code}\n${out}\n${err}`);
    const percentiles = /commit → event latency \(.*over [\d,]+ entity events\): p50 [\d.]+ ms, p95 [\d.]+ ms, p99 [\d.]+ ms, max [\d.]+ ms — target p99 ≤ (\d+) ms/g;
    const targets = [...out.matchAll(percentiles)].map((m) => m[1]);
    assert.ok(targets.includes('100'), `part 1's percentiles:\n${out}`);
    // part 2: measured (its own percentiles, target 500 ms), or said to be skipped
    assert.ok(targets.includes('500') || /^ {2}SKIPPED: no PostgreSQL could be started/m.test(out), `part 2:\n${out}`);
    assert.match(out, /write sent → event received \(the write's own time in it, every event with an id, [\d,]+\): p50 [\d.]+ ms/);
    assert.match(out, /^1\. SQLite, one instance: 40 streams/m);
    assert.match(out, /^2\. PostgreSQL, two instances/m);
    assert.match(out, /^3\. 200 idle streams/m);
    assert.match(out, /server RSS: before [\d.]+ MB, with the streams [\d.]+ MB/);
    assert.match(out, /growth [\d.]+ MB .* target ≤ 200 MB growth: (met|MISSED)/);
    assert.match(out, /every stream still open/);
    assert.match(out, /tracked \/ untracked: [\d.]+× server CPU a write/);
    assert.match(out, /with 40 streams on another dataclass: [\d.]+× .*on its own dataclass: [\d.]+×/);
    assert.match(out, /^summary \(\d+ s in all\):/m);
    assert.doesNotMatch(out, /FAILED/);
  });
});
