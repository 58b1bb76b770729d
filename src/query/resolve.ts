// Resolves a parsed query against the model: names become attributes, paths become relation hops
// (N→1 read through, 1→N as "at least one related entity matches"), values are typed for their
// attribute, text is folded, 4D's @ wildcards become LIKE patterns or index-friendly ranges.
// Reads only the in-memory model; every mistake is an INVALID_FILTER naming where it is.

import { MAX_CALCULATED_DEPTH, MAX_IN_LIST, MAX_QUERY_LENGTH } from '../config/limits.js';
import { DatasetError } from '../errors/dataset-error.js';
import { EVERY_ATTRIBUTE, type CalculatedAttribute, type DataClassModel, type RelatedEntityAttribute, type StorageAttribute, type Visibility } from '../model/types.js';
import { coerceValue } from '../model/values.js';
import { fold } from '../util/fold.js';
import { foldedCompare, foldedLike, foldedPrefix } from './folded-text.js';
import type { Comparator, ParsedQuery, PathRef, PathStep, QueryNode, ValueRef } from './ast.js';
import { NO_CALCULATED, type CalculatedLookup } from './calculated.js';
import { resolveOrder } from './order.js';
import { parsePathText, parseQuery } from './parser.js';
import { walkPath, type Hop } from './path.js';
import { inSelect, type AttributePath, type CompareOp, type Condition, type OrderTerm } from './plan.js';
import { planStats, VariantMemo } from './plan-cache.js';

export interface ResolvedQuery {
  readonly where: Condition | null;
  readonly order: readonly OrderTerm[];
}

export function resolveQuery(
  dc: DataClassModel, query: ParsedQuery, params: readonly unknown[], visible: Visibility, calculated: CalculatedLookup = NO_CALCULATED,
): ResolvedQuery {
  const r = new Resolver(dc, query.text, params, visible, calculated, 0);
  const where = query.where ? r.node(query.where, dc) : null;
  for (const { path } of query.orderBy) {
    // what only criteria take (a :n path, [] or [n] steps) is a mistake in the query text: said where
    if (path.kind !== 'path' || path.steps.some((s) => s.element !== undefined || s.classIndex !== undefined)) {
      throw r.error(path.at, `cannot sort by '${r.pathText(path)}': sort by attribute names and N→1 relations`);
    }
  }
  return { where, order: resolveOrder(dc, query.orderBy, visible, calculated) };
}
/** Our comparators as 4D names them in a calculated attribute's query event. */
const EVENT_OPERATORS: Partial<Record<Comparator, string>> = {
  '=': '==', '==': '==', '===': '===', IS: '===', '#': '!=', '!=': '!=', '!==': '!==', 'IS NOT': '!==',
  '<': '<', '<=': '<=', '>': '>', '>=': '>=', IN: 'IN', '%': '%', begin: '==',
};

/** A path that ends on a calculated attribute (its query function stands for the criterion). */
interface CalculatedTarget {
  readonly hops: readonly Hop[];
  readonly calculated: CalculatedAttribute;
}

interface Target {
  readonly hops: readonly Hop[];
  readonly attr: StorageAttribute;
  readonly json?: readonly string[];
  /** the path ended on a relatedEntity: the comparison is on its foreign key */
  readonly relationKey?: boolean;
  /** a collection step inside the object: `json` leads to the array, `rest` goes inside its elements */
  readonly collection?: { readonly link: string | null; readonly rest: readonly string[]; readonly text: string };
}

class Resolver {
  /** the values of the IN lists resolved so far (bound one parameter each: the engines take some tens of thousands in all) */
  #inValues = 0;

  constructor(
    readonly root: DataClassModel,
    readonly text: string,
    readonly params: readonly unknown[],
    readonly visible: Visibility,
    readonly calculated: CalculatedLookup,
    readonly depth: number,
  ) {}

  node(n: QueryNode, dc: DataClassModel): Condition {
    switch (n.kind) {
      case 'compare':
        return this.criterion(n, dc);
      case 'or':
        return { kind: 'or', items: n.items.map((i) => this.node(i, dc)) };
      case 'not':
        return { kind: 'not', item: this.node(n.operand, dc) };
      case 'and':
        return { kind: 'and', items: mergeExists(n.items.map((i) => (i.except ? { kind: 'not', item: this.node(i.node, dc) } : this.node(i.node, dc)))) };
      default: {
        const never: never = n;
        return never;
      }
    }
  }

