// Values of alias attributes whose path goes through a 1→N relation (Company.staffNames =
// staff.lastName): a list per entity. The path is walked level by level with one query per
// relation step for the whole page, never one per entity. Aliases through N→1 relations only
// are read in SQL with the entity (see sql/compiler.ts).

import type { AliasAttribute } from '../model/types.js';
import { directPath } from '../query/plan.js';
import type { Datastore } from './datastore.js';
import type { Entity } from './entity.js';

/** For each entity, the entities or values at the end of the alias path (in relation order). */
export async function walkAlias(ds: Datastore, entities: readonly Entity[], alias: AliasAttribute): Promise<Map<Entity, unknown[]>> {
  // Each root entity keeps the list of entities reached so far.
  let reached = new Map<Entity, Entity[]>(entities.map((e) => [e, [e]]));
  const last = alias.steps[alias.steps.length - 1];
  const relations = last.kind === 'storage' || last.kind === 'calculated' ? alias.steps.slice(0, -1) : alias.steps;
  for (const step of relations) {
    const all = [...new Set([...reached.values()].flat())];
    let next: (e: Entity) => Entity[];
    if (step.kind === 'relatedEntity') {
      const target = ds.dataClassOf(step.target);
      const keys = [...new Set(all.map((e) => e.get(step.foreignKey.name)).filter((k) => k !== null))];
      const found = keys.length === 0 ? [] : await target.readEntities({
        dataClass: target.model, columns: target.entityColumns([]),
        where: { kind: 'in', path: directPath(target.model.key), values: keys }, order: [],
      });
      const byKey = new Map(found.map((e) => [e.getKey(), e]));
      next = (e) => {
        const r = byKey.get(e.get(step.foreignKey.name));
        return r ? [r] : [];
      };
    } else if (step.kind === 'relatedEntities') {
      const target = ds.dataClassOf(step.target);
      const fk = step.inverse.foreignKey;
      const keys = all.map((e) => e.getKey());
      const found = keys.length === 0 ? [] : await target.readEntities({
        dataClass: target.model, columns: target.entityColumns([]),
        where: { kind: 'in', path: directPath(fk), values: keys },
        order: [{ path: directPath(target.model.key), descending: false }],
      });
      const byParent = new Map<unknown, Entity[]>();
      for (const e of found) {
        const list = byParent.get(e.get(fk.name));
        if (list) list.push(e);
        else byParent.set(e.get(fk.name), [e]);
      }
      next = (e) => byParent.get(e.getKey()) ?? [];
    } else {
      return new Map(entities.map((e) => [e, []])); // the model loader allows only relations here
    }
    const moved = new Map<Entity, Entity[]>();
    for (const [root, list] of reached) moved.set(root, list.flatMap(next));
    reached = moved;
  }
  if (last.kind !== 'storage' && last.kind !== 'calculated') return reached as Map<Entity, unknown[]>;
  const out = new Map<Entity, unknown[]>();
  for (const [root, list] of reached) out.set(root, list.map((e) => e.get(last.name)));
  return out;
}
