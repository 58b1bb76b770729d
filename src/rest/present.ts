// The answers that show entities, shared by reads, sets and function results: one entity, a page
// of a selection (with __COUNT and the global stamp), a page of a stored set. Each reads what it
// shows through the caller's access, in one snapshot when it takes more than one statement.

import { readGlobalStamp } from '../datastore/datastore.js';
import { entityClassOf, type Entity } from '../datastore/entity.js';
import type { KeyList } from '../datastore/entity-set-store.js';
import { countRelated, fetchRelated, type FetchedEntity } from '../datastore/fetch.js';
import { resolveProjection, type Projection } from '../datastore/projection.js';
import { accessOf, classOf, countWhere, pageOf, pageRowsOf, sourceOf, type EntitySelection } from '../datastore/selection.js';
import { WIRE } from '../config/wire.js';
import { DatasetError } from '../errors/dataset-error.js';
import { pageSize, type DataClassModel } from '../model/types.js';
import { queryPath, queryPlan } from '../query/describe.js';
import type { Paging, Shape } from './action.js';
import { REST_PREFIX } from './constants.js';
import type { Scope } from './scope.js';
import { lookerFetch, serializeLooker } from './looker.js';
import { rowWriterFor, targetsOf } from './row-writer.js';
import { collectionOf, serializeAsArray, serializeCollection, serializeEntity } from './serialize.js';

type Json = Record<string, unknown>;

/** What an answer shows of each entity, resolved as the caller sees the model. */
export function projectionFor(dc: DataClassModel, shape: Shape, scope: Scope): Projection {
  return resolveProjection(dc, { attributes: shape.attributes, expand: shape.expand }, scope.visible);
}

/** One entity, as a top-level answer (with __entityModel), or a one-element array with $asArray. */
export async function entityBody(scope: Scope, entity: Entity, shape: Shape, projection?: Projection): Promise<unknown> {
  const model = entityClassOf(entity).model;
  if (!scope.sees(model)) throw new DatasetError('UNKNOWN_DATACLASS', `The "${model.name}" dataclass cannot be found`);
  projection ??= projectionFor(model, shape, scope);
  const [fetched]: FetchedEntity[] = projection.related ? await fetchRelated(scope.core, [entity], projection, scope.access) : [{ entity, related: new Map() }];
  // the global stamp is only sent inside inline selections: read it only then
  const globalStamp = hasInlineSelection(projection) ? await readGlobalStamp(scope.access) : 0;
  if (shape.asArray) {
    await countRelated([fetched], projection, scope.access);
    return serializeAsArray([fetched], projection, { globalStamp });
  }
  return serializeEntity(fetched, projection, { globalStamp }, true);
}

function hasInlineSelection(p: Projection): boolean {
  return p.attributes.some((a) => a.kind === 'entities' || (a.kind === 'entity' && hasInlineSelection(a.sub)));
}

/** A page of a selection in the collection envelope (or a bare array with $asArray, or Looker Studio's table with $format=looker), with __queryPlan / __queryPath when asked. */
export async function pageBody(scope: Scope, selection: EntitySelection, paging: Paging, shape: Shape, plan?: { queryplan: boolean; querypath: boolean }): Promise<unknown> {
  const dc = classOf(selection);
  const model = dc.model;
  const projection = projectionFor(model, shape, scope);
  const access = accessOf(selection);
  const top = paging.top ?? pageSize(model);
  // the plain envelope of a projection the rows are enough for: written from them, no entities made
  const writer = shape.asArray || shape.format === 'looker' ? undefined : rowWriterFor(projection, dc, access.reader.dialect);
  let answer: Json;
  if (writer) {
    const [count, rows, globalStamp] = await Promise.all([selection.length, pageRowsOf(selection, paging.skip, top), readGlobalStamp(access)]);
    const targets = await targetsOf(writer, rows, access);
    answer = collectionOf(model, count, paging.skip, rows.map((row) => writer.write(row, targets)), { globalStamp });
  } else {
    const [count, entities, globalStamp] = await Promise.all([selection.length, pageOf(selection, paging.skip, top), readGlobalStamp(access)]);
    if (shape.format === 'looker') return serializeLooker(count, paging.skip, await fetchRelated(scope.core, entities, lookerFetch(projection), access), projection);
    const fetched = await fetchRelated(scope.core, entities, projection, access);
    if (shape.asArray) {
      await countRelated(fetched, projection, access);
      return serializeAsArray(fetched, projection, { globalStamp });
    }
    answer = serializeCollection(model, count, paging.skip, fetched, projection, { globalStamp });
  }
  const where = sourceOf(selection).where;
  if (where && plan?.queryplan) answer[WIRE.QUERY_PLAN] = queryPlan(where);
  if (where && plan?.querypath) {
    answer[WIRE.QUERY_PATH] = await queryPath(where, (w) => countWhere(selection, w));
    await scope.core.queryPaths.record(scope.caller, answer[WIRE.QUERY_PATH]); // for GET /rest/$querypath
  }
  return answer;
}

/** A page of a stored set, in the set's order: a dropped member reads {"__STAMP": 0} and still counts (reference §8.2). */
export async function setPageBody(scope: Scope, dc: DataClassModel, set: { id: string; keys: KeyList }, paging: Paging, shape: Shape, stored: boolean): Promise<Json> {
  const core = scope.core.classOf(dc);
  const projection = projectionFor(dc, shape, scope);
  const entities = await scope.core.sets.page(core, set.keys, paging.skip, paging.top ?? pageSize(dc), scope.access);
  const fetched = new Map((await fetchRelated(scope.core, entities.filter((e) => e !== null), shape.format === 'looker' ? lookerFetch(projection) : projection, scope.access)).map((f) => [f.entity, f]));
  if (shape.format === 'looker') {
    // a dropped member has no values: it is no row (it still counts, as in the JSON answer)
    return serializeLooker(set.keys.length, paging.skip, entities.filter((e) => e !== null).map((e) => fetched.get(e) as FetchedEntity), projection);
  }
  const globalStamp = await readGlobalStamp(scope.access);
  const list = entities.map((e) => (e ? serializeEntity(fetched.get(e) as FetchedEntity, projection, { globalStamp }) : { [WIRE.STAMP]: 0 }));
  return {
    ...(stored ? { [WIRE.ENTITY_SET]: setUri(dc, set.id) } : {}),
    [WIRE.ENTITY_MODEL]: dc.name,
    [WIRE.GLOBAL_STAMP]: globalStamp,
    [WIRE.COUNT]: set.keys.length,
    [WIRE.FIRST]: paging.skip,
    [WIRE.ENTITIES]: list,
    [WIRE.SENT]: list.length,
  };
}

function setUri(dc: DataClassModel, id: string): string {
  return `${REST_PREFIX}/${dc.name}/$entityset/${id}`;
}
