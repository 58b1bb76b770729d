// Whole answers kept while the global stamp stands still (issue 39): a read asked again by a
// caller who sees the same things, while nothing was written, is answered from memory — its
// text, its status and its tag, so its headers are a fresh answer's, and a 304 for a tag still
// current costs no statement. Bounded in bytes (ANSWER_CACHE_BYTES, the least recently used go
// first); every answer goes as soon as the stamp moves (stamp-watch.ts says when). What is kept,
// and under which key, is decided by rest/run/kept-answers.ts.

import { ANSWER_CACHE_BYTES, ANSWER_CACHE_ENTRY_BYTES } from '../../../config/limits.js';

/** What says whether the stamp moved (stamp-watch.ts's StampWatch). */
export interface StampWitness {
  /** a number that changes whenever the stamp moved, as far as this process knows */
  readonly generation: number;
  /** whether the generation can be trusted now */
  trusted(): boolean;
}

/** A kept answer: what send() needs to answer it as it was answered. */
export interface KeptAnswer {
  readonly status: number;
  readonly text: string;
  readonly etag?: string;
  /** the kind of action it answered (the metrics count a request by it) */
  readonly action: string;
  readonly bytes: number;
}

/** What an entry costs besides its text and key (the Map's slot, the object). */
const ENTRY_OVERHEAD = 160;

export class AnswerCache {
  readonly #entries = new Map<string, KeptAnswer>();
  readonly #watch: StampWitness;
  readonly #maxBytes: number;
  readonly #maxEntryBytes: number;
  #bytes = 0;
  /** the generation the entries were read at (all of them: a move of the stamp drops every one) */
  #generation = -1;

  constructor(watch: StampWitness, maxBytes = ANSWER_CACHE_BYTES, maxEntryBytes = Math.min(ANSWER_CACHE_ENTRY_BYTES, maxBytes)) {
    this.#watch = watch;
    this.#maxBytes = maxBytes;
    this.#maxEntryBytes = maxEntryBytes;
  }

  /** The bytes kept now (texts as UTF-16, keys included), and how many answers. */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * The generation an answer read from now on would be kept at (taken before its read begins):
   * none (-1) while the watch is not trusted — an answer whose read began then is not kept.
   */
  get generation(): number {
    return this.#watch.trusted() ? this.#watch.generation : -1;
  }

  /** The answer kept under `key`, while the stamp has not moved since it was read. */
  get(key: string): KeptAnswer | undefined {
    if (!this.#current()) return undefined;
    const kept = this.#entries.get(key);
    if (kept === undefined) return undefined;
    // (the most recently used last: eviction takes the first)
    this.#entries.delete(key);
    this.#entries.set(key, kept);
    return kept;
  }

  /**
   * Keeps an answer read at `generation` (the cache's generation before the read began): not
   * when the stamp moved since, or may have (a write committed while it was read), nor when it
   * is larger than one entry may be.
   */
  set(key: string, generation: number, answer: Omit<KeptAnswer, 'bytes'>): void {
    if (generation < 0 || !this.#current() || generation !== this.#generation) return;
    const bytes = (answer.text.length + key.length + (answer.etag?.length ?? 0)) * 2 + ENTRY_OVERHEAD;
    if (bytes > this.#maxEntryBytes) return;
    this.#drop(key);
    this.#entries.set(key, { status: answer.status, text: answer.text, etag: answer.etag, action: answer.action, bytes });
    this.#bytes += bytes;
    for (const [oldest] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#drop(oldest);
    }
  }

  /** Whether the entries may be served: the watch is trusted, and what they were read at is the generation now (else they go). */
  #current(): boolean {
    if (!this.#watch.trusted()) return false;
    const generation = this.#watch.generation;
    if (generation !== this.#generation) {
      this.#entries.clear();
      this.#bytes = 0;
      this.#generation = generation;
    }
    return true;
  }

  #drop(key: string): void {
    const kept = this.#entries.get(key);
    if (kept === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= kept.bytes;
  }
}
