// The command runs the server as a child process, or as several (--workers: node:cluster workers
// sharing one listening port, connections spread over them), and stays beside them: when a function holds a worker's event
// loop past its time limit, that worker's watchdog answers the stuck call and ends the worker
// (src/functions/watchdog.ts); the supervisor then starts a fresh one on the same port, so the
// server keeps serving. Workers share nothing in memory: everything a later request may need is
// in the database (README, "What is shared"). Signals go through: SIGTERM/SIGINT ask every worker
// to finish its requests, and the supervisor exits once they have.

import { fork } from 'node:child_process';
import cluster from 'node:cluster';
import { RESTART_BURST } from './config/limits.js';

/** Set in the child's environment: "serve, don't supervise". */
export const INSTANCE_ENV = 'DATASET_REST_INSTANCE';

/** Set to 0 in a worker's environment: it does not print the ready line (the supervisor prints one for all). */
export const READY_LINE_ENV = 'DATASET_REST_READY_LINE';

/** What the child tells the supervisor once it listens. */
export interface ReadyMessage {
  readonly type: 'ready';
  readonly port: number;
  /** the ready line the worker printed, or would have */
  readonly line: string;
}

/**
 * Runs `workers` server processes (this script with the same arguments) and replaces any that
 * ends. The first starts alone (it may create, migrate and seed the database); the others once it
 * listens. Resolves never; exits the process.
 */
export function supervise(script: string, args: readonly string[], workers = 1): void {
  let port: number | undefined;
  let stopping = false;
  let served = false;
  const live = new Set<ServerProcess>();
  const pending = new Set<NodeJS.Timeout>();
  const starts: number[] = [];
  /** the first workers, until all listen: then one ready line is printed for all of them */
  let starting = workers;

  /** the arguments the live workers listen with: one listening socket is shared by workers that ask for the same address and port */
  let listenArgs = [...args];

  const start = () => {
    starts.push(Date.now());
    // once every worker has gone the socket has closed: the next one listens again on the port
    // the first got (--port 0 picks one only once), and those after it ask for that port too
    if (live.size === 0 && port !== undefined) listenArgs = [...args, '--port', String(port)];
    const worker = launch(script, listenArgs, { [INSTANCE_ENV]: '1', ...(starting > 0 ? { [READY_LINE_ENV]: '0' } : {}) }, workers);
    live.add(worker);
    let ready = false;
    worker.onMessage((m) => {
      if (m?.type !== 'ready' || ready) return;
      ready = true;
      port = m.port;
      if (!served) {
        served = true;
        for (let i = 1; i < workers; i++) start();
      }
      if (starting > 0 && --starting === 0) process.stdout.write(`${m.line}\n`);
    });
    worker.onExit((code, signal) => {
      live.delete(worker);
      onExit(ready, code, signal);
    });
  };

  const onExit = (ready: boolean, code: number | null, signal: string | null) => {
    const status = code ?? (signal === 'SIGTERM' || signal === 'SIGINT' ? 0 : 1);
    // stopped on request: done when the last one is
    if (stopping) {
      if (live.size === 0) process.exit(status);
      return;
    }
    // the first worker never got going (bad project, port taken): nothing to keep serving
    if (!served) process.exit(status);
    starts.splice(0, Math.max(0, starts.length - RESTART_BURST.restarts * workers));
    // A worker that served, then ended, is replaced — always: giving up would let any client that
    // can call a stuck function stop the server for good. Bursts are slowed down.
    // (a replacement that cannot start — its port taken meanwhile, say — is retried the same way)
    const recent = starts.filter((t) => Date.now() - t < RESTART_BURST.withinMs).length;
    const delay = recent >= RESTART_BURST.restarts * workers || !ready ? RESTART_BURST.delayMs : 0;
    process.stderr.write(`dataset-rest: ${workers === 1 ? 'the' : 'a'} server instance ended (${signal ?? `exit code ${code}`}); starting a new one on port ${port}${delay ? ` in ${delay / 1000} s (${recent} starts within ${RESTART_BURST.withinMs / 1000} s)` : ''}\n`);
    const timer = setTimeout(() => {
      pending.delete(timer);
      start();
    }, delay);
    pending.add(timer);
  };

  const stop = (signal: NodeJS.Signals) => {
    stopping = true;
    for (const t of pending) clearTimeout(t);
    // between two workers: nothing to wait for
    if (live.size === 0) process.exit(0);
    for (const w of live) w.kill(signal === 'SIGINT' ? 'SIGTERM' : signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  start();
}

/** A server process as the supervisor sees it: its ready message, its end, a signal. */
interface ServerProcess {
  onMessage(listener: (m: ReadyMessage) => void): void;
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  kill(signal: NodeJS.Signals): void;
}

/**
 * Starts one server process. Alone, it is a plain child with its own listening socket: while it
 * is replaced the port is closed, and a client's connection is refused rather than held. Several
 * are cluster workers, whose connections the supervisor accepts on the one socket they share.
 */
function launch(script: string, args: readonly string[], env: Record<string, string>, workers: number): ServerProcess {
  if (workers === 1) {
    const child = fork(script, args, { env: { ...process.env, ...env }, stdio: 'inherit' });
    return { onMessage: (f) => child.on('message', f), onExit: (f) => child.on('exit', f), kill: (signal) => child.kill(signal) };
  }
  cluster.setupPrimary({ exec: script, args: [...args] });
  const worker = cluster.fork(env);
  return { onMessage: (f) => worker.on('message', f), onExit: (f) => worker.on('exit', f), kill: (signal) => worker.process.kill(signal) };
}
