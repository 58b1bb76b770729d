// Row-level security: a dataclass class may define restrict() (4D's `event restrict`), returning
// the selection of the entities a caller may see — `this.query("owner = :1", session().userName)`.
// Its condition filters every access of that caller to the dataclass: reads, relations, queries
// through it, counts, sets, updates and drops (the compiler puts it at every FROM). It is asked
// once per request and dataclass, as the server (every row, every action) with the caller's
// session at hand. Returning null or undefined means no filter; anything else that is not a
// selection of the dataclass is refused (the request fails rather than showing every row).

import { DatasetError } from '../../errors/dataset-error.js';
import { TRACKING, type DataClassModel, type StorageAttribute } from '../../model/types.js';
import { Policy, type Grants } from '../../permissions/policy.js';
import { directPath, type Condition, type RowFilter } from '../../query/plan.js';
import { SessionAccess, type Access } from './access.js';
import { runAsCallerSync } from './caller.js';
import type { CoreView } from '../core-types.js';
import type { Session } from '../sessions/session.js';

type Restrict = () => unknown;

/** What finding the restrict() functions needs of the core: its model and classes. */
type ClassesView = Pick<CoreView, 'model' | 'classOf'>;

/** The restrict() of a dataclass's user class, if it has one. */
function restrictOf(core: ClassesView, dc: DataClassModel): Restrict | undefined {
  const fn = (core.classOf(dc).dataClass as unknown as { restrict?: unknown }).restrict;
  return typeof fn === 'function' ? (fn as Restrict) : undefined;
}

/** The dataclasses with a restrict(), found once (after the classes are loaded: at the first request). */
const restricted = new WeakMap<ClassesView, ReadonlySet<DataClassModel>>();

function restrictedClasses(core: ClassesView): ReadonlySet<DataClassModel> {
  let set = restricted.get(core);
  if (!set) restricted.set(core, (set = new Set(core.model.dataClasses.filter((m) => restrictOf(core, m)))));
  return set;
}

/**
 * The rows of `__DeletedRecords` (change tracking) a caller sees: the drops of the exposed
 * dataclasses it may read now (its grants are live: a promotion while the request runs counts).
 * A dataclass's restrict() does not narrow its drops: a dropped entity's row is gone, and with it
 * what restrict() would judge (its key shows to every reader of the dataclass).
 */
function deletedRecordsFilter(core: CoreView, deleted: DataClassModel, grants: Grants): Condition | null {
  const tracked = core.model.dataClasses.filter((m) => m.globalStamp);
  // (a dataclass REST does not expose is no one's to read: its drops neither)
  const readable = tracked.filter((m) => m.exposed && grants.dataClass(m.name, 'read')).map((m) => m.name);
  if (readable.length === tracked.length) return null;
  const tableName = deleted.attributesByName.get(TRACKING.TABLE_NAME) as StorageAttribute;
  return { kind: 'in', path: directPath(tableName), values: readable };
}

/** Whether a dataclass of the model has a restrict(): what a caller sees of its rows may then depend on its session, whatever its privileges. */
export function rowsRestricted(core: ClassesView): boolean {
  return restrictedClasses(core).size > 0;
}

/** The access of a request's session: its grants, and the row filters of the dataclasses' restrict() (and of __DeletedRecords). */
export function accessFor(core: CoreView, session: Session): Access {
  const classes = restrictedClasses(core);
  const deleted = core.model.deletedRecords;
  // one budget for all the statements of the request (the query time limit: storage/budget.ts)
  const budget = core.storage.requestBudget();
  if (classes.size === 0 && !deleted) return new SessionAccess(core.storage, null, session, budget);
  // restrict() runs as the server, with the caller's session at hand for session()
  const asServer: Access = { reader: core.storage, restrict: null, grants: Policy.ALL };
  const conditions = new Map<DataClassModel, Condition | null>();
  const restrict: RowFilter = (dc) => {
    if (dc === deleted) return deletedRecordsFilter(core, deleted, access.grants);
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
  const access = new SessionAccess(core.storage, restrict, session, budget);
  return access;
}
