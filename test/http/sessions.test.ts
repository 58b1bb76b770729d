// HTTP scenarios for web sessions and the HTTP guards (issue 13): the 4DSID_ cookie, logging in
// and out with the demo's users, what the demo's roles.json allows, expiry on an injectable clock,
// two server instances sharing a session, $info, quotas and failed-login throttling, Host and
// Origin checks, CORS and the security headers.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { coreOf } from '../../src/datastore/datastore.js';
import { sessionInternals } from '../../src/datastore/sessions/session.js';
import { SESSION_TABLE } from '../../src/storage/system-tables.js';
import { buildServer } from '../../src/http/server.js';
import { cookieValue } from '../../src/rest/plugin.js';
import { DEMO_DIR, openDemo, twoInstances, type DemoFixture, type Instance } from '../support/helpers.js';

type Json = Record<string, any>;
type Answer = { status: number; body: any; headers: Record<string, unknown> };

const ROLES = join(DEMO_DIR, 'roles.json');
const COOKIE = '4DSID_Demo';
const PASSWORDS: Record<string, string> = { alice: 'alice123', bob: 'bob123', admin: 'admin123' };

/** One request through inject: `cookie` is sent as the Cookie header, a body as JSON. */
async function call(app: FastifyInstance, url: string, o: { method?: InjectOptions['method']; body?: unknown; cookie?: string; headers?: Record<string, string>; remoteAddress?: string } = {}): Promise<Answer> {
  const headers = { ...(o.cookie ? { cookie: o.cookie } : {}), ...o.headers };
  const res = await app.inject({ method: o.method ?? 'GET', url, headers, remoteAddress: o.remoteAddress, ...(o.body === undefined ? {} : { payload: o.body as object }) });
  let body: unknown = res.body;
  try {
    body = JSON.parse(res.body);
  } catch {
    // not JSON
  }
  return { status: res.statusCode, body, headers: res.headers };
}

/** The session cookie an answer sets, as "4DSID_Demo=TOKEN" (what goes back in a Cookie header), or undefined. */
function cookieOf(res: Answer): string | undefined {
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw.map(String) : [String(raw)];
  return lines.find((l) => l.startsWith(`${COOKIE}=`))?.split(';')[0];
}

function setCookieLine(res: Answer): string {
  const raw = res.headers['set-cookie'];
  return String(Array.isArray(raw) ? raw[0] : raw);
}

function errCode(res: Answer): number | undefined {
  return res.body?.__ERROR?.[0]?.errCode;
}

/** Logs `user` in (with the cookie given, if any); resolves to the cookie the session now has. */
async function login(app: FastifyInstance, user: string, cookie?: string): Promise<string> {
  const res = await call(app, '/rest/$catalog/authentify', { method: 'POST', body: [{ userName: user, password: PASSWORDS[user] }], cookie });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.result.success, true);
  const next = cookieOf(res);
  assert.ok(next, 'a login sets a cookie');
  return next;
}

async function info(app: FastifyInstance, cookie?: string): Promise<Json> {
  const res = await call(app, '/rest/$info', { cookie });
  assert.equal(res.status, 200);
  return res.body;
}

// the demo with its roles.json, shared by the suites that do not move a clock or need options of the datastore
let demo: DemoFixture;
before(async () => {
  demo = await openDemo({ roles: ROLES });
});
after(() => demo.close());

