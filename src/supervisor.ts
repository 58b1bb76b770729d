// The command runs the server as a child process and stays beside it: when a function holds the
// child's event loop past its time limit, the child's watchdog answers the stuck call and ends the
// child (src/functions/watchdog.ts); the supervisor then starts a fresh one on the same port, so
// the server keeps serving. Signals go through: SIGTERM/SIGINT ask the child to finish its
// requests, and the supervisor exits with it.

import { fork, type ChildProcess } from 'node:child_process';

/** Set in the child's environment: "serve, don't supervise". */
export const INSTANCE_ENV = 'DATASET_REST_INSTANCE';

/** What the child tells the supervisor once it listens. */
export interface ReadyMessage {
  readonly type: 'ready';
  readonly port: number;
}

/** Restarts in a row, each within this long of the previous start, mean a crash loop: give up. */
const CRASH_LOOP = { restarts: 5, withinMs: 10_000 };

/** Runs the server in a child process (this script with the same arguments) and restarts it when it dies. Resolves never; exits the process. */
export function supervise(script: string, args: readonly string[]): void {
  let child: ChildProcess;
  let port: number | undefined;
  let stopping = false;
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
      // stopped on request, or never got going (bad project, port taken): its exit is ours
      if (stopping || !ready) process.exit(code ?? (signal === 'SIGTERM' || signal === 'SIGINT' ? 0 : 1));
      const recent = starts.filter((t) => Date.now() - t < CRASH_LOOP.withinMs);
      if (recent.length >= CRASH_LOOP.restarts) {
        process.stderr.write(`dataset-rest: the server stopped ${recent.length} times within ${CRASH_LOOP.withinMs / 1000} s; giving up\n`);
        process.exit(1);
      }
      process.stderr.write(`dataset-rest: the server instance ended (${signal ?? `exit code ${code}`}); starting a new one on port ${port}\n`);
      start();
    });
  };

  const stop = (signal: NodeJS.Signals) => {
    stopping = true;
    child.kill(signal === 'SIGINT' ? 'SIGTERM' : signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  start();
}
