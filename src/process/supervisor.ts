// The command runs the server as a child process, or as several (--workers: node:cluster
// workers sharing one listening port), and stays beside them: when a function holds a worker's
// event loop past its time limit, that worker's watchdog answers the stuck call and ends the
// worker (src/functions/watchdog.ts); the supervisor then starts a fresh one on the same port, so
// the server keeps serving. Workers share nothing in memory: everything a later request may need
// is in the database (README, "What is shared"). Signals go through: SIGTERM/SIGINT ask every
// worker to finish its requests, and the supervisor exits once they have.
//
// A server process gets the settings the command resolved over the IPC channel, never through
// its environment: a password from the configuration file or a DATASET_REST_* variable would
// otherwise be readable in every worker's /proc/<pid>/environ, and inherited by any program it
// starts. The worker asks for them (SettingsRequest) once it listens for the answer, so none is
// lost to a message sent before it had loaded; every process started, a replacement too, asks.
// The variables that are settings are left out of the workers' environment as well.

import { fork } from 'node:child_process';
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { PARENT_CHECK_MS, RESTART_BURST } from '../config/limits.js';
import { answerMetricsOf } from '../http/cluster-metrics.js';

/** Set in the child's environment: "serve, don't supervise" (1: alone, resolving its own settings). */
export const INSTANCE_ENV = 'DATASET_REST_INSTANCE';
/** INSTANCE_ENV's value in the supervisor's server processes: they ask it for their settings. */
export const SUPERVISED = 'supervised';
/** How long a server process waits for its settings (the supervisor answers at once). */
const SETTINGS_TIMEOUT_MS = 30_000;

/** What a server process asks the supervisor first: its settings. */
export interface SettingsRequest {
  readonly type: 'settings?';
}

/** The supervisor's answer: the settings it resolved (snapshot(), JSON). */
export interface SettingsMessage {
  readonly type: 'settings';
  readonly settings: string;
}

/** What the child tells the supervisor once it listens. */
export interface ReadyMessage {
  readonly type: 'ready';
  readonly port: number;
  /** the ready line, printed by the supervisor once every worker listens */
  readonly line: string;
}

type WorkerMessage = ReadyMessage | SettingsRequest;

export interface SuperviseOptions {
  readonly workers: number;
  /** the address and port the command was given (port 0: a free one, picked once for all workers) */
  readonly host: string;
  readonly port: number;
  /** the resolved settings, handed to every server process over IPC (snapshot(), JSON) */
  readonly settings: string;
  /** variables of the supervisor's environment its server processes do not get (the settings': they take `settings`) */
  readonly withoutEnv: readonly string[];
  /**
   * How long a server process has to stop once asked (its own drain time, and a little more):
   * past it, it is killed. A process whose event loop is held (a statement without a time limit,
   * code that never yields) cannot even see the signal.
   */
  readonly stopWithinMs: number;
}

/**
 * Runs `workers` server processes (this script with the same arguments) and replaces any that
 * ends after it served. The first starts alone (it may create, migrate and seed the database);
 * the others once it listens; one that cannot start during start-up stops them all. Resolves
 * never; exits the process.
 */
