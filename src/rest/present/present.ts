// The answers that show entities, shared by reads, sets and function results: one entity, a page
// of a selection (with __COUNT and the global stamp), a page of a stored set. Each reads what it
// shows through the caller's access, in one snapshot when it takes more than one statement. Its
// values are measured before they are read, or counted as they are (answer-size.ts), within the
// answer's size and its share of the server's answers in flight (answer-flight.ts: an AnswerHold,
// let go if the answer fails); its text is made a slice at a time (answer-stream.ts).

import { AnswerBudget, countRelated, type DataClassCore, type Entity, entityClassOf, type FetchedEntity, fetchRelated, hasInlineSelection, InlineBudget, type KeyList, type Page, type PageRequest, type Projection, readGlobalStamp, readSetPage, resolveProjection } from '../../datastore/index.js';
import { WIRE } from '../../config/wire.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { pageSize, type DataClassModel } from '../../model/types.js';
import type { Paging, Shape } from '../plan/action.js';
import type { AnswerHold } from '../scope/answer-flight.js';
import { listPieces } from './answer-stream.js';
import { REST_PREFIX } from '../request/constants.js';
import type { Scope } from '../scope/scope.js';
import { lookerFetch, serializeLooker } from './looker.js';
import { rowWriterFor, type RowWriter } from './row-writer.js';
import { holding, json, jsonPieces, tagged, type RestResponse } from './response.js';
import { collectionTag, viewTag } from '../request/etag.js';
import { asArrayEntity, collectionHead, collectionTail, entityPieces, serializeAsArray, serializeEntity, type SerializeContext } from './serialize.js';

/** What an answer shows of each entity, resolved as the caller sees the model. */
export function projectionFor(dc: DataClassModel, shape: Shape, scope: Scope): Projection {
  return resolveProjection(dc, { attributes: shape.attributes, expand: shape.expand }, scope.visible);
}

/** One entity, as a top-level answer (with __entityModel), or a one-element array with $asArray: as a value to send. */
export async function entityBody(scope: Scope, entity: Entity, shape: Shape, projection?: Projection): Promise<unknown> {
  return answering(scope, async (budget) => {
    const { fetched, projection: p, ctx } = await fetchEntity(scope, entity, shape, budget, projection);
    return shape.asArray ? serializeAsArray([fetched], p, ctx) : serializeEntity(fetched, p, ctx, true);
  });
}

/** One entity as entityBody shows it, as an answer: its text made a slice at a time (an entity may inline thousands). */
export async function entityResponse(scope: Scope, entity: Entity, shape: Shape, projection?: Projection): Promise<RestResponse> {
  return answering(scope, async (budget, hold) => {
    const { fetched, projection: p, ctx } = await fetchEntity(scope, entity, shape, budget, projection);
    return shape.asArray ? json(serializeAsArray([fetched], p, ctx)) : jsonPieces(entityPieces(fetched, p, ctx, true), hold);
  }, true);
}

/** What an entity answer shows of `entity`: its related entities and calculated values read, counted within `budget`. */
async function fetchEntity(scope: Scope, entity: Entity, shape: Shape, budget: InlineBudget, projection?: Projection): Promise<{ fetched: FetchedEntity; projection: Projection; ctx: SerializeContext }> {
  const model = entityClassOf(entity).model;
  if (!scope.sees(model)) throw new DatasetError('UNKNOWN_DATACLASS', `The "${model.name}" dataclass cannot be found`);
  const p = projection ?? projectionFor(model, shape, scope);
  const [fetched]: FetchedEntity[] = p.related ? await fetchRelated(scope.core, [entity], p, scope.access, budget) : [{ entity, related: new Map() }];
  // the global stamp is only sent inside inline selections: read it only then
  const globalStamp = hasInlineSelection(p) ? await readGlobalStamp(scope.access) : 0;
  if (shape.asArray) await countRelated([fetched], p, scope.access);
  return { fetched, projection: p, ctx: { globalStamp } };
}

/** What a page of a selection reads: its $queryplan and $querypath too. */
export interface PagePlan {
  readonly queryplan: boolean;
  readonly querypath: boolean;
}

/** What the core is asked for a page of a selection of `dc` (readPage), and the row writer that writes it when its rows are enough. */
export function pageRequest(scope: Scope, dc: DataClassCore, paging: Paging, shape: Shape, plan?: PagePlan): { request: PageRequest; writer?: RowWriter } {
  const projection = projectionFor(dc.model, shape, scope);
  const looker = shape.format === 'looker';
  // the plain envelope of a projection the rows are enough for: written as text from them, no entities made
  const writer = shape.asArray || looker ? undefined : rowWriterFor(projection, dc, scope.access.reader.dialect);
  // ($asArray and Looker Studio's table carry no __queryPlan / __queryPath)
  const parts = shape.asArray || looker ? undefined : plan;
  const request: PageRequest = {
    skip: paging.skip, top: paging.top ?? pageSize(dc.model), projection, rowColumns: writer?.columns,
    fetch: looker ? lookerFetch(projection) : undefined, countRelated: shape.asArray,
    queryplan: parts?.queryplan, querypath: parts?.querypath, session: scope.session,
  };
  return { request, writer };
}

/**
 * A page of a selection of `dc` in the collection envelope (or a bare array with $asArray, or
 * Looker Studio's table with $format=looker), with __queryPlan / __queryPath when asked: the page
 * as `read` has the core read it (readPage, readPageOf), within the answer's budgets. (`read`
 * asks for the page's request when it needs it: an error of its attributes comes after those
 * of a source read first.)
 */
