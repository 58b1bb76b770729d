// The SELECT of a SelectSpec: its columns (the entity's, aliases, related keys, the joined N→1
// entities of a page, a page's total, the global stamp and data version), the LEFT JOINs those
// joined entities need, the WHERE, the sort (text by its fold, JSON values by class), paging,
// and the top rows per group (perGroup).

import type { RelatedEntityAttribute } from '../../model/types.js';
import type { ColumnSpec, OrderTerm, RowColumnSpec, SelectSpec } from '../../query/plan.js';
import { GLOBAL_STAMP_TABLE, STAMP_COLUMN, TIMESTAMP_COLUMN } from '../hidden-columns.js';
import type { Dialect } from '../dialect.js';
import { ConditionBuilder } from './conditions.js';

/** The table alias of each joined N→1 path of a SELECT, by pathName(). */
type Joins = Map<string, string>;

/** The names of an N→1 path's steps, dotted: a joined column's name begins with it. */
function pathName(via: readonly RelatedEntityAttribute[]): string {
  return via.map((r) => r.name).join('.');
}

/** The names of the columns a page reads besides the entity's (ColumnSpec total, globalStamp, dataVersion). */
export const TOTAL_COLUMN = '__dataset_total';
export const GLOBAL_STAMP_COLUMN = '__dataset_global_stamp';
export const DATA_VERSION_COLUMN = '__dataset_version';

/** The builder of every statement (statements.ts, aggregates.ts, sizes.ts). */
export class SelectBuilder extends ConditionBuilder {
  /** A column of the SELECT of `spec` from `table` (its joins: `joins`, by path). */
  column(table: string, spec: ColumnSpec, select: SelectSpec, joins: Joins): string {
    switch (spec.kind) {
      case 'relatedKey': {
        const target = spec.via[spec.via.length - 1].target;
        return `${this.chain(table, spec.via, target.key.column)} AS ${this.d.sql.quote(`${pathName(spec.via)}.${target.key.name}`)}`;
      }
      case 'joined':
        return this.rowColumn(joins.get(pathName(spec.via)) as string, spec.column, `${pathName(spec.via)}.`);
      case 'total': {
        const t = this.alias();
        return `(SELECT COUNT(*) FROM ${this.d.sql.quote(select.dataClass.table)} ${t}${this.where(select.dataClass, t, select.where)}) AS ${this.d.sql.quote(TOTAL_COLUMN)}`;
      }
      case 'globalStamp':
        return `(${this.d.schema.globalStamp(this.d.sql.quote(GLOBAL_STAMP_TABLE)).read}) AS ${this.d.sql.quote(GLOBAL_STAMP_COLUMN)}`;
      case 'dataVersion':
        return `${this.d.concurrency.dataVersion(this.d.sql.quote(GLOBAL_STAMP_TABLE))} AS ${this.d.sql.quote(DATA_VERSION_COLUMN)}`;
      case 'meets':
        return `CASE WHEN ${this.condition(table, spec.where)} THEN 1 ELSE 0 END AS ${this.d.sql.quote(spec.name)}`;
      default:
        return this.rowColumn(table, spec, '');
    }
  }

  /** A column of the row of `table`, named with `prefix` before its name (a joined entity's). */
  rowColumn(table: string, spec: RowColumnSpec, prefix: string): string {
    switch (spec.kind) {
      case 'storage':
        return `${this.col(table, spec.attr.column)} AS ${this.d.sql.quote(prefix + spec.attr.name)}`;
      case 'alias':
        return `${this.aliasValue(table, spec.attr)} AS ${this.d.sql.quote(prefix + spec.attr.name)}`;
      case 'stamp':
        return prefix ? `${this.col(table, STAMP_COLUMN)} AS ${this.d.sql.quote(prefix + STAMP_COLUMN)}` : this.col(table, STAMP_COLUMN);
      case 'timestamp':
        return prefix ? `${this.col(table, TIMESTAMP_COLUMN)} AS ${this.d.sql.quote(prefix + TIMESTAMP_COLUMN)}` : this.col(table, TIMESTAMP_COLUMN);
      default: {
        const never: never = spec;
        return never;
      }
    }
  }

  /**
   * The LEFT JOINs the joined columns of `spec` need, from `table`: one per N→1 path (and per
   * step of it), each with its target's row filter, so that a target gone or hidden reads as nulls.
   * Aliases are given before the columns are compiled; the ON clauses are compiled after them,
   * where they stand in the text (their parameters bind in order).
   */
  joinsOf(table: string, spec: SelectSpec): { joins: Joins; steps: { alias: string; from: string; via: RelatedEntityAttribute }[] } {
    const joins: Joins = new Map();
    const steps: { alias: string; from: string; via: RelatedEntityAttribute }[] = [];
    for (const c of spec.columns) {
      if (c.kind !== 'joined') continue;
      let from = table;
      for (let i = 0; i < c.via.length; i++) {
        const name = pathName(c.via.slice(0, i + 1));
        let alias = joins.get(name);
        if (alias === undefined) {
          joins.set(name, (alias = this.alias()));
          steps.push({ alias, from, via: c.via[i] });
        }
        from = alias;
      }
    }
    return { joins, steps };
  }