export function supervise(script: string, args: readonly string[], options: SuperviseOptions): void {
  const { workers } = options;
  let port = options.port === 0 ? undefined : options.port;
  let stopping = false;
  let announced = false;
  let othersStarted = false;
  /** the worst exit status of the workers stopped on request */
  let status = 0;
  const live = new Map<ServerProcess, { ready: boolean; initial: boolean }>();
  const pending = new Set<NodeJS.Timeout>();
  const starts: number[] = [];
  const ready = () => [...live.values()].filter((w) => w.ready).length;

  // Workers share the socket of one address and port: with --port 0 the port is picked here,
  // once, so that every worker (and every replacement) asks for the same one.
  const begin = async () => {
    if (workers > 1) {
      // (each worker accepts from the shared socket itself: a connection is never handed to a
      // worker that dies before taking it, and left open in the supervisor; set before any fork)
      cluster.schedulingPolicy = cluster.SCHED_NONE;
      port ??= await freePort(options.host);
    }
    start(true);
  };

  const start = (initial = false) => {
    starts.push(Date.now());
    // a restart keeps the port the first worker got (--port 0 picks one only once)
    const worker = launch(script, port === undefined ? args : [...args, '--port', String(port)], workers, options.withoutEnv);
    const state = { ready: false, initial };
    live.set(worker, state);
    worker.onMessage((m) => {
      // (every process started asks: the first ones and every replacement)
      if (m?.type === 'settings?') {
        worker.send({ type: 'settings', settings: options.settings } satisfies SettingsMessage);
        return;
      }
      if (m?.type !== 'ready' || state.ready || stopping) return;
      state.ready = true;
      port = m.port;
      // the first listens: the others start (they find the database set up)
      if (!othersStarted) {
        othersStarted = true;
        for (let i = 1; i < workers; i++) start(true);
      }
      if (!announced && ready() === workers) {
        announced = true;
        process.stdout.write(`${m.line}\n`);
      }
    });
    worker.onExit((code, signal) => {
      live.delete(worker);
      onExit(state, code, signal);
    });
  };

  const onExit = (state: { ready: boolean; initial: boolean }, code: number | null, signal: string | null) => {
    const exit = code ?? (signal === 'SIGTERM' || signal === 'SIGINT' ? 0 : 1);
    // stopped on request: done when the last one is
    if (stopping) {
      status = Math.max(status, exit);
      if (live.size === 0) process.exit(status);
      return;
    }
    // a worker of the start that never got going (a bad project, the port taken, the database
    // refusing more connections; it said why on stderr): nothing to keep serving
    if (state.initial && !state.ready) {
      status = exit || 1;
      stop('SIGTERM');
      return;
    }
    starts.splice(0, Math.max(0, starts.length - RESTART_BURST.restarts * workers));
    // A worker that served, then ended, is replaced — always: giving up would let any client that
    // can call a stuck function stop the server for good. Bursts are slowed down.
    // (a replacement that cannot start — its port taken meanwhile, say — is retried the same way)
    const recent = starts.filter((t) => Date.now() - t < RESTART_BURST.withinMs).length;
    const burst = recent >= RESTART_BURST.restarts * workers;
    const delay = burst || !state.ready ? RESTART_BURST.delayMs : 0;
    const why = burst ? ` (${recent} starts within ${RESTART_BURST.withinMs / 1000} s)` : !state.ready ? ' (it had not started)' : '';
    process.stderr.write(`dataset-rest: ${workers === 1 ? 'the' : 'a'} server instance ended (${signal ?? `exit code ${code}`}); starting a new one on port ${port}${delay ? ` in ${delay / 1000} s${why}` : ''}\n`);
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
    if (live.size === 0) process.exit(status);
    for (const w of live.keys()) w.kill(signal === 'SIGINT' ? 'SIGTERM' : signal);
    setTimeout(() => {
      if (live.size === 0) return;
      process.stderr.write(`dataset-rest: ${live.size === 1 ? 'a server instance' : `${live.size} server instances`} did not stop within ${options.stopWithinMs / 1000} s: killed\n`);
      for (const w of live.keys()) w.kill('SIGKILL');
    }, options.stopWithinMs);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  watchParent(() => {
    process.stderr.write('dataset-rest: the process that started the server is gone (npm, a shell, a test runner): stopping\n');
    stop('SIGTERM');
  });
  begin().catch((e: unknown) => {
    process.stderr.write(`dataset-rest: cannot listen on ${options.host}: ${(e as Error).message}\n`);
    process.exit(2);
  });
}

/**
 * Calls `gone` once the process that started this one ends (its parent changes: the orphan is
 * adopted by init or a subreaper). Killed with `kill -9`, `npm start` cannot pass a signal on: the
 * server would go on serving, orphaned, holding its port and its database. npm (yarn, pnpm) runs
 * a script through `sh -c`, and a shell that waits for its one command (dash, Debian's sh, does
 * not exec it) outlives npm's SIGKILL, adopted in its turn while this process's parent stays the
 * same: each such shell between this process and what started it is watched too (Linux: /proc).
 * Under a service manager (systemd, Docker's init, a process supervisor) the parent stays for as
 * long as the service runs.
 */
function watchParent(gone: () => void): void {
  const parent = process.ppid;
  const wrappers = shellsAbove(parent);
  const timer = setInterval(() => {
    if (process.ppid === parent && wrappers.every((w) => parentOf(w.pid) === w.parent)) return;
    clearInterval(timer);
    gone();
  }, PARENT_CHECK_MS);
  timer.unref();
}

/** The shells running only the command below them (`sh -c …`), from `pid` up, each with its parent now. */
function shellsAbove(pid: number): { pid: number; parent: number }[] {
  const out: { pid: number; parent: number }[] = [];
  for (let at = pid; out.length < 8 && isShellWrapper(at);) {
    const parent = parentOf(at);
    if (parent === undefined || parent <= 1) break;
    out.push({ pid: at, parent });
    at = parent;
  }
  return out;
}

/** A process's parent, from /proc/<pid>/stat (its 4th field; the name before it is in parentheses and may hold spaces); undefined once it is gone, or without /proc. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Is `pid` a POSIX shell given its command with -c (how npm, yarn and pnpm run a script)? */
function isShellWrapper(pid: number): boolean {
  try {
    const [argv0, flag] = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return /(^|\/)(sh|dash|bash|ash|zsh)$/.test(argv0) && flag === '-c';
  } catch {
    return false;
  }
}

/** A port free on `host` now (the workers then ask for it; another program could take it between, as with any port given). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** A server process as the supervisor sees it: its messages (ready, settings?), its end, a signal. */
interface ServerProcess {
  onMessage(listener: (m: WorkerMessage) => void): void;
  send(m: SettingsMessage): void;
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  kill(signal: NodeJS.Signals): void;
}

/**
 * Starts one server process. Alone, it is a plain child with its own listening socket: while it
 * is replaced the port is closed, and a client's connection is refused rather than held. Several
 * are cluster workers on one shared socket (set up by begin()).
 */
function launch(script: string, args: readonly string[], workers: number, withoutEnv: readonly string[]): ServerProcess {
  // (undefined: a variable the child does not get; cluster.fork adds process.env to these)
  const env: Record<string, string | undefined> = Object.fromEntries(withoutEnv.map((name) => [name, undefined]));
  env[INSTANCE_ENV] = SUPERVISED;
  // (a message to a process that has just ended is dropped: its exit is handled)
  const ignore = () => {};
  if (workers === 1) {
    const child = fork(script, args, { env: { ...process.env, ...env }, stdio: 'inherit' });
    return {
      onMessage: (f) => child.on('message', f), onExit: (f) => child.on('exit', f), kill: (signal) => child.kill(signal),
      send: (m) => child.connected && child.send(m, ignore),
    };
  }
  cluster.setupPrimary({ exec: script, args: [...args] });
  const worker = cluster.fork(env);
  // a scrape of /metrics reaching this worker asks here for every worker's sum
  answerMetricsOf(worker);
  return {
    onMessage: (f) => worker.on('message', f), onExit: (f) => worker.on('exit', f), kill: (signal) => worker.process.kill(signal),
    send: (m) => worker.isConnected() && worker.send(m, undefined, ignore),
  };
}

/**
 * In a server process the supervisor started (INSTANCE_ENV=SUPERVISED): asks it for the settings
 * it resolved and waits for them. Rejects when there is no supervisor to ask, or no answer.
 */
export function settingsFromSupervisor(): Promise<string> {
  return new Promise((resolve, reject) => {
    if (process.send === undefined || !process.connected) {
      reject(new Error(`${INSTANCE_ENV}=${SUPERVISED} is for the processes the command starts itself (to run the server alone: ${INSTANCE_ENV}=1)`));
      return;
    }
    const done = () => {
      clearTimeout(timer);
      process.off('message', listener);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`no settings from the supervisor in ${SETTINGS_TIMEOUT_MS / 1000} s`));
    }, SETTINGS_TIMEOUT_MS);
    const listener = (m: Partial<SettingsMessage> | null) => {
      if (m?.type !== 'settings' || typeof m.settings !== 'string') return;
      done();
      resolve(m.settings);
    };
    // listening first: the answer cannot come before
    process.on('message', listener);
    process.send({ type: 'settings?' } satisfies SettingsRequest);
  });
}
