// Reads a roles.json text (reference §5.4) into a checked RolesFile: its grammar, and every name
// in it checked against what exists (privileges, dataclasses, attributes, functions). The server
// refuses to start on any RolesFileError (4D would open with protection off: we fail closed), so
// each one says exactly what is wrong and where. What the grants mean is policy.ts's.

import { didYouMean } from '../util/suggest.js';
import {
  asArray, asBoolean, asString, lineColumn, parseStrictJson, readObject,
  type Fail, type Member, type Node,
} from './json-text.js';

export type DataAction = 'read' | 'create' | 'update' | 'drop';
export type PermissionAction = DataAction | 'execute' | 'promote';
export type ResourceType = 'datastore' | 'dataclass' | 'attribute' | 'method' | 'singleton' | 'singletonMethod';

export interface Permission {
  /** "ds", "Company", "Company.name", "ds.authentify" or "Company.raiseSalaries"; a singleton "Tools", its function "Tools.ping" */
  readonly applyTo: string;
  readonly type: ResourceType;
  /** Each list names privileges (as declared in roles.json, or `guest`). An empty list says nothing. */
  readonly read?: readonly string[];
  readonly create?: readonly string[];
  readonly update?: readonly string[];
  readonly drop?: readonly string[];
  readonly execute?: readonly string[];
  readonly promote?: readonly string[];
}

export interface PrivilegeDefinition {
  readonly privilege: string;
  /** privilege names, spelt as declared */
  readonly includes: readonly string[];
}

export interface RoleDefinition {
  readonly role: string;
  /** privilege names, spelt as declared */
  readonly privileges: readonly string[];
}

export interface RolesFile {
  readonly privileges: readonly PrivilegeDefinition[];
  readonly roles: readonly RoleDefinition[];
  /** permissions.allowed, entries for one resource merged into one */
  readonly permissions: readonly Permission[];
  readonly restrictedByDefault: boolean;
  readonly forceLogin: boolean;
}

/** What exists, to check names against: dataclass name → its attribute names; function resources as roles.json names them. */
export interface KnownResources {
  readonly dataClasses: ReadonlyMap<string, ReadonlySet<string>>;
  /** "ds.authentify", "Company.raiseSalaries" (dataclass, entity and selection functions all as "<DataClass>.<fn>") */
  readonly functions: ReadonlySet<string>;
  /** functions always callable, of which roles.json may only say `promote` (the $directory hooks: "ds.directoryLogin") */
  readonly promoteOnly?: ReadonlySet<string>;
  /** shared singleton class → its exposed function names (absent: the project has none) */
  readonly singletons?: ReadonlyMap<string, ReadonlySet<string>>;
}

export class RolesFileError extends Error {
  constructor(readonly file: string, readonly line: number, readonly column: number, readonly problem: string) {
    super(`${file}:${line}:${column}: ${problem}`);
    this.name = 'RolesFileError';
  }
}

/** The privilege every session holds: it may be named in lists without being declared. */
export const GUEST = 'guest';
/** 4D keeps this name for itself (reference §5.4). */
const RESERVED = 'webadmin';

export const RESOURCE_TYPES: readonly ResourceType[] = ['datastore', 'dataclass', 'attribute', 'method', 'singleton', 'singletonMethod'];
export const ACTIONS_BY_TYPE: Readonly<Record<ResourceType, readonly PermissionAction[]>> = {
  datastore: ['read', 'create', 'update', 'drop', 'execute'],
  dataclass: ['read', 'create', 'update', 'drop', 'execute'],
  attribute: ['read', 'create', 'update', 'drop'],
  method: ['execute', 'promote'],
  // a singleton's lists are its functions' (reference §5.5: execute and promote for a function or a singleton)
  singleton: ['execute', 'promote'],
  singletonMethod: ['execute', 'promote'],
};
const ALL_ACTIONS: readonly PermissionAction[] = ['read', 'create', 'update', 'drop', 'execute', 'promote'];

