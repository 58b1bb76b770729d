// From an action to the core's objects: the entity a URL names, the selection a collection
// source stands for (a dataclass, a relation followed from an entity, a stored set as the request
// defines it), narrowed by $filter and sorted by $orderby — all through the caller's scope.

import { classOf, type DataClassCore, type Entity, entityNotFound, type EntitySelection, queryWith, type ResolvedSet, type SetQuery, withOrder } from '../../datastore/index.js';
import type { ColumnSpec } from '../../query/plan.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { requireKey, valueFromText } from '../../model/values.js';
import { resolveOrder } from '../../query/order.js';
import type { CollectionSource, EntitySelector, Narrowing, RelationStep, SetRequest } from '../plan/action.js';
import { setsOf, type Scope } from '../scope/scope.js';

/** The entity a URL names, or 1542. */
export function findEntity(scope: Scope, dc: DataClassCore, selector: EntitySelector): Promise<Entity> {
  if (selector.kind === 'key') {
    // (not async: the read by key is the hottest path, and every async frame costs)
    return dc.get(requireKey(dc.model.key, selector.key), scope.access).then((entity) => entity ?? Promise.reject(entityNotFound(dc.model, selector.key)));
  }
  const attr = selector.attribute;
  return dc.findBy(attr.name, valueFromText(attr, selector.value), scope.access).then((entity) =>
    entity ?? Promise.reject(new DatasetError('ENTITY_NOT_FOUND', `Cannot find entity with "${selector.value}" as ${attr.name} in the "${dc.name}" dataclass`)));
}

/** The values of `columns` of the entity a key selects (not decoded: rest/present/row-writer.ts), through the caller's access; 1542 when there is none. */
export async function findValues(scope: Scope, dc: DataClassCore, key: string, columns: readonly ColumnSpec[]): Promise<readonly unknown[]> {
  return (await dc.valuesByKey(requireKey(dc.model.key, key), columns, scope.access)) ?? Promise.reject(entityNotFound(dc.model, key));
}

/** What a relation followed from an entity reaches: its selection (1→N) or its entity (N→1, 1542 when there is none). */
export async function follow(scope: Scope, step: RelationStep): Promise<EntitySelection | Entity> {
  const from = scope.core.classOf(step.relation.dataClass);
  const entity = await findEntity(scope, from, step.from);
  const reached = entity.related(step.relation.name);
  if (!(reached instanceof Promise)) return reached;
  const target = await reached;
  if (!target) throw new DatasetError('ENTITY_NOT_FOUND', `${from.name}(${String(entity.getKey())}) has no ${step.relation.name}`);
  return target;
}

/**
 * A stored set as the request defines it, through the core's rule of who reads which set and
 * which of its members (datastore/sets/session-sets.ts): its saved $savedfilter/$savedorderby, to
 * make it again if it is gone, resolved as the caller sees the names.
 */
export function resolveSet(scope: Scope, dc: DataClassCore, req: SetRequest): Promise<ResolvedSet> {
  const { saved } = req;
  const query: SetQuery = {
    id: req.id, logic: req.logic, clean: req.clean,
    saved: saved && ((access) => narrow(scope, dc.selectWhere(null, access), { filter: saved.filter, params: saved.params, orderBy: saved.orderBy })),
  };
  return setsOf(scope).resolve(dc, query);
}

/** The selection a collection source stands for (INTERSECT of sets has no selection: refused by the caller first). */
export async function selectionOf(scope: Scope, dc: DataClassCore, source: CollectionSource): Promise<EntitySelection | { intersects: boolean }> {
  switch (source.kind) {
    case 'all':
      return dc.selectWhere(null, scope.access);
    case 'related':
      return (await follow(scope, source.step)) as EntitySelection;
    case 'set': {
      const resolved = await resolveSet(scope, dc, source.set);
      return 'intersects' in resolved ? resolved : setsOf(scope).members(dc, resolved.keys);
    }
    default: {
      const never: never = source;
      return never;
    }
  }
}

/** A selection narrowed by $filter (its names resolved as the caller sees them) and sorted by $orderby. */
export function narrow(scope: Scope, selection: EntitySelection, n: Narrowing): EntitySelection {
  const dc = classOf(selection);
  const filtered = n.filter ? queryWith(selection, n.filter, n.params, scope.visible) : selection;
  return n.orderBy ? withOrder(filtered, resolveOrder(dc.model, n.orderBy, scope.visible, scope.core.calculated)) : filtered;
}
