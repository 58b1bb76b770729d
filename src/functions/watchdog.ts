// The last resort against a function that holds the event loop. JavaScript cannot interrupt
// synchronous code from its own thread (and on Node 20 V8's terminateExecution corrupts the
// async-hooks stack that per-call contexts use), so a watchdog thread watches a heartbeat the main
// thread beats while functions run. When the loop has not beaten for longer than a running call's
// time limit, code that never yields holds it. The watchdog then answers the calls running — a
// 504 written straight to each one's socket — and, when the server runs under the
// command's supervisor, ends the process so that a fresh one takes over the listening socket
// (src/process/supervisor.ts). Embedded in another program it only reports the stall on stderr.
// docs/decisions.md ("Time limits") tells the whole mechanism.
//
// The calls running sit in a table in shared memory, written by the main thread and read by the
// watchdog thread every BEAT_MS: no message per call (they cost a quarter of a small call's time).

import { fstatSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { MIN_STALL_MS, WATCHED_CALLS } from '../config/limits.js';
import { WIRE } from '../config/wire.js';
import { ERRORS } from '../errors/registry.js';

const BEAT_MS = 50;
const SLOTS = WATCHED_CALLS;
/** A slot: used (0/1), time limit, start time, socket descriptor (-1: none or answered), its inode, name length. */
const FIELDS = 6;
const [USED, LIMIT, STARTED, FD, INODE, NAME_LENGTH] = [0, 1, 2, 3, 4, 5];
/** Bytes of a call's name kept (UTF-8) for the watchdog's message. */
const NAME_BYTES = 120;

export type StallAction = 'report' | 'exit';

/** A socket's inode: what tells it from a later socket given the same descriptor number. */
function inodeOf(fd: number): number {
  try {
    return fstatSync(fd).ino;
  } catch {
    return -1;
  }
}

// An ES module given as a data: URL: no file to find next to this one, compiled or run by tsx,
// and the same whatever the process's --input-type. It writes with fs.writeSync only: the main
// thread may never run again.
const WORKER = `
import { workerData, parentPort } from 'node:worker_threads';
import fs from 'node:fs';
const beat = new Float64Array(workerData.beat);
const slots = new Float64Array(workerData.slots);
const names = new Uint8Array(workerData.names);
const decoder = new TextDecoder();
let action = 'report';
let reported = 0;
parentPort.on('message', (m) => { action = m.action; });
function answer(fd, inode, message) {
  // the descriptor must still be the caller's socket: after a hang-up it may be another connection's
  try { if (fs.fstatSync(fd).ino !== inode) return; } catch { return; }
  const body = JSON.stringify({ ${JSON.stringify(WIRE.ERROR)}: [{ message, componentSignature: ${JSON.stringify(ERRORS.FUNCTION_TIMEOUT.signature)}, errCode: ${ERRORS.FUNCTION_TIMEOUT.errCode} }] });
  const head = 'HTTP/1.1 504 Gateway Timeout\\r\\ncontent-type: application/json; charset=utf-8\\r\\ncontent-length: ' + Buffer.byteLength(body) + '\\r\\nconnection: close\\r\\n\\r\\n';
  try { fs.writeSync(fd, head + body); } catch {}
}
function running() {
  const out = [];
  for (let i = 0; i < ${SLOTS}; i++) {
    const at = i * ${FIELDS};
    if (slots[at + ${USED}] !== 1) continue;
    const length = slots[at + ${NAME_LENGTH}];
    out.push({ limit: slots[at + ${LIMIT}], startedAt: slots[at + ${STARTED}], fd: slots[at + ${FD}], inode: slots[at + ${INODE}],
      name: decoder.decode(names.subarray(i * ${NAME_BYTES}, i * ${NAME_BYTES} + length)) });
  }
  return out;
}
setInterval(() => {
  const now = Date.now();
  const blocked = now - beat[0];
  if (blocked <= ${MIN_STALL_MS} || beat[0] === reported) return;
  // A stall: the loop held longer than a call's time limit (and ${MIN_STALL_MS} ms at least), that call
  // past its limit. Which code holds the loop cannot be seen from here: every call running is named.
  const calls = running();
  if (!calls.some((c) => blocked > c.limit && now - c.startedAt > c.limit)) return;
  reported = beat[0];
  const why = 'the server was held for ' + blocked + ' ms, past the time limit (--function-timeout), by code that never yields while '
    + calls.map((c) => c.name).join(', ') + (calls.length === 1 ? ' ran' : ' were running');
  if (action !== 'exit') {
    fs.writeSync(2, 'dataset-rest: ' + why + '; other requests wait until it yields\\n');
    return;
  }
  for (const c of calls) if (c.fd >= 0) answer(c.fd, c.inode, why + ': this server instance was stopped, and a new one takes its place');
  fs.writeSync(2, 'dataset-rest: ' + why + ': stopping this server instance\\n');
  process.kill(process.pid, 'SIGKILL');
}, ${BEAT_MS});
`;

class Watchdog {
  readonly #beat = new Float64Array(new SharedArrayBuffer(Float64Array.BYTES_PER_ELEMENT));
  readonly #slots = new Float64Array(new SharedArrayBuffer(SLOTS * FIELDS * Float64Array.BYTES_PER_ELEMENT));
  readonly #names = new Uint8Array(new SharedArrayBuffer(SLOTS * NAME_BYTES));
  readonly #free: number[] = Array.from({ length: SLOTS }, (_, i) => SLOTS - 1 - i);
  readonly #encoder = new TextEncoder();
  #worker: Worker | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running = 0;
  #action: StallAction = 'report';

  /** What a stall does: report it on stderr (the default, for embedding), or end the process (under the supervisor). */
  set action(action: StallAction) {
    this.#action = action;
    this.#worker?.postMessage({ action });
  }

  /** A call starts: watched until leave(id). `fd` is its socket, where a stall's 504 is written. Resolves to its slot (-1: unwatched). */
  enter(name: string, limit: number, fd: number | undefined): number {
    this.#worker ??= this.#start();
    if (this.#running++ === 0) {
      this.#beat[0] = Date.now();
      this.#timer = setInterval(() => void (this.#beat[0] = Date.now()), BEAT_MS).unref();
    }
    const slot = this.#free.pop();
    if (slot === undefined) return -1;
    const at = slot * FIELDS;
    const { written } = this.#encoder.encodeInto(name, this.#names.subarray(slot * NAME_BYTES, (slot + 1) * NAME_BYTES));
    this.#slots[at + LIMIT] = limit;
    this.#slots[at + STARTED] = Date.now();
    this.#slots[at + FD] = fd ?? -1;
    this.#slots[at + INODE] = fd === undefined ? -1 : inodeOf(fd);
    this.#slots[at + NAME_LENGTH] = written;
    this.#slots[at + USED] = 1; // last: the watchdog reads a slot only once it is whole
    return slot;
  }

  /** The call's caller got its answer: the watchdog no longer writes to its socket. */
  answered(slot: number): void {
    if (slot >= 0) this.#slots[slot * FIELDS + FD] = -1;
  }

  leave(slot: number): void {
    if (slot >= 0) {
      this.#slots[slot * FIELDS + USED] = 0;
      this.#free.push(slot);
    }
    if (--this.#running === 0) clearInterval(this.#timer);
  }

  #start(): Worker {
    const w = new Worker(new URL(`data:text/javascript,${encodeURIComponent(WORKER)}`), {
      workerData: { beat: this.#beat.buffer, slots: this.#slots.buffer, names: this.#names.buffer },
    });
    w.postMessage({ action: this.#action });
    // without a watchdog, the cooperative checks remain: say so, once
    w.on('error', (e) => process.stderr.write(`dataset-rest: the function watchdog stopped (${e.message}); functions that never yield are no longer stopped\n`));
    w.unref(); // never keeps the process alive
    return w;
  }
}

/** The watchdog of this process's event loop (one loop per process, so one watchdog). */
export const watchdog = new Watchdog();
