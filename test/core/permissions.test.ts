// roles.json (src/permissions/): how a file is read and checked — every mistake refused at its
// line and column — and what its grants mean for a session (4D's rules, reference §5.4–5.6).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Policy, type Grants } from '../../src/permissions/policy.js';
import { parseRolesFile, RolesFileError, type KnownResources, type RolesFile } from '../../src/permissions/roles-file.js';

const KNOWN: KnownResources = {
  dataClasses: new Map([
    ['Company', new Set(['ID', 'name', 'revenue', 'staff'])],
    ['Employee', new Set(['ID', 'firstName', 'lastName', 'salary', 'employer'])],
    ['Invoice', new Set(['ID', 'total'])],
  ]),
  functions: new Set(['ds.authentify', 'ds.loginAs', 'Company.raiseSalaries', 'Employee.fullName', 'Invoice.send']),
  singletons: new Map([['Counter', new Set(['next', 'reset'])]]),
};

function parse(text: string): RolesFile {
  return parseRolesFile(text, 'Project/Sources/roles.json', KNOWN);
}

/** A roles.json text from an object, so tests need only say what matters. */
function rolesText(content: Record<string, unknown>): string {
  return JSON.stringify({ privileges: [], permissions: { allowed: [] }, ...content }, null, 2);
}

function policyOf(content: Record<string, unknown>): Policy {
  return Policy.fromFile(parse(rolesText(content)));
}

/** The RolesFileError parsing this text throws (fails the test when it throws none). */
function errorOf(text: string): RolesFileError {
  try {
    parse(text);
  } catch (e) {
    if (e instanceof RolesFileError) return e;
    throw e;
  }
  assert.fail('expected a RolesFileError');
}

function assertRefused(text: string, line: number, column: number, problem: RegExp): void {
  const error = errorOf(text);
  assert.match(error.problem, problem);
  assert.deepEqual({ line: error.line, column: error.column }, { line, column }, error.message);
  assert.equal(error.message, `Project/Sources/roles.json:${line}:${column}: ${error.problem}`);
}

/** Where the n-th occurrence of a string starts, 1-based, worked out independently of the code under test. */
function positionOf(text: string, needle: string, occurrence = 1): { line: number; column: number } {
  let offset = -1;
  for (let i = 0; i < occurrence; i++) offset = text.indexOf(needle, offset + 1);
  assert.ok(offset >= 0, `${needle} in the text`);
  const lines = text.slice(0, offset).split('\n');
  return { line: lines.length, column: lines[lines.length - 1].length + 1 };
}

function assertRefusedAt(text: string, needle: string, problem: RegExp, occurrence = 1): void {
  const { line, column } = positionOf(text, needle, occurrence);
  assertRefused(text, line, column, problem);
}

const permission = (applyTo: string, type: string, lists: Record<string, unknown> = {}): Record<string, unknown> => ({ applyTo, type, ...lists });

describe('roles.json syntax', () => {
  it('refuses a trailing comma at its line and column', () => {
    const text = ['{', '  "privileges": [],', '  "permissions": {"allowed": [],}', '}'].join('\n');
    assertRefused(text, 3, 33, /^invalid JSON: property name expected \(a trailing comma is not allowed\)$/);
  });

  it('refuses a missing comma where the next member starts', () => {
    const text = ['{', '  "privileges": []', '  "permissions": {"allowed": []}', '}'].join('\n');
    assertRefused(text, 3, 3, /^invalid JSON: comma expected$/);
  });

  it('refuses comments', () => {
    assertRefused('{ // the roles\n}', 1, 3, /comments are not allowed/);
  });

  it('counts lines ended by \\r\\n once', () => {
    const text = ['{', '  "privileges": [],', '  "permissions": {"allowed": []},', '  "forcelogin": true', '}'].join('\r\n');
    assertRefused(text, 4, 3, /^unknown key 'forcelogin'/);
  });

  it('refuses an empty file', () => {
    assertRefused('', 1, 1, /the file is empty/);
    assertRefused('  \n ', 1, 1, /the file is empty/);
  });

  it('refuses a top level that is not an object', () => {
    assertRefused('[]', 1, 1, /^roles\.json must be an object, found an array$/);
  });

  it('reads a file starting with a byte-order mark, columns counted after it', () => {
    assert.equal(parse(`\uFEFF${rolesText({})}`).forceLogin, false);
    assertRefused('\uFEFF{"privileges": [], "permissions": {"allowed": []}, "x": 1}', 1, 52, /^unknown key 'x'/);
  });
});

