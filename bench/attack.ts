// `npm run attack` (issue 34): every finding of the two black-box probes (issues 19 and 34)
// replayed against a real server, and what held printed for each. The server is the command's own
// start path (bin/dataset-rest.mjs, a child process on 127.0.0.1, one process: no supervisor), the
// demo project with its roles.json, on a fresh database: SQLite (a file in a temporary folder) and
// PostgreSQL (an embedded cluster, as bench/postgres.ts starts one, or DATASET_REST_BENCH_PG's
// server). Each case (bench/attack/*.ts, a file per group) sets up what it needs (an editor's
// long text, a Payroll user's entity set, a crowded company…), replays the finding as the probe did
// — from the loopback, other 127.x addresses playing other clients, bounded in count and time —
// and measures: statuses, times, the server's RSS before/peak/after (/proc/<pid>/status), other
// clients' latencies during the attack (/health asked one request after another: how long the
// event loop was held; a read by key). One line per case: the finding, what was measured, the
// target from the issue, HELD or FAILED; then a table of both engines. Exit code 1 when a case
// failed.
//
// Options: --engine sqlite|postgres|both (both), --short (each case scaled down — fewer clients,
// shorter waits, limits lowered through the server's own options so that a smaller attack crosses
// them — for `npm test`: test/faults/attack-short.test.ts), --only CASE[,CASE…] (by id, or an id's
// prefix), --json FILE (the report, machine-readable), --list (the cases, running nothing).
// However it ends (a failure, Ctrl-C), the servers and the cluster are stopped and the temporary
// folders removed (bench/processes.ts).

import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { commandLine } from '../src/process/cli-options.js';
import { answerCases } from './attack/answers.js';
import { clientCases } from './attack/clients.js';
import { guardCases } from './attack/guards.js';
import { processCases } from './attack/processes.js';
import { sessionCases } from './attack/sessions.js';
import { storageCases } from './attack/storage.js';
import { timeCases } from './attack/time.js';
import { Client, rssMB, sleep, startAttackServer, type AttackCase, type AttackServer, type CaseContext, type CaseResult, type Engine, type Limits } from './attack/harness.js';
import { benchDatabase } from './postgres.js';
import { temporaryFolder } from './processes.js';

/** Every case, in the order they run (those that leave the server changed for good — locked logins, a stopped server — last). */
export const CASES: readonly AttackCase[] = [...answerCases, ...timeCases, ...storageCases, ...clientCases, ...guardCases, ...sessionCases, ...processCases];

export interface AttackOptions {
  readonly engines: readonly Engine[];
  readonly short: boolean;
  /** case ids (or prefixes) to run; all when absent */
  readonly only?: readonly string[];
  /** the databases to serve, by engine (a test passes its run's PostgreSQL); default: a new one */
  readonly databases?: Partial<Record<Engine, string>>;
  /** progress and result lines (default: console.log) */
  readonly print?: (line: string) => void;
}

export interface CaseReport {
  readonly engine: Engine;
  readonly id: string;
  readonly issue: number;
  readonly finding: string;
  readonly target: string;
  readonly held: boolean;
  /** time bounds it missed (counted in `held` only when the run judges times) */
  readonly timeBoundsMissed: number;
  /** why it did not run here (not root…) */
  readonly skipped?: string;
  readonly measured: string;
  readonly ms: number;
  readonly data?: Record<string, unknown>;
}

export interface AttackReport {
  readonly short: boolean;
  /** whether a missed time bound fails a case: always but in the short mode, where DATASET_REST_TIMED_BOUNDS=1 asks for it */
  readonly judgesTimes: boolean;
  readonly started: string;
  readonly seconds: number;
  /** the server's flags, by engine */
  readonly flags: Partial<Record<Engine, readonly string[]>>;
  /** limits the issue names that this server has no option for yet (their cases run at the defaults) */
  readonly missingOptions: readonly string[];
  readonly cases: readonly CaseReport[];
}

interface Setting {
  readonly flag: string;
  readonly full?: string;
  readonly short?: string;
}

/**
 * The server's flags: the defaults the probes met, but where a case could not run at them in
 * bounded time (the full mode) or in seconds (the short mode) — a limit lowered through its own
 * option, so that a smaller attack crosses the same limit. A flag this server does not know yet
 * is left out (and listed): its case then meets the default.
 */
