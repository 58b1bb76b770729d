// A page of a stored set, whoever asks (REST's $entityset pages): its members in the set's order,
// a dropped member as a hole (a set keeps its key, reference §8.2), as rows when the caller writes
// them as they are, else as entities with what they inline, and the global stamp — one core call,
// in one snapshot when it reads more than one statement (entities, a page of more keys than one
// statement's list), within the answer's budget (measured before a big page is read, else
// counted as it is: answer-size.ts). The sets' own rule (who reads which) is sets/session-sets.ts.

import { KEYS_PER_QUERY } from '../../config/limits.js';
import type { DataClassModel } from '../../model/types.js';
import type { ColumnSpec } from '../../query/plan.js';
import type { Access } from '../access/access.js';
import { inSnapshot } from '../access/snapshot.js';
import type { DataClassCore } from '../dataclass-core.js';
import { type Core, readGlobalStamp } from '../datastore.js';
import type { Entity } from '../entities/entity.js';
import type { KeyList } from '../sets/entity-set-store.js';
import { type AnswerBudget, countRows, measured, takeReadWhereIn, valueChars } from './answer-size.js';
import { fetchRelated, type FetchedEntity, type InlineBudget } from './fetch.js';
import type { Projection } from './projection.js';

export interface SetPageRequest {
  /** the page's members, in the set's order */
  readonly keys: KeyList;
  /** the columns the caller writes the page from, and where a row holds its key, when its rows are enough: no entity is made */
  readonly rows?: { readonly columns: readonly ColumnSpec[]; readonly keyOf: (row: readonly unknown[]) => unknown };
  /** what is read of the entities' relations (the projection, or Looker Studio's fields) */
  readonly fetch: Projection;
  /** the global stamp is read with entities (Looker Studio's table shows none) */
  readonly globalStamp: boolean;
}

/** The page's members in the set's order: undefined / null for one dropped since. (`globalStamp` 0 when not asked for.) */
export type SetPage = { readonly globalStamp: number } & ({ readonly rows: (readonly unknown[] | undefined)[] } | { readonly entities: (FetchedEntity | null)[] });

/** Whether the page reads more than one statement: it is then read in a snapshot. */
export function setPageReadsMore(req: SetPageRequest): boolean {
  return !req.rows || req.keys.length > KEYS_PER_QUERY;
}

/** A page of a stored set of `dc`, through `access` (see the header). */
export function readSetPage(core: Pick<Core, 'classOf' | 'snapshot'>, dc: DataClassCore, req: SetPageRequest, access: Access, budget: InlineBudget): Promise<SetPage> {
  return setPageReadsMore(req) ? inSnapshot(core, access, (a) => read(core, dc, req, a, budget)) : read(core, dc, req, access, budget);
}

async function read(core: Pick<Core, 'classOf'>, dc: DataClassCore, req: SetPageRequest, access: Access, budget: InlineBudget): Promise<SetPage> {
  const model = dc.model;
  const keys = Array.from(req.keys as ArrayLike<unknown>);
  const what = setPageWhat(keys.length, model);
  if (req.rows) {
    // one statement reads the page's members (and the global stamp)
    const { columns, keyOf } = req.rows;
    const measuredFirst = measured(keys.length, columns);
    if (measuredFirst) await takeReadWhereIn(budget.bytes, access, model, model.key, keys, columns, what);
    const read = await dc.valuesOfKeys(keys, columns, access);
    if (!measuredFirst) countRows(budget.bytes, read.rows, what);
    const byKey = new Map(read.rows.map((row) => [keyOf(row), row]));
    const globalStamp = read.globalStamp ?? (await readGlobalStamp(access));
    const rows = keys.map((k) => {
      const row = byKey.get(k);
      byKey.delete(k);
      return row;
    });
    return { rows, globalStamp };
  }
  const measuredFirst = measured(keys.length, dc.columns);
  if (measuredFirst) await takeReadWhereIn(budget.bytes, access, model, model.key, keys, dc.columns, what);
  // (not measured: its members' values are counted as they are made into entities)
  const entities = await dc.getMany(keys, access);
  if (!measuredFirst) countEntities(budget.bytes, model, entities, what);
  const fetched = new Map((await fetchRelated(core, entities.filter((e) => e !== null), req.fetch, access, budget)).map((f) => [f.entity, f]));
  const globalStamp = req.globalStamp ? await readGlobalStamp(access) : 0;
  return { entities: entities.map((e) => (e ? (fetched.get(e) as FetchedEntity) : null)), globalStamp };
}

/** Counts the texts and objects of entities read without being measured first, as their rows would be (answer-size.ts). */
function countEntities(budget: AnswerBudget, dc: DataClassModel, entities: readonly (Entity | null)[], what: string): void {
  const variable = dc.attributes.filter((a) => a.kind === 'storage' && (a.type === 'string' || a.type === 'object'));
  let chars = 0;
  for (const e of entities) if (e) for (const a of variable) chars += valueChars(e.get(a.name));
  if (chars > 0) budget.take(chars, what);
}

/** What a page of a set reads, as a refusal names it. */
function setPageWhat(n: number, dc: DataClassModel): string {
  return `a page of ${n} ${dc.name} entities of an entity set`;
}
