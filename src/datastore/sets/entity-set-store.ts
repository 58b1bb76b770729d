// Where entity sets are kept: selections stored under an id (REST's $method=entityset), as
// compact key lists (packed-keys.ts: 4 bytes an integer key, 16 a uuid, UTF-8 for other text).
// A set belongs to the session that made it: asked for by another session, it is as if it did not
// exist. Every set lives behind EntitySetStore: in the database by default (shared by every
// server instance, database-set-store.ts), or in this process (MemoryEntitySetStore, below, for
// embedders and tests); what is done with sets is in entity-sets.ts.

import { DEFAULT_MAX_SET_MEMORY, SET_RECORD_BYTES, SET_SWEEP_MS } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { ExpiryQueue } from '../../util/expiry-queue.js';
import { pack, packedBytes, packedLength, unpack, type KeyList, type PackedKeys } from './packed-keys.js';

// (the members of a set in memory: defined with their packed form, which packs and unpacks them)
export type { KeyList };

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

/**
 * Who asks for a set: the id of a session, which sees only the sets it made (and those nobody
 * made: an embedder's); undefined sees every set (an administrator, a project without roles).
 */
export type SetReader = string | undefined;

export interface EntitySetStore {
  /** Keeps a set (its lifetime starts now, by the store's clock); false, keeping nothing, when its id is another owner's live set. */
  put(set: StoredSet): Promise<boolean>;
  /** The set, its lifetime started again; undefined when unknown, released, expired, evicted, or another owner's than `reader`'s. */
  get(id: string, reader?: SetReader): Promise<StoredSet | undefined>;
  /** Its members at [from, to), as get() finds the set (a page of a set larger than a store keeps at hand reads only those); `from` is kept within the set. */
  slice(id: string, from: number, to: number, reader?: SetReader): Promise<SetSlice | undefined>;
  /** true when the set existed (and was `reader`'s to release) */
  release(id: string, reader?: SetReader): Promise<boolean>;
  /** The sets alive now (for $info), without their members: those `owner` made, when given. */
  list(owner?: string): Promise<SetInfo[]>;
  /** How many sets alive now a session made. */
  owned(owner: string): Promise<number>;
  /** Releases every set a session made (its session was evicted); resolves to how many went. */
  releaseOwned(owner: string): Promise<number>;
  /** Stops what the store runs in the background (the datastore closes it with itself). */
  close?(): void;
}

export interface MemoryStoreOptions {
  /** bytes kept at most, members and records (--max-set-memory): past it the least recently used sets of the session holding the most go */
  readonly maxBytes?: number;
  /** ms since the epoch; tests inject their own clock */
  readonly now?: () => number;
  /** how often expired sets are swept in the background, in ms (0: only when the store is used) */
  readonly sweepEveryMs?: number;
}

/** A set as this store keeps it: its members packed. */
interface Kept {
  readonly id: string;
  readonly dataClass: string;
  readonly sorted: boolean;
  readonly timeoutMs: number;
  refreshed: number;
  readonly owner?: string;
  readonly packed: PackedKeys;
  readonly bytes: number;
}

function infoOf(k: Kept): SetInfo {
  return { id: k.id, dataClass: k.dataClass, sorted: k.sorted, timeoutMs: k.timeoutMs, refreshed: k.refreshed, size: packedLength(k.packed) };
}

/** `reader` may see the set: its own, one nobody made, or any when it sees every set. */
export function readable(owner: string | undefined, reader: SetReader): boolean {
  return reader === undefined || owner === undefined || owner === reader;
}

/** The memory of what a set costs: its packed members and its record. */
function bytesOf(packed: PackedKeys): number {
  return packedBytes(packed) + SET_RECORD_BYTES;
}

/** The key of a set's owner among the holders (sets made by no session are held together). */
function holderOf(owner: string | undefined): string {
  return owner ?? '';
}

/**
 * The sets of one server process. Every operation costs O(1) or O(log n) in the sets kept, but
 * for an eviction, which looks through the holders (O(sessions holding sets)): a Map in use order
 * (least recently used first), an expiry queue for lifetimes, and each owner's sets apart, in use
 * order too, with their bytes — for its quota, its $info and its share. Past the bound, the
 * sets that go are those of the session holding the most (each session a fair share: whoever
 * fills the memory gives up its own sets first), its least recently used first.
 */
export class MemoryEntitySetStore implements EntitySetStore {
  readonly #sets = new Map<string, Kept>();
  readonly #expiry = new ExpiryQueue();
  /** each holder's sets, least recently used first, and the bytes they hold */
  readonly #byOwner = new Map<string, { readonly ids: Set<string>; bytes: number }>();
  readonly #maxBytes: number;
  readonly #now: () => number;
  readonly #sweeper: NodeJS.Timeout | undefined;
  #bytes = 0;

  constructor(options: MemoryStoreOptions = {}) {
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_SET_MEMORY;
    this.#now = options.now ?? Date.now;
    const every = options.sweepEveryMs ?? SET_SWEEP_MS;
    // the memory of expired sets comes back even when no request comes (the timer never keeps the process alive)
    if (every > 0) this.#sweeper = setInterval(() => this.#sweep(), every).unref();
  }

  /** Bytes held now: members and records of every set. */
  get bytes(): number {
    return this.#bytes;
  }

