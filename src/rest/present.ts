// The answers that show entities, shared by reads, sets and function results: one entity, a page
// of a selection (with __COUNT and the global stamp), a page of a stored set. Each reads what it
// shows through the caller's access, in one snapshot when it takes more than one statement.

import { readGlobalStamp } from '../datastore/datastore.js';
import { entityClassOf, type Entity } from '../datastore/entity.js';
import type { KeyList } from '../datastore/entity-set-store.js';
import { countRelated, fetchRelated, InlineBudget, type FetchedEntity } from '../datastore/fetch.js';
import { resolveProjection, type Projection } from '../datastore/projection.js';
import { accessOf, classOf, countWhere, sourceOf, type EntitySelection } from '../datastore/selection.js';
import type { DataClassCore } from '../datastore/dataclass-core.js';
import { measurePage, readPageRows } from '../datastore/page-read.js';
import { AnswerBudget, measured, takeReadWhereIn } from '../datastore/answer-size.js';
import { KEYS_PER_QUERY } from '../config/limits.js';
import { WIRE } from '../config/wire.js';
import { DatasetError } from '../errors/dataset-error.js';
import { pageSize, type DataClassModel } from '../model/types.js';
import { queryPath, queryPlan } from '../query/describe.js';
import type { Paging, Shape } from './action.js';
import { REST_PREFIX } from './constants.js';
import type { Scope } from './scope.js';
import { lookerFetch, serializeLooker } from './looker.js';
import { rowWriterFor } from './row-writer.js';
import { json, jsonText, tagged, type RestResponse } from './response.js';
import { collectionTag, viewTag } from './etag.js';
import { collectionText, serializeAsArray, serializeCollection, serializeEntity } from './serialize.js';

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
  const [fetched]: FetchedEntity[] = projection.related ? await fetchRelated(scope.core, [entity], projection, scope.access, inlineBudget(scope)) : [{ entity, related: new Map() }];
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

/** What a page of a selection reads: its $queryplan and $querypath too. */
export interface PagePlan {
  readonly queryplan: boolean;
  readonly querypath: boolean;
}

/**
 * Whether the page answer of a selection of `dc` reads more than the one statement of its page
 * (relations inline in entities, $asArray's counts, a query path's counts): it is then read in
 * a snapshot, so that all it reads is of one state of the data.
 */
export function pageReadsMore(scope: Scope, dc: DataClassCore, shape: Shape, plan?: PagePlan): boolean {
  if (plan?.querypath || shape.asArray || shape.format === 'looker') return true;
  const projection = projectionFor(dc.model, shape, scope);
  return !rowWriterFor(projection, dc, scope.access.reader.dialect) && projection.related;
}

/**
 * Whether a page of `n` members of a set of `dc` reads more than one statement (no row writer for
 * its projection: entities and what they inline; or more members than one statement's key list):
 * it is then read in a snapshot, as a selection's page is.
 */
export function setPageReadsMore(scope: Scope, dc: DataClassCore, shape: Shape, n: number): boolean {
  if (shape.format === 'looker' || n > KEYS_PER_QUERY) return true;
  return !rowWriterFor(projectionFor(dc.model, shape, scope), dc, scope.access.reader.dialect);
}

/** A page of a selection in the collection envelope (or a bare array with $asArray, or Looker Studio's table with $format=looker), with __queryPlan / __queryPath when asked. */
export async function pageAnswer(scope: Scope, selection: EntitySelection, paging: Paging, shape: Shape, plan?: PagePlan, tag = false): Promise<RestResponse> {
  const answer = await untaggedPage(scope, selection, paging, shape, plan);
  return tag ? tagged(answer.response, collectionTag(answer.globalStamp, viewTag(scope, projectionFor(classOf(selection).model, shape, scope)))) : answer.response;
}

async function untaggedPage(scope: Scope, selection: EntitySelection, paging: Paging, shape: Shape, plan?: PagePlan): Promise<{ response: RestResponse; globalStamp: number }> {
  const dc = classOf(selection);
  const model = dc.model;
  const projection = projectionFor(model, shape, scope);
  const access = accessOf(selection);
  const top = paging.top ?? pageSize(model);
  // the plain envelope of a projection the rows are enough for: written as text from them, no entities made
  const writer = shape.asArray || shape.format === 'looker' ? undefined : rowWriterFor(projection, dc, access.reader.dialect);
  const budget = inlineBudget(scope);
  // (a page that could be big is measured before it is read: answer-size.ts)
  await measurePage(selection, paging.skip, top, writer ? writer.columns : dc.columns, budget.bytes);
  if (writer) {
    const { rows, count, globalStamp } = await readPageRows(selection, paging.skip, top, writer.columns);
    const entities = new Array<string>(rows.length);
    for (let i = 0; i < rows.length; i++) entities[i] = writer.write(rows[i]);
    let tail = '';
    for (const [name, value] of await planParts(scope, selection, plan)) tail += `,${JSON.stringify(name)}:${JSON.stringify(value)}`;
    return { response: jsonText(collectionText(model, count, paging.skip, entities, { globalStamp }, tail)), globalStamp };
  }
  const { rows, count, globalStamp } = await readPageRows(selection, paging.skip, top, dc.columns);
  const entities = rows.map((row) => dc.entityFromValues(row, access));
  if (shape.format === 'looker') return { response: json(serializeLooker(count, paging.skip, await fetchRelated(scope.core, entities, lookerFetch(projection), access, budget), projection)), globalStamp };
  const fetched = await fetchRelated(scope.core, entities, projection, access, budget);
  if (shape.asArray) {
    await countRelated(fetched, projection, access);
    return { response: json(serializeAsArray(fetched, projection, { globalStamp })), globalStamp };
  }
  const answer = serializeCollection(model, count, paging.skip, fetched, projection, { globalStamp });
  for (const [name, value] of await planParts(scope, selection, plan)) answer[name] = value;
  return { response: json(answer), globalStamp };
}

