// Exports ($format=csv or ndjson, or Accept: text/csv): every entity a collection read or a stored
// set selects, as one streamed body, read a chunk of rows at a time (datastore/reads/export-read.ts) and
// written as text (export-format.ts). Everything that can be refused is refused before the first
// byte — the columns, the filter, the set, the first chunk read — and answered as the usual __ERROR.
// An export reads as long as its client takes chunks: each statement has the query time limit to
// itself, none shares the request's budget (storage/budget.ts).

import type { Action, Paging } from '../../plan/action.js';
import { narrow, resolveSet, selectionOf } from '../collections.js';
import { csvHeader, exportColumns, exportHeaders, ExportStream, rowsText, type ExportColumn, type ExportFormat } from '../../present/export-format.js';
import { file, type RestResponse } from '../../present/response.js';
import { setsOf, type Scope } from '../../scope/scope.js';
import { DatasetError } from '../../../errors/dataset-error.js';
import { type DataClassCore, type EntitySelection, keyChunks, type KeyList, type RowChunks, selectionChunks, withoutBudget } from '../../../datastore/index.js';

/** A collection (a dataclass, a relation's entities), narrowed and sorted: every member, or $skip/$top of them. */
export async function exportCollection(request: Scope, action: Extract<Action, { kind: 'readCollection' }>): Promise<RestResponse> {
  const scope = streaming(request);
  const { dc, shape } = action;
  const columns = exportColumns(scope, dc.model, shape, scope.access.reader.dialect);
  const selection = narrow(scope, (await selectionOf(scope, dc, action.source)) as EntitySelection, action.narrowing);
  return exportAnswer(scope, dc, shape.format as ExportFormat, columns, selectionChunks(selection, columns.map((c) => c.spec), action.paging));
}

/** A stored set (combined, cleaned, narrowed, sorted as a page of it would be): its members in its order. */
export async function exportSet(request: Scope, action: Extract<Action, { kind: 'readSet' }>): Promise<RestResponse> {
  const scope = streaming(request);
  const { dc, shape } = action;
  const columns = exportColumns(scope, dc.model, shape, scope.access.reader.dialect);
  const resolved = await resolveSet(scope, dc, action.set);
  if ('intersects' in resolved) throw new DatasetError('INVALID_OPTION', '$logicOperator=INTERSECT answers whether two sets share an entity (true or false): there is nothing to export; use AND for their common members');
  let keys = resolved.keys;
  if (action.narrowing.filter || action.narrowing.orderBy) {
    // (the set's keys are held already: the narrowed list is no larger)
    const sets = setsOf(scope);
    keys = (await sets.narrowed(keys, narrow(scope, sets.members(dc, keys), action.narrowing))).keys;
  }
  const chunks = keyChunks(dc, windowed(keys, action.paging), columns.map((c) => c.spec), scope.access);
  return exportAnswer(scope, dc, shape.format as ExportFormat, columns, chunks);
}

/** The scope an export reads with: its statements each within the query time limit, not the request's budget. */
function streaming(scope: Scope): Scope {
  return scope.access.budget === undefined ? scope : { ...scope, access: withoutBudget(scope.access) };
}

function windowed(keys: KeyList, paging: Paging): KeyList {
  if (paging.skip === 0 && paging.top === undefined) return keys;
  return keys.slice(paging.skip, paging.top === undefined ? undefined : paging.skip + paging.top);
}

/**
 * The answer: the first chunk is read now (an error there is still an __ERROR answer), the rest as
 * the client takes it. A HEAD reads the first chunk only (its headers are GET's; no body goes).
 */
async function exportAnswer(scope: Scope, dc: DataClassCore, format: ExportFormat, columns: readonly ExportColumn[], chunks: RowChunks): Promise<RestResponse> {
  const first = await chunks.next();
  const head = format === 'csv' ? csvHeader(columns) : '';
  const text = first === null ? head : head + rowsText(format, columns, first);
  let ended = first === null || scope.request.method === 'HEAD';
  const more = async (): Promise<string | null> => {
    if (ended) return null;
    const rows = await chunks.next();
    if (rows === null) {
      ended = true;
      return null;
    }
    return rowsText(format, columns, rows);
  };
  return file(200, exportHeaders(format, dc.model), new ExportStream(text, more));
}
