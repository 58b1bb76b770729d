// Reads what a projection inlines beyond the entities' own rows (related entities, related
// selections, value lists of aliases, calculated values) with one query per relation level for a
// whole page (key lists chunked), never one per entity. All through the caller's access.

import { ANSWER_SLICE_MS, KEYS_PER_QUERY, MAX_INLINED_ENTITIES } from '../../config/limits.js';
import { LoopTurns } from '../../util/loop-turns.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { pageSize, type AliasAttribute, type DataClassModel, type RelatedEntitiesAttribute, type StorageAttribute } from '../../model/types.js';
import { directPath, type SelectSpec } from '../../query/plan.js';
import { compileCount, compileSelect } from '../../sql/compiler/statements.js';
import type { Access } from '../access/access.js';
import { walkAlias, type StepRead } from './alias-values.js';
import { AnswerBudget, countRows, measured, takeRead, valueChars, type Weighting } from './answer-size.js';
import type { Core } from '../datastore.js';
import type { DataClassCore } from '../dataclass-core.js';

/** What reading related entities needs of the core: the dataclasses. */
type Classes = Pick<Core, 'classOf'>;
import { relatedKeyOf, type Entity } from '../entities/entity.js';
import { leadsTo, type ProjectedAttribute, type Projection } from './projection.js';

export interface FetchedEntity {
  readonly entity: Entity;
  /** inline relations, value lists of aliases through 1→N relations and calculated values, by attribute name */
  readonly related: Map<string, unknown>;
}

export interface FetchedSelection {
  /** number of entities in the whole related selection */
  readonly count: number;
  readonly entities: readonly FetchedEntity[];
}

/**
 * The related entities one answer may inline, all levels together: counted before each level is
 * read (a 1→N level's size is known from its counts), so that a few bytes of $attributes
 * (colleagues.colleagues.colleagues.*) cannot make the server read and build an answer of
 * millions of entities. Past it: LIMIT_EXCEEDED, naming the path and how to read less. It
 * carries the answer's byte budget too (`bytes`, answer-size.ts), which a level big enough is
 * measured against before it is read.
 */
export class InlineBudget {
  #left: number;
  /**
   * turns of the event loop the answer's reads give between their statements: making a big
   * answer's levels holds the loop no more than ANSWER_SLICE_MS at a time. (Not fair turns, as
   * slices take: an answer being built holds a snapshot, which others wait for; it goes on.)
   */
  readonly turns = new LoopTurns(ANSWER_SLICE_MS);
  constructor(readonly limit = MAX_INLINED_ENTITIES, readonly bytes = new AnswerBudget()) {
    this.#left = limit;
  }

