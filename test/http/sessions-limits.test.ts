// Web sessions (issue 13): expiry, quotas and failed-login throttling on an injectable clock, the
// cap on live guest sessions and the cap on entity sets per session. The other files of sessions
// are sessions-*.test.ts and http-guards.test.ts; what they share is sessions-shared.ts.
// (test:quick leaves this file out: limits: session counts and their expiry.)

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { coreOf } from '../../src/datastore/datastore.js';
import { sessionInternals } from '../../src/datastore/sessions/session.js';
import { buildServer } from '../../src/http/server.js';
import { openDemo, type DemoFixture } from '../support/helpers.js';
import { ROLES, call, cookieOf, errCode, login, info } from './sessions-shared.js';

// the demo with its roles.json, shared by the suites that do not move a clock or need options of the datastore
let demo: DemoFixture;
before(async () => {
  demo = await openDemo({ roles: ROLES });
});
after(() => demo.close());

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
