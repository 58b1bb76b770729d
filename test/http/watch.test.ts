// Live feeds over Server-Sent Events (issue 36): GET …?$method=watch on a query of a tracked
// dataclass, on one entity or on an entity set, over a real socket — the first event with the stamp, `entity`
// events shaped as a read of the URL shows them (a guest never receives an attribute it may not
// read), `remove` events for what leaves or is dropped, ids that Last-Event-ID resumes from, the
// changes another instance makes, and the refusals made before a stream starts. On the engine the
// run names (testDatabase).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { buildServer } from '../../src/http/server.js';
import { openProject } from '../../src/project/open.js';
import { tempDir, TEST_ENGINE, testDatabase } from '../support/helpers.js';
import { LIVE_MODEL, LIVE_ROLES, writeLiveProject } from '../support/live-project.js';
import { openStream } from '../support/sse-client.js';

const MODEL = LIVE_MODEL;
const ROLES = LIVE_ROLES;
describe(`live feeds over Server-Sent Events (${TEST_ENGINE})`, () => {
  const tmp = tempDir();
  let db: string;
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  let base: string;
  const post = async (url: string, body: unknown) => {
    const res = await fetch(`${base}${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  before(async () => {
    // a login that gives the books privilege (the session is stored: logging out ends it)
    writeLiveProject(tmp.dir, MODEL, ROLES, { DataStore: `import { Datastore, exposed, session } from 'dataset-rest';
export default class DataStore extends Datastore {
  @exposed
  authentify() {
    session().setPrivileges({ privileges: ['books'], userName: 'bookkeeper' });
    return true;
  }
}
` });
    db = await testDatabase(join(tmp.dir, 'data.sqlite'));
    ds = await openProject(tmp.dir, { db });
    app = await buildServer(ds, { logLevel: 'silent' });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    // (fetch's abort of a stream leaves undici's socket open, its stream ended by the server: the
    // test's own sockets, which the close would wait for until their keep-alive ran out)
    app?.server.closeAllConnections();
    await app?.close();
    await ds?.close();
    tmp.remove();
  });

  it('streams the entities a query selects as they change, as the session may see them, and removes what leaves', async () => {
    const s = await openStream(base, `/rest/Item?$filter=${encodeURIComponent('"price > :1"')}&$params=${encodeURIComponent("'[10]'")}&$method=watch`);
    try {
      assert.equal(s.res.status, 200);
      assert.match(s.res.headers.get('content-type') ?? '', /^text\/event-stream/);
      assert.equal(s.res.headers.get('content-encoding'), null, 'never compressed');
      const [ready] = await s.until(1);
      assert.equal(ready.event, 'ready');
      assert.equal(Number(ready.id), await ds.getGlobalStamp());
      const dear = await post('/rest/Item?$method=update', { name: 'dear', price: 50, cost: 20 });
      const cheap = await post('/rest/Item?$method=update', { name: 'cheap', price: 5, cost: 1 });
      const events = await s.until(2);
      assert.equal(events[1].event, 'entity');
      assert.equal(events[1].data.__KEY, String(dear.body.__KEY));
      assert.equal(events[1].data.name, 'dear');
      assert.equal(events[1].data.cost, undefined, 'a guest never receives an attribute it may not read');
      assert.equal(events[1].id, String(dear.body.__GlobalStamp));
      // out of the filter: removed (and what the filter never selected, "cheap", is not told at all)
      await post('/rest/Item?$method=update', { __KEY: dear.body.__KEY, __STAMP: dear.body.__STAMP, price: 1 });
      await s.until(3);
      assert.deepEqual([s.events[2].event, s.events[2].data], ['remove', { __KEY: String(dear.body.__KEY) }], 'the next event is dear leaving: none came for cheap');
      assert.notEqual(s.events[2].data.__KEY, String(cheap.body.__KEY));
      // a drop is always told (cheap, and final), in the filter or out of it
      await post(`/rest/Item(${dear.body.__KEY})?$method=delete`, undefined);
      await s.until(4);
      assert.deepEqual([s.events[3].event, s.events[3].data], ['remove', { __KEY: String(dear.body.__KEY) }]);
      const ids = s.events.map((e) => Number(e.id));
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b), 'ids in stamp order');
    } finally {
      await s.close();
    }
  });

  it('replays every change after Last-Event-ID, none twice, then goes on', async () => {
    const mark = await ds.getGlobalStamp();
    const a = await post('/rest/Item?$method=update', { name: 'a', price: 100 });
    const b = await post('/rest/Item?$method=update', { name: 'b', price: 200 });
    const s = await openStream(base, '/rest/Item?$method=watch&$attributes=name', { 'last-event-id': String(mark) });
    try {
      const events = await s.until(3);
      assert.equal(events[0].id, String(mark), "a resumed stream's ready names where it resumes from: a connection lost before the replay resumes there again");
      assert.deepEqual(events.slice(1).map((e) => [e.event, e.data.__KEY, e.data.name]), [['entity', String(a.body.__KEY), 'a'], ['entity', String(b.body.__KEY), 'b']]);
      assert.equal(events[1].data.price, undefined, '$attributes shapes each event');
      const c = await post('/rest/Item?$method=update', { name: 'c', price: 300 });
      await s.until(4);
      assert.equal(s.events[3].data.__KEY, String(c.body.__KEY));
      assert.equal(s.events.length, 4);
    } finally {
      await s.close();
    }
  });

  it("follows one entity and no other, and another instance's changes reach it", async () => {
    const one = await post('/rest/Item?$method=update', { name: 'one', price: 1 });
    const s = await openStream(base, `/rest/Item(${one.body.__KEY})?$method=watch`);
    const other = await openProject(tmp.dir, { db });
    try {
      await s.until(1);
      await post('/rest/Item?$method=update', { name: 'someone else', price: 2 });
      // through the other instance: its poll of the global stamp brings it here
      const e = (await other.dataClass('Item')!.get(one.body.__KEY))!;
      e.set('name', 'one, renamed elsewhere');
      await e.save();
      const events = await s.until(2);
      assert.equal(events[1].event, 'entity');
      assert.equal(events[1].data.name, 'one, renamed elsewhere');
      assert.equal(events[1].data.__entityModel, 'Item', 'shaped as a read of /rest/Item(key)');
      assert.equal(events.length, 2, JSON.stringify(events));
    } finally {
      await s.close();
      await other.close();
    }
  });

  it("follows an entity set's members (no other enters it), narrowed by a filter, and ends when the set is released", async () => {
    const mk = await fetch(`${base}/rest/Item?$method=update`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ name: 'set a', price: 1000 }, { name: 'set b', price: 1001 }]) });
    const [a, b] = ((await mk.json()) as { __ENTITIES: Record<string, any>[] }).__ENTITIES;
    const made = await fetch(`${base}/rest/Item?$filter=${encodeURIComponent('"price >= 1000"')}&$method=entityset`);
    assert.equal(made.status, 200);
    const cookie = (made.headers.get('set-cookie') ?? '').split(';')[0];
    const id = String(((await made.json()) as { __ENTITYSET: string }).__ENTITYSET).split('/').pop();
    const s = await openStream(base, `/rest/Item/$entityset/${id}?$filter=${encodeURIComponent('"price < 5000"')}&$method=watch`, { cookie });
    try {
      await s.until(1);
      // a new entity the set's query would select does not enter the set
      await post('/rest/Item?$method=update', { name: 'set newcomer', price: 1002 });
      await post('/rest/Item?$method=update', { __KEY: a.__KEY, __STAMP: a.__STAMP, name: 'set a, renamed' });
      const events = await s.until(2);
      assert.deepEqual([events[1].event, events[1].data.__KEY, events[1].data.name], ['entity', String(a.__KEY), 'set a, renamed']);
      // out of the stream's filter, then dropped: removed each time
      await post('/rest/Item?$method=update', { __KEY: b.__KEY, __STAMP: b.__STAMP, price: 9000 });
      await post(`/rest/Item(${a.__KEY})?$method=delete`, undefined);
      await s.until(4);
      assert.deepEqual(s.events.slice(2).map((e) => [e.event, e.data.__KEY]), [['remove', String(b.__KEY)], ['remove', String(a.__KEY)]]);
      assert.equal(s.events.length, 4, JSON.stringify(s.events));
      const released = await fetch(`${base}/rest/Item/$entityset/${id}?$method=release`, { headers: { cookie } });
      assert.equal(released.status, 200, await released.text());
      await post('/rest/Item?$method=update', { name: 'after the release', price: 3 });
      const last = await s.until(5);
      assert.deepEqual([last[4].event, last[4].data.reason], ['reset', 'the entity set was released or expired']);
      assert.equal(await s.ends(), true);
    } finally {
      await s.close();
    }
  });

  it("shows a logged-in session what its privileges let it read, and ends its stream when it logs out", async () => {
    const login = await fetch(`${base}/rest/$catalog/authentify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]' });
    assert.equal(login.status, 200, await login.clone().text());
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    const s = await openStream(base, '/rest/Item?$method=watch', { cookie });
    try {
      await s.until(1);
      const priced = await post('/rest/Item?$method=update', { name: 'priced', price: 7, cost: 3 });
      const [, event] = await s.until(2);
      assert.equal(event.data.__KEY, String(priced.body.__KEY));
      assert.equal(event.data.cost, 3, 'the books privilege reads the cost');
      const out = await fetch(`${base}/rest/$directory/logout`, { method: 'POST', headers: { cookie, origin: base } });
      assert.equal(out.status, 200, await out.text());
      await post('/rest/Item?$method=update', { name: 'after logout', price: 8, cost: 4 });
      const events = await s.until(3);
      assert.equal(events[2].event, 'reset');
      assert.match(String(events[2].data.reason), /session ended/);
      assert.equal(await s.ends(), true, 'the server ends the stream');
      assert.equal(events.length, 3, JSON.stringify(events));
    } finally {
      await s.close();
    }
  });

  it('judges each of many streams by its own filter (one batch, every filter), and a stream that joins a filter already followed is told what comes', async () => {
    // 16 streams of one guest (20 at most an address) over 8 filters (price above 0, 10, … 70): two a filter, which share its judgement
    const marker = `many-${Date.now()}`;
    const filter = (i: number) => `/rest/Item?$filter=${encodeURIComponent(`"name = '${marker}' and price > ${i * 10}"`)}&$method=watch`;
    const streams = await Promise.all(Array.from({ length: 16 }, (_, n) => openStream(base, filter(n % 8))));
    try {
      await Promise.all(streams.map((s) => s.until(1)));
      const mid = await post('/rest/Item?$method=update', { name: marker, price: 35 });
      // (streams of filters above 35 are told nothing: wait for those told, then a write all are told of)
      const all = await post('/rest/Item?$method=update', { name: marker, price: 1000 });
      await Promise.all(streams.map((s, n) => s.until(n % 8 <= 3 ? 3 : 2)));
      for (const [n, s] of streams.entries()) {
        const told = s.events.slice(1).map((e) => [e.event, e.data.__KEY]);
        const expected = [...(n % 8 <= 3 ? [['entity', String(mid.body.__KEY)]] : []), ['entity', String(all.body.__KEY)]];
        assert.deepEqual(told, expected, `stream ${n} (price > ${(n % 8) * 10})`);
      }
      // a late stream on a filter the others follow: what comes from now, as they are told it
      const late = await openStream(base, filter(3));
      await late.until(1);
      await post('/rest/Item?$method=update', { __KEY: mid.body.__KEY, __STAMP: mid.body.__STAMP, price: 5 });
      await late.until(2);
      await streams[3].until(4);
      assert.deepEqual([late.events[1].event, late.events[1].data], ['remove', { __KEY: String(mid.body.__KEY) }]);
      assert.deepEqual(streams[3].events[3], late.events[1], 'told as the stream that was there');
      await late.close();
    } finally {
      await Promise.all(streams.map((s) => s.close()));
    }
  });

  it('ends its streams when the server closes, so that closing does not wait for them', async () => {
    const second = await buildServer(ds, { logLevel: 'silent' });
    const at = await second.listen({ host: '127.0.0.1', port: 0 });
    const s = await openStream(at, '/rest/Item?$method=watch');
    try {
      await s.until(1);
      let timer: NodeJS.Timeout | undefined;
      const closed = await Promise.race([second.close().then(() => 'closed'), new Promise((resolve) => (timer = setTimeout(() => resolve('still open after 5 s'), 5000)))]);
      clearTimeout(timer);
      assert.equal(closed, 'closed');
    } finally {
      await s.close();
    }
  });

  it('refuses before the stream starts: an untracked dataclass, a bad Last-Event-ID, a filter mistake, an unknown entity', async () => {
    const cases: [string, Record<string, string>, number, number][] = [
      ['/rest/Plain?$method=watch', {}, 400, 7007],
      ['/rest/Item?$method=watch', { 'last-event-id': 'yesterday' }, 400, 7054],
      ['/rest/Item?$method=watch', { 'last-event-id': '999999999' }, 400, 7054],
      [`/rest/Item?$filter=${encodeURIComponent('"nmae = 1"')}&$method=watch`, {}, 400, 7017],
      ['/rest/Item(424242)?$method=watch', {}, 404, 1542],
      ['/rest/Item/$entityset/abc?$method=watch', {}, 404, 1802],
      ['/rest/Item/$entityset/abc/name?$method=watch', {}, 400, 7004],
      ['/rest/Item?$method=watch&$top=5', {}, 400, 7007],
      ['/rest/Item?$method=watch&$orderby=name', {}, 400, 7007],
    ];
    const head = await fetch(`${base}/rest/Item?$method=watch`, { method: 'HEAD' });
    assert.equal(head.status, 405, 'HEAD opens no stream');
    for (const [url, headers, status, errCode] of cases) {
      const res = await fetch(`${base}${url}`, { headers });
      const body = (await res.json()) as { __ERROR: { errCode: number; message: string }[] };
      assert.equal(res.status, status, `${url}: ${JSON.stringify(body)}`);
      assert.equal(body.__ERROR[0].errCode, errCode, `${url}: ${JSON.stringify(body)}`);
    }
  });
});