  take(n: number, path: string): void {
    this.#left -= n;
    if (this.#left >= 0) return;
    throw new DatasetError('LIMIT_EXCEEDED', `the answer would inline more than the ${this.limit} related entities one answer may hold (${n} more through ${path}): ask for fewer entities ($top), fewer levels of relations, or read a relation's entities by their own URL (/rest/{dataClass}({key})/${path.split('.')[0]}), a page at a time`);
  }
}

/**
 * How many times each entity of a level appears in the answer: an entity read once is sent once
 * under every parent that holds it (colleagues of colleagues repeat), and the answer's size is
 * that of the tree, not of the entities read. Absent: once.
 */
type Weights = ReadonlyMap<Entity, number>;

const weightOf = (weights: Weights | undefined, e: Entity): number => weights?.get(e) ?? 1;

export async function fetchRelated(core: Classes, entities: readonly Entity[], projection: Projection, access: Access, budget = new InlineBudget(), path = '', weights?: Weights): Promise<FetchedEntity[]> {
  const out = entities.map((entity): FetchedEntity => ({ entity, related: new Map() }));
  if (entities.length === 0 || !projection.related) return out;
  for (const p of projection.attributes) {
    await budget.turns.pass();
    await fetchAttribute(core, out, p, access, { budget, path: path ? `${path}.${p.attr.name}` : p.attr.name, weights });
  }
  return out;
}

/** What a level's reads count against: the answer's budget, the path that leads there, how often each parent is sent. */
interface Counting {
  readonly budget: InlineBudget;
  readonly path: string;
  readonly weights: Weights | undefined;
}

/** Each of `children(parent)` sent as often as its parents are, summed over the parents that hold it. */
function childWeights<P>(parents: Iterable<[P, Entity]>, parentWeight: (p: P) => number): Map<Entity, number> {
  const weights = new Map<Entity, number>();
  for (const [parent, child] of parents) weights.set(child, (weights.get(child) ?? 0) + parentWeight(parent));
  return weights;
}

async function fetchAttribute(core: Classes, out: readonly FetchedEntity[], p: ProjectedAttribute, access: Access, counting: Counting): Promise<void> {
  const { budget, path, weights } = counting;
  switch (p.kind) {
    case 'value':
      if (p.attr.kind === 'calculated') await calculatedValues(out, p.attr.name, counting);
      return;
    case 'deferred':
      if (leadsTo(p.attr)?.many === false) await existingTargets(core, out, p.attr.name, (leadsTo(p.attr) as { target: DataClassModel }).target, access);
      return;
    case 'entity':
      // (one each at most: no more than the entities that hold them)
      budget.take(out.reduce((n, o) => n + weightOf(weights, o.entity), 0), path);
      return relatedEntities(core, out, p.attr.name, p.sub, access, counting);
    case 'list': {
      const values = await walkAlias(core, out.map((o) => o.entity), p.attr, access, aliasReads(counting, access));
      for (const o of out) o.related.set(p.attr.name, values.get(o.entity) ?? []);
      return;
    }
    case 'entities':
      return p.attr.kind === 'alias' ? aliasSelections(core, out, p.attr, p.sub, access, counting) : relatedSelections(core, out, p.attr, p.sub, access, counting);
    default: {
      const never: never = p;
      return never;
    }
  }
}

/**
 * Calculated values, awaited here so that get functions may be async; each counted against the
 * answer's size as it is computed (user code may return a text or an object of any size).
 */
async function calculatedValues(out: readonly FetchedEntity[], name: string, counting: Counting): Promise<void> {
  for (const o of out) {
    const value: unknown = await o.entity.get(name);
    const chars = valueChars(value) * weightOf(counting.weights, o.entity);
    if (chars > 0) counting.budget.bytes.take(chars, `the calculated ${name} through ${counting.path}`);
    o.related.set(name, value);
  }
}

/**
 * Reads the rows of `spec` as entities of `target`: measured first in SQL when they could be big
 * (`measure`, with how often each row is sent), else counted as they are read (each row
 * `weight(row)` times), before any entity is made of them.
 */
async function readCounted(target: DataClassCore, spec: SelectSpec, access: Access, budget: InlineBudget, what: string, sent: Weighting | undefined, rows: number): Promise<Entity[]> {
  const measuring = measured(rows, spec.columns);
  if (measuring) await takeRead(budget.bytes, access, spec, what, sent);
  await budget.turns.pass();
  const read = await target.readRows(spec, access);
  if (!measuring) countRows(budget.bytes, read, what, sent && ((row) => sent.weight(String(row[sent.by.name]))));
  await budget.turns.pass();
  return read.map((row) => target.entityFromRow(row, access));
}

/** The rows of `target` whose `attr` is among `values`, KEYS_PER_QUERY a statement, each measured or counted (readCounted). */
async function readWhereInCounted(target: DataClassCore, attr: StorageAttribute, values: readonly unknown[], access: Access, budget: InlineBudget, what: string, sent: Weighting | undefined, byKey = false): Promise<Entity[]> {
  const out: Entity[] = [];
  for (let at = 0; at < values.length; at += KEYS_PER_QUERY) {
    const chunk = values.slice(at, at + KEYS_PER_QUERY);
    const spec: SelectSpec = {
      dataClass: target.model, columns: target.columns, where: { kind: 'in', path: directPath(attr), values: chunk },
      order: byKey ? [{ path: directPath(target.model.key), descending: false }] : [],
    };
    // (rows of a 1→N step: as many as they are, at least one a value)
    out.push(...await readCounted(target, spec, access, budget, what, sent, attr === target.model.key ? chunk.length : Number.POSITIVE_INFINITY));
  }
  return out;
}

/** How an alias's steps are read for an answer: each counted against its size (walkAlias). */
function aliasReads(counting: Counting, access: Access): StepRead<DataClassCore> {
  return (target, attr, values, sent, byKey) => readWhereInCounted(target, attr, values, access, counting.budget, `${values.length} entities through ${counting.path}`, sent, byKey);
}

/**
 * A deferred N→1 relation names its target only if that entity still exists (4D reads a relation
 * to a dropped entity as null): one look-up of the keys for the whole page.
 */
async function existingTargets(core: Classes, out: readonly FetchedEntity[], name: string, target: DataClassModel, access: Access): Promise<void> {
  const existing = await existingKeys(target, out.map((o) => relatedKeyOf(o.entity, name)), access);
  for (const o of out) {
    const key = relatedKeyOf(o.entity, name);
    o.related.set(name, key !== null && existing.has(key) ? key : null);
  }
}

/** Of these keys (nulls and repeats allowed), those of entities of `target` the caller can see: one query per KEYS_PER_QUERY keys. */
export async function existingKeys(target: DataClassModel, candidates: readonly unknown[], access: Access): Promise<Set<unknown>> {
  const keys = [...new Set(candidates.filter((k) => k !== null))];
  const existing = new Set<unknown>();
  for (let at = 0; at < keys.length; at += KEYS_PER_QUERY) {
    const { sql, params } = compileSelect(access.reader.dialect, {
      dataClass: target, columns: [{ kind: 'storage', attr: target.key }], order: [],
      where: { kind: 'in', path: directPath(target.key), values: keys.slice(at, at + KEYS_PER_QUERY) },
    }, access.restrict);
    for (const row of await access.reader.all(sql, params)) existing.add(row[target.key.name]);
  }
  return existing;
}

/** Related entities inline (an N→1 relation or an alias through N→1 relations): a key pointing at a dropped entity reads as null, as 4D does. */
async function relatedEntities(core: Classes, out: readonly FetchedEntity[], name: string, sub: Projection, access: Access, counting: Counting): Promise<void> {
  const target = core.classOf(sub.dataClass);
  const keys = [...new Set(out.map((o) => relatedKeyOf(o.entity, name)).filter((k) => k !== null))];
  // each target sent under every parent that holds it
  const sent = new Map<string, number>();
  for (const o of out) {
    const k = relatedKeyOf(o.entity, name);
    if (k !== null) sent.set(String(k), (sent.get(String(k)) ?? 0) + weightOf(counting.weights, o.entity));
  }
  const read = await readWhereInCounted(target, target.model.key, keys, access, counting.budget, `${keys.length} entities through ${counting.path}`, { by: target.model.key, weight: (k) => sent.get(k) ?? 1 });
  const byKeyRead = new Map(read.map((e) => [e.getKey(), e]));
  const weights = childWeights(out.flatMap((o): [Entity, Entity][] => {
    const target = byKeyRead.get(relatedKeyOf(o.entity, name));
    return target ? [[o.entity, target]] : [];
  }), (parent) => weightOf(counting.weights, parent));
  const fetched = await fetchRelated(core, read, sub, access, counting.budget, counting.path, weights);
  const byKey = new Map(fetched.map((f) => [f.entity.getKey(), f]));
  for (const o of out) o.related.set(name, byKey.get(relatedKeyOf(o.entity, name)) ?? null);
}

/** The first page of each parent's entities reached through an alias (in relation order), with their count. */
async function aliasSelections(core: Classes, out: readonly FetchedEntity[], alias: AliasAttribute, sub: Projection, access: Access, counting: Counting): Promise<void> {
  const parentWeight = (parent: Entity) => weightOf(counting.weights, parent);
  const reached = (await walkAlias(core, out.map((o) => o.entity), alias, access, aliasReads(counting, access), parentWeight)) as Map<Entity, Entity[]>;
  const limit = pageSize(sub.dataClass);
  const pages = new Map([...reached].map(([root, list]) => [root, list.slice(0, limit)]));
  counting.budget.take([...pages].reduce((n, [parent, page]) => n + page.length * parentWeight(parent), 0), counting.path);
  const unique = new Map([...pages.values()].flat().map((e) => [e.getKey(), e]));
  const weights = childWeights([...pages].flatMap(([parent, page]) => page.map((e): [Entity, Entity] => [parent, unique.get(e.getKey()) as Entity])), parentWeight);
  const fetched = new Map((await fetchRelated(core, [...unique.values()], sub, access, counting.budget, counting.path, weights)).map((f) => [f.entity.getKey(), f]));
  for (const o of out) {
    const page = (pages.get(o.entity) ?? []).map((e) => fetched.get(e.getKey()) as FetchedEntity);
    o.related.set(alias.name, { count: reached.get(o.entity)?.length ?? 0, entities: page });
  }
}

/**
 * `$asArray`: how many entities each entity's 1→N relations (those the projection sends as
 * deferred URIs) hold, as the caller sees them, set as a number under the relation's name. One
 * grouped COUNT per relation for the whole page (keys chunked); no related row is read.
 */
export async function countRelated(out: readonly FetchedEntity[], projection: Projection, access: Access): Promise<void> {
  if (out.length === 0) return;
  for (const p of projection.attributes) {
    if (p.kind !== 'deferred' || p.attr.kind !== 'relatedEntities') continue;
    const counts = await countsByParent(p.attr, out.map((o) => o.entity.getKey()), access);
    for (const o of out) o.related.set(p.attr.name, counts.get(o.entity.getKey()) ?? 0);
  }
}

/** The number of related entities of each parent key (those without any are absent). */
async function countsByParent(relation: RelatedEntitiesAttribute, keys: readonly unknown[], access: Access): Promise<Map<unknown, number>> {
  const fkAttr = relation.inverse.foreignKey;
  const counts = new Map<unknown, number>();
  for (let at = 0; at < keys.length; at += KEYS_PER_QUERY) {
    const where = { kind: 'in' as const, path: directPath(fkAttr), values: keys.slice(at, at + KEYS_PER_QUERY) };
    const { sql, params } = compileCount(access.reader.dialect, relation.target, where, access.restrict, fkAttr);
    for (const r of await access.reader.all(sql, params)) counts.set(r.g, Number(r.n));
  }
  return counts;
}

/** The first page of each parent's related entities (a 1→N relation), in key order (a window function), with their count. */
async function relatedSelections(core: Classes, out: readonly FetchedEntity[], relation: RelatedEntitiesAttribute, sub: Projection, access: Access, counting: Counting): Promise<void> {
  const target = core.classOf(relation.target);
  const fkAttr = relation.inverse.foreignKey;
  const found: Entity[] = [];
  const keys = out.map((o) => o.entity.getKey());
  const counts = await countsByParent(relation, keys, access);
  // the level's size, known before its rows are read: a page of each parent's entities
  const perParent = pageSize(target.model);
  counting.budget.take(out.reduce((n, o) => n + Math.min(counts.get(o.entity.getKey()) ?? 0, perParent) * weightOf(counting.weights, o.entity), 0), counting.path);
  const parentWeight = new Map(out.map((o) => [o.entity.getKey(), weightOf(counting.weights, o.entity)]));
  const rows = out.reduce((n, o) => n + Math.min(counts.get(o.entity.getKey()) ?? 0, perParent), 0);
  // (each parent's entities sent as often as their parent)
  const sent = new Map([...parentWeight].map(([k, w]) => [String(k), w]));
  const weighting = { by: fkAttr, weight: (k: string) => sent.get(k) ?? 1 };
  for (let at = 0; at < keys.length; at += KEYS_PER_QUERY) {
    const where = { kind: 'in' as const, path: directPath(fkAttr), values: keys.slice(at, at + KEYS_PER_QUERY) };
    const spec = {
      dataClass: target.model,
      columns: target.columns,
      where,
      order: [{ path: directPath(target.model.key), descending: false }],
      perGroup: { attr: fkAttr, limit: perParent },
    };
    found.push(...await readCounted(target, spec, access, counting.budget, `${rows} entities through ${counting.path}`, weighting, rows));
  }
  const groups = new Map<unknown, FetchedEntity[]>();
  // (a row is read per parent: each found entity is sent under its one parent, as often as it)
  const weights = new Map(found.map((e) => [e, parentWeight.get(e.get(fkAttr.name)) ?? 1]));
  for (const f of await fetchRelated(core, found, sub, access, counting.budget, counting.path, weights)) {
    const k = f.entity.get(fkAttr.name);
    const list = groups.get(k);
    if (list) list.push(f);
    else groups.set(k, [f]);
  }
  for (const o of out) {
    const k = o.entity.getKey();
    o.related.set(relation.name, { count: counts.get(k) ?? 0, entities: groups.get(k) ?? [] });
  }
}
