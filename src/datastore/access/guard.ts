// The permission checks of the core: every read, save, drop and query of a caller's access meets
// them here, whoever asks (a REST handler, a user function, an event), so that no door of the
// server reaches the data around them. The decisions are roles.json's (permissions/policy.ts);
// this module asks them at the right moments and words the refusals: 401 for a guest session (it
// may log in), 403 for a logged-in one.

import { DatasetError } from '../../errors/dataset-error.js';
import type { ErrorName } from '../../errors/registry.js';
import type { AttributeModel, DataClassModel, StorageAttribute, Visibility } from '../../model/types.js';
import type { DataAction, Grants } from '../../permissions/policy.js';
import type { Access } from './access.js';

const CODES: Record<DataAction | 'execute', ErrorName> = {
  read: 'NO_PERMISSION_READ',
  create: 'NO_PERMISSION_CREATE',
  update: 'NO_PERMISSION_UPDATE',
  drop: 'NO_PERMISSION_DROP',
  execute: 'NO_PERMISSION_EXECUTE',
};

/** Who the refusal was for, in its message. */
function who(grants: Grants): string {
  return grants.guest ? 'a guest session (log in first)' : `a session holding ${grants.privileges.join(', ')}`;
}

/** The refusal of `action` on `resource` ("dataClass Employee", "attribute Employee.salary"): 401 to a guest, 403 otherwise. */
export function refusal(grants: Grants, action: DataAction | 'execute', resource: string): DatasetError {
  return new DatasetError(CODES[action], `No permission to ${action} ${resource}: roles.json does not grant it to ${who(grants)}`, [], { status: grants.guest ? 401 : 403 });
}

/** The caller may `action` entities of `dc` (update and drop also need read: the policy says so). */
export function requireDataClass(access: Access, dc: DataClassModel, action: DataAction): void {
  // (__DeletedRecords: whoever asks, the server's own server code included)
  if (dc.system && action !== 'read') throw new DatasetError('READ_ONLY', `${dc.name} is kept by the server (it records the drops of the dataclasses that track their changes): its entities cannot be created, updated or dropped`);
  if (!access.grants.dataClass(dc.name, action)) throw refusal(access.grants, action, `for dataClass ${dc.name}`);
}

/** What a session may do with a dataclass's entities, as the catalog and the API description show it (__DeletedRecords: nothing, whoever asks). */
export function sessionMay(grants: Grants, dc: DataClassModel): { readonly create: boolean; readonly update: boolean; readonly drop: boolean } {
  const may = (action: 'create' | 'update' | 'drop') => !dc.system && grants.dataClass(dc.name, action);
  return { create: may('create'), update: may('update'), drop: may('drop') };
}

const names = new WeakMap<StorageAttribute, readonly string[]>();

/** The storage attributes a relation's foreign key stands for: a permission may name either (found once per attribute: every save asks, 10 µs a create). */
function namesOf(attr: StorageAttribute): readonly string[] {
  let found = names.get(attr);
  if (found === undefined) {
    const relations = attr.dataClass.attributes.filter((a) => a.kind === 'relatedEntity' && a.foreignKey === attr).map((a) => a.name);
    names.set(attr, (found = [attr.name, ...relations]));
  }
  return found;
}

function requireAttribute(access: Access, attr: StorageAttribute, action: DataAction): void {
  const dc = attr.dataClass.name;
  for (const name of namesOf(attr)) {
    if (!access.grants.attribute(dc, name, action)) throw refusal(access.grants, action, `for attribute ${dc}.${name}`);
  }
}

/**
 * A save may go ahead: create (a new entity; attributes given a value need their own create) or
 * update (the touched attributes need their own update). Checked before any event runs.
 */
export function requireSave(access: Access, dc: DataClassModel, isNew: boolean, values: ReadonlyMap<StorageAttribute, unknown>): void {
  const action = isNew ? 'create' : 'update';
  requireDataClass(access, dc, action);
  for (const [attr, value] of values) {
    // 4D: an attribute's create permission is about giving it a non-default (non-null) value
    if (isNew && (value === null || value === undefined || attr.identifying)) continue;
    requireAttribute(access, attr, action);
  }
}

/** A drop may go ahead: the dataclass's drop, and each attribute's own drop where it holds a value. */
export function requireDrop(access: Access, dc: DataClassModel, values: Readonly<Record<string, unknown>>): void {
  requireDataClass(access, dc, 'drop');
  for (const attr of dc.storage) {
    const v = values[attr.name];
    if (v !== null && v !== undefined && !attr.identifying) requireAttribute(access, attr, 'drop');
  }
}

/**
 * What a caller may read of each dataclass, as a Visibility: a relation only when its target
 * dataclass is readable too. The attributes it may not read are `denied` (queries and sorts on
 * them are refused, answers leave them out). One function per grants, so that what is cached per
 * visibility (projections) is cached per set of privileges.
 */
const readables = new WeakMap<Grants, Visibility>();

export function readableBy(grants: Grants): Visibility {
  let v = readables.get(grants);
  if (v) return v;
  // an alias reads through its path: each step must be readable too, or an alias would show
  // what the attribute it names hides (employerRevenues → employer.revenues)
  const can = (attr: AttributeModel): boolean => {
    if (!grants.attribute(attr.dataClass.name, attr.name, 'read')) return false;
    if (attr.kind === 'relatedEntity' || attr.kind === 'relatedEntities') return grants.dataClass(attr.target.name, 'read');
    if (attr.kind === 'alias') return attr.steps.every(can);
    return true;
  };
  const denied = (attr: AttributeModel): DatasetError | undefined => {
    if (can(attr)) return undefined;
    if (!grants.dataClass(attr.dataClass.name, 'read')) return refusal(grants, 'read', `for dataClass ${attr.dataClass.name}`);
    if (!grants.attribute(attr.dataClass.name, attr.name, 'read')) return refusal(grants, 'read', `for attribute ${attr.dataClass.name}.${attr.name}`);
    if (attr.kind === 'alias') {
      const step = attr.steps.find((s) => !can(s)) as AttributeModel;
      return refusal(grants, 'read', `for attribute ${step.dataClass.name}.${step.name} (through the alias ${attr.dataClass.name}.${attr.name})`);
    }
    const target = (attr as { target: DataClassModel }).target;
    return refusal(grants, 'read', `for dataClass ${target.name} (through ${attr.dataClass.name}.${attr.name})`);
  };
  v = Object.assign(can, { denied });
  readables.set(grants, v);
  return v;
}

/** Both visibilities: an attribute `first` hides stays unknown; one only `second` hides is denied as `second` says. */
export function bothVisible(first: Visibility, second: Visibility): Visibility {
  const can = (attr: AttributeModel) => first(attr) && second(attr);
  return Object.assign(can, {
    denied: (attr: AttributeModel) => (first(attr) ? second.denied?.(attr) : first.denied?.(attr)),
  });
}