describe('roles.json structure', () => {
  it('refuses an unknown top-level key, suggesting the right one and listing the accepted ones', () => {
    const text = '{"privileges": [], "permissions": {"allowed": []}, "forcelogin": true}';
    assertRefused(text, 1, 52, /^unknown key 'forcelogin' in roles\.json, did you mean 'forceLogin'\? \(accepted: privileges, roles, permissions, restrictedByDefault, forceLogin\)$/);
  });

  it('refuses a misspelt action instead of reading it as "nothing granted"', () => {
    const text = [
      '{',
      '  "privileges": [{"privilege": "reader"}],',
      '  "permissions": {"allowed": [',
      '    {"applyTo": "Company", "type": "dataclass", "reed": ["reader"]}',
      '  ]}',
      '}',
    ].join('\n');
    assertRefused(text, 4, 49, /^unknown key 'reed' in a permission, did you mean 'read'\? \(accepted: applyTo, type, read, create, update, drop, execute, promote\)$/);
  });

  it('refuses unknown keys in privilege and role definitions and in the permissions object', () => {
    let text = rolesText({ privileges: [{ privilege: 'admin', include: [] }] });
    assertRefusedAt(text, '"include"', /^unknown key 'include' in a privilege definition, did you mean 'includes'\?/);
    text = rolesText({ privileges: [{ privilege: 'admin' }], roles: [{ role: 'Boss', privilege: ['admin'] }] });
    assertRefusedAt(text, '"privilege"', /^unknown key 'privilege' in a role definition, did you mean 'privileges'\?/, 2);
    text = rolesText({ permissions: { allowed: [], denied: [] } });
    assertRefusedAt(text, '"denied"', /^unknown key 'denied' in 'permissions' \(accepted: allowed\)$/);
  });

  it('refuses a key given twice in one object', () => {
    const text = '{"privileges": [], "permissions": {"allowed": []}, "privileges": []}';
    assertRefused(text, 1, 52, /^duplicate key 'privileges' in roles\.json$/);
  });

  it('refuses wrong JSON types, naming the type expected', () => {
    assertRefusedAt(rolesText({ privileges: {} }), '{}', /^'privileges' must be an array, found an object$/);
    assertRefusedAt(rolesText({ forceLogin: 'yes' }), '"yes"', /^'forceLogin' must be true or false, found a string$/);
    assertRefusedAt(rolesText({ restrictedByDefault: 1 }), '1', /^'restrictedByDefault' must be true or false, found a number$/);
    assertRefusedAt(rolesText({ roles: {} }), '{}', /^'roles' must be an array, found an object$/);
    assertRefusedAt(rolesText({ permissions: [] }), '[]', /^'permissions' must be an object, found an array$/, 2);
    assertRefusedAt(rolesText({ permissions: { allowed: null } }), 'null', /^'permissions\.allowed' must be an array, found null$/);
    assertRefusedAt(rolesText({ privileges: ['admin'] }), '"admin"', /^a privilege definition must be an object, found a string$/);
    assertRefusedAt(rolesText({ privileges: [{ privilege: 42 }] }), '42', /^a privilege name must be a string, found a number$/);
    assertRefusedAt(rolesText({ privileges: [{ privilege: 'a', includes: 'b' }] }), '"b"', /^'includes' must be an array of privilege names, found a string$/);
    assertRefusedAt(rolesText({ permissions: { allowed: [permission('Company', 'dataclass', { read: 'guest' })] } }), '"guest"',
      /^'read' must be an array of privilege names, found a string$/);
    assertRefusedAt(rolesText({ permissions: { allowed: [permission('Company', 'dataclass', { read: [true] })] } }), 'true',
      /^a privilege name in 'read' must be a string, found true$/);
    assertRefusedAt(rolesText({ permissions: { allowed: [{ applyTo: null, type: 'datastore' }] } }), 'null', /^'applyTo' must be a string, found null$/);
  });

  it('refuses a missing required key at the object that lacks it', () => {
    assertRefused('{"permissions": {"allowed": []}}', 1, 1, /^roles\.json needs 'privileges'/);
    assertRefused('{"privileges": []}', 1, 1, /^roles\.json needs 'permissions'/);
    assertRefused('{"privileges": [], "permissions": {}}', 1, 35, /^'permissions' needs 'allowed'/);
    let text = rolesText({ permissions: { allowed: [{ applyTo: 'ds' }] } });
    assertRefusedAt(text, '{\n        "applyTo"', /^a permission needs 'type' \(one of datastore, dataclass, attribute, method, singleton, singletonMethod\)$/);
    text = rolesText({ permissions: { allowed: [{ type: 'dataclass' }] } });
    assertRefusedAt(text, '{\n        "type"', /^a permission needs 'applyTo' \(the dataclass it grants on\)$/);
    text = rolesText({ roles: [{ role: 'Boss' }] });
    assertRefusedAt(text, '{\n      "role"', /^role 'Boss' needs 'privileges'/);
    text = rolesText({ privileges: [{ includes: [] }] });
    assertRefusedAt(text, '{\n      "includes"', /^a privilege definition needs 'privilege'/);
  });
});

