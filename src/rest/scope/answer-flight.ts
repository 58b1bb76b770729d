// The answer bytes one server process holds in flight (--max-answers-in-flight), and the send
// timeout (--send-timeout). An answer is in flight from the moment its size is measured (its rows
// not yet read: the measurement is reserved) until the kernel has taken its last byte: what it
// holds is what is reserved and not yet made into text, plus the text made and not yet taken by
// the kernel (the socket's queue, the stream's buffer). A client that does not read its answer
// keeps those bytes; 45 of them asking for 29 MB each held 4.4 GB (issue 34). So:
//
// - a read whose measured size does not fit beside what the others hold is refused, 503 with
//   Retry-After (SERVER_BUSY), before its rows are read; a read not measured is refused only when
//   the answers in flight hold the whole budget. An answer alone in flight is never refused (it
//   is bounded by --max-answer-size): a budget smaller than one answer cannot lock a read out.
// - an answer whose socket does not drain — no byte taken by the kernel for --send-timeout while
//   bytes wait — is closed (reset), and what it held is let go; a client reading slowly but
//   steadily is not cut (see stalled() for how slowly); one the kernel took whole leaves its
//   connection waiting the send timeout at most for a next request (idleAfterSent).
//
// Answers smaller than WATCHED_ANSWER_BYTES (reserved, or sent whole) are not followed at all: they
// fit in the socket's buffers, and the hot paths (a read by key, a default page) pay nothing. The per-socket counts are
// Node's own (the libuv write queue, the stream's pending write): see untakenBytes.

import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import type { ServerResponse } from 'node:http';
import { WATCHED_ANSWER_BYTES } from '../../config/limits.js';
import { sizeText } from '../../datastore/index.js';
import { DatasetError } from '../../errors/dataset-error.js';

/** What the flight reports when it closes a connection whose client does not read. */
export type SendTimeoutReport = (what: { bytesWaiting: number; stalledMs: number }) => void;

export class AnswerFlight {
  readonly #held = new Set<AnswerHold>();
  #watch: NodeJS.Timeout | undefined;

  /**
   * `limit`: the bytes in flight at most (0: no limit); `sendTimeoutMs`: how long a socket with
   * bytes waiting may take none of them (0: no timeout).
   */
  constructor(readonly limit: number, readonly sendTimeoutMs: number, readonly onTimeout?: SendTimeoutReport) {}

