// API tokens of built-in users: Authorization: Bearer acts as the token's user with the token's
// privileges, no cookie; made by an administrator over REST (and by the command), listed without
// secrets, revoked at once on every instance; every wrong token answers 401 TOKEN_INVALID.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { coreOf } from '../../src/datastore/datastore.js';
import { addUser, logIn, openUsersProject, type UsersProject, type UsersServer } from '../support/users-project.js';

describe('API tokens', () => {
  let p: UsersProject;
  let admin: string;
  before(async () => {
    p = await openUsersProject();
    await addUser(p.a, 'root', 'root-password', ['Administrator']);
    await addUser(p.a, 'kate', 'kate-password', ['Keeper']);
    await addUser(p.a, 'ed', 'ed-password', ['Editor']);
    admin = await logIn(p.a, 'root', 'root-password');
    const note = p.a.ds.Note.new();
    note.set('text', 'hello');
    note.set('secret', 'hidden');
    await note.save();
  });
  after(() => p.close());

  const create = (body: unknown, cookie = admin) => p.a.request('/rest/$tokens', 'POST', body, { cookie });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it('acts as its user with the privileges chosen at creation, with no cookie set', async () => {
    const made = await create({ userName: 'kate', name: 'sync job', privileges: ['edit'] });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.match(made.body.token, /^dsr_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(made.body.privileges, ['edit']);
    const read = await p.a.request('/rest/Note', 'GET', undefined, bearer(made.body.token));
    assert.equal(read.status, 200);
    assert.equal(read.headers['set-cookie'], undefined);
    // kate may read Note.secret; this token carries edit only
    assert.equal(read.body.__ENTITIES[0].secret, undefined);
    const write = await p.a.request('/rest/Note?$method=update', 'POST', { text: 'by token' }, bearer(made.body.token));
    assert.equal(write.status, 200, JSON.stringify(write.body));
    const info = await p.a.request('/rest/$info', 'GET', undefined, bearer(made.body.token));
    assert.equal(info.status, 200);
  });

  it('carries all its user holds when no privileges are named, and never more than the user holds now', async () => {
    const made = await create({ userName: 'kate' });
    assert.deepEqual([...made.body.privileges].sort(), ['edit', 'secrets']);
    const read = await p.a.request('/rest/Note', 'GET', undefined, bearer(made.body.token));
    assert.equal(read.body.__ENTITIES[0].secret, 'hidden');
    await coreOf(p.a.ds).users?.setRoles('kate', ['Editor']);
    const after = await p.a.request('/rest/Note', 'GET', undefined, bearer(made.body.token));
    assert.equal(after.body.__ENTITIES[0].secret, undefined);
    await coreOf(p.a.ds).users?.setRoles('kate', ['Keeper']);
  });

  it('refuses a token asking for a privilege its user does not hold, an expiry in the past, an unknown user', async () => {
    const more = await create({ userName: 'ed', privileges: ['secrets'] });
    assert.equal(more.status, 400);
    assert.equal(more.body.__ERROR[0].errCode, 7082);
    assert.match(more.body.__ERROR[0].message, /does not hold 'secrets'/);
    const past = await create({ userName: 'ed', expires: '2001-01-01' });
    assert.equal(past.body.__ERROR[0].errCode, 7082);
    const nobody = await create({ userName: 'nobody' });
    assert.equal(nobody.status, 404);
    assert.equal(nobody.body.__ERROR[0].errCode, 7072);
    const typo = await create({ user: 'ed' });
    assert.equal(typo.status, 400);
    assert.equal(typo.body.__ERROR[0].errCode, 7014);
  });

  it('answers 401 TOKEN_INVALID to a token of the wrong shape, an unknown one, whatever cookie comes with it', async () => {
    for (const token of ['nope', 'dsr_short', `dsr_${'A'.repeat(43)}`]) {
      const res = await p.a.request('/rest/Note', 'GET', undefined, { ...bearer(token), cookie: admin });
      assert.equal(res.status, 401, token);
      assert.equal(res.body.__ERROR[0].errCode, 7075);
    }
  });

  it('expires: a token past its expiry answers 401', async () => {
    const made = await create({ userName: 'ed', expires: new Date(Date.now() + 1500).toISOString() });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    assert.equal((await p.a.request('/rest/Note', 'GET', undefined, bearer(made.body.token))).status, 200);
    await new Promise((r) => setTimeout(r, 1600));
    const late = await p.a.request('/rest/Note', 'GET', undefined, bearer(made.body.token));
    assert.equal(late.status, 401);
    assert.match(late.body.__ERROR[0].message, /expired/);
  });

  it('is listed to an administrator without its secret, with its last use, and revoked at once on every instance', async () => {
    const made = await create({ userName: 'ed', name: 'ci' });
    const b: UsersServer = await p.second();
    const first = await b.request('/rest/Note', 'GET', undefined, bearer(made.body.token));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const list = await p.a.request('/rest/$tokens?user=ed', 'GET', undefined, { cookie: admin });
    assert.equal(list.status, 200);
    const listed = list.body.tokens.find((t: { id: string }) => t.id === made.body.id);
    assert.equal(listed.name, 'ci');
    assert.equal(listed.token, undefined);
    assert.ok(listed.lastUsed !== null);
    assert.ok(!JSON.stringify(list.body).includes(made.body.token));
    const revoked = await p.a.request(`/rest/$tokens/${made.body.id}`, 'DELETE', undefined, { cookie: admin });
    assert.equal(revoked.status, 200);
    assert.equal((await b.request('/rest/Note', 'GET', undefined, bearer(made.body.token))).status, 401);
    assert.equal((await p.a.request(`/rest/$tokens/${made.body.id}`, 'DELETE', undefined, { cookie: admin })).status, 404);
  });

  it('goes with its user: a removed user\'s tokens answer 401', async () => {
    await addUser(p.a, 'temp', 'temp-password', ['Editor']);
    const made = await create({ userName: 'temp' });
    assert.equal((await p.a.request('/rest/$users/temp', 'DELETE', undefined, { cookie: admin })).status, 200);
    assert.equal((await p.a.request('/rest/Note', 'GET', undefined, bearer(made.body.token))).status, 401);
  });

  it('keeps entity sets across the requests of one token', async () => {
    const made = await create({ userName: 'ed' });
    const set = await p.a.request('/rest/Note?$method=entityset', 'GET', undefined, bearer(made.body.token));
    assert.equal(set.status, 200, JSON.stringify(set.body));
    const again = await p.a.request(`/rest/Note/$entityset/${set.body.__ENTITYSET.split('/').pop()}`, 'GET', undefined, bearer(made.body.token));
    assert.equal(again.status, 200, JSON.stringify(again.body));
  });

  it('lets only an administrator manage tokens: 401 for a guest, 403 for another user', async () => {
    const ed = await logIn(p.a, 'ed', 'ed-password');
    assert.equal((await p.a.request('/rest/$tokens')).status, 401);
    const refused = await p.a.request('/rest/$tokens', 'GET', undefined, { cookie: ed });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.__ERROR[0].errCode, 7083);
    assert.equal((await create({ userName: 'ed' }, ed)).status, 403);
  });
});

