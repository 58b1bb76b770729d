// `npm run bench:sessions`: what sessions and permissions cost a read by key. Servers over the
// same SQLite file (100,000 rows from fixture.ts), loaded in alternating rounds with autocannon on
// 127.0.0.1: the server as it was before sessions (commit BEFORE_SESSIONS, taken from git into a
// temporary folder: the open read of its day), the server of today on the project without a
// roles.json (open: with no cookie each request is a new guest with a new cookie; a client keeping
// its guest cookie is the open read of today's server), and the same project with a roles.json that
// grants read to a privilege, read by a logged-in session (its cookie on every request: the session
// looked up, the grants checked at every step).
// Logged-in over today's open read with its cookie is the cost of the checks alone; over the read
// before sessions, it is also the cost of having sessions at all (the cookie read, the session
// found, the security headers written).
// Target: logged-in ≥ 0.9× the open read before sessions, judged on the median of the rounds' own
// ratios (each round loads the servers one after the other, so a ratio within a round is taken at
// one moment of a shared machine: a neighbour's burst moves one round, not the verdict). Options:
// --rows N (100000), --seconds S (40), --rounds R (10). Without git or that commit (a shallow clone),
// today's open read stands in.

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { createProject } from './fixture.js';
import { processCpuMs } from './measure.js';
import { startServer, temporaryFolder, type ServerProcess } from './processes.js';
import { databaseTarget, openStorage } from '../src/storage/open.js';
import { insertSession } from '../src/storage/system-tables/sessions.js';
import { createHash } from 'node:crypto';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TARGET = 0.9;
/** The last commit before sessions and permissions (issue 13). */
const BEFORE_SESSIONS = '6d3707c';

/** The repository as it was at `ref`, in `dir` (its node_modules today's), or undefined when git cannot give it. */
function checkout(ref: string, dir: string): string | undefined {
  try {
    mkdirSync(dir);
    const archive = execFileSync('git', ['-C', ROOT, 'archive', '--format=tar', ref], { maxBuffer: 1 << 30 });
    execFileSync('tar', ['-x', '-C', dir], { input: archive });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    return dir;
  } catch (e) {
    console.log(`(the server before sessions, ${ref}, cannot be had from git: ${(e as Error).message.split('\n')[0]}; today's open read stands in)`);
    return undefined;
  }
}
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const rows = arg('rows', 100_000);
const seconds = arg('seconds', 40);
const rounds = arg('rounds', 10);

const ROLES = {
  privileges: [{ privilege: 'reader', includes: [] }],
  roles: [],
  permissions: { allowed: [{ applyTo: 'ds', type: 'datastore', read: ['reader'], create: ['reader'], update: ['reader'], drop: ['reader'] }] },
  restrictedByDefault: true,
  forceLogin: false,
};

interface Side {
  readonly name: string;
  readonly server: ServerProcess;
  readonly headers: Record<string, string>;
  requests: number;
  seconds: number;
  cpuMs: number;
  /** each measured round's requests a second */
  rates: number[];
}

async function round(side: Side, duration: number): Promise<void> {
  const cpu0 = processCpuMs(side.server.pid);
  const r = await autocannon({
    url: side.server.url,
    connections: 10,
    duration,
    headers: side.headers,
    requests: [{ setupRequest: (request) => ({ ...request, path: `/rest/Item(${1 + Math.floor(Math.random() * rows)})` }) }],
  });
  const cpu1 = processCpuMs(side.server.pid);
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${side.name}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
  side.requests += r['2xx'];
  side.seconds += r.duration;
  side.rates.push(r['2xx'] / r.duration);
  side.cpuMs += cpu0 === undefined || cpu1 === undefined ? 0 : cpu1 - cpu0;
}