describe('sessions: the 4DSID_ cookie, login and logout', () => {
  it('gives a request without a cookie a guest session in a 4DSID_<project> cookie: 32 hex digits, Path=/, HttpOnly, SameSite=Lax, not Secure over HTTP', async () => {
    const res = await call(demo.app, '/rest/$info');
    // (lower case: a guest that keeps nothing is not stored; a stored session's token is upper case)
    assert.match(setCookieLine(res), /^4DSID_Demo=[0-9a-f]{32}; Path=\/; HttpOnly; SameSite=Lax$/);
    assert.equal(res.body.session.userName, '');
    assert.deepEqual(res.body.session.privileges, []);
  });

  it('marks the cookie Secure with secureCookies, or behind a trusted proxy that says https', async () => {
    const secure = await demo.withServer({ secureCookies: true });
    const proxied = await demo.withServer({ trustProxy: true });
    try {
      assert.match(setCookieLine(await secure.request('/rest/$info')), /; Secure/);
      assert.match(setCookieLine(await proxied.request('/rest/$info', 'GET', undefined, { 'x-forwarded-proto': 'https' })), /; Secure/);
      // without trustProxy the header is not believed
      assert.doesNotMatch(setCookieLine(await demo.request('/rest/$info', 'GET', undefined, { 'x-forwarded-proto': 'https' })), /Secure/);
    } finally {
      await secure.close();
      await proxied.close();
    }
  });

  it('behind a trusted proxy, takes the client address the proxy saw (the last X-Forwarded-For entry), never one the client wrote before it', async () => {
    const proxied = await demo.withServer({ trustProxy: true, requestsPerMinute: 2 });
    try {
      // a client writing a new address each time, which the proxy appends the one it saw to
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await proxied.request('/rest/$catalog', 'GET', undefined, { 'x-forwarded-for': `10.0.0.${i}, 192.0.2.7` })).status);
      assert.deepEqual(statuses, [200, 200, 429, 429]);
      // another address the proxy saw is another client
      assert.equal((await proxied.request('/rest/$catalog', 'GET', undefined, { 'x-forwarded-for': '192.0.2.8' })).status, 200);
    } finally {
      await proxied.close();
    }
  });

  it('stores no guest that keeps nothing: its cookie sent back names the same guest (its id), with no cookie set again and nothing stored', async () => {
    const sessions = async () => Number((await coreOf(demo.ds).storage.get(`SELECT COUNT(*) AS n FROM "${SESSION_TABLE}"`))?.n);
    const before = await sessions();
    const first = await call(demo.app, '/rest/$info');
    const again = await call(demo.app, '/rest/$info', { cookie: cookieOf(first) });
    assert.equal(cookieOf(again), undefined);
    assert.equal(again.body.session.sessionID, (await call(demo.app, '/rest/$info', { cookie: cookieOf(first) })).body.session.sessionID);
    assert.equal(await sessions(), before);
    // a client without a jar: a new guest each time
    assert.notEqual((await call(demo.app, '/rest/$info')).body.session.sessionID, first.body.session.sessionID);
  });

  it('stores a guest that sets its own idle timeout, and keeps it', async () => {
    const store = coreOf(demo.ds).sessions;
    const guest = store.guest();
    guest.idleTimeout = 120;
    await store.save(guest);
    assert.equal(sessionInternals.stored(guest), true);
    assert.equal((await store.open(sessionInternals.token(guest))).idleTimeout, 120);
  });

  it("knows the cookie of a guest never stored by its lower-case token, without reading the database; a stored guest's token is upper case", async () => {
    const storage = coreOf(demo.ds).sessions.storage;
    const original = { get: storage.get, all: storage.all, column: storage.column };
    let reads = 0;
    for (const name of ['get', 'all', 'column'] as const) {
      storage[name] = ((...args: [string, unknown[]?]) => {
        if (/session/i.test(args[0])) reads++;
        return (original[name] as (...a: unknown[]) => unknown).apply(storage, args);
      }) as never;
    }
    try {
      const guest = cookieOf(await call(demo.app, '/rest/Company?$top=1'));
      assert.match(String(guest), /^4DSID_Demo=[0-9a-f]{32}$/);
      reads = 0;
      const again = await call(demo.app, '/rest/Company?$top=1', { cookie: guest });
      assert.equal(again.status, 200);
      assert.equal(reads, 0, 'no session was looked up');
      assert.equal(cookieOf(again), undefined, 'the same guest: its cookie stays');
      // (the spy sees a lookup: an upper-case token that names nothing is looked up)
      await call(demo.app, '/rest/Company?$top=1', { cookie: String(guest).toUpperCase().replace('4DSID_DEMO', COOKIE) });
      assert.ok(reads > 0, 'an upper-case token is looked up');
      // a guest that keeps something (an entity set) is stored, under an upper-case token, and found again
      const kept = await call(demo.app, '/rest/Company?$method=entityset&$top=2', { cookie: guest });
      assert.ok(kept.body.__ENTITYSET, JSON.stringify(kept.body));
      assert.match(String(cookieOf(kept)), /^4DSID_Demo=[0-9A-F]{32}$/);
      assert.equal(String(cookieOf(kept)).toLowerCase(), String(guest).toLowerCase(), 'the same token, in its stored form');
      const back = await call(demo.app, '/rest/$info', { cookie: cookieOf(kept) });
      assert.equal(cookieOf(back), undefined, 'the stored guest keeps its cookie');
    } finally {
      Object.assign(storage, original);
    }
  });

  it("finds the session's cookie among others, whatever their spacing, and only under its own name", () => {
    const token = 'A'.repeat(32);
    assert.equal(cookieValue(`${COOKIE}=${token}`, COOKIE), token);
    assert.equal(cookieValue(`theme=dark; ${COOKIE}=${token}; lang=fr`, COOKIE), token);
    assert.equal(cookieValue(`theme=dark;${COOKIE} = ${token} ;lang=fr`, COOKIE), token);
    // the first of that name, as the cookie package reads it
    assert.equal(cookieValue(`${COOKIE}=${token}; ${COOKIE}=${'B'.repeat(32)}`, COOKIE), token);
    for (const header of [`x${COOKIE}=${token}`, `${COOKIE}x=${token}`, `${COOKIE}`, `flag; other=${COOKIE}=${token}`, '', ';;', `=${token}`]) {
      assert.equal(cookieValue(header, COOKIE), undefined, header);
    }
    assert.equal(cookieValue(`flag; ${COOKIE}=${token}`, COOKIE), token, 'a pair without = before it is skipped');
  });

  it('reads a cookie header in one pass: 1,000,000 pairs without = cost a moment, not a stall (each pair once, not the rest of the header per pair)', () => {
    const header = `${';'.repeat(1_000_000)}${COOKIE}=${'A'.repeat(32)}`;
    const start = performance.now();
    assert.equal(cookieValue(header, COOKIE), 'A'.repeat(32));
    // one pass: well under a millisecond here; reading the rest of the header per pair: seconds
    assert.ok(performance.now() - start < 500, `${performance.now() - start} ms`);
  });

  it('gives a malformed or unknown cookie a new guest session', async () => {
    // (a lower-case token is a guest never stored: the same guest, see above)
    for (const cookie of [`${COOKIE}=not-a-token`, `${COOKIE}=${randomBytes(16).toString('hex').toUpperCase()}`]) {
      const res = await call(demo.app, '/rest/$info', { cookie });
      assert.equal(res.status, 200, cookie);
      assert.match(String(cookieOf(res)), /^4DSID_Demo=[0-9a-f]{32}$/, cookie);
      assert.notEqual(cookieOf(res), cookie);
      assert.deepEqual(res.body.session.privileges, []);
    }
  });

  it('keeps a logged-in session through the new cookie: $info shows its user name and privileges, and sets no cookie again', async () => {
    const guest = cookieOf(await call(demo.app, '/rest/$info'));
    const cookie = await login(demo.app, 'alice', guest);
    assert.notEqual(cookie, guest, 'a login changes the token');
    const res = await call(demo.app, '/rest/$info', { cookie });
    assert.equal(cookieOf(res), undefined);
    assert.equal(res.body.session.userName, 'alice');
    assert.deepEqual(res.body.session.privileges, ['edit']);
    assert.deepEqual(res.body.privileges, { privileges: [{ privilege: 'edit' }] });
    assert.equal(res.body.session.lifeTime, 3600);
    // the token held before the login is worth nothing
    assert.deepEqual((await info(demo.app, guest)).session.privileges, []);
  });

  it("gives a login a new session id as well as a new token: the pre-login cookie (a guest's never stored, or a stored guest's in either case) sees none of the new session's sets, cannot read or release them, and cannot become a second stored session with its id", async () => {
    const storage = coreOf(demo.ds).storage;
    const rowsWithId = async (id: string) => Number((await storage.get(`SELECT COUNT(*) AS n FROM "${SESSION_TABLE}" WHERE "id" = '${id}'`))?.n);
    // the pre-login cookies: a guest never stored (lower case), and a stored guest (upper case, and its lower-case form)
    const fresh = String(cookieOf(await call(demo.app, '/rest/$info')));
    const kept = await call(demo.app, '/rest/Company?$method=entityset&$top=1', { cookie: String(cookieOf(await call(demo.app, '/rest/$info'))) });
    const storedGuest = String(cookieOf(kept));
    assert.match(storedGuest, /=[0-9A-F]{32}$/);
    for (const before of [fresh, storedGuest]) {
      const guestId = (await info(demo.app, before)).session.sessionID;
      const bob = await login(demo.app, 'bob', before);
      const bobInfo = await info(demo.app, bob);
      assert.notEqual(bobInfo.session.sessionID, guestId, 'a login gives a new id');
      // the probe: a Payroll user's set of the best-paid, in salary order
      const made = await call(demo.app, `/rest/Employee?$filter=${encodeURIComponent('salary>100000')}&$orderby=salary&$method=entityset&$top=1`, { cookie: bob });
      assert.equal(made.status, 200, JSON.stringify(made.body));
      const setUri = String(made.body.__ENTITYSET);
      const setId = setUri.split('/').pop() as string;
      assert.ok((await info(demo.app, bob)).entitySet.some((x: Json) => x.id === setId));
      // and its query path
      const path = await call(demo.app, `/rest/Employee?$filter=${encodeURIComponent('salary>100000')}&$querypath=true&$top=0`, { cookie: bob });
      assert.deepEqual((await call(demo.app, '/rest/$querypath', { cookie: bob })).body, { __queryPath: path.body.__queryPath });
      for (const old of [before, before.toLowerCase().replace('4dsid_demo', COOKIE)]) {
        const seen = await info(demo.app, old);
        assert.notEqual(seen.session.sessionID, bobInfo.session.sessionID, `${old}: the old cookie is not the new session`);
        assert.ok(!seen.entitySet.some((x: Json) => x.id === setId), `${old}: the new session's set is not in the old cookie's $info`);
        assert.deepEqual((await call(demo.app, '/rest/$querypath', { cookie: old })).body, { __queryPath: { steps: [] } }, `${old}: not the new session's query path`);
        const read = await call(demo.app, `${setUri}?$attributes=lastName`, { cookie: old });
        assert.equal(read.status, 404, `${old}: ${JSON.stringify(read.body).slice(0, 200)}`);
        assert.equal(errCode(read), 1802);
        const release = await call(demo.app, `${setUri}?$method=release`, { cookie: old });
        assert.notEqual(release.status, 200, `${old} released the set`);
        // storing something makes it a stored session of its own, never a second one with bob's id
        const stores = await call(demo.app, '/rest/Company?$method=entityset&$top=1', { cookie: old });
        assert.equal(stores.status, 200, JSON.stringify(stores.body));
        assert.equal(await rowsWithId(bobInfo.session.sessionID), 1, `${old}: one stored session has bob's id`);
      }
      // bob's set is still there, read in salary order
      const page = await call(demo.app, `${setUri}?$attributes=salary`, { cookie: bob });
      assert.equal(page.status, 200, JSON.stringify(page.body));
      const salaries = page.body.__ENTITIES.map((e: Json) => e.salary);
      assert.ok(salaries.length > 0 && salaries.every((x: number, i: number) => x > 100000 && (i === 0 || salaries[i - 1] <= x)), JSON.stringify(salaries));
    }
  });

  it('releases the entity sets a stored guest made when it logs in: no cookie reaches its old id any more', async () => {
    const setStore = coreOf(demo.ds).entitySets;
    const guest = String(cookieOf(await call(demo.app, '/rest/$info')));
    const made = await call(demo.app, '/rest/Company?$method=entityset&$top=1', { cookie: guest });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const cookie = String(cookieOf(made) ?? guest);
    const guestId = (await info(demo.app, cookie)).session.sessionID;
    assert.equal(await setStore.owned(guestId), 1, 'the guest holds its set');
    const bob = await login(demo.app, 'bob', cookie);
    assert.equal(await setStore.owned(guestId), 0, 'the old id holds none once logged in');
    assert.equal((await call(demo.app, String(made.body.__ENTITYSET), { cookie: bob })).status, 404);
  });

  it('gives a login to a user whose roles give no privilege a new token and a new id too, and stores it as a user (no guest cap evicts it)', async () => {
    const store = coreOf(demo.ds).sessions;
    const session = store.guest();
    const { id } = session;
    const token = sessionInternals.token(session);
    session.setPrivileges({ privileges: [], userName: 'nobody' });
    assert.notEqual(session.id, id, 'a new id');
    assert.notEqual(sessionInternals.token(session), token, 'a new token');
    await store.save(session);
    const storage = coreOf(demo.ds).storage;
    const row = await storage.get(`SELECT "guest" AS guest FROM "${SESSION_TABLE}" WHERE "id" = '${session.id}'`);
    assert.equal(Number(row?.guest), 0);
  });

  it("keeps a session's id when the same user's privileges change, and gives a new one when another user logs in with its cookie", async () => {
    const store = coreOf(demo.ds).sessions;
    const alice = await store.open((await login(demo.app, 'alice')).split('=')[1]);
    const id = alice.id;
    alice.setPrivileges({ privileges: ['edit', 'salaries'], userName: 'alice' });
    assert.equal(alice.id, id, 'the same user: the same id');
    await store.save(alice);
    assert.equal((await store.open(sessionInternals.token(alice))).id, id);
    alice.setPrivileges({ roles: ['Payroll'], userName: 'bob' });
    assert.notEqual(alice.id, id, 'another user: a new id');
  });

  it('logs out to a guest with a new cookie (the logged-in one stops working); a login from it gets a new token again', async () => {
    const cookie = await login(demo.app, 'bob');
    const id = (await info(demo.app, cookie)).session.sessionID;
    const out = await call(demo.app, '/rest/$catalog/logout', { method: 'POST', cookie });
    assert.equal(out.status, 200);
    assert.deepEqual(out.body, { result: true });
    const guestCookie = cookieOf(out);
    assert.ok(guestCookie && guestCookie !== cookie, 'the logout sets a new cookie');
    const guest = await info(demo.app, guestCookie);
    assert.equal(guest.session.sessionID, id, 'the same session, under its new token');
    assert.equal(guest.session.userName, '');
    assert.deepEqual(guest.session.privileges, []);
    const stale = await call(demo.app, '/rest/$info', { cookie });
    assert.deepEqual(stale.body.session.privileges, [], 'the logged-in cookie is worth nothing after the logout');
    assert.notEqual(stale.body.session.sessionID, id);
    // logged in again from that guest session: a new token, the guest's gone
    const again = await login(demo.app, 'bob', guestCookie);
    assert.notEqual(again, guestCookie);
    assert.deepEqual((await info(demo.app, again)).session.privileges, ['salaries']);
    const old = await call(demo.app, '/rest/$info', { cookie: guestCookie });
    assert.deepEqual(old.body.session.privileges, []);
    assert.notEqual(old.body.session.sessionID, id);
    assert.ok(cookieOf(old), 'the old token gets a new guest session');
  });

  it('gives a new token when a logged-in session logs in as someone else (a cookie known to one user is worth nothing once another logs in with it)', async () => {
    const bob = await login(demo.app, 'bob');
    const alice = await login(demo.app, 'alice', bob);
    assert.notEqual(alice, bob);
    assert.equal((await info(demo.app, alice)).session.userName, 'alice');
    const planted = await info(demo.app, bob);
    assert.equal(planted.session.userName, '', "bob's cookie no longer names a session");
    assert.deepEqual(planted.session.privileges, []);
  });

  it('never undoes a logout with the stale state of a request of the same session running at the same time', async () => {
    const store = coreOf(demo.ds).sessions;
    const cookie = await login(demo.app, 'alice');
    const token = cookie.split('=')[1];
    // two requests of one session at once: one writes storage, the other logs out
    const writer = await store.open(token);
    const logout = await store.open(token);
    logout.clearPrivileges();
    await store.save(logout);
    writer.storage.seen = true;
    await store.save(writer);
    const after = await info(demo.app, cookie);
    assert.deepEqual(after.session.privileges, [], 'the logged-out token stays logged out');
    assert.equal(after.session.userName, '');
    // and within one session, a storage write does not rewrite who it is
    const again = await login(demo.app, 'alice');
    const t = again.split('=')[1];
    const a = await store.open(t);
    const b = await store.open(t);
    a.setPrivileges({ privileges: ['salaries'], userName: 'alice' });
    await store.save(a);
    b.storage.cart = [1];
    await store.save(b);
    const now = await store.open(sessionInternals.token(a));
    assert.deepEqual(now.getPrivileges(), ['salaries']);
    assert.equal(now.userName, 'alice');
  });

  it('lists every live session in $info for an administrator, and only its own for anyone else', async () => {
    const alice = await login(demo.app, 'alice');
    const admin = await login(demo.app, 'admin');
    const seen = await info(demo.app, admin);
    assert.ok(seen.session.privileges.includes('admin'));
    assert.ok(seen.sessionInfo.length > 1);
    assert.equal(seen.sessionInfo[0].sessionID, seen.session.sessionID);
    assert.ok(seen.sessionInfo.some((s: Json) => s.userName === 'alice'));
    // ids, never the cookies' tokens
    for (const cookie of [alice, admin]) assert.equal(JSON.stringify(seen).includes(cookie.split('=')[1]), false);
    const own = await info(demo.app, alice);
    assert.equal(own.sessionInfo.length, 1);
    assert.deepEqual(own.sessionInfo[0], own.session);
  });

  it("keeps a session's storage between requests (written by server-side code: no demo function writes it, so through the store)", async () => {
    const store = coreOf(demo.ds).sessions;
    const session = store.guest();
    session.storage.cart = [1, 2];
    await store.save(session);
    const cookie = `${COOKIE}=${sessionInternals.token(session)}`;
    const res = await call(demo.app, '/rest/$info', { cookie });
    assert.equal(cookieOf(res), undefined, 'a guest that keeps something is stored: its cookie is kept');
    assert.equal(res.body.session.sessionID, session.id);
    assert.deepEqual((await store.open(sessionInternals.token(session))).storage, { cart: [1, 2] });
  });
});