const TOP_KEYS = ['privileges', 'roles', 'permissions', 'restrictedByDefault', 'forceLogin'];
const PRIVILEGE_KEYS = ['privilege', 'includes'];
const ROLE_KEYS = ['role', 'privileges'];
const PERMISSIONS_KEYS = ['allowed'];
const PERMISSION_KEYS = ['applyTo', 'type', ...ALL_ACTIONS];

export function parseRolesFile(text: string, file: string, known: KnownResources): RolesFile {
  const fail: Fail = (at, problem) => {
    const { line, column } = lineColumn(text, typeof at === 'number' ? at : at.offset);
    throw new RolesFileError(file, line, column, problem);
  };
  const root = parseStrictJson(text, fail);
  const top = readObject(root, TOP_KEYS, 'roles.json', fail);
  const required = (key: string, needs: string): Node => (top.get(key) ?? fail(root, `roles.json needs '${key}' (${needs})`)).value;
  const optional = (key: string): Node | undefined => top.get(key)?.value;

  const privilegesNode = required('privileges', 'an array of privilege definitions, possibly empty');
  const permissionsNode = required('permissions', "an object whose 'allowed' lists the permissions");
  const names = new PrivilegeNames(fail);
  // Declarations first, references after: includes may name a privilege declared further down,
  // and a role's name where a privilege's is expected gets its own hint.
  const privileges = asArray(privilegesNode, "'privileges'", fail).map((entry) => declarePrivilege(entry, names, fail));
  const rolesNode = optional('roles');
  const roles = (rolesNode ? asArray(rolesNode, "'roles'", fail) : []).map((entry) => declareRole(entry, names, fail));
  const permissions = readObject(permissionsNode, PERMISSIONS_KEYS, "'permissions'", fail);
  const allowed = permissions.get('allowed') ?? fail(permissionsNode, "'permissions' needs 'allowed' (an array of permissions, possibly empty)");
  const flag = (key: string): boolean => {
    const node = optional(key);
    return node ? asBoolean(node, `'${key}'`, fail) : false;
  };
  return {
    privileges: privileges.map((resolve) => resolve()),
    roles: roles.map((resolve) => resolve()),
    permissions: readPermissions(asArray(allowed.value, "'permissions.allowed'", fail), names, known, fail),
    restrictedByDefault: flag('restrictedByDefault'),
    forceLogin: flag('forceLogin'),
  };
}

/** The privilege and role names declared so far, to resolve references against. */
class PrivilegeNames {
  /** lower-cased name → name as declared */
  readonly privileges = new Map<string, string>();
  readonly roles = new Map<string, string>();

  constructor(private readonly fail: Fail) {}

  /** A privilege's or role's own name: non-blank, not reserved, not declared before in any case. */
  declare(node: Node, kind: 'privilege' | 'role'): string {
    const fail = this.fail;
    const declared = kind === 'privilege' ? this.privileges : this.roles;
    const name = asString(node, `a ${kind} name`, fail);
    if (name.trim() === '') return fail(node, `a ${kind} name must not be empty`);
    const lower = name.toLowerCase();
    if (lower === RESERVED) return fail(node, `'${name}' is reserved by 4D and cannot name a ${kind}`);
    const earlier = declared.get(lower);
    if (earlier !== undefined) {
      return fail(node, earlier === name
        ? `duplicate ${kind} '${name}'`
        : `duplicate ${kind} '${name}': ${kind} names are case-insensitive and '${earlier}' is declared already`);
    }
    declared.set(lower, name);
    return name;
  }

  /** A reference to a privilege (declared, in any case, or guest), spelt as declared. */
  resolve(node: Node, what: string): string {
    const name = asString(node, what, this.fail);
    const lower = name.toLowerCase();
    const declared = this.privileges.get(lower) ?? (lower === GUEST ? GUEST : undefined);
    if (declared !== undefined) return declared;
    const hint = this.roles.has(lower)
      ? ` ('${name}' is a role; includes, roles and permissions name privileges)`
      : didYouMean(name, [...this.privileges.values(), GUEST]);
    return this.fail(node, `unknown privilege '${name}'${hint}`);
  }

