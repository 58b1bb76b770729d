// Entity sets kept in the database (__dataset_entity_sets and its member chunks), so that every
// server instance over one database sees the same sets, and a restarted instance loses none.
// Members are stored compactly: integer keys as 8-byte floats, CHUNK_MEMBERS to a row; text keys
// as a JSON array a chunk. Members never change once kept: a set rebuilt under its id (a saved
// filter run again) is kept with a new version. So each instance keeps the members it read in a
// bounded cache, by id and version; the row (its version, lifetime, existence) is asked every
// time, so a release or a rebuild on another instance counts at once. Every operation reads the
// rows it needs by index (the set's id, the expired ones, the oldest few), never every set: the
// totals the bound is checked against are kept in a row of their own (SET_TOTALS_TABLE), and what
// each session's sets hold in a row of its own (SET_OWNER_TABLE): past the bound, the sets that
// go are those of the session holding the most, its least recently used first — each session a
// fair share, whoever fills the store gives up its own sets first.

import { randomUUID } from 'node:crypto';
import { DEFAULT_MAX_SET_MEMBERS, DEFAULT_MAX_SET_MEMORY, SET_CACHE_MEMBERS, SET_CHUNK_MEMBERS, SET_CHUNKS_KEPT, SET_REFRESH_MS, SET_ROW_MEMBERS } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { Storage } from '../../storage/adapter.js';
import { lockNamed } from '../../storage/system-tables/meta.js';
import { SET_CHUNK_TABLE, SET_OWNER_TABLE, SET_TABLE, SET_TOTALS_TABLE } from '../../storage/system-tables/tables.js';
import type { EntitySetStore, KeyList, SetInfo, SetReader, SetSlice, StoredSet } from './entity-set-store.js';
import { readable } from './entity-set-store.js';
import { pack, packedBytes, unpack, type PackedKeys } from './packed-keys.js';

export interface DatabaseSetStoreOptions {
  /** members kept at most, all sets of all instances together (each set's row counting SET_ROW_MEMBERS more): past it the least recently used sets of the session holding the most go */
  readonly maxMembers?: number;
  /** bytes of members read that this process keeps at hand, packed (--max-set-memory) */
  readonly maxBytes?: number;
  /** ms since the epoch; tests inject their own clock */
  readonly now?: () => number;
  /** a set of more members than this (SET_CACHE_MEMBERS) is not kept whole in this process: its pages are read a chunk at a time */
  readonly cacheMembers?: number;
}

interface SetRow {
  id: string;
  dataClass: string;
  sorted: unknown;
  timeoutMs: unknown;
  refreshed: unknown;
  size: unknown;
  text: unknown;
  version: unknown;
  owner: unknown;
}

function info(r: SetRow): SetInfo {
  return { id: r.id, dataClass: r.dataClass, sorted: Number(r.sorted) === 1, timeoutMs: Number(r.timeoutMs), refreshed: Number(r.refreshed), size: Number(r.size) };
}

function encodeChunk(keys: KeyList, from: number, to: number): Buffer {
  if (keys instanceof Float64Array) {
    const part = keys.slice(from, to);
    return Buffer.from(part.buffer, part.byteOffset, part.byteLength);
  }
  return Buffer.from(JSON.stringify(keys.slice(from, to)), 'utf8');
}

function decodeChunks(chunks: readonly unknown[], text: boolean, size: number): KeyList {
  if (text) return chunks.flatMap((c) => JSON.parse(Buffer.from(c as Uint8Array).toString('utf8')) as string[]);
  const keys = new Float64Array(size);
  let at = 0;
  for (const c of chunks) {
    const bytes = c as Uint8Array;
    // copied: a chunk's bytes need not be aligned for a Float64Array view
    const part = new Float64Array(Uint8Array.from(bytes).buffer);
    keys.set(part, at);
    at += part.length;
  }
  return keys;
}

function sqlParts(storage: Storage) {
  const { quote: q, placeholder: p } = storage.dialect.sql;
  const columns = `${q('id')} AS id, ${q('dataClass')} AS "dataClass", ${q('sorted')} AS sorted, ${q('timeout')} AS "timeoutMs", ${q('refreshed')} AS refreshed, ${q('size')} AS size, ${q('text')} AS text, COALESCE(${q('version')}, ${q('id')} || ':' || ${q('refreshed')}) AS version, ${q('owner')} AS owner`;
  return { q, p, sets: q(SET_TABLE), chunks: q(SET_CHUNK_TABLE), totals: q(SET_TOTALS_TABLE), owners: q(SET_OWNER_TABLE), columns, alive: `${q('refreshed')} + ${q('timeout')} > ${p(1)}` };
}

