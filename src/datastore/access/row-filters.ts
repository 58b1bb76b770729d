// Row-level security: a dataclass class may define restrict() (4D's `event restrict`), returning
// the selection of the entities a caller may see — `this.query("owner = :1", session().userName)`.
// Its condition filters every access of that caller to the dataclass: reads, relations, queries
// through it, counts, sets, updates and drops (the compiler puts it at every FROM). It is asked
// once per request and dataclass, as the server (every row, every action) with the caller's
// session at hand. Returning null or undefined means no filter; anything else that is not a
// selection of the dataclass is refused (the request fails rather than showing every row).

import { DatasetError } from '../../errors/dataset-error.js';
import type { DataClassModel } from '../../model/types.js';
import { Policy } from '../../permissions/policy.js';
import type { Condition, RowFilter } from '../../query/plan.js';
import { SessionAccess, type Access } from './access.js';
import { runAsCallerSync } from './caller.js';
import type { CoreView } from '../core-types.js';
import type { Session } from '../sessions/session.js';

type Restrict = () => unknown;

/** The restrict() of a dataclass's user class, if it has one. */
function restrictOf(core: CoreView, dc: DataClassModel): Restrict | undefined {
  const fn = (core.classOf(dc).dataClass as unknown as { restrict?: unknown }).restrict;
  return typeof fn === 'function' ? (fn as Restrict) : undefined;
}

/** The dataclasses with a restrict(), found once (after the classes are loaded: at the first request). */
const restricted = new WeakMap<CoreView, ReadonlySet<DataClassModel>>();

function restrictedClasses(core: CoreView): ReadonlySet<DataClassModel> {
  let set = restricted.get(core);
  if (!set) restricted.set(core, (set = new Set(core.model.dataClasses.filter((m) => restrictOf(core, m)))));
  return set;
}

/** The access of a request's session: its grants, and the row filters of the dataclasses' restrict(). */
export function accessFor(core: CoreView, session: Session): Access {
  const classes = restrictedClasses(core);
  // one budget for all the statements of the request (the query time limit: storage/budget.ts)
  const budget = core.storage.requestBudget();
  if (classes.size === 0) return new SessionAccess(core.storage, null, session, budget);
  // restrict() runs as the server, with the caller's session at hand for session()
  const asServer: Access = { reader: core.storage, restrict: null, grants: Policy.ALL };
  const conditions = new Map<DataClassModel, Condition | null>();
  const restrict: RowFilter = (dc) => {
    if (!classes.has(dc)) return null;
    if (conditions.has(dc)) return conditions.get(dc) ?? null;
    const fn = restrictOf(core, dc) as Restrict;
    const result = runAsCallerSync({ access: asServer, session }, () => fn.call(core.classOf(dc).dataClass));
    let condition: Condition | null = null;
    // (the selection's members, asked of the core: this file names no selection class)
    const selected = core.selectionCondition(result);
    if (selected?.dataClass === dc) {
      // an empty condition (the whole dataclass) is no filter; a selection of nothing is a filter that matches none
      condition = selected.condition ?? null;
    } else if (result !== null && result !== undefined) {
      throw new DatasetError('FUNCTION_FAILED', `${dc.name}.restrict() must return a selection of ${dc.name} (or null for no filter); it returned ${selected ? `a selection of ${selected.dataClass.name}` : typeof result}`);
    }
    conditions.set(dc, condition);
    return condition;
  };
  return new SessionAccess(core.storage, restrict, session, budget);
}
