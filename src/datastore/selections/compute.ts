// Computations on a selection (ORDA's sum, average, min, max, count, distinct; REST's $compute
// and $distinct): one SQL aggregate over the selection's members, never a loop in JavaScript.

import type { DataClassModel } from '../../model/types.js';
import type { AttributePath, Condition } from '../../query/plan.js';
import { compileAggregate, compileDistinct, compileTextExtreme, jsonExtreme, type AggregateFn } from '../../sql/compiler/aggregates.js';
import type { Access } from '../access/access.js';

/** The entities a computation runs over: a selection's members, read through its access. */
export interface Members {
  readonly dataClass: DataClassModel;
  readonly where: Condition | null;
  readonly access: Access;
}

/** The aggregates of a path over a selection; text min/max by 4D's order (case and accents ignored). */
export async function aggregates(members: Members, path: AttributePath, fns: readonly AggregateFn[]): Promise<Record<string, unknown>> {
  const { dataClass: dc, where, access: { reader, restrict } } = members;
  const text = path.attr.type === 'string' && !path.json;
  const plain = fns.filter((f) => !(text && (f === 'min' || f === 'max')));
  const out: Record<string, unknown> = {};
  if (plain.length > 0) {
    const { sql, params } = compileAggregate(reader.dialect, dc, where, path, plain, restrict);
    const row = (await reader.get(sql, params)) ?? {};
    for (const f of plain) {
      const json = path.json !== undefined && (f === 'min' || f === 'max');
      out[f] = f === 'count' ? Number(row[f] ?? 0) : decode(members, path, json ? jsonExtreme(row, f, f === 'max') : row[f], f);
    }
  }
  for (const f of fns.filter((x) => text && (x === 'min' || x === 'max'))) {
    const { sql, params } = compileTextExtreme(reader.dialect, dc, where, path, f === 'max', restrict);
    out[f] = (await reader.get(sql, params))?.v ?? null;
  }
  return out;
}

/** The distinct values of a path in a selection, sorted, with paging ($skip, $top). */
export async function distinct(members: Members, path: AttributePath, skip = 0, top: number | null = null): Promise<unknown[]> {
  const { reader, restrict } = members.access;
  const { sql, params } = compileDistinct(reader.dialect, members.dataClass, members.where, path, top, skip, restrict);
  return (await reader.all(sql, params)).map((r) => decode(members, path, path.json ? jsonExtreme(r, 'v', false) : r.v, 'min'));
}

/** A value read back in its attribute's type (min/max of dates are dates); sums and averages stay numbers. */
function decode(members: Members, path: AttributePath, v: unknown, fn: AggregateFn): unknown {
  if (v === null || v === undefined) return fn === 'sum' ? 0 : null; // 4D: the sum of nothing is 0
  if (path.json || fn === 'sum' || fn === 'average' || fn === 'count') return typeof v === 'bigint' ? Number(v) : v;
  return members.access.reader.dialect.types.decode(path.attr.type, v, path.attr.dateOnly);
}
