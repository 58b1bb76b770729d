// The last resort against a function that holds the event loop. JavaScript cannot interrupt
// synchronous code from its own thread (and on Node 20 V8's terminateExecution corrupts the
// async-hooks stack that per-call contexts use), so a watchdog thread watches a heartbeat the main
// thread beats while functions run. When the loop has not beaten for longer than a running call's
// time limit, code that never yields holds it. The watchdog then answers the calls running — a
// 504 written straight to each one's socket — and, when the server runs under the
// command's supervisor, ends the process so that a fresh one takes over the listening socket
// (src/supervisor.ts). Embedded in another program it only reports the stall on stderr.
// docs/decisions.md ("Time limits of functions") tells the whole mechanism.

import { fstatSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** A socket's inode: what tells it from a later socket given the same descriptor number. */
function inodeOf(fd: number): number | undefined {
  try {
    return fstatSync(fd).ino;
  } catch {
    return undefined;
  }
}

const BEAT_MS = 50;
/** The shortest stall acted on, whatever the time limit: shorter holds are ordinary work. */
const MIN_STALL_MS = 1000;

export type StallAction = 'report' | 'exit';

/** What the watchdog thread is told: calls starting and ending, and what to do on a stall. */
type WatchdogMessage =
  | { type: 'enter'; id: number; name: string; limit: number; startedAt: number; fd: number | undefined; inode: number | undefined }
  /** the call's caller has its answer (the time limit's 504): its socket is no longer the call's to write to */
  | { type: 'answered'; id: number }
  | { type: 'leave'; id: number }
  | { type: 'action'; action: StallAction };

// An ES module given as a data: URL: no file to find next to this one, compiled or run by tsx,
// and the same whatever the process's --input-type. It writes with fs.writeSync only: the main
// thread may never run again.
const WORKER = `
import { workerData, parentPort } from 'node:worker_threads';
import fs from 'node:fs';
const beat = new Float64Array(workerData);
const calls = new Map();
let action = 'report';
let reported = 0;
parentPort.on('message', (m) => {
  if (m.type === 'enter') calls.set(m.id, m);
  else if (m.type === 'answered' && calls.has(m.id)) calls.get(m.id).fd = undefined;
  else if (m.type === 'leave') calls.delete(m.id);
  else if (m.type === 'action') action = m.action;
});
function answer(fd, inode, message) {
  // the descriptor must still be the caller's socket: after a hang-up it may be another connection's
  try { if (fs.fstatSync(fd).ino !== inode) return; } catch { return; }
  const body = JSON.stringify({ __ERROR: [{ message, componentSignature: 'dsrs', errCode: 7020 }] });
  const head = 'HTTP/1.1 504 Gateway Timeout\\r\\ncontent-type: application/json; charset=utf-8\\r\\ncontent-length: ' + Buffer.byteLength(body) + '\\r\\nconnection: close\\r\\n\\r\\n';
  try { fs.writeSync(fd, head + body); } catch {}
}
setInterval(() => {
  const now = Date.now();
  const blocked = now - beat[0];
  // A stall: the loop held longer than a call's time limit (and ${MIN_STALL_MS} ms at least), that call
  // past its limit. Which code holds the loop cannot be seen from here: every call running is named.
  const running = [...calls.values()];
  if (!running.some((c) => blocked > Math.max(c.limit, ${MIN_STALL_MS}) && now - c.startedAt > c.limit) || beat[0] === reported) return;
  reported = beat[0];
  const why = 'the server was held for ' + blocked + ' ms, past the time limit (--function-timeout), by code that never yields while '
    + running.map((c) => c.name).join(', ') + (running.length === 1 ? ' ran' : ' were running');
  if (action !== 'exit') {
    fs.writeSync(2, 'dataset-rest: ' + why + '; other requests wait until it yields\\n');
    return;
  }
  for (const c of running) if (c.fd !== undefined) answer(c.fd, c.inode, why + ': this server instance was stopped, and a new one takes its place');
  fs.writeSync(2, 'dataset-rest: ' + why + ': stopping this server instance\\n');
  process.kill(process.pid, 'SIGKILL');
}, ${BEAT_MS});
`;

class Watchdog {
  readonly #beat = new Float64Array(new SharedArrayBuffer(Float64Array.BYTES_PER_ELEMENT));
  #worker: Worker | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running = 0;
  #nextId = 1;
  #action: StallAction = 'report';

  /** What a stall does: report it on stderr (the default, for embedding), or end the process (under the supervisor). */
  set action(action: StallAction) {
    this.#action = action;
    this.#worker?.postMessage({ type: 'action', action } satisfies WatchdogMessage);
  }

  /** A call starts: watched until leave(id). `fd` is its socket, where a stall's 504 is written. */
  enter(name: string, limit: number, fd: number | undefined): number {
    const id = this.#nextId++;
    this.#worker ??= this.#start();
    this.#worker.postMessage({ type: 'enter', id, name, limit, startedAt: Date.now(), fd, inode: fd === undefined ? undefined : inodeOf(fd) } satisfies WatchdogMessage);
    if (this.#running++ === 0) {
      this.#beat[0] = Date.now();
      this.#timer = setInterval(() => void (this.#beat[0] = Date.now()), BEAT_MS).unref();
    }
    return id;
  }

  /** The call's caller got its answer: the watchdog no longer writes to its socket. */
  answered(id: number): void {
    this.#worker?.postMessage({ type: 'answered', id } satisfies WatchdogMessage);
  }

  leave(id: number): void {
    this.#worker?.postMessage({ type: 'leave', id } satisfies WatchdogMessage);
    if (--this.#running === 0) clearInterval(this.#timer);
  }

  #start(): Worker {
    const w = new Worker(new URL(`data:text/javascript,${encodeURIComponent(WORKER)}`), { workerData: this.#beat.buffer });
    w.postMessage({ type: 'action', action: this.#action } satisfies WatchdogMessage);
    // without a watchdog, the cooperative checks remain: say so, once
    w.on('error', (e) => process.stderr.write(`dataset-rest: the function watchdog stopped (${e.message}); functions that never yield are no longer stopped\n`));
    w.unref(); // never keeps the process alive
    return w;
  }
}

/** The watchdog of this process's event loop (one loop per process, so one watchdog). */
export const watchdog = new Watchdog();
