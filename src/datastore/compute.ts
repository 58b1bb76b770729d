// Computations on a selection (ORDA's sum, average, min, max, count, distinct; REST's $compute
// and $distinct): one SQL aggregate over the selection's members, never a loop in JavaScript.

import { DatasetError } from '../errors/dataset-error.js';
import { NUMBER_TYPES } from '../model/types.js';
import type { AttributePath } from '../query/plan.js';
import { compileAggregate, compileDistinct, compileTextExtreme, type AggregateFn } from '../sql/compiler.js';
import type { EntitySelection } from './selection.js';

export type ComputeKeyword = AggregateFn | '$all';
export const COMPUTE_KEYWORDS: readonly ComputeKeyword[] = ['$all', 'count', 'sum', 'average', 'min', 'max'];

/** The answer of a $compute keyword: a bare value, or the object of `$all` keyed by the attribute name. */
export async function compute(selection: EntitySelection, path: AttributePath, keyword: ComputeKeyword, name: string): Promise<unknown> {
  const numeric = path.json !== undefined || NUMBER_TYPES.has(path.attr.type);
  if ((keyword === 'sum' || keyword === 'average') && !numeric) {
    throw new DatasetError('INVALID_OPTION', `${keyword} needs a number attribute; '${name}' is ${path.attr.type}`);
  }
  if (keyword === '$all') {
    const fns: AggregateFn[] = numeric ? ['count', 'sum', 'average', 'min', 'max'] : ['count', 'min', 'max'];
    const values = await aggregates(selection, path, fns);
    return { [name]: Object.fromEntries(fns.map((f) => [f, values[f]])) };
  }
  return (await aggregates(selection, path, [keyword]))[keyword];
}

/** The aggregates of a path over a selection; text min/max by 4D's order (case and accents ignored). */
export async function aggregates(selection: EntitySelection, path: AttributePath, fns: readonly AggregateFn[]): Promise<Record<string, unknown>> {
  const ds = selection.getDataClass().ds;
  const dc = selection.getDataClass().model;
  const where = selection.membersCondition();
  const text = path.attr.type === 'string' && !path.json;
  const plain = fns.filter((f) => !(text && (f === 'min' || f === 'max')));
  const out: Record<string, unknown> = {};
  if (plain.length > 0) {
    const { sql, params } = compileAggregate(ds.storage.dialect, dc, where, path, plain);
    const row = (await ds.storage.get(sql, params)) ?? {};
    for (const f of plain) out[f] = f === 'count' ? Number(row[f] ?? 0) : decode(selection, path, row[f], f);
  }
  for (const f of fns.filter((x) => text && (x === 'min' || x === 'max'))) {
    const { sql, params } = compileTextExtreme(ds.storage.dialect, dc, where, path, f === 'max');
    out[f] = (await ds.storage.get(sql, params))?.v ?? null;
  }
  return out;
}

/** The distinct values of a path in a selection, sorted, with paging ($skip, $top). */
export async function distinct(selection: EntitySelection, path: AttributePath, skip = 0, top: number | null = null): Promise<unknown[]> {
  const ds = selection.getDataClass().ds;
  const { sql, params } = compileDistinct(ds.storage.dialect, selection.getDataClass().model, selection.membersCondition(), path, top, skip);
  return (await ds.storage.all(sql, params)).map((r) => decode(selection, path, r.v, 'min'));
}

/** A value read back in its attribute's type (min/max of dates are dates); sums and averages stay numbers. */
function decode(selection: EntitySelection, path: AttributePath, v: unknown, fn: AggregateFn): unknown {
  if (v === null || v === undefined) return fn === 'sum' ? 0 : null; // 4D: the sum of nothing is 0
  if (path.json || fn === 'sum' || fn === 'average' || fn === 'count') return typeof v === 'bigint' ? Number(v) : v;
  return selection.getDataClass().ds.storage.dialect.decode(path.attr.type, v, path.attr.dateOnly);
}
