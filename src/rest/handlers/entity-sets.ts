// Entity sets over REST: $method=entityset on a collection, GET /rest/{dc}/$entityset/{id} (pages
// of the stored keys), release (GET ?$method=release, POST /rest/$entityset/$release), $info.
// The sets themselves are kept by the datastore's EntitySetStore.

import { DEFAULT_SET_TIMEOUT_S, REBUILT_SET_TIMEOUT_S } from '../../config/limits.js';
import type { DataClass } from '../../datastore/dataclass.js';
import type { Datastore } from '../../datastore/datastore.js';
import { newSetId, type KeyList, type StoredSet } from '../../datastore/entity-sets.js';
import { fetchRelated } from '../../datastore/fetch.js';
import { parseOrderBy } from '../../query/order.js';
import type { Projection } from '../../datastore/projection.js';
import type { EntitySelection } from '../../datastore/selection.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { isExposed, pageSize } from '../../model/types.js';
import { directPath } from '../../query/plan.js';
import { WIRE } from '../../config/wire.js';
import { REST_PREFIX } from '../constants.js';
import type { RestOptions } from '../options.js';
import { serializeEntity } from '../serialize.js';

type Json = Record<string, unknown>;

export function setUri(dc: DataClass, id: string): string {
  return `${REST_PREFIX}/${dc.name}/$entityset/${id}`;
}

/** The entities whose keys are listed, as a selection (the keys bound as one parameter, so queries and sorts on it run in SQL). */
function members(dc: DataClass, keys: KeyList): EntitySelection {
  return dc.selectionWhere({ kind: 'inKeys', path: directPath(dc.model.key), keys });
}

function notFound(id: string): DatasetError {
  return new DatasetError('ENTITY_SET_NOT_FOUND', `EntitySet "${id}" cannot be found`);
}

/** Stores the whole selection (never only the page) and answers its first page with __ENTITYSET first. */
export async function createSet(ds: Datastore, selection: EntitySelection, opts: RestOptions, projection: Projection): Promise<Json> {
  const dc = selection.getDataClass();
  const set: StoredSet = {
    id: newSetId(),
    dataClass: dc.name,
    keys: await selection.keys(),
    sorted: opts.orderby !== undefined || /\border\s+by\b/i.test(opts.filter ?? ''),
    timeoutMs: (opts.timeout ?? DEFAULT_SET_TIMEOUT_S) * 1000,
    refreshed: Date.now(),
  };
  await ds.entitySets.put(set);
  return page(ds, dc, set, opts, projection);
}

/** GET /rest/{dc}/$entityset/{id}: a page of the set (or its release, or a copy with $method=entityset). */
export async function readSet(
  ds: Datastore, dc: DataClass, id: string, opts: RestOptions, projection: Projection,
  computation: (selection: EntitySelection) => Promise<unknown>,
): Promise<unknown> {
  if (opts.method === 'release') {
    if (!(await ds.entitySets.release(id))) throw notFound(id);
    return { ok: true };
  }
  const set = (await ds.entitySets.get(id)) ?? (await rebuild(ds, dc, id, opts));
  if (set.dataClass !== dc.name) throw notFound(id);
  let keys = set.keys;
  let sorted = set.sorted;
  if (opts.logic) {
    const other = await ds.entitySets.get(opts.logic.other);
    if (!other) throw notFound(opts.logic.other);
    if (other.dataClass !== set.dataClass) {
      throw new DatasetError('INVALID_OPTION', `$logicOperator combines sets of one dataclass: ${set.id} holds ${set.dataClass}, ${other.id} holds ${other.dataClass}`);
    }
    if (opts.logic.operator === 'INTERSECT') return intersects(set.keys, other.keys);
    keys = combine(set.keys, other.keys, opts.logic.operator);
  }
  if (opts.clean) {
    if (opts.method !== 'entityset') throw new DatasetError('INVALID_OPTION', '$clean=true makes a new set: give $method=entityset with it');
    // the members still in the datastore, in the set's order
    keys = keepOrder(keys, await members(dc, keys).keys());
  }
  if (opts.filter !== undefined || opts.orderby !== undefined) {
    const inSet = members(dc, keys);
    let selection = opts.filter === undefined ? inSet : inSet.queryAs(isExposed, opts.filter, opts.params);
    if (opts.orderby !== undefined) selection = selection.withOrder(parseOrderBy(dc.model, opts.orderby, isExposed, ds.calculatedLookup));
    const ordered = opts.orderby !== undefined || /\border\s+by\b/i.test(opts.filter ?? '');
    const found = await selection.keys();
    // without a new order the set's own order stays
    keys = ordered ? found : keepOrder(keys, found);
    sorted ||= ordered;
  }
  if (opts.compute !== undefined || opts.distinct) {
    // on the members as the request defines them (combined, cleaned, filtered)
    return computation(members(dc, keys));
  }
  if (opts.method !== 'entityset' && keys === set.keys) return page(ds, dc, set, opts, projection);
  const result: StoredSet = { ...set, keys, sorted, id: newSetId(), refreshed: Date.now(), timeoutMs: (opts.timeout ?? DEFAULT_SET_TIMEOUT_S) * 1000 };
  if (opts.method === 'entityset') {
    await ds.entitySets.put(result);
    return page(ds, dc, result, opts, projection);
  }
  // a selection made from the set (filtered, sorted, combined) is not stored: no __ENTITYSET
  return page(ds, dc, result, opts, projection, false);
}

