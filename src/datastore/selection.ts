// EntitySelection: a lazy, ordered set of entities of one dataclass. It is a description (a
// condition, an order, a window) that runs as SQL only when counted or read, page by page, so
// no operation loads a whole table.

import { ITERATION_CHUNK } from '../config/limits.js';
import { parseQuery } from '../query/parser.js';
import { and, directPath, type Condition, type OrderTerm, type SelectSpec } from '../query/plan.js';
import { INTEGER_TYPES, type Visibility } from '../model/types.js';
import { compileSelect } from '../sql/compiler.js';
import type { KeyList } from './entity-sets.js';
import { resolveQuery } from '../query/resolve.js';
import type { DataClass } from './dataclass.js';
import type { Entity } from './entity.js';
import { parseOrderBy } from '../query/order.js';
import { resolveValuePath } from '../query/path.js';
import { aggregates, distinct } from './compute.js';

/** How the entities of a selection are defined. (Entity sets will add a key-list source.) */
export interface QuerySource {
  readonly kind: 'query';
  readonly where: Condition | null;
  /** as given; the primary key is appended when compiled so that pages are stable */
  readonly order: readonly OrderTerm[];
  readonly offset: number;
  readonly limit: number | null;
}
export type SelectionSource = QuerySource;

export class EntitySelection {
  readonly #dc: DataClass;
  readonly #source: SelectionSource;

  /** @internal selections come from a dataclass (all(), query) or from another selection */
  constructor(dc: DataClass, source: SelectionSource) {
    this.#dc = dc;
    this.#source = source;
  }

  getDataClass(): DataClass {
    return this.#dc;
  }

  /** @internal */
  get source(): SelectionSource {
    return this.#source;
  }

