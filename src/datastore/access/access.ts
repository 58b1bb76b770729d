// How one caller reaches the data: where its reads go (the storage, or one request's snapshot),
// which rows it may see and change (a row filter: the dataclasses' restrict), and what its session
// may do (its grants, from roles.json). It is carried by the selections and entities it reads —
// not by a global — so everything derived from them (a query on a selection, a related entity, a
// page) stays in it. User code reaches its caller's access through the caller context (caller.ts).

import type { Grants } from '../../permissions/policy.js';
import type { RowFilter } from '../../query/plan.js';
import type { Reader, StatementBudget } from '../../storage/adapter.js';
import { sessionInternals, type Session } from '../sessions/session.js';

export type { Reader };

export interface Access {
  /** reads outside a write transaction (inside one, the storage routes them to it); within `budget` when there is one */
  readonly reader: Reader;
  /** the rows of each dataclass this caller may see and change; null: every row */
  readonly restrict: RowFilter | null;
  /** what this caller may read, create, update, drop and run (Policy.ALL: the server's own work) */
  readonly grants: Grants;
  /**
   * The time its statements share (a REST request's: the query time limit for all of them,
   * storage/budget.ts): its reads count against it, and so do the write transactions opened
   * for it (writeUnit). None: each statement has the query time limit to itself.
   */
  readonly budget?: StatementBudget;
}

/**
 * The access of a REST request's session: its grants are the session's as they stand now, so
 * that the privileges a function's `promote` adds while it runs reach every object the request
 * read with this access (the function's `this`, its entity parameters), and leave with it.
 */
export class SessionAccess implements Access {
  readonly reader: Reader;

  constructor(reader: Reader, readonly restrict: RowFilter | null, readonly session: Session, readonly budget?: StatementBudget) {
    this.reader = budget === undefined ? reader : reader.within(budget);
  }

  get grants(): Grants {
    return sessionInternals.grants(this.session);
  }
}

/** The session an access acts for, if it is a request's (the server's own access has none). */
export function sessionOf(access: Access): Session | undefined {
  return access instanceof SessionAccess ? access.session : undefined;
}

/** The same access reading through `reader` (a snapshot), within its budget; what it may do stays live. */
export function readingThrough(access: Access, reader: Reader): Access {
  const within = reader.within(access.budget);
  return Object.create(access, { reader: { value: within, enumerable: true } }) as Access;
}

/** The same access, its statements within `budget` (a budget of their own, or none). */
export function withBudget(access: Access, budget: StatementBudget | undefined): Access {
  return Object.create(access, { reader: { value: access.reader.within(undefined).within(budget), enumerable: true }, budget: { value: budget, enumerable: true } }) as Access;
}

/**
 * The same access with the query time limit for each of its statements, none shared: for work
 * that goes on as long as its client takes it (an export streamed a chunk at a time), or that
 * has a limit of its own.
 */
export function withoutBudget(access: Access): Access {
  return access.budget === undefined ? access : withBudget(access, undefined);
}
