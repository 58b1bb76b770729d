// What is done with entity sets, whoever asks (REST's $entityset options today): storing a
// selection as a set, finding and rebuilding one, the members of a set as a selection, set
// algebra (AND, OR, EXCEPT, INTERSECT), cleaning out dropped members, pages, and dropping every
// member. A set is a key list kept by the datastore's EntitySetStore. A set belongs to the session
// that made it: every lookup names who asks (a SetReader), and another's set is as if it did not exist.

import { randomUUID } from 'node:crypto';
import { DEFAULT_SET_TIMEOUT_S, REBUILT_SET_TIMEOUT_S } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { directPath } from '../../query/plan.js';
import type { Access } from '../access/access.js';
import { dropKeys } from '../writes/bulk-drop.js';
import type { DataClassCore } from '../dataclass-core.js';
import type { Storage } from '../../storage/adapter.js';
import type { EntitySetStore, KeyList, SetInfo, SetReader, SetSlice, StoredSet } from './entity-set-store.js';
import { classOf, isOrdered, keysOf, type EntitySelection } from '../selections/selection.js';

export type SetOperator = 'AND' | 'OR' | 'EXCEPT';

/** A set id: 32 uppercase hexadecimal digits. */
export function newSetId(): string {
  return randomUUID().replaceAll('-', '').toUpperCase();
}

const SET_ID = /^[0-9A-F]{32}$/;

/** 4D's 1802 for a set that is gone (released, expired) or was never made. */
export function setNotFound(id: string): DatasetError {
  return new DatasetError('ENTITY_SET_NOT_FOUND', `EntitySet "${id}" cannot be found`);
}

/** Who makes a set, and how many it may hold at once. */
export interface SetOwner {
  readonly id: string;
  readonly limit: number;
  /** refuses when the owner cannot be kept (a session not stored yet, past the cap on live sessions): checked before the set is made */
  readonly makeRoom?: () => Promise<void>;
}

export class EntitySets {
  constructor(private readonly kept: EntitySetStore, private readonly storage: Storage) {}

  /** Stores every member of a selection (never only a page) for `timeoutS` seconds of disuse; sorted when it has an order of its own. */
  async create(selection: EntitySelection, timeoutS = DEFAULT_SET_TIMEOUT_S, owner?: SetOwner): Promise<StoredSet> {
    return this.store(classOf(selection).name, await keysOf(selection), isOrdered(selection), timeoutS, owner);
  }

  /** Stores a key list as a new set: made by `owner`, when it has room for one more. */
  async store(dataClass: string, keys: KeyList, sorted: boolean, timeoutS = DEFAULT_SET_TIMEOUT_S, owner?: SetOwner): Promise<StoredSet> {
    await this.#admit(owner);
    const set: StoredSet = { id: newSetId(), dataClass, keys, sorted, timeoutMs: timeoutS * 1000, refreshed: Date.now(), ...(owner ? { owner: owner.id } : {}) };
    // (a new random id: nobody else's)
    await this.kept.put(set);
    return set;
  }

