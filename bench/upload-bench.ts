// The upload bench (`npm run bench:upload`): a 50 MB upload (POST /rest/$upload?$binary=true,
// streamed, no length announced), attached to an entity and read back, through our server on
// 127.0.0.1, against a baseline in the same run (bench/upload-baseline-server.ts: node:http piping
// the body into a file and back). For each server: the time up and down, and the memory the
// server process held at its peak during each (VmHWM from /proc/PID/status, reset before with
// /proc/PID/clear_refs) above what it held before. Target: memory stays flat — the peak grows by
// a small fraction of the file (a few chunks of 256 KB, SQLite's page cache), never the file.
//
// Options: --mb N (50)

import { strictEqual } from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { formatTable } from './measure.js';
import { startServer, temporaryFolder, type ServerProcess } from './processes.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PIECE = 64 * 1024;

const { values } = parseArgs({ options: { mb: { type: 'string', default: '50' } } });
const SIZE = Number(values.mb) * 1024 * 1024;

/** The file's bytes, made piece by piece (never whole in this process either). */
function piece(i: number): Buffer {
  const b = Buffer.alloc(PIECE);
  for (let at = 0; at < PIECE; at += 4) b.writeUInt32LE(((i * PIECE + at) * 2654435761) >>> 0, at);
  return b;
}

function expectedHash(): string {
  const h = createHash('sha256');
  for (let i = 0; i * PIECE < SIZE; i++) h.update(piece(i));
  return h.digest('hex');
}

/** Kilobytes of the process's resident memory now (VmRSS) and at its peak since the last reset (VmHWM). */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

function uploadTo(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'transfer-encoding': 'chunked' } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += String(d)));
      res.on('end', () => (res.statusCode === 200 ? resolve((JSON.parse(text) as { ID: string }).ID) : reject(new Error(`${res.statusCode}: ${text}`))));
    });
    req.on('error', reject);
    let i = 0;
    const pump = () => {
      while (i * PIECE < SIZE) {
        if (!req.write(piece(i++))) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

async function downloadHash(url: string): Promise<string> {
  const res = await fetch(url);
  strictEqual(res.status, 200);
  const h = createHash('sha256');
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) h.update(chunk);
  return h.digest('hex');
}

interface Result {
  name: string;
  upMs: number;
  downMs: number;
  before: number;
  upPeak: number;
  downPeak: number;
}

async function measure(server: ServerProcess, uploadUrl: string, readUrl: (id: string) => Promise<string>, hash: string): Promise<Result> {
  await uploadTo(uploadUrl); // warm-up (SIZE again: the code paths and the database file grow once)
  const before = memory(server.pid).rss;
  resetPeak(server.pid);
  let t = performance.now();
  const id = await uploadTo(uploadUrl);
  const upMs = performance.now() - t;
  const upPeak = memory(server.pid).peak;
  const url = await readUrl(id);
  resetPeak(server.pid);
  t = performance.now();
  strictEqual(await downloadHash(url), hash, `${server.name}: the bytes read back are the bytes sent`);
  const downMs = performance.now() - t;
  return { name: server.name, upMs, downMs, before, upPeak, downPeak: memory(server.pid).peak };
}

const dir = temporaryFolder('dataset-rest-upload-bench-');
writeFileSync(join(dir, 'model.json'), readFileSync(join(ROOT, 'demo', 'model.json')));
const files = temporaryFolder('dataset-rest-upload-baseline-');
process.stdout.write(`upload bench: ${SIZE / 1024 / 1024} MB streamed up (chunked, ${PIECE / 1024} KB writes) and down, 127.0.0.1\n`);
const hash = expectedHash();

const ours = await startServer({
  name: 'ours',
  args: ['bin/dataset-rest.mjs', '--project', dir, '--port', '0', '--log-level', 'warn', '--max-upload-size', `${SIZE * 3}`],
  cwd: ROOT,
  ready: /dataset-rest listening on (http:\/\/\S+)\/rest/,
});
const oursResult = await measure(ours, `${ours.url}/rest/$upload?$binary=true`, async (id) => {
  const res = await fetch(`${ours.url}/rest/Employee?$method=update`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ lastName: 'Bench', resume: { ID: id } }) });
  const body = (await res.json()) as { resume: { __deferred: { uri: string } } };
  return `${ours.url}${body.resume.__deferred.uri}`;
}, hash);
await ours.stop();

const baseline = await startServer({ name: 'baseline', args: ['--import', 'tsx', 'bench/upload-baseline-server.ts', files], cwd: ROOT, ready: /baseline listening on (http:\/\/\S+)/ });
const baseResult = await measure(baseline, `${baseline.url}/`, async (id) => `${baseline.url}/${id}`, hash);
await baseline.stop();

const mb = SIZE / 1024 / 1024;
const row = (r: Result) => [
  r.name, (mb / (r.upMs / 1000)).toFixed(0), (mb / (r.downMs / 1000)).toFixed(0),
  (r.before / 1024).toFixed(1), (r.upPeak / 1024).toFixed(1), ((r.upPeak - r.before) / 1024).toFixed(1), ((r.downPeak - r.before) / 1024).toFixed(1),
];
process.stdout.write(`\n${formatTable(['server', 'up MB/s', 'down MB/s', 'RSS before MB', 'peak up MB', 'peak growth up MB', 'peak growth down MB'], [row(oursResult), row(baseResult)])}\n`);
const growth = Math.max(oursResult.upPeak, oursResult.downPeak) - oursResult.before;
process.stdout.write(`\nours/baseline: upload speed ${(baseResult.upMs / oursResult.upMs).toFixed(2)}, download speed ${(baseResult.downMs / oursResult.downMs).toFixed(2)}; `
  + `our peak memory grew by ${(growth / 1024).toFixed(1)} MB for a ${mb} MB file (${((growth / 1024 / mb) * 100).toFixed(0)}% of it) — target: flat (well under the file): ${growth / 1024 < mb / 2 ? 'met' : 'NOT met'}\n`);
