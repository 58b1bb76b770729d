// The authorization step between planning and running: what the session may ask, per kind of
// action, decided before any data is read. The datastore checks every read, save, drop and call
// again (it is the one door, for user code too); this step refuses early, before a handler has
// done part of the work, and covers what holds no entity (info, uploads, set releases). A new kind
// of action without an entry here does not compile, and test/http/permissions-matrix.test.ts drives
// every kind with every privilege of a test roles.json.

import { ADMIN_PRIVILEGE } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { refusal, requireDataClass } from '../../datastore/index.js';
import type { AttributeModel, DataClassModel } from '../../model/types.js';
import type { Action, ActionKind } from './action.js';
import type { Scope } from '../scope/scope.js';

type Rule<K extends ActionKind> = (action: Extract<Action, { kind: K }>, scope: Scope) => void;

const open = (): void => undefined;
/** Actions on one dataclass's entities that read them. */
const read = (a: { readonly dc: { readonly model: DataClassModel } }, scope: Scope): void => requireDataClass(scope.access, a.dc.model, 'read');

/** In force-login mode a guest session may only read the catalog and call authentify (and what roles.json grants guest). */
function loggedIn(what: string): (action: Action, scope: Scope) => void {
  return (_action, scope) => {
    if (scope.core.policy.forceLogin && scope.session.isGuest()) {
      throw new DatasetError('LOGIN_REQUIRED', `${what} needs a logged-in session: this datastore is in force-login mode (roles.json), call authentify first`);
    }
  };
}

export const AUTHORIZATION: { readonly [K in ActionKind]: Rule<K> } = {
  catalog: open,
  catalogDataClass: open,
  info: loggedIn('$info'),
  // like the catalog, open to every session: it shows each only what that session may use
  openapi: open,
  queryPath: loggedIn('$querypath'),
  readCollection: read,
  watch: read,
  readEntity: read,
  readRelation: (a, scope) => requireReadable(scope, a.dc.model, a.step.relation),
  readFile: (a, scope) => requireReadable(scope, a.dc.model, a.attribute),
  createSet: read,
  readSet: read,
  release: read,
  releaseSets: loggedIn('releasing entity sets'),
  // creates and updates: each entity is judged by the core (a new one needs create, a stored one update)
  update: open,
  validate: open,
  delete: (a, scope) => requireDataClass(scope.access, a.dc.model, 'drop'),
  deleteSet: (a, scope) => requireDataClass(scope.access, a.dc.model, 'drop'),
  compute: read,
  distinct: read,
  callFunction: (a, scope) => {
    const { name, label } = functionResource(a);
    if (!scope.access.grants.execute(name)) throw refusal(scope.access.grants, 'execute', label);
  },
  // how a guest logs in (4D's legacy login), and who it is: open in force-login mode too, as authentify
  directory: open,
  // users, tokens and roles.json: an administrator's only — even in a project without roles.json,
  // where everything else is open (a project that turns users on wants logins; there the
  // commands manage them)
  admin: (_a, scope) => {
    if (scope.session.hasPrivilege(ADMIN_PRIVILEGE)) return;
    const guest = scope.session.isGuest();
    throw new DatasetError('ADMIN_REQUIRED', `users, tokens and $roles are managed by a session holding the ${ADMIN_PRIVILEGE} privilege${guest ? ': log in first' : ''}`, { status: guest ? 401 : 403 });
  },
  // a lock keeps others from saving the entity: it takes the right to save it; releasing one's
  // own lock grants nothing (the core removes only the caller's, or an administrator's any)
  lock: (a, scope) => requireDataClass(scope.access, a.dc.model, a.lock ? 'update' : 'read'),
  // into one entity's attribute: an update of that attribute, judged before a byte is read (the save judges it again)
  storeFile: (a, scope) => {
    requireDataClass(scope.access, a.dc.model, 'update');
    if (!scope.access.grants.attribute(a.dc.name, a.attribute.name, 'update')) throw refusal(scope.access.grants, 'update', `for attribute ${a.dc.name}.${a.attribute.name}`);
  },
  upload: (_a, scope) => {
    // a file is worth keeping only to a session that may give it to an entity
    const writable = (dc: DataClassModel) => scope.access.grants.dataClass(dc.name, 'create') || scope.access.grants.dataClass(dc.name, 'update');
    if (!scope.ds.model.dataClasses.some(writable)) throw refusal(scope.access.grants, 'create', 'for uploads (the session may create or update no dataclass)');
  },
};

/** The session may read the dataclass and this attribute of it (a relation: its target too). */
function requireReadable(scope: Scope, dc: DataClassModel, attribute: AttributeModel): void {
  requireDataClass(scope.access, dc, 'read');
  if (!scope.visible(attribute)) throw scope.visible.denied?.(attribute) ?? refusal(scope.access.grants, 'read', `for attribute ${dc.name}.${attribute.name}`);
}

/** Checks the action against the session's grants; throws the refusal. */
export function authorize(action: Action, scope: Scope): void {
  (AUTHORIZATION[action.kind] as Rule<ActionKind>)(action as never, scope);
}

/** A called function as roles.json names it ("ds.authentify", "Employee.raise", "Tools.ping" for a singleton's), and as refusals word it. */
export function functionResource(action: Extract<Action, { kind: 'callFunction' }>): { name: string; label: string } {
  const fn = action.code.kind === 'class' ? action.code.name : action.code.method.name;
  const subject = action.subject;
  if (subject.kind === 'datastore') return { name: `ds.${fn}`, label: `method ${fn} of the datastore` };
  if (subject.kind === 'singleton') return { name: `${subject.name}.${fn}`, label: `function ${fn} of the singleton ${subject.name}` };
  return { name: `${subject.dc.name}.${fn}`, label: `method ${fn} in dataClass ${subject.dc.name}` };
}
