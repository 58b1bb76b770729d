// `npm run bench:logins`: a login refused for an unknown name must take as long as one refused for
// a wrong password (else the time tells which names exist). Built-in users (auth.json), one
// server in this process, authentify called through inject, the three kinds interleaved (unknown
// name, wrong password, right password) so that the machine's noise falls on each alike; each
// attempt from its own address and the lockout out of reach, so that no refusal is a throttle's.
// Prints the median of each and the ratio unknown / wrong; target within 0.8–1.25. Options:
// --rounds N (60).

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { coreOf } from '../src/datastore/datastore.js';
import { buildServer } from '../src/http/server.js';
import { openProject } from '../src/project/open.js';
import { temporaryFolder } from './processes.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '60' } } });
const rounds = Number(values.rounds);
const dir = temporaryFolder('login-timing-');
const project = join(dir, 'project');
mkdirSync(project);
writeFileSync(join(project, 'model.json'), JSON.stringify({ name: 'Timing', dataClasses: [{ name: 'Thing', attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }] }] }));
writeFileSync(join(project, 'roles.json'), JSON.stringify({ privileges: [{ privilege: 'edit', includes: [] }], roles: [{ role: 'Editor', privileges: ['edit'] }], permissions: { allowed: [{ applyTo: 'ds', type: 'datastore', read: ['guest'], execute: ['guest'] }] } }));
writeFileSync(join(project, 'auth.json'), JSON.stringify({ users: { lockout: { failures: 1_000_000, minutes: 1 } } }));
const ds = await openProject(project, { db: join(dir, 'timing.sqlite') });
const app = await buildServer(ds, { logLevel: 'silent' });
// (a user a round: the per-name throttle, 5 failures a minute, stays out of the way)
for (let round = 0; round < rounds; round++) await coreOf(ds).users?.add(`user-${round}`, 'the-right-password', ['Editor']);

const kinds = {
  unknown: (round: number) => [`nobody-${round}`, 'whatever-password'],
  wrong: (round: number) => [`user-${round}`, 'whatever-password'],
  right: (round: number) => [`user-${round}`, 'the-right-password'],
} as const;
const times: Record<keyof typeof kinds, number[]> = { unknown: [], wrong: [], right: [] };
let address = 0;
for (let round = 0; round < rounds; round++) {
  // (in another order each round: whatever the previous attempt leaves behind falls on each kind alike)
  const order = (Object.keys(kinds) as (keyof typeof kinds)[]).sort(() => Math.random() - 0.5);
  for (const kind of order) {
    const [userName, password] = kinds[kind](round);
    address++;
    const start = performance.now();
    const res = await app.inject({ method: 'POST', url: '/rest/$catalog/authentify', payload: [{ userName, password }], remoteAddress: `127.${(address >> 16) & 255}.${(address >> 8) & 255}.${address & 255}` });
    times[kind].push(performance.now() - start);
    const expected = kind === 'right' ? 200 : 401;
    if (res.statusCode !== expected) throw new Error(`${kind}: ${res.statusCode} ${res.body}`);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const m = { unknown: median(times.unknown), wrong: median(times.wrong), right: median(times.right) };
const ratio = m.unknown / m.wrong;
process.stdout.write(`login timing (${rounds} rounds, Node ${process.version}): unknown name ${m.unknown.toFixed(1)} ms, wrong password ${m.wrong.toFixed(1)} ms, right password ${m.right.toFixed(1)} ms\n`);
process.stdout.write(`unknown / wrong = ${ratio.toFixed(2)} (target 0.80–1.25): ${ratio >= 0.8 && ratio <= 1.25 ? 'met' : 'NOT met'}\n`);
await app.close();
await ds.close();
process.exitCode = ratio >= 0.8 && ratio <= 1.25 ? 0 : 1;