  /** The number of entities (a COUNT in the database). */
  get length(): Promise<number> {
    return this.#dc.ds.countWhere(this.#dc.model, this.#source.where).then((total) => {
      const { offset, limit } = this.#source;
      const after = Math.max(0, total - offset);
      return limit === null ? after : Math.min(limit, after);
    });
  }

  /** The entities from position start (included) to end (excluded), like Array.prototype.slice. */
  slice(start: number, end?: number): EntitySelection {
    if (start < 0 || (end !== undefined && end < 0)) {
      throw new RangeError('EntitySelection.slice takes non-negative positions');
    }
    const { offset, limit } = this.#source;
    const from = offset + start;
    let count = end === undefined ? null : Math.max(0, end - start);
    if (limit !== null) {
      const left = Math.max(0, limit - start);
      count = count === null ? left : Math.min(count, left);
    }
    return new EntitySelection(this.#dc, { ...this.#source, offset: from, limit: count });
  }

  /** The same entities sorted by an order string ("lastName desc, employer.name"). */
  orderBy(spec: string): EntitySelection {
    const order = parseOrderBy(this.#dc.model, spec, () => true, this.#dc.ds.calculatedLookup);
    return this.withOrder(order);
  }

  /**
   * The entities of this selection that match an ORDA query; its `order by`, if any, sorts them,
   * else they keep this selection's order.
   */
  query(text: string, ...params: unknown[]): EntitySelection {
    return this.queryAs(() => true, text, params);
  }

  /** @internal query() seeing only the attributes `visible` lets through (REST sees exposed ones). */
  queryAs(visible: Visibility, text: string, params: readonly unknown[]): EntitySelection {
    const { where, order } = resolveQuery(this.#dc.model, parseQuery(text), params, visible, this.#dc.ds.calculatedLookup);
    const narrowed = where ? this.#where(where) : this;
    return order.length > 0 ? narrowed.withOrder(order) : narrowed;
  }

  /** The sum of the values of an attribute path (numbers; object properties too: "extra.score"). */
  sum(path: string): Promise<number> {
    return this.#aggregate(path, 'sum').then((v) => Number(v ?? 0));
  }

  /** The average of the values of an attribute path, or null when there are none. */
  average(path: string): Promise<number | null> {
    return this.#aggregate(path, 'average') as Promise<number | null>;
  }

  /** The lowest value of an attribute path (text by 4D's order), or null. */
  min(path: string): Promise<unknown> {
    return this.#aggregate(path, 'min');
  }

  /** The highest value of an attribute path, or null. */
  max(path: string): Promise<unknown> {
    return this.#aggregate(path, 'max');
  }

  /** The number of entities whose attribute path is not null. */
  count(path: string): Promise<number> {
    return this.#aggregate(path, 'count') as Promise<number>;
  }

  /** The distinct values of an attribute path, sorted. */
  distinct(path: string): Promise<unknown[]> {
    return distinct(this, resolveValuePath(this.#dc.model, path, () => true));
  }

  async #aggregate(path: string, fn: 'sum' | 'average' | 'min' | 'max' | 'count'): Promise<unknown> {
    return (await aggregates(this, resolveValuePath(this.#dc.model, path, () => true), [fn]))[fn];
  }

  /** The keys of the whole selection, in its order: compact (8 bytes a member for integer keys). */
  async keys(): Promise<KeyList> {
    const key = this.#dc.model.key;
    const { sql, params } = compileSelect(this.#dc.ds.storage.dialect, this.spec([{ kind: 'storage', attr: key }]));
    const values = await this.#dc.ds.storage.column(sql, params);
    if (INTEGER_TYPES.has(key.type)) return Float64Array.from(values as number[], Number);
    return values.map(String);
  }

  /** @internal The condition selecting this selection's members (its window, when it is a slice). */
  membersCondition(): Condition | null {
    const s = this.#source;
    if (s.offset === 0 && s.limit === null) return s.where;
    const key = this.#dc.model.key;
    return { kind: 'inSelect', path: directPath(key), select: this.spec([{ kind: 'storage', attr: key }]) };
  }

  #where(condition: Condition): EntitySelection {
    const s = this.#source;
    if (s.offset === 0 && s.limit === null) return new EntitySelection(this.#dc, { ...s, where: and(s.where, condition) });
    const key = this.#dc.model.key;
    const members: Condition = { kind: 'inSelect', path: directPath(key), select: this.spec([{ kind: 'storage', attr: key }]) };
    return new EntitySelection(this.#dc, { kind: 'query', where: and(members, condition), order: s.order, offset: 0, limit: null });
  }

  /** @internal */
  withOrder(order: readonly OrderTerm[]): EntitySelection {
    const s = this.#source;
    if (s.offset === 0 && s.limit === null) return new EntitySelection(this.#dc, { ...s, order });
    // A window keeps its members: select the members first, then sort them.
    const key = this.#dc.model.key;
    const members: Condition = { kind: 'inSelect', path: directPath(key), select: this.spec([{ kind: 'storage', attr: key }]) };
    return new EntitySelection(this.#dc, { kind: 'query', where: members, order, offset: 0, limit: null });
  }

  async first(): Promise<Entity | null> {
    const [e] = await this.page(0, 1);
    return e ?? null;
  }

  /** Every entity, read in chunks. Prefer iteration (for await … of) for large selections. */
  async toArray(): Promise<Entity[]> {
    const out: Entity[] = [];
    for await (const e of this) out.push(e);
    return out;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Entity> {
    for (let at = 0; ; at += ITERATION_CHUNK) {
      const chunk = await this.page(at, ITERATION_CHUNK);
      yield* chunk;
      if (chunk.length < ITERATION_CHUNK) return;
    }
  }

  /** @internal Entities at positions [start, start + count) of this selection, in order. */
  page(start: number, count: number): Promise<Entity[]> {
    const window = this.slice(start, start + count);
    return this.#dc.readEntities(window.spec(this.#dc.entityColumns()));
  }

  /** @internal The SELECT this selection stands for, with the given columns. */
  spec(columns: SelectSpec['columns']): SelectSpec {
    const s = this.#source;
    const key = this.#dc.model.key;
    const order = s.order.some((t) => t.path.via.length === 0 && t.path.attr === key) ? s.order : [...s.order, { path: directPath(key), descending: false }];
    return { dataClass: this.#dc.model, columns, where: s.where, order, offset: s.offset, limit: s.limit };
  }
}
