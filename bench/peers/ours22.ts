// Our server on Node 22, for the comparison at the same Node version as Platformatic: the
// repository's node_modules hold better-sqlite3 built for Node 20's ABI, so the cache gets its own
// `npm ci --omit=dev` of the repository's package-lock.json, run by Node 22 with its headers as
// nodedir (better-sqlite3 is compiled from source: prebuild-install cannot download here). ESM
// resolves packages from the importing file's folder upwards (NODE_PATH does not apply), so at each
// start the sources (src, bin, explorer, package.json, tsconfig.json) are copied next to those
// node_modules and bin/dataset-rest.mjs is started from there.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CACHE, NODE22, VERSIONS, ensureInstalled, ensureNode22, node22Env, replaceFolder, run, type Log } from './cache.js';
import { startChild } from './child.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const OURS22_DIR = join(CACHE, 'ours22');
const SOURCES = ['src', 'bin', 'explorer', 'package.json', 'tsconfig.json'];

/** Installs the repository's runtime dependencies for Node 22 (again when package-lock.json changes). */
export async function ensureOurs22(log: Log): Promise<{ ms: number }> {
  await ensureNode22(log);
  const lock = readFileSync(join(ROOT, 'package-lock.json'), 'utf8');
  const { ms } = await ensureInstalled(
    {
      what: `our dependencies for Node ${VERSIONS.node22} (npm ci --omit=dev; better-sqlite3 compiled from source: a minute or two)`,
      dir: OURS22_DIR,
      mark: { lock: createHash('sha256').update(lock).digest('hex'), node: VERSIONS.node22 },
      files: { 'package.json': readFileSync(join(ROOT, 'package.json'), 'utf8'), 'package-lock.json': lock },
      npmArgs: ['ci', '--omit=dev'],
      env: node22Env(),
      verify: async (dir) => {
        const script = "const D = require('better-sqlite3'); const db = new D(':memory:'); db.prepare('select 1').get(); db.close();";
        const r = await run(NODE22, ['-e', script], { cwd: dir, env: node22Env(), timeoutMs: 60_000 });
        if (r.code !== 0) throw new Error(`ours on Node 22: better-sqlite3 does not load:\n${r.output.slice(-2000)}`);
      },
    },
    log,
  );
  return { ms };
}

export interface OursOnNode22 {
  readonly name: string;
  /** the origin, e.g. http://127.0.0.1:41234 (the API is under /rest) */
  readonly url: string;
  readonly pid: number;
  readonly nodeVersion: string;
  stop(graceMs?: number): Promise<void>;
}

export interface OursOptions {
  /** more arguments for bin/dataset-rest.mjs (e.g. --db, --pool-size) */
  readonly args?: readonly string[];
  readonly log?: Log;
}

/**
 * Starts our server (bin/dataset-rest.mjs, today's sources) on Node 22 over `projectDir`, as the
 * suite starts it on Node 20: one process (no supervisor), port 0, warnings only. Installs the
 * Node 22 dependencies first if the cache has none.
 */
export async function ourServerOnNode22(projectDir: string, options: OursOptions = {}): Promise<OursOnNode22> {
  await ensureOurs22(options.log ?? (() => {}));
  for (const entry of SOURCES) replaceFolder(join(ROOT, entry), join(OURS22_DIR, entry));
  const child = await startChild({
    name: 'ours (node 22)',
    command: NODE22,
    args: [join(OURS22_DIR, 'bin', 'dataset-rest.mjs'), '--project', resolve(projectDir), '--port', '0', '--workers', '1', '--log-level', 'warn', ...(options.args ?? [])],
    cwd: OURS22_DIR,
    // DATASET_REST_INSTANCE: one server process, as bench/processes.ts starts ours
    env: { ...process.env, DATASET_REST_INSTANCE: '1' },
    ready: { line: /dataset-rest listening on (http:\/\/\S+)\/rest/ },
  });
  return { name: child.name, url: child.url, pid: child.pid, nodeVersion: `v${VERSIONS.node22}`, stop: (graceMs) => child.stop(graceMs) };
}
