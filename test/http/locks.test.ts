// Pessimistic locks (issue 14, reference §3.13): $lock=true / $lock=false on one entity, held by
// the locking session until it unlocks, logs out or expires; other sessions' lock, unlock, update
// and delete of it refused with 4D's status 3 and the locker's info; a second server instance over
// the same database sees the lock; entity.lock() / unlock() for server code.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { runAsCaller } from '../../src/datastore/access/caller.js';
import { coreOf, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { EntityLockedError } from '../../src/datastore/sessions/locks.js';
import type { Session } from '../../src/datastore/sessions/session.js';
import { buildServer } from '../../src/http/server.js';
import { LOCK_TABLE, SESSION_TABLE } from '../../src/storage/system-tables/tables.js';
import { DEMO_DIR, openDemo, TEST_ENGINE, twoInstances, type DemoFixture, type Instance } from '../support/helpers.js';

type Answer = { status: number; body: any; headers: Record<string, unknown> };

const COOKIE = '4DSID_Demo';
const ROLES = join(DEMO_DIR, 'roles.json');
const PASSWORDS: Record<string, string> = { alice: 'alice123', admin: 'admin123', bob: 'bob123' };

async function call(app: FastifyInstance, url: string, o: { method?: InjectOptions['method']; body?: unknown; cookie?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers = { ...(o.cookie ? { cookie: o.cookie } : {}), ...o.headers };
  const res = await app.inject({ method: o.method ?? 'GET', url, headers, ...(o.body === undefined ? {} : { payload: o.body as object }) });
  let body: unknown = res.body;
  try {
    body = JSON.parse(res.body);
  } catch {
    // not JSON
  }
  return { status: res.statusCode, body, headers: res.headers };
}

function cookieOf(res: Answer): string | undefined {
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw.map(String) : [String(raw)];
  return lines.find((l) => l.startsWith(`${COOKIE}=`))?.split(';')[0];
}

/** A client with a cookie jar: keeps the session cookie each answer sets. */
function client(app: FastifyInstance, headers: Record<string, string> = {}) {
  const c = {
    cookie: undefined as string | undefined,
    async call(url: string, o: { method?: InjectOptions['method']; body?: unknown } = {}): Promise<Answer> {
      const res = await call(app, url, { ...o, cookie: c.cookie, headers });
      c.cookie = cookieOf(res) ?? c.cookie;
      return res;
    },
    /** a lock asked by a client that keeps its cookie (a first request gets it one) */
    async lock(url: string, value = true): Promise<Answer> {
      if (c.cookie === undefined) await c.call('/rest/$info');
      return c.call(`${url}/?$lock=${value}`);
    },
    /** its session's id, as $info shows it */
    async id(): Promise<string> {
      return (await c.call('/rest/$info')).body.session.sessionID;
    },
  };
  return c;
}

async function login(c: ReturnType<typeof client>, user: string): Promise<void> {
  const res = await c.call('/rest/$catalog/authentify', { method: 'POST', body: [{ userName: user, password: PASSWORDS[user] }] });
  assert.equal(res.body.result?.success, true, JSON.stringify(res.body));
}

function errCode(res: Answer): number | undefined {
  return res.body?.__ERROR?.[0]?.errCode;
}

/** The lock rows the database holds for a City key. */
async function lockRows(ds: DatastoreWithClasses, key: unknown): Promise<number> {
  const storage = coreOf(ds).storage;
  const { quote: q, placeholder: p } = storage.dialect.sql;
  const row = await storage.get(`SELECT COUNT(*) AS n FROM ${q(LOCK_TABLE)} WHERE ${q('dataClass')} = ${p(1)} AND ${q('key')} = ${p(2)}`, ['City', String(key)]);
  return Number(row?.n ?? 0);
}

/** A new city, for one test alone. */
async function newCity(ds: DatastoreWithClasses): Promise<number> {
  const c = ds.City.new();
  c.set('name', `Lockville ${Math.random()}`);
  await c.save();
  return Number(c.getKey());
}

/** A guest session as a request of a client that sent its cookie back opens it (one that may lock). */
async function keptGuest(ds: DatastoreWithClasses): Promise<Session> {
  const opened = coreOf(ds).sessions.open(randomBytes(16).toString('hex'));
  return opened instanceof Promise ? await opened : opened;
}

const update = (c: ReturnType<typeof client>, key: number, stamp: number, name: string) =>
  c.call('/rest/City?$method=update', { method: 'POST', body: { __KEY: String(key), __STAMP: stamp, name } });

async function stampOf(c: ReturnType<typeof client>, key: number): Promise<number> {
  return (await c.call(`/rest/City(${key})`)).body.__STAMP;
}

describe('$lock: a session-owned pessimistic lock (guests of an open datastore)', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('locks an entity for its session and answers 4D\'s shape, {"result": true, "__STATUS": {"success": true}}; locking it again in that session succeeds', async () => {
    const key = await newCity(demo.ds);
    const a = client(demo.app);
    const first = await a.lock(`/rest/City(${key})`);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.body, { result: true, __STATUS: { success: true } });
    assert.ok(a.cookie, 'a guest that locks is stored: its cookie is set');
    const again = await a.lock(`/rest/City(${key})`);
    assert.deepEqual(again.body, { result: true, __STATUS: { success: true } });
    assert.equal(await lockRows(demo.ds, key), 1);
  });

  it("refuses another session's lock and unlock with 4D's status 3, lockKind 7 and the locker's lockInfo (host, IPAddr, userAgent, its session)", async () => {
    const key = await newCity(demo.ds);
    const a = client(demo.app, { 'user-agent': 'LockerAgent/1.0' });
    assert.equal((await a.lock(`/rest/City(${key})`)).body.result, true);
    const id = await a.id();
    const b = client(demo.app);
    for (const value of [true, false]) {
      const res = await b.lock(`/rest/City(${key})`, value);
      assert.equal(res.status, 200);
      assert.equal(res.body.result, false);
      assert.deepEqual(res.body.__STATUS, {
        status: 3, statusText: 'Already locked', lockKind: 7, lockKindText: 'Locked by session',
        lockInfo: { host: 'localhost:80', IPAddr: '127.0.0.1', userAgent: 'LockerAgent/1.0', userName: '', sessionID: id },
      });
    }
    // still the locker's: it unlocks it
    assert.deepEqual((await a.lock(`/rest/City(${key})`, false)).body, { result: true, __STATUS: { success: true } });
  });

  it("refuses another session's update and delete (423, 7052 naming the locker; an update's __STATUS is status 3 with lockInfo), by key, by $filter and on a set; nothing changes", async () => {
    const key = await newCity(demo.ds);
    const a = client(demo.app);
    assert.equal((await a.lock(`/rest/City(${key})`)).body.result, true);
    const id = await a.id();
    const b = client(demo.app);
    const stamp = await stampOf(b, key);
    const up = await update(b, key, stamp, 'Taken');
    assert.equal(up.status, 423, JSON.stringify(up.body));
    assert.deepEqual(up.body.__ERROR.map((e: any) => e.errCode), [7052, 1046, 1517]);
    assert.match(up.body.__ERROR[0].message, new RegExp(`City\\(${key}\\) is locked by the guest session ${id} \\(from 127\\.0\\.0\\.1`));
    assert.equal(up.body.__STATUS.status, 3);
    assert.equal(up.body.__STATUS.lockInfo.sessionID, id);
    const del = await b.call(`/rest/City(${key})?$method=delete`, { method: 'POST' });
    assert.equal(del.status, 423, JSON.stringify(del.body));
    assert.equal(errCode(del), 7052);
    const byFilter = await b.call(`/rest/City?$filter=${encodeURIComponent(`ID = ${key}`)}&$method=delete`, { method: 'POST' });
    assert.equal(byFilter.status, 423, JSON.stringify(byFilter.body));
    const set = await b.call(`/rest/City?$filter=${encodeURIComponent(`ID = ${key}`)}&$method=entityset`);
    const setId = String(set.body.__ENTITYSET).split('/').pop();
    const onSet = await b.call(`/rest/City/$entityset/${setId}?$method=delete`, { method: 'POST' });
    assert.equal(onSet.status, 423, JSON.stringify(onSet.body));
    const now = await b.call(`/rest/City(${key})`);
    assert.equal(now.status, 200, 'still there');
    assert.equal(now.body.__STAMP, stamp, 'unchanged');
  });

  it('lets the locking session update and drop the entity it holds; the drop releases the lock', async () => {
    const key = await newCity(demo.ds);
    const a = client(demo.app);
    assert.equal((await a.lock(`/rest/City(${key})`)).body.result, true);
    const up = await update(a, key, await stampOf(a, key), 'Mine');
    assert.equal(up.status, 200, JSON.stringify(up.body));
    assert.equal(up.body.name, 'Mine');
    assert.equal((await a.call(`/rest/City(${key})?$method=delete`, { method: 'POST' })).status, 200);
    assert.equal(await lockRows(demo.ds, key), 0);
    // gone: 4D's status 5, for anyone
    assert.deepEqual((await client(demo.app).lock(`/rest/City(${key})`)).body, { result: false, __STATUS: { status: 5, statusText: 'Entity does not exist anymore' } });
  });

  it('unlocks with $lock=false: another session may then lock it, and update it', async () => {
    const key = await newCity(demo.ds);
    const a = client(demo.app);
    const b = client(demo.app);
    assert.equal((await a.lock(`/rest/City(${key})`)).body.result, true);
    assert.equal((await b.lock(`/rest/City(${key})`)).body.result, false);
    assert.equal((await a.lock(`/rest/City(${key})`, false)).body.result, true);
    assert.equal(await lockRows(demo.ds, key), 0);
    assert.equal((await b.lock(`/rest/City(${key})`)).body.result, true);
    assert.equal((await update(b, key, await stampOf(b, key), 'Unlocked')).status, 200);
    // a session unlocking what it does not hold: unlocked as asked
    assert.deepEqual((await client(demo.app).lock(`/rest/City(${(await newCity(demo.ds))})`, false)).body, { result: true, __STATUS: { success: true } });
  });

  it('gives one lock to one of two sessions asking at once', async () => {
    const key = await newCity(demo.ds);
    const answers = await Promise.all([client(demo.app).lock(`/rest/City(${key})`), client(demo.app).lock(`/rest/City(${key})`)]);
    assert.deepEqual(answers.map((r) => r.body.result).sort(), [false, true], JSON.stringify(answers.map((r) => r.body)));
  });

  it('answers POST /rest/City(k)?$lock=true as GET; refuses HEAD, a collection, a path after the entity, $method beside it, and a value other than true or false', async () => {
    const key = await newCity(demo.ds);
    const a = client(demo.app);
    await a.call('/rest/$info');
    assert.deepEqual((await a.call(`/rest/City(${key})?$lock=true`, { method: 'POST' })).body, { result: true, __STATUS: { success: true } });
    const refusals: [InjectOptions['method'], string, number, number, RegExp][] = [
      ['HEAD', `/rest/City(${key})?$lock=true`, 405, 7010, /./],
      ['GET', '/rest/City?$lock=true', 400, 7007, /\$lock locks or unlocks one entity/],
      ['GET', `/rest/City(${key})/name?$lock=true`, 400, 7004, /nothing after the entity/],
      ['POST', `/rest/City(${key})?$lock=true&$method=delete`, 400, 7007, /give no \$method/],
      ['GET', `/rest/City(${key})?$lock=yes`, 400, 7007, /\$lock is true .* or false .*got 'yes'/],
      ['GET', `/rest/City(${key})?$lock`, 400, 7007, /got ''/],
    ];
    for (const [method, url, status, code, message] of refusals) {
      const res = await a.call(url, { method });
      assert.equal(res.status, status, `${method} ${url}: ${JSON.stringify(res.body)}`);
      if (method === 'HEAD') continue;
      assert.equal(errCode(res), code, url);
      assert.match(res.body.__ERROR[0].message, message, url);
    }
    // a key no entity has: 4D's status 5; a unique attribute's value none has: 1542
    assert.equal((await a.lock('/rest/City(999999999)')).body.__STATUS.status, 5);
    assert.equal(errCode(await a.lock('/rest/City:name(Nowhere at all)')), 1542);
  });

  it('gives server code entity.lock() and unlock() with ORDA status objects; code without a session cannot save an entity a session holds locked', async () => {
    const key = await newCity(demo.ds);
    const core = coreOf(demo.ds);
    const mine = await keptGuest(demo.ds);
    const other = await keptGuest(demo.ds);
    const as = <T>(session: typeof mine, fn: () => Promise<T>) => runAsCaller({ access: core.accessFor(session), session }, fn);
    assert.deepEqual(await as(mine, async () => (await demo.ds.City.get(key))!.lock()), { success: true });
    const refused = await as(other, async () => (await demo.ds.City.get(key))!.lock());
    assert.equal(refused.success, false);
    assert.equal((refused as any).status, 3);
    assert.equal((refused as any).lockInfo.sessionID, mine.id);
    // the server's own code (no session) is refused the save, as 4D's processes are
    const city = (await demo.ds.City.get(key))!;
    city.set('name', 'Server');
    await assert.rejects(city.save(), (e: unknown) => e instanceof EntityLockedError && e.status === 423 && e.lockStatus.lockInfo.sessionID === mine.id);
    await assert.rejects((await demo.ds.City.get(key))!.lock(), /a lock belongs to a REST session/);
    // a REST session sees the lock server code took
    assert.equal((await client(demo.app).lock(`/rest/City(${key})`)).body.__STATUS.status, 3);
    assert.deepEqual(await as(mine, async () => (await demo.ds.City.get(key))!.unlock()), { success: true });
    await city.save();
  });
});

