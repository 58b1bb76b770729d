// Reads the entities a projection asks for, relations included, with one query per relation
// level (keys gathered from the whole page), never one per entity.

import type { DataClassModel } from '../model/types.js';
import { walkAlias } from './alias-values.js';
import { directPath } from '../query/plan.js';
import { compileCount } from '../sql/compiler.js';
import type { Datastore } from './datastore.js';
import type { Entity } from './entity.js';
import type { Projection } from './projection.js';

export interface FetchedEntity {
  readonly entity: Entity;
  /** inline relations, and the value lists of aliases through 1→N relations, by attribute name */
  readonly related: Map<string, FetchedEntity | null | FetchedSelection | unknown[]>;
}

export interface FetchedSelection {
  /** number of entities in the whole related selection */
  readonly count: number;
  readonly entities: readonly FetchedEntity[];
}

/** Default page size of a dataclass (4D's "Default Top Size", else 100). */
export function topSize(dc: DataClassModel): number {
  return dc.defaultTopSize ?? 100;
}

export async function fetchRelated(ds: Datastore, entities: readonly Entity[], projection: Projection): Promise<FetchedEntity[]> {
  const out = entities.map((entity): FetchedEntity => ({ entity, related: new Map() }));
  if (entities.length === 0 || !projection.related) return out;
  for (const p of projection.attributes) {
    if (p.kind === 'entity') {
      const target = ds.dataClassOf(p.attr.target);
      const fk = p.attr.foreignKey.name;
      const keys = [...new Set(entities.map((e) => e.get(fk)).filter((k) => k !== null && k !== undefined))];
      const found = keys.length === 0 ? [] : await target.readEntities({
        dataClass: target.model,
        columns: target.entityColumns(p.sub.aliases),
        where: { kind: 'in', path: directPath(target.model.key), values: keys },
        order: [],
      });
      const fetched = await fetchRelated(ds, found, p.sub);
      const byKey = new Map(fetched.map((f) => [f.entity.getKey(), f]));
      // A key pointing at a dropped entity reads as null, as 4D does.
      for (const o of out) o.related.set(p.attr.name, byKey.get(o.entity.get(fk)) ?? null);
    } else if (p.kind === 'list') {
      const values = await walkAlias(ds, entities, p.attr);
      for (const o of out) o.related.set(p.attr.name, values.get(o.entity) ?? []);
    } else if (p.kind === 'entities' && p.attr.kind === 'alias') {
      const reached = (await walkAlias(ds, entities, p.attr)) as Map<Entity, Entity[]>;
      const limit = topSize(p.sub.dataClass);
      const pages = new Map([...reached].map(([root, list]) => [root, list.slice(0, limit)]));
      const unique = [...new Set([...pages.values()].flat())];
      const target = ds.dataClassOf(p.sub.dataClass);
      // re-read with the sub-projection's aliases, then fetch their own relations
      const reread = p.sub.aliases.length === 0 || unique.length === 0 ? unique : await target.readEntities({
        dataClass: target.model, columns: target.entityColumns(p.sub.aliases),
        where: { kind: 'in', path: directPath(target.model.key), values: unique.map((e) => e.getKey()) }, order: [],
      });
      const fetched = new Map((await fetchRelated(ds, reread, p.sub)).map((f) => [f.entity.getKey(), f]));
      for (const o of out) {
        const list = reached.get(o.entity) ?? [];
        const page = (pages.get(o.entity) ?? []).map((e) => fetched.get(e.getKey())).filter((f): f is FetchedEntity => f !== undefined);
        o.related.set(p.attr.name, { count: list.length, entities: page });
      }
    } else if (p.kind === 'entities' && p.attr.kind === 'relatedEntities') {
      const target = ds.dataClassOf(p.attr.target);
      const fkAttr = p.attr.inverse.foreignKey; // (narrowed above: a real 1→N relation)
      const keys = entities.map((e) => e.getKey());
      const where = { kind: 'in' as const, path: directPath(fkAttr), values: keys };
      const { sql, params } = compileCount(ds.storage.dialect, target.model, where, fkAttr);
      const counts = new Map((await ds.storage.all(sql, params)).map((r) => [r.g, Number(r.n)]));
      const found = await target.readEntities({
        dataClass: target.model,
        columns: target.entityColumns(p.sub.aliases),
        where,
        order: [{ path: directPath(target.model.key), descending: false }],
        perGroup: { attr: fkAttr, limit: topSize(target.model) },
      });
      const fetched = await fetchRelated(ds, found, p.sub);
      const groups = new Map<unknown, FetchedEntity[]>();
      for (const f of fetched) {
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
