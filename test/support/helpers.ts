// Shared test fixtures: the demo project opened on a fresh temporary database holding its seed, a
// Fastify app around it for in-process HTTP tests (inject), and the command run as a real process.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import type { ProjectModuleImport } from '../../src/classes/loader.js';
import { openProject, type ProjectOptions } from '../../src/project/open.js';
import { buildServer, type ServerOptions } from '../../src/http/server.js';
import { openStorage, databaseTarget } from '../../src/storage/open.js';
import type { TransactionManager } from '../../src/storage/transactions.js';
import { freshDatabase } from './postgres-server.js';
import { seededDemoDatabase } from './seeded-demo.js';

/**
 * The engine the datastore tests run on: SQLite, or PostgreSQL when DATASET_REST_TEST_ENGINE is
 * `postgres` (test/run.ts runs those files once on each; see postgres-server.ts for the server).
 */
export const TEST_ENGINE: 'sqlite' | 'postgres' = process.env.DATASET_REST_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

/**
 * What a test gives as --db: the SQLite file it names, or on PostgreSQL a new database of its
 * own (left for the run to drop with its server).
 */
export async function testDatabase(sqliteFile: string): Promise<string> {
  return TEST_ENGINE === 'postgres' ? (await freshDatabase()).url : sqliteFile;
}

/** The storage of testDatabase(sqliteFile). */
export async function testStorage(sqliteFile: string): Promise<TransactionManager> {
  return openStorage(databaseTarget(await testDatabase(sqliteFile)), { poolSize: 4 });
}

export const DEMO_DIR = fileURLToPath(new URL('../../demo', import.meta.url));

/**
 * The demo's modules (classes, methods, the seed) imported as the test file's own: once for the
 * file, not at every opening, and sharing the file's core (`dataset-rest` is src/index.ts) instead
 * of a copy in a tsx namespace of their own (projectModuleLoader, which the commands' tests and a
 * plain openProject still use) — most of a second a file, a quarter of a second an opening.
 */
const DEMO_MODULES: ProjectModuleImport = async (file) => (await import(pathToFileURL(file).href)) as Record<string, unknown>;

/** The demo project opened as openProject opens it, its modules loaded once for the file (DEMO_MODULES). */
export function openDemoProject(options: ProjectOptions = {}): ReturnType<typeof openProject> {
  return openProject(DEMO_DIR, { modules: DEMO_MODULES, ...options });
}
export const BIN = fileURLToPath(new URL('../../bin/dataset-rest.mjs', import.meta.url));

/** The dataset-rest command running as a process, once it has printed its URL. */
export interface CommandProcess {
  readonly child: ChildProcess;
  /** http://127.0.0.1:PORT/rest */
  readonly base: string;
  /** what it wrote on stderr so far */
  stderr(): string;
  /** its exit code, when it exits */
  readonly exited: Promise<number | null>;
}

/**
 * Runs `dataset-rest ARGS` (supervised, or with `alone` one server instance without the
 * supervisor; with `detached` in a process group of its own, as a terminal's foreground job) and
 * resolves once it prints its URL; rejects, with its stderr, if it exits first.
 */
export async function startCommand(args: readonly string[], options: { alone?: boolean; detached?: boolean } = {}): Promise<CommandProcess> {
  const env = options.alone ? { ...process.env, DATASET_REST_INSTANCE: '1' } : process.env;
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env, detached: options.detached ?? false });
  let err = '';
  child.stderr?.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const base = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      const m = /(http:\S+\/rest)/.exec(String(d));
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`the server exited with ${code}: ${err}`)));
  });
  return { child, base, stderr: () => err, exited };
}

type Verb = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
export type Answer = { status: number; body: any; headers: Record<string, unknown> };

export interface DemoFixture {
  ds: DatastoreWithClasses;
  app: FastifyInstance;
  /** GET (or another method) through inject; resolves to status and parsed JSON body */
  request(url: string, method?: Verb, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** a second server over the same datastore, built with other options (a shorter function time limit …) */
  withServer(options: ServerOptions): Promise<{ request: DemoFixture['request']; close(): Promise<void> }>;
  close(): Promise<void>;
}

/** Injects a request into an app; resolves to status, parsed JSON body (or the text) and headers. */
export async function injected(app: FastifyInstance, url: string, method: Verb = 'GET', body?: unknown, headers?: Record<string, string>): Promise<Answer> {
  const res = await app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: body as object }) });
  let parsed: unknown = res.body;
  try {
    parsed = JSON.parse(res.body);
  } catch {
    // not JSON: leave the text
  }
  return { status: res.statusCode, body: parsed, headers: res.headers };
}

export function tempDir(prefix = 'dataset-rest-test-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The demo project on a temporary database holding its seed (a copy of the run's seeded one, seeded-demo.ts), the datastore and server built with `options`; its roles.json only when `roles` names it. */
export async function openDemo(options: Omit<ProjectOptions, 'db'> & ServerOptions = {}): Promise<DemoFixture> {
  const tmp = tempDir();
  // without roles.json unless a test names one: the REST tests drive everything as an open datastore's guest
  const ds = await openDemoProject({
    db: await seededDemoDatabase(TEST_ENGINE, join(tmp.dir, 'demo.sqlite')), poolSize: 4, entitySets: options.entitySets, onEventError: options.onEventError, roles: options.roles ?? false, sessions: options.sessions, queryTimeoutMs: options.queryTimeoutMs, maxTextLength: options.maxTextLength,
  });
  const app = await buildServer(ds, { logLevel: 'silent', ...options });
  return {
    ds,
    app,
    request: (url, method, body, headers) => injected(app, url, method, body, headers),
    async withServer(more) {
      const other = await buildServer(ds, { logLevel: 'silent', ...options, ...more });
      return { request: (url, method, body, headers) => injected(other, url, method, body, headers), close: () => other.close() };
    },
    async close() {
      await app.close();
      await ds.close();
      tmp.remove();
    },
  };
}

/** One server instance of a pair (twoInstances). */
export interface Instance {
  ds: DatastoreWithClasses;
  app: FastifyInstance;
}

/** The demo opened twice over one new database holding its seed, as two server processes would be (roles: a roles.json path, or false for none). */
export async function twoInstances(roles: string | false): Promise<{ a: Instance; b: Instance; close(): Promise<void> }> {
  const tmp = tempDir();
  const db = await seededDemoDatabase(TEST_ENGINE, join(tmp.dir, 'shared.sqlite'));
  const open = async (): Promise<Instance> => {
    const ds = await openDemoProject({ db, roles, poolSize: 4 });
    return { ds, app: await buildServer(ds, { logLevel: 'silent' }) };
  };
  const a = await open();
  const b = await open();
  return {
    a, b,
    async close() {
      for (const x of [a, b]) {
        await x.app.close();
        await x.ds.close();
      }
      tmp.remove();
    },
  };
}