describe('$lock: released at logout and at expiry', () => {
  let clock = Date.UTC(2030, 0, 1);
  const MIN = 60_000;
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo({ roles: ROLES, sessions: { now: () => clock } });
  });
  after(() => demo.close());

  it("names the locker's user in lockInfo, and releases its locks when it logs out", async () => {
    const key = await newCity(demo.ds);
    const alice = client(demo.app);
    await login(alice, 'alice');
    assert.equal((await alice.lock(`/rest/City(${key})`)).body.result, true);
    const admin = client(demo.app);
    await login(admin, 'admin');
    const refused = await admin.lock(`/rest/City(${key})`);
    assert.equal(refused.body.__STATUS.lockInfo.userName, 'alice');
    const up = await update(admin, key, await stampOf(admin, key), 'Admin');
    assert.equal(up.status, 423);
    assert.match(up.body.__ERROR[0].message, /of user "alice"/);
    assert.equal((await alice.call('/rest/$catalog/logout', { method: 'POST' })).status, 200);
    assert.equal(await lockRows(demo.ds, key), 0);
    assert.equal((await admin.lock(`/rest/City(${key})`)).body.result, true);
  });

  it('releases the lock once its session expires (idle past its timeout): others may lock and update it, and the sweep removes its row', async () => {
    const key = await newCity(demo.ds);
    const alice = client(demo.app);
    await login(alice, 'alice');
    assert.equal((await alice.lock(`/rest/City(${key})`)).body.result, true);
    const admin = client(demo.app);
    await login(admin, 'admin');
    assert.equal((await admin.lock(`/rest/City(${key})`)).body.result, false);
    clock += 61 * MIN;
    // (admin's own session expired too: it logs in again)
    await login(admin, 'admin');
    assert.equal((await update(admin, key, await stampOf(admin, key), 'After')).status, 200);
    assert.equal(await lockRows(demo.ds, key), 1, 'void, not yet swept');
    await coreOf(demo.ds).sessions.sweep();
    assert.equal(await lockRows(demo.ds, key), 0);
    assert.equal((await admin.lock(`/rest/City(${key})`)).body.result, true);
  });
});