describe('roles.json names', () => {
  it('refuses two privileges whose names differ only in case', () => {
    const text = '{"privileges": [{"privilege": "Admin"}, {"privilege": "admin"}], "permissions": {"allowed": []}}';
    assertRefused(text, 1, 55, /^duplicate privilege 'admin': privilege names are case-insensitive and 'Admin' is declared already$/);
  });

  it('refuses two roles with one name', () => {
    const text = rolesText({ roles: [{ role: 'Boss', privileges: [] }, { role: 'Boss', privileges: [] }] });
    assertRefusedAt(text, '"Boss"', /^duplicate role 'Boss'$/, 2);
  });

  it('refuses WebAdmin, reserved by 4D, in any case, for a privilege or a role', () => {
    assertRefusedAt(rolesText({ privileges: [{ privilege: 'WebAdmin' }] }), '"WebAdmin"', /^'WebAdmin' is reserved by 4D and cannot name a privilege$/);
    assertRefusedAt(rolesText({ roles: [{ role: 'webadmin', privileges: [] }] }), '"webadmin"', /^'webadmin' is reserved by 4D and cannot name a role$/);
  });

  it('refuses an empty name', () => {
    assertRefusedAt(rolesText({ privileges: [{ privilege: ' ' }] }), '" "', /^a privilege name must not be empty$/);
  });

  it('lets guest be named without being declared, and declared without includes', () => {
    const file = parse(rolesText({ privileges: [{ privilege: 'guest' }], permissions: { allowed: [permission('Company', 'dataclass', { read: ['GUEST'] })] } }));
    assert.deepEqual(file.permissions[0].read, ['guest']);
    assert.deepEqual(parse(rolesText({ permissions: { allowed: [permission('ds', 'datastore', { read: ['Guest'] })] } })).permissions[0].read, ['guest']);
  });

  it('refuses includes on guest: they would go to every session unseen', () => {
    const text = rolesText({ privileges: [{ privilege: 'admin' }, { privilege: 'Guest', includes: ['admin'] }] });
    assertRefusedAt(text, '"includes"', /^'Guest' is held by every session and cannot include other privileges/);
  });

  it('refuses an unknown privilege in includes, with a did-you-mean', () => {
    const text = rolesText({ privileges: [{ privilege: 'admin', includes: ['sales'] }, { privilege: 'sales', includes: ['admn'] }] });
    assertRefusedAt(text, '"admn"', /^unknown privilege 'admn', did you mean 'admin'\?$/);
  });

  it('refuses an unknown privilege in a role', () => {
    const text = rolesText({ privileges: [{ privilege: 'basic' }], roles: [{ role: 'Manager', privileges: ['basic', 'bosses'] }] });
    assertRefusedAt(text, '"bosses"', /^unknown privilege 'bosses'$/);
  });

  it('refuses an unknown privilege in a permission list, saying when the name is a role', () => {
    let text = rolesText({ privileges: [{ privilege: 'basic' }], permissions: { allowed: [permission('Company', 'dataclass', { read: ['basics'] })] } });
    assertRefusedAt(text, '"basics"', /^unknown privilege 'basics', did you mean 'basic'\?$/);
    text = rolesText({
      privileges: [{ privilege: 'basic' }],
      roles: [{ role: 'Manager', privileges: ['basic'] }],
      permissions: { allowed: [permission('Company', 'dataclass', { update: ['Manager'] })] },
    });
    // (rolesText writes permissions before roles: the first "Manager" is the one in the list)
    assertRefusedAt(text, '"Manager"', /^unknown privilege 'Manager' \('Manager' is a role; includes, roles and permissions name privileges\)$/);
  });

  it('resolves a privilege named in another case to its declared spelling', () => {
    const file = parse(rolesText({
      privileges: [{ privilege: 'Basic' }, { privilege: 'admin', includes: ['BASIC'] }],
      roles: [{ role: 'Boss', privileges: ['ADMIN', 'admin'] }],
      permissions: { allowed: [permission('Company', 'dataclass', { read: ['basic'] })] },
    }));
    assert.deepEqual(file.privileges, [{ privilege: 'Basic', includes: [] }, { privilege: 'admin', includes: ['Basic'] }]);
    assert.deepEqual(file.roles, [{ role: 'Boss', privileges: ['admin'] }]);
    assert.deepEqual(file.permissions[0].read, ['Basic']);
  });
});

