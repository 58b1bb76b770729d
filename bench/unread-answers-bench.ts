// Answers nobody reads (issue 34): the demo server (a child process, SQLite, 127.0.0.1) and
// --connections raw sockets that each ask for the demo's big answer
// (/rest/Employee?$top=10000&$attributes=colleagues.colleagues.*, about 29 MB, inside every limit)
// and never read a byte of it, held for --hold seconds, while --clients other clients read small
// answers in a loop. Measured: the server's RSS (idle, peak, held at the end of the attack, after
// the sockets close), the other clients' latencies (p50/p99/max) and failures during it, the
// answers in flight and their bytes (its /metrics, where the version has them: the send timeout
// closes the sockets that do not read — a paused client does not see it until it reads), and the longest the
// event loop was held while one big answer is built (the worst latency of /health pinged every
// 5 ms while one is read). Bounded in count and time; stops by itself, removes its files.
//
// `npx tsx bench/unread-answers-bench.ts [--connections 45] [--hold 60] [--clients 4] [--root DIR] [-- server flags…]`
// (--root: the checkout whose server runs, to measure another version with the same script)

import { request as httpRequest, Agent } from 'node:http';
import { connect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServer, temporaryFolder } from './processes.js';

const { values, positionals } = parseArgs({
  options: {
    connections: { type: 'string', default: '45' },
    hold: { type: 'string', default: '60' },
    clients: { type: 'string', default: '4' },
    root: { type: 'string' },
  },
  allowPositionals: true,
});
const CONNECTIONS = Math.min(500, Number(values.connections));
const HOLD_S = Math.min(300, Number(values.hold));
const CLIENTS = Math.min(64, Number(values.clients));
const ROOT = resolve(values.root ?? fileURLToPath(new URL('..', import.meta.url)));
const BIG = '/rest/Employee?$top=10000&$attributes=colleagues.colleagues.*';
const SMALL = ['/rest/City?$top=5', '/rest/Company(3)', '/rest/Employee?$top=3&$attributes=firstName,lastName'];

const MB = 1024 * 1024;
const mb = (kib: number): string => `${(kib / 1024).toFixed(0)} MB`;

/** VmRSS and VmHWM of a process, in KiB. */
function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS + 2 });

