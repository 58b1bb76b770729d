// The queue of image conversions ($imageformat, rest/run/handlers/files.ts). A conversion decodes the
// whole image (up to MAX_CONVERTED_PIXELS: a 25-megapixel image takes about 100 MB while decoded),
// so one runs at a time; at most `queued` wait behind it, and one client (a user, whatever its
// sessions, or a guest's address) has at most `perClient` running or waiting. Past its share a client
// is refused (429), past the queue everyone is (503), both with Retry-After: another client's
// conversion then waits for at most `queued` others, of which at most `perClient` are any one
// client's. The queue is the server process's own, as its memory and its CPU are.

import { DatasetError } from '../../errors/dataset-error.js';

export interface ConversionLimits {
  /** conversions that may wait behind the one running, everyone's together (--max-queued-conversions) */
  readonly queued: number;
  /** conversions one client may have running or waiting at once (--max-conversions-per-client) */
  readonly perClient: number;
}

/** What a conversion is first taken to last, before one has been timed (a 25-megapixel PNG to JPEG, measured on a laptop). */
const FIRST_GUESS_MS = 300;

export class ConversionQueue {
  readonly #limits: ConversionLimits;
  #running = false;
  readonly #waiting: (() => void)[] = [];
  /** each client's conversions running or waiting */
  readonly #held = new Map<string, number>();
  /** how long conversions took lately (a moving average): what Retry-After is estimated from */
  #meanMs = FIRST_GUESS_MS;

  constructor(limits: ConversionLimits) {
    this.#limits = limits;
  }

  /** Conversions running or waiting now (the metrics and the tests read it). */
  get size(): number {
    return this.#waiting.length + (this.#running ? 1 : 0);
  }

  /** Runs `work` once the conversions before it are done; refused at once past the client's share or the queue's bound. */
  async run<T>(client: string, work: () => Promise<T>): Promise<T> {
    const held = this.#held.get(client) ?? 0;
    if (held >= this.#limits.perClient) {
      throw new DatasetError('TOO_MANY_REQUESTS', `this client has ${held} image conversion${held === 1 ? '' : 's'} ($imageformat) running or waiting, the most one client may (--max-conversions-per-client ${this.#limits.perClient}): ask again once one is answered, or read the image as stored`, [], { retryAfterS: this.#wait(held) });
    }
    if (this.#running && this.#waiting.length >= this.#limits.queued) {
      throw new DatasetError('CONVERSIONS_BUSY', `${this.#waiting.length + 1} image conversions ($imageformat) are running or waiting, the most this server queues (--max-queued-conversions ${this.#limits.queued}): ask again after Retry-After, or read the image as stored`, [], { retryAfterS: this.#wait(this.#waiting.length + 1) });
    }
    this.#held.set(client, held + 1);
    try {
      if (this.#running) await new Promise<void>((resolve) => this.#waiting.push(resolve));
      else this.#running = true;
      const started = performance.now();
      try {
        return await work();
      } finally {
        this.#meanMs = 0.8 * this.#meanMs + 0.2 * (performance.now() - started);
        // the next conversion starts (the queue stays running), or none waits
        const next = this.#waiting.shift();
        if (next) next();
        else this.#running = false;
      }
    } finally {
      const left = (this.#held.get(client) ?? 1) - 1;
      if (left > 0) this.#held.set(client, left);
      else this.#held.delete(client);
    }
  }

  /** Seconds until `ahead` conversions are done, as they went lately (at least one). */
  #wait(ahead: number): number {
    return Math.max(1, Math.ceil((ahead * this.#meanMs) / 1000));
  }
}