const SETTINGS: readonly Setting[] = [
  // (short: 2 s, so that the probe's 29 MB answers, made by several statements, fit in one request's budget on a loaded machine)
  { flag: '--query-timeout', short: '2000' },
  { flag: '--body-timeout', full: '10000', short: '1500' },
  { flag: '--function-timeout', full: '10000', short: '5000' },
  { flag: '--max-connections-per-address', full: '256', short: '64' },
  { flag: '--max-connections', full: '2000', short: '300' },
  { flag: '--max-pending-uploads', short: '5' },
  { flag: '--max-pending-upload-size', full: '64MB', short: '8MB' },
  // (the short mode's unread answers are the probe's 29 MB ones: the limit stays above them)
  { flag: '--max-answer-size', short: '32MB' },
  { flag: '--max-set-members', short: '20000' },
  { flag: '--max-sets-per-session', short: '50' },
  { flag: '--max-sessions', full: '10000', short: '300' },
  { flag: '--max-requests-per-minute', full: '0', short: '0' },
  // issue 34's new limits (the helpers' options, once they land)
  { flag: '--send-timeout', short: '3000' },
  { flag: '--max-guests-per-address', short: '20' },
  { flag: '--max-queued-conversions', short: '2' },
];

function serverSettings(short: boolean): { flags: string[]; missing: string[]; limits: Limits } {
  const known = new Set(commandLine().options.map((o) => o.long));
  const flags: string[] = [];
  const missing: string[] = [];
  const value = new Map<string, string>();
  for (const s of SETTINGS) {
    const v = short ? s.short : s.full;
    if (v === undefined) continue;
    if (!known.has(s.flag)) {
      missing.push(s.flag);
      continue;
    }
    flags.push(s.flag, v);
    value.set(s.flag, v);
  }
  const num = (flag: string, otherwise: number) => (value.has(flag) ? Number(value.get(flag)) : otherwise);
  const size = (flag: string, otherwise: number) => {
    const v = value.get(flag);
    if (!v) return otherwise;
    const m = /^(\d+)(KB|MB|GB)?$/i.exec(v);
    return m ? Number(m[1]) * (m[2] ? 1024 ** (['KB', 'MB', 'GB'].indexOf(m[2].toUpperCase()) + 1) : 1) : otherwise;
  };
  return {
    flags, missing, limits: {
      queryTimeoutMs: num('--query-timeout', 5000), bodyTimeoutMs: num('--body-timeout', 60_000), functionTimeoutMs: num('--function-timeout', 30_000),
      maxBatchEntities: num('--max-batch-entities', 10_000), connectionsPerAddress: num('--max-connections-per-address', 256), maxConnections: num('--max-connections', 10_000),
      pendingUploads: num('--max-pending-uploads', 100), pendingUploadBytes: size('--max-pending-upload-size', 2 ** 30), maxTextLength: 1_000_000,
      maxAnswerBytes: size('--max-answer-size', 64 * 2 ** 20), maxSetMembers: num('--max-set-members', 20_000_000), maxSessions: num('--max-sessions', 10_000), setsPerSession: num('--max-sets-per-session', 1000), queuedConversions: num('--max-queued-conversions', 8),
      sendTimeoutMs: known.has('--send-timeout') ? num('--send-timeout', 30_000) : undefined,
    },
  };
}

/** Whether a case is among --only's (an id or an id's prefix). */
const chosen = (c: AttackCase, only: readonly string[] | undefined) => !only || only.some((o) => c.id === o || c.id.startsWith(o));

/** Whether a missed time bound fails a case (Verdict.timed): in the full mode, and in the short mode with DATASET_REST_TIMED_BOUNDS=1. */
function judgesTimes(options: AttackOptions): boolean {
  return !options.short || process.env.DATASET_REST_TIMED_BOUNDS === '1';
}

export async function runAttack(options: AttackOptions): Promise<AttackReport> {
  const print = options.print ?? ((line: string) => console.log(line));
  const started = Date.now();
  const settings = serverSettings(options.short);
  const cases = CASES.filter((c) => chosen(c, options.only));
  if (cases.length === 0) throw new Error(`no case is named ${options.only?.join(', ')}: the cases are ${CASES.map((c) => c.id).join(', ')}`);
  if (settings.missing.length) print(`# options this server does not have yet (their cases meet the defaults): ${settings.missing.join(', ')}`);
  const reports: CaseReport[] = [];
  const flags: Partial<Record<Engine, readonly string[]>> = {};
  for (const engine of options.engines) {
    const mine = cases.filter((c) => (c.engines ?? ['sqlite', 'postgres']).includes(engine));
    if (mine.length === 0) continue;
    flags[engine] = settings.flags;
    reports.push(...(await runEngine(engine, mine, settings.flags, settings.limits, options, print)));
  }
  const report: AttackReport = {
    short: options.short, judgesTimes: judgesTimes(options), started: new Date(started).toISOString(), seconds: Math.round((Date.now() - started) / 100) / 10, flags, missingOptions: settings.missing, cases: reports,
  };
  printTable(report, print);
  return report;
}