  /** Refuses a new set to an owner that holds its most already. */
  async #admit(owner: SetOwner | undefined): Promise<void> {
    if (!owner) return;
    await owner.makeRoom?.();
    const held = await this.kept.owned(owner.id);
    if (held >= owner.limit) {
      throw new DatasetError('TOO_MANY_REQUESTS', `this session holds ${held} entity sets, the most it may (--max-sets-per-session): release some ($method=release, or POST /rest/$entityset/$release)`, [], { retryAfterS: 60 });
    }
  }

  /** The set, its lifetime started again; undefined when it is gone (or not `reader`'s). */
  find(id: string, reader?: SetReader): Promise<StoredSet | undefined> {
    return this.kept.get(id, reader);
  }

  /** Members [from, to) of the set, its lifetime started again; undefined when it is gone (or not `reader`'s). */
  findSlice(id: string, from: number, to: number, reader?: SetReader): Promise<SetSlice | undefined> {
    return this.kept.slice(id, from, to, reader);
  }

  /** The set (of `dataClass`, when given; `reader`'s, when given), or 1802. */
  async get(id: string, dataClass?: string, reader?: SetReader): Promise<StoredSet> {
    const set = await this.kept.get(id, reader);
    if (!set || (dataClass !== undefined && set.dataClass !== dataClass)) throw setNotFound(id);
    return set;
  }

  /**
   * A set that expired or was released, made again under its id from the selection it was made
   * of (its members may have changed since), by `owner`. Rebuilt sets live 10 minutes (reference §3.18).
   */
  async rebuild(id: string, selection: EntitySelection, owner?: SetOwner): Promise<StoredSet> {
    if (!SET_ID.test(id)) throw setNotFound(id);
    // (made again by whoever asks: theirs now, within their quota)
    await this.#admit(owner);
    const set: StoredSet = {
      id, dataClass: classOf(selection).name, keys: await keysOf(selection), sorted: isOrdered(selection), timeoutMs: REBUILT_SET_TIMEOUT_S * 1000, refreshed: Date.now(),
      ...(owner ? { owner: owner.id } : {}),
    };
    // an id another session's live set holds stays theirs: as if this set could not be found
    if (!(await this.kept.put(set))) throw setNotFound(id);
    return set;
  }

  /** true when the set existed (and was `reader`'s, when given). */
  release(id: string, reader?: SetReader): Promise<boolean> {
    return this.kept.release(id, reader);
  }

  list(owner?: string): Promise<SetInfo[]> {
    return this.kept.list(owner);
  }

  /** The entities whose keys are listed, as a selection in key order (the keys bound as one parameter, so queries and sorts on it run in SQL). */
  members(dc: DataClassCore, keys: KeyList, access: Access): EntitySelection {
    return dc.selectWhere({ kind: 'inKeys', path: directPath(dc.model.key), keys }, access);
  }

  /** The keys still in the datastore (dropped members gone), in the order of `keys`. */
  async clean(dc: DataClassCore, keys: KeyList, access: Access): Promise<KeyList> {
    return keepOrder(keys, await keysOf(this.members(dc, keys, access)));
  }

  /**
   * The keys of a selection made from a set's members (filtered, sorted): in its own order when it
   * has one, else in the set's order.
   */
  async narrowed(keys: KeyList, selection: EntitySelection): Promise<{ keys: KeyList; ordered: boolean }> {
    const found = await keysOf(selection);
    const ordered = isOrdered(selection);
    return { keys: ordered ? found : keepOrder(keys, found), ordered };
  }

  /** Drops every member still in the datastore through the core (events run), in one transaction, a chunk at a time (bulk-drop.ts). */
  async drop(dc: DataClassCore, set: StoredSet, access: Access): Promise<void> {
    await this.storage.transaction(() => dropKeys(dc, set.keys, access), dc.writeUnit(access));
  }
}

/** AND: the members of both (the first set's order); OR: the first set, then the second's others; EXCEPT: the first's not in the second. */
export function combine(a: KeyList, b: KeyList, operator: SetOperator): KeyList {
  const inB = new Set<unknown>(Array.from(b as ArrayLike<unknown>));
  if (operator === 'AND') return filterKeys(a, (k) => inB.has(k));
  if (operator === 'EXCEPT') return filterKeys(a, (k) => !inB.has(k));
  const inA = new Set<unknown>(Array.from(a as ArrayLike<unknown>));
  const extra = filterKeys(b, (k) => !inA.has(k));
  if (a instanceof Float64Array) {
    const out = new Float64Array(a.length + extra.length);
    out.set(a);
    out.set(extra as Float64Array, a.length);
    return out;
  }
  return [...a, ...(extra as readonly string[])];
}

/** INTERSECT: whether two sets share at least one entity. */
export function intersects(a: KeyList, b: KeyList): boolean {
  const [small, large] = a.length <= b.length ? [a, b] : [b, a];
  const inSmall = new Set<unknown>(Array.from(small as ArrayLike<unknown>));
  return Array.from(large as ArrayLike<unknown>).some((k) => inSmall.has(k));
}

/** The members of `keys` that are also in `found`, in the order of `keys`. */
function keepOrder(keys: KeyList, found: KeyList): KeyList {
  const inFound = new Set<unknown>(Array.from(found as ArrayLike<unknown>));
  return filterKeys(keys, (k) => inFound.has(k));
}

function filterKeys(keys: KeyList, keep: (k: unknown) => boolean): KeyList {
  if (keys instanceof Float64Array) return keys.filter(keep);
  return keys.filter(keep);
}
