// 4D's legacy login, /rest/$directory (issue 14): login by body or by 4D's headers, the session's
// length, logout, currentUser and currentUserBelongsTo through the demo's DataStore hooks, the
// refusals (wrong password, bad bodies, methods), force-login mode, and the failed-login count.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { DEMO_DIR, openDemo, tempDir, type DemoFixture } from '../support/helpers.js';

type Answer = { status: number; body: any; headers: Record<string, unknown> };

/** A client keeping its session cookie, as wakanda-client's cookie jar does. */
function client(app: FastifyInstance) {
  let cookie: string | undefined;
  return async (url: string, o: { method?: InjectOptions['method']; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> => {
    const res = await app.inject({ method: o.method ?? 'GET', url, headers: { ...(cookie ? { cookie } : {}), ...o.headers }, ...(o.body === undefined ? {} : { payload: o.body as object }) });
    const set = ([] as string[]).concat((res.headers['set-cookie'] as string | string[] | undefined) ?? []).find((c) => c.startsWith('4DSID_'));
    if (set) cookie = set.split(';')[0];
    let body: unknown = res.body;
    try {
      body = JSON.parse(res.body);
    } catch {
      // not JSON
    }
    return { status: res.statusCode, body, headers: res.headers };
  };
}

const errCode = (res: Answer): number | undefined => res.body?.__ERROR?.[0]?.errCode;

describe('$directory: 4D\'s legacy login through the DataStore class\'s hooks', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo({ roles: join(DEMO_DIR, 'roles.json') });
  });
  after(() => demo.close());

  it('logs in with the body [user, password, seconds]: {"result": true}, the user\'s roles, and the session as long as asked (at least an hour)', async () => {
    const c = client(demo.app);
    const res = await c('/rest/$directory/login', { method: 'POST', body: ['alice', 'alice123', 7200] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { result: true });
    const info = (await c('/rest/$info')).body.session;
    assert.equal(info.userName, 'alice');
    assert.deepEqual(info.privileges, ['edit']);
    assert.equal(info.lifeTime, 7200);
    const short = client(demo.app);
    await short('/rest/$directory/login', { method: 'POST', body: ['alice', 'alice123', 30] });
    assert.equal((await short('/rest/$info')).body.session.lifeTime, 3600);
  });

  it('logs in with 4D\'s headers username-4D, password-4D and session-4D-length (minutes)', async () => {
    const c = client(demo.app);
    const res = await c('/rest/$directory/login', { method: 'POST', headers: { 'username-4D': 'bob', 'password-4D': 'bob123', 'session-4D-length': '120' } });
    assert.deepEqual(res.body, { result: true });
    const info = (await c('/rest/$info')).body.session;
    assert.equal(info.userName, 'bob');
    assert.equal(info.lifeTime, 7200);
  });

  it('answers currentUser and currentUserBelongsTo from the demo\'s users and roles; a guest is null and belongs to nothing', async () => {
    const c = client(demo.app);
    assert.deepEqual((await c('/rest/$directory/currentUser')).body, { result: null });
    assert.deepEqual((await c('/rest/$directory/currentUserBelongsTo', { method: 'POST', body: ['Editor'] })).body, { result: false });
    await c('/rest/$directory/login', { method: 'POST', body: ['alice', 'alice123'] });
    assert.deepEqual((await c('/rest/$directory/currentUser')).body, { result: { ID: 1, userName: 'alice', fullName: 'Alice Editor' } });
    assert.deepEqual((await c('/rest/$directory/currentUserBelongsTo', { method: 'POST', body: ['Editor'] })).body, { result: true });
    assert.deepEqual((await c('/rest/$directory/currentUserBelongsTo', { method: 'POST', body: ['editor'] })).body, { result: true });
    assert.deepEqual((await c('/rest/$directory/currentUserBelongsTo', { method: 'POST', body: ['Payroll'] })).body, { result: false });
    // a privilege counts as a group too
    assert.deepEqual((await c('/rest/$directory/currentUserBelongsTo', { method: 'POST', body: ['edit'] })).body, { result: true });
  });

  it("keeps the demo's test helpers (spin, pause, whoCalls, renameSlowly) from every user of the default project: a guest, alice (Editor), bob (Payroll) and admin are refused, and nothing runs", async () => {
    const users = [undefined, ['alice', 'alice123'], ['bob', 'bob123'], ['admin', 'admin123']] as const;
    for (const user of users) {
      const c = client(demo.app);
      if (user) assert.equal((await c('/rest/$directory/login', { method: 'POST', body: [...user] })).status, 200);
      for (const [fn, body] of [['spin', [60_000]], ['pause', [60_000]], ['whoCalls', [60_000]], ['renameSlowly', [1, 'renamed by a stranger', 10_000]]] as const) {
        const started = Date.now();
        const res = await c(`/rest/$catalog/${fn}`, { method: 'POST', body: [...body] });
        assert.ok(res.status === 401 || res.status === 403, `${user?.[0] ?? 'guest'} ${fn}: ${res.status}`);
        assert.ok(Date.now() - started < 5000, `${fn} ran`);
      }
    }
    assert.notEqual((await demo.request('/rest/Company(1)?$attributes=name')).body.name, 'renamed by a stranger');
  });

  it('refuses a wrong password with 401, {"result": false} beside the __ERROR (7050), and leaves the session a guest', async () => {
    const c = client(demo.app);
    const res = await c('/rest/$directory/login', { method: 'POST', body: ['alice', 'wrong'] });
    assert.equal(res.status, 401);
    assert.equal(res.body.result, false);
    assert.equal(errCode(res), 7050);
    assert.match(res.body.__ERROR[0].message, /'alice'/);
    assert.equal((await c('/rest/$info')).body.session.userName, '');
    const unknown = await c('/rest/$directory/login', { method: 'POST', body: ['nobody', 'x'] });
    assert.equal(unknown.status, 401);
  });

  it('logs out with GET: {"result": true}, a new cookie, and the old one is a guest\'s', async () => {
    const c = client(demo.app);
    const login = await c('/rest/$directory/login', { method: 'POST', body: ['admin', 'admin123'] });
    const cookie = String(login.headers['set-cookie']).split(';')[0];
    const out = await c('/rest/$directory/logout');
    assert.deepEqual(out.body, { result: true });
    assert.ok(out.headers['set-cookie'], 'a logout sets a new cookie');
    assert.deepEqual((await c('/rest/$directory/currentUser')).body, { result: null });
    const old = await demo.app.inject({ url: '/rest/$info', headers: { cookie } });
    assert.equal(JSON.parse(old.body).session.userName, '');
  });

  it('keeps the session\'s length within an hour and a week: a longer one is refused, a fraction of a second rounded', async () => {
    const c = client(demo.app);
    for (const body of [['alice', 'alice123', 1e308], ['alice', 'alice123', 1e13], ['alice', 'alice123', 7 * 24 * 3600 + 1]]) {
      const res = await c('/rest/$directory/login', { method: 'POST', body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.body.__ERROR[0].message, /at most 604800 \(a week\)/);
    }
    const long = await c('/rest/$directory/login', { method: 'POST', headers: { 'username-4D': 'alice', 'password-4D': 'alice123', 'session-4D-length': '99999999999999999999' } });
    assert.equal(long.status, 400);
    assert.deepEqual((await c('/rest/$directory/login', { method: 'POST', body: ['alice', 'alice123', 7200.0001] })).body, { result: true });
    assert.equal((await c('/rest/$info')).body.session.lifeTime, 7200);
    const week = client(demo.app);
    await week('/rest/$directory/login', { method: 'POST', headers: { 'username-4D': 'alice', 'password-4D': 'alice123', 'session-4D-length': '60.0000001' } });
    assert.equal((await week('/rest/$info')).body.session.lifeTime, 3600);
  });

  it('reads the headers\' user name and password as UTF-8, as the body\'s', async () => {
    const { hash } = await import('@node-rs/argon2');
    const zoe = demo.ds.User.new();
    zoe.set('userName', 'Zoë');
    zoe.set('passwordHash', await hash('café'));
    zoe.set('roles', 'Editor');
    await zoe.save();
    const c = client(demo.app);
    // Node reads header bytes as Latin-1: what a client sends as UTF-8 arrives so
    const latin1 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
    const res = await c('/rest/$directory/login', { method: 'POST', headers: { 'username-4D': latin1('Zoë'), 'password-4D': latin1('café') } });
    assert.deepEqual(res.body, { result: true });
    assert.equal((await c('/rest/$info')).body.session.userName, 'Zoë');
  });

  it('does not count a privilege roles.json promotes the hook to: an Editor does not belong to accounts', async () => {
    const c = client(demo.app);
    await c('/rest/$directory/login', { method: 'POST', body: ['alice', 'alice123'] });
    assert.deepEqual((await c('/rest/$directory/currentUserBelongsTo', { method: 'POST', body: ['accounts'] })).body, { result: false });
  });

  it('refuses bad requests clearly: a body that is not [user, password], a bad length, a hashed password, a group that is not a string, the wrong method, an unknown resource', async () => {
    const c = client(demo.app);
    const cases: [string, { method?: InjectOptions['method']; body?: unknown; headers?: Record<string, string> }, number, number, RegExp][] = [
      ['/rest/$directory/login', { method: 'POST', body: { user: 'alice' } }, 400, 7014, /JSON array \[userName, password\]/],
      ['/rest/$directory/login', { method: 'POST', body: ['alice'] }, 400, 7014, /JSON array/],
      ['/rest/$directory/login', { method: 'POST', body: ['', 'x'] }, 400, 7014, /user name \(#1\)/],
      ['/rest/$directory/login', { method: 'POST', body: ['alice', 5] }, 400, 7014, /password \(#2\)/],
      ['/rest/$directory/login', { method: 'POST', body: ['alice', 'alice123', -5] }, 400, 7014, /seconds above 0/],
      ['/rest/$directory/login', { method: 'POST' }, 400, 7014, /username-4D/],
      ['/rest/$directory/login', { method: 'POST', headers: { 'username-4D': 'alice', 'password-4D': 'alice123', 'session-4D-length': 'soon' } }, 400, 7014, /session-4D-length/],
      ['/rest/$directory/login', { method: 'POST', headers: { 'username-4D': 'alice', 'hashed-password-4D': 'abc' } }, 400, 7014, /hashed-password-4D/],
      ['/rest/$directory/login', { method: 'GET' }, 405, 7010, /use POST/],
      ['/rest/$directory/currentUserBelongsTo', { method: 'POST', body: [5] }, 400, 7014, /one group name/],
      ['/rest/$directory/currentUserBelongsTo', { method: 'GET' }, 405, 7010, /POST/],
      ['/rest/$directory/whoami', {}, 404, 7001, /\$directory has login, logout, currentUser, currentUserBelongsTo/],
      ['/rest/$directory/login?$top=1', { method: 'POST', body: ['alice', 'alice123'] }, 200, 0, /./],
    ];
    for (const [url, o, status, code, message] of cases) {
      const res = await c(url, o);
      assert.equal(res.status, status, `${url} ${JSON.stringify(o)}: ${JSON.stringify(res.body)}`);
      if (code !== 0) {
        assert.equal(errCode(res), code, url);
        assert.match(res.body.__ERROR[0].message, message, url);
      }
    }
  });

  it('counts failed logins with authentify\'s: past 5 a minute for a name, 429 with Retry-After', async () => {
    const c = client(demo.app);
    for (let i = 0; i < 5; i++) assert.equal((await c('/rest/$directory/login', { method: 'POST', body: ['bob', `wrong${i}`] })).status, 401);
    const res = await c('/rest/$directory/login', { method: 'POST', body: ['bob', 'bob123'] });
    assert.equal(res.status, 429, JSON.stringify(res.body));
    assert.ok(res.headers['retry-after']);
  });
});

describe('$directory and roles.json', () => {
  it('refuses a roles.json that gives the hooks an execute list (they are always callable: only promote applies)', async () => {
    const tmp = tempDir();
    try {
      const roles = JSON.parse(readFileSync(join(DEMO_DIR, 'roles.json'), 'utf8'));
      roles.permissions.allowed.push({ applyTo: 'ds.directoryLogin', type: 'method', execute: ['admin'] });
      writeFileSync(join(tmp.dir, 'roles.json'), JSON.stringify(roles, null, 2));
      await assert.rejects(openDemo({ roles: join(tmp.dir, 'roles.json') }), /'execute' does not apply to ds\.directoryLogin: it is always callable/);
    } finally {
      tmp.remove();
    }
  });
});

describe('$directory in force-login mode', () => {
  let demo: DemoFixture;
  let tmp: { dir: string; remove(): void };
  before(async () => {
    tmp = tempDir();
    const roles = JSON.parse(readFileSync(join(DEMO_DIR, 'roles.json'), 'utf8'));
    writeFileSync(join(tmp.dir, 'roles.json'), JSON.stringify({ ...roles, forceLogin: true }));
    demo = await openDemo({ roles: join(tmp.dir, 'roles.json') });
  });
  after(async () => {
    await demo.close();
    tmp.remove();
  });

  it('lets a guest log in through $directory/login and ask who it is; then the rest opens', async () => {
    const c = client(demo.app);
    const refused = await c('/rest/$info');
    assert.equal(refused.status, 401);
    assert.equal(errCode(refused), 7043);
    assert.deepEqual((await c('/rest/$directory/currentUser')).body, { result: null });
    assert.deepEqual((await c('/rest/$directory/login', { method: 'POST', body: ['alice', 'alice123'] })).body, { result: true });
    assert.equal((await c('/rest/$info')).status, 200);
  });
});
