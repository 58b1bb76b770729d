// The one SQL compiler: turns SelectSpecs and conditions into SQL text with bound parameters.
// Identifiers come only from the model and are quoted by the dialect; values are always bound.
// Every statement that reads or writes entities is built here, so a caller's row filter (the
// rows it may see: permissions' restrict) is applied in one place: at every FROM of an entity
// table, subqueries included, and in the WHERE of every UPDATE and DELETE.

import type { AliasAttribute, DataClassModel, RelatedEntityAttribute, StorageAttribute } from '../model/types.js';
import { and, directPath, type AttributePath, type ColumnSpec, type CompareOp, type Condition, type OrderTerm, type RowColumnSpec, type RowFilter, type SelectSpec } from '../query/plan.js';
import { foldColumn, storedFold } from '../util/fold.js';
import type { Dialect, JsonClass } from './dialect.js';
import { GLOBAL_STAMP_TABLE, STAMP_COLUMN, TIMESTAMP_COLUMN } from './hidden-columns.js';

/** Above every character a folded text holds: the upper bound of a prefix range. */
const PREFIX_TOP = '\u{10FFFF}';

export interface CompiledSql {
  readonly sql: string;
  readonly params: readonly unknown[];
}

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

/** Compiles one statement; holds the parameter list and the table-alias counter. */
class Builder {
  readonly params: unknown[] = [];
  #aliases = 0;
  /** aliases of the JSON-element rows open around the condition being compiled, innermost last */
  readonly #elements: string[] = [];
  /** compiling a row filter: its own subqueries see every row (filters are the server's, trusted) */
  #inFilter = false;
  /** the correlated subqueries (EXISTS, JSON elements) compiled so far (nested() tells a leaf from the others by it) */
  #subqueries = 0;
  /** the LIKE patterns compiled so far (contains, wildcards): as costly on a long text as a subquery */
  #patterns = 0;

  constructor(readonly d: Dialect, readonly restrict: RowFilter | null) {}

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

