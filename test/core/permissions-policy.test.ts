// roles.json's grants (src/permissions/policy.ts): what they mean for a session, by 4D's rules
// (reference §5.4–5.6) — expansion, decisions, open and ALL, grantsFor. How a file is read and
// checked is permissions-file.test.ts; what they share, permissions-shared.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Policy, type Grants } from '../../src/permissions/policy.js';
import { policyOf, permission } from './permissions-shared.js';

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
