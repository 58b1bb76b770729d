// `npm run test:unit`: every test file on SQLite, and the files that open a datastore (those
// calling openDemo, testDatabase or testStorage from support/helpers.ts, themselves or in a module
// of their own folder they import) again on PostgreSQL, against one real server for the whole
// run: DATASET_REST_TEST_PG when it is set, else an embedded one started here on a free port and
// stopped at the end (support/postgres-server.ts). The test files are the *.test.ts of test/'s
// folders, one a layer: core/ (datastore, model, query, SQL, storage), http/ (REST in process and
// over sockets), cli/ (the commands, settings, the package), explorer/ (Chromium), faults/
// (crashes, outages, attack, soak, fuzzing, time limits), bench/ and docs/; support/ holds what
// they share, and a file's -shared.ts what the files split from one big file share. Arguments are
// test files, to run only those (`npm run test:unit -- test/http/http-read-entities.test.ts`);
// --sqlite or --postgres runs one half; --jobs=N runs N files at once (default: the machine's
// processors, at least 2).
//
// Each (file, engine) pair is a job: one `node --test`-style process of its own, as node --test
// would make, so files never share a process. The jobs of both halves share one queue, the
// longest first (times of the last run are kept in test-results/test-times.json; a file never
// timed is guessed from what it starts), so that both processors stay busy to the end. A file
// whose assertions time the machine itself (frames per second…) says "test/run.ts runs this file
// alone" in a comment: it runs first, with nothing beside it. A job's output is printed in one
// block when it ends, never interleaved with another's. A file still running after
// DATASET_REST_TEST_FILE_TIMEOUT seconds (default 600; the slowest takes about a minute) is killed
// and counted failed, its output so far printed: a hang costs ten minutes, not the whole CI run.
//
// Two tiers. `npm test` (CI's: .ci/run) is the whole suite: typecheck, lint, then every file on
// both engines. `npm run test:quick` (--quick) is the inner loop, under three minutes: SQLite only,
// core/, http/ and docs/ — none of the files of cli/ (commands as processes), bench/, faults/
// (crashes, outages, attack, soak, fuzzing, time limits) and explorer/ (Chromium), nor a file that
// says "test:quick leaves this file out" in a comment (limits under load, several instances…); no
// typecheck or lint (the editor's and `npm run typecheck`'s job).

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startEmbeddedPostgres, TEST_PG_ENV, TEST_RUN_ENV, type TestPostgres } from './support/postgres-server.js';
import { seededDemoFile } from './support/seeded-demo.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const TIMES = fileURLToPath(new URL('../test-results/test-times.json', import.meta.url));
/** a file that opens a datastore runs on both engines */
const USES_ENGINE = /\b(openDemo|testDatabase|testStorage|openUsersProject|openLibraryServer)\(/;
/** a file that reaches the run's PostgreSQL server itself, whatever the engine (else it would start one of its own) */
const USES_SERVER = /\b(testPostgres|freshDatabase)\(/;
/** a file that must have the machine to itself */
const ALONE = /test\/run\.ts runs this file alone/;
/** the folders, and the marker of a file elsewhere, that the quick tier leaves out */
const NOT_QUICK_FOLDERS = ['test/faults/', 'test/explorer/', 'test/cli/', 'test/bench/'];
const NOT_QUICK = /test:quick leaves this file out/;

type Engine = 'sqlite' | 'postgres';

interface Job {
  readonly file: string;
  readonly engine: Engine;
  readonly alone: boolean;
  /** milliseconds expected, to start the longest first */
  readonly expected: number;
}

interface Done {
  readonly job: Job;
  readonly ok: boolean;
  readonly ms: number;
  /** What failed (the reporter's summary), empty when the file passed. */
  readonly failures: string;
  readonly counts: Record<string, number>;
}

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const halves: Engine[] = args.includes('--sqlite') || quick ? ['sqlite'] : args.includes('--postgres') ? ['postgres'] : ['sqlite', 'postgres'];
const jobsArg = args.find((a) => a.startsWith('--jobs='))?.slice('--jobs='.length) ?? process.env.DATASET_REST_TEST_JOBS;
const slots = jobsArg ? Math.max(1, Number.parseInt(jobsArg, 10) || 1) : Math.max(2, availableParallelism());
const fileTimeoutMs = 1000 * (Number(process.env.DATASET_REST_TEST_FILE_TIMEOUT) || 600);
const named = args.filter((a) => !a.startsWith('--'));
const found = named.length > 0 ? named : readdirSync(HERE, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.test.ts')).sort().map((f) => join('test', f));
/** a file's source, with that of the modules of its own folder it imports (what a split file's tests share) */
const withLocalImports = (file: string): string => {
  const source = readFileSync(file, 'utf8');
  const local = [...source.matchAll(/from '\.\/([\w-]+)\.js'/g)].map((m) => join(dirname(file), `${m[1]}.ts`));
  return [source, ...local.map((f) => readFileSync(f, 'utf8'))].join('\n');
};
const sources = new Map(found.map((f) => [f, withLocalImports(f)]));
const inQuickTier = (file: string) => !NOT_QUICK_FOLDERS.some((folder) => file.startsWith(folder)) && !NOT_QUICK.test(sources.get(file) ?? '');
const files = quick && named.length === 0 ? found.filter(inQuickTier) : found;

const key = (file: string, engine: Engine) => `${engine} ${file}`;
const lastTimes = readTimes();

function readTimes(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(TIMES, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

/** A first run's guess of a file's time from what it starts: projects, servers, processes, browsers. */
function guess(source: string, engine: Engine): number {
  const count = (re: RegExp) => source.match(re)?.length ?? 0;
  const opens = count(/\b(openDemo|openProject|explorerServer)\(/g) + 2 * count(/\btwoInstances\(/g);
  const processes = count(/\b(startCommand|spawn|spawnSync|run)\(/g);
  const ms = 1000 + source.length / 10 + 4000 * opens + 1500 * processes + 15_000 * count(/\blaunchBrowser\(/g);
  return engine === 'postgres' ? ms * 1.2 : ms;
}

const jobs: Job[] = halves.flatMap((engine) => files
  .filter((f) => engine === 'sqlite' || USES_ENGINE.test(sources.get(f) ?? ''))
  .map((file) => {
    const source = sources.get(file) ?? '';
    return { file, engine, alone: ALONE.test(source), expected: lastTimes[key(file, engine)] ?? guess(source, engine) };
  }));

/**
 * What failed in a file, for the run's last lines: a CI log is often read from its tail only, where
 * the file's own block (printed when it ended, maybe long before) is out of sight.
 */
function failureSummary(text: string): string {
  const at = text.indexOf('✖ failing tests:');
  // (the stack frames left out: the file and line are on the test's own line)
  const lines = (at >= 0 ? text.slice(at) : text).split('\n').filter((l) => !/^\s+at /.test(l) && l.trim() !== '');
  return lines.slice(0, 60).map((l) => `#   ${l}`).join('\n') + (lines.length > 60 ? `\n#   … (${lines.length - 60} more lines in the file's block above)` : '');
}

/** Runs one file as node --test would run it in a process of its own; its output printed in one block at the end. */
function runJob(job: Job, env: NodeJS.ProcessEnv): Promise<Done> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test-reporter=spec', '--test-reporter-destination=stdout', job.file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...env, DATASET_REST_TEST_ENGINE: job.engine },
    });
    const out: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
      // (a process it started may hold the pipes open: they are let go after a moment)
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, 5000).unref();
    }, fileTimeoutMs);
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => out.push(d));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ms = Date.now() - started;
      const text = Buffer.concat(out).toString('utf8');
      const counts: Record<string, number> = {};
      for (const m of text.matchAll(/^ℹ (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm)) counts[m[1]] = Number(m[2]);
      const ok = code === 0 && signal === null;
      process.stdout.write(`\n# ${ok ? 'ok' : 'FAILED'}: ${job.engine} ${job.file} (${(ms / 1000).toFixed(1)} s${timedOut ? `, killed: still running after ${fileTimeoutMs / 1000} s` : signal ? `, ${signal}` : code ? `, exit code ${code}` : ''})\n${text}`);
      resolve({ job, ok, ms, counts, failures: ok ? '' : failureSummary(text) });
    });
  });
}

