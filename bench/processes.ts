// The bench's child processes (servers started with `node`, ready when they print a URL) and
// temporary folders, and their cleanup: on normal exit, on failure and on SIGINT/SIGTERM, every
// registered cleanup runs (a PostgreSQL cluster is stopped), every child still running is killed
// and every temporary folder removed.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const children = new Set<ChildProcess>();
const folders = new Set<string>();
const cleanups = new Set<() => void>();
let hooked = false;

function cleanupNow(): void {
  // first: what must go before the folders it uses (a PostgreSQL cluster in one of them)
  for (const fn of cleanups) {
    try {
      fn();
    } catch {
      // best effort: the others must run too
    }
  }
  cleanups.clear();
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  children.clear();
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  folders.clear();
}

/** Installs the exit and signal hooks once. */
function hook(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', cleanupNow);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      process.stderr.write(`\n${signal}: stopping the servers and removing the temporary files\n`);
      cleanupNow();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  }
}

/** A new folder under the OS temporary folder, removed when the bench ends (however it ends). */
export function temporaryFolder(prefix: string): string {
  hook();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  folders.add(dir);
  return dir;
}

/**
 * A synchronous cleanup run when the bench ends however it ends (normal exit, failure, SIGINT or
 * SIGTERM), before the servers are killed and the folders removed; the returned function drops it
 * (once its resource has been released the normal way).
 */
export function onCleanup(fn: () => void): () => void {
  hook();
  cleanups.add(fn);
  return () => {
    cleanups.delete(fn);
  };
}

export interface ServerProcess {
  readonly name: string;
  /** the URL in the ready line */
  readonly url: string;
  readonly pid: number;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs` */
  stop(graceMs?: number): Promise<void>;
}

export interface StartOptions {
  readonly name: string;
  /** arguments to `node` */
  readonly args: readonly string[];
  readonly cwd: string;
  /** the ready line; its first group is the server's URL */
  readonly ready: RegExp;
  readonly timeoutMs?: number;
  /** run under our supervisor (for --workers above 1); the CPU is then that of the process tree */
  readonly supervised?: boolean;
}

/** Starts `node ARGS` and resolves once its stdout prints the ready line. */
export function startServer(options: StartOptions): Promise<ServerProcess> {
  hook();
  // DATASET_REST_INSTANCE: our server runs as one process, without its supervisor, so that the
  // CPU measured is the server's
  const env = options.supervised ? process.env : { ...process.env, DATASET_REST_INSTANCE: '1' };
  const child = spawn(process.execPath, options.args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'], env });
  children.add(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    // the last few KB only: enough to explain a failure
    stderr = (stderr + chunk).slice(-4096);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    children.delete(child);
    resolve();
  }));

  const stop = async (graceMs = 5000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };

  return new Promise<ServerProcess>((resolve, reject) => {
    let stdout = '';
    let settled = false;
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stop(1000);
      reject(new Error(`${options.name}: ${why}${stderr ? `\n--- its stderr ---\n${stderr.trimEnd()}` : ''}`));
    };
    const timer = setTimeout(() => fail(`not ready after ${options.timeoutMs ?? 20_000} ms`), options.timeoutMs ?? 20_000);
    child.once('error', (e) => fail(`cannot start: ${e.message}`));
    child.once('exit', (code, signal) => fail(`exited before it was ready (${signal ?? `code ${code}`})`));
    const onData = (chunk: string): void => {
      stdout += chunk;
      const m = options.ready.exec(stdout);
      if (!m || settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stdout?.resume(); // keep draining, so the child never blocks on a full pipe
      resolve({ name: options.name, url: m[1], pid: child.pid as number, stop });
    };
    child.stdout?.setEncoding('utf8').on('data', onData);
  });
}

/** Whether a process of that id is still there (a signal 0 reaches it). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