describe("sessions: what the demo's roles.json allows", () => {
  let cookies: Record<string, string>;
  before(async () => {
    cookies = { alice: await login(demo.app, 'alice'), bob: await login(demo.app, 'bob') };
  });

  const first = async (cookie?: string): Promise<Json> => (await call(demo.app, '/rest/Employee?$top=1', { cookie })).body.__ENTITIES[0];
  const salary = async (key: string) => (await demo.ds.Employee.get(key))?.get('salary');
  const lastName = async (key: string) => (await demo.ds.Employee.get(key))?.get('lastName');
  const update = (body: Json, cookie?: string) => call(demo.app, '/rest/Employee?$method=update', { method: 'POST', body, cookie });

  it('lets a guest read employees but leaves salary out of its answers; a Payroll session sees it', async () => {
    const page = await call(demo.app, '/rest/Employee?$top=3');
    assert.equal(page.status, 200);
    assert.equal(page.body.__ENTITIES.length, 3);
    for (const e of page.body.__ENTITIES) assert.equal('salary' in e, false);
    const one = await call(demo.app, `/rest/Employee(${page.body.__ENTITIES[0].__KEY})`);
    assert.equal(one.status, 200);
    assert.equal('salary' in one.body, false);
    assert.equal(typeof (await first(cookies.bob)).salary, 'number');
  });

  it('refuses a guest a filter or a sort on salary (401, 7040): a hidden value cannot be learnt by querying it', async () => {
    for (const url of ['/rest/Employee?$filter="salary > 1"', '/rest/Employee?$orderby=salary']) {
      const res = await call(demo.app, url);
      assert.equal(res.status, 401, url);
      assert.equal(errCode(res), 7040, url);
    }
    assert.equal((await call(demo.app, '/rest/Employee?$filter="salary > 1"&$top=1', { cookie: cookies.bob })).status, 200);
  });

  it('refuses a guest creating an employee (401, 7041), and saves nothing', async () => {
    const before = await demo.ds.Employee.all().length;
    const res = await call(demo.app, '/rest/Employee?$method=update', { method: 'POST', body: { firstName: 'Eve', lastName: 'Guest' } });
    assert.equal(res.status, 401);
    assert.equal(errCode(res), 7041);
    assert.equal(await demo.ds.Employee.all().length, before);
  });

  it('refuses a guest an update as a guest (401, 1558) whatever stamp it sends: a stale one is no reason to answer 409 first', async () => {
    const e = await first();
    for (const stamp of [e.__STAMP, e.__STAMP + 7]) {
      const res = await update({ __KEY: e.__KEY, __STAMP: stamp, lastName: 'Guest' });
      assert.equal(res.status, 401, `stamp ${stamp}: ${JSON.stringify(res.body)}`);
      assert.equal(errCode(res), 1558, `stamp ${stamp}`);
    }
    assert.notEqual(await lastName(e.__KEY), 'Guest');
  });

  it('lets an Editor update lastName but not salary (403, 1558), and a refused update saves nothing', async () => {
    const e = await first(cookies.alice);
    const ok = await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, lastName: 'Edited' }, cookies.alice);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(await lastName(e.__KEY), 'Edited');
    const pay = await salary(e.__KEY);
    const refused = await update({ __KEY: e.__KEY, __STAMP: ok.body.__STAMP, lastName: 'Again', salary: 1 }, cookies.alice);
    assert.equal(refused.status, 403);
    assert.equal(errCode(refused), 1558);
    assert.equal(await salary(e.__KEY), pay);
    assert.equal(await lastName(e.__KEY), 'Edited');
  });

  it('lets an Editor delete an employee whose salary it cannot read (a value hidden from it is no reason to refuse the drop); a guest may not (401, 7042)', async () => {
    const e = demo.ds.Employee.new();
    e.set('lastName', 'Leaving');
    e.set('salary', 12345);
    await e.save();
    const key = String(e.getKey());
    const guest = await call(demo.app, `/rest/Employee(${key})?$method=delete`, { method: 'POST' });
    assert.equal(guest.status, 401, JSON.stringify(guest.body));
    assert.equal(errCode(guest), 7042);
    const res = await call(demo.app, `/rest/Employee(${key})?$method=delete`, { method: 'POST', cookie: cookies.alice });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(await demo.ds.Employee.get(key), null);
  });

  it('refuses an Editor creating an employee with a salary (403, 7041): giving a value at creation needs the attribute\'s create', async () => {
    const before = await demo.ds.Employee.all().length;
    const res = await call(demo.app, '/rest/Employee?$method=update', { method: 'POST', body: { lastName: 'Paid', salary: 12345 }, cookie: cookies.alice });
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.equal(errCode(res), 7041);
    assert.equal(await demo.ds.Employee.all().length, before);
  });

  it('logs in by the user name as given, in any case, never by a pattern (a@ or @ is no one)', async () => {
    for (const userName of ['@', 'a@', 'ali@']) {
      const res = await call(demo.app, '/rest/$catalog/authentify', { method: 'POST', body: [{ userName, password: 'alice123' }], remoteAddress: '10.9.9.9' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.result.success, false, userName);
    }
    const upper = await call(demo.app, '/rest/$catalog/authentify', { method: 'POST', body: [{ userName: 'ALICE', password: 'alice123' }], remoteAddress: '10.9.9.9' });
    assert.equal(upper.body.result.success, true);
  });

  it('lets Payroll read salaries but not update lastName (403, 1558)', async () => {
    const e = await first(cookies.bob);
    const before = await lastName(e.__KEY);
    const res = await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, lastName: 'ByBob' }, cookies.bob);
    assert.equal(res.status, 403);
    assert.equal(errCode(res), 1558);
    assert.equal(await lastName(e.__KEY), before);
  });

  it('runs ds.raiseSalaries for Payroll (promote gives edit while it runs), refuses it to an Editor (403, 1561) and a guest (401, 1561)', async () => {
    const companyID = (await first()).employerID;
    const staff = () => demo.ds.Employee.query('employer.ID = :1', companyID);
    const total = () => staff().sum('salary');
    const before = await total();
    for (const [cookie, status] of [[cookies.alice, 403], [undefined, 401]] as const) {
      const res = await call(demo.app, '/rest/$catalog/raiseSalaries', { method: 'POST', body: [companyID, 10], cookie });
      assert.equal(res.status, status);
      assert.equal(errCode(res), 1561);
    }
    assert.equal(await total(), before);
    const res = await call(demo.app, '/rest/$catalog/raiseSalaries', { method: 'POST', body: [companyID, 10], cookie: cookies.bob });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.result, await staff().length);
    assert.ok((await total()) > before);
    // promote lasted while the function ran: the session holds only bob's privilege
    const after = await info(demo.app, cookies.bob);
    assert.deepEqual(after.session.privileges, ['salaries']);
    const e = await first(cookies.bob);
    assert.equal(errCode(await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, lastName: 'StillNot' }, cookies.bob)), 1558);
  });
});

