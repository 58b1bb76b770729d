// The one SQL compiler (this folder) turns SelectSpecs and conditions into SQL text with bound
// parameters. Identifiers come only from the model and are quoted by the dialect; values are
// always bound. Every statement that reads or writes entities is built here, so a caller's row
// filter (the rows it may see: permissions' restrict) is applied in one place: at every FROM of an
// entity table, subqueries included, and in the WHERE of every UPDATE and DELETE.
//
// This file: the state of one statement being compiled, under the compiler's other parts — its
// bound parameters (placeholders bind by position: parts are compiled in the order they stand in
// the text), its table aliases, the row filter (where(), andFilter()), and the engine's progress
// check where a WHERE holds correlated subqueries or LIKE patterns (checked(), nested()). The
// builder grows by job, one subclass a file: values.ts (paths, JSON values), conditions.ts,
// selects.ts (the one concrete builder); statements.ts, aggregates.ts and sizes.ts compile with it.

import type { DataClassModel, StorageAttribute } from '../../model/types.js';
import type { Condition, RowFilter } from '../../query/plan.js';
import type { Dialect } from '../dialect.js';

export interface CompiledSql {
  readonly sql: string;
  readonly params: readonly unknown[];
}


/** Compiles one statement; holds the parameter list and the table-alias counter. */
export abstract class Builder {
  readonly params: unknown[] = [];
  #aliases = 0;
  /** compiling a row filter: its own subqueries see every row (filters are the server's, trusted) */
  #inFilter = false;
  /** the correlated subqueries (EXISTS, JSON elements) compiled so far (nested() tells a leaf from the others by it) */
  #subqueries = 0;
  /** the LIKE patterns compiled so far (contains, wildcards): as costly on a long text as a subquery */
  #patterns = 0;

  constructor(readonly d: Dialect, readonly restrict: RowFilter | null) {}

  /** SQL for condition `c` on the row of `table` (conditions.ts). */
  abstract condition(table: string, c: Condition): string;

  /** The row filter of `dc` compiled on `table`, or ''. */
  rowFilter(dc: DataClassModel, table: string): string {
    if (!this.restrict || this.#inFilter) return '';
    const c = this.restrict(dc);
    if (!c) return '';
    this.#inFilter = true;
    try {
      return this.condition(table, c);
    } finally {
      this.#inFilter = false;
    }
  }

  /**
   * The WHERE clause (with its leading space) of a FROM of `dc` as `table`: its row filter and
   * `c`, or ''; the progress check on the row first where they hold subqueries (checked()).
   */
  where(dc: DataClassModel, table: string, c: Condition | null): string {
    const [[filter, cond], inner] = this.holdingSubqueries(() => [this.rowFilter(dc, table), c ? this.condition(table, c) : '']);
    // (the check binds no parameter: put first once the rest is compiled, placeholders keep their order)
    const terms = [this.checked(inner, this.col(table, dc.key.column)), filter, cond].filter((t) => t !== '');
    return terms.length > 0 ? ` WHERE ${terms.join(' AND ')}` : '';
  }

  /**
   * ` WHERE head`, then the row filter of `dc` and `c` (where() for a WHERE that begins with a test
   * of its own, `head`, compiled already: its parameters come first), the progress check first
   * where they hold subqueries.
   */
  whereAfter(dc: DataClassModel, table: string, head: string, c: Condition | null): string {
    const [[filter, cond], inner] = this.holdingSubqueries(() => [this.andFilter(dc, table), c ? ` AND ${this.condition(table, c)}` : '']);
    const check = this.checked(inner, this.col(table, dc.key.column));
    return ` WHERE ${check ? `${check} AND ` : ''}${head}${filter}${cond}`;
  }

  /**
   * The engine's progress check on `row` (a column of the row a FROM visits) where the WHERE
   * holds subqueries (`inner`: nested() said so), else ''. Each row visited there runs them: the
   * check is made at least once per run of the innermost subqueries, which go without — a leaf
   * visits at most its table's rows (through the foreign key's index, a few), and a function call
   * per leaf row would cost as much as the visit (putting it in every level doubled a three-level
   * filter's time). A one-level filter is checked on each row of the statement: `colleagues`
   * visits a whole company's staff for each employee, quadratic in the data.
   */
  checked(inner: boolean, row: string): string {
    return inner && this.d.concurrency.progressCheck !== null ? this.d.concurrency.progressCheck(row) : '';
  }

  /** Compiles a subquery's parts (`inside`), counting it, and telling whether they hold a subquery of their own. */
  nested<T>(inside: () => T): [T, boolean] {
    this.#subqueries++;
    return this.holdingSubqueries(inside);
  }

  /** Compiles `inside`, telling whether it holds a correlated subquery (EXISTS, JSON elements) or a LIKE pattern. */
  holdingSubqueries<T>(inside: () => T): [T, boolean] {
    const before = this.#subqueries + this.#patterns;
    return [inside(), this.#subqueries + this.#patterns > before];
  }

  /** ` AND <row filter>` for a WHERE already begun, or ''. */
  andFilter(dc: DataClassModel, table: string): string {
    const filter = this.rowFilter(dc, table);
    return filter ? ` AND ${filter}` : '';
  }

  /** A LIKE pattern compiled: costly on a long text, it needs the progress check as a subquery does (holdingSubqueries()). */
  countPattern(): void {
    this.#patterns++;
  }

  /** A new table alias (`t0`, `t1` …; `j…` for JSON elements), from the one counter of the statement. */
  alias(letter = 't'): string {
    return `${letter}${this.#aliases++}`;
  }

  bind(attr: StorageAttribute, value: unknown): string {
    this.params.push(this.d.types.encode(attr.type, value, attr.dateOnly));
    return this.d.sql.placeholder(this.params.length);
  }

  bindNumber(n: number): string {
    this.params.push(Math.trunc(n));
    return this.d.sql.placeholder(this.params.length);
  }

  col(table: string, column: string): string {
    return `${table}.${this.d.sql.quote(column)}`;
  }

  /** A value bound as it is (already in the column's form: folded text, a JSON scalar). */
  bindRaw(value: unknown): string {
    this.params.push(typeof value === 'boolean' ? this.d.sql.bindBoolean(value) : value);
    return this.d.sql.placeholder(this.params.length);
  }
}
