// Entity sets kept in the database (__dataset_entity_sets and its member chunks), so that every
// server instance over one database sees the same sets, and a restarted instance loses none.
// Members are stored compactly: integer keys as 8-byte floats, CHUNK_MEMBERS to a row; text keys
// as a JSON array a chunk. Members never change once kept: a set rebuilt under its id (a saved
// filter run again) is kept with a new version. So each instance keeps the members it read in a
// bounded cache, by id and version; the row (its version, lifetime, existence) is asked every
// time, so a release or a rebuild on another instance counts at once.

import { randomUUID } from 'node:crypto';
import { DEFAULT_MAX_SET_MEMBERS, SET_CACHE_MEMBERS, SET_CHUNK_MEMBERS, SET_CHUNKS_KEPT, SET_REFRESH_MS } from '../config/limits.js';
import { DatasetError } from '../errors/dataset-error.js';
import type { Storage } from '../storage/adapter.js';
import { lockNamed, SET_CHUNK_TABLE, SET_TABLE } from '../storage/system-tables.js';
import type { EntitySetStore, KeyList, SetInfo, SetSlice, StoredSet } from './entity-set-store.js';

export interface DatabaseSetStoreOptions {
  /** members kept at most, all sets of all instances together: past it the least recently used sets go */
  readonly maxMembers?: number;
  /** ms since the epoch; tests inject their own clock */
  readonly now?: () => number;
  /** members kept in this process, all sets together (SET_CACHE_MEMBERS); a larger set is read a chunk at a time */
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
  const { quote: q, placeholder: p } = storage.dialect;
  const columns = `${q('id')} AS id, ${q('dataClass')} AS "dataClass", ${q('sorted')} AS sorted, ${q('timeout')} AS "timeoutMs", ${q('refreshed')} AS refreshed, ${q('size')} AS size, ${q('text')} AS text, COALESCE(${q('version')}, ${q('id')} || ':' || ${q('refreshed')}) AS version`;
  return { q, p, sets: q(SET_TABLE), chunks: q(SET_CHUNK_TABLE), columns, alive: `${q('refreshed')} + ${q('timeout')} > ${p(1)}` };
}

export class DatabaseEntitySetStore implements EntitySetStore {
  readonly #maxMembers: number;
  readonly #now: () => number;
  readonly #cacheMembers: number;
  /** members already read, by set id (with the version they are of), least recently used first */
  readonly #cache = new Map<string, { version: string; keys: KeyList }>();
  /** chunks of sets too large to keep whole, by set, version and chunk, least recently used first */
  readonly #chunks = new Map<string, KeyList>();
  #cached = 0;

  constructor(private readonly storage: Storage, options: DatabaseSetStoreOptions = {}) {
    this.#maxMembers = options.maxMembers ?? DEFAULT_MAX_SET_MEMBERS;
    this.#now = options.now ?? Date.now;
    this.#cacheMembers = options.cacheMembers ?? SET_CACHE_MEMBERS;
    this.#sql = sqlParts(storage);
  }

  /** the statements' names and pieces, built once: every request that uses a set comes through here */
  readonly #sql: ReturnType<typeof sqlParts>;

