// A hostile client against the login surface of issue 37 (built-in users, API tokens, one-time
// passcodes): each test states what a secure server does, so that a failing one is a finding of
// the review (docs in the review's report). Runs on both engines (openUsersProject).

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { coreOf } from '../../src/datastore/datastore.js';
import { ERRORS } from '../../src/errors/registry.js';
import { addUser, logIn, openUsersProject, type UsersProject } from '../support/users-project.js';

const DATASTORE_CLASS = `import { Datastore, exposed, params, session } from 'dataset-rest';
export default class DataStore extends Datastore {
  @exposed
  @params('seconds?: number')
  passcode(seconds?: number): string {
    return session().createOTP(seconds);
  }

  @exposed
  @params()
  whoAmI(): { userName: string; privileges: string[] } {
    return { userName: session().userName, privileges: session().getPrivileges() };
  }
}
`;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const REGISTERED = new Set(Object.values(ERRORS).map((e) => e.errCode));

describe('login surface under attack', () => {
  let p: UsersProject;
  let admin: string;
  before(async () => {
    p = await openUsersProject(undefined, { 'package.json': JSON.stringify({ type: 'module' }), 'classes/DataStore.ts': DATASTORE_CLASS });
    await addUser(p.a, 'root', 'root-password', ['Administrator']);
    await addUser(p.a, 'alice', 'alice-password', ['Editor']);
    admin = await logIn(p.a, 'root', 'root-password');
  });
  after(() => p.close());

  const call = (fn: string, args: unknown[], cookie?: string) => p.a.request(`/rest/$catalog/${fn}`, 'POST', args, cookie === undefined ? {} : { cookie });

  it('a demoted administrator loses the admin privilege in the session it has open', async () => {
    await addUser(p.a, 'ex-admin', 'ex-admin-password', ['Administrator']);
    const cookie = await logIn(p.a, 'ex-admin', 'ex-admin-password');
    assert.equal((await p.a.request('/rest/$users', 'GET', undefined, { cookie })).status, 200);
    const demoted = await p.a.request('/rest/$users/ex-admin', 'POST', { roles: ['Editor'] }, { cookie: admin });
    assert.equal(demoted.status, 200, JSON.stringify(demoted.body));
    // the ex-administrator's open session may still make users (and so make itself admin again)
    const again = await p.a.request('/rest/$users', 'POST', { userName: 'backdoor', password: 'backdoor-password', roles: ['Administrator'] }, { cookie });
    assert.notEqual(again.status, 201, 'a demoted administrator made an administrator through its open session');
  });

  it('a removed user, or one whose password an administrator reset, is logged out of its open sessions', async () => {
    await addUser(p.a, 'mallory', 'mallory-password', ['Editor']);
    const cookie = await logIn(p.a, 'mallory', 'mallory-password');
    await p.a.request('/rest/$users/mallory', 'POST', { password: 'reset-by-admin' }, { cookie: admin });
    const afterReset = await call('whoAmI', [], cookie);
    assert.equal(afterReset.body.result.userName, '', 'a password reset left the stolen session logged in');
    await p.a.request('/rest/$users/mallory', 'DELETE', undefined, { cookie: admin });
    const write = await p.a.request('/rest/Note?$method=update', 'POST', { text: 'written by a removed user' }, { cookie });
    assert.notEqual(write.status, 200, 'a removed user still writes through its open session');
  });

  it('POST /rest/$users/{name} with good roles and a weak password changes nothing', async () => {
    await addUser(p.a, 'half', 'half-password', ['Editor']);
    const res = await p.a.request('/rest/$users/half', 'POST', { roles: ['Administrator'], password: 'x' }, { cookie: admin });
    assert.equal(res.status, 400);
    assert.equal(res.body.__ERROR[0].errCode, 7074);
    const user = await p.a.request('/rest/$users/half', 'GET', undefined, { cookie: admin });
    assert.deepEqual(user.body.roles, ['Editor'], 'the roles were written though the request was refused');
  });

  it('an OPTIONS request carrying $4DSID neither uses the passcode nor ends the session it names', async () => {
    const alice = await logIn(p.a, 'alice', 'alice-password');
    const passcode = (await call('passcode', [], alice)).body.result as string;
    const preflight = await p.a.app.inject({ method: 'OPTIONS', url: `/rest/Note?$4DSID=${passcode}` });
    assert.equal(preflight.headers['set-cookie'], undefined);
    // nobody got the session, and yet...
    const who = await call('whoAmI', [], alice);
    assert.equal(who.body.result.userName, 'alice', "OPTIONS rotated the session's token: its owner is logged out and no one has the cookie");
    const resumed = await p.a.request(`/rest/Note?$4DSID=${passcode}`);
    assert.equal(resumed.status, 200, `OPTIONS used up the passcode: ${JSON.stringify(resumed.body)}`);
  });

  it("another site's <img> carrying an attacker's $4DSID does not plant the attacker's session in the victim's browser (login CSRF)", async () => {
    // the attacker's own session, and a passcode of it (a project exposes createOTP for its payment redirect, say)
    const attacker = await logIn(p.a, 'alice', 'alice-password');
    const passcode = (await call('passcode', [], attacker)).body.result as string;
    // the victim's browser loads <img src="https://server/rest/$catalog?$4DSID=…"> from evil.example
    const res = await p.a.request(`/rest/$catalog?$4DSID=${passcode}`, 'GET', undefined, {
      'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image', referer: 'https://evil.example/page',
    });
    assert.doesNotMatch(String(res.headers['set-cookie'] ?? ''), /=[0-9A-F]{32};/, "a cross-site subresource got the attacker's logged-in session cookie");
  });

  it('a passcode with a fractional lifespan works (PostgreSQL keeps expiries as bigint)', async () => {
    const alice = await logIn(p.a, 'alice', 'alice-password');
    const made = await call('passcode', [10.0001], alice);
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const resumed = await p.a.request(`/rest/Note?$4DSID=${made.body.result}`);
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
  });

  it('a token expiring in a fraction of a day is made (PostgreSQL keeps expiries as bigint)', async () => {
    const made = await p.a.request('/rest/$tokens', 'POST', { userName: 'alice', expires: 0.1234567 }, { cookie: admin });
    assert.equal(made.status, 201, JSON.stringify(made.body));
  });

  it('token names hold no control characters (they are printed by `tokens list` on an administrator\'s terminal)', async () => {
    const made = await p.a.request('/rest/$tokens', 'POST', { userName: 'alice', name: 'ci\u001b[2J\u001b[31m\nroot\tforged-line' }, { cookie: admin });
    assert.equal(made.status, 400, `made: ${JSON.stringify(made.body).slice(0, 200)}`);
  });

  it('user names hold no invisible format characters (a second "root" that looks the same)', async () => {
    for (const name of ['ro\u200Bot', 'root\u200D', '\u202Etoor', 'ro\u00ADot', 'r\u2060oot']) {
      const res = await p.a.request('/rest/$users', 'POST', { userName: name, password: 'lookalike-password', roles: ['Editor'] }, { cookie: admin });
      assert.equal(res.status, 400, `${JSON.stringify(name)} was taken: ${JSON.stringify(res.body)}`);
    }
  });

  it('wrong passwords sent at once check no more passwords than lockout.failures, and a right one among them is refused once the lock is on', async () => {
    // auth.json of openUsersProject: lockout after 3; the per-user throttle lets 5 a minute through
    await addUser(p.a, 'racer', 'racer-password', ['Editor']);
    const attempt = (password: string, n: number) => p.a.app.inject({ method: 'POST', url: '/rest/$catalog/authentify', payload: [{ userName: 'racer', password }], remoteAddress: `10.9.0.${n}` });
    const answers = await Promise.all([attempt('guess-1xx', 1), attempt('guess-2xx', 2), attempt('guess-3xx', 3), attempt('guess-4xx', 4), attempt('racer-password', 5)]);
    const statuses = answers.map((a) => a.statusCode);
    // three wrong passwords lock the name: the fourth and fifth attempts must not have been judged
    assert.notEqual(statuses[4], 200, `the right password logged in past the lock (statuses ${statuses.join(', ')})`);
  });

  it('a user with no role logs in as often as it likes: its right passwords are not counted as failures by the throttle', async () => {
    // a user without roles logs in (its session holds no privilege): the throttle never forgives it
    await addUser(p.a, 'norole', 'norole-password', []);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await p.a.app.inject({ method: 'POST', url: '/rest/$catalog/authentify', payload: [{ userName: 'norole', password: 'norole-password' }], remoteAddress: `10.8.0.${i}` });
      statuses.push(res.statusCode);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 200], 'right passwords of a user with no role count as failures');
  });

  it('a token whose expiry is past what a Date holds is refused with 400, and not stored (the listing keeps working)', async () => {
    const res = await p.a.request('/rest/$tokens', 'POST', { userName: 'alice', name: 'far future', expires: 1e10 }, { cookie: admin });
    const list = await p.a.request('/rest/$tokens', 'GET', undefined, { cookie: admin });
    assert.equal(list.status, 200, `after one such request every listing of the tokens fails: ${JSON.stringify(list.body)}`);
    assert.equal(res.status, 400, JSON.stringify(res.body));
  });

  it('every bad administration input answers a registered __ERROR with a 4xx, never a 500', async () => {
    const cases: [string, 'GET' | 'POST' | 'DELETE' | 'PATCH' | 'PUT', unknown][] = [
      ['/rest/$users', 'POST', []],
      ['/rest/$users', 'POST', { userName: 'x'.repeat(101), password: 'long-enough' }],
      ['/rest/$users', 'POST', { userName: 'nul\u0000name', password: 'long-enough' }],
      ['/rest/$users', 'POST', { userName: 'ok-name', password: 'p'.repeat(2000) }],
      ['/rest/$users', 'POST', { userName: 'ok-name', password: 'long-enough', roles: 'Nope' }],
      ['/rest/$users', 'POST', { userName: 'ok-name', password: 'long-enough', roles: [{}] }],
      ['/rest/$users', 'POST', { userName: 'ALICE', password: 'long-enough' }],
      ['/rest/$users/%ZZ', 'GET', undefined],
      ['/rest/$users/nobody', 'GET', undefined],
      ['/rest/$users/nobody', 'DELETE', undefined],
      ['/rest/$users/alice', 'POST', { password: 12 }],
      ['/rest/$users/alice', 'POST', {}],
      ['/rest/$users/alice', 'PUT', {}],
      ['/rest/$tokens', 'POST', { userName: 'alice', privileges: ['admin'] }],
      ['/rest/$tokens', 'POST', { userName: 'alice', expires: 'yesterday' }],
      ['/rest/$tokens', 'POST', { userName: 'alice', expires: -1 }],
      ['/rest/$tokens', 'POST', { userName: 'alice', expires: 1e300 }],
      ['/rest/$tokens', 'POST', { userName: 'alice', name: '' }],
      ['/rest/$tokens', 'POST', { userName: ['alice'] }],
      ['/rest/$tokens/not-a-token-id', 'DELETE', undefined],
      ['/rest/$tokens/x', 'GET', undefined],
      ['/rest/$roles', 'POST', {}],
    ];
    const bad: string[] = [];
    for (const [url, method, body] of cases) {
      const res = await p.a.request(url, method, body, { cookie: admin });
      const e = res.body?.__ERROR?.[0];
      const ok = res.status >= 400 && res.status < 500 && e && typeof e.message === 'string' && REGISTERED.has(e.errCode);
      if (!ok) bad.push(`${method} ${url} ${JSON.stringify(body)?.slice(0, 60)} → ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`);
    }
    assert.deepEqual(bad, []);
  });
});

