// Reads what a projection inlines beyond the entities' own rows (related entities, related
// selections, value lists of aliases, calculated values) with one query per relation level for a
// whole page (key lists chunked), never one per entity. All through the caller's access.

import { KEYS_PER_QUERY } from '../config/limits.js';
import { pageSize, type AliasAttribute, type DataClassModel, type RelatedEntitiesAttribute } from '../model/types.js';
import { directPath } from '../query/plan.js';
import { compileCount, compileSelect } from '../sql/compiler.js';
import type { Access } from './access.js';
import { readWhereIn, walkAlias } from './alias-values.js';
import type { Core } from './datastore.js';

/** What reading related entities needs of the core: the dataclasses. */
type Classes = Pick<Core, 'classOf'>;
import { relatedKeyOf, type Entity } from './entity.js';
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

export async function fetchRelated(core: Classes, entities: readonly Entity[], projection: Projection, access: Access): Promise<FetchedEntity[]> {
  const out = entities.map((entity): FetchedEntity => ({ entity, related: new Map() }));
  if (entities.length === 0 || !projection.related) return out;
  for (const p of projection.attributes) await fetchAttribute(core, out, p, access);
  return out;
}

async function fetchAttribute(core: Classes, out: readonly FetchedEntity[], p: ProjectedAttribute, access: Access): Promise<void> {
  switch (p.kind) {
    case 'value':
      if (p.attr.kind === 'calculated') await calculatedValues(out, p.attr.name);
      return;
    case 'deferred':
      if (leadsTo(p.attr)?.many === false) await existingTargets(core, out, p.attr.name, (leadsTo(p.attr) as { target: DataClassModel }).target, access);
      return;
    case 'entity':
      return relatedEntities(core, out, p.attr.name, p.sub, access);
    case 'list': {
      const values = await walkAlias(core, out.map((o) => o.entity), p.attr, access);
      for (const o of out) o.related.set(p.attr.name, values.get(o.entity) ?? []);
      return;
    }
    case 'entities':
      return p.attr.kind === 'alias' ? aliasSelections(core, out, p.attr, p.sub, access) : relatedSelections(core, out, p.attr, p.sub, access);
    default: {
      const never: never = p;
      return never;
    }
  }
}

/** Calculated values, awaited here so that get functions may be async. */
async function calculatedValues(out: readonly FetchedEntity[], name: string): Promise<void> {
  for (const o of out) o.related.set(name, await o.entity.get(name));
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
async function relatedEntities(core: Classes, out: readonly FetchedEntity[], name: string, sub: Projection, access: Access): Promise<void> {
  const target = core.classOf(sub.dataClass);
  const keys = [...new Set(out.map((o) => relatedKeyOf(o.entity, name)).filter((k) => k !== null))];
  const fetched = await fetchRelated(core, await readWhereIn(target, target.model.key, keys, access), sub, access);
  const byKey = new Map(fetched.map((f) => [f.entity.getKey(), f]));
  for (const o of out) o.related.set(name, byKey.get(relatedKeyOf(o.entity, name)) ?? null);
}

/** The first page of each parent's entities reached through an alias (in relation order), with their count. */
async function aliasSelections(core: Classes, out: readonly FetchedEntity[], alias: AliasAttribute, sub: Projection, access: Access): Promise<void> {
  const reached = (await walkAlias(core, out.map((o) => o.entity), alias, access)) as Map<Entity, Entity[]>;
  const limit = pageSize(sub.dataClass);
  const pages = new Map([...reached].map(([root, list]) => [root, list.slice(0, limit)]));
  const unique = [...new Map([...pages.values()].flat().map((e) => [e.getKey(), e])).values()];
  const fetched = new Map((await fetchRelated(core, unique, sub, access)).map((f) => [f.entity.getKey(), f]));
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
async function relatedSelections(core: Classes, out: readonly FetchedEntity[], relation: RelatedEntitiesAttribute, sub: Projection, access: Access): Promise<void> {
  const target = core.classOf(relation.target);
  const fkAttr = relation.inverse.foreignKey;
  const found: Entity[] = [];
  const keys = out.map((o) => o.entity.getKey());
  const counts = await countsByParent(relation, keys, access);
  for (let at = 0; at < keys.length; at += KEYS_PER_QUERY) {
    const where = { kind: 'in' as const, path: directPath(fkAttr), values: keys.slice(at, at + KEYS_PER_QUERY) };
    found.push(...await target.readEntities({
      dataClass: target.model,
      columns: target.columns,
      where,
      order: [{ path: directPath(target.model.key), descending: false }],
      perGroup: { attr: fkAttr, limit: pageSize(target.model) },
    }, access));
  }
  const groups = new Map<unknown, FetchedEntity[]>();
  for (const f of await fetchRelated(core, found, sub, access)) {
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