describe('users over REST (an administrator)', () => {
  let p: UsersProject;
  let admin: string;
  before(async () => {
    p = await openUsersProject();
    await addUser(p.a, 'root', 'root-password', ['Administrator']);
    admin = await logIn(p.a, 'root', 'root-password');
  });
  after(() => p.close());

  it('adds, lists, changes and removes users, refusing every mistake with a registered code', async () => {
    const h = { cookie: admin };
    const added = await p.a.request('/rest/$users', 'POST', { userName: 'dan', password: 'dan-password', roles: ['editor'] }, h);
    assert.equal(added.status, 201, JSON.stringify(added.body));
    assert.deepEqual(added.body.roles, ['Editor']);
    assert.equal(added.body.hash, undefined);
    const twice = await p.a.request('/rest/$users', 'POST', { userName: 'DAN', password: 'dan-password' }, h);
    assert.equal(twice.status, 409);
    assert.equal(twice.body.__ERROR[0].errCode, 7073);
    const weak = await p.a.request('/rest/$users', 'POST', { userName: 'eve', password: '' }, h);
    assert.equal(weak.body.__ERROR[0].errCode, 7074);
    const badRole = await p.a.request('/rest/$users', 'POST', { userName: 'eve', password: 'eve-password', roles: ['Wizard'] }, h);
    assert.equal(badRole.status, 400);
    assert.equal(badRole.body.__ERROR[0].errCode, 7080);
    assert.match(badRole.body.__ERROR[0].message, /Editor/);
    const badName = await p.a.request('/rest/$users', 'POST', { userName: ' eve', password: 'eve-password' }, h);
    assert.equal(badName.body.__ERROR[0].errCode, 7081);
    // nothing half-made: eve does not exist
    assert.equal((await p.a.request('/rest/$users/eve', 'GET', undefined, h)).status, 404);
    const list = await p.a.request('/rest/$users', 'GET', undefined, h);
    assert.deepEqual(list.body.users.map((u: { userName: string }) => u.userName).sort(), ['dan', 'root']);
    const reset = await p.a.request('/rest/$users/dan', 'POST', { password: 'dan-new-password' }, h);
    assert.equal(reset.status, 200, JSON.stringify(reset.body));
    await logIn(p.a, 'dan', 'dan-new-password');
    const roleChange = await p.a.request('/rest/$users/dan', 'POST', { roles: ['Keeper'], password: 'x' }, h);
    assert.equal(roleChange.body.__ERROR[0].errCode, 7074);
    assert.equal((await p.a.request('/rest/$users/nobody', 'DELETE', undefined, h)).status, 404);
    assert.equal((await p.a.request('/rest/$users/dan', 'DELETE', undefined, h)).status, 200);
    assert.equal((await p.a.request('/rest/$users', 'PUT', {}, h)).status, 405);
  });

  it("describes $users, $tokens and $roles in an administrator's OpenAPI document only, with the Bearer scheme", async () => {
    const mine = await p.a.request('/rest/$openapi', 'GET', undefined, { cookie: admin });
    const result = await new Validator().validate(mine.body as never);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
    for (const path of ['/rest/$users', '/rest/$users/{name}', '/rest/$tokens', '/rest/$tokens/{id}', '/rest/$roles']) assert.ok(mine.body.paths[path], path);
    assert.equal(mine.body.components.securitySchemes.token.scheme, 'bearer');
    assert.ok(mine.body.paths['/rest/$catalog/changePassword']);
    const guest = await p.a.request('/rest/$openapi');
    assert.equal(guest.body.paths['/rest/$users'], undefined);
  });

  it('reads roles.json as a matrix: who may do what on which dataclass, attribute and function', async () => {
    const res = await p.a.request('/rest/$roles', 'GET', undefined, { cookie: admin });
    assert.equal(res.status, 200);
    const row = (resource: string) => res.body.rows.find((r: { resource: string }) => r.resource === resource);
    assert.ok(row('Note').allowed.read.includes('guest'));
    assert.ok(!row('Note').allowed.create.includes('guest'));
    assert.ok(row('Note').allowed.create.includes('role:Editor'));
    assert.ok(!row('Note.secret').allowed.read.includes('role:Editor'));
    assert.ok(row('Note.secret').allowed.read.includes('role:Keeper'));
    assert.ok(row('ds.authentify').allowed.execute.includes('guest'));
  });
});

describe('without built-in users', () => {
  let p: UsersProject;
  before(async () => {
    p = await openUsersProject({});
  });
  after(() => p.close());

  it('refuses $users to a guest, and leaves an Authorization: Bearer header to whoever sent it (a gateway)', async () => {
    const users = await p.a.request('/rest/$users');
    // (a guest is no administrator: refused before it learns anything)
    assert.equal(users.status, 401);
    const token = await p.a.request('/rest/Note', 'GET', undefined, { authorization: `Bearer dsr_${'x'.repeat(43)}` });
    assert.equal(token.status, 200);
    const catalog = await p.a.request('/rest/$catalog');
    assert.ok(!(catalog.body.methods ?? []).some((m: { name: string }) => m.name === 'changePassword'));
  });
});