describe('$lock: two server instances on one database', () => {
  let a: Instance;
  let b: Instance;
  let close: () => Promise<void>;
  before(async () => {
    ({ a, b, close } = await twoInstances(false));
  });
  after(() => close());

  it('sees on B a lock taken on A: B refuses another session, and the locker, sent to B, updates and unlocks it there', async () => {
    const key = await newCity(a.ds);
    const locker = client(a.app);
    assert.equal((await locker.lock(`/rest/City(${key})`)).body.result, true);
    const other = client(b.app);
    assert.equal((await other.lock(`/rest/City(${key})`)).body.__STATUS.status, 3);
    assert.equal((await update(other, key, await stampOf(other, key), 'B')).status, 423);
    const onB = client(b.app);
    onB.cookie = locker.cookie;
    assert.equal((await update(onB, key, await stampOf(onB, key), 'Locker on B')).status, 200);
    assert.equal((await onB.lock(`/rest/City(${key})`, false)).body.result, true);
    assert.equal((await other.lock(`/rest/City(${key})`)).body.result, true);
  });
});

/** Rows of a system table for a session id. */
async function rowsOf(ds: DatastoreWithClasses, table: string, column: string, id: string): Promise<number> {
  const storage = coreOf(ds).storage;
  const { quote: q, placeholder: p } = storage.dialect.sql;
  const row = await storage.get(`SELECT COUNT(*) AS n FROM ${q(table)} WHERE ${q(column)} = ${p(1)}`, [id]);
  return Number(row?.n ?? 0);
}