/**
 * An expired or released set asked for with $savedfilter and/or $savedorderby: the query runs
 * again and the set comes back under the same id (its members may have changed). Otherwise 1802.
 */
async function rebuild(ds: Datastore, dc: DataClass, id: string, opts: RestOptions): Promise<StoredSet> {
  if (opts.savedFilter === undefined && opts.savedOrderby === undefined) throw notFound(id);
  if (!/^[0-9A-F]{32}$/.test(id)) throw notFound(id);
  let selection = opts.savedFilter === undefined ? dc.all() : dc.all().queryAs(isExposed, opts.savedFilter, opts.params);
  if (opts.savedOrderby !== undefined) selection = selection.withOrder(parseOrderBy(dc.model, opts.savedOrderby, isExposed, ds.calculatedLookup));
  const set: StoredSet = {
    id, dataClass: dc.name, keys: await selection.keys(), sorted: opts.savedOrderby !== undefined, timeoutMs: REBUILT_SET_TIMEOUT_S * 1000, refreshed: Date.now(),
  };
  await ds.entitySets.put(set);
  return set;
}

/** The members of a stored set as a selection, for a function called on it or given it (1802 when the set is gone or holds another dataclass than `dc`). */
export async function setSelection(ds: Datastore, id: string, dc?: DataClass): Promise<EntitySelection> {
  const set = await ds.entitySets.get(id);
  const of = set ? ds.dataClass(set.dataClass) : undefined;
  if (!set || !of || (dc && set.dataClass !== dc.name)) throw notFound(id);
  // (in key order: a sorted set's order is not kept for the function)
  return members(of, set.keys);
}

/** POST /rest/{dc}/$entityset/{id}?$method=delete: drops every member through the core (events run), in one transaction. */
export async function deleteSet(ds: Datastore, dc: DataClass, id: string): Promise<unknown> {
  const set = await ds.entitySets.get(id);
  if (!set || set.dataClass !== dc.name) throw notFound(id);
  await ds.transaction(async () => {
    const keys = Array.from(set.keys as ArrayLike<unknown>);
    for (let at = 0; at < keys.length; at += 1000) {
      // members already dropped are skipped: the set keeps their keys (reference §8.2)
      for (const e of await dc.getMany(keys.slice(at, at + 1000))) await e?.drop();
    }
  });
  return { ok: true };
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

/** AND: the members of both (first set's order); OR: the first set, then the second's others; EXCEPT: the first's not in the second. */
function combine(a: KeyList, b: KeyList, operator: 'AND' | 'OR' | 'EXCEPT'): KeyList {
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

/** INTERSECT: whether the two sets share at least one entity (a bare true or false). */
function intersects(a: KeyList, b: KeyList): boolean {
  const [small, large] = a.length <= b.length ? [a, b] : [b, a];
  const inSmall = new Set<unknown>(Array.from(small as ArrayLike<unknown>));
  return Array.from(large as ArrayLike<unknown>).some((k) => inSmall.has(k));
}

/** A page of a set, in the set's order: a dropped member reads {"__STAMP": 0} and still counts (reference §8.2). */
async function page(ds: Datastore, dc: DataClass, set: StoredSet, opts: RestOptions, projection: Projection, stored = true): Promise<Json> {
  const top = opts.top ?? pageSize(dc.model);
  const keys = Array.from(set.keys.slice(opts.skip, opts.skip + top) as ArrayLike<unknown>);
  const entities = await dc.getMany(keys);
  const fetched = new Map((await fetchRelated(ds, entities.filter((e) => e !== null), projection)).map((f) => [f.entity, f]));
  const globalStamp = await ds.globalStamp();
  const list = entities.map((e) => (e ? serializeEntity(fetched.get(e) as NonNullable<ReturnType<typeof fetched.get>>, projection, { globalStamp }) : { [WIRE.STAMP]: 0 }));
  return {
    ...(stored ? { [WIRE.ENTITY_SET]: setUri(dc, set.id) } : {}),
    [WIRE.ENTITY_MODEL]: dc.name,
    [WIRE.GLOBAL_STAMP]: globalStamp,
    [WIRE.COUNT]: set.keys.length,
    [WIRE.FIRST]: opts.skip,
    [WIRE.ENTITIES]: list,
    [WIRE.SENT]: list.length,
  };
}

/** POST /rest/$entityset/$release with a JSON array of ids. */
export async function releaseSets(ds: Datastore, body: unknown): Promise<unknown> {
  if (!Array.isArray(body) || body.some((id) => typeof id !== 'string')) {
    throw new DatasetError('INVALID_BODY', 'POST /rest/$entityset/$release takes a JSON array of entity set ids, like ["9718A30BF61343C796345F3BE5B01CE7"]');
  }
  const unknown: string[] = [];
  for (const id of new Set(body as string[])) if (!(await ds.entitySets.release(id))) unknown.push(id);
  if (unknown.length > 0) throw notFound(unknown.join('", "'));
  return { ok: true };
}

/** GET /rest/$info: the entity sets alive now (sessions come with a later version). */
export async function info(ds: Datastore): Promise<Json> {
  const iso = (ms: number) => new Date(Math.min(ms, 8.64e15)).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const sets = await ds.entitySets.list();
  return {
    entitySetCount: sets.length,
    entitySet: sets.map((s) => ({
      id: s.id,
      dataClass: s.dataClass,
      selectionSize: s.keys.length,
      sorted: s.sorted,
      refreshed: iso(s.refreshed),
      expires: iso(s.refreshed + s.timeoutMs),
    })),
  };
}
