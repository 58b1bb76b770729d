// The counts of selections, kept with the data version they were read at (Dialect.concurrency.dataVersion),
// so that a page whose statement sees that same version takes its __COUNT from here instead of
// counting again: on a large table the count costs more than the page (a COUNT over ten million
// rows is a scan), and it changes only when the data does. Per process; the version makes it right
// whatever another process or instance commits meanwhile.

import { COUNT_CACHE_ENTRIES, COUNT_CACHE_KEY_LENGTH } from '../../config/limits.js';

interface Entry {
  readonly version: string;
  readonly count: number;
}

export class CountCache {
  /** by key, least recently used first */
  readonly #entries = new Map<string, Entry>();
  /** the data version the latest statement saw: a count read at another is likely stale */
  #latest: string | undefined;

  constructor(readonly capacity = COUNT_CACHE_ENTRIES) {}

  /** The key of a count statement and its parameters, or undefined when it is not kept (too long, or parameters JSON cannot write). */
  keyOf(sql: string, params: readonly unknown[]): string | undefined {
    if (sql.length > COUNT_CACHE_KEY_LENGTH) return undefined;
    let key: string;
    try {
      key = `${sql}\u0000${JSON.stringify(params)}`;
    } catch {
      return undefined;
    }
    return key.length > COUNT_CACHE_KEY_LENGTH ? undefined : key;
  }

  /** The count kept under `key` if it was read at the latest version seen: worth reading a page without its count. */
  likely(key: string): Entry | undefined {
    const e = this.#entries.get(key);
    return e !== undefined && e.version === this.#latest ? e : undefined;
  }

  /** A statement saw `version`. */
  seen(version: string): void {
    this.#latest = version;
  }

  set(key: string, version: string, count: number): void {
    this.#latest = version;
    this.#entries.delete(key);
    this.#entries.set(key, { version, count });
    if (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value as string);
  }

  get size(): number {
    return this.#entries.size;
  }
}