  criterion(c: Extract<QueryNode, { kind: 'compare' }>, dc: DataClassModel): Condition {
    const found = this.target(c.path, dc);
    if ('calculated' in found) return this.calculatedCriterion(c, found);
    const route = found;
    // From the innermost 1→N hop outwards: the comparison, then one EXISTS per 1→N hop.
    const lastMany = route.hops.map((h) => h.kind).lastIndexOf('many');
    const inner = route.hops.slice(lastMany + 1).map((h) => h.attr as RelatedEntityAttribute);
    let cond = route.collection
      ? this.elements(c, { via: inner, attr: route.attr, json: route.json }, route, route.collection)
      : this.compare(c, { via: inner, attr: route.attr, json: route.json }, route);
    for (let i = lastMany; i >= 0; i--) {
      const hop = route.hops[i];
      if (hop.kind !== 'many') continue;
      const prev = route.hops.slice(0, i);
      const start = prev.map((h) => h.kind).lastIndexOf('many') + 1;
      const via = prev.slice(start).map((h) => h.attr as RelatedEntityAttribute);
      const tag = `${route.hops.slice(0, i + 1).map((h) => `${h.attr.name}${h.kind === 'many' && h.classIndex ? `{${h.classIndex}}` : ''}`).join('.')}`;
      cond = { kind: 'exists', via, relation: hop.attr, where: cond, tag };
    }
    return cond;
  }

  /**
   * A criterion on a calculated attribute: the query its query function returns for the
   * operator and value, resolved on the attribute's dataclass, then reached through the hops.
   */
  calculatedCriterion(c: Extract<QueryNode, { kind: 'compare' }>, route: CalculatedTarget): Condition {
    const attr = route.calculated;
    const fn = this.calculated(attr)?.query;
    if (!fn) throw this.error(c.at, `${attr.dataClass.name}.${attr.name} is a calculated attribute without a query function: it cannot be queried`);
    if (this.depth >= MAX_CALCULATED_DEPTH) throw this.error(c.at, `calculated attributes query each other more than ${MAX_CALCULATED_DEPTH} levels deep (a loop?)`);
    const values = this.values(c.value, c.op);
    const value = c.op === 'IN' ? values : c.op === 'begin' ? `${String(values[0])}@` : values[0];
    const result = fn({ attributeName: attr.name, dataClassName: attr.dataClass.name, kind: 'query', operator: EVENT_OPERATORS[c.op] ?? c.op, value });
    if (!result) throw this.error(c.at, `the query function of ${attr.dataClass.name}.${attr.name} returned no query for ${c.op} ${JSON.stringify(value)}`);
    const { query, parameters = [] } = typeof result === 'string' ? { query: result } : result;
    const parsed = parseQuery(query);
    if (parsed.orderBy.length > 0 || !parsed.where) {
      throw this.error(c.at, `the query function of ${attr.dataClass.name}.${attr.name} must return criteria without order by; it returned ${JSON.stringify(query)}`);
    }
    // the function's query is trusted code: every attribute is visible to it
    const inner = new Resolver(attr.dataClass, query, parameters, EVERY_ATTRIBUTE, this.calculated, this.depth + 1);
    let cond = inner.node(parsed.where, attr.dataClass);
    for (let i = route.hops.length - 1; i >= 0; i--) {
      const hop = route.hops[i];
      cond = hop.kind === 'one'
        ? inSelect(hop.attr.foreignKey, hop.attr.target, hop.attr.target.key, cond) // our foreign key names a matching target
        : { kind: 'exists', via: [], relation: hop.attr, where: cond };
    }
    return cond;
  }

  /**
   * Where a path leads from `dc` as `visible` sees it: kept per parse-tree node (parses are kept
   * per text: plan-cache.ts), dataclass and visibility, since it depends on nothing else; a path
   * given by a parameter (:n) is a value, walked every time.
   */
  target(ref: PathRef, dc: DataClassModel): Target | CalculatedTarget {
    if (ref.kind === 'pathParam') return this.walk(ref, dc);
    const kept = targets.get(ref, dc, this.visible);
    if (kept) {
      planStats.pathHits++;
      return kept;
    }
    planStats.pathResolutions++;
    const found = this.walk(ref, dc);
    targets.set(ref, dc, this.visible, found);
    return found;
  }