/** The jobs, `slots` at a time, the longest first; a job that must run alone runs before the others, each by itself. */
async function runAll(env: (job: Job) => NodeJS.ProcessEnv): Promise<Done[]> {
  const done: Done[] = [];
  for (const job of jobs.filter((j) => j.alone)) done.push(await runJob(job, env(job)));
  const queue = jobs.filter((j) => !j.alone).sort((a, b) => b.expected - a.expected);
  const worker = async () => {
    for (let job = queue.shift(); job; job = queue.shift()) done.push(await runJob(job, env(job)));
  };
  await Promise.all(Array.from({ length: Math.min(slots, queue.length) }, worker));
  return done;
}

/** Drops the databases this run made on a server it did not start (its own go with it). */
async function dropRunDatabases(url: string, run: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`t\\_${run}\\_%`]);
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

const started = Date.now();
const given = process.env[TEST_PG_ENV];
const run = randomBytes(4).toString('hex');
// one server for the run: the PostgreSQL half's, and that of the SQLite half's files that reach one themselves
const needsServer = jobs.some((j) => j.engine === 'postgres' || USES_SERVER.test(sources.get(j.file) ?? ''));
const server: TestPostgres | undefined = given ? { url: given, stop: async () => {} } : needsServer ? await startEmbeddedPostgres() : undefined;
const count = (engine: Engine) => jobs.filter((j) => j.engine === engine).length;
console.log(`# ${halves.map((h) => `${h === 'sqlite' ? 'SQLite' : 'PostgreSQL'}: ${count(h)} files`).join(', ')}; ${slots} at once`
  + (server ? ` (PostgreSQL: ${given ? 'DATASET_REST_TEST_PG' : `embedded, ready in ${Date.now() - started} ms`})` : ''));
let done: Done[] = [];
try {
  const env = { ...process.env, ...(server ? { [TEST_PG_ENV]: server.url } : {}), [TEST_RUN_ENV]: run };
  done = await runAll(() => env);
} finally {
  rmSync(seededDemoFile(run), { force: true });
  if (given) await dropRunDatabases(given, run);
  await server?.stop();
}

const times = { ...lastTimes, ...Object.fromEntries(done.map((d) => [key(d.job.file, d.job.engine), d.ms])) };
mkdirSync(join(TIMES, '..'), { recursive: true });
writeFileSync(TIMES, `${JSON.stringify(times, null, 1)}\n`);

const total = (name: string) => done.reduce((n, d) => n + (d.counts[name] ?? 0), 0);
const failed = done.filter((d) => !d.ok);
console.log(`\n# slowest: ${[...done].sort((a, b) => b.ms - a.ms).slice(0, 8).map((d) => `${d.job.engine} ${d.job.file} ${(d.ms / 1000).toFixed(1)} s`).join(', ')}`);
console.log(`# ${done.length} files, ${total('tests')} tests: ${total('pass')} passed, ${total('fail')} failed, ${total('skipped')} skipped, ${total('cancelled')} cancelled, in ${((Date.now() - started) / 1000).toFixed(1)} s`);
for (const d of failed) console.log(`# FAILED: ${d.job.engine} ${d.job.file}\n${d.failures}`);
process.exit(failed.length > 0 ? 1 : 0);