describe('a project with built-in users and no roles.json', () => {
  let p: UsersProject;
  before(async () => {
    p = await openUsersProject();
    // the same project without roles.json: everything open, users on
    rmSync(join(p.dir, 'roles.json'));
  });
  after(() => p.close());

  it('does not let an anonymous client make users, reset passwords or mint tokens', async () => {
    // (second() opens the folder again, on the same database)
    const s = await p.second();
    await coreOf(s.ds).users?.add('owner', 'owner-password', []);
    const list = await s.request('/rest/$users');
    assert.notEqual(list.status, 200, `an anonymous client lists the users: ${JSON.stringify(list.body).slice(0, 120)}`);
    const reset = await s.request('/rest/$users/owner', 'POST', { password: 'taken-over!' });
    assert.notEqual(reset.status, 200, 'an anonymous client reset the password of a user');
    const token = await s.request('/rest/$tokens', 'POST', { userName: 'owner' });
    assert.notEqual(token.status, 201, 'an anonymous client minted a token for a user');
  });
});

describe('a project without auth.json (no built-in users, no tokens)', () => {
  let p: UsersProject;
  before(async () => {
    p = await openUsersProject();
  });
  after(() => p.close());

  it('ignores an Authorization: Bearer header meant for something else (a gateway\'s JWT), as it did before tokens', async () => {
    // openUsersProject(undefined) writes the default auth.json; a project with none is made here
    rmSync(join(p.dir, 'auth.json'));
    const s = await p.second();
    assert.equal(coreOf(s.ds).tokens, undefined);
    const res = await s.request('/rest/Note', 'GET', undefined, bearer('eyJhbGciOiJIUzI1NiJ9.e30.x'));
    assert.equal(res.status, 200, `every request with a gateway's Bearer header is now refused: ${JSON.stringify(res.body).slice(0, 200)}`);
  });
});
