// $compute and $distinct: /rest/{dataClass}/{attribute}?$compute=sum (on a filtered collection, a
// relation, a stored set too). One SQL aggregate in the core; dates are sent as in entities.

import { aggregates, distinct, type EntitySelection, membersOf } from '../../../datastore/index.js';
import { NUMBER_TYPES } from '../../../model/types.js';
import { resolveValuePath } from '../../../query/path.js';
import type { AttributePath } from '../../../query/plan.js';
import type { AggregateFn } from '../../../sql/compiler/aggregates.js';
import { DatasetError } from '../../../errors/dataset-error.js';
import type { Action } from '../../plan/action.js';
import { narrow, selectionOf } from '../collections.js';
import { json, type RestResponse } from '../../present/response.js';
import { inSnapshot, type Scope } from '../../scope/scope.js';
import { formatDate } from '../../present/serialize.js';

type Source = Extract<Action, { kind: 'compute' | 'distinct' }>;

async function members(scope: Scope, action: Source): Promise<{ selection: EntitySelection; path: AttributePath } | { intersects: boolean }> {
  const found = await selectionOf(scope, action.dc, action.source);
  if ('intersects' in found) return found;
  const selection = narrow(scope, found, action.narrowing);
  return { selection, path: resolveValuePath(action.dc.model, action.attribute, scope.visible) };
}

/** $compute: one aggregate statement over a dataclass's selection needs no snapshot; a relation or a set read first, or a text's min or max (a statement each), are read in one. */
export function compute(scope: Scope, action: Extract<Action, { kind: 'compute' }>): Promise<RestResponse> {
  if (action.source.kind === 'all' && !textExtremes(scope, action)) return computeAnswer(scope, action);
  return inSnapshot(scope, (s) => computeAnswer(s, action));
}

/** The computation reads a text's min or max (or its attribute path does not resolve: the answer tells, in a snapshot as before). */
function textExtremes(scope: Scope, action: Extract<Action, { kind: 'compute' }>): boolean {
  if (action.keyword !== '$all' && action.keyword !== 'min' && action.keyword !== 'max') return false;
  try {
    const path = resolveValuePath(action.dc.model, action.attribute, scope.visible);
    return path.attr.type === 'string' && !path.json;
  } catch {
    return true;
  }
}

async function computeAnswer(scope: Scope, action: Extract<Action, { kind: 'compute' }>): Promise<RestResponse> {
  const m = await members(scope, action);
  if ('intersects' in m) return json(m.intersects);
  const { selection, path } = m;
  const numeric = path.json !== undefined || NUMBER_TYPES.has(path.attr.type);
  const keyword = action.keyword;
  if ((keyword === 'sum' || keyword === 'average') && !numeric) {
    throw new DatasetError('INVALID_OPTION', `${keyword} needs a number attribute; '${action.attribute}' is ${path.attr.type}`);
  }
  const wire = toWire(path);
  if (keyword !== '$all') return json(wire((await aggregates(membersOf(selection), path, [keyword]))[keyword]));
  const fns: AggregateFn[] = numeric ? ['count', 'sum', 'average', 'min', 'max'] : ['count', 'min', 'max'];
  const values = await aggregates(membersOf(selection), path, fns);
  return json({ [action.attribute]: Object.fromEntries(fns.map((f) => [f, wire(values[f])])) });
}

/** $distinct: $skip and $top apply to the array (reference §3.7). */
export async function distinctValues(scope: Scope, action: Extract<Action, { kind: 'distinct' }>): Promise<RestResponse> {
  const m = await members(scope, action);
  if ('intersects' in m) return json(m.intersects);
  return json((await distinct(membersOf(m.selection), m.path, action.paging.skip, action.paging.top ?? null)).map(toWire(m.path)));
}

/** A computed value as the answer sends it: dates as in entities (date-only ones as d!m!yyyy). */
function toWire(path: AttributePath): (v: unknown) => unknown {
  return (v) => (v instanceof Date ? formatDate(v, path.attr.dateOnly) : v);
}
