// Entity sets over REST: $method=entityset on a collection, GET /rest/{dc}/$entityset/{id} (pages
// of the stored keys), release (GET ?$method=release, POST /rest/$entityset/$release), $info.
// The sets themselves are kept by the datastore's EntitySetStore.

import type { DataClass } from '../../datastore/dataclass.js';
import type { Datastore } from '../../datastore/datastore.js';
import { DEFAULT_SET_TIMEOUT_S, newSetId, type StoredSet } from '../../datastore/entity-sets.js';
import { fetchRelated } from '../../datastore/fetch.js';
import type { Projection } from '../../datastore/projection.js';
import type { EntitySelection } from '../../datastore/selection.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { pageSize } from '../../model/types.js';
import { REST_PREFIX, W } from '../constants.js';
import type { RestOptions } from '../options.js';
import { serializeEntity } from '../serialize.js';

type Json = Record<string, unknown>;

export function setUri(dc: DataClass, id: string): string {
  return `${REST_PREFIX}/${dc.name}/$entityset/${id}`;
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
export async function readSet(ds: Datastore, dc: DataClass, id: string, opts: RestOptions, projection: Projection): Promise<unknown> {
  if (opts.method === 'release') {
    if (!(await ds.entitySets.release(id))) throw notFound(id);
    return { ok: true };
  }
  const set = await ds.entitySets.get(id);
  if (!set || set.dataClass !== dc.name) throw notFound(id);
  if (opts.filter !== undefined || opts.orderby !== undefined) {
    throw new DatasetError('OPTION_NOT_SUPPORTED', '$filter and $orderby on an entity set are not supported by this version of the server yet');
  }
  if (opts.method === 'entityset') {
    const copy: StoredSet = { ...set, id: newSetId(), refreshed: Date.now(), timeoutMs: (opts.timeout ?? DEFAULT_SET_TIMEOUT_S) * 1000 };
    await ds.entitySets.put(copy);
    return page(ds, dc, copy, opts, projection);
  }
  return page(ds, dc, set, opts, projection);
}

/** A page of a set, in the set's order: a dropped member reads {"__STAMP": 0} and still counts (reference §8.2). */
async function page(ds: Datastore, dc: DataClass, set: StoredSet, opts: RestOptions, projection: Projection): Promise<Json> {
  const top = opts.top ?? pageSize(dc.model);
  const keys = Array.from(set.keys.slice(opts.skip, opts.skip + top) as ArrayLike<unknown>);
  const entities = await dc.getMany(keys);
  const fetched = new Map((await fetchRelated(ds, entities.filter((e) => e !== null), projection)).map((f) => [f.entity, f]));
  const globalStamp = await ds.globalStamp();
  const list = entities.map((e) => (e ? serializeEntity(fetched.get(e) as NonNullable<ReturnType<typeof fetched.get>>, projection, { globalStamp }) : { [W.STAMP]: 0 }));
  return {
    [W.ENTITY_SET]: setUri(dc, set.id),
    [W.ENTITY_MODEL]: dc.name,
    [W.GLOBAL_STAMP]: globalStamp,
    [W.COUNT]: set.keys.length,
    [W.FIRST]: opts.skip,
    [W.ENTITIES]: list,
    [W.SENT]: list.length,
  };
}

/** POST /rest/$entityset/$release with a JSON array of ids. */
export async function releaseSets(ds: Datastore, body: unknown): Promise<unknown> {
  if (!Array.isArray(body) || body.some((id) => typeof id !== 'string')) {
    throw new DatasetError('INVALID_BODY', 'POST /rest/$entityset/$release takes a JSON array of entity set ids, like ["9718A30BF61343C796345F3BE5B01CE7"]');
  }
  const unknown: string[] = [];
  for (const id of body as string[]) if (!(await ds.entitySets.release(id))) unknown.push(id);
  if (unknown.length > 0) throw notFound(unknown.join('", "'));
  return { ok: true };
}

/** GET /rest/$info: the entity sets alive now (sessions come with a later version). */
export async function info(ds: Datastore): Promise<Json> {
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
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