  async put(set: StoredSet): Promise<void> {
    if (set.keys.length > this.#maxMembers) {
      throw new DatasetError('LIMIT_EXCEEDED', `an entity set of ${set.keys.length} members is more than the ${this.#maxMembers} this server keeps (--max-set-members)`);
    }
    const { q, p, sets, chunks } = this.#sql;
    const now = this.#now();
    set.refreshed = now; // the store's clock decides every lifetime
    const text = !(set.keys instanceof Float64Array);
    const version = randomUUID();
    await this.storage.transaction(async () => {
      await this.#delete(set.id);
      await this.storage.run(
        `INSERT INTO ${sets} (${q('id')}, ${q('dataClass')}, ${q('sorted')}, ${q('timeout')}, ${q('refreshed')}, ${q('size')}, ${q('text')}, ${q('version')}, ${q('owner')}) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)}, ${p(9)})`,
        [set.id, set.dataClass, set.sorted ? 1 : 0, set.timeoutMs, now, set.keys.length, text ? 1 : 0, version, set.owner ?? null],
      );
      const insert = `INSERT INTO ${chunks} (${q('set')}, ${q('seq')}, ${q('data')}) VALUES (${p(1)}, ${p(2)}, ${p(3)})`;
      for (let from = 0, seq = 0; from < set.keys.length; from += SET_CHUNK_MEMBERS, seq++) {
        await this.storage.run(insert, [set.id, seq, encodeChunk(set.keys, from, Math.min(from + SET_CHUNK_MEMBERS, set.keys.length))]);
      }
      // then one put at a time, across instances, so that each counts the others' sets in the
      // bound (the members are written before: the lock is held for the count and the evictions)
      await lockNamed(this.storage, 'entity sets');
      await this.#sweep(now);
      await this.#evict(set.id);
    }, { retries: this.storage.dialect.conflictRetries });
    this.#remember(set.id, version, set.keys);
  }