  resolveAll(nodes: readonly Node[], what: string): string[] {
    return unique(nodes.map((node) => this.resolve(node, what)));
  }
}

/** Declares a privilege now; the returned function resolves its includes once every name is known. */
function declarePrivilege(entry: Node, names: PrivilegeNames, fail: Fail): () => PrivilegeDefinition {
  const members = readObject(entry, PRIVILEGE_KEYS, 'a privilege definition', fail);
  const privilege = names.declare(members.get('privilege')?.value ?? fail(entry, "a privilege definition needs 'privilege' (its name)"), 'privilege');
  const includesMember = members.get('includes');
  const includes = includesMember ? asArray(includesMember.value, "'includes'", fail, 'an array of privilege names') : [];
  if (includesMember && includes.length > 0 && privilege.toLowerCase() === GUEST) {
    // every session holds guest: what it included would be granted to everyone, out of sight
    fail(includesMember.keyNode, `'${privilege}' is held by every session and cannot include other privileges; grant to them directly`);
  }
  return () => ({ privilege, includes: names.resolveAll(includes, "a privilege name in 'includes'") });
}

/** Declares a role now; the returned function resolves its privileges once every name is known. */
function declareRole(entry: Node, names: PrivilegeNames, fail: Fail): () => RoleDefinition {
  const members = readObject(entry, ROLE_KEYS, 'a role definition', fail);
  const role = names.declare(members.get('role')?.value ?? fail(entry, "a role definition needs 'role' (its name)"), 'role');
  const list = members.get('privileges') ?? fail(entry, `role '${role}' needs 'privileges' (an array of privilege names)`);
  const privileges = asArray(list.value, "'privileges'", fail, 'an array of privilege names');
  return () => ({ role, privileges: names.resolveAll(privileges, `a privilege name in role '${role}'`) });
}

function readPermissions(entries: readonly Node[], names: PrivilegeNames, known: KnownResources, fail: Fail): Permission[] {
  // Two entries for one resource are merged: each action's list is the union of theirs.
  const merged = new Map<string, { applyTo: string; type: ResourceType; lists: Map<PermissionAction, string[]> }>();
  for (const entry of entries) {
    const members = readObject(entry, PERMISSION_KEYS, 'a permission', fail);
    const type = readType(members, entry, fail);
    const applyToNode = members.get('applyTo')?.value ?? fail(entry, `a permission needs 'applyTo' (the ${type} it grants on)`);
    const applyTo = asString(applyToNode, "'applyTo'", fail);
    checkResource(type, applyTo, applyToNode, known, fail);
    const key = `${type}\n${applyTo}`;
    const target = merged.get(key) ?? { applyTo, type, lists: new Map() };
    merged.set(key, target);
    for (const action of ALL_ACTIONS) {
      const member = members.get(action);
      if (member === undefined) continue;
      const list = asArray(member.value, `'${action}'`, fail, 'an array of privilege names');
      const takes = ACTIONS_BY_TYPE[type];
      if (!takes.includes(action)) {
        // 4D 21's own default file has "promote": [] on its ds entry: an empty list grants
        // nothing and misleads no one, so only a list that names someone is refused.
        if (list.length === 0) continue;
        fail(member.keyNode, `'${action}' does not apply to ${type === 'attribute' ? 'an' : 'a'} ${type} permission, which takes ${takes.join(', ')}`);
      }
      if (action === 'execute' && list.length > 0 && known.promoteOnly?.has(applyTo)) {
        fail(member.keyNode, `'execute' does not apply to ${applyTo}: it is always callable (it is how a session logs in and says who it is); only 'promote' applies`);
      }
      const resolved = names.resolveAll(list, `a privilege name in '${action}'`);
      target.lists.set(action, unique([...target.lists.get(action) ?? [], ...resolved]));
    }
  }
  return [...merged.values()].map(({ applyTo, type, lists }) => ({ applyTo, type, ...Object.fromEntries(lists) }));
}

