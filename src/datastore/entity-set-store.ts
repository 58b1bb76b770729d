// Where entity sets are kept: selections stored under an id (REST's $method=entityset), as
// compact key lists — a Float64Array for integer keys (8 bytes a member), an array of strings
// otherwise. Every set lives behind EntitySetStore: in the database by default (shared by every
// server instance, database-set-store.ts), or in this process (MemoryEntitySetStore, below, for
// embedders and tests); what is done with sets is in entity-sets.ts.

import { DEFAULT_MAX_SET_MEMBERS, SET_SWEEP_MS } from '../config/limits.js';
import { DatasetError } from '../errors/dataset-error.js';

export type KeyList = Float64Array | readonly string[];

export interface StoredSet {
  /** 32 uppercase hexadecimal digits */
  readonly id: string;
  readonly dataClass: string;
  readonly keys: KeyList;
  /** built with an order ($orderby), as $info reports */
  readonly sorted: boolean;
  /** inactivity lifetime, in ms: every use starts it again */
  readonly timeoutMs: number;
  /** the last use (creation included), ms since the epoch */
  refreshed: number;
  /** the id of the session that made it (counted for the sets-per-session quota) */
  readonly owner?: string;
}

/** What is known of a set without its members (for $info). */
export interface SetInfo {
  readonly id: string;
  readonly dataClass: string;
  readonly sorted: boolean;
  readonly timeoutMs: number;
  readonly refreshed: number;
  /** its members */
  readonly size: number;
}

/** Some members of a set: those at [from, from + keys.length). */
export interface SetSlice {
  readonly set: SetInfo;
  readonly from: number;
  readonly keys: KeyList;
}

export interface EntitySetStore {
  /** Keeps a set (its lifetime starts now, by the store's clock). */
  put(set: StoredSet): Promise<void>;
  /** The set, its lifetime started again; undefined when unknown, released, expired or evicted. */
  get(id: string): Promise<StoredSet | undefined>;
  /** Its members at [from, to), as get() finds the set (a page of a set larger than a store keeps at hand reads only those); `from` is kept within the set. */
  slice(id: string, from: number, to: number): Promise<SetSlice | undefined>;
  /** true when the set existed */
  release(id: string): Promise<boolean>;
  /** The sets alive now (for $info), without their members: those `owner` made, when given. */
  list(owner?: string): Promise<SetInfo[]>;
  /** How many sets alive now a session made. */
  owned(owner: string): Promise<number>;
  /** Stops what the store runs in the background (the datastore closes it with itself). */
  close?(): void;
}

export interface MemoryStoreOptions {
  readonly maxMembers?: number;
  /** ms since the epoch; tests inject their own clock */
  readonly now?: () => number;
  /** how often expired sets are swept in the background, in ms (0: only when the store is used) */
  readonly sweepEveryMs?: number;
}

function infoOf({ keys, owner: _owner, ...rest }: StoredSet): SetInfo {
  return { ...rest, size: keys.length };
}

/** The sets of one server process, least recently used first (a Map keeps insertion order). */
export class MemoryEntitySetStore implements EntitySetStore {
  readonly #sets = new Map<string, StoredSet>();
  readonly #maxMembers: number;
  readonly #now: () => number;
  readonly #sweeper: NodeJS.Timeout | undefined;
  #members = 0;

  constructor(options: MemoryStoreOptions = {}) {
    this.#maxMembers = options.maxMembers ?? DEFAULT_MAX_SET_MEMBERS;
    this.#now = options.now ?? Date.now;
    const every = options.sweepEveryMs ?? SET_SWEEP_MS;
    // the memory of expired sets comes back even when no request comes (the timer never keeps the process alive)
    if (every > 0) this.#sweeper = setInterval(() => this.#sweep(), every).unref();
  }

  close(): void {
    clearInterval(this.#sweeper);
  }

  async owned(owner: string): Promise<number> {
    const now = Date.now();
    return [...this.#sets.values()].filter((set) => set.owner === owner && set.refreshed + set.timeoutMs > now).length;
  }

  async put(set: StoredSet): Promise<void> {
    if (set.keys.length > this.#maxMembers) {
      throw new DatasetError('LIMIT_EXCEEDED', `an entity set of ${set.keys.length} members is more than the ${this.#maxMembers} this server keeps (--max-set-members)`);
    }
    this.#sweep();
    set.refreshed = this.#now(); // the store's clock decides every lifetime
    this.#delete(set.id);
    this.#sets.set(set.id, set);
    this.#members += set.keys.length;
    // bounded: the least recently used sets are dropped until the members fit (never the new one)
    for (const [id] of this.#sets) {
      if (this.#members <= this.#maxMembers || id === set.id) break;
      this.#delete(id);
    }
  }

  async get(id: string): Promise<StoredSet | undefined> {
    this.#sweep();
    const set = this.#sets.get(id);
    if (!set) return undefined;
    set.refreshed = this.#now();
    // most recently used last
    this.#sets.delete(id);
    this.#sets.set(id, set);
    return set;
  }

  async slice(id: string, from: number, to: number): Promise<SetSlice | undefined> {
    const set = await this.get(id);
    if (!set) return undefined;
    const start = Math.min(Math.max(0, from), set.keys.length);
    return { set: infoOf(set), from: start, keys: set.keys.slice(start, Math.max(start, to)) };
  }

  async release(id: string): Promise<boolean> {
    this.#sweep();
    return this.#delete(id);
  }

  async list(owner?: string): Promise<SetInfo[]> {
    this.#sweep();
    return [...this.#sets.values()].filter((set) => owner === undefined || set.owner === owner).map(infoOf);
  }

  /** Expired sets go at each use of the store, and in the background. */
  #sweep(): void {
    const now = this.#now();
    for (const [id, set] of this.#sets) if (set.refreshed + set.timeoutMs <= now) this.#delete(id);
  }

  #delete(id: string): boolean {
    const set = this.#sets.get(id);
    if (!set) return false;
    this.#sets.delete(id);
    this.#members -= set.keys.length;
    return true;
  }
}