  walk(ref: PathRef, dc: DataClassModel): Target | CalculatedTarget {
    const steps = ref.kind === 'pathParam' ? this.pathFromParam(ref) : ref.steps;
    const { hops, end } = walkPath(dc, steps, this.visible, (message) => this.error(ref.at, message));
    switch (end.kind) {
      case 'calculated':
        return { hops, calculated: end.attr };
      case 'relatedEntity':
        return { hops, attr: end.attr.foreignKey, relationKey: true };
      case 'relatedEntities':
        throw this.error(ref.at, `'${this.pathText(ref)}' ends on the 1→N relation ${end.attr.dataClass.name}.${end.attr.name}: name an attribute of ${end.attr.target.name} after it`);
      case 'storage':
        return end.inside.length === 0 ? { hops, attr: end.attr } : { hops, attr: end.attr, ...this.objectPath(ref, end.inside) };
      default: {
        const never: never = end;
        return never;
      }
    }
  }

  /** Steps inside an object attribute: a property path, with at most one collection step (`tags[]`, `tags[a]`). */
  objectPath(ref: PathRef, steps: readonly PathStep[]): Pick<Target, 'json' | 'collection'> {
    const at = steps.findIndex((s) => s.element !== undefined);
    if (at < 0) return { json: steps.map((s) => s.name) };
    const rest = steps.slice(at + 1);
    if (rest.some((s) => s.element !== undefined)) {
      // a 400, not OPTION_NOT_SUPPORTED's 501: a query the server cannot run is the client's to change (no 5xx for a request's shape)
      throw this.error(ref.at, `'${this.pathText(ref)}' has a collection inside a collection, which this version of the server does not query: one [] per path`);
    }
    const json = steps.slice(0, at + 1).map((s) => s.name);
    return { json, collection: { link: steps[at].element ?? null, rest: rest.map((s) => s.name), text: json.join('.') } };
  }

  pathFromParam(ref: Extract<PathRef, { kind: 'pathParam' }>): readonly PathStep[] {
    const v = this.param(ref.index, ref.at);
    if (typeof v !== 'string') throw this.error(ref.at, `:${ref.index} stands for an attribute path, so its value must be text like "employer.name"; it is ${JSON.stringify(v)}`);
    try {
      return parsePathText(v).steps;
    } catch {
      throw this.error(ref.at, `:${ref.index} holds ${JSON.stringify(v)}, which is not an attribute path`);
    }
  }

  /**
   * A criterion on the elements of a collection: at least one element matches. With `[]`, a
   * negative comparison means that every element differs (4D: `coll[].val # 0`); with a linked
   * `[a]` it means at least one element differs, and the criteria of one AND that share the
   * letter are about the same element. As everywhere, `#` never matches null: an element without
   * the value (or one that is no object) differs in neither form.
   */
  elements(c: Extract<QueryNode, { kind: 'compare' }>, array: AttributePath, route: Target, coll: NonNullable<Target['collection']>): Condition {
    const element: AttributePath = { via: [], attr: array.attr, json: coll.rest, element: true };
    const negated = c.op === '#' || c.op === '!=' || c.op === '!==' || c.op === 'IS NOT';
    const flipped = { '#': '=', '!=': '=', '!==': '===', 'IS NOT': 'IS' } as const;
    if (negated && coll.link === null) {
      const positive = this.compare({ ...c, op: flipped[c.op as keyof typeof flipped] }, element, route);
      const sameOrNull: Condition = { kind: 'or', items: [positive, { kind: 'isNull', path: element, negated: false }] };
      return { kind: 'not', item: { kind: 'elements', path: array, where: sameOrNull } };
    }
    const where = this.compare(c, element, route);
    return { kind: 'elements', path: array, where, ...(coll.link ? { tag: `${array.attr.name}.${coll.text}[${coll.link}]` } : {}) };
  }

  param(index: number, at: number): unknown {
    if (index > this.params.length) {
      throw this.error(at, `the query uses :${index} but ${this.params.length === 0 ? 'no parameters were given' : `only ${this.params.length} parameter${this.params.length === 1 ? ' was' : 's were'} given`}`);
    }
    return this.params[index - 1];
  }

