// Reads what a projection inlines beyond the entities' own rows (related entities, related
// selections, value lists of aliases) with one query per relation level for a whole page (key
// lists chunked), never one per entity.

import { KEYS_PER_QUERY } from '../config/limits.js';
import { pageSize, type DataClassModel } from '../model/types.js';
import { directPath } from '../query/plan.js';
import { compileCount, compileSelect } from '../sql/compiler.js';
import { readWhereIn, walkAlias } from './alias-values.js';
import type { Datastore } from './datastore.js';
import type { Entity } from './entity.js';
import { leadsTo, type Projection } from './projection.js';

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

export async function fetchRelated(ds: Datastore, entities: readonly Entity[], projection: Projection): Promise<FetchedEntity[]> {
  const out = entities.map((entity): FetchedEntity => ({ entity, related: new Map() }));
  if (entities.length === 0 || !projection.related) return out;
  for (const p of projection.attributes) {
    if (p.kind === 'deferred' && leadsTo(p.attr)?.many === false) {
      // a deferred N→1 relation names its target only if that entity still exists (4D reads a
      // relation to a dropped entity as null): one look-up of the keys for the whole page
      const target = ds.dataClassOf((leadsTo(p.attr) as { target: DataClassModel }).target);
      const name = p.attr.name;
      const keys = [...new Set(entities.map((e) => e.relatedKey(name)).filter((k) => k !== null))];
      const existing = new Set<unknown>();
      for (let at = 0; at < keys.length; at += KEYS_PER_QUERY) {
        const { sql, params } = compileSelect(ds.storage.dialect, {
          dataClass: target.model, columns: [{ kind: 'storage', attr: target.model.key }], order: [],
          where: { kind: 'in', path: directPath(target.model.key), values: keys.slice(at, at + KEYS_PER_QUERY) },
        });
        for (const row of await ds.storage.all(sql, params)) existing.add(row[target.model.key.name]);
      }
      for (const o of out) {
        const key = o.entity.relatedKey(name);
        o.related.set(name, key !== null && existing.has(key) ? key : null);
      }
    } else if (p.kind === 'value' && p.attr.kind === 'calculated') {
      // calculated values, awaited here so that get functions may be async
      const name = p.attr.name;
      for (const o of out) o.related.set(name, await o.entity.get(name));
    } else if (p.kind === 'entity') {
      const target = ds.dataClassOf(p.sub.dataClass);
      const name = p.attr.name;
      const keys = [...new Set(entities.map((e) => e.relatedKey(name)).filter((k) => k !== null))];
      const fetched = await fetchRelated(ds, await readWhereIn(target, target.model.key, keys), p.sub);
      const byKey = new Map(fetched.map((f) => [f.entity.getKey(), f]));
      // A key pointing at a dropped entity reads as null, as 4D does.
      for (const o of out) o.related.set(name, byKey.get(o.entity.relatedKey(name)) ?? null);
    } else if (p.kind === 'list') {
      const values = await walkAlias(ds, entities, p.attr);
      for (const o of out) o.related.set(p.attr.name, values.get(o.entity) ?? []);
    } else if (p.kind === 'entities' && p.attr.kind === 'alias') {
      const reached = (await walkAlias(ds, entities, p.attr)) as Map<Entity, Entity[]>;
      const limit = pageSize(p.sub.dataClass);
      const pages = new Map([...reached].map(([root, list]) => [root, list.slice(0, limit)]));
      const unique = [...new Map([...pages.values()].flat().map((e) => [e.getKey(), e])).values()];
      const fetched = new Map((await fetchRelated(ds, unique, p.sub)).map((f) => [f.entity.getKey(), f]));
      for (const o of out) {
        const page = (pages.get(o.entity) ?? []).map((e) => fetched.get(e.getKey()) as FetchedEntity);
        o.related.set(p.attr.name, { count: reached.get(o.entity)?.length ?? 0, entities: page });
      }
    } else if (p.kind === 'entities' && p.attr.kind === 'relatedEntities') {
      const target = ds.dataClassOf(p.attr.target);
      const fkAttr = p.attr.inverse.foreignKey;
      const counts = new Map<unknown, number>();
      const found: Entity[] = [];
      const keys = entities.map((e) => e.getKey());
      for (let at = 0; at < keys.length; at += KEYS_PER_QUERY) {
        const where = { kind: 'in' as const, path: directPath(fkAttr), values: keys.slice(at, at + KEYS_PER_QUERY) };
        const { sql, params } = compileCount(ds.storage.dialect, target.model, where, fkAttr);
        for (const r of await ds.storage.all(sql, params)) counts.set(r.g, Number(r.n));
        // the first page of each parent's related entities, in key order (a window function)
        found.push(...await target.readEntities({
          dataClass: target.model,
          columns: target.entityColumns(),
          where,
          order: [{ path: directPath(target.model.key), descending: false }],
          perGroup: { attr: fkAttr, limit: pageSize(target.model) },
        }));
      }
      const groups = new Map<unknown, FetchedEntity[]>();
      for (const f of await fetchRelated(ds, found, p.sub)) {
        const k = f.entity.get(fkAttr.name);
        const list = groups.get(k);
        if (list) list.push(f);
        else groups.set(k, [f]);
      }
      for (const o of out) {
        const k = o.entity.getKey();
        o.related.set(p.attr.name, { count: counts.get(k) ?? 0, entities: groups.get(k) ?? [] });
      }
    }
  }
  return out;
}