  async get(id: string): Promise<StoredSet | undefined> {
    const row = await this.#use(id);
    if (row === undefined) return undefined;
    const set = info(row);
    return { id: set.id, dataClass: set.dataClass, sorted: set.sorted, timeoutMs: set.timeoutMs, refreshed: set.refreshed, keys: await this.#keys(id, String(row.version), Number(row.text) === 1, set.size) };
  }

  async slice(id: string, from: number, to: number): Promise<SetSlice | undefined> {
    const row = await this.#use(id);
    if (row === undefined) return undefined;
    const set = info(row);
    const [version, text] = [String(row.version), Number(row.text) === 1];
    const start = Math.min(Math.max(0, from), set.size);
    const end = Math.min(Math.max(start, to), set.size);
    const hit = this.#cache.get(id);
    if ((hit !== undefined && hit.version === version) || set.size <= this.#cacheMembers || end === start) {
      return { set, from: start, keys: (await this.#keys(id, version, text, set.size)).slice(start, end) };
    }
    // a set too large to keep whole: the chunks the slice spans only (a page reads one or two)
    const first = Math.floor(start / SET_CHUNK_MEMBERS);
    const last = Math.floor((end - 1) / SET_CHUNK_MEMBERS);
    const parts: KeyList[] = [];
    for (let seq = first; seq <= last; seq++) parts.push(await this.#chunk(id, version, text, seq));
    const offset = start - first * SET_CHUNK_MEMBERS;
    if (parts.some((c, i) => first + i < last && c.length !== SET_CHUNK_MEMBERS)) {
      // (chunked otherwise than this server chunks: read whole)
      return { set, from: start, keys: (await this.#keys(id, version, text, set.size)).slice(start, end) };
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
      return hit;
    }
    const { q, p, chunks } = this.#sql;
    const data = await this.storage.column(`SELECT ${q('data')} FROM ${chunks} WHERE ${q('set')} = ${p(1)} AND ${q('seq')} = ${p(2)}`, [id, seq]);
    const keys = decodeChunks(data, text, text || data.length === 0 ? 0 : (data[0] as Uint8Array).byteLength / 8);
    this.#chunks.set(key, keys);
    if (this.#chunks.size > SET_CHUNKS_KEPT) this.#chunks.delete(this.#chunks.keys().next().value as string);
    return keys;
  }

  /** The set's row if it is alive; used now, its lifetime starts again. */
  async #use(id: string): Promise<SetRow | undefined> {
    const { q, p, sets, columns, alive } = this.#sql;
    const now = this.#now();
    // alive, or nothing; used now, its lifetime starts again, written at most once in
    // SET_REFRESH_MS or a hundredth of its timeout (a read of a set used that lately costs no
    // write transaction, and ends at most that much sooner)
    let row = (await this.storage.get(`SELECT ${columns} FROM ${sets} WHERE ${alive} AND ${q('id')} = ${p(2)}`, [now, id])) as SetRow | undefined;
    if (row !== undefined && Number(row.refreshed) + Math.min(SET_REFRESH_MS, Number(row.timeoutMs) / 100) <= now) {
      row = (await this.storage.get(
        `UPDATE ${sets} SET ${q('refreshed')} = ${p(1)} WHERE ${q('id')} = ${p(2)} AND ${q('refreshed')} + ${q('timeout')} > ${p(3)} RETURNING ${columns}`,
        [now, id, now],
      )) as SetRow | undefined;
    }
    if (row === undefined) this.#forget(id);
    return row;
  }

  async release(id: string): Promise<boolean> {
    this.#forget(id);
    return this.storage.transaction(() => this.#delete(id), { retries: this.storage.dialect.conflictRetries });
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

  async #keys(id: string, version: string, text: boolean, size: number): Promise<KeyList> {
    const hit = this.#cache.get(id);
    if (hit?.version === version) {
      this.#cache.delete(id);
      this.#cache.set(id, hit); // most recently used last
      return hit.keys;
    }
    const { q, p, chunks } = this.#sql;
    const data = await this.storage.column(`SELECT ${q('data')} FROM ${chunks} WHERE ${q('set')} = ${p(1)} ORDER BY ${q('seq')}`, [id]);
    const keys = decodeChunks(data, text, size);
    this.#remember(id, version, keys);
    return keys;
  }

  #remember(id: string, version: string, keys: KeyList): void {
    this.#forget(id);
    if (keys.length > this.#cacheMembers) return;
    this.#cache.set(id, { version, keys });
    this.#cached += keys.length;
    for (const [old, hit] of this.#cache) {
      if (this.#cached <= this.#cacheMembers) break;
      this.#cache.delete(old);
      this.#cached -= hit.keys.length;
    }
  }

  #forget(id: string): void {
    const hit = this.#cache.get(id);
    if (hit === undefined) return;
    this.#cache.delete(id);
    this.#cached -= hit.keys.length;
  }

  /** Deletes a set and its members; true when it was there. In the caller's transaction. */
  async #delete(id: string): Promise<boolean> {
    const { q, p, sets, chunks } = this.#sql;
    await this.storage.run(`DELETE FROM ${chunks} WHERE ${q('set')} = ${p(1)}`, [id]);
    return (await this.storage.run(`DELETE FROM ${sets} WHERE ${q('id')} = ${p(1)}`, [id])) > 0;
  }

  /** Expired sets go whenever a set is kept. */
  async #sweep(now: number): Promise<void> {
    const { q, p, sets } = this.#sql;
    const expired = await this.storage.column(`SELECT ${q('id')} FROM ${sets} WHERE ${q('refreshed')} + ${q('timeout')} <= ${p(1)}`, [now]);
    for (const id of expired) await this.#delete(String(id));
  }

  /** The least recently used sets go (never `keep`, the one just kept) until the members fit. */
  async #evict(keep: string): Promise<void> {
    const { q, p, sets } = this.#sql;
    const total = Number((await this.storage.get(`SELECT COALESCE(SUM(${q('size')}), 0) AS n FROM ${sets}`))?.n ?? 0);
    if (total <= this.#maxMembers) return;
    let over = total - this.#maxMembers;
    const oldest = await this.storage.all(`SELECT ${q('id')} AS id, ${q('size')} AS size FROM ${sets} WHERE ${q('id')} <> ${p(1)} ORDER BY ${q('refreshed')}`, [keep]);
    for (const r of oldest) {
      if (over <= 0) break;
      await this.#delete(String(r.id));
      this.#forget(String(r.id));
      over -= Number(r.size);
    }
  }
}