  /** The typed comparison of one criterion. */
  compare(c: Extract<QueryNode, { kind: 'compare' }>, path: AttributePath, route: Target): Condition {
    const op = c.op;
    const attr = path.attr;
    // (for messages only: written when one is)
    const where = (): string => `${this.pathText(c.path)} ${op}`;
    const values = this.values(c.value, op);
    if (op === 'IN') {
      // a :n placeholder's list too (the text's own lists are bounded as parsed), and all the query's lists together
      this.#inValues += values.length;
      if (this.#inValues > MAX_IN_LIST) {
        throw new DatasetError('LIMIT_EXCEEDED', `the IN lists of the query ${JSON.stringify(this.text.slice(0, 200))} hold more than ${MAX_IN_LIST.toLocaleString('en-US')} values together (at offset ${c.value.at}): query in several parts, or keep the keys in an entity set`);
      }
      if (values.some((v) => v === null)) throw this.error(c.value.at, `${where()}: null cannot be in an IN list; use ${this.pathText(c.path)} = null`);
      // (a text holding @ is a pattern)
      if (c.value.kind === 'param') for (const v of values) if (typeof v === 'string' && fold(v).includes('@')) this.boundPattern(v, c.value);
      const alternatives = values.map((v) => this.compare({ ...c, op: '=', value: { kind: 'literal', value: v as string, quoted: true, at: c.value.at } }, path, route));
      const plain = alternatives.filter((a): a is Extract<Condition, { kind: 'compare' }> => a.kind === 'compare' && a.op === '=');
      const others = alternatives.filter((a) => !(a.kind === 'compare' && a.op === '='));
      const merged: Condition[] = plain.length > 0 ? [{ kind: 'in', path: plain[0].path, values: plain.map((p) => p.value) }] : [];
      const all = [...merged, ...others];
      return all.length === 1 ? all[0] : all.length === 0 ? { kind: 'in', path, values: [] } : { kind: 'or', items: all };
    }
    const value = values[0];
    const negated = op === '#' || op === '!=' || op === '!==' || op === 'IS NOT';
    if (value === null) {
      if (!NULL_OPS.has(op)) throw this.error(c.value.at, `${where()} null: null can only be compared with = or #`);
      return { kind: 'isNull', path: { ...path, fold: false }, negated };
    }
    const literal = op === '===' || op === 'IS' || op === '!==' || op === 'IS NOT';
    const text = path.json ? typeof value === 'string' : attr.type === 'string' && !route.relationKey;
    if (text) {
      const folded = fold(String(value));
      if (c.value.kind === 'param' && (op === '%' || (WILDCARD_OPS.has(op) && folded.includes('@')))) this.boundPattern(String(value), c.value);
      const p: AttributePath = { ...path, fold: true };
      if (op === '%') return foldedLike(p, `%${escapeLike(folded)}%`);
      if (op === 'begin') return prefix(p, folded);
      const wildcard = !literal && folded.includes('@');
      if (wildcard && (op === '=' || op === '==' || negated)) {
        const positive = /^[^@]*@$/.test(folded) ? prefix(p, folded.slice(0, -1)) : foldedLike(p, folded.split('@').map(escapeLike).join('%'));
        return negated ? notNull(p, { kind: 'not', item: positive }) : positive;
      }
      return foldedCompare(p, this.op(op, c.value.at), folded);
    }
    if (op === '%' || op === 'begin') throw this.error(c.at, `${where()}: ${op} compares text, and ${this.describe(path)} is not text`);
    const typed = path.json ? value : this.typed(path, route, value, c.value.at, where);
    return { kind: 'compare', path, op: this.op(op, c.value.at), value: typed };
  }

  values(v: ValueRef, op: Comparator): unknown[] {
    if (v.kind === 'list') {
      if (op !== 'IN') throw this.error(v.at, `a list of values goes with IN only`);
      return v.items.map((i) => this.values(i, '=')[0]);
    }
    if (v.kind === 'param') {
      const value = this.param(v.index, v.at);
      if (op === 'IN') {
        if (!Array.isArray(value)) throw this.error(v.at, `IN :${v.index} needs a list (a JSON array) in :${v.index}; it is ${JSON.stringify(value)}`);
        return value;
      }
      if (value === null || value === undefined) throw this.error(v.at, `:${v.index} is null: compare with null in the query text (attr = null), not through a placeholder`);
      if (typeof value === 'object' && !(value instanceof Date)) throw this.error(v.at, `:${v.index} must be a text, a number, a boolean or a date; it is ${JSON.stringify(value)}`);
      return [value];
    }
    if (op === 'IN') throw this.error(v.at, `IN needs a list: [1, 2] or ['a', 'b'], or a :n placeholder holding one`);
    return [v.value];
  }

