// roles.json (src/permissions/): how a file is read and checked — its syntax, structure, names
// and resources, every mistake refused at its line and column — and what a valid one holds.
// What its grants mean for a session is permissions-policy.test.ts; what they share,
// permissions-shared.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRolesFile } from '../../src/permissions/roles-file.js';
import { KNOWN, parse, rolesText, assertRefused, assertRefusedAt, permission } from './permissions-shared.js';

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
