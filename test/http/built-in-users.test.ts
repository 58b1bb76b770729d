// Built-in users (auth.json "users"): the authentify, logout, changePassword and $directory calls
// a project gets without writing them, the lockout of a folded user name, the equal answer for an
// unknown name and a wrong password, and a project's own authentify winning.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { coreOf } from '../../src/datastore/datastore.js';
import { addUser, logIn, openUsersProject, type UsersProject } from '../support/users-project.js';

describe('built-in users', () => {
  let p: UsersProject;
  before(async () => {
    p = await openUsersProject();
    await addUser(p.a, 'alice', 'alice-password', ['Editor']);
    await addUser(p.a, 'Zoë Keeper', 'keeper-password', ['Keeper']);
  });
  after(() => p.close());

  it('logs in with POST /rest/$catalog/authentify and gives the session the roles of the user', async () => {
    const res = await p.a.request('/rest/$catalog/authentify', 'POST', [{ userName: 'alice', password: 'alice-password' }]);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.result, { success: true, userName: 'alice', privileges: ['edit'] });
    const cookie = String(res.headers['set-cookie']).split(';')[0];
    const made = await p.a.request('/rest/Note?$method=update', 'POST', { text: 'by alice' }, { cookie });
    assert.equal(made.status, 200, JSON.stringify(made.body));
  });

  it('finds a user by its folded name (case and accents), as the login throttle counts it', async () => {
    const cookie = await logIn(p.a, 'ZOE KEEPER', 'keeper-password');
    const info = await p.a.request('/rest/$info', 'GET', undefined, { cookie });
    assert.equal(info.body.session?.userName ?? info.body.userName, 'Zoë Keeper');
  });

  it('answers an unknown name and a wrong password alike: 401 LOGIN_FAILED, and the session stays a guest', async () => {
    const unknown = await p.a.request('/rest/$catalog/authentify', 'POST', [{ userName: 'mallory', password: 'whatever-1' }]);
    const wrong = await p.a.request('/rest/$catalog/authentify', 'POST', [{ userName: 'alice', password: 'whatever-1' }]);
    for (const res of [unknown, wrong]) {
      assert.equal(res.status, 401);
      assert.equal(res.body.__ERROR[0].errCode, 7050);
      // (no stored session's cookie: at most a guest's never stored, in lower case)
      assert.doesNotMatch(String(res.headers['set-cookie'] ?? ''), /=[0-9A-F]{32};/);
    }
    assert.equal(unknown.body.__ERROR[0].message, wrong.body.__ERROR[0].message);
  });

  it('refuses credentials of the wrong shape with 400', async () => {
    const res = await p.a.request('/rest/$catalog/authentify', 'POST', [{ userName: 'alice' }]);
    assert.equal(res.status, 400);
    assert.equal(res.body.__ERROR[0].errCode, 7021);
  });

  it('locks a folded user name after wrong passwords in a row, whether a user has it or not, with Retry-After', async () => {
    await addUser(p.a, 'bob', 'bob-password', ['Editor']);
    // (the per-name throttle lets 5 attempts a minute through: more than this lockout's 3)
    // another address each time: the per-address throttle (429 past 10 a minute) stays out of the way
    const attempt = (userName: string, password: string, n: number) =>
      p.a.app.inject({ method: 'POST', url: '/rest/$catalog/authentify', payload: [{ userName, password }], remoteAddress: `127.0.0.${n}` });
    // (auth.json here: three wrong passwords in a row, then the name is locked)
    for (let i = 0; i < 3; i++) assert.equal((await attempt('bob', 'nope-nope', 10 + i)).statusCode, 401);
    const fourth = await attempt('BOB', 'nope-nope', 20);
    assert.equal(fourth.statusCode, 429);
    assert.equal(JSON.parse(fourth.body).__ERROR[0].errCode, 7078);
    assert.ok(Number(fourth.headers['retry-after']) > 0);
    // the right password is refused too while the lock lasts
    assert.equal((await attempt('bob', 'bob-password', 21)).statusCode, 429);
    // an unknown name locks the same way: the lock says nothing of which names exist
    for (let i = 0; i < 3; i++) assert.equal((await attempt('nobody-here', 'nope-nope', 30 + i)).statusCode, 401);
    assert.equal((await attempt('nobody-here', 'nope-nope', 40)).statusCode, 429);
    // a new password set by an administrator ends the lock
    // (checked through the core: the per-name throttle, 5 attempts a minute, has had its share)
    await coreOf(p.a.ds).users?.setPassword('bob', 'bob-password-2');
    assert.equal((await coreOf(p.a.ds).users?.verify('bob', 'bob-password-2'))?.userName, 'bob');
  });

  it('changes the password of the logged-in user, given the current one', async () => {
    await addUser(p.a, 'carol', 'carol-password', ['Editor']);
    const cookie = await logIn(p.a, 'carol', 'carol-password');
    const wrong = await p.a.request('/rest/$catalog/changePassword', 'POST', [{ currentPassword: 'nope-nope', newPassword: 'carol-new-password' }], { cookie });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.__ERROR[0].errCode, 7079);
    const weak = await p.a.request('/rest/$catalog/changePassword', 'POST', [{ currentPassword: 'carol-password', newPassword: 'short' }], { cookie });
    assert.equal(weak.status, 400);
    assert.equal(weak.body.__ERROR[0].errCode, 7074);
    assert.match(weak.body.__ERROR[0].message, /at least 8/);
    const ok = await p.a.request('/rest/$catalog/changePassword', 'POST', [{ currentPassword: 'carol-password', newPassword: 'carol-new-password' }], { cookie });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    await logIn(p.a, 'carol', 'carol-new-password');
    const old = await p.a.request('/rest/$catalog/authentify', 'POST', [{ userName: 'carol', password: 'carol-password' }]);
    assert.equal(old.status, 401);
  });

  it('refuses changePassword to a guest with 401', async () => {
    const res = await p.a.request('/rest/$catalog/changePassword', 'POST', [{ currentPassword: 'x', newPassword: 'y-long-enough' }]);
    assert.equal(res.status, 401);
  });

  it('logs out with POST /rest/$catalog/logout: the old cookie is worth nothing', async () => {
    const cookie = await logIn(p.a, 'alice', 'alice-password');
    const out = await p.a.request('/rest/$catalog/logout', 'POST', [], { cookie });
    assert.equal(out.status, 200);
    const write = await p.a.request('/rest/Note?$method=update', 'POST', { text: 'after logout' }, { cookie });
    assert.equal(write.status, 401);
  });

  it("serves 4D's legacy $directory/login, currentUser and currentUserBelongsTo", async () => {
    const login = await p.a.request('/rest/$directory/login', 'POST', ['alice', 'alice-password']);
    assert.equal(login.status, 200, JSON.stringify(login.body));
    const cookie = String(login.headers['set-cookie']).split(';')[0];
    const me = await p.a.request('/rest/$directory/currentUser', 'GET', undefined, { cookie });
    assert.deepEqual(me.body.result, { ID: 'alice', userName: 'alice', fullName: 'alice' });
    const belongs = await p.a.request('/rest/$directory/currentUserBelongsTo', 'POST', ['Editor'], { cookie });
    assert.equal(belongs.body.result, true);
    const refused = await p.a.request('/rest/$directory/login', 'POST', ['alice', 'wrong-password']);
    assert.equal(refused.status, 401);
  });

  it('lists the built-in functions in the catalog, and keeps the users out of the data', async () => {
    const catalog = await p.a.request('/rest/$catalog');
    const names = (catalog.body.methods ?? []).map((m: { name: string }) => m.name);
    for (const fn of ['authentify', 'logout', 'changePassword']) assert.ok(names.includes(fn), JSON.stringify(catalog.body.methods));
    assert.ok(!catalog.body.dataClasses.some((d: { name: string }) => /user/i.test(d.name)));
  });
});

