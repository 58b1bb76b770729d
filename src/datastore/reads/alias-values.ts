// Alias attributes that are not one value read with the entity (those through N→1 relations
// are, in SQL: see sql/compiler/): lists of values through 1→N relations (Company.staffNames
// = staff.lastName), walked level by level with a query per relation step for a whole page,
// and aliases leading to entities, selected in SQL by reachCondition.

import { KEYS_PER_QUERY } from '../../config/limits.js';
import type { AliasAttribute, DataClassModel, RelatedEntitiesAttribute, RelatedEntityAttribute, StorageAttribute } from '../../model/types.js';
import type { Weighting } from './answer-size.js';
import { directPath, inSelect, type Condition } from '../../query/plan.js';
import type { Access } from '../access/access.js';
import type { ClassCoreView, EntityValues } from '../core-types.js';

/** What reading related entities needs of the core: the dataclasses (`C`: as the caller knows them, for its `read`). */
interface Classes<C extends ClassCoreView> {
  classOf(model: DataClassModel): C;
}

/** Reads the entities of `dc` whose `attr` is one of `values`, in chunks of KEYS_PER_QUERY. */
export async function readWhereIn(dc: ClassCoreView, attr: DataClassModel['key'], values: readonly unknown[], access: Access, byKey = false): Promise<EntityValues[]> {
  const out: EntityValues[] = [];
  for (let at = 0; at < values.length; at += KEYS_PER_QUERY) {
    out.push(...await dc.readEntities({
      dataClass: dc.model,
      columns: dc.columns,
      where: { kind: 'in', path: directPath(attr), values: values.slice(at, at + KEYS_PER_QUERY) },
      order: byKey ? [{ path: directPath(dc.model.key), descending: false }] : [],
    }, access));
  }
  return out;
}

/**
 * The condition, on the dataclass an alias leads to, that selects the entities reached from the
 * entity `key` of `root` along the alias's relations: nested IN sub-selects, all in SQL, so a
 * relation with a million entities is paged like any selection.
 */
export function reachCondition(root: DataClassModel, key: unknown, steps: readonly (RelatedEntityAttribute | RelatedEntitiesAttribute)[]): Condition {
  let cls = root;
  let cond: Condition = { kind: 'compare', path: directPath(root.key), op: '=', value: key };
  for (const step of steps) {
    cond = step.kind === 'relatedEntity'
      ? inSelect(step.target.key, cls, step.foreignKey, cond) // the targets our foreign keys name
      : inSelect(step.inverse.foreignKey, cls, cls.key, cond); // the entities whose foreign key names us
    cls = step.target;
  }
  return cond;
}

/** The relation steps of an alias that leads to entities (all its steps). */
export function relationSteps(alias: AliasAttribute): (RelatedEntityAttribute | RelatedEntitiesAttribute)[] {
  return alias.steps.filter((s): s is RelatedEntityAttribute | RelatedEntitiesAttribute => s.kind === 'relatedEntity' || s.kind === 'relatedEntities');
}

/**
 * How a step of an alias reads the entities of `target` whose `attr` is among `values`: an
 * answer's reads count them against its size (datastore/reads/fetch.ts), `sent` saying how often the
 * rows of each value are sent (the last step's; undefined: read, not sent, counted once).
 */
export type StepRead<C extends ClassCoreView = ClassCoreView> = (target: C, attr: StorageAttribute, values: readonly unknown[], sent: Weighting | undefined, byKey: boolean) => Promise<EntityValues[]>;

/**
 * For each entity, the entities or values at the end of the alias path (in relation order).
 * `read` reads each step (an answer's, counting what it reads); `rootWeight`: how often each
 * root entity is sent (what the last step reaches is sent as often, for each time it is reached).
 */
export async function walkAlias<E extends EntityValues, C extends ClassCoreView>(core: Classes<C>, entities: readonly E[], alias: AliasAttribute, access: Access, read?: StepRead<C>, rootWeight: (root: E) => number = () => 1): Promise<Map<E, unknown[]>> {
  const readStep: StepRead<C> = read ?? ((target, attr, values, _sent, byKey) => readWhereIn(target, attr, values, access, byKey));
  // Each root entity keeps the list of entities reached so far.
  let reached = new Map<E, EntityValues[]>(entities.map((e) => [e, [e]]));
  const last = alias.steps[alias.steps.length - 1];
  const relations = last.kind === 'storage' || last.kind === 'calculated' ? alias.steps.slice(0, -1) : alias.steps;
  for (const [i, step] of relations.entries()) {
    const all = [...new Set([...reached.values()].flat())];
    // the last step's rows are sent once for each root reaching them through each entity of the step before
    const sentBy = (valueOf: (e: EntityValues) => unknown, by: StorageAttribute): Weighting | undefined => {
      if (i < relations.length - 1) return undefined;
      const times = new Map<string, number>();
      for (const [root, list] of reached) for (const e of list) times.set(String(valueOf(e)), (times.get(String(valueOf(e))) ?? 0) + rootWeight(root));
      return { by, weight: (value) => times.get(value) ?? 1 };
    };
    let next: (e: EntityValues) => EntityValues[];
    if (step.kind === 'relatedEntity') {
      const target = core.classOf(step.target);
      const keys = [...new Set(all.map((e) => e.get(step.foreignKey.name)).filter((k) => k !== null))];
      const byKey = new Map((await readStep(target, target.model.key, keys, sentBy((e) => e.get(step.foreignKey.name), target.model.key), false)).map((e) => [e.getKey(), e]));
      next = (e) => {
        const r = byKey.get(e.get(step.foreignKey.name));
        return r ? [r] : [];
      };
    } else if (step.kind === 'relatedEntities') {
      const target = core.classOf(step.target);
      const fk = step.inverse.foreignKey;
      const found = await readStep(target, fk, all.map((e) => e.getKey()), sentBy((e) => e.getKey(), fk), true);
      const byParent = new Map<unknown, EntityValues[]>();
      for (const e of found) {
        const list = byParent.get(e.get(fk.name));
        if (list) list.push(e);
        else byParent.set(e.get(fk.name), [e]);
      }
      next = (e) => byParent.get(e.getKey()) ?? [];
    } else {
      return new Map(entities.map((e) => [e, []])); // the model loader allows only relations here
    }
    const moved = new Map<E, EntityValues[]>();
    for (const [root, list] of reached) moved.set(root, list.flatMap(next));
    reached = moved;
  }
  if (last.kind !== 'storage' && last.kind !== 'calculated') return reached as Map<E, unknown[]>;
  const out = new Map<E, unknown[]>();
  for (const [root, list] of reached) out.set(root, list.map((e) => e.get(last.name)));
  return out;
}

/** Does the alias lead to entities (its last step is a relation), rather than to a value? */
export function aliasLeadsToEntities(alias: AliasAttribute): boolean {
  const last = alias.steps[alias.steps.length - 1].kind;
  return last === 'relatedEntity' || last === 'relatedEntities';
}
