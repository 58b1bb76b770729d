// `npm run test:unit`: every test file on SQLite, then the files that open a datastore again on
// PostgreSQL (those calling openDemo, testDatabase or testStorage from helpers.ts), against one
// real server for the whole run: DATASET_REST_TEST_PG when it is set, else an embedded one
// started here on a free port and stopped at the end (postgres-server.ts). Arguments are test
// files, to run only those (`npm run test:unit -- test/http-read.test.ts`); --sqlite or
// --postgres runs one half.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { startEmbeddedPostgres, TEST_PG_ENV, TEST_RUN_ENV, type TestPostgres } from './postgres-server.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
/** a file that opens a datastore runs on both engines */
const USES_ENGINE = /\b(openDemo|testDatabase|testStorage)\(/;

const args = process.argv.slice(2);
const halves = args.includes('--sqlite') ? ['sqlite'] : args.includes('--postgres') ? ['postgres'] : ['sqlite', 'postgres'];
const named = args.filter((a) => !a.startsWith('--'));
const files = named.length > 0 ? named : readdirSync(HERE).filter((f) => f.endsWith('.test.ts')).sort().map((f) => join('test', f));
const engineFiles = files.filter((f) => USES_ENGINE.test(readFileSync(f, 'utf8')));

function runTests(list: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...list], { stdio: 'inherit', env });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
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

let failed = false;
if (halves.includes('sqlite')) {
  console.log(`# SQLite: ${files.length} files`);
  failed = (await runTests(files, { ...process.env, DATASET_REST_TEST_ENGINE: 'sqlite' })) !== 0 || failed;
}
if (halves.includes('postgres') && engineFiles.length > 0) {
  const given = process.env[TEST_PG_ENV];
  const run = randomBytes(4).toString('hex');
  const started = Date.now();
  const server: TestPostgres = given ? { url: given, stop: async () => {} } : await startEmbeddedPostgres();
  console.log(`# PostgreSQL (${given ? 'DATASET_REST_TEST_PG' : `embedded, ready in ${Date.now() - started} ms`}): ${engineFiles.length} files`);
  try {
    const env = { ...process.env, DATASET_REST_TEST_ENGINE: 'postgres', [TEST_PG_ENV]: server.url, [TEST_RUN_ENV]: run };
    failed = (await runTests(engineFiles, env)) !== 0 || failed;
  } finally {
    if (given) await dropRunDatabases(given, run);
    await server.stop();
  }
}
process.exit(failed ? 1 : 0);