/** Allocates client addresses: 127.0.2.1, 127.0.2.2, … (the users and probes get theirs here too). */
function addresses(): () => string {
  let n = 0;
  return () => {
    const i = n++;
    return `127.0.${2 + Math.floor(i / 250)}.${1 + (i % 250)}`;
  };
}

async function runEngine(engine: Engine, cases: readonly AttackCase[], flags: readonly string[], limits: Limits, options: AttackOptions, print: (line: string) => void): Promise<CaseReport[]> {
  const folder = temporaryFolder(`dataset-rest-attack-${engine}-`);
  let db = options.databases?.[engine];
  let close = async () => {};
  if (db === undefined && engine === 'postgres') {
    const pg = await benchDatabase();
    db = pg.url;
    close = () => pg.close();
    print(`# ${pg.where}`);
  }
  db ??= join(folder, 'demo.sqlite');
  const nextAddress = addresses();
  const t0 = Date.now();
  let server: AttackServer = await startAttackServer(engine, db, flags);
  print(`# ${engine}: server pid ${server.pid} at ${server.origin}, ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (a new database, seeded), RSS ${rssMB(server.pid)} MB; flags ${flags.join(' ')}`);
  const users = async (s: AttackServer) => {
    const made = { alice: new Client('alice', s.base, nextAddress()), bob: new Client('bob', s.base, nextAddress()), admin: new Client('admin', s.base, nextAddress()) };
    await made.alice.login('alice', 'alice123');
    await made.bob.login('bob', 'bob123');
    await made.admin.login('admin', 'admin123');
    return made;
  };
  let who = await users(server);
  const reports: CaseReport[] = [];
  /** Runs one case with a context of its own (its clients and extra servers gone after it); resolves to its report. */
  const runCase = async (c: AttackCase): Promise<CaseReport> => {
    const clients: Client[] = [];
    const extra: AttackServer[] = [];
    const stoppedByCase = new Set<AttackServer>();
    const attacked = server;
    const ctx: CaseContext = {
      engine, short: options.short, server: attacked, limits, folder, ...who,
      client: (name, address) => {
        const made = new Client(name, attacked.base, address ?? nextAddress());
        clients.push(made);
        return made;
      },
      address: nextAddress,
      log: (line) => print(`#   ${c.id}: ${line}`),
      startServer: async (more, other) => {
        const s = await startAttackServer(engine, other ?? db, [...flags, ...more], `${c.id}'s server (${engine})`);
        extra.push(s);
        // (one the case stops itself did not die)
        return { ...s, stop: (graceMs?: number) => (stoppedByCase.add(s), s.stop(graceMs)) };
      },
    };
    const caseStarted = Date.now();
    let result: CaseResult;
    // a case's own bound: it reports what it saw by then
    const budgetMs = options.short ? 180_000 : 1_800_000;
    let timer: NodeJS.Timeout | undefined;
    /** whether a server the case started of its own died under it (told before they are stopped) */
    let ownDied = false;
    try {
      result = await Promise.race([
        c.run(ctx),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the case did not finish within ${budgetMs / 1000} s`)), budgetMs))),
      ]);
    } catch (e) {
      result = { held: false, measured: `the case could not run to its end: ${(e as Error).message}` };
    } finally {
      clearTimeout(timer);
      for (const made of clients) made.close();
      ownDied = extra.some((s) => !s.alive() && !stoppedByCase.has(s));
      for (const s of extra) await s.stop(5000);
    }
    // (a case that stops the server on purpose says so: its result stands. A background case runs
    // beside the others, one of which stops the shared server on purpose: it answers for the
    // servers it started itself)
    const died = c.background ? ownDied : !attacked.alive() && !c.stopsServer;
    const judges = judgesTimes(options);
    const report: CaseReport = {
      engine, id: c.id, issue: c.issue, finding: c.finding, target: c.target, skipped: result.skipped,
      held: result.held && !died && !(judges && (result.timeBoundsMissed ?? 0) > 0), timeBoundsMissed: result.timeBoundsMissed ?? 0,
      measured: died ? `${result.measured} — the server died` : result.measured, ms: Date.now() - caseStarted, data: result.data,
    };
    print(caseLine(report));
    return report;
  };
  /**
   * The short mode runs a case that failed once more, on a live server, and tells both tries: in
   * `npm test` the machine is shared, and a case that holds only now and then still fails the
   * full attack, which tries each case once.
   */
  const runJudged = async (c: AttackCase): Promise<CaseReport> => {
    const first = await runCase(c);
    if (first.held || first.skipped || !options.short || !server.alive()) return first;
    print(`#   ${c.id}: failed once; run once more (the short mode)`);
    const second = await runCase(c);
    return { ...second, measured: `${second.measured} — on its second try; the first: ${first.measured}` };
  };
  try {
    // the cases that wait for the server's timers run beside the others, from the start
    const background = cases.filter((c) => c.background).map((c) => runJudged(c));
    for (const c of cases.filter((c) => !c.background)) {
      reports.push(await runJudged(c));
      // the next case needs a server: a dead (or deliberately stopped) one is started again
      if (!server.alive() && c !== cases.at(-1)) {
        await server.stop(1000);
        server = await startAttackServer(engine, db, flags);
        who = await users(server);
        print(`# ${engine}: server started again (pid ${server.pid})`);
      } else if (server.alive()) await waitUntilServing(server);
    }
    reports.push(...(await Promise.all(background)));
  } finally {
    for (const u of Object.values(who)) u.close();
    await server.stop(10_000);
    await close();
  }
  return reports;
}

/** After a case, the next one starts once the server answers /health again (a failed case may have left it busy), 60 s at most. */
async function waitUntilServing(server: AttackServer): Promise<void> {
  const probe = new Client('wait', server.origin, '127.0.0.1', 1);
  try {
    for (let i = 0; i < 60; i++) {
      if ((await probe.get('/health', { timeoutMs: 1000 })).status === 200) return;
      await sleep(1000);
    }
  } finally {
    probe.close();
  }
}

export function caseLine(r: CaseReport): string {
  return `${r.skipped ? 'SKIPPED' : !r.held ? 'FAILED ' : r.timeBoundsMissed > 0 ? 'HELD*  ' : 'HELD   '} [${r.engine}] ${r.id} (#${r.issue}: ${r.finding}) — ${r.measured} — target: ${r.target} (${(r.ms / 1000).toFixed(1)} s)`;
}

function printTable(report: AttackReport, print: (line: string) => void): void {
  const engines = [...new Set(report.cases.map((c) => c.engine))];
  const ids = [...new Set(report.cases.map((c) => c.id))];
  const width = Math.max(...ids.map((id) => id.length), 4);
  print('');
  const ran = report.cases.filter((c) => !c.skipped);
  print(`## attack${report.short ? ' (short mode)' : ''}: ${ran.filter((c) => c.held).length} of ${ran.length} held (${report.cases.length - ran.length} skipped), ${report.seconds} s`);
  print(`${'case'.padEnd(width)}  issue  ${engines.map((e) => e.padEnd(8)).join('  ')}`);
  for (const id of ids) {
    const issue = report.cases.find((c) => c.id === id)?.issue;
    print(`${id.padEnd(width)}  #${issue}    ${engines.map((e) => {
      const r = report.cases.find((c) => c.id === id && c.engine === e);
      return (r ? (r.skipped ? 'skipped' : !r.held ? 'FAILED' : r.timeBoundsMissed > 0 ? 'HELD*' : 'HELD') : 'n/a').padEnd(8);
    }).join('  ')}`);
  }
  if (report.cases.some((c) => c.held && c.timeBoundsMissed > 0)) print('HELD*: held, a time bound missed and not judged (the short mode without DATASET_REST_TIMED_BOUNDS=1)');
  const failed = report.cases.filter((c) => !c.held);
  if (failed.length) {
    print('');
    print('failed:');
    for (const f of failed) print(`  [${f.engine}] ${f.id}: ${f.measured}`);
  }
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      engine: { type: 'string', default: 'both' },
      short: { type: 'boolean', default: false },
      only: { type: 'string' },
      json: { type: 'string' },
      list: { type: 'boolean', default: false },
    },
  });
  if (args.list) {
    for (const c of CASES) console.log(`${c.id.padEnd(28)} #${c.issue} ${(c.engines ?? ['sqlite', 'postgres']).join('+').padEnd(16)} ${c.finding}\n${' '.repeat(33)}target: ${c.target}`);
    return;
  }
  const engines: Engine[] = args.engine === 'both' ? ['sqlite', 'postgres'] : args.engine === 'sqlite' || args.engine === 'postgres' ? [args.engine] : [];
  if (engines.length === 0) throw new Error(`--engine takes sqlite, postgres or both, not '${args.engine}'`);
  const report = await runAttack({ engines, short: args.short, only: args.only?.split(',').map((s) => s.trim()).filter(Boolean) });
  if (args.json) writeFileSync(resolve(args.json), `${JSON.stringify(report, null, 2)}\n`);
  process.exitCode = report.cases.every((c) => c.held) ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