async function main(): Promise<number> {
  const dir = temporaryFolder('dataset-rest-session-bench-');
  const project = await createProject(dir, rows, 'sql');
  // the same model and database, with a roles.json
  const guarded = join(dir, 'guarded');
  mkdirSync(guarded);
  copyFileSync(join(project.dir, 'model.json'), join(guarded, 'model.json'));
  writeFileSync(join(guarded, 'roles.json'), JSON.stringify(ROLES));
  const start = (name: string, projectDir: string, root = ROOT) => startServer({
    name, args: ['bin/dataset-rest.mjs', '--project', projectDir, '--db', project.db, '--port', '0', '--log-level', 'warn'], cwd: root, ready: /dataset-rest listening on (http:\/\/\S+)\/rest/,
  });
  const beforeRoot = checkout(BEFORE_SESSIONS, join(dir, 'before-sessions'));
  const before = beforeRoot === undefined ? undefined : await start('before sessions', project.dir, beforeRoot);
  const open = await start('open', project.dir);
  const logged = await start('logged-in', guarded);
  try {
    // a logged-in session, stored as a login stores it (its token's hash, its privileges)
    const token = 'B'.repeat(32);
    const storage = await openStorage(databaseTarget(project.db));
    await insertSession(storage, {
      token: createHash('sha256').update(token).digest('hex'), id: 'A'.repeat(32), userName: 'bench', login: '', privileges: '["reader"]', storage: '{}', idle: 3_600_000, expires: Date.now() + 3_600_000, guest: false, address: '', used: Date.now(),
    });
    await storage.close();
    const loggedIn: Side = { name: 'logged-in read (roles.json, session cookie)', server: logged, headers: { cookie: `4DSID_Bench=${token}` }, requests: 0, seconds: 0, cpuMs: 0, rates: [] };
    const openToday: Side = { name: 'open read today (no roles.json, no cookie)', server: open, headers: {}, requests: 0, seconds: 0, cpuMs: 0, rates: [] };
    const guestCookie = (await fetch(`${open.url}/rest/Item(1)`)).headers.get('set-cookie')?.split(';')[0];
    if (!guestCookie) throw new Error('the open server gave no guest cookie');
    const openKept: Side = { name: 'open read today (no roles.json, its guest cookie kept)', server: open, headers: { cookie: guestCookie }, requests: 0, seconds: 0, cpuMs: 0, rates: [] };
    const openBefore: Side | undefined = before && { name: `open read before sessions (${BEFORE_SESSIONS})`, server: before, headers: {}, requests: 0, seconds: 0, cpuMs: 0, rates: [] };
    const baseline = openBefore ?? openToday;
    const sides: Side[] = [...(openBefore ? [openBefore] : []), openToday, openKept, loggedIn];
    const check = await fetch(`${logged.url}/rest/Item(1)`, { headers: loggedIn.headers });
    if (check.status !== 200 || check.headers.get('set-cookie')) throw new Error(`the logged-in session is not recognised: ${check.status} ${check.headers.get('set-cookie')}`);
    const guest = await fetch(`${logged.url}/rest/Item(1)`);
    if (guest.status !== 401) throw new Error(`a guest should be refused by the roles.json: ${guest.status}`);
    for (const s of sides) await round(s, 3); // warm-up
    for (const s of sides) Object.assign(s, { requests: 0, seconds: 0, cpuMs: 0, rates: [] });
    for (let i = 0; i < rounds; i++) for (const s of i % 2 === 0 ? sides : [...sides].reverse()) await round(s, seconds / rounds);
    const rate = (s: Side) => s.requests / s.seconds;
    for (const s of sides) console.log(`${s.name}: ${rate(s).toFixed(0)} req/s, server CPU ${((s.cpuMs * 1000) / s.requests).toFixed(1)} µs/req`);
    if (openBefore) console.log(`open read today / before sessions: ${(rate(openToday) / rate(openBefore)).toFixed(2)}×`);
    const medianRatio = (of: Side, to: Side) => {
      const perRound = of.rates.map((r, i) => r / to.rates[i]).sort((a, b) => a - b);
      return { perRound, median: perRound[Math.floor(perRound.length / 2)] };
    };
    console.log(`logged-in / open read today with its guest cookie kept, median of the rounds: ${medianRatio(loggedIn, openKept).median.toFixed(2)}×`);
    const { perRound, median: ratio } = medianRatio(loggedIn, baseline);
    console.log(`logged-in / ${baseline.name}: ${(rate(loggedIn) / rate(baseline)).toFixed(2)}× over all rounds; rounds' ratios ${perRound.map((r) => r.toFixed(2)).join(' ')}`);
    console.log(`logged-in / ${baseline.name}, median of the rounds: ${ratio.toFixed(2)}× (target ≥ ${TARGET}×) ${ratio >= TARGET ? 'MET' : 'NOT MET'}`);
    return ratio >= TARGET ? 0 : 1;
  } finally {
    await Promise.all([open.stop(), logged.stop(), before?.stop()]);
  }
}

process.exitCode = await main();
