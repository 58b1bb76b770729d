// A server child process started with any binary (the peers run on the cache's Node 22, or on
// json-server's CLI), ready when its stdout prints a ready line or when its port answers, and
// killed when the bench ends however it ends: the same guarantees as bench/processes.ts (whose
// onCleanup hook this uses), for children that startServer cannot start (it runs process.execPath).

import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { onCleanup } from '../processes.js';

export interface Child {
  readonly name: string;
  /** the server's origin, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  readonly pid: number;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs` */
  stop(graceMs?: number): Promise<void>;
}

export interface ChildOptions {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
  /** ready when stdout matches (its first group is the URL), or when `poll` (a full URL) answers 200 */
  readonly ready: { readonly line: RegExp } | { readonly poll: string };
  readonly timeoutMs?: number;
}

/** A port that was free a moment ago on 127.0.0.1 (for servers that cannot take port 0 and tell which port they got). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** Starts the child and resolves once it is ready; rejects (and kills it) if it exits or times out first. */
export function startChild(options: ChildOptions): Promise<Child> {
  const child = spawn(options.command, options.args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const dropCleanup = onCleanup(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  let stdout = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4096);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    dropCleanup();
    resolve();
  }));
  const stop = async (graceMs = 5000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };

  return new Promise<Child>((resolve, reject) => {
    let settled = false;
    const timeoutMs = options.timeoutMs ?? 60_000;
    const succeed = (url: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ name: options.name, url, pid: child.pid as number, stop });
    };
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void stop(1000);
      const output = [stderr && `--- its stderr ---\n${stderr.trimEnd()}`, stdout && `--- its stdout ---\n${stdout.slice(-2048).trimEnd()}`].filter(Boolean).join('\n');
      reject(new Error(`${options.name}: ${why}${output ? `\n${output}` : ''}`));
    };
    const timer = setTimeout(() => fail(`not ready after ${timeoutMs} ms`), timeoutMs);
    child.once('error', (e) => fail(`cannot start ${options.command}: ${e.message}`));
    child.once('exit', (code, signal) => fail(`exited before it was ready (${signal ?? `code ${code}`})`));
    // stdout is always drained, so the child never blocks on a full pipe; only its tail is kept
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (settled) return;
      stdout = (stdout + chunk).slice(-16_384);
      if ('line' in options.ready) {
        const m = options.ready.line.exec(stdout);
        if (m) succeed(m[1]);
      }
    });
    if ('poll' in options.ready) {
      const target = options.ready.poll;
      const origin = new URL(target).origin;
      const poll = async (): Promise<void> => {
        while (!settled) {
          if (await answers(target)) return succeed(origin);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      void poll();
    }
  });
}