describe("a project's own authentify beside built-in users", () => {
  let p: UsersProject;
  before(async () => {
    p = await openUsersProject(undefined, {
      'package.json': JSON.stringify({ type: 'module' }),
      'classes/DataStore.ts': `import { Datastore, exposed, params, session } from 'dataset-rest';
export default class DataStore extends Datastore {
  @exposed
  @params('credentials: object')
  authentify(credentials: { code?: string }): boolean {
    if (credentials.code !== 'open sesame') return false;
    session().setPrivileges({ roles: ['Editor'], userName: 'by-code' });
    return true;
  }
}
`,
    });
    await addUser(p.a, 'alice', 'alice-password', ['Editor']);
  });
  after(() => p.close());

  it('wins: the project decides how authentify logs in, the other built-in functions stay', async () => {
    const own = await p.a.request('/rest/$catalog/authentify', 'POST', [{ code: 'open sesame' }]);
    assert.equal(own.body.result, true, JSON.stringify(own.body));
    const builtIn = await p.a.request('/rest/$catalog/authentify', 'POST', [{ userName: 'alice', password: 'alice-password' }]);
    assert.equal(builtIn.body.result, false);
    const catalog = await p.a.request('/rest/$catalog');
    assert.ok(catalog.body.methods.some((m: { name: string }) => m.name === 'changePassword'));
  });
});