/** GET `path`, read whole: its status, size and time. */
function get(base: URL, path: string, timeoutMs = 30_000): Promise<{ status: number; bytes: number; ms: number }> {
  const started = performance.now();
  return new Promise((done) => {
    const req = httpRequest({ host: base.hostname, port: base.port, path, agent, timeout: timeoutMs }, (res) => {
      let bytes = 0;
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => done({ status: res.statusCode ?? 0, bytes, ms: performance.now() - started }));
      res.on('error', () => done({ status: 0, bytes, ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => done({ status: 0, bytes: 0, ms: performance.now() - started }));
    req.end();
  });
}

/** The answers in flight and their bytes, from the server's /metrics (undefined: a version without them). */
async function inFlight(base: URL): Promise<{ answers: number; bytes: number } | undefined> {
  const text = await fetch(new URL('/metrics', base)).then((r) => r.text(), () => '');
  const value = (measure: string) => new RegExp(`^dataset_rest_answers_in_flight\\{measure="${measure}"\\} (\\S+)`, 'm').exec(text)?.[1];
  const answers = value('answers');
  return answers === undefined ? undefined : { answers: Number(answers), bytes: Number(value('bytes')) };
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const folder = temporaryFolder('unread-answers-');
const server = await startServer({
  name: 'server',
  args: ['bin/dataset-rest.mjs', '--db', join(folder, 'demo.sqlite'), '--port', '0', '--log-level', 'warn', '--metrics', ...positionals],
  cwd: ROOT,
  ready: /dataset-rest listening on (http:\/\/\S+)\/rest/,
  timeoutMs: 120_000,
});
const base = new URL(server.url);
try {
  // warm-up: the big answer read once (its size), small ones
  const once = await get(base, BIG, 120_000);
  if (once.status !== 200) throw new Error(`${BIG} answered ${once.status}`);
  for (let i = 0; i < 50; i++) await get(base, SMALL[i % SMALL.length]);
  console.log(`server ${ROOT}${positionals.length ? ` ${positionals.join(' ')}` : ''}: ${BIG} is ${(once.bytes / MB).toFixed(1)} MB, read whole in ${(once.ms / 1000).toFixed(2)} s`);

  // the longest hold of the event loop while one big answer is built: /health pinged every 5 ms
  const pings: number[] = [];
  let building = true;
  const big = get(base, BIG, 120_000).finally(() => (building = false));
  while (building) {
    pings.push((await get(base, '/health')).ms);
    await sleep(5);
  }
  await big;
  pings.sort((a, b) => a - b);
  console.log(`while one is built and read: /health's worst latency ${pings[pings.length - 1].toFixed(0)} ms (p99 ${quantile(pings, 0.99).toFixed(0)} ms, ${pings.length} pings)`);

  await sleep(2000);
  const idle = memoryOf(server.pid);
  console.log(`idle RSS ${mb(idle.rss)}`);

  // the attack: sockets that ask and never read
  const sockets: Socket[] = [];
  let closedByServer = 0;
  let attacking = true;
  for (let i = 0; i < CONNECTIONS; i++) {
    const socket = connect({ host: base.hostname, port: Number(base.port) });
    socket.on('connect', () => {
      socket.write(`GET ${BIG} HTTP/1.1\r\nHost: ${base.host}\r\n\r\n`);
      socket.pause();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      if (attacking) closedByServer++;
    });
    sockets.push(socket);
  }
  const started = performance.now();
  let peak = idle.rss;
  const sampler = setInterval(() => (peak = Math.max(peak, memoryOf(server.pid).rss)), 100);
  const flights: { at: number; answers: number; bytes: number }[] = [];
  const flightSampler = setInterval(() => void inFlight(base).then((f) => f && flights.push({ at: (performance.now() - started) / 1000, ...f })), 1000);
  const latencies: number[] = [];
  let failures = 0;
  let refused = 0;
  let slowest = { ms: 0, at: 0, path: '' };
  await Promise.all(Array.from({ length: CLIENTS }, async (_, c) => {
    for (let i = c; performance.now() - started < HOLD_S * 1000; i++) {
      const r = await get(base, SMALL[i % SMALL.length], 10_000);
      latencies.push(r.ms);
      if (r.ms > slowest.ms) slowest = { ms: r.ms, at: (performance.now() - started - r.ms) / 1000, path: SMALL[i % SMALL.length] };
      if (r.status === 503) refused++;
      else if (r.status !== 200) failures++;
    }
  }));
  const held = memoryOf(server.pid);
  attacking = false;
  clearInterval(sampler);
  clearInterval(flightSampler);
  for (const s of sockets) s.destroy();
  await sleep(3000);
  const after = memoryOf(server.pid);
  const afterFlight = await inFlight(base);
  latencies.sort((a, b) => a - b);
  console.log(`${CONNECTIONS} sockets asking for ${BIG} and reading nothing, held ${HOLD_S} s; ${CLIENTS} other clients reading ${SMALL.join(', ')}`);
  console.log(`  RSS: idle ${mb(idle.rss)}, peak ${mb(peak)} (+${mb(peak - idle.rss)}), held at the end ${mb(held.rss)} (+${mb(held.rss - idle.rss)}), 3 s after the sockets closed ${mb(after.rss)} (+${mb(after.rss - idle.rss)})`);
  console.log(`  other clients: ${latencies.length} requests, p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms, max ${latencies[latencies.length - 1].toFixed(0)} ms (${slowest.path}, asked at ${slowest.at.toFixed(1)} s); 503 ${refused}, other failures ${failures}`);
  if (closedByServer > 0) console.log(`  attacking sockets that saw the server close them during the attack: ${closedByServer} of ${CONNECTIONS}`);
  if (flights.length > 0) {
    const most = flights.reduce((a, b) => (b.answers > a.answers ? b : a));
    const heaviest = flights.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    const last = flights[flights.length - 1];
    const firstCut = flights.find((f) => f.at > most.at && f.answers < most.answers);
    const allCut = flights.find((f) => f.at > most.at && f.answers === 0);
    const cuts = `${firstCut ? `the first closed by ${firstCut.at.toFixed(0)} s` : 'none closed'}${allCut ? `, all by ${allCut.at.toFixed(0)} s` : ''}`;
    console.log(`  answers in flight (the server's /metrics, each second): most ${most.answers} at ${most.at.toFixed(0)} s; most bytes ${(heaviest.bytes / MB).toFixed(1)} MB at ${heaviest.at.toFixed(0)} s; ${cuts}; at ${last.at.toFixed(0)} s ${last.answers} answers, ${(last.bytes / MB).toFixed(1)} MB; after the sockets closed ${afterFlight?.answers} answers, ${((afterFlight?.bytes ?? 0) / MB).toFixed(1)} MB`);
  } else console.log('  answers in flight: not in this version\'s /metrics');
} finally {
  agent.destroy();
  await server.stop();
}
