// Web sessions (issue 13): the 4DSID_ cookie, logging in and out with the demo's users, and two
// server instances sharing a session. The other files of sessions are sessions-*.test.ts and
// http-guards.test.ts; what they share is sessions-shared.ts.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { coreOf } from '../../src/datastore/datastore.js';
import { sessionInternals } from '../../src/datastore/sessions/session.js';
import { SESSION_TABLE } from '../../src/storage/system-tables/tables.js';
import { cookieValue } from '../../src/rest/session-http.js';
import { openDemo, twoInstances, type DemoFixture, type Instance } from '../support/helpers.js';
import { type Json, ROLES, COOKIE, call, cookieOf, setCookieLine, errCode, login, info } from './sessions-shared.js';

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

  it('sets no cookie on a cookie-less read that keeps nothing and shows no session id (a read, a page, the catalog), and stores nothing; one that keeps something gets its cookie', async () => {
    const sessions = async () => Number((await coreOf(demo.ds).storage.get(`SELECT COUNT(*) AS n FROM "${SESSION_TABLE}"`))?.n);
    const before = await sessions();
    for (const url of ['/rest/Company?$top=2', '/rest/Company(1)', '/rest/$catalog', '/rest/Company?$filter="name begin a"&$top=1', '/rest/Company/ID?$compute=count']) {
      const res = await call(demo.app, url);
      assert.equal(res.status, 200, url);
      assert.equal(res.headers['set-cookie'], undefined, url);
    }
    assert.equal(await sessions(), before);
    // an entity set belongs to the session: it is stored, and its cookie set
    const kept = await call(demo.app, '/rest/Company?$method=entityset&$top=2');
    assert.match(String(cookieOf(kept)), /^4DSID_Demo=[0-9A-F]{32}$/);
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
      // ($info shows the session's id: the guest gets its cookie, so that its id stays)
      const guest = cookieOf(await call(demo.app, '/rest/$info'));
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
