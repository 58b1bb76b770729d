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

/**
 * The entities of `keys` that `access` sees now (its restrict() applied), each with which of
 * `queries` hold it — a selection of the dataclass (its condition is what counts: its own access
 * is not used), or null for the whole dataclass — keyed by String(key). A key with no entity
 * (dropped, hidden) is absent.
 */
export async function entitiesWithin(dc: DataClassCore, keys: readonly unknown[], queries: readonly (EntitySelection | null)[], access: Access): Promise<Map<string, EntityWithin>> {
  const found = new Map<string, EntityWithin>();
  const conditions = queries.map((q) => (q === null ? null : conditionOf(dc, q)));
  const asked = conditions.flatMap((c, i) => (c === null ? [] : [{ c, i }]));
  for (let at = 0; at < keys.length; at += KEYS_PER_QUERY) {
    const where: Condition = { kind: 'in', path: directPath(dc.model.key), values: keys.slice(at, at + KEYS_PER_QUERY) };
    // the first statement reads the entities with the first queries' columns, the next ones (past
    // QUERIES_PER_STATEMENT queries) their keys with the others'
    for (let from = 0; from === 0 || from < asked.length; from += QUERIES_PER_STATEMENT) {
      const part = asked.slice(from, from + QUERIES_PER_STATEMENT);
      const meets = part.map(({ c }, j): ColumnSpec => ({ kind: 'meets', where: c, name: `__within_${j}` }));
      const columns = from === 0 ? [...dc.columns, ...meets] : [{ kind: 'storage', attr: dc.model.key } as ColumnSpec, ...meets];
      for (const row of await dc.readRows({ dataClass: dc.model, columns, order: [], where }, access)) {
        const key = String(row[dc.model.key.name]);
        let entry = found.get(key);
        if (!entry) {
          const within = new Uint8Array(queries.length);
          conditions.forEach((c, i) => {
            if (c === null) within[i] = 1;
          });
          found.set(key, (entry = { entity: dc.entityFromRow(row, access), within }));
        }
        part.forEach(({ i }, j) => {
          if (Number(row[`__within_${j}`]) === 1) entry.within[i] = 1;
        });
      }
    }
  }
  return found;
}

function conditionOf(dc: DataClassCore, q: EntitySelection): Condition | null {
  if (classOf(q) !== dc) throw new Error(`a query of ${classOf(q).name} cannot judge the entities of ${dc.name}`);
  return membersCondition(q);
}
