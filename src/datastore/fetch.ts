// Reads the entities a projection asks for, relations included, with one query per relation
// level (keys gathered from the whole page), never one per entity.

import type { DataClassModel } from '../model/types.js';
import { directPath } from '../query/plan.js';
import { compileCount } from '../sql/compiler.js';
import type { Datastore } from './datastore.js';
import type { Entity } from './entity.js';
import type { Projection } from './projection.js';

export interface FetchedEntity {
  readonly entity: Entity;
  /** inline relations by attribute name */
  readonly related: Map<string, FetchedEntity | null | FetchedSelection>;
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
  if (entities.length === 0) return out;
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
    } else if (p.kind === 'entities') {
      const target = ds.dataClassOf(p.attr.target);
      const fkAttr = p.attr.inverse.foreignKey;
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