describe('sessions: expiry, quotas and failed logins on an injectable clock', () => {
  let timed: DemoFixture;
  // a clock the tests move; requests a minute and failed logins are counted on it too
  let clock = Date.UTC(2030, 0, 1, 9, 0, 10);
  const MIN = 60_000;
  /** Two hours on, 10 s into a minute: every session of an earlier test has expired, every count starts again. */
  const later = () => (clock = (Math.floor(clock / MIN) + 120) * MIN + 10_000);
  const attempt = (userName: string, password: string, cookie?: string) => call(timed.app, '/rest/$catalog/authentify', { method: 'POST', body: [{ userName, password }], cookie });
  before(async () => {
    // at most 2 live logged-in sessions: each test (after later()) keeps within it
    timed = await openDemo({ roles: ROLES, sessions: { now: () => clock, maxSessions: 2 } });
  });
  after(() => timed.close());

  it('answers a session idle past its timeout (60 minutes) as a new guest, with a new cookie', async () => {
    later();
    const cookie = await login(timed.app, 'alice');
    const fresh = await info(timed.app, cookie);
    assert.equal(fresh.session.expiration, new Date(clock + 60 * MIN).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    clock += 60 * MIN + 1000;
    const res = await call(timed.app, '/rest/$info', { cookie });
    assert.ok(cookieOf(res));
    assert.notEqual(cookieOf(res), cookie);
    assert.notEqual(res.body.session.sessionID, fresh.session.sessionID);
    assert.equal(res.body.session.userName, '');
    assert.deepEqual(res.body.session.privileges, []);
  });

  it('moves the expiry on each request: used after 50 minutes, it is still alive 50 minutes later', async () => {
    later();
    const cookie = await login(timed.app, 'bob');
    clock += 50 * MIN;
    assert.deepEqual((await info(timed.app, cookie)).session.privileges, ['salaries']);
    clock += 50 * MIN;
    const res = await call(timed.app, '/rest/$info', { cookie });
    assert.equal(cookieOf(res), undefined);
    assert.equal(res.body.session.userName, 'bob');
    assert.deepEqual(res.body.session.privileges, ['salaries']);
  });

  it('answers the 6th request of a logged-in session within a minute 429 with Retry-After (7044); guests are counted by address', async () => {
    const limited = await timed.withServer({ requestsPerMinute: 5 });
    try {
      later();
      const cookie = String(cookieOf(await limited.request('/rest/$catalog/authentify', 'POST', [{ userName: 'alice', password: 'alice123' }])));
      const get = (headers: Record<string, string> = {}) => limited.request('/rest/$info', 'GET', undefined, headers);
      for (let i = 0; i < 5; i++) assert.equal((await get({ cookie })).status, 200, `request ${i + 1}`);
      const over = await get({ cookie });
      assert.equal(over.status, 429);
      assert.equal(errCode(over), 7044);
      assert.equal(over.headers['retry-after'], '50');
      // the next minute starts a new count; guests without a stored session (a new one each time) are counted by address
      clock += MIN;
      for (let i = 0; i < 5; i++) assert.equal((await get()).status, 200, `guest request ${i + 1}`);
      const guest = await get();
      assert.equal(guest.status, 429);
      assert.equal(errCode(guest), 7044);
      assert.equal(guest.headers['retry-after'], '50');
      // the logged-in session has a count of its own
      assert.equal((await get({ cookie })).status, 200);
    } finally {
      await limited.close();
    }
  });

  it('counts guests from another address apart', async () => {
    const limited = await buildServer(timed.ds, { logLevel: 'silent', requestsPerMinute: 2 });
    try {
      later();
      for (let i = 0; i < 2; i++) assert.equal((await call(limited, '/rest/$info')).status, 200);
      assert.equal((await call(limited, '/rest/$info')).status, 429);
      assert.equal((await call(limited, '/rest/$info', { remoteAddress: '10.1.2.3' })).status, 200);
    } finally {
      await limited.close();
    }
  });

  it('refuses a 6th login for a user name after 5 failures (429, Retry-After), even with the right password; another user may still log in', async () => {
    later();
    for (let i = 0; i < 5; i++) {
      const res = await attempt('bob', `wrong${i}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.result.success, false);
    }
    for (const password of ['wrong', 'bob123']) {
      const res = await attempt('bob', password);
      assert.equal(res.status, 429, password);
      assert.equal(errCode(res), 7044);
      assert.equal(res.headers['retry-after'], '50');
    }
    assert.equal((await attempt('alice', 'alice123')).body.result.success, true);
    // the window ends: bob may try again
    clock += MIN;
    assert.equal((await attempt('bob', 'bob123')).body.result.success, true);
  });

  it('counts a user name by its fold: ｂｏｂ, bób, BÖB, ᵇob (which all log in as bob) are refused while bob is locked, and failures under ten variants from ten addresses count against bob', async () => {
    later();
    const VARIANTS = ['ｂｏｂ', 'bób', 'BÖB', 'ᵇob'];
    // (the probe's premise: the demo's lookup finds bob by each of them; one session logs in again
    // and again, within the suite's cap of two logged-in sessions)
    let cookie: string | undefined;
    for (const name of VARIANTS) {
      const res = await attempt(name, 'bob123', cookie);
      assert.equal(res.body.result?.success, true, `${name}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.result.userName, 'bob');
      cookie = cookieOf(res) ?? cookie;
    }
    for (let i = 0; i < 5; i++) assert.equal((await attempt('bob', `wrong${i}`)).status, 200);
    for (const name of ['bob', ...VARIANTS]) {
      const res = await attempt(name, 'bob123');
      assert.equal(res.status, 429, `${name} while bob is locked: ${JSON.stringify(res.body)}`);
      assert.match(res.body.__ERROR[0].message, /for this user name/);
    }
    // the next window: ten variants, one failure each from its own address, lock bob again
    clock += MIN;
    const TEN = ['ｂｏｂ', 'bób', 'BÖB', 'ᵇob', 'Bob', 'BOB', 'bòb', 'ḃob', 'ｂob', 'boᵇ'];
    const statuses: number[] = [];
    for (const [i, name] of TEN.entries()) {
      statuses.push((await call(timed.app, '/rest/$catalog/authentify', { method: 'POST', body: [{ userName: name, password: 'wrong' }], remoteAddress: `10.7.0.${i + 1}` })).status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429, 429, 429]);
    const right = await call(timed.app, '/rest/$catalog/authentify', { method: 'POST', body: [{ userName: 'bob', password: 'bob123' }], remoteAddress: '10.7.0.99' });
    assert.equal(right.status, 429);
    // $directory/login counts by the same key
    const legacy = await call(timed.app, '/rest/$directory/login', { method: 'POST', body: ['ＢＯＢ', 'bob123'], remoteAddress: '10.7.0.98' });
    assert.equal(legacy.status, 429, JSON.stringify(legacy.body));
  });

  it('counts the failed logins of a logged-in session too: a user cannot guess another one\'s password without limit', async () => {
    later();
    const cookie = await login(timed.app, 'alice');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await attempt('admin', `guess${i}`, cookie)).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
  });

  it('evaluates exactly 5 failed logins for a user name when 20 arrive at once', async () => {
    later();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => attempt('bob', `burst${i}`)));
    const evaluated = answers.filter((r) => r.status === 200).length;
    assert.equal(evaluated, 5, `${evaluated} of 20 concurrent guesses were evaluated`);
    assert.ok(answers.every((r) => r.status === 200 || errCode(r) === 7044));
  });

  it('counts a login again as the same user a success, not a failure: a user may log in again and again', async () => {
    later();
    const cookie = await login(timed.app, 'alice');
    for (let i = 0; i < 8; i++) {
      const again = await attempt('alice', 'alice123', cookie);
      assert.equal(again.status, 200, `login ${i + 2}: ${JSON.stringify(again.body)}`);
      assert.equal(again.body.result.success, true);
      // the same user and privileges: the token stays (it changes when who the session is changes)
      assert.equal(cookieOf(again), undefined);
    }
    assert.equal((await info(timed.app, cookie)).session.userName, 'alice');
  });

  it('refuses an address past its limit without counting its attempts against the user name it tries', async () => {
    later();
    for (let i = 0; i < 10; i++) await attempt(`nobody${i}`, 'x');
    const over = await attempt('bob', 'wrong');
    assert.equal(over.status, 429);
    assert.match(over.body.__ERROR[0].message, /from this address/);
    // from another address, bob's failures are still at 0: five more are evaluated
    const other = (password: string) => call(timed.app, '/rest/$catalog/authentify', { method: 'POST', body: [{ userName: 'bob', password }], remoteAddress: '10.0.0.9' });
    for (let i = 0; i < 5; i++) assert.equal((await other(`wrong${i}`)).status, 200, `attempt ${i}`);
    assert.equal((await other('wrong')).status, 429);
  });

  it('caps the live logged-in sessions (429, 7044, Retry-After); a logout frees a place', async () => {
    later();
    const alice = await login(timed.app, 'alice');
    await login(timed.app, 'bob');
    const over = await attempt('admin', 'admin123');
    assert.equal(over.status, 429);
    assert.equal(errCode(over), 7044);
    assert.ok(Number(over.headers['retry-after']) > 0);
    assert.equal((await call(timed.app, '/rest/$catalog/logout', { method: 'POST', cookie: alice })).status, 200);
    await login(timed.app, 'admin');
  });
});