async function countAll(ds: DatastoreWithClasses, table: string): Promise<number> {
  const storage = coreOf(ds).storage;
  return Number((await storage.get(`SELECT COUNT(*) AS n FROM ${storage.dialect.sql.quote(table)}`))?.n ?? 0);
}

describe('$lock: what a session may hold, and who may lock (review of issue 14)', () => {
  let demo: DemoFixture;
  let capped: FastifyInstance;
  before(async () => {
    demo = await openDemo();
    capped = await buildServer(demo.ds, { logLevel: 'silent', locksPerSession: 3 });
  });
  after(async () => {
    await capped.close();
    await demo.close();
  });

  it('refuses $lock=true to a client that never sent its cookie back (409, 7053), storing neither a lock nor a session; the same client sending its cookie back locks', async () => {
    const key = await newCity(demo.ds);
    const sessions = await countAll(demo.ds, SESSION_TABLE);
    for (let i = 0; i < 5; i++) {
      const res = await call(demo.app, `/rest/City(${key})?$lock=true`);
      assert.equal(res.status, 409, JSON.stringify(res.body));
      assert.equal(errCode(res), 7053);
      assert.match(res.body.__ERROR[0].message, /a lock needs a session the client keeps: send its cookie back, or log in/);
    }
    assert.equal(await lockRows(demo.ds, key), 0);
    assert.equal(await countAll(demo.ds, SESSION_TABLE), sessions, 'no guest session stored');
    // a client that keeps the (lower-case) cookie of its first answer is the same guest: it locks, and is stored then
    const first = await call(demo.app, '/rest/$info');
    const cookie = cookieOf(first)!;
    const locked = await call(demo.app, `/rest/City(${key})?$lock=true`, { cookie });
    assert.deepEqual(locked.body, { result: true, __STATUS: { success: true } });
    const stored = cookieOf(locked);
    assert.ok(stored && stored !== cookie && stored.toLowerCase() === cookie.toLowerCase(), 'the answer gives the stored form of the same token');
    assert.equal((await call(demo.app, `/rest/City(${key})?$lock=false`, { cookie: stored })).body.result, true);
  });

  it('refuses a GET $lock of a cross-site navigation (Sec-Fetch-Site: cross-site, 403 7046); same-site and header-less clients lock', async () => {
    const key = await newCity(demo.ds);
    const a = client(demo.app);
    await a.call('/rest/$info');
    const cross = await call(demo.app, `/rest/City(${key})?$lock=true`, { cookie: a.cookie, headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' } });
    assert.equal(cross.status, 403, JSON.stringify(cross.body));
    assert.equal(errCode(cross), 7046);
    assert.equal(await lockRows(demo.ds, key), 0);
    const same = await call(demo.app, `/rest/City(${key})?$lock=true`, { cookie: a.cookie, headers: { 'sec-fetch-site': 'same-origin' } });
    assert.equal(same.body.result, true, JSON.stringify(same.body));
  });

  it("keeps at most 256 characters of the locker's User-Agent and Host", async () => {
    const key = await newCity(demo.ds);
    const a = client(demo.app, { 'user-agent': 'X'.repeat(5000) });
    assert.equal((await a.lock(`/rest/City(${key})`)).body.result, true);
    const refused = await client(demo.app).lock(`/rest/City(${key})`);
    assert.equal(refused.body.__STATUS.lockInfo.userAgent.length, 256);
  });

  it('refuses a lock past --max-locks-per-session with 429 (7044, Retry-After); a lock it holds is asked again freely, and an unlock makes room', async () => {
    const keys = [await newCity(demo.ds), await newCity(demo.ds), await newCity(demo.ds), await newCity(demo.ds)];
    const a = client(capped);
    for (const key of keys.slice(0, 3)) assert.equal((await a.lock(`/rest/City(${key})`)).body.result, true);
    const over = await a.lock(`/rest/City(${keys[3]})`);
    assert.equal(over.status, 429, JSON.stringify(over.body));
    assert.equal(errCode(over), 7044);
    assert.match(over.body.__ERROR[0].message, /holds 3 entity locks, the most it may \(--max-locks-per-session\)/);
    assert.equal(over.headers['retry-after'], '60');
    assert.equal(await lockRows(demo.ds, keys[3]), 0);
    assert.equal((await a.lock(`/rest/City(${keys[0]})`)).body.result, true, 'held already: not one more');
    assert.equal((await a.lock(`/rest/City(${keys[0]})`, false)).body.result, true);
    assert.equal((await a.lock(`/rest/City(${keys[3]})`)).body.result, true);
  });

  it('counts the cap in the lock\'s transaction: 10 locks of one session at once under a cap of 3 leave 3', async () => {
    const keys = await Promise.all(Array.from({ length: 10 }, () => newCity(demo.ds)));
    const a = client(capped);
    await a.call('/rest/$info');
    await a.lock(`/rest/City(${await newCity(demo.ds)})`, false);
    const answers = await Promise.all(keys.map((k) => a.lock(`/rest/City(${k})`)));
    assert.equal(answers.filter((r) => r.body.result === true).length, 3, JSON.stringify(answers.map((r) => r.status)));
    assert.equal(answers.filter((r) => r.status === 429).length, 7);
  });

  it('refuses entity.lock() to server code serving a request whose session is new (7053)', async () => {
    const key = await newCity(demo.ds);
    const core = coreOf(demo.ds);
    const session = core.sessions.guest();
    await assert.rejects(runAsCaller({ access: core.accessFor(session), session }, async () => (await demo.ds.City.get(key))!.lock()), (e: any) => e.code === 'LOCK_NEEDS_SESSION');
  });

  it('answers no success for a lock inside a transaction that rolls back: the session is stored again by the next lock, which holds', async () => {
    const key = await newCity(demo.ds);
    const core = coreOf(demo.ds);
    const s = await keptGuest(demo.ds);
    const as = <T>(fn: () => Promise<T>) => runAsCaller({ access: core.accessFor(s), session: s }, fn);
    await assert.rejects(as(() => demo.ds.transaction(async () => {
      assert.deepEqual(await (await demo.ds.City.get(key))!.lock(), { success: true });
      throw new Error('rolled back');
    })), /rolled back/);
    assert.equal(await rowsOf(demo.ds, SESSION_TABLE, 'id', s.id), 0);
    assert.equal(await lockRows(demo.ds, key), 0);
    assert.deepEqual(await as(async () => (await demo.ds.City.get(key))!.lock()), { success: true });
    assert.equal(await rowsOf(demo.ds, SESSION_TABLE, 'id', s.id), 1, 'stored again');
    assert.equal((await client(demo.app).lock(`/rest/City(${key})`)).body.__STATUS.status, 3, 'the lock holds');
  });
});

describe('$lock: user changes, administrators, and a logout at the same time', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo({ roles: ROLES });
  });
  after(() => demo.close());

  it('releases the locks of a user whose session logs in as another user without a logout', async () => {
    const key = await newCity(demo.ds);
    const a = client(demo.app);
    await login(a, 'alice');
    const id = await a.id();
    assert.equal((await a.lock(`/rest/City(${key})`)).body.result, true);
    await login(a, 'bob');
    // (another user's login gives the session a new id: alice's locks were held by the old one)
    assert.notEqual(await a.id(), id, 'a new id for bob');
    assert.equal(await rowsOf(demo.ds, LOCK_TABLE, 'session', id), 0);
    const admin = client(demo.app);
    await login(admin, 'admin');
    assert.equal((await admin.lock(`/rest/City(${key})`)).body.result, true);
  });

  it('lets a session without the update right release its own lock ($lock=false)', async () => {
    const key = await newCity(demo.ds);
    const bob = client(demo.app);
    await login(bob, 'bob');
    assert.equal((await bob.lock(`/rest/City(${key})`)).status, 403, 'bob may not lock City (no update right)');
    const res = await bob.lock(`/rest/City(${key})`, false);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.result, true);
  });

  it("lets an administrator's session release another session's lock with $lock=false; others still get status 3", async () => {
    const key = await newCity(demo.ds);
    const alice = client(demo.app);
    await login(alice, 'alice');
    assert.equal((await alice.lock(`/rest/City(${key})`)).body.result, true);
    const other = client(demo.app);
    await login(other, 'alice');
    assert.equal((await other.lock(`/rest/City(${key})`, false)).body.__STATUS.status, 3);
    const admin = client(demo.app);
    await login(admin, 'admin');
    assert.deepEqual((await admin.lock(`/rest/City(${key})`, false)).body, { result: true, __STATUS: { success: true } });
    assert.equal(await lockRows(demo.ds, key), 0);
    assert.equal((await update(admin, key, await stampOf(admin, key), 'Freed')).status, 200);
  });

  it(`leaves no lock when a lock and a logout of one session run at once (20 rounds, ${TEST_ENGINE})`, async () => {
    const leaked: number[] = [];
    for (let r = 0; r < 20; r++) {
      const key = await newCity(demo.ds);
      const a = client(demo.app);
      await login(a, 'alice');
      const id = await a.id();
      const [locked] = await Promise.all([a.call(`/rest/City(${key})?$lock=true`), a.call('/rest/$directory/logout', { method: 'POST' })]);
      assert.ok(locked.status === 200 || errCode(locked) === 7053, JSON.stringify(locked.body));
      if ((await rowsOf(demo.ds, LOCK_TABLE, 'session', id)) > 0) leaked.push(r);
    }
    assert.deepEqual(leaked, []);
  });
});
