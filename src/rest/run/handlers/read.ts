// Reads: a page of a collection (a dataclass, a relation followed from an entity), one entity,
// the entity a relation leads to. Everything about data is asked of the datastore core.

import type { Action } from '../../plan/action.js';
import { findEntity, findValues, follow, narrow, selectionOf } from '../collections.js';
import { rowWriterFor, type RowWriter } from '../../present/row-writer.js';
import { entityResponse, pageAnswer, projectionFor } from '../../present/present.js';
import { jsonText, tagged, type RestResponse } from '../../present/response.js';
import { entityTag, reachesPastRow, viewTag } from '../../request/etag.js';
import { type Access, type DataClassCore, type Entity, type EntitySelection, type Projection, readGlobalStamp, readPageOf } from '../../../datastore/index.js';
import type { ColumnSpec } from '../../../query/plan.js';
import { inSnapshot, type Scope } from '../../scope/scope.js';

/** A page of a collection: in one statement when its projection is written from rows (see present.ts), else in a snapshot (the core's readPageOf). */
export function readCollection(scope: Scope, action: Extract<Action, { kind: 'readCollection' }>): Promise<RestResponse> {
  // a relation followed or a stored set is read first: the page must see the same state. A page
  // of $asArray, $format=looker or $querypath reads in a snapshot whatever its projection: its
  // selection is made first there too, so that a $filter mistake is answered before an
  // $attributes one (as it was before readPageOf: the plain envelope judges its attributes first)
  const { shape, plan } = action;
  const sourceReads = action.source.kind !== 'all' || shape.asArray || shape.format === 'looker' || plan.querypath;
  const select = async (access: Access) => {
    const s = access === scope.access ? scope : { ...scope, access };
    return narrow(s, (await selectionOf(s, action.dc, action.source)) as EntitySelection, action.narrowing);
  };
  return pageAnswer(scope, action.dc, action.paging, shape, plan, (request, budget) => readPageOf(scope.core, scope.access, select, request, budget, sourceReads), true);
}

/** One entity: read alone (the hottest path), or in one snapshot with what its projection inlines. */
export async function readEntity(scope: Scope, action: Extract<Action, { kind: 'readEntity' }>): Promise<RestResponse> {
  let projection: Projection;
  try {
    projection = projectionFor(action.dc.model, action.shape, scope);
  } catch (e) {
    // the entity first, then what is asked of it (a missing entity is 1542 whatever the attributes)
    await findEntity(scope, action.dc, action.selector);
    throw e;
  }
  // a key and a projection one row is enough for: the row written out, no entity made
  if (action.selector.kind === 'key' && !action.shape.asArray) {
    const writer = rowWriterFor(projection, action.dc, scope.access.reader.dialect);
    if (writer) return rowAnswer(scope, action.dc, action.selector.key, writer, projection);
  }
  if (projection.related) return inSnapshot(scope, (s) => entityAnswer(s, action, projection));
  return entityAnswer(scope, action, projection);
}

/** A writer's columns and the global stamp after them: what a by-key read of a projection reaching past its row selects (its tag needs the global stamp). */
const withGlobalStamp = new WeakMap<RowWriter, readonly ColumnSpec[]>();

async function rowAnswer(scope: Scope, dc: DataClassCore, key: string, writer: RowWriter, projection: Projection): Promise<RestResponse> {
  let columns = writer.columns;
  const past = reachesPastRow(projection);
  if (past) {
    columns = withGlobalStamp.get(writer) ?? [...writer.columns, { kind: 'globalStamp' }];
    withGlobalStamp.set(writer, columns);
  }
  const row = await findValues(scope, dc, key, columns);
  const globalStamp = past ? Number(row[writer.columns.length]) : undefined;
  return jsonText(writer.write(row, true), 200, entityTag(writer.stampOf(row), writer.keyOf(row), writer.timestampOf(row), globalStamp, viewTag(scope, projection)));
}

async function entityAnswer(scope: Scope, action: Extract<Action, { kind: 'readEntity' }>, projection: Projection): Promise<RestResponse> {
  // (read before the entity when they are two statements: a tag never names a state newer than the answer)
  const globalStamp = reachesPastRow(projection) ? await readGlobalStamp(scope.access) : undefined;
  const entity = await findEntity(scope, action.dc, action.selector);
  const answer = await entityResponse(scope, entity, action.shape, projection);
  return tagged(answer, entityTag(entity.getStamp(), entity.getKey(), entity.getTimeStamp().getTime(), globalStamp, viewTag(scope, projection)));
}

export async function readRelation(scope: Scope, action: Extract<Action, { kind: 'readRelation' }>): Promise<RestResponse> {
  return entityResponse(scope, (await follow(scope, action.step)) as Entity, action.shape);
}