describe('sessions: the cap on live guest sessions', () => {
  let capped: DemoFixture;
  before(async () => {
    capped = await openDemo({ roles: ROLES, sessions: { maxGuestSessions: 1 } });
  });
  after(() => capped.close());

  it('gives a new guest its entity set once the guests are at their cap: the least recently used guest gives way, its set with it (no 429)', async () => {
    const make = (cookie?: string) => call(capped.app, '/rest/Company?$method=entityset', { cookie });
    const first = await make();
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const second = await make();
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.equal((await coreOf(capped.ds).sets.list()).some((x) => first.body.__ENTITYSET.endsWith(x.id)), false, "the first guest's set went with it");
    const stale = await call(capped.app, String(first.body.__ENTITYSET), { cookie: cookieOf(first) });
    assert.equal(stale.status, 404);
    // the guest that has the place keeps making sets
    const again = await make(cookieOf(second));
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(cookieOf(again), undefined, 'the same stored guest');
  });

  it('never refuses a logout for the cap: with the guests at their cap, a user logs out to a guest', async () => {
    const alice = await login(capped.app, 'alice');
    await call(capped.app, '/rest/Company?$method=entityset', {});
    const out = await call(capped.app, '/rest/$catalog/logout', { method: 'POST', cookie: alice });
    assert.equal(out.status, 200, JSON.stringify(out.body));
    const after = await info(capped.app, alice);
    assert.equal(after.session.userName, '', 'the old cookie names no one');
    assert.deepEqual((await info(capped.app, cookieOf(out))).session.privileges, []);
    // with its storage, at the level of the store
    const store = coreOf(capped.ds).sessions;
    const bob = await store.open((await login(capped.app, 'bob')).split('=')[1]);
    bob.storage.cart = [1, 2];
    bob.clearPrivileges();
    await store.save(bob);
    const back = await store.open(sessionInternals.token(bob));
    assert.deepEqual(back.storage, { cart: [1, 2] });
    assert.equal(back.isGuest(), true);
  });
});