export class DatabaseEntitySetStore implements EntitySetStore {
  readonly #maxMembers: number;
  readonly #now: () => number;
  readonly #cacheMembers: number;
  readonly #maxBytes: number;
  /** members already read (packed), by set id (with the version they are of), least recently used first */
  readonly #cache = new Map<string, { version: string; packed: PackedKeys }>();
  /** chunks of sets too large to keep whole (packed), by set, version and chunk, least recently used first */
  readonly #chunks = new Map<string, PackedKeys>();
  /** bytes of the members cached, sets and chunks */
  #cached = 0;

  constructor(private readonly storage: Storage, options: DatabaseSetStoreOptions = {}) {
    this.#maxMembers = options.maxMembers ?? DEFAULT_MAX_SET_MEMBERS;
    this.#now = options.now ?? Date.now;
    this.#cacheMembers = options.cacheMembers ?? SET_CACHE_MEMBERS;
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_SET_MEMORY;
    this.#sql = sqlParts(storage);
  }

  /** the statements' names and pieces, built once: every request that uses a set comes through here */
  readonly #sql: ReturnType<typeof sqlParts>;

  async put(set: StoredSet): Promise<boolean> {
    if (set.keys.length + SET_ROW_MEMBERS > this.#maxMembers) {
      throw new DatasetError('LIMIT_EXCEEDED', `an entity set of ${set.keys.length} members is more than the ${this.#maxMembers} this server keeps (--max-set-members; a set counts ${SET_ROW_MEMBERS} more)`);
    }
    const { q, p, sets, chunks, totals } = this.#sql;
    const now = this.#now();
    set.refreshed = now; // the store's clock decides every lifetime
    const text = !(set.keys instanceof Float64Array);
    const version = randomUUID();
    const kept = await this.storage.transaction(async () => {
      // an id held by another owner's live set is not theirs to take (a rebuild under a known id)
      const held = await this.storage.get(`SELECT ${q('owner')} AS owner FROM ${sets} WHERE ${this.#sql.alive} AND ${q('id')} = ${p(2)}`, [now, set.id]);
      if (held !== undefined && !readable((held.owner as string | null) ?? undefined, set.owner)) return false;
      await this.#delete(set.id);
      await this.storage.run(
        `INSERT INTO ${sets} (${q('id')}, ${q('dataClass')}, ${q('sorted')}, ${q('timeout')}, ${q('refreshed')}, ${q('size')}, ${q('text')}, ${q('version')}, ${q('owner')}, ${q('expires')}) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)}, ${p(9)}, ${p(10)})`,
        [set.id, set.dataClass, set.sorted ? 1 : 0, set.timeoutMs, now, set.keys.length, text ? 1 : 0, version, set.owner ?? null, now + set.timeoutMs],
      );
      await this.storage.run(`UPDATE ${totals} SET ${q('sets')} = ${q('sets')} + 1, ${q('members')} = ${q('members')} + ${p(1)}`, [set.keys.length]);
      await this.#hold(set.owner, set.keys.length + SET_ROW_MEMBERS);
      const insert = `INSERT INTO ${chunks} (${q('set')}, ${q('seq')}, ${q('data')}) VALUES (${p(1)}, ${p(2)}, ${p(3)})`;
      for (let from = 0, seq = 0; from < set.keys.length; from += SET_CHUNK_MEMBERS, seq++) {
        await this.storage.run(insert, [set.id, seq, encodeChunk(set.keys, from, Math.min(from + SET_CHUNK_MEMBERS, set.keys.length))]);
      }
      // then one put at a time, across instances, so that each counts the others' sets in the
      // bound (the members are written before: the lock is held for the count and the evictions)
      await lockNamed(this.storage, 'entity sets');
      await this.#sweep(now);
      await this.#evict(set.id);
      return true;
    }, { retries: this.storage.dialect.concurrency.conflictRetries });
    if (kept) this.#remember(set.id, version, set.keys);
    return kept;
  }

