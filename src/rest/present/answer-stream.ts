// An answer's text made a slice at a time (issue 34): a page of 10,000 entities, or one entity
// inlining thousands, was made into one string (29 MB, 1.5–2.4 s of the event loop) and held whole
// until its client read it. Here the text comes from pieces (an entity's text, or part of one:
// serialize.ts entityPieces), joined into slices of about ANSWER_SLICE_CHARS, each made in at
// most about ANSWER_SLICE_MS. An answer of one slice goes as one string, as before; a longer one
// is a stream whose next slice is made when the socket took the one before (backpressure), on a
// turn of its own of the event loop (setImmediate: other requests' I/O runs between two slices,
// and one slice is made a turn, whatever the number of answers being made: inTurn),
// and counted in the server's answers in flight (answer-flight.ts) until the kernel has it.
//
// The bytes are those of the one-string answer: the slices are that text cut in pieces.
// Everything that can fail is read before the first slice (rows, related entities, calculated
// values); a slice that still fails (a value that cannot be decoded) cuts the connection, as a
// failing export does, since its status and first bytes are sent.

import { Readable } from 'node:stream';
import { ANSWER_SLICE_CHARS, ANSWER_SLICE_MS } from '../../config/limits.js';
import type { AnswerHold } from '../scope/answer-flight.js';
import { fairTurn } from '../../util/loop-turns.js';

/** The text of an answer, a slice at a time. */
export class Slices {
  #pieces: Iterator<string, void> | undefined;

  constructor(pieces: Iterator<string, void>) {
    this.#pieces = pieces;
  }

  /** Whether every piece was given. */
  get done(): boolean {
    return this.#pieces === undefined;
  }

  /** The next slice: pieces joined up to ANSWER_SLICE_CHARS (or ANSWER_SLICE_MS of work); null once every piece was given. */
  next(): string | null {
    const pieces = this.#pieces;
    if (!pieces) return null;
    let text = '';
    const started = performance.now();
    for (let n = 1; ; n++) {
      const piece = pieces.next();
      if (piece.done) {
        this.#pieces = undefined;
        return text;
      }
      text += piece.value;
      // (the clock read every 32 pieces: a page's pieces are entities, a few µs each)
      if (text.length >= ANSWER_SLICE_CHARS || ((n & 31) === 0 && performance.now() - started >= ANSWER_SLICE_MS)) return text;
    }
  }

  /** Lets go of the pieces (and what they would be made from). */
  drop(): void {
    this.#pieces?.return?.();
    this.#pieces = undefined;
  }
}

/**
 * A body streamed from slices: the first, made already, then each next one on a turn of the event
 * loop of its own once the consumer asks for more. Made text is counted in `hold` (its reservation
 * turns into text); destroyed (the client went, the send timeout), it lets go of its slices.
 */
export class AnswerStream extends Readable {
  #first: string | undefined;
  #slices: Slices;
  #making = false;

  constructor(first: string, slices: Slices, readonly hold?: AnswerHold) {
    super();
    this.#first = first;
    this.#slices = slices;
  }

  override _read(): void {
    const first = this.#first;
    if (first !== undefined) {
      this.#first = undefined;
      this.push(first);
      return;
    }
    if (this.#making) return;
    this.#making = true;
    inTurn(() => {
      this.#making = false;
      if (this.destroyed) return;
      let slice: string | null;
      try {
        slice = this.#slices.next();
      } catch (e) {
        this.destroy(e instanceof Error ? e : new Error(String(e)));
        return;
      }
      if (slice === null || slice === '') {
        this.push(null);
        return;
      }
      this.hold?.made(slice.length);
      this.push(slice);
    });
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // (its hold goes with the response: the kernel may not have taken the last slices yet)
    this.#slices.drop();
    callback(error);
  }
}

/**
 * Makes a slice on a fair turn of the event loop (util/loop-turns.ts): one slice a turn whatever
 * the number of answers being sent (in the order they were asked for) — 45 answers each making
 * its slice in the same turn would hold the loop 45 slices long, and every other request would
 * wait that long at each of its steps.
 */
function inTurn(make: () => void): void {
  void fairTurn().then(make);
}

/**
 * Pieces of a collection: `head`, each item's text (or pieces) separated by commas, `tail`. Each
 * item is let go of once written (`items` is the caller's to give up): the rows or entities of a
 * page are held no longer than their text waits to be made.
 */
export function* listPieces<T>(head: string, items: (T | undefined)[], piecesOf: (item: T) => Iterable<string> | string, tail: string): Generator<string, void, undefined> {
  yield head;
  for (let i = 0; i < items.length; i++) {
    const pieces = piecesOf(items[i] as T);
    items[i] = undefined;
    if (typeof pieces === 'string') yield i > 0 ? `,${pieces}` : pieces;
    else {
      if (i > 0) yield ',';
      yield* pieces;
    }
  }
  yield tail;
}