function readType(members: ReadonlyMap<string, Member>, entry: Node, fail: Fail): ResourceType {
  const node = members.get('type')?.value ?? fail(entry, `a permission needs 'type' (one of ${RESOURCE_TYPES.join(', ')})`);
  const type = asString(node, "'type'", fail);
  if (!(RESOURCE_TYPES as readonly string[]).includes(type)) {
    return fail(node, `unknown type '${type}'${didYouMean(type, RESOURCE_TYPES)} (a permission's type is one of ${RESOURCE_TYPES.join(', ')})`);
  }
  return type as ResourceType;
}

/** Fails unless applyTo names something that exists, the way its type names things (reference §5.4). */
function checkResource(type: ResourceType, applyTo: string, node: Node, known: KnownResources, fail: Fail): void {
  const classes = known.dataClasses;
  switch (type) {
    case 'datastore':
      if (applyTo !== 'ds') fail(node, `a datastore permission applies to 'ds', not '${applyTo}'`);
      return;
    case 'dataclass':
      if (!classes.has(applyTo)) {
        const hint = applyTo.includes('.') ? " (an attribute's permission has type 'attribute', a function's type 'method')" : didYouMean(applyTo, classes.keys());
        fail(node, `unknown dataclass '${applyTo}'${hint}`);
      }
      return;
    case 'attribute': {
      const dot = applyTo.indexOf('.');
      if (dot < 0) return fail(node, `an attribute permission applies to '<DataClass>.<attribute>', not '${applyTo}'`);
      const className = applyTo.slice(0, dot);
      const attribute = applyTo.slice(dot + 1);
      const attributes = classes.get(className) ?? fail(node, `unknown dataclass '${className}' in '${applyTo}'${didYouMean(className, classes.keys())}`);
      if (!attributes.has(attribute)) fail(node, `dataclass '${className}' has no attribute '${attribute}'${didYouMean(attribute, attributes)}`);
      return;
    }
    case 'method':
      if (!known.functions.has(applyTo)) {
        const singleton = known.singletons?.has(applyTo.slice(0, applyTo.indexOf('.'))) ? " (a singleton's function has type 'singletonMethod')" : undefined;
        const hint = singleton ?? (applyTo.includes('.') ? didYouMean(applyTo, known.functions) : " (a function is named 'ds.<function>' or '<DataClass>.<function>')");
        fail(node, `unknown function '${applyTo}'${hint}`);
      }
      return;
    case 'singleton': {
      const singletons = known.singletons ?? new Map<string, ReadonlySet<string>>();
      if (!singletons.has(applyTo)) {
        const hint = applyTo.includes('.') ? " (a singleton's function has type 'singletonMethod')" : singletons.size === 0 ? ' (the project has no shared singleton class)' : didYouMean(applyTo, singletons.keys());
        fail(node, `unknown singleton '${applyTo}'${hint}`);
      }
      return;
    }
    case 'singletonMethod': {
      const dot = applyTo.indexOf('.');
      if (dot < 0) return fail(node, `a singletonMethod permission applies to '<SingletonClass>.<function>', not '${applyTo}'`);
      const className = applyTo.slice(0, dot);
      const fn = applyTo.slice(dot + 1);
      const singletons = known.singletons ?? new Map<string, ReadonlySet<string>>();
      const functions = singletons.get(className) ?? fail(node, `unknown singleton '${className}' in '${applyTo}'${singletons.size === 0 ? ' (the project has no shared singleton class)' : didYouMean(className, singletons.keys())}`);
      if (!functions.has(fn)) fail(node, `the singleton '${className}' has no exposed function '${fn}'${didYouMean(fn, functions)}`);
      return;
    }
  }
}

function unique(names: readonly string[]): string[] {
  return [...new Set(names)];
}