  async get(id: string, reader?: SetReader): Promise<StoredSet | undefined> {
    const row = await this.#use(id, reader);
    if (row === undefined) return undefined;
    const set = info(row);
    return {
      id: set.id, dataClass: set.dataClass, sorted: set.sorted, timeoutMs: set.timeoutMs, refreshed: set.refreshed, keys: await this.#keys(id, String(row.version), Number(row.text) === 1, set.size),
      ...(row.owner == null ? {} : { owner: String(row.owner) }),
    };
  }

  async slice(id: string, from: number, to: number, reader?: SetReader): Promise<SetSlice | undefined> {
    const row = await this.#use(id, reader);
    if (row === undefined) return undefined;
    const set = info(row);
    const [version, text] = [String(row.version), Number(row.text) === 1];
    const start = Math.min(Math.max(0, from), set.size);
    const end = Math.min(Math.max(start, to), set.size);
    const hit = this.#cache.get(id);
    if ((hit !== undefined && hit.version === version) || set.size <= this.#cacheMembers || end === start) {
      return { set, from: start, keys: await this.#keys(id, version, text, set.size, start, end) };
    }
    // a set too large to keep whole: the chunks the slice spans only (a page reads one or two)
    const first = Math.floor(start / SET_CHUNK_MEMBERS);
    const last = Math.floor((end - 1) / SET_CHUNK_MEMBERS);
    const parts: KeyList[] = [];
    for (let seq = first; seq <= last; seq++) parts.push(await this.#chunk(id, version, text, seq));
    const offset = start - first * SET_CHUNK_MEMBERS;
    if (parts.some((c, i) => first + i < last && c.length !== SET_CHUNK_MEMBERS)) {
      // (chunked otherwise than this server chunks: read whole)
      return { set, from: start, keys: await this.#keys(id, version, text, set.size, start, end) };
    }
    if (text) return { set, from: start, keys: (parts as (readonly string[])[]).flat().slice(offset, offset + end - start) };
    const keys = new Float64Array(end - start);
    let at = 0;
    for (const [i, c] of (parts as Float64Array[]).entries()) {
      const part = c.subarray(i === 0 ? offset : 0, Math.min(c.length, (i === 0 ? offset : 0) + keys.length - at));
      keys.set(part, at);
      at += part.length;
    }
    return { set, from: start, keys };
  }

  /** One chunk of a set's members (kept: the pages of a large set are read from the same chunks again). */
  async #chunk(id: string, version: string, text: boolean, seq: number): Promise<KeyList> {
    const key = `${id}\u0000${version}\u0000${seq}`;
    const hit = this.#chunks.get(key);
    if (hit !== undefined) {
      this.#chunks.delete(key);
      this.#chunks.set(key, hit);
      return unpack(hit);
    }
    const { q, p, chunks } = this.#sql;
    const data = await this.storage.column(`SELECT ${q('data')} FROM ${chunks} WHERE ${q('set')} = ${p(1)} AND ${q('seq')} = ${p(2)}`, [id, seq]);
    const keys = decodeChunks(data, text, text || data.length === 0 ? 0 : (data[0] as Uint8Array).byteLength / 8);
    const packed = pack(keys);
    this.#chunks.set(key, packed);
    this.#cached += packedBytes(packed);
    this.#trim();
    return keys;
  }

  /** The set's row if it is alive; used now, its lifetime starts again. */
  async #use(id: string, reader: SetReader): Promise<SetRow | undefined> {
    const { q, p, sets, columns, alive } = this.#sql;
    const now = this.#now();
    // alive, or nothing; used now, its lifetime starts again, written at most once in
    // SET_REFRESH_MS or a hundredth of its timeout (a read of a set used that lately costs no
    // write transaction, and ends at most that much sooner)
    let row = (await this.storage.get(`SELECT ${columns} FROM ${sets} WHERE ${alive} AND ${q('id')} = ${p(2)}`, [now, id])) as SetRow | undefined;
    // another session's set is as if it did not exist (and its lifetime is not touched)
    if (row !== undefined && !readable(row.owner == null ? undefined : String(row.owner), reader)) return undefined;
    if (row !== undefined && Number(row.refreshed) + Math.min(SET_REFRESH_MS, Number(row.timeoutMs) / 100) <= now) {
      row = (await this.storage.get(
        `UPDATE ${sets} SET ${q('refreshed')} = ${p(1)}, ${q('expires')} = ${p(2)} + ${q('timeout')} WHERE ${q('id')} = ${p(3)} AND ${q('refreshed')} + ${q('timeout')} > ${p(4)} RETURNING ${columns}`,
        [now, now, id, now],
      )) as SetRow | undefined;
    }
    if (row === undefined) this.#forget(id);
    return row;
  }

  async release(id: string, reader?: SetReader): Promise<boolean> {
    const released = await this.storage.transaction(() => this.#delete(id, reader), { retries: this.storage.dialect.concurrency.conflictRetries });
    if (released) this.#forget(id);
    return released;
  }

  async releaseOwned(owner: string): Promise<number> {
    const { q, p, sets } = this.#sql;
    const ids = (await this.storage.column(`SELECT ${q('id')} FROM ${sets} WHERE ${q('owner')} = ${p(1)}`, [owner])).map(String);
    if (ids.length === 0) return 0;
    let n = 0;
    await this.storage.transaction(async () => {
      for (const id of ids) if (await this.#delete(id, owner)) n++;
    }, { retries: this.storage.dialect.concurrency.conflictRetries });
    for (const id of ids) this.#forget(id);
    return n;
  }

  async owned(owner: string): Promise<number> {
    const { q, p, sets, alive } = this.#sql;
    const row = await this.storage.get(`SELECT COUNT(*) AS n FROM ${sets} WHERE ${alive} AND ${q('owner')} = ${p(2)}`, [this.#now(), owner]);
    return Number(row?.n ?? 0);
  }

  async list(owner?: string): Promise<SetInfo[]> {
    const { q, p, sets, columns, alive } = this.#sql;
    const mine = owner === undefined ? '' : ` AND ${q('owner')} = ${p(2)}`;
    const rows = (await this.storage.all(`SELECT ${columns} FROM ${sets} WHERE ${alive}${mine} ORDER BY ${q('refreshed')}`, owner === undefined ? [this.#now()] : [this.#now(), owner])) as unknown as SetRow[];
    return rows.map(info);
  }

  /** Members [from, to) of the set (all of them by default), from the members kept at hand or read whole. */
  async #keys(id: string, version: string, text: boolean, size: number, from = 0, to = size): Promise<KeyList> {
    const hit = this.#cache.get(id);
    if (hit?.version === version) {
      this.#cache.delete(id);
      this.#cache.set(id, hit); // most recently used last
      return unpack(hit.packed, from, to);
    }
    const { q, p, chunks } = this.#sql;
    const data = await this.storage.column(`SELECT ${q('data')} FROM ${chunks} WHERE ${q('set')} = ${p(1)} ORDER BY ${q('seq')}`, [id]);
    const keys = decodeChunks(data, text, size);
    this.#remember(id, version, keys);
    return from === 0 && to >= keys.length ? keys : keys.slice(from, to);
  }

  #remember(id: string, version: string, keys: KeyList): void {
    this.#forget(id);
    if (keys.length > this.#cacheMembers) return;
    const packed = pack(keys);
    if (packedBytes(packed) > this.#maxBytes) return;
    this.#cache.set(id, { version, packed });
    this.#cached += packedBytes(packed);
    this.#trim();
  }

  /** The least recently used members kept at hand go (chunks first) until they fit in --max-set-memory. */
  #trim(): void {
    if (this.#chunks.size > SET_CHUNKS_KEPT) this.#dropChunk();
    while (this.#cached > this.#maxBytes && this.#chunks.size > 0) this.#dropChunk();
    for (const [old, hit] of this.#cache) {
      if (this.#cached <= this.#maxBytes) break;
      this.#cache.delete(old);
      this.#cached -= packedBytes(hit.packed);
    }
  }

  #dropChunk(): void {
    const [key, packed] = this.#chunks.entries().next().value as [string, PackedKeys];
    this.#chunks.delete(key);
    this.#cached -= packedBytes(packed);
  }

  #forget(id: string): void {
    const hit = this.#cache.get(id);
    if (hit === undefined) return;
    this.#cache.delete(id);
    this.#cached -= packedBytes(hit.packed);
  }

  /** Deletes a set (`reader`'s, when given) and its members, counted off the totals and its owner's; true when it was there. In the caller's transaction. */
  async #delete(id: string, reader?: SetReader): Promise<boolean> {
    const { q, p, sets, chunks, totals } = this.#sql;
    const mine = reader === undefined ? '' : ` AND (${q('owner')} IS NULL OR ${q('owner')} = ${p(2)})`;
    const gone = await this.storage.get(`DELETE FROM ${sets} WHERE ${q('id')} = ${p(1)}${mine} RETURNING ${q('size')} AS size, ${q('owner')} AS owner`, reader === undefined ? [id] : [id, reader]);
    if (gone === undefined) return false;
    await this.storage.run(`DELETE FROM ${chunks} WHERE ${q('set')} = ${p(1)}`, [id]);
    await this.storage.run(`UPDATE ${totals} SET ${q('sets')} = ${q('sets')} - 1, ${q('members')} = ${q('members')} - ${p(1)}`, [Number(gone.size)]);
    await this.#hold(gone.owner == null ? undefined : String(gone.owner), -(Number(gone.size) + SET_ROW_MEMBERS));
    return true;
  }

  /** Adds to what an owner's sets hold (a set kept: its members and its row; taken off when it goes). In the caller's transaction. */
  async #hold(owner: string | undefined, delta: number): Promise<void> {
    const { q, p, owners } = this.#sql;
    await this.storage.run(
      `INSERT INTO ${owners} (${q('owner')}, ${q('members')}) VALUES (${p(1)}, ${p(2)}) ON CONFLICT (${q('owner')}) DO UPDATE SET ${q('members')} = ${owners}.${q('members')} + ${p(3)}`,
      [owner ?? '', delta, delta],
    );
  }

  /** Expired sets go whenever a set is kept: those only, found by the index on their expiry (and the rows of owners left holding none). */
  async #sweep(now: number): Promise<void> {
    const { q, p, sets, owners } = this.#sql;
    const expired = await this.storage.column(`SELECT ${q('id')} FROM ${sets} WHERE ${q('expires')} <= ${p(1)}`, [now]);
    for (const id of expired) {
      await this.#delete(String(id));
      this.#forget(String(id));
    }
    await this.storage.run(`DELETE FROM ${owners} WHERE ${q('members')} <= 0`);
  }

  /**
   * Sets go (never `keep`, the one just kept) until the members, each set's row counted too, fit:
   * the least recently used of the owner holding the most (found by the index on what owners
   * hold), a few at a time, until it holds no more than the next one.
   */
  async #evict(keep: string): Promise<void> {
    const { q, p, sets, totals, owners } = this.#sql;
    const t = await this.storage.get(`SELECT ${q('sets')} AS sets, ${q('members')} AS members FROM ${totals}`);
    let over = Number(t?.members ?? 0) + Number(t?.sets ?? 0) * SET_ROW_MEMBERS - this.#maxMembers;
    // (owners passed over: the largest may hold only the set just kept)
    let skip = 0;
    while (over > 0) {
      const top = await this.storage.all(`SELECT ${q('owner')} AS owner, ${q('members')} AS members FROM ${owners} WHERE ${q('members')} > 0 ORDER BY ${q('members')} DESC LIMIT 2 OFFSET ${p(1)}`, [skip]);
      if (top.length === 0) return;
      const owner = String(top[0].owner);
      let held = Number(top[0].members);
      const next = top.length > 1 ? Number(top[1].members) : 0;
      const whose = owner === '' ? `${q('owner')} IS NULL` : `${q('owner')} = ${p(2)}`;
      const oldest = await this.storage.all(`SELECT ${q('id')} AS id, ${q('size')} AS size FROM ${sets} WHERE ${q('id')} <> ${p(1)} AND ${whose} ORDER BY ${q('refreshed')} LIMIT 64`, owner === '' ? [keep] : [keep, owner]);
      if (oldest.length === 0) {
        skip++;
        continue;
      }
      skip = 0;
      for (const r of oldest) {
        // (once it holds less than the next owner, that one is the largest)
        if (over <= 0 || held < next) break;
        await this.#delete(String(r.id));
        this.#forget(String(r.id));
        const cost = Number(r.size) + SET_ROW_MEMBERS;
        over -= cost;
        held -= cost;
      }
    }
  }
}
