// Lean answers (issue 39, review): a cookie-less guest gets its cookie where its next request
// must be the same session (a lock, a query path refused for want of one), the core's own reads
// of a session's id give no cookie, and every failure names its request (X-Request-Id), thrown
// or answered.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDemo, type DemoFixture } from '../support/helpers.js';
import { call, cookieOf, type Answer } from './sessions-shared.js';

let demo: DemoFixture;
before(async () => {
  demo = await openDemo();
});
after(() => demo.close());

async function newCity(): Promise<number> {
  const c = demo.ds.City.new();
  c.set('name', `Lean ${Math.random()}`);
  await c.save();
  return Number(c.getKey());
}

/** A client with a cookie jar. */
function jar() {
  let cookie: string | undefined;
  return async (url: string, o: Parameters<typeof call>[2] = {}): Promise<Answer> => {
    const res = await call(demo.app, url, { ...o, cookie });
    cookie = cookieOf(res) ?? cookie;
    return res;
  };
}

describe('lean answers: cookies where the next request must be the same session', () => {
  it('a client that only read, refused a lock (7053), gets the cookie it is told to send back: its next $lock=true locks', async () => {
    const key = await newCity();
    const c = jar();
    assert.equal((await c(`/rest/City(${key})`)).headers['set-cookie'], undefined);
    const refused = await c(`/rest/City(${key})?$lock=true`);
    assert.equal(refused.status, 409);
    assert.match(String(cookieOf(refused)), /^4DSID_Demo=[0-9a-f]{32}$/);
    assert.deepEqual((await c(`/rest/City(${key})?$lock=true`)).body, { result: true, __STATUS: { success: true } });
    assert.equal((await c(`/rest/City(${key})?$lock=false`)).body.result, true);
  });

  it('a client asking $querypath=true gets a cookie: its next one is recorded, and read back by GET /rest/$querypath', async () => {
    const c = jar();
    const url = `/rest/Employee?$filter=${encodeURIComponent('"salary > 50000"')}&$querypath=true&$top=0`;
    assert.ok(cookieOf(await c(url)));
    const { body } = await c(url);
    assert.deepEqual((await c('/rest/$querypath')).body, { __queryPath: body.__queryPath });
  });

  it("a guest's write that keeps nothing sets no cookie (the lock checks read the id without showing it)", async () => {
    const key = await newCity();
    const stamp = (await call(demo.app, `/rest/City(${key})`)).body.__STAMP;
    const res = await call(demo.app, '/rest/City?$method=update', { method: 'POST', body: { __KEY: String(key), __STAMP: stamp, name: 'renamed' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.headers['set-cookie'], undefined);
  });

  it('a failure answered rather than thrown (a single update refused, 409) names its request in X-Request-Id', async () => {
    const key = await newCity();
    const res = await call(demo.app, '/rest/City?$method=update', { method: 'POST', body: { __KEY: String(key), __STAMP: 999999, name: 'x' } });
    assert.equal(res.status, 409, JSON.stringify(res.body));
    assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });
});