  close(): void {
    clearInterval(this.#sweeper);
  }

  async owned(owner: string): Promise<number> {
    this.#sweep();
    return this.#byOwner.get(owner)?.ids.size ?? 0;
  }

  async put(set: StoredSet): Promise<boolean> {
    this.#sweep();
    const held = this.#sets.get(set.id);
    if (held && !readable(held.owner, set.owner)) return false;
    const packed = pack(set.keys);
    const bytes = bytesOf(packed);
    if (bytes > this.#maxBytes) {
      throw new DatasetError('LIMIT_EXCEEDED', `an entity set of ${set.keys.length} members takes ${bytes} bytes, more than the ${this.#maxBytes} this server keeps for all sets (--max-set-memory)`);
    }
    set.refreshed = this.#now(); // the store's clock decides every lifetime
    this.#delete(set.id);
    const kept: Kept = { id: set.id, dataClass: set.dataClass, sorted: set.sorted, timeoutMs: set.timeoutMs, refreshed: set.refreshed, packed, bytes, ...(set.owner === undefined ? {} : { owner: set.owner }) };
    this.#sets.set(set.id, kept);
    this.#expiry.set(set.id, kept.refreshed + kept.timeoutMs);
    const holder = holderOf(kept.owner);
    let mine = this.#byOwner.get(holder);
    if (!mine) this.#byOwner.set(holder, (mine = { ids: new Set(), bytes: 0 }));
    mine.ids.add(set.id);
    mine.bytes += bytes;
    this.#bytes += bytes;
    // bounded: sets are dropped until the bytes fit (never the new one), each time the least
    // recently used of the holder holding the most
    while (this.#bytes > this.#maxBytes) {
      const victim = this.#largestHolder(set.id);
      if (victim === undefined) break;
      for (const id of victim.ids) {
        if (id === set.id) continue;
        this.#delete(id);
        break;
      }
    }
    return true;
  }

  /** The holder holding the most bytes among those with a set other than `keep`. */
  #largestHolder(keep: string): { readonly ids: Set<string>; bytes: number } | undefined {
    let largest: { readonly ids: Set<string>; bytes: number } | undefined;
    for (const holder of this.#byOwner.values()) {
      if (holder.ids.size === 1 && holder.ids.has(keep)) continue;
      if (largest === undefined || holder.bytes > largest.bytes) largest = holder;
    }
    return largest;
  }

  async get(id: string, reader?: SetReader): Promise<StoredSet | undefined> {
    const kept = this.#use(id, reader);
    if (!kept) return undefined;
    return { id, dataClass: kept.dataClass, sorted: kept.sorted, timeoutMs: kept.timeoutMs, refreshed: kept.refreshed, keys: unpack(kept.packed), ...(kept.owner === undefined ? {} : { owner: kept.owner }) };
  }

  async slice(id: string, from: number, to: number, reader?: SetReader): Promise<SetSlice | undefined> {
    const kept = this.#use(id, reader);
    if (!kept) return undefined;
    const start = Math.min(Math.max(0, from), packedLength(kept.packed));
    return { set: infoOf(kept), from: start, keys: unpack(kept.packed, start, Math.max(start, to)) };
  }

  async release(id: string, reader?: SetReader): Promise<boolean> {
    this.#sweep();
    const kept = this.#sets.get(id);
    if (!kept || !readable(kept.owner, reader)) return false;
    return this.#delete(id);
  }

  async releaseOwned(owner: string): Promise<number> {
    const mine = [...(this.#byOwner.get(owner)?.ids ?? [])];
    for (const id of mine) this.#delete(id);
    return mine.length;
  }

  async list(owner?: string): Promise<SetInfo[]> {
    this.#sweep();
    if (owner === undefined) return [...this.#sets.values()].map(infoOf);
    return [...(this.#byOwner.get(owner)?.ids ?? [])].map((id) => infoOf(this.#sets.get(id) as Kept));
  }

  /** The set if `reader` may see it, used now: its lifetime starts again, and it is the most recently used. */
  #use(id: string, reader: SetReader): Kept | undefined {
    this.#sweep();
    const kept = this.#sets.get(id);
    if (!kept || !readable(kept.owner, reader)) return undefined;
    kept.refreshed = this.#now();
    this.#expiry.set(id, kept.refreshed + kept.timeoutMs);
    this.#sets.delete(id);
    this.#sets.set(id, kept);
    const mine = this.#byOwner.get(holderOf(kept.owner))?.ids;
    mine?.delete(id);
    mine?.add(id);
    return kept;
  }

  /** Expired sets go at each use of the store (those expired only: the queue gives them first), and in the background. */
  #sweep(): void {
    for (const id of this.#expiry.expired(this.#now())) this.#delete(id);
  }

  #delete(id: string): boolean {
    const kept = this.#sets.get(id);
    if (!kept) return false;
    this.#sets.delete(id);
    this.#expiry.delete(id);
    const holder = holderOf(kept.owner);
    const mine = this.#byOwner.get(holder);
    if (mine) {
      mine.ids.delete(id);
      mine.bytes -= kept.bytes;
      if (mine.ids.size === 0) this.#byOwner.delete(holder);
    }
    this.#bytes -= kept.bytes;
    return true;
  }
}
