// A condition (query/plan.ts) as SQL on the row of a table: comparisons, key lists, LIKE and
// prefixes on folded text or JSON values, 1→N relations as EXISTS, JSON arrays' elements,
// sub-selects, and/or/not as a balanced tree. Each correlated subquery and LIKE pattern is
// counted, so that builder.ts puts the progress check where a statement's work multiplies.

import type { Condition, SelectSpec } from '../../query/plan.js';
import { ValueBuilder } from './values.js';

/** Above every character a folded text holds: the upper bound of a prefix range. */
const PREFIX_TOP = '\u{10FFFF}';

/** A statement's conditions (selects.ts compiles the SELECT an `inSelect` holds). */
export abstract class ConditionBuilder extends ValueBuilder {
  /** A SELECT of `spec` (selects.ts). */
  abstract select(spec: SelectSpec): string;

  override condition(table: string, c: Condition): string {
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
        this.countPattern();
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
        const e = this.alias('j');
        const from = this.d.json.elements(column, this.d.sql.placeholder(this.params.length), e);
        const [where] = this.withElement(e, () => this.nested(() => this.condition(table, c.where)));
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
