// 4D's delete controls (model.json's `deleteRule` on a 1→N relation, model/types.ts) on the drop
// path. Every drop of entities — one (writes.ts deleteEntity), a chunk of a big drop (deleteKeys),
// a whole selection (bulk-drop.ts dropWhere) — asks here, before its DELETE, whether a `refuse`
// relation still has related entities (one query per relation, LIMIT 1, naming the first entity
// it refuses), and once its rows are gone drops the related entities of each `cascade` relation
// through the core: the target dataclass's own drop, so their events, their own rules, change
// tracking and the live feeds all run, in the caller's transaction — a refusal anywhere below
// rolls the whole drop back. Parents go before their children: a cycle in the data (a category
// that is its own grandparent) ends, as a cascade only reaches rows still there.

import { DatasetError } from '../../errors/dataset-error.js';
import type { DataClassModel, RelatedEntitiesAttribute } from '../../model/types.js';
import { and, directPath, inSelect, type Condition } from '../../query/plan.js';
import { compileSelect } from '../../sql/compiler/statements.js';
import type { Access } from '../access/access.js';
import type { CoreView } from '../core-types.js';

/** The relations of a dataclass whose delete control is not `leave`. */
export interface DropRules {
  readonly refuse: readonly RelatedEntitiesAttribute[];
  readonly cascade: readonly RelatedEntitiesAttribute[];
}

const rulesCache = new WeakMap<DataClassModel, DropRules>();

/** The refuse and cascade relations of `dc` (the model is frozen: found once). */
export function dropRules(dc: DataClassModel): DropRules {
  let rules = rulesCache.get(dc);
  if (!rules) {
    const many = dc.attributes.filter((a): a is RelatedEntitiesAttribute => a.kind === 'relatedEntities');
    rules = { refuse: many.filter((a) => a.deleteRule === 'refuse'), cascade: many.filter((a) => a.deleteRule === 'cascade') };
    rulesCache.set(dc, rules);
  }
  return rules;
}

/** The error of a drop a `refuse` relation stops: it names the entity, the relation and its target. */
export function refusedByRelation(dc: DataClassModel, relation: RelatedEntitiesAttribute, key: unknown): DatasetError {
  return new DatasetError('DROP_REFUSED_BY_RELATION',
    `Cannot drop ${dc.name}(${String(key)}): it still has ${relation.target.name} entities in ${dc.name}.${relation.name}, whose deleteRule is "refuse" (drop them first, or give them another ${relation.inverse.name}); nothing was dropped`,
    { attributeName: relation.name });
}

/**
 * Refuses the drop of the entities of `dc` that meet `parents` (null: all) and the caller's row
 * filter when a `refuse` relation has a related entity for one of them — any related entity,
 * whether the caller's row filter shows it or not (the rule keeps the data whole, and the error
 * names only the parent). One statement per refuse relation, before anything is dropped.
 */
export async function refuseRelated(core: CoreView, dc: DataClassModel, parents: Condition | null, access: Access): Promise<void> {
  const { refuse } = dropRules(dc);
  if (refuse.length === 0) return;
  const d = core.storage.dialect;
  const reached = and(parents, access.restrict?.(dc) ?? null);
  for (const relation of refuse) {
    const fk = relation.inverse.foreignKey;
    // (the target's FROM unfiltered: null restrict; the parents' filter is in the subquery's WHERE)
    const where = inSelect(fk, dc, dc.key, reached);
    const { sql, params } = compileSelect(d, { dataClass: relation.target, columns: [{ kind: 'storage', attr: fk }], where, order: [], limit: 1 }, null);
    const row = (await core.storage.arrays(sql, params))[0];
    if (row) throw refusedByRelation(dc, relation, d.types.decode(fk.type, row[0], false));
  }
}

/**
 * Once the entities of `keys` (their keys as stored) of `dc` are deleted: drops, through the core
 * and with the caller's access (its permissions, its row filter), the related entities of each
 * `cascade` relation (a caller that may not drop them is refused when there are some). A related
 * entity the caller's row filter hides would be left pointing at nothing: the drop is refused
 * instead (it names the relation).
 */
export async function cascadeDrops(core: CoreView, dc: DataClassModel, keys: readonly unknown[], access: Access): Promise<void> {
  const { cascade } = dropRules(dc);
  if (cascade.length === 0 || keys.length === 0) return;
  const d = core.storage.dialect;
  for (const relation of cascade) {
    const fk = relation.inverse.foreignKey;
    const related: Condition = keys.length === 1 ? { kind: 'compare', path: directPath(fk), op: '=', value: keys[0] } : { kind: 'in', path: directPath(fk), values: keys };
    /** the parent key of a related entity still there, whether the caller sees it or not */
    const left = async (): Promise<unknown> => {
      const { sql, params } = compileSelect(d, { dataClass: relation.target, columns: [{ kind: 'storage', attr: fk }], where: related, order: [], limit: 1 }, null);
      const row = (await core.storage.arrays(sql, params))[0];
      return row ? d.types.decode(fk.type, row[0], false) : undefined;
    };
    // a caller that may not drop the related entities needs that only when there are some (the drop then refuses it)
    if (!access.grants.dataClass(relation.target.name, 'drop') && (await left()) === undefined) continue;
    await core.classOf(relation.target).dropMatching(related, access);
    if (!access.restrict?.(relation.target)) continue;
    // what the caller's row filter kept from it is still there
    const key = await left();
    if (key !== undefined) {
      throw new DatasetError('DROP_REFUSED_BY_RELATION',
        `Cannot drop ${dc.name}(${String(key)}): some of its ${relation.target.name} entities in ${dc.name}.${relation.name} (deleteRule "cascade") are out of this session's reach, and would be left pointing at nothing; nothing was dropped`,
        { attributeName: relation.name });
    }
  }
}

/**
 * Drops of `dc` may run user code through its cascades: a dataclass a cascade reaches (directly
 * or further down) runs user code in its drops. (A unit holding such drops is never run again
 * after a conflict.)
 */
export function cascadesRunUserCode(core: CoreView, dc: DataClassModel): boolean {
  const seen = new Set<DataClassModel>([dc]);
  const todo = [dc];
  while (todo.length > 0) {
    for (const relation of dropRules(todo.pop()!).cascade) {
      if (seen.has(relation.target)) continue;
      if (core.classOf(relation.target).dropsRunUserCode) return true;
      seen.add(relation.target);
      todo.push(relation.target);
    }
  }
  return false;
}
