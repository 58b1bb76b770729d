// Which of a dataclass's watched queries hold each changed entity, in one statement: the live
// streams of a dataclass (rest/run/watch/) follow many queries at once — a thousand streams, a few
// hundred filters — and each batch of changes must be judged against every one of them. Asking the
// database once per query would cost a statement per filter per batch; here the changed entities
// are read once, with one 1/0 column per query (`CASE WHEN <its condition> THEN 1 ELSE 0 END`),
// so the database matches every filter with its own semantics (collation, nulls, relations,
// restrict()) and the cost of a batch grows with its changes and the distinct filters, not with
// the streams.

import { KEYS_PER_QUERY } from '../../config/limits.js';
import { directPath, type ColumnSpec, type Condition } from '../../query/plan.js';
import type { Access } from '../access/access.js';
import type { DataClassCore } from '../dataclass-core.js';
import type { Entity } from '../entities/entity.js';
import { classOf, membersCondition, type EntitySelection } from '../selections/selection.js';

/** The queries one statement matches at most (more take more statements): well under every engine's column limit. */
const QUERIES_PER_STATEMENT = 200;

/** A changed entity as the caller sees it now, and which of the queries hold it (`within[i]` for the i-th). */
export interface EntityWithin {
  readonly entity: Entity;
  readonly within: Uint8Array;
}

/** What a batch is judged to be: the entities seen, and the queries that could not be matched (their statement failed alone). */
export interface Within {
  readonly found: Map<string, EntityWithin>;
  /** the indexes of the queries whose own statement failed (too many parameters for the engine, the query time limit …), with why */
  readonly failed: Map<number, unknown>;
}

/**
 * The entities of `keys` that `access` sees now (its restrict() applied), each with which of
 * `queries` hold it — a selection of the dataclass (its condition is what counts: its own access
 * is not used), or null for the whole dataclass — keyed by String(key). A key with no entity
 * (dropped, hidden) is absent. A statement that fails is tried again in halves, down to one query
 * alone: one caller's query (a long IN list past the engine's parameters, a slow one) fails only
 * itself. A failure of the entities' own read (the database gone) rejects.
 */
export async function entitiesWithin(dc: DataClassCore, keys: readonly unknown[], queries: readonly (EntitySelection | null)[], access: Access): Promise<Within> {
  const found = new Map<string, EntityWithin>();
  const failed = new Map<number, unknown>();
  const conditions = queries.map((q) => (q === null ? null : conditionOf(dc, q)));
  const asked = conditions.flatMap((c, i) => (c === null ? [] : [{ c, i }]));
  const entry = (row: Record<string, unknown>): EntityWithin => {
    const key = String(row[dc.model.key.name]);
    let e = found.get(key);
    if (!e) {
      const within = new Uint8Array(queries.length);
      conditions.forEach((c, i) => {
        if (c === null) within[i] = 1;
      });
      found.set(key, (e = { entity: dc.entityFromRow(row, access), within }));
    }
    return e;
  };
  for (let at = 0; at < keys.length; at += KEYS_PER_QUERY) {
    const where: Condition = { kind: 'in', path: directPath(dc.model.key), values: keys.slice(at, at + KEYS_PER_QUERY) };
    // the entities first (their own columns: a failure here is the database's), then the queries'
    // columns, QUERIES_PER_STATEMENT a statement
    for (const row of await dc.readRows({ dataClass: dc.model, columns: dc.columns, order: [], where }, access)) entry(row);
    if (found.size === 0) continue;
    const match = async (part: typeof asked): Promise<void> => {
      const meets = part.map(({ c }, j): ColumnSpec => ({ kind: 'meets', where: c, name: `__within_${j}` }));
      let rows;
      try {
        rows = await dc.readRows({ dataClass: dc.model, columns: [{ kind: 'storage', attr: dc.model.key }, ...meets], order: [], where }, access);
      } catch (e) {
        if (part.length === 1) return void failed.set(part[0].i, e);
        const half = part.length >> 1;
        await match(part.slice(0, half));
        await match(part.slice(half));
        return;
      }
      for (const row of rows) {
        const e = found.get(String(row[dc.model.key.name]));
        if (!e) continue;
        part.forEach(({ i }, j) => {
          if (Number(row[`__within_${j}`]) === 1) e.within[i] = 1;
        });
      }
    };
    for (let from = 0; from < asked.length; from += QUERIES_PER_STATEMENT) await match(asked.slice(from, from + QUERIES_PER_STATEMENT));
  }
  return { found, failed };
}

/**
 * Whether whether `q` holds an entity depends on that entity's own values only — no relation, no
 * sub-select, no set — so that its membership changes only with a change of the entity itself
 * (what a watch's group may keep, rest/run/watch/).
 */
export function judgedByOwnValues(q: EntitySelection): boolean {
  const c = membersCondition(q);
  return c === null || ownValuesOnly(c);
}

function ownValuesOnly(c: Condition): boolean {
  switch (c.kind) {
    case 'and':
    case 'or':
      return c.items.every(ownValuesOnly);
    case 'not':
      return ownValuesOnly(c.item);
    case 'exists':
    case 'inSelect':
    case 'inKeys':
      return false;
    case 'elements':
      return c.path.via.length === 0 && ownValuesOnly(c.where);
    default:
      return c.path.via.length === 0;
  }
}

function conditionOf(dc: DataClassCore, q: EntitySelection): Condition | null {
  if (classOf(q) !== dc) throw new Error(`a query of ${classOf(q).name} cannot judge the entities of ${dc.name}`);
  return membersCondition(q);
}
