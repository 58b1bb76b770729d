// Query plans in 4D's shapes (reference §3.17): __queryPlan, the resolved query as a tree of
// items, and __queryPath, what ran: each step with its time and the entities it found. The
// selection itself runs as one SQL statement; for the path, each criterion is also counted on its
// own (only when asked for), and an AND stops at the first step that finds nothing, as 4D does.

import type { DataClassModel, RelatedEntityAttribute } from '../model/types.js';
import type { AttributePath, Condition } from './plan.js';

export type PlanNode = { And: PlanNode[] } | { Or: PlanNode[] } | { Not: PlanNode[] } | { item: string; subquery?: PlanNode[] };

export interface PathStep {
  description: string;
  time: number;
  recordsfounds: number;
  steps?: PathStep[];
}

/** Counts the entities of `dc` matching a condition (the caller runs it in SQL). */
export type Counter = (where: Condition | null) => Promise<number>;

export function queryPlan(c: Condition): PlanNode {
  switch (c.kind) {
    case 'and':
      return { And: c.items.map(queryPlan) };
    case 'or':
      return { Or: c.items.map(queryPlan) };
    case 'not':
      return { Not: [queryPlan(c.item)] };
    case 'exists': {
      const target = c.relation.target;
      const inner: PlanNode = { item: join(target, `${c.relation.dataClass.name}.${c.relation.dataClass.key.name} = ${target.name}.${c.relation.inverse.foreignKey.name}`) };
      const sub = c.where ? [queryPlan(c.where)] : [];
      return viaPlan(c.via, { ...inner, ...(sub.length > 0 ? { subquery: sub } : {}) });
    }
    default:
      return viaPlan('path' in c ? c.path.via : [], { item: describe(c) });
  }
}

/** Runs the counts of the path: the root condition, then its parts (an AND stops when one finds nothing). */
export async function queryPath(c: Condition, count: Counter): Promise<{ steps: PathStep[] }> {
  return { steps: [await step(c, count)] };
}

async function step(c: Condition, count: Counter): Promise<PathStep> {
  const started = performance.now();
  const found = await count(c);
  const time = Math.round((performance.now() - started) * 1000) / 1000;
  if (c.kind !== 'and' && c.kind !== 'or') return { description: describe(c), time, recordsfounds: found };
  const steps: PathStep[] = [];
  for (const item of c.items) {
    const s = await step(item, count);
    steps.push(s);
    if (c.kind === 'and' && s.recordsfounds === 0) break; // the rest of an AND is not run
  }
  return { description: c.kind === 'and' ? 'AND' : 'OR', time, recordsfounds: found, steps };
}

/** One criterion as text: `Employee.salary > 5000`, `[index : Employee.lastName ] = smith`. */
export function describe(c: Condition): string {
  switch (c.kind) {
    case 'compare':
      return `${attribute(c.path)} ${c.op === '!=' ? '#' : c.op} ${text(c.value)}`;
    case 'like':
      return `${attribute(c.path)} LIKE ${c.pattern}`;
    case 'prefix':
      return `${attribute(c.path)} begin ${c.prefix}`;
    case 'in':
      return `${attribute(c.path)} IN [${c.values.map(text).join(', ')}]`;
    case 'isNull':
      return `${attribute(c.path)} ${c.negated ? '#' : '='} null`;
    case 'inKeys':
      return `${attribute(c.path)} IN (an entity set of ${c.keys.length})`;
    case 'inSelect':
      return `${attribute(c.path)} IN (selection of ${c.select.dataClass.name})`;
    case 'exists':
      return `${c.relation.dataClass.name}.${c.relation.name} has ${c.where ? `an entity where ${describe(c.where)}` : 'entities'}`;
    case 'elements':
      return `${attribute(c.path)}[] has an element where ${describe(c.where)}`;
    case 'not':
      return `NOT (${describe(c.item)})`;
    case 'and':
    case 'or':
      return c.items.map(describe).join(c.kind === 'and' ? ' AND ' : ' OR ');
    default: {
      const never: never = c;
      return never;
    }
  }
}

function attribute(p: AttributePath): string {
  if (p.element) return `[element]${p.json && p.json.length > 0 ? `.${p.json.join('.')}` : ''}`;
  const name = `${p.attr.dataClass.name}.${p.attr.name}${p.json ? `.${p.json.join('.')}` : ''}`;
  return p.attr.indexed && !p.json ? `[index : ${name} ]` : name;
}

function text(v: unknown): string {
  return v instanceof Date ? v.toISOString() : typeof v === 'string' ? v : JSON.stringify(v);
}

function join(target: DataClassModel, on: string): string {
  return `Join on Table : ${target.name} : ${on}`;
}

/** N→1 steps before a criterion, as 4D shows them: a join item with the criterion below it. */
function viaPlan(via: readonly RelatedEntityAttribute[], leaf: PlanNode): PlanNode {
  let node = leaf;
  for (let i = via.length - 1; i >= 0; i--) {
    const r = via[i];
    node = { item: join(r.target, `${r.dataClass.name}.${r.foreignKey.name} = ${r.target.name}.${r.target.key.name}`), subquery: [node] };
  }
  return node;
}