  /** The bytes the answers in flight hold now. */
  inFlight(): number {
    let bytes = 0;
    for (const hold of this.#held) bytes += hold.bytes();
    return bytes;
  }

  /** How many answers are in flight now. */
  get answers(): number {
    return this.#held.size;
  }

  /** A read not measured: refused only when the answers in flight hold the whole budget. */
  admit(): void {
    if (this.limit === 0 || this.#held.size === 0) return;
    const held = this.inFlight();
    if (held >= this.limit) throw busy(held, this.limit, 0);
  }

  /** the holds opened for each request (open's `request`): what releaseOpenedFor lets go */
  readonly #byRequest = new WeakMap<object, AnswerHold[]>();

  /**
   * A new answer's hold: it reserves what it measures, follows its socket once sent, and lets go
   * when it is sent, fails or its socket closes. `request`: the request it is made for, whose
   * failure lets it go (releaseOpenedFor) whatever step failed.
   */
  open(request?: object): AnswerHold {
    const hold = new AnswerHold(this);
    if (request !== undefined) {
      const list = this.#byRequest.get(request);
      if (list) list.push(hold);
      else this.#byRequest.set(request, [hold]);
    }
    return hold;
  }

  /**
   * Lets go of every hold opened for `request`: a request that failed after its answer was made
   * (412 for an If-Match that names another version, a snapshot whose release failed) never
   * sends it, and what it reserved would be held for good — a guest repeating it would fill the
   * budget and every read would be 503.
   */
  releaseOpenedFor(request: object): void {
    for (const hold of this.#byRequest.get(request) ?? []) hold.release();
    this.#byRequest.delete(request);
  }

  /** (AnswerHold's) */
  enter(hold: AnswerHold): void {
    this.#held.add(hold);
    if (this.#watch === undefined && this.sendTimeoutMs > 0) {
      this.#watch = setInterval(() => this.#check(), Math.max(20, Math.min(1000, this.sendTimeoutMs / 4)));
      this.#watch.unref();
    }
  }

  /** (AnswerHold's) */
  leave(hold: AnswerHold): void {
    this.#held.delete(hold);
    if (this.#held.size === 0 && this.#watch !== undefined) {
      clearInterval(this.#watch);
      this.#watch = undefined;
    }
  }

  /** (AnswerHold's) refuses `bytes` more for `hold` when they do not fit beside what the others hold. */
  refuseUnlessRoom(hold: AnswerHold, bytes: number): void {
    if (this.limit === 0) return;
    const total = this.inFlight();
    const others = total - (this.#held.has(hold) ? hold.bytes() : 0);
    if (others > 0 && total + bytes > this.limit) throw busy(total, this.limit, bytes);
  }

  #check(): void {
    const now = performance.now();
    for (const hold of this.#held) {
      const stalled = hold.stalled(now, this.sendTimeoutMs);
      if (!stalled) continue;
      this.onTimeout?.(stalled);
      hold.cut();
    }
  }
}

function busy(held: number, limit: number, bytes: number): DatasetError {
  const more = bytes > 0 ? `; this one would add ${sizeText(bytes)}` : '';
  return new DatasetError('SERVER_BUSY', `the answers this server is sending hold ${sizeText(held)} of the ${sizeText(limit)} it keeps in flight at once (--max-answers-in-flight)${more}: try again in a moment, or ask for less ($top, $attributes)`, { retryAfterS: 1 });
}

/** One answer's share of the flight. */
export class AnswerHold {
  #reserved = 0;
  #made = 0;
  #in = false;
  #done = false;
  #socket: Socket | undefined;
  #response: ServerResponse | undefined;
  #stream: Readable | undefined;
  /** when the kernel last took bytes of the socket (or none waited), and how many it had taken then */
  #progressAt = 0;
  #taken = 0;

  constructor(readonly flight: AnswerFlight) {}

  /**
   * Reserves `bytes` measured (or counted) before the rows are read or made into text: SERVER_BUSY
   * when they do not fit. An answer enters the flight once it reserved WATCHED_ANSWER_BYTES: the
   * few KB of an ordinary page are neither checked nor followed.
   */
  reserve(bytes: number): void {
    if (this.#done || bytes <= 0) return;
    const adding = this.#in ? bytes : this.#reserved + bytes;
    if (this.#in || adding >= WATCHED_ANSWER_BYTES) this.flight.refuseUnlessRoom(this, adding);
    this.#reserved += bytes;
    if (this.#reserved >= WATCHED_ANSWER_BYTES) this.#enter();
  }

  /** Whether it is in the flight (it reserved enough, or it is being sent): its answer carries it, to be followed until sent. */
  get inFlight(): boolean {
    return this.#in && !this.#done;
  }

  /** `chars` more of the answer's text made (what was reserved turns into text). */
  made(chars: number): void {
    this.#made += chars;
  }

  /** The bytes this answer holds now. */
  bytes(): number {
    if (this.#done) return 0;
    let bytes = Math.max(0, this.#reserved - this.#made) + (this.#stream?.readableLength ?? 0);
    const socket = this.#socket;
    if (socket) bytes += untakenBytes(socket) + Math.max(0, (this.#response?.writableLength ?? 0) - socket.writableLength);
    return bytes;
  }

  /**
   * Follows the answer on its way out: `response` (its socket, once it has one) and the
   * stream its body is made by, if any. Let go on the response's finish (the kernel has every
   * byte) or close (the client went, or the send timeout cut it).
   */
  follow(response: ServerResponse, stream?: Readable): void {
    if (this.#done) return;
    // (the client went while the answer was made: nothing will be sent, its close is past)
    if (response.destroyed || response.closed || response.socket?.destroyed === true) {
      this.release();
      return;
    }
    this.#response = response;
    this.#stream = stream;
    const socket = response.socket;
    // (an injected request has no socket of the net module: nothing to watch)
    if (socket && typeof (socket as Partial<Socket>).destroy === 'function' && typeof socket.writableLength === 'number') this.#socket = socket;
    this.#progressAt = performance.now();
    this.#taken = this.#socket ? takenBytes(this.#socket) : 0;
    const done = () => this.release();
    const kept = this.#socket;
    response.once('finish', () => {
      done();
      if (kept) this.#idleAfterSent(kept);
    });
    response.once('close', done);
    this.#enter();
  }

  /**
   * Once the kernel has every byte, what it has not sent yet is no more the process's to see: an
   * answer of a few MB fits in its buffers (a loopback's hold 3 MB), and a client that reads
   * nothing keeps it there, its connection open for the whole keep-alive (Fastify's 72 s). So a
   * connection that carried a followed answer waits for the client's next request the send
   * timeout at most, not the keep-alive: Node's own idle timer (set just before, on the same
   * finish) is shortened, and a next request clears it as it would have. Closed so (a FIN behind
   * the unsent bytes), a client that read its answer has it all; one that reads nothing no longer
   * holds a connection of its address.
   */
  #idleAfterSent(socket: Socket): void {
    const timeoutMs = this.flight.sendTimeoutMs;
    const keepAliveMs = (socket as Socket & { server?: { keepAliveTimeout?: unknown } }).server?.keepAliveTimeout;
    if (timeoutMs <= 0 || socket.destroyed || typeof keepAliveMs !== 'number' || keepAliveMs <= timeoutMs) return;
    socket.setTimeout(timeoutMs);
  }

  /** Lets go of everything it holds (idempotent). */
  release(): void {
    if (this.#done) return;
    this.#done = true;
    this.#stream = undefined;
    this.#socket = undefined;
    this.#response = undefined;
    if (this.#in) this.flight.leave(this);
  }

  /**
   * Whether the answer's socket stalled: bytes wait, and the kernel took none of them for
   * `timeoutMs`. (The kernel takes bytes from the process in bursts, when a third or so of its own
   * send buffer — up to a few MB — has gone to the client: a client reading steadily faster than
   * that a timeout is never seen to stall.)
   */
  stalled(now: number, timeoutMs: number): { bytesWaiting: number; stalledMs: number } | undefined {
    const socket = this.#socket;
    if (!socket || this.#done) return undefined;
    const waiting = untakenBytes(socket);
    const taken = takenBytes(socket);
    if (waiting === 0 || taken !== this.#taken) {
      this.#taken = taken;
      this.#progressAt = now;
      return undefined;
    }
    const stalledMs = now - this.#progressAt;
    return stalledMs >= timeoutMs ? { bytesWaiting: waiting, stalledMs } : undefined;
  }

  /**
   * Closes the connection of an answer its client does not read: reset (RST), so that the kernel
   * drops what waits in its buffers too, rather than keep trying to send it before a FIN.
   */
  cut(): void {
    const socket = this.#socket;
    this.release();
    if (socket && typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
    else socket?.destroy();
  }

  #enter(): void {
    if (this.#in || this.#done) return;
    this.#in = true;
    this.flight.enter(this);
  }
}

type SocketInternals = Socket & { _handle?: { writeQueueSize?: unknown } | null; _writableState?: { writelen?: unknown } };

/**
 * The bytes written to a socket that the kernel has not taken yet. The stream's writableLength
 * counts the write libuv is busy with whole until the kernel took its last byte (a 30 MB answer
 * reads 30 MB until then); libuv's queue says what of that write is left.
 */
export function untakenBytes(socket: Socket): number {
  const length = socket.writableLength;
  const s = socket as SocketInternals;
  const queued = s._handle?.writeQueueSize;
  const writing = s._writableState?.writelen;
  if (typeof queued !== 'number' || typeof writing !== 'number') return length;
  return Math.max(0, Math.min(length, queued + length - writing));
}

/** The bytes of a socket the kernel has taken since it opened. */
function takenBytes(socket: Socket): number {
  return (socket.bytesWritten ?? 0) - untakenBytes(socket);
}
