// The SQL of a value read from a row: an attribute through N→1 relations (a scalar subquery per
// hop, each with its target's row filter), an alias, a compared value bound in its column's form,
// and JSON values (a property of an object attribute, an array's element), read, compared and
// sorted as SQLite reads a json_extract() value, on every engine.

import type { AliasAttribute } from '../../model/types.js';
import type { AttributePath, CompareOp } from '../../query/plan.js';
import { foldColumn } from '../../util/fold.js';
import type { JsonClass } from '../dialect.js';
import { Builder } from './builder.js';

/** A statement's values (conditions.ts compiles the tests on them). */
export abstract class ValueBuilder extends Builder {
  /** aliases of the JSON-element rows open around the condition being compiled, innermost last */
  readonly #elements: string[] = [];

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

  /** Compiles `inside` (an `elements` condition's own) with `alias` as the JSON element its element paths read. */
  withElement<T>(alias: string, inside: () => T): T {
    this.#elements.push(alias);
    const result = inside();
    this.#elements.pop();
    return result;
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

  chain(table: string, via: AttributePath['via'], column: string, wrap: (col: string) => string = (c) => c): string {
    if (via.length === 0) return wrap(this.col(table, column));
    const [first, ...rest] = via;
    const t = this.alias();
    const inner = this.chain(t, rest, column, wrap);
    return `(SELECT ${inner} FROM ${this.d.sql.quote(first.target.table)} ${t} WHERE ${this.col(t, first.target.key.column)} = ${this.col(table, first.foreignKey.column)}${this.andFilter(first.target, t)})`;
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
}