export async function pageAnswer(scope: Scope, dc: DataClassCore, paging: Paging, shape: Shape, plan: PagePlan | undefined, read: (request: () => PageRequest, budget: InlineBudget) => Promise<Page>, tag = false): Promise<RestResponse> {
  let made: { request: PageRequest; writer?: RowWriter } | undefined;
  const request = () => (made ??= pageRequest(scope, dc, paging, shape, plan)).request;
  let globalStamp = 0;
  const response = await answering(scope, async (budget, hold) => {
    const page = await read(request, budget);
    globalStamp = page.globalStamp;
    return pageResponse(dc.model, page, request().projection, paging, shape, made?.writer, hold);
  }, true);
  return tag ? tagged(response, collectionTag(globalStamp, viewTag(scope, request().projection))) : response;
}

/** A page the core read, as its answer. */
function pageResponse(model: DataClassModel, page: Page, projection: Projection, paging: Paging, shape: Shape, writer: RowWriter | undefined, hold: AnswerHold): RestResponse {
  const { count, globalStamp } = page;
  let tail = '';
  if (page.plan.queryPlan !== undefined) tail += `,${JSON.stringify(WIRE.QUERY_PLAN)}:${JSON.stringify(page.plan.queryPlan)}`;
  if (page.plan.queryPath !== undefined) tail += `,${JSON.stringify(WIRE.QUERY_PATH)}:${JSON.stringify(page.plan.queryPath)}`;
  if ('rows' in page) {
    const rowWriter = writer as RowWriter;
    const rows = page.rows as (readonly unknown[] | undefined)[];
    return jsonPieces(listPieces(collectionHead(model, count, paging.skip, { globalStamp }), rows, (row) => rowWriter.write(row), collectionTail(rows.length, tail)), hold);
  }
  const fetched = page.entities;
  if (shape.format === 'looker') return json(serializeLooker(count, paging.skip, fetched, projection));
  const ctx = { globalStamp };
  if (shape.asArray) return jsonPieces(listPieces('[', fetched, (f) => JSON.stringify(asArrayEntity(f, projection, ctx)), ']'), hold);
  return jsonPieces(listPieces(collectionHead(model, count, paging.skip, ctx), fetched, (f) => entityPieces(f, projection, ctx), collectionTail(fetched.length, tail)), hold);
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
  return answering(scope, (budget, hold) => setPage(scope, dc, set, paging, shape, stored, budget, hold), true);
}

async function setPage(scope: Scope, dc: DataClassModel, set: SetMembers, paging: Paging, shape: Shape, stored: boolean, budget: InlineBudget, hold: AnswerHold): Promise<RestResponse> {
  const core = scope.core.classOf(dc);
  const projection = projectionFor(dc, shape, scope);
  const looker = shape.format === 'looker';
  const writer = looker ? undefined : rowWriterFor(projection, core, scope.access.reader.dialect);
  const head = stored ? `${JSON.stringify(WIRE.ENTITY_SET)}:${JSON.stringify(setUri(dc, set.id))},` : '';
  const size = set.size ?? set.keys.length;
  const page = await readSetPage(scope.core, core, {
    keys: pageKeys(set, paging, dc), rows: writer && { columns: writer.columns, keyOf: writer.keyOf },
    fetch: looker ? lookerFetch(projection) : projection, globalStamp: !looker,
  }, scope.access, budget);
  const ctx = { globalStamp: page.globalStamp };
  if ('rows' in page) {
    const rowWriter = writer as RowWriter;
    const member = (row: readonly unknown[] | undefined): string => (row ? rowWriter.write(row) : DROPPED_MEMBER);
    return jsonPieces(listPieces(collectionHead(dc, size, paging.skip, ctx, head), page.rows, member, collectionTail(page.rows.length)), hold);
  }
  const { entities } = page;
  // a dropped member has no values: it is no row of Looker Studio's table (it still counts, as in the JSON answer)
  if (looker) return json(serializeLooker(size, paging.skip, entities.filter((f) => f !== null), projection));
  const member = (f: FetchedEntity | null) => (f ? entityPieces(f, projection, ctx) : DROPPED_MEMBER);
  return jsonPieces(listPieces(collectionHead(dc, size, paging.skip, ctx, head), entities, member, collectionTail(entities.length)), hold);
}

/** A dropped member of a set, as a page shows it. */
const DROPPED_MEMBER = JSON.stringify({ [WIRE.STAMP]: 0 });

function setUri(dc: DataClassModel, id: string): string {
  return `${REST_PREFIX}/${dc.name}/$entityset/${id}`;
}

/**
 * Makes an answer within its budgets: the related entities it may inline (--max-inlined-entities),
 * counted as it is read, and the bytes of values it may hold (--max-answer-size), reserved in the
 * server's answers in flight as they are counted (its hold: 503 when they do not fit, before the
 * rows are read). The hold goes with the answer when it reserved anything (`carried`: the answer
 * is a response) and is let go if making it fails, or once a value is made (entityBody's).
 */
export async function answering<T>(scope: Scope, make: (budget: InlineBudget, hold: AnswerHold) => Promise<T>, carried = false): Promise<T> {
  const hold = scope.services.answers.open(scope.request);
  const budget = new InlineBudget(scope.services.maxInlinedEntities, new AnswerBudget(scope.services.maxAnswerBytes, (bytes) => hold.reserve(bytes)));
  let made: T;
  try {
    made = await make(budget, hold);
  } catch (e) {
    hold.release();
    throw e;
  }
  if (carried && hold.inFlight) return holding(made as RestResponse, hold) as T;
  hold.release();
  return made;
}
