// The size of an answer before it is read: the bytes the variable-width values (texts, objects)
// of the rows a SelectSpec selects take, as the engine keeps them (no value is read), in all or
// per group (datastore/reads/answer-size.ts checks them against the answer's budget).

import type { StorageAttribute } from '../../model/types.js';
import type { ColumnSpec, RowColumnSpec, RowFilter, SelectSpec } from '../../query/plan.js';
import type { Dialect } from '../dialect.js';
import type { CompiledSql } from './builder.js';
import { SelectBuilder } from './selects.js';

/**
 * Whether a column's values have no fixed width (texts, objects): what an answer's size depends
 * on (numbers, dates, booleans, keys and the versions of pictures and blobs are a few bytes each).
 */
export function variableWidth(spec: ColumnSpec): boolean {
  if (spec.kind === 'joined') return variableWidth(spec.column);
  if (spec.kind !== 'storage' && spec.kind !== 'alias') return false;
  const last = spec.kind === 'alias' ? spec.attr.steps[spec.attr.steps.length - 1] : spec.attr;
  return last.kind === 'storage' && (last.type === 'string' || last.type === 'object');
}

/** A SELECT whose variable-width columns are their values' sizes in bytes (0 for null), under their own names: `measured` lists those names. */
class SizeBuilder extends SelectBuilder {
  readonly measured: string[] = [];

  /** `kept`: an attribute whose own column is selected as it is (the one sizes are grouped by) */
  constructor(d: Dialect, restrict: RowFilter | null, readonly kept?: StorageAttribute) {
    super(d, restrict);
  }

  override rowColumn(table: string, spec: RowColumnSpec, prefix: string): string {
    const asIs = spec.kind === 'storage' && prefix === '' && spec.attr === this.kept;
    if (asIs || !variableWidth(spec) || (spec.kind !== 'storage' && spec.kind !== 'alias')) return super.rowColumn(table, spec, prefix);
    const value = spec.kind === 'storage' ? this.col(table, spec.attr.column) : this.aliasValue(table, spec.attr);
    const name = this.d.sql.quote(prefix + spec.attr.name);
    this.measured.push(name);
    // (the size of the stored text, not the text)
    return `COALESCE(${this.d.sql.storedBytes(value)}, 0) AS ${name}`;
  }
}

/**
 * The bytes the variable-width values of the rows `spec` selects take (rows `n`), in one row, or
 * one row per value of `groupBy` (rows `g`, `n`; `groupBy` must be among spec's columns): what an
 * answer checks before it reads rows that could be too big to hold (datastore/reads/answer-size.ts).
 * No value is read: only the sizes the engine keeps of them. `unique`: `groupBy`'s values are
 * the rows' own (a key): one row each, no grouping (no sort).
 */
export function compileSelectSize(d: Dialect, spec: SelectSpec, restrict: RowFilter | null, groupBy?: StorageAttribute, unique = false): CompiledSql {
  const b = new SizeBuilder(d, restrict, groupBy);
  const inner = b.select(spec);
  const total = b.measured.length > 0 ? b.measured.map((n) => `q.${n}`).join(' + ') : '0';
  const group = groupBy ? `q.${d.sql.quote(groupBy.name)}` : '';
  if (group && unique) return { sql: `SELECT ${group} AS g, ${total} AS n FROM (${inner}) q`, params: b.params };
  const sql = `SELECT ${group ? `${group} AS g, ` : ''}COALESCE(SUM(${total}), 0) AS n FROM (${inner}) q${group ? ` GROUP BY ${group}` : ''}`;
  return { sql, params: b.params };
}