/** __queryPlan and __queryPath, when asked and the selection has a condition (the path is recorded for GET /rest/$querypath). */
async function planParts(scope: Scope, selection: EntitySelection, plan: PagePlan | undefined): Promise<[string, unknown][]> {
  const where = sourceOf(selection).where;
  if (!where || !plan || (!plan.queryplan && !plan.querypath)) return [];
  const parts: [string, unknown][] = [];
  if (plan.queryplan) parts.push([WIRE.QUERY_PLAN, queryPlan(where)]);
  if (plan.querypath) {
    const path = await queryPath(where, (w) => countWhere(selection, w));
    await scope.core.queryPaths.record(scope.caller, path);
    parts.push([WIRE.QUERY_PATH, path]);
  }
  return parts;
}

/** A set's members for a page: all of them, or (`from`, `size`) those from `from` on of a set of `size`. */
export interface SetMembers {
  readonly id: string;
  readonly keys: KeyList;
  readonly from?: number;
  readonly size?: number;
}

/** The members of a page of `set`. */
function pageKeys(set: SetMembers, paging: Paging, dc: DataClassModel): KeyList {
  const at = paging.skip - (set.from ?? 0);
  return set.keys.slice(Math.max(0, at), Math.max(0, at + (paging.top ?? pageSize(dc))));
}

/** A page of a stored set, in the set's order: a dropped member reads {"__STAMP": 0} and still counts (reference §8.2). */
export async function setPageAnswer(scope: Scope, dc: DataClassModel, set: SetMembers, paging: Paging, shape: Shape, stored: boolean): Promise<RestResponse> {
  const core = scope.core.classOf(dc);
  const projection = projectionFor(dc, shape, scope);
  const writer = shape.format === 'looker' ? undefined : rowWriterFor(projection, core, scope.access.reader.dialect);
  if (writer) {
    // written from rows: one statement reads the page's members (and the global stamp)
    const keys = Array.from(pageKeys(set, paging, dc) as ArrayLike<unknown>);
    if (measured(keys.length, writer.columns)) await takeReadWhereIn(inlineBudget(scope).bytes, scope.access, dc, dc.key, keys, writer.columns, setPageWhat(keys.length, dc));
    const read = await core.valuesOfKeys(keys, writer.columns, scope.access);
    const byKey = new Map(read.rows.map((row) => [writer.keyOf(row), row]));
    const globalStamp = read.globalStamp ?? (await readGlobalStamp(scope.access));
    const list = keys.map((k) => {
      const row = byKey.get(k);
      return row ? writer.write(row) : DROPPED_MEMBER;
    });
    const head = stored ? `${JSON.stringify(WIRE.ENTITY_SET)}:${JSON.stringify(setUri(dc, set.id))},` : '';
    return jsonText(collectionText(dc, set.size ?? set.keys.length, paging.skip, list, { globalStamp }, '', head));
  }
  return json(await setPageBody(scope, dc, set, paging, shape, stored, projection));
}

/** A dropped member of a set, as a page shows it. */
const DROPPED_MEMBER = JSON.stringify({ [WIRE.STAMP]: 0 });

async function setPageBody(scope: Scope, dc: DataClassModel, set: SetMembers, paging: Paging, shape: Shape, stored: boolean, projection: Projection): Promise<Json> {
  const core = scope.core.classOf(dc);
  const keys = pageKeys(set, paging, dc);
  const budget = inlineBudget(scope);
  if (measured(keys.length, core.columns)) await takeReadWhereIn(budget.bytes, scope.access, dc, dc.key, Array.from(keys as ArrayLike<unknown>), core.columns, setPageWhat(keys.length, dc));
  const entities = await scope.core.sets.page(core, keys, 0, keys.length, scope.access);
  const fetched = new Map((await fetchRelated(scope.core, entities.filter((e) => e !== null), shape.format === 'looker' ? lookerFetch(projection) : projection, scope.access, budget)).map((f) => [f.entity, f]));
  if (shape.format === 'looker') {
    // a dropped member has no values: it is no row (it still counts, as in the JSON answer)
    return serializeLooker(set.size ?? set.keys.length, paging.skip, entities.filter((e) => e !== null).map((e) => fetched.get(e) as FetchedEntity), projection);
  }
  const globalStamp = await readGlobalStamp(scope.access);
  const list = entities.map((e) => (e ? serializeEntity(fetched.get(e) as FetchedEntity, projection, { globalStamp }) : { [WIRE.STAMP]: 0 }));
  return {
    ...(stored ? { [WIRE.ENTITY_SET]: setUri(dc, set.id) } : {}),
    [WIRE.ENTITY_MODEL]: dc.name,
    [WIRE.GLOBAL_STAMP]: globalStamp,
    [WIRE.COUNT]: set.size ?? set.keys.length,
    [WIRE.FIRST]: paging.skip,
    [WIRE.ENTITIES]: list,
    [WIRE.SENT]: list.length,
  };
}

function setUri(dc: DataClassModel, id: string): string {
  return `${REST_PREFIX}/${dc.name}/$entityset/${id}`;
}

/** The related entities one answer may inline (--max-inlined-entities), counted as it is read, and the bytes of values it may hold (--max-answer-size). */
function inlineBudget(scope: Scope): InlineBudget {
  return new InlineBudget(scope.services.maxInlinedEntities, new AnswerBudget(scope.services.maxAnswerBytes));
}

/** What a page of a set reads, as a refusal names it. */
function setPageWhat(n: number, dc: DataClassModel): string {
  return `a page of ${n} ${dc.name} entities of an entity set`;
}