describe('roles.json resources', () => {
  const allowed = (...entries: Record<string, unknown>[]): string => rolesText({ permissions: { allowed: entries } });

  it('refuses a datastore permission on anything but ds', () => {
    assertRefusedAt(allowed(permission('Company', 'datastore')), '"Company"', /^a datastore permission applies to 'ds', not 'Company'$/);
  });

  it('refuses an unknown dataclass (names are case-sensitive), with a did-you-mean', () => {
    assertRefusedAt(allowed(permission('Compnay', 'dataclass')), '"Compnay"', /^unknown dataclass 'Compnay', did you mean 'Company'\?$/);
    assertRefusedAt(allowed(permission('company', 'dataclass')), '"company"', /^unknown dataclass 'company', did you mean 'Company'\?$/);
    assertRefusedAt(allowed(permission('Company.name', 'dataclass')), '"Company.name"', /^unknown dataclass 'Company\.name' \(an attribute's permission has type 'attribute'/);
  });

  it('refuses an unknown attribute or its unknown dataclass, with a did-you-mean', () => {
    assertRefusedAt(allowed(permission('Company.nmae', 'attribute')), '"Company.nmae"', /^dataclass 'Company' has no attribute 'nmae', did you mean 'name'\?$/);
    assertRefusedAt(allowed(permission('Compani.name', 'attribute')), '"Compani.name"', /^unknown dataclass 'Compani' in 'Compani\.name', did you mean 'Company'\?$/);
    assertRefusedAt(allowed(permission('Company', 'attribute')), '"Company"', /^an attribute permission applies to '<DataClass>\.<attribute>', not 'Company'$/);
  });

  it('refuses an unknown function, with a did-you-mean', () => {
    assertRefusedAt(allowed(permission('ds.authentfy', 'method')), '"ds.authentfy"', /^unknown function 'ds\.authentfy', did you mean 'ds\.authentify'\?$/);
    assertRefusedAt(allowed(permission('Company.raiseSalary', 'method')), '"Company.raiseSalary"', /^unknown function 'Company\.raiseSalary', did you mean 'Company\.raiseSalaries'\?$/);
    assertRefusedAt(allowed(permission('authentify', 'method')), '"authentify"', /^unknown function 'authentify' \(a function is named 'ds\.<function>' or '<DataClass>\.<function>'\)$/);
  });

  it('reads singleton and singletonMethod permissions on the shared singletons and their exposed functions', () => {
    const file = parse(rolesText({
      privileges: [{ privilege: 'ops' }],
      permissions: { allowed: [permission('Counter', 'singleton', { execute: ['ops'] }), permission('Counter.reset', 'singletonMethod', { execute: ['ops'], promote: ['ops'] })] },
    }));
    assert.deepEqual(file.permissions, [
      { applyTo: 'Counter', type: 'singleton', execute: ['ops'] },
      { applyTo: 'Counter.reset', type: 'singletonMethod', execute: ['ops'], promote: ['ops'] },
    ]);
  });

  it('refuses an unknown singleton or singleton function, with a did-you-mean, and a type mix-up', () => {
    assertRefusedAt(allowed(permission('Countr', 'singleton')), '"Countr"', /^unknown singleton 'Countr', did you mean 'Counter'\?$/);
    assertRefusedAt(allowed(permission('Counter.next', 'singleton')), '"Counter.next"', /^unknown singleton 'Counter\.next' \(a singleton's function has type 'singletonMethod'\)$/);
    assertRefusedAt(allowed(permission('Counter.nxt', 'singletonMethod')), '"Counter.nxt"', /^the singleton 'Counter' has no exposed function 'nxt', did you mean 'next'\?$/);
    assertRefusedAt(allowed(permission('Countr.next', 'singletonMethod')), '"Countr.next"', /^unknown singleton 'Countr' in 'Countr\.next', did you mean 'Counter'\?$/);
    assertRefusedAt(allowed(permission('Counter', 'singletonMethod')), '"Counter"', /^a singletonMethod permission applies to '<SingletonClass>\.<function>', not 'Counter'$/);
    assertRefusedAt(allowed(permission('Counter.next', 'method')), '"Counter.next"', /^unknown function 'Counter\.next' \(a singleton's function has type 'singletonMethod'\)$/);
    const none = parseRolesFile.bind(null, rolesText({ permissions: { allowed: [permission('Counter', 'singleton')] } }), 'roles.json', { ...KNOWN, singletons: undefined });
    assert.throws(none, /unknown singleton 'Counter' \(the project has no shared singleton class\)/);
  });

  it('refuses an unknown type, suggesting the right spelling', () => {
    assertRefusedAt(allowed(permission('Company', 'dataClass')), '"dataClass"', /^unknown type 'dataClass', did you mean 'dataclass'\? \(a permission's type is one of datastore, dataclass, attribute, method, singleton, singletonMethod\)$/);
  });

  it('refuses an action the type does not take, naming what it takes', () => {
    const basic = { privileges: [{ privilege: 'basic' }] };
    let text = rolesText({ ...basic, permissions: { allowed: [permission('Company.raiseSalaries', 'method', { read: ['basic'] })] } });
    assertRefusedAt(text, '"read"', /^'read' does not apply to a method permission, which takes execute, promote$/);
    text = rolesText({ ...basic, permissions: { allowed: [permission('Company.name', 'attribute', { execute: ['basic'] })] } });
    assertRefusedAt(text, '"execute"', /^'execute' does not apply to an attribute permission, which takes read, create, update, drop$/);
    text = rolesText({ ...basic, permissions: { allowed: [permission('ds', 'datastore', { promote: ['basic'] })] } });
    assertRefusedAt(text, '"promote"', /^'promote' does not apply to a datastore permission, which takes read, create, update, drop, execute$/);
    text = rolesText({ ...basic, permissions: { allowed: [permission('Company', 'dataclass', { promote: ['basic'] })] } });
    assertRefusedAt(text, '"promote"', /^'promote' does not apply to a dataclass permission/);
  });

  it("reads 4D 21's default file, whose ds entry has empty lists (promote among them)", () => {
    const file = parse(JSON.stringify({
      privileges: [],
      roles: [],
      permissions: { allowed: [{ applyTo: 'ds', type: 'datastore', read: [], create: [], update: [], drop: [], execute: [], promote: [] }] },
      restrictedByDefault: false,
      forceLogin: false,
    }, null, '\t'));
    assert.deepEqual(file.permissions, [{ applyTo: 'ds', type: 'datastore', read: [], create: [], update: [], drop: [], execute: [] }]);
  });
});

describe('a valid roles.json', () => {
  it('gets its defaults: no roles, not restricted by default, no forced login, no includes', () => {
    const file = parse('{"privileges": [{"privilege": "admin"}], "permissions": {"allowed": []}}');
    assert.deepEqual(file, {
      privileges: [{ privilege: 'admin', includes: [] }],
      roles: [],
      permissions: [],
      restrictedByDefault: false,
      forceLogin: false,
    });
  });

  it('keeps what it says', () => {
    const file = parse(rolesText({
      privileges: [{ privilege: 'basic' }, { privilege: 'admin', includes: ['basic'] }],
      roles: [{ role: 'Boss', privileges: ['admin'] }],
      permissions: { allowed: [permission('Employee.salary', 'attribute', { read: ['admin'] }), permission('ds.loginAs', 'method', { execute: ['guest'], promote: ['admin'] })] },
      restrictedByDefault: true,
      forceLogin: true,
    }));
    assert.deepEqual(file, {
      privileges: [{ privilege: 'basic', includes: [] }, { privilege: 'admin', includes: ['basic'] }],
      roles: [{ role: 'Boss', privileges: ['admin'] }],
      permissions: [
        { applyTo: 'Employee.salary', type: 'attribute', read: ['admin'] },
        { applyTo: 'ds.loginAs', type: 'method', execute: ['guest'], promote: ['admin'] },
      ],
      restrictedByDefault: true,
      forceLogin: true,
    });
  });

  it('merges two entries for one resource: each action gets the union of their lists', () => {
    const file = parse(rolesText({
      privileges: [{ privilege: 'a' }, { privilege: 'b' }, { privilege: 'c' }],
      permissions: {
        allowed: [
          permission('Company', 'dataclass', { read: ['a'], update: ['a'] }),
          permission('Company.name', 'attribute', { read: ['c'] }),
          permission('Company', 'dataclass', { read: ['b', 'A'], drop: ['c'] }),
        ],
      },
    }));
    assert.deepEqual(file.permissions, [
      { applyTo: 'Company', type: 'dataclass', read: ['a', 'b'], update: ['a'], drop: ['c'] },
      { applyTo: 'Company.name', type: 'attribute', read: ['c'] },
    ]);
  });
});

describe('Policy.expand', () => {
  const policy = policyOf({
    privileges: [
      { privilege: 'simple' },
      { privilege: 'Medium', includes: ['simple'] },
      { privilege: 'high', includes: ['medium', 'audit'] },
      { privilege: 'audit', includes: ['high'] },
      { privilege: 'solo' },
    ],
    roles: [{ role: 'Manager', privileges: ['high'] }, { role: 'Clerk', privileges: ['simple', 'guest'] }],
  });

  it('expands roles and transitive includes into declared names, sorted', () => {
    assert.deepEqual(policy.expand({ roles: ['Clerk'] }), ['simple']);
    assert.deepEqual(policy.expand({ privileges: ['medium'] }), ['Medium', 'simple']);
    assert.deepEqual(policy.expand({ privileges: ['solo'], roles: ['Clerk'] }), ['simple', 'solo']);
  });

  it('survives cycles of includes', () => {
    assert.deepEqual(policy.expand({ privileges: ['audit'] }), ['Medium', 'audit', 'high', 'simple']);
    assert.deepEqual(policy.expand({ roles: ['Manager'] }), ['Medium', 'audit', 'high', 'simple']);
  });

  it('matches names in any case and lists each once', () => {
    assert.deepEqual(policy.expand({ privileges: ['SIMPLE', 'simple', 'MEDIUM'], roles: ['manager', 'CLERK'] }), ['Medium', 'audit', 'high', 'simple']);
  });

  it('ignores unknown names and never lists guest', () => {
    assert.deepEqual(policy.expand({ privileges: ['nobody', 'guest', 'solo'], roles: ['Ghost'] }), ['solo']);
    assert.deepEqual(policy.expand({}), []);
  });
});

describe('Policy decisions', () => {
  const privileges = [{ privilege: 'general' }, { privilege: 'detail' }, { privilege: 'admin' }, { privilege: 'reader' }];

  it('a dataclass list overrides the datastore one, action by action', () => {
    const policy = policyOf({
      privileges,
      permissions: { allowed: [permission('ds', 'datastore', { read: ['admin'], create: ['admin'] }), permission('Company', 'dataclass', { read: ['general'] })] },
    });
    const general = policy.grantsFor(['general']);
    const admin = policy.grantsFor(['admin']);
    assert.equal(general.dataClass('Company', 'read'), true);
    assert.equal(admin.dataClass('Company', 'read'), false, 'Company read is general only');
    assert.equal(admin.dataClass('Company', 'create'), true, 'create falls back to ds');
    assert.equal(general.dataClass('Company', 'create'), false);
    assert.equal(admin.dataClass('Employee', 'read'), true, 'no Employee entry: ds decides');
    assert.equal(general.dataClass('Employee', 'read'), false);
  });

  it('an attribute list adds to its dataclass list: both are needed', () => {
    const policy = policyOf({
      privileges,
      permissions: { allowed: [permission('Employee', 'dataclass', { read: ['general'] }), permission('Employee.salary', 'attribute', { read: ['detail'] })] },
    });
    assert.equal(policy.grantsFor(['general']).attribute('Employee', 'lastName', 'read'), true, 'no attribute list: the dataclass decides');
    assert.equal(policy.grantsFor(['general']).attribute('Employee', 'salary', 'read'), false);
    assert.equal(policy.grantsFor(['detail']).attribute('Employee', 'salary', 'read'), false);
    assert.equal(policy.grantsFor(['general', 'detail']).attribute('Employee', 'salary', 'read'), true);
  });

  it('update and drop need read as well; create does not', () => {
    const policy = policyOf({
      privileges,
      permissions: {
        allowed: [
          permission('Company', 'dataclass', { read: ['reader'], create: ['general'], update: ['general', 'reader'], drop: ['general'] }),
          permission('Company.revenue', 'attribute', { read: ['admin'], update: ['reader'] }),
        ],
      },
    });
    const general = policy.grantsFor(['general']);
    assert.equal(general.dataClass('Company', 'create'), true);
    assert.equal(general.dataClass('Company', 'update'), false);
    assert.equal(general.dataClass('Company', 'drop'), false);
    const both = policy.grantsFor(['general', 'reader']);
    assert.equal(both.dataClass('Company', 'update'), true);
    assert.equal(both.dataClass('Company', 'drop'), true);
    assert.equal(both.attribute('Company', 'name', 'update'), true);
    assert.equal(both.attribute('Company', 'revenue', 'update'), false, 'revenue is read by admin only');
    assert.equal(policy.grantsFor(['reader', 'admin']).attribute('Company', 'revenue', 'update'), true);
    assert.equal(policy.grantsFor(['general', 'admin']).attribute('Company', 'name', 'create'), true, 'create needs no read');
  });

  it("dropping an entity needs reading a value only where the attribute has a drop list of its own", () => {
    const policy = policyOf({
      privileges,
      permissions: {
        allowed: [
          permission('Company', 'dataclass', { read: ['reader'], drop: ['reader'] }),
          permission('Company.revenue', 'attribute', { read: ['admin'] }),
          permission('Company.name', 'attribute', { read: ['admin'], drop: ['reader'] }),
        ],
      },
    });
    const reader = policy.grantsFor(['reader']);
    assert.equal(reader.attribute('Company', 'revenue', 'read'), false);
    assert.equal(reader.attribute('Company', 'revenue', 'drop'), true, 'no drop list of its own: the dataclass decides');
    assert.equal(reader.attribute('Company', 'name', 'drop'), false, 'a drop list of its own: its value must be readable too');
    assert.equal(policy.grantsFor(['reader', 'admin']).attribute('Company', 'name', 'drop'), true);
  });

  it('restrictedByDefault refuses what no list speaks of', () => {
    const open = policyOf({ privileges, permissions: { allowed: [permission('Company', 'dataclass', { read: ['admin'] })] } });
    const restricted = policyOf({ privileges, restrictedByDefault: true, permissions: { allowed: [permission('Company', 'dataclass', { read: ['admin'] })] } });
    assert.equal(open.grantsFor(['general']).dataClass('Employee', 'read'), true);
    assert.equal(open.grantsFor([]).dataClass('Employee', 'drop'), true);
    assert.equal(restricted.grantsFor(['general']).dataClass('Employee', 'read'), false);
    assert.equal(restricted.grantsFor(['admin']).dataClass('Company', 'read'), true);
    assert.equal(restricted.grantsFor(['admin']).execute('Invoice.send'), false);
  });

  it('forceLogin: a guest gets only explicit grants, a logged-in session the default too', () => {
    const policy = policyOf({
      privileges,
      forceLogin: true,
      permissions: { allowed: [permission('Company', 'dataclass', { read: ['guest'] }), permission('Invoice', 'dataclass', { read: ['admin'] })] },
    });
    assert.equal(policy.forceLogin, true);
    const guest = policy.grantsFor([]);
    assert.equal(guest.guest, true);
    assert.equal(guest.dataClass('Company', 'read'), true, 'granted to guest');
    assert.equal(guest.dataClass('Employee', 'read'), false, 'nothing said: refused to a guest');
    assert.equal(guest.execute('ds.loginAs'), false);
    const general = policy.grantsFor(['general']);
    assert.equal(general.dataClass('Employee', 'read'), true, 'nothing said: allowed once logged in');
    assert.equal(general.dataClass('Invoice', 'read'), false);
  });

  it('a list naming guest lets every session in', () => {
    const policy = policyOf({ privileges, permissions: { allowed: [permission('Company', 'dataclass', { read: ['guest', 'admin'] })] } });
    assert.equal(policy.grantsFor([]).dataClass('Company', 'read'), true);
    assert.equal(policy.grantsFor(['general']).dataClass('Company', 'read'), true);
    assert.equal(policy.grantsFor(['admin']).dataClass('Company', 'read'), true);
  });

  it('execute: the method list, else its dataclass list, else the datastore list', () => {
    const policy = policyOf({
      privileges,
      permissions: {
        allowed: [
          permission('ds', 'datastore', { execute: ['admin'] }),
          permission('Company', 'dataclass', { execute: ['general'] }),
          permission('Company.raiseSalaries', 'method', { execute: ['detail'] }),
          permission('ds.loginAs', 'method', { execute: ['guest'] }),
        ],
      },
    });
    const grants = (p: string): Grants => policy.grantsFor([p]);
    assert.equal(grants('detail').execute('Company.raiseSalaries'), true);
    assert.equal(grants('general').execute('Company.raiseSalaries'), false, 'the method list overrides the dataclass one');
    assert.equal(grants('general').execute('Company.other'), true, 'no method entry: the dataclass decides');
    assert.equal(grants('admin').execute('Company.other'), false);
    assert.equal(grants('admin').execute('Employee.fullName'), true, 'no method or dataclass entry: ds decides');
    assert.equal(grants('general').execute('Employee.fullName'), false);
    assert.equal(grants('general').execute('ds.other'), false, 'ds functions: method, else ds');
    assert.equal(policy.grantsFor([]).execute('ds.loginAs'), true);
    assert.equal(grants('general').dataClass('Company', 'execute'), true);
    assert.equal(grants('admin').dataClass('Company', 'execute'), false);
  });

  it('execute of a singleton function: its singletonMethod list, else its singleton list, else the datastore list', () => {
    const policy = policyOf({
      privileges,
      permissions: {
        allowed: [
          permission('ds', 'datastore', { execute: ['admin'] }),
          permission('Counter', 'singleton', { execute: ['general'] }),
          permission('Counter.reset', 'singletonMethod', { execute: ['detail'] }),
        ],
      },
    });
    const grants = (p: string): Grants => policy.grantsFor([p]);
    assert.equal(grants('detail').execute('Counter.reset'), true);
    assert.equal(grants('general').execute('Counter.reset'), false, 'the function list overrides the singleton one');
    assert.equal(grants('general').execute('Counter.next'), true, 'no function entry: the singleton decides');
    assert.equal(grants('admin').execute('Counter.next'), false);
    const datastoreOnly = policyOf({ privileges, permissions: { allowed: [permission('ds', 'datastore', { execute: ['admin'] }), permission('Counter', 'singleton', { promote: ['detail'] })] } });
    assert.equal(datastoreOnly.grantsFor(['admin']).execute('Counter.next'), true, 'a singleton entry without execute: ds decides');
    assert.equal(datastoreOnly.grantsFor(['general']).execute('Counter.next'), false);
  });

  it("promote of a singleton function: its own list and its singleton's, expanded", () => {
    const policy = policyOf({
      privileges: [{ privilege: 'basic' }, { privilege: 'Payroll', includes: ['basic'] }, { privilege: 'ops' }],
      permissions: { allowed: [permission('Counter', 'singleton', { promote: ['payroll'] }), permission('Counter.reset', 'singletonMethod', { promote: ['ops'] })] },
    });
    assert.deepEqual(policy.promotes('Counter.next'), ['Payroll', 'basic']);
    assert.deepEqual(policy.promotes('Counter.reset'), ['Payroll', 'basic', 'ops']);
    assert.deepEqual(policy.promotes('ds.loginAs'), []);
  });

  it('ds.authentify can always run, whatever the file says', () => {
    const policy = policyOf({
      privileges,
      restrictedByDefault: true,
      forceLogin: true,
      permissions: { allowed: [permission('ds', 'datastore', { execute: ['admin'] }), permission('ds.authentify', 'method', { execute: ['admin'] })] },
    });
    assert.equal(policy.grantsFor([]).execute('ds.authentify'), true);
    assert.equal(policy.grantsFor(['general']).execute('ds.authentify'), true);
    assert.equal(policy.grantsFor([]).execute('ds.loginAs'), false);
  });

  it('promotes gives the promoted privileges expanded through includes', () => {
    const policy = policyOf({
      privileges: [{ privilege: 'basic' }, { privilege: 'Payroll', includes: ['basic'] }],
      permissions: { allowed: [permission('Company.raiseSalaries', 'method', { execute: ['guest'], promote: ['payroll'] }), permission('ds.loginAs', 'method', { promote: [] })] },
    });
    assert.deepEqual(policy.promotes('Company.raiseSalaries'), ['Payroll', 'basic']);
    assert.deepEqual(policy.promotes('ds.loginAs'), []);
    assert.deepEqual(policy.promotes('Employee.fullName'), []);
  });

  it('an empty list is no list: the level above, or the default, decides', () => {
    const policy = policyOf({
      privileges,
      restrictedByDefault: false,
      permissions: {
        allowed: [
          permission('ds', 'datastore', { read: ['admin'], create: [], update: [], drop: [], execute: [] }),
          permission('Company', 'dataclass', { read: [], create: [] }),
          permission('Company.name', 'attribute', { read: [] }),
          permission('Company.raiseSalaries', 'method', { execute: [] }),
        ],
      },
    });
    const general = policy.grantsFor(['general']);
    assert.equal(general.dataClass('Company', 'read'), false, 'empty Company read: ds read (admin) decides');
    assert.equal(policy.grantsFor(['admin']).attribute('Company', 'name', 'read'), true);
    assert.equal(general.dataClass('Company', 'create'), true, 'empty everywhere: the default allows');
    assert.equal(general.execute('Company.raiseSalaries'), true);
  });

  it("4D 21's default file allows everything to everyone", () => {
    const policy = policyOf({ permissions: { allowed: [permission('ds', 'datastore', { read: [], create: [], update: [], drop: [], execute: [], promote: [] })] } });
    const guest = policy.grantsFor([]);
    assert.equal(guest.dataClass('Company', 'drop'), true);
    assert.equal(guest.attribute('Employee', 'salary', 'update'), true);
    assert.equal(guest.execute('Company.raiseSalaries'), true);
    assert.equal(policy.isOpen, false);
  });
});

describe('Policy.open and Policy.ALL', () => {
  it('Policy.open allows everything to everyone and knows no privilege', () => {
    const policy = Policy.open();
    assert.equal(policy.isOpen, true);
    assert.equal(policy.forceLogin, false);
    assert.deepEqual(policy.expand({ privileges: ['admin'], roles: ['Boss'] }), []);
    assert.deepEqual(policy.promotes('Company.raiseSalaries'), []);
    const guest = policy.grantsFor([]);
    assert.equal(guest.guest, true);
    assert.equal(guest.dataClass('Company', 'drop'), true);
    assert.equal(guest.attribute('Employee', 'salary', 'update'), true);
    assert.equal(guest.execute('ds.anything'), true);
    assert.equal(policy.grantsFor(['someone']).guest, false);
  });

  it('Policy.ALL allows every action on everything', () => {
    assert.equal(Policy.ALL.guest, false);
    assert.equal(Policy.ALL.dataClass('Anything', 'drop'), true);
    assert.equal(Policy.ALL.attribute('Anything', 'at', 'update'), true);
    assert.equal(Policy.ALL.execute('X.y'), true);
  });
});

describe('Policy.grantsFor', () => {
  const policy = policyOf({
    privileges: [{ privilege: 'Admin' }, { privilege: 'sales' }],
    forceLogin: true,
    permissions: { allowed: [permission('Company', 'dataclass', { read: ['sales'] })] },
  });

  it('returns one object per distinct privilege set, whatever the order and case', () => {
    const a = policy.grantsFor(['sales', 'Admin']);
    assert.equal(policy.grantsFor(['ADMIN', 'Sales']), a);
    assert.equal(policy.grantsFor(['admin', 'sales', 'SALES']), a);
    assert.notEqual(policy.grantsFor(['admin']), a);
    assert.equal(policy.grantsFor([]), policy.grantsFor(['guest']));
  });

  it('lists the privileges held as declared, sorted, and tells a guest', () => {
    const grants = policy.grantsFor(['sales', 'admin', 'guest']);
    assert.deepEqual(grants.privileges, ['Admin', 'sales']);
    assert.equal(grants.guest, false);
    assert.equal(policy.grantsFor([]).guest, true);
    assert.deepEqual(policy.grantsFor([]).privileges, []);
  });

  it('answers the same when asked again (memoised)', () => {
    const grants = policy.grantsFor(['sales']);
    for (let i = 0; i < 3; i++) {
      assert.equal(grants.dataClass('Company', 'read'), true);
      assert.equal(grants.attribute('Company', 'name', 'read'), true);
      assert.equal(grants.dataClass('Company', 'update'), true);
    }
    const admin = policy.grantsFor(['admin']);
    assert.equal(admin.dataClass('Company', 'read'), false);
    assert.equal(admin.dataClass('Company', 'update'), false, 'update needs read');
  });
});
