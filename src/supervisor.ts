// The command runs the server as a child process and stays beside it: when a function holds the
// child's event loop past its time limit, the child's watchdog answers the stuck call and ends the
// child (src/functions/watchdog.ts); the supervisor then starts a fresh one on the same port, so
// the server keeps serving. Signals go through: SIGTERM/SIGINT ask the child to finish its
// requests, and the supervisor exits with it.

import { RESTART_BURST } from './config/limits.js';
import { fork, type ChildProcess } from 'node:child_process';

/** Set in the child's environment: "serve, don't supervise". */
export const INSTANCE_ENV = 'DATASET_REST_INSTANCE';

/** What the child tells the supervisor once it listens. */
export interface ReadyMessage {
  readonly type: 'ready';
  readonly port: number;
}


/** Runs the server in a child process (this script with the same arguments) and restarts it when it dies. Resolves never; exits the process. */
export function supervise(script: string, args: readonly string[]): void {
  let child: ChildProcess;
  let port: number | undefined;
  let stopping = false;
  let restartTimer: NodeJS.Timeout | undefined;
  const starts: number[] = [];

  const start = () => {
    starts.push(Date.now());
    // a restart keeps the port the first instance got (--port 0 picks one only once)
    const childArgs = port === undefined ? [...args] : [...args, '--port', String(port)];
    child = fork(script, childArgs, { env: { ...process.env, [INSTANCE_ENV]: '1' }, stdio: 'inherit' });
    let ready = false;
    child.on('message', (m: ReadyMessage) => {
      if (m?.type !== 'ready') return;
      ready = true;
      port = m.port;
    });
    child.on('exit', (code, signal) => {
      // stopped on request, or the first instance never got going (bad project, port taken)
      if (stopping || (!ready && port === undefined)) process.exit(code ?? (signal === 'SIGTERM' || signal === 'SIGINT' ? 0 : 1));
      starts.splice(0, Math.max(0, starts.length - RESTART_BURST.restarts));
      // An instance that served, then ended, is replaced — always: giving up would let any client
      // that can call a stuck function stop the server for good. Bursts are slowed down.
      // (a replacement that cannot start — its port taken meanwhile, say — is retried the same way)
      const recent = starts.filter((t) => Date.now() - t < RESTART_BURST.withinMs).length;
      const delay = recent >= RESTART_BURST.restarts || !ready ? RESTART_BURST.delayMs : 0;
      process.stderr.write(`dataset-rest: the server instance ended (${signal ?? `exit code ${code}`}); starting a new one on port ${port}${delay ? ` in ${delay / 1000} s (${recent} restarts within ${RESTART_BURST.withinMs / 1000} s)` : ''}\n`);
      restartTimer = setTimeout(start, delay);
    });
  };

  const stop = (signal: NodeJS.Signals) => {
    stopping = true;
    // between two instances: nothing to wait for
    if (restartTimer && (child.exitCode !== null || child.signalCode !== null)) process.exit(0);
    child.kill(signal === 'SIGINT' ? 'SIGTERM' : signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  start();
}