  /**
   * A pattern (contains, or a text with @ wildcards) given through a placeholder is bounded as the
   * query text is (MAX_QUERY_LENGTH): its cost is its length times the text's on every row.
   */
  boundPattern(pattern: string, param: Extract<ValueRef, { kind: 'param' }>): void {
    if (pattern.length <= MAX_QUERY_LENGTH) return;
    throw new DatasetError('LIMIT_EXCEEDED', `in the query ${JSON.stringify(this.text.slice(0, 200))} at offset ${param.at}: the pattern :${param.index} gives is ${pattern.length.toLocaleString('en-US')} characters long; a pattern (%, or a text with @) takes at most ${MAX_QUERY_LENGTH.toLocaleString('en-US')}, as the query text does: shorten it, or compare the whole text with === (no wildcard)`);
  }

  /** A non-text value in its attribute's type (numbers, dates, booleans, uuids, keys). */
  typed(path: AttributePath, route: Target, value: unknown, at: number, where: () => string): unknown {
    const attr = path.attr;
    if (attr.type === 'bool' && (value === 'true' || value === 'false')) return value === 'true';
    if (attr.type === 'object' || attr.type === 'image' || attr.type === 'blob') {
      throw this.error(at, `${where()}: ${this.describe(path)} can only be compared with null${attr.type === 'object' ? ' (or query a property: attr.property = value)' : ''}`);
    }
    try {
      return coerceValue(attr, typeof value === 'number' && route.relationKey && attr.type === 'string' ? String(value) : value);
    } catch (e) {
      if (e instanceof DatasetError) throw this.error(at, `${where()} ${JSON.stringify(value)}: ${this.describe(path)} is ${attr.type}, and ${JSON.stringify(value)} is not one`);
      throw e;
    }
  }

  op(op: Comparator, at: number): CompareOp {
    switch (op) {
      case '=': case '==': case '===': case 'IS':
        return '=';
      case '#': case '!=': case '!==': case 'IS NOT':
        return '!=';
      case '<': case '>': case '<=': case '>=':
        return op;
      default:
        throw this.error(at, `the comparator ${op} does not apply here`);
    }
  }

  describe(path: AttributePath): string {
    return `${path.attr.dataClass.name}.${path.attr.name}${path.json ? `.${path.json.join('.')}` : ''}`;
  }

  pathText(ref: PathRef): string {
    return ref.kind === 'path' ? ref.text : `:${ref.index}`;
  }

  error(at: number, message: string): DatasetError {
    return new DatasetError('INVALID_FILTER', `in the query ${JSON.stringify(this.text)} at offset ${at}: ${message}`);
  }
}

/** The targets of the paths of kept parse trees (Resolver.target). */
const targets = new VariantMemo<PathRef, DataClassModel, Visibility, Target | CalculatedTarget>();

/** The comparators null may be compared with. */
const NULL_OPS: ReadonlySet<Comparator> = new Set(['=', '==', '===', 'IS', '#', '!=', '!==', 'IS NOT']);

/** The comparators that read @ in a text as a wildcard (a LIKE pattern). */
const WILDCARD_OPS: ReadonlySet<Comparator> = new Set(['=', '==', '#', '!=']);

/** A prefix test on folded text (the compiler makes it a range an index serves); an empty prefix: any value. */
function prefix(path: AttributePath, p: string): Condition {
  if (p === '') return { kind: 'isNull', path, negated: true };
  return foldedPrefix(path, p);
}

/** 4D's # leaves out null values (reference §4.2): NOT (…) AND the value is not null. */
function notNull(path: AttributePath, cond: Condition): Condition {
  return { kind: 'and', items: [{ kind: 'isNull', path, negated: true }, cond] };
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * In one AND, criteria through the same 1→N relation (same path, same class index) are about the
 * same related entity (4D's rule; `relation{2}` asks for another one): their EXISTS merge into one.
 */
function mergeExists(items: Condition[]): Condition[] {
  const out: Condition[] = [];
  const byTag = new Map<string, number>();
  for (const item of items) {
    if ((item.kind === 'exists' || item.kind === 'elements') && item.tag !== undefined) {
      const key = `${item.kind}:${item.tag}`;
      const at = byTag.get(key);
      if (at !== undefined) {
        const prev = out[at] as typeof item;
        const inner = [prev.where, item.where].filter((w): w is Condition => w !== null);
        out[at] = { ...prev, where: { kind: 'and', items: mergeExists(inner.flatMap((w) => (w.kind === 'and' ? w.items : [w]))) } };
        continue;
      }
      byTag.set(key, out.length);
    }
    out.push(item);
  }
  return out;
}
