// How one caller reaches the data: where its reads go (the storage, or one request's snapshot),
// which rows it may see and change (a row filter: the dataclasses' restrict), and what its session
// may do (its grants, from roles.json). It is carried by the selections and entities it reads —
// not by a global — so everything derived from them (a query on a selection, a related entity, a
// page) stays in it. User code reaches its caller's access through the caller context (caller.ts).

import type { Grants } from '../permissions/policy.js';
import type { RowFilter } from '../query/plan.js';
import type { Reader } from '../storage/adapter.js';
import { sessionInternals, type Session } from './sessions.js';

export type { Reader };

export interface Access {
  /** reads outside a write transaction (inside one, the storage routes them to it) */
  readonly reader: Reader;
  /** the rows of each dataclass this caller may see and change; null: every row */
  readonly restrict: RowFilter | null;
  /** what this caller may read, create, update, drop and run (Policy.ALL: the server's own work) */
  readonly grants: Grants;
}

/**
 * The access of a REST request's session: its grants are the session's as they stand now, so
 * that the privileges a function's `promote` adds while it runs reach every object the request
 * read with this access (the function's `this`, its entity parameters), and leave with it.
 */
export class SessionAccess implements Access {
  constructor(readonly reader: Reader, readonly restrict: RowFilter | null, readonly session: Session) {}

  get grants(): Grants {
    return sessionInternals.grants(this.session);
  }
}

/** The session an access acts for, if it is a request's (the server's own access has none). */
export function sessionOf(access: Access): Session | undefined {
  return access instanceof SessionAccess ? access.session : undefined;
}

/** The same access reading through `reader` (a snapshot); what it may do stays live. */
export function readingThrough(access: Access, reader: Reader): Access {
  return Object.create(access, { reader: { value: reader, enumerable: true } }) as Access;
}