  alias(): string {
    return `t${this.#aliases++}`;
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

  /** SQL for the value of a path, read from the row of `table` (a scalar subquery per N→1 hop); not for JSON values (json*() below). */
  path(table: string, path: AttributePath): string {
    // 'computed': the whole text's fold, where the folded column holds a cut one (query/folded-text.ts)
    if (path.fold === 'computed') return this.chain(table, path.via, path.attr.column, (c) => this.d.sql.fold(c));
    return this.chain(table, path.via, path.fold ? foldColumn(path.attr.column) : path.attr.column);
  }

  /** SQL for the numeric value of a path: a JSON property holding anything but a number reads as null. */
  numberPath(table: string, path: AttributePath): string {
    if (!path.json || path.element) return path.element ? this.jsonScalar(table, path, 'number') : this.path(table, path);
    return this.chain(table, path.via, path.attr.column, (col) => {
      this.params.push(this.d.json.path(path.json as string[]));
      return this.d.json.number(col, this.d.sql.placeholder(this.params.length));
    });
  }

  /**
   * A JSON value of one class (Dialect.json.scalar): a property of an object attribute, or the
   * element of the innermost `elements` condition. Each call binds its own path parameter, so
   * that '?' placeholders stay in order.
   */
  jsonScalar(table: string, path: AttributePath, cls: JsonClass): string {
    if (path.element) {
      const alias = this.#elements[this.#elements.length - 1];
      let at: string | null = null;
      if (path.json && path.json.length > 0) {
        this.params.push(this.d.json.path(path.json));
        at = this.d.sql.placeholder(this.params.length);
      }
      return this.d.json.scalar({ element: alias, path: at }, cls);
    }
    return this.chain(table, path.via, path.attr.column, (col) => {
      this.params.push(this.d.json.path(path.json as string[]));
      return this.d.json.scalar({ column: col, path: this.d.sql.placeholder(this.params.length) }, cls);
    });
  }

  /** The text class of a JSON value, folded when the path says so. */
  jsonText(table: string, path: AttributePath): string {
    const text = this.jsonScalar(table, path, 'text');
    return path.fold ? this.d.sql.fold(text) : text;
  }

  /** A JSON value is there: neither missing nor JSON null. */
  jsonPresent(table: string, path: AttributePath): string {
    return `(${this.jsonScalar(table, path, 'number')} IS NOT NULL OR ${this.jsonScalar(table, path, 'text')} IS NOT NULL)`;
  }

  /**
   * A JSON value compared with a bound one as SQLite compares a json_extract() value, on every
   * engine: within a class as numbers or as text, across classes by SQLite's order of types
   * (numbers before text), and null (missing, JSON null) matching nothing.
   */
  jsonCompare(table: string, path: AttributePath, op: CompareOp, value: unknown): string {
    const v = value instanceof Date ? value.toISOString() : value;
    const cls: JsonClass = typeof v === 'string' ? 'text' : 'number';
    const same = () => (cls === 'text' ? this.jsonText(table, path) : this.jsonScalar(table, path, 'number'));
    const test = same();
    const compared = `${same()} ${op === '!=' ? '<>' : op} ${this.bindRaw(v)}`;
    const other = this.jsonScalar(table, path, cls === 'text' ? 'number' : 'text');
    const across = (cls === 'text' ? ['<', '<=', '!='] : ['>', '>=', '!=']).includes(op);
    return `(CASE WHEN ${test} IS NOT NULL THEN ${compared} WHEN ${other} IS NOT NULL THEN ${across ? '1 = 1' : '1 = 0'} END)`;
  }

  /**
   * A JSON value equal to one of `values`: the numbers compared with its number class, the texts
   * with its text class, each list once (as jsonCompare would value by value, at the cost of two
   * reads of the value, not three a value).
   */
  jsonIn(table: string, path: AttributePath, values: readonly unknown[]): string {
    const all = values.map((v) => (v instanceof Date ? v.toISOString() : v));
    const texts = all.filter((v) => typeof v === 'string');
    const numbers = all.filter((v) => typeof v !== 'string');
    // (the value is compiled only where it appears: its path parameters are bound in the text's order)
    const inList = (lhs: () => string, list: readonly unknown[]) => (list.length === 0 ? '1 = 0' : `${lhs()} IN (${list.map((v) => this.bindRaw(v)).join(', ')})`);
    const numberTest = this.jsonScalar(table, path, 'number');
    const numberIn = inList(() => this.jsonScalar(table, path, 'number'), numbers);
    const textTest = this.jsonScalar(table, path, 'text');
    const textIn = inList(() => this.jsonText(table, path), texts);
    return `(CASE WHEN ${numberTest} IS NOT NULL THEN ${numberIn} WHEN ${textTest} IS NOT NULL THEN ${textIn} END)`;
  }

  /** Sort terms of a JSON value: its class (null, numbers, text), then its value in that class. */
  jsonOrder(table: string, path: AttributePath, descending: boolean): string {
    const dir = `${descending ? ' DESC' : ''}${this.d.sql.nullsOrder(descending)}`;
    const rank = `CASE WHEN ${this.jsonScalar(table, path, 'number')} IS NOT NULL THEN 1 WHEN ${this.jsonScalar(table, path, 'text')} IS NOT NULL THEN 2 END`;
    return `${rank}${dir}, ${this.jsonScalar(table, path, 'number')}${dir}, ${this.jsonScalar(table, path, 'text')}${dir}`;
  }

  /** A value bound as it is (already in the column's form: folded text, a JSON scalar). */
  bindRaw(value: unknown): string {
    this.params.push(typeof value === 'boolean' ? this.d.sql.bindBoolean(value) : value);
    return this.d.sql.placeholder(this.params.length);
  }

  chain(table: string, via: AttributePath['via'], column: string, wrap: (col: string) => string = (c) => c): string {
    if (via.length === 0) return wrap(this.col(table, column));
    const [first, ...rest] = via;
    const t = this.alias();
    const inner = this.chain(t, rest, column, wrap);
    return `(SELECT ${inner} FROM ${this.d.sql.quote(first.target.table)} ${t} WHERE ${this.col(t, first.target.key.column)} = ${this.col(table, first.foreignKey.column)}${this.andFilter(first.target, t)})`;
  }

  condition(table: string, c: Condition): string {
    switch (c.kind) {
      case 'compare': {
        if (c.path.json && c.value !== null) return this.jsonCompare(table, c.path, c.op, c.value);
        const lhs = this.path(table, c.path);
        if (c.value === null) return `${lhs} ${c.op === '!=' ? 'IS NOT' : 'IS'} NULL`;
        // 4D: '#' does not match null values; SQL's <> already leaves them out.
        return `${lhs} ${c.op === '!=' ? '<>' : c.op} ${this.value(c.path, c.value)}`;
      }
      case 'inKeys': {
        const lhs = this.path(table, c.path);
        this.params.push(this.d.sql.keyListParam(c.keys));
        return this.d.sql.inKeyList(lhs, this.d.sql.placeholder(this.params.length));
      }
      case 'like': {
        // a pattern costs the text's length times its own on each row: checked as a subquery is
        this.#patterns++;
        // A text of any length (a JSON value, the whole fold of a long text) is matched by the
        // dialect's match for those; the folded column holds at most FOLD_PREFIX_LENGTH code points.
        // A JSON value: its text, or a number as its text (as SQLite's LIKE reads a number).
        if (c.path.json) {
          const value = `COALESCE(${this.jsonText(table, c.path)}, CAST(${this.jsonScalar(table, c.path, 'number')} AS TEXT))`;
          return this.d.sql.unboundedLike(value, this.bindRaw(this.d.sql.unboundedPattern(c.pattern)), false);
        }
        // (the whole text, folded by the match itself)
        if (c.path.fold === 'computed') return this.d.sql.unboundedLike(this.chain(table, c.path.via, c.path.attr.column), this.bindRaw(this.d.sql.unboundedPattern(c.pattern)), true);
        return `${this.path(table, c.path)} LIKE ${this.bindRaw(c.pattern)} ESCAPE '\\'`;
      }
      case 'prefix': {
        if (c.path.json) return `(${this.jsonCompare(table, c.path, '>=', c.prefix)} AND ${this.jsonCompare(table, c.path, '<', c.prefix + PREFIX_TOP)})`;
        // a range rather than LIKE: an index on the folded column serves it
        const lhs = this.path(table, c.path);
        return `(${lhs} >= ${this.bindRaw(c.prefix)} AND ${this.path(table, c.path)} < ${this.bindRaw(c.prefix + PREFIX_TOP)})`;
      }
      case 'elements': {
        const column = this.chain(table, c.path.via, c.path.attr.column);
        this.params.push(this.d.json.path(c.path.json ?? []));
        const e = `j${this.#aliases++}`;
        const from = this.d.json.elements(column, this.d.sql.placeholder(this.params.length), e);
        this.#elements.push(e);
        const [where] = this.nested(() => this.condition(table, c.where));
        this.#elements.pop();
        // every element visited is checked, a leaf's too: an array has no bound on its length (the
        // whole object's text), unlike the rows a relation reaches through its index; by its type,
        // a short text (a value may be a big object)
        const check = this.checked(true, `${e}.type`);
        return `EXISTS (SELECT 1 FROM ${from} WHERE ${check ? `${check} AND ` : ''}${where})`;
      }
      case 'exists': {
        const owner = c.relation.dataClass;
        const parentKey = this.chain(table, c.via, owner.key.column);
        const t = this.alias();
        const target = c.relation.target;
        const fk = this.col(t, c.relation.inverse.foreignKey.column);
        const [rest, inner] = this.nested(() => `${fk} = ${parentKey}${this.andFilter(target, t)}${c.where ? ` AND ${this.condition(t, c.where)}` : ''}`);
        const check = this.checked(inner, fk);
        return `EXISTS (SELECT 1 FROM ${this.d.sql.quote(target.table)} ${t} WHERE ${check ? `${check} AND ` : ''}${rest})`;
      }
      case 'in': {
        if (c.values.length === 0) return '1 = 0';
        if (c.path.json) return this.jsonIn(table, c.path, c.values);
        const lhs = this.path(table, c.path);
        return `${lhs} IN (${c.values.map((v) => this.value(c.path, v)).join(', ')})`;
      }
      case 'inSelect':
        // (not counted as a subquery: it is not correlated, SQLite runs it once; its own WHERE is checked where it holds subqueries)
        return `${this.path(table, c.path)} IN (${this.select(c.select)})`;
      case 'isNull':
        if (c.path.json) return `${c.negated ? '' : 'NOT '}${this.jsonPresent(table, c.path)}`;
        return `${this.path(table, c.path)} IS ${c.negated ? 'NOT ' : ''}NULL`;
      case 'and':
      case 'or':
        return balanced(c.items.map((i) => this.condition(table, i)), c.kind === 'and' ? ' AND ' : ' OR ');
      case 'not':
        return `NOT (${this.condition(table, c.item)})`;
      default: {
        const never: never = c;
        return never;
      }
    }
  }

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

  /** An alias through N→1 relations: the target's value, or the key of a relation target. */
  aliasValue(table: string, alias: AliasAttribute): string {
    const last = alias.steps[alias.steps.length - 1];
    const via = alias.steps.slice(0, -1) as AttributePath['via'];
    if (last.kind === 'storage') return this.chain(table, via, last.column);
    if (last.kind === 'relatedEntity') return this.chain(table, via, last.foreignKey.column);
    return 'NULL';
  }

  /** A compared value: in the attribute's column form, or as it is for folded text and JSON values. */
  value(path: AttributePath, v: unknown): string {
    return path.fold || path.json ? this.bindRaw(v) : this.bind(path.attr, v);
  }

  /** Parts are compiled in the order they appear in the text: '?' placeholders bind by position. */
  select(spec: SelectSpec): string {
    const t = this.alias();
    const { joins, steps } = this.joinsOf(t, spec);
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
    sql += this.where(spec.dataClass, t, spec.where);
    if (spec.order.length > 0) sql += ` ORDER BY ${this.order(t, spec.order)}`;
    const limit = spec.limit == null ? null : this.bindNumber(spec.limit);
    const offset = spec.offset ? this.bindNumber(spec.offset) : null;
    return sql + this.d.sql.paging(limit, offset);
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

/** `restrict` (every compile function that reads or changes rows takes one): the caller's row filter, null for every row. */
export function compileSelect(d: Dialect, spec: SelectSpec, restrict: RowFilter | null): CompiledSql {
  const b = new Builder(d, restrict);
  return { sql: b.select(spec), params: b.params };
}

/**
 * The key of one entity (if the caller may reach it), its row locked until the transaction ends
 * where the engine locks rows (Dialect.concurrency.rowLock): what a pessimistic lock (datastore/sessions/locks.ts)
 * reads, so that it waits for a save of that entity under way, and such a save waits for it.
 */
export function compileLockRow(d: Dialect, dataClass: DataClassModel, key: unknown, restrict: RowFilter | null): CompiledSql {
  const b = new Builder(d, restrict);
  const sql = b.select({ dataClass, columns: [{ kind: 'storage', attr: dataClass.key }], order: [], where: { kind: 'compare', path: directPath(dataClass.key), op: '=', value: key } });
  // (the first alias a statement gives is its FROM's)
  return { sql: sql + d.concurrency.rowLock('t0'), params: b.params };
}

/** COUNT(*) of the rows matching `where`; grouped by `groupBy` (rows `g`, `n`) when given. */
export function compileCount(d: Dialect, dataClass: DataClassModel, where: Condition | null, restrict: RowFilter | null, groupBy?: StorageAttribute): CompiledSql {
  const b = new Builder(d, restrict);
  const t = b.alias();
  const group = groupBy ? b.col(t, groupBy.column) : '';
  let sql = `SELECT ${group ? `${group} AS g, ` : ''}COUNT(*) AS n FROM ${d.sql.quote(dataClass.table)} ${t}${b.where(dataClass, t, where)}`;
  if (group) sql += ` GROUP BY ${group}`;
  return { sql, params: b.params };
}

/** COUNT(*) of the rows matching `where` (as `n`), with the global stamp and the data version the statement saw (GLOBAL_STAMP_COLUMN, DATA_VERSION_COLUMN). */
export function compileCountWithVersion(d: Dialect, dataClass: DataClassModel, where: Condition | null, restrict: RowFilter | null): CompiledSql {
  const b = new Builder(d, restrict);
  const t = b.alias();
  const stamp = b.column(t, { kind: 'globalStamp' }, { dataClass, columns: [], where: null, order: [] }, new Map());
  const version = b.column(t, { kind: 'dataVersion' }, { dataClass, columns: [], where: null, order: [] }, new Map());
  return { sql: `SELECT COUNT(*) AS n, ${stamp}, ${version} FROM ${d.sql.quote(dataClass.table)} ${t}${b.where(dataClass, t, where)}`, params: b.params };
}

export function compileInsert(
  d: Dialect, dataClass: DataClassModel, values: ReadonlyMap<StorageAttribute, unknown>, stamp: number, timestamp: number,
): CompiledSql {
  // (no row filter: an insert reads no rows)
  const b = new Builder(d, null);
  const cols: string[] = [];
  const marks: string[] = [];
  for (const [attr, value] of values) {
    cols.push(d.sql.quote(attr.column));
    marks.push(b.bind(attr, value));
    if (attr.type === 'string') {
      cols.push(d.sql.quote(foldColumn(attr.column)));
      marks.push(b.bindRaw(typeof value === 'string' ? storedFold(value) : null));
    }
  }
  cols.push(d.sql.quote(STAMP_COLUMN), d.sql.quote(TIMESTAMP_COLUMN));
  b.params.push(stamp, timestamp);
  marks.push(d.sql.placeholder(b.params.length - 1), d.sql.placeholder(b.params.length));
  const key = d.sql.quote(dataClass.key.column);
  return { sql: `INSERT INTO ${d.sql.quote(dataClass.table)} (${cols.join(', ')}) VALUES (${marks.join(', ')}) RETURNING ${key} AS ${d.sql.quote(dataClass.key.name)}`, params: b.params };
}

/** UPDATE … WHERE key = ? AND stamp = ?: zero rows changed means the stamp moved (or the entity went). */
export function compileUpdate(
  d: Dialect, dataClass: DataClassModel, key: unknown, expectedStamp: number,
  values: ReadonlyMap<StorageAttribute, unknown>, timestamp: number, restrict: RowFilter | null,
): CompiledSql {
  const b = new Builder(d, restrict);
  const sets = [...values].flatMap(([attr, value]) => {
    const set = `${d.sql.quote(attr.column)} = ${b.bind(attr, value)}`;
    return attr.type === 'string' ? [set, `${d.sql.quote(foldColumn(attr.column))} = ${b.bindRaw(typeof value === 'string' ? storedFold(value) : null)}`] : [set];
  });
  b.params.push(timestamp);
  sets.push(`${d.sql.quote(STAMP_COLUMN)} = ${d.sql.quote(STAMP_COLUMN)} + 1`, `${d.sql.quote(TIMESTAMP_COLUMN)} = ${d.sql.placeholder(b.params.length)}`);
  const where = `${d.sql.quote(dataClass.key.column)} = ${b.bind(dataClass.key, key)}`;
  b.params.push(expectedStamp);
  const stamp = `${d.sql.quote(STAMP_COLUMN)} = ${d.sql.placeholder(b.params.length)}`;
  // No table alias in UPDATE and DELETE: not every engine accepts one.
  return { sql: `UPDATE ${d.sql.quote(dataClass.table)} SET ${sets.join(', ')} WHERE ${where} AND ${stamp}${b.andFilter(dataClass, d.sql.quote(dataClass.table))}`, params: b.params };
}

/** The delete of one entity, if its stamp is still the one expected (and `restrict` lets the caller reach it). */
export function compileDelete(d: Dialect, dataClass: DataClassModel, key: unknown, expectedStamp: number, restrict: RowFilter | null): CompiledSql {
  const b = new Builder(d, restrict);
  const t = d.sql.quote(dataClass.table);
  const where = `${d.sql.quote(dataClass.key.column)} = ${b.bind(dataClass.key, key)}`;
  b.params.push(expectedStamp);
  return { sql: `DELETE FROM ${t} WHERE ${where} AND ${d.sql.quote(STAMP_COLUMN)} = ${d.sql.placeholder(b.params.length)}${b.andFilter(dataClass, t)}`, params: b.params };
}

/**
 * DELETE of the rows among `keys` that the caller reaches (its row filter) and that still meet
 * `where` (a big delete's chunk, datastore/writes/bulk-drop.ts), RETURNING `returning`'s columns in that
 * order: what was deleted, told by the same statement.
 */
export function compileDeleteAmong(
  d: Dialect, dataClass: DataClassModel, keys: readonly unknown[], where: Condition | null, returning: readonly StorageAttribute[], restrict: RowFilter | null,
): CompiledSql {
  const chosen = compileSelect(d, { dataClass, columns: [{ kind: 'storage', attr: dataClass.key }], order: [], where: and({ kind: 'in', path: directPath(dataClass.key), values: keys }, where) }, restrict);
  const columns = returning.map((a) => d.sql.quote(a.column)).join(', ');
  return { sql: `DELETE FROM ${d.sql.quote(dataClass.table)} WHERE ${d.sql.quote(dataClass.key.column)} IN (${chosen.sql}) RETURNING ${columns}`, params: chosen.params };
}

export type AggregateFn = 'count' | 'sum' | 'average' | 'min' | 'max';

/**
 * One row (`count`, `sum`, `average`, `min`, `max` columns, those asked) of aggregates of a path
 * over the rows matching `where`. Null values are left out, as SQL's aggregates do.
 */
export function compileAggregate(
  d: Dialect, dataClass: DataClassModel, where: Condition | null, path: AttributePath, fns: readonly AggregateFn[], restrict: RowFilter | null,
): CompiledSql {
  const b = new Builder(d, restrict);
  const t = b.alias();
  const sqlFn: Record<AggregateFn, string> = { count: 'COUNT', sum: 'SUM', average: 'AVG', min: 'MIN', max: 'MAX' };
  // the value is compiled at each place it appears: a JSON path binds a parameter each time
  const columns = fns.map((f) => {
    if (f === 'sum' || f === 'average') return `${sqlFn[f]}(${d.sql.sumOperand(b.numberPath(t, path))}) AS ${f}`;
    // booleans as 0 and 1 (PostgreSQL has no MIN or MAX of boolean; SQLite stores them so)
    if (!path.json && path.attr.type === 'bool' && f !== 'count') return `${sqlFn[f]}(${asBit(b.path(t, path))}) AS ${f}`;
    if (!path.json) return `${sqlFn[f]}(${b.path(t, path)}) AS ${f}`;
    if (f === 'count') return `COUNT(CASE WHEN ${b.jsonPresent(t, path)} THEN 1 END) AS count`;
    // min and max of each class: jsonExtreme() picks (numbers come before text)
    return `${sqlFn[f]}(${b.jsonScalar(t, path, 'number')}) AS ${f}, ${sqlFn[f]}(${b.jsonScalar(t, path, 'text')}) AS ${f}${TEXT_SUFFIX}`;
  });
  const sql = `SELECT ${columns.join(', ')} FROM ${d.sql.quote(dataClass.table)} ${t}${b.where(dataClass, t, where)}`;
  return { sql, params: b.params };
}

/** A boolean expression as 1, 0 or null, on any engine. */
function asBit(expr: string): string {
  return `CASE WHEN ${expr} THEN 1 WHEN NOT ${expr} THEN 0 END`;
}

/** The column of the text class of a JSON value beside its number class (`min` and `min__text`, `v` and `v__text`). */
const TEXT_SUFFIX = '__text';

/** The min or max of a JSON path from compileAggregate's row, or a distinct value from compileDistinct's: numbers before text, as SQLite orders them. */
export function jsonExtreme(row: Record<string, unknown>, column: string, highest: boolean): unknown {
  const n = row[column] ?? null;
  const s = row[`${column}${TEXT_SUFFIX}`] ?? null;
  return highest ? (s ?? n) : (n ?? s);
}

/** The distinct non-null values of a path over the rows matching `where`, sorted (text by its fold). */
export function compileDistinct(
  d: Dialect, dataClass: DataClassModel, where: Condition | null, path: AttributePath, limit: number | null, offset: number, restrict: RowFilter | null,
): CompiledSql {
  const b = new Builder(d, restrict);
  const t = b.alias();
  const from = ` FROM ${d.sql.quote(dataClass.table)} ${t}`;
  // grouped and sorted by position: the values' expressions (and their parameters) once, for both dialects
  let sql: string;
  if (path.json) {
    // numbers, then text (a number has no text class, and the other way round)
    const rank = `CASE WHEN ${b.jsonScalar(t, path, 'number')} IS NOT NULL THEN 1 ELSE 2 END`;
    sql = `SELECT ${rank} AS r, ${b.jsonScalar(t, path, 'number')} AS v, ${b.jsonScalar(t, path, 'text')} AS v${TEXT_SUFFIX}${from}${b.whereAfter(dataClass, t, b.jsonPresent(t, path), where)}`;
  } else if (path.attr.type === 'string') {
    // text: one value per folded form (4D's distinct ignores case and accents), the lowest spelling
    const select = `SELECT ${b.path(t, { ...path, fold: true })} AS o, MIN(${b.path(t, path)}) AS v${from}`;
    sql = select + b.whereAfter(dataClass, t, `${b.path(t, path)} IS NOT NULL`, where);
  } else {
    const select = `SELECT ${b.path(t, path)} AS v${from}`;
    sql = select + b.whereAfter(dataClass, t, `${b.path(t, path)} IS NOT NULL`, where);
  }
  sql += path.json ? ' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3' : ' GROUP BY 1 ORDER BY 1';
  const l = limit === null ? null : b.bindNumber(limit);
  const o = offset ? b.bindNumber(offset) : null;
  return { sql: sql + d.sql.paging(l, o), params: b.params };
}

/** The lowest or highest text of a path (by its fold), for min/max of text. */
export function compileTextExtreme(
  d: Dialect, dataClass: DataClassModel, where: Condition | null, path: AttributePath, highest: boolean, restrict: RowFilter | null,
): CompiledSql {
  const b = new Builder(d, restrict);
  const t = b.alias();
  const select = `SELECT ${b.path(t, path)} AS v FROM ${d.sql.quote(dataClass.table)} ${t}`;
  const sql = select + b.whereAfter(dataClass, t, `${b.path(t, path)} IS NOT NULL`, where);
  return { sql: `${sql} ORDER BY ${b.path(t, { ...path, fold: true })}${highest ? ' DESC' : ''}${d.sql.paging(b.bindNumber(1), null)}`, params: b.params };
}

/**
 * `(a OP b OP c …)` grouped as a balanced tree: a database parses a flat chain as deep as it is
 * long (SQLite refuses 1000 levels), and a query of a thousand criteria is a few KB of text. The
 * parts keep their order, and so does the binding of their parameters.
 */
function balanced(parts: readonly string[], op: string): string {
  if (parts.length <= 16) return `(${parts.join(op)})`;
  const mid = parts.length >> 1;
  return `(${balanced(parts.slice(0, mid), op)}${op}${balanced(parts.slice(mid), op)})`;
}

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
class SizeBuilder extends Builder {
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