describe('sessions: the cap on entity sets per session', () => {
  // a server of its own over the shared demo: the test's session is a new guest, with no set yet
  let app: FastifyInstance;
  before(async () => {
    app = await buildServer(demo.ds, { logLevel: 'silent', setsPerSession: 2 });
  });
  after(() => app.close());

  it('refuses a third set to a session holding two (429, 7044), made by $method=entityset or rebuilt from $savedfilter under an id of its choosing', async () => {
    const first = await call(app, '/rest/Company?$method=entityset', {});
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const cookie = cookieOf(first);
    assert.equal((await call(app, '/rest/Company?$method=entityset', { cookie })).status, 200);
    const third = await call(app, '/rest/Company?$method=entityset', { cookie });
    assert.equal(third.status, 429, JSON.stringify(third.body));
    assert.equal(errCode(third), 7044);
    const rebuilt = await call(app, `/rest/Company/$entityset/${'AB'.repeat(16)}?$savedfilter=%22ID%20%3E%200%22`, { cookie });
    assert.equal(rebuilt.status, 429, JSON.stringify(rebuilt.body));
    assert.equal(errCode(rebuilt), 7044);
  });
});

describe('sessions: two server instances on one database share them', () => {
  let a: Instance;
  let b: Instance;
  let close: () => Promise<void>;
  before(async () => {
    ({ a, b, close } = await twoInstances(ROLES));
  });
  after(() => close());

  it('sees on B a login made on A, and within about a second a logout made on A', async () => {
    const cookie = await login(a.app, 'alice');
    const onB = await call(b.app, '/rest/$info', { cookie });
    assert.equal(cookieOf(onB), undefined);
    assert.equal(onB.body.session.userName, 'alice');
    assert.deepEqual(onB.body.session.privileges, ['edit']);
    assert.equal((await call(a.app, '/rest/$catalog/logout', { method: 'POST', cookie })).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const after = await call(b.app, '/rest/$info', { cookie });
    assert.equal(after.body.session.userName, '');
    assert.deepEqual(after.body.session.privileges, []);
    assert.notEqual(after.body.session.sessionID, onB.body.session.sessionID, 'the logged-in token names no session after the logout');
  });
});

describe('HTTP guards: Host, Origin, CORS and security headers', () => {
  const host = (app: FastifyInstance, name: string) => call(app, '/rest/$info', { headers: { host: name } });
  // a call that changes nothing but is a POST: what the Origin check looks at
  const post = (headers: Record<string, string> = {}, app = demo.app) => call(app, '/rest/$catalog/hiredBetween', { method: 'POST', body: ['2019-01-01'], headers });

  it('refuses a Host it does not answer for (421, 7045) and answers localhost and 127.0.0.1 by default', async () => {
    const evil = await host(demo.app, 'evil.example');
    assert.equal(evil.status, 421);
    assert.equal(errCode(evil), 7045);
    assert.equal((await host(demo.app, 'evil.example:80')).status, 421);
    for (const name of ['localhost', 'localhost:8080', '127.0.0.1:3000', '[::1]:3000']) assert.equal((await host(demo.app, name)).status, 200, name);
  });

  it('refuses a Host whose port is not a port (localhost:1@evil.example), which would otherwise be echoed into uri', async () => {
    for (const name of ['localhost:1@evil.example', 'localhost:80/evil', 'localhost:evil.example']) assert.equal((await host(demo.app, name)).status, 421, name);
  });

  it("answers any Host with allowedHosts ['*'], and only the listed ones otherwise", async () => {
    const any = await buildServer(demo.ds, { logLevel: 'silent', allowedHosts: ['*'] });
    const listed = await buildServer(demo.ds, { logLevel: 'silent', allowedHosts: ['api.example'] });
    try {
      assert.equal((await host(any, 'evil.example')).status, 200);
      assert.equal((await host(listed, 'api.example:8443')).status, 200);
      assert.equal((await host(listed, 'localhost')).status, 421);
    } finally {
      await any.close();
      await listed.close();
    }
  });

  it("refuses a POST from another origin (403, 7046); without Origin, or from the server's own, it runs", async () => {
    const evil = await post({ origin: 'http://evil.example' });
    assert.equal(evil.status, 403);
    assert.equal(errCode(evil), 7046);
    assert.equal((await post()).status, 200);
    // under inject the Host is localhost:80
    assert.equal((await post({ origin: 'http://localhost:80' })).status, 200);
    assert.equal((await post({ origin: 'http://localhost:8080' })).status, 403, 'another port is another origin');
    // a GET changes nothing: not checked
    assert.equal((await call(demo.app, '/rest/$info', { headers: { origin: 'http://evil.example' } })).status, 200);
  });

  it('lets a --cors-origin call with credentials: its POST runs and a preflight answers it', async () => {
    const cors = await buildServer(demo.ds, { logLevel: 'silent', corsOrigins: ['http://app.example'] });
    try {
      const ok = await post({ origin: 'http://app.example' }, cors);
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['access-control-allow-origin'], 'http://app.example');
      assert.equal(ok.headers['access-control-allow-credentials'], 'true');
      const preflight = await call(cors, '/rest/$catalog/pause', { method: 'OPTIONS', headers: { origin: 'http://app.example', 'access-control-request-method': 'POST' } });
      assert.ok(preflight.status < 300, String(preflight.status));
      assert.equal(preflight.headers['access-control-allow-origin'], 'http://app.example');
      assert.equal(preflight.headers['access-control-allow-credentials'], 'true');
      const other = await call(cors, '/rest/$catalog/pause', { method: 'OPTIONS', headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' } });
      assert.equal(other.headers['access-control-allow-origin'], undefined);
      assert.equal(errCode(await post({ origin: 'http://evil.example' }, cors)), 7046);
      // a preflight is answered before any route: the Host is judged, and the headers set, before it
      const foreign = await call(cors, '/rest/$catalog/pause', { method: 'OPTIONS', headers: { host: 'evil.example', origin: 'http://app.example', 'access-control-request-method': 'POST' } });
      assert.equal(foreign.status, 421);
      assert.equal(foreign.headers['access-control-allow-origin'], undefined);
      assert.equal(foreign.headers['x-content-type-options'], 'nosniff');
      assert.equal(preflight.headers['x-content-type-options'], 'nosniff');
    } finally {
      await cors.close();
    }
  });

  it('puts nosniff, no-store and a restrictive content-security-policy on answers, errors included', async () => {
    const answers = [await call(demo.app, '/rest/Employee?$top=1'), await call(demo.app, '/rest/Nothing'), await call(demo.app, '/elsewhere'), await host(demo.app, 'evil.example')];
    for (const res of answers) {
      assert.equal(res.headers['x-content-type-options'], 'nosniff', String(res.status));
      assert.equal(res.headers['cache-control'], 'no-store', String(res.status));
      assert.match(String(res.headers['content-security-policy']), /default-src 'none'/, String(res.status));
    }
  });
});
