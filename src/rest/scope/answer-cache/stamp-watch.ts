// What a cache of whole answers asks before it serves one: has the global stamp moved since the
// answer was read? Known without a statement: this process's own writes are counted as they move
// the stamp and as they commit (global-stamp.ts watchStampMoves); another instance's are found by
// reading the stamp every quarter of ANSWER_CACHE_STALENESS_MS while answers are asked for, and an
// answer is served only within ANSWER_CACHE_STALENESS_MS of the start of a read that found no
// change (or that found it and dropped the answers read before). So a kept answer never shows a
// state older than a commit of this process that returned, nor than another instance's commit of
// more than ANSWER_CACHE_STALENESS_MS ago (docs/decisions.md "Whole answers kept").

import { ANSWER_CACHE_STALENESS_MS } from '../../../config/limits.js';
import type { Storage } from '../../../storage/adapter.js';
import { readStampWatch, type StampMoves, watchStampMoves } from '../../../storage/system-tables/global-stamp.js';

/** Asked for nothing this long, the watch stops reading the stamp (a closed datastore's stops so); the next ask starts it again, untrusted until its first read. */
const IDLE_MS = 2000;

export class StampWatch {
  readonly #storage: Storage;
  readonly #moves: StampMoves;
  readonly #stalenessMs: number;
  /** the changes its reads of the stamp found (another instance's writes, or this process's seen again) */
  #found = 0;
  /** what the last read found (global-stamp.ts readStampWatch: the stamp, on PostgreSQL with the transactions under way) */
  #stamp: string | undefined;
  /** until when (performance.now()) nothing unseen can be older than the staleness bound */
  #trustedUntil = 0;
  /** the reads go on (while answers are asked for) */
  #running = false;
  #reading: Promise<void> | undefined;
  #askedAt = 0;
  /** the stamp reads made (tests tell them from a request's statements) */
  reads = 0;

  constructor(storage: Storage, stalenessMs = ANSWER_CACHE_STALENESS_MS) {
    this.#storage = storage;
    this.#moves = watchStampMoves(storage);
    this.#stalenessMs = stalenessMs;
  }

  /** A number that changes whenever the stamp moved, as far as this process knows. */
  get generation(): number {
    return this.#moves.count + this.#found;
  }

  /** Whether the generation can be trusted now (the stamp read recently enough); starts the reads when they stopped. */
  trusted(): boolean {
    const now = performance.now();
    this.#askedAt = now;
    if (!this.#running) this.#start();
    return now < this.#trustedUntil;
  }

  /** Reads the stamp now, or waits for the read under way (tests: what the next tick would find). */
  async check(): Promise<void> {
    this.#askedAt = performance.now();
    await (this.#reading ?? this.#read());
  }

  /**
   * Reads the stamp again and again while answers are asked for: a read begins a quarter of the
   * bound after the last began, or when it ends if it took longer (a busy pool, a loaded machine),
   * so that the trust lapses only when one read takes most of the bound.
   */
  #start(): void {
    this.#running = true;
    void (async () => {
      while (performance.now() - this.#askedAt <= IDLE_MS) {
        const began = performance.now();
        await this.#read();
        const wait = began + this.#stalenessMs / 4 - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait).unref());
      }
      this.#running = false;
      this.#trustedUntil = 0;
    })();
  }

  #read(): Promise<void> {
    if (this.#reading) return this.#reading;
    const began = performance.now();
    this.reads++;
    this.#reading = readStampWatch(this.#storage).then((stamp) => {
      // (the first read sets the stamp it compares with: nothing was kept before it, since an
      // answer is kept only when its read began while the watch was trusted)
      if (this.#stamp !== undefined && stamp !== this.#stamp) this.#found++;
      this.#stamp = stamp;
      this.#trustedUntil = began + this.#stalenessMs;
    }, () => {
      // (the database unreachable, or closed: nothing kept is served until a read succeeds)
      this.#trustedUntil = 0;
      this.#found++;
    }).finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }
}

const watches = new WeakMap<Storage, StampWatch>();

/** The watch of a storage's stamp, one per storage (every cache of answers over it shares it). */
export function stampWatchOf(storage: Storage): StampWatch {
  let w = watches.get(storage);
  if (!w) watches.set(storage, (w = new StampWatch(storage)));
  return w;
}