  /** Parts are compiled in the order they appear in the text: '?' placeholders bind by position. */
  override select(spec: SelectSpec): string {
    const t = this.alias();
    const { joins, steps } = this.joinsOf(t, spec);
    const kept = steps.length === 0 && !spec.perGroup ? this.#keptColumns(t, spec.columns) : undefined;
    if (kept !== undefined) return this.#rest(`SELECT ${kept} FROM ${this.d.sql.quote(spec.dataClass.table)} ${t}`, t, spec);
    const cols = spec.columns.map((c) => this.column(t, c, spec, joins));
    if (spec.perGroup) {
      if (steps.length > 0) throw new Error('a SELECT per group joins no table');
      // the order sits in the select list here, before the WHERE
      const order = spec.order.length > 0 ? ` ORDER BY ${this.order(t, spec.order)}` : '';
      cols.push(`ROW_NUMBER() OVER (PARTITION BY ${this.col(t, spec.perGroup.attr.column)}${order}) AS __rn`);
      const g = this.alias();
      const inner = `SELECT ${cols.join(', ')} FROM ${this.d.sql.quote(spec.dataClass.table)} ${t}${this.where(spec.dataClass, t, spec.where)}`;
      return `SELECT * FROM (${inner}) ${g} WHERE ${g}.__rn <= ${Math.trunc(spec.perGroup.limit)} ORDER BY ${g}.${this.d.sql.quote(spec.perGroup.attr.name)}, ${g}.__rn`;
    }
    let sql = `SELECT ${cols.join(', ')} FROM ${this.d.sql.quote(spec.dataClass.table)} ${t}`;
    for (const s of steps) {
      const target = s.via.target;
      sql += ` LEFT JOIN ${this.d.sql.quote(target.table)} ${s.alias} ON ${this.col(s.alias, target.key.column)} = ${this.col(s.from, s.via.foreignKey.column)}${this.andFilter(target, s.alias)}`;
    }
    return this.#rest(sql, t, spec);
  }

  /** After the FROM (and its joins): the WHERE, the order, the window. */
  #rest(head: string, t: string, spec: SelectSpec): string {
    let sql = head + this.where(spec.dataClass, t, spec.where);
    if (spec.order.length > 0) sql += ` ORDER BY ${this.order(t, spec.order)}`;
    const limit = spec.limit == null ? null : this.bindNumber(spec.limit);
    const offset = spec.offset ? this.bindNumber(spec.offset) : null;
    return sql + this.d.sql.paging(limit, offset);
  }

  /**
   * The select list of `columns` from `table` when every column is one that binds nothing and
   * names no other table (stored values, stamps, the global stamp, the data version: what a page
   * of rows reads): the same text for every statement with these columns, kept per columns list
   * (the lists of a projection and of the page reads are made once: reads/page-read.ts), dialect
   * and alias. Otherwise undefined: compiled with the statement.
   */
  #keptColumns(table: string, columns: readonly ColumnSpec[]): string | undefined {
    let kept = columnTexts.get(columns);
    if (kept === undefined) {
      columnTexts.set(columns, (kept = columns.every((c) => PLAIN_COLUMNS.has(c.kind)) ? [] : null));
    }
    if (kept === null) return undefined;
    for (const k of kept) if (k.d === this.d && k.table === table) return k.text;
    const select: SelectSpec = { dataClass: undefined as never, columns, where: null, order: [] };
    const text = columns.map((c) => this.column(table, c, select, new Map())).join(', ');
    // (a few dialects and aliases at most: 't0' for a page's FROM)
    if (kept.length < 4) kept.push({ d: this.d, table, text });
    return text;
  }

  /** Text sorts by its folded form, as 4D sorts without regard to case or accents. */
  order(table: string, terms: readonly OrderTerm[]): string {
    return terms.map((t) => {
      if (t.path.json) return this.jsonOrder(table, t.path, t.descending);
      const path = t.path.attr.type === 'string' ? { ...t.path, fold: true } : t.path;
      // (a value that is never null needs no null order: a key sorts by its own index as it is)
      const neverNull = t.path.via.length === 0 && (t.path.attr.identifying || t.path.attr.notNull);
      return `${this.path(table, path)}${t.descending ? ' DESC' : ''}${neverNull ? '' : this.d.sql.nullsOrder(t.descending)}`;
    }).join(', ');
  }
}

/** The columns whose text depends only on the dialect and the table's alias (SelectBuilder.column binds nothing for them). */
const PLAIN_COLUMNS: ReadonlySet<ColumnSpec['kind']> = new Set(['storage', 'stamp', 'timestamp', 'globalStamp', 'dataVersion']);

/** The select lists kept per columns list (#keptColumns): null for a list that has other columns. */
const columnTexts = new WeakMap<readonly ColumnSpec[], { d: Dialect; table: string; text: string }[] | null>();
