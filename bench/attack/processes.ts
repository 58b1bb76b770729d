// Attack cases on the server's processes (issue 19): SIGTERM while a runaway statement holds the
// server (it was ignored), and `npm start` killed with SIGKILL (the supervisor was left orphaned,
// serving).

import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { onCleanup } from '../processes.js';
import { alive, Client, REPO, seconds, sleep, statusOf, Verdict, type AttackCase } from './harness.js';
import { crowd, setValue } from './time.js';

/** Every process descending from `pid` (read from /proc), its children first. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // the parent is the 4th field; the name (2nd) is in parentheses and may hold spaces
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of parents.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/**
 * It stops the attacked server itself (it runs last): the runaway statements are set up on it,
 * and what they leave in the database (a crowd, a long text) goes with the run's database.
 */
const sigterm: AttackCase = {
  id: 'sigterm',
  issue: 19,
  stopsServer: true,
  finding: 'SIGTERM was ignored while a statement ran (a filter through levels of colleagues held the event loop for minutes)',
  target: 'SIGTERM stops the server within its drain time (the function time limit + 5 s), a runaway statement stopped at the query time limit',
  async run(ctx) {
    const v = new Verdict();
    // what runs long on each engine: SQLite, a filter through two levels of a crowded relation;
    // PostgreSQL (which plans that one without multiplying rows), a LIKE pattern over a long text
    await crowd(ctx, 1500);
    const guest = ctx.client('guest');
    const key = String((await guest.get('/Employee?$top=1&$orderby=employeeNumber&$attributes=ID')).json.__ENTITIES[0].__KEY);
    await setValue(ctx.alice, 'Employee', key, { notes: 'a'.repeat(999_999) });
    const runaways = [
      ctx.client('runaway').get(`/Employee?$filter=${encodeURIComponent('"colleagues.colleagues.lastName = \'nobody\'"')}&$top=1`, { timeoutMs: 600_000 }),
      ctx.client('runaway').get(`/Employee?$filter=${encodeURIComponent(`"notes=@${'a'.repeat(2998)}b@"`)}&$top=1`, { timeoutMs: 600_000 }),
    ];
    await sleep(300);
    const signalled = performance.now();
    process.kill(ctx.server.pid, 'SIGTERM');
    const drainMs = ctx.limits.functionTimeoutMs + 5000;
    while (ctx.server.alive() && performance.now() - signalled < drainMs + 60_000) await sleep(50);
    const tookMs = performance.now() - signalled;
    const answers = await Promise.all(runaways);
    v.check(!ctx.server.alive(), `still running ${seconds(tookMs)} after SIGTERM`);
    v.check(tookMs <= drainMs, `stopped ${seconds(tookMs)} after SIGTERM (drain time ${seconds(drainMs)})`);
    return v.result(`stopped ${seconds(tookMs)} after SIGTERM (drain time ${seconds(drainMs)}, query time limit ${seconds(ctx.limits.queryTimeoutMs)}); the runaway requests: ${answers.map(statusOf).join(', ')}`);
  },
};

const orphan: AttackCase = {
  id: 'orphan-supervisor',
  issue: 19,
  // (the process tree is the same whatever the engine)
  engines: ['sqlite'],
  finding: 'killing the `npm start` process left the supervisor orphaned and serving',
  target: 'the server dies with whatever started it: supervisor and workers gone, the port closed, within a few seconds',
  async run(ctx) {
    const v = new Verdict();
    const env = { ...process.env };
    delete env.DATASET_REST_INSTANCE;
    const npm = spawn('npm', ['start', '--', '--db', ctx.server.db, '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn'], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let tree: number[] = [];
    const drop = onCleanup(() => {
      for (const pid of [npm.pid as number, ...tree]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    });
    try {
      const base = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => reject(new Error('npm start was not serving after 180 s')), 180_000);
        npm.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          const m = /(http:\/\/127\.0\.0\.1:\d+\/rest)/.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
        npm.once('exit', (code) => reject(new Error(`npm start exited (${code})`)));
      });
      npm.stderr.resume();
      tree = descendants(npm.pid as number);
      const probe = new Client('probe', base, ctx.address(), 1);
      const before = await probe.get('/$catalog');
      probe.close();
      v.check(before.status === 200, `the server started by npm answered ${statusOf(before)}`);
      const killed = performance.now();
      npm.kill('SIGKILL');
      while (tree.some(alive) && performance.now() - killed < 20_000) await sleep(100);
      const tookMs = performance.now() - killed;
      const left = tree.filter(alive);
      const after = new Client('probe', base, ctx.address(), 1);
      const answer = await after.get('/$catalog', { timeoutMs: 2000 });
      after.close();
      v.check(left.length === 0, `still running ${seconds(tookMs)} after npm was killed: ${left.join(' ')}`);
      v.check(answer.status === 0, `the port still answers ${statusOf(answer)}`);
      return v.result(`npm start (${tree.length} processes under it: sh, the supervisor, its worker); npm killed with SIGKILL: ${left.length === 0 ? `all gone after ${seconds(tookMs)}` : `${left.length} left`}, the port then: ${answer.status === 0 ? 'closed' : statusOf(answer)}`);
    } finally {
      for (const pid of [npm.pid as number, ...tree]) if (alive(pid)) process.kill(pid, 'SIGKILL');
      drop();
    }
  },
};

export const processCases: readonly AttackCase[] = [orphan, sigterm];
