// 4D's data change tracking over REST (issue 36; the core's side is core/change-tracking.test.ts),
// as 4D's docs use it: `$filter="__GlobalStamp > :1"` (and $orderby, $attributes) on a tracked
// dataclass, `__DeletedRecords` queried by `__Stamp > :1 and __TableName = :2` — a session seeing
// the drops of the dataclasses it may read only — neither written by any request, and both in the
// catalog. On the engine the run names (testDatabase).

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { buildServer } from '../../src/http/server.js';
import { openProject } from '../../src/project/open.js';
import { injected, tempDir, TEST_ENGINE, testDatabase } from '../support/helpers.js';

const KEY = { name: 'ID', type: 'long', identifying: true, autoincrement: true };
const MODEL = {
  name: 'TrackedRest',
  dataClasses: [
    { name: 'Item', trackChanges: true, attributes: [KEY, { name: 'name', type: 'string' }] },
    { name: 'Secret', trackChanges: true, attributes: [KEY, { name: 'name', type: 'string' }] },
    // not in the REST API at all: its drops neither
    { name: 'Hidden', trackChanges: true, exposed: false, attributes: [KEY, { name: 'name', type: 'string' }] },
  ],
};
// a guest may do anything but read Secret
const ROLES = {
  privileges: [{ privilege: 'spy', includes: [] }],
  roles: [],
  permissions: {
    allowed: [
      { applyTo: 'ds', type: 'datastore', read: ['guest'], create: ['guest'], update: ['guest'], drop: ['guest'], execute: ['guest'] },
      { applyTo: 'Secret', type: 'dataclass', read: ['spy'] },
    ],
  },
  restrictedByDefault: false,
  forceLogin: false,
};

type Json = Record<string, any>;
const q = (s: string) => encodeURIComponent(s);

describe(`change tracking over REST (${TEST_ENGINE})`, () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  const request = (url: string, method: 'GET' | 'POST' = 'GET', body?: unknown) => injected(app, url, method, body);
  const create = async (cls: string, name: string): Promise<Json> => {
    const res = await request(`/rest/${cls}?$method=update`, 'POST', { name });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Json;
  };
  before(async () => {
    writeFileSync(join(tmp.dir, 'model.json'), JSON.stringify(MODEL));
    writeFileSync(join(tmp.dir, 'roles.json'), JSON.stringify(ROLES));
    ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'data.sqlite')) });
    app = await buildServer(ds, { logLevel: 'silent' });
  });
  after(async () => {
    await app?.close();
    await ds?.close();
    tmp.remove();
  });

  it('answers what changed since a stamp with $filter="__GlobalStamp > :1", sorted and projected by it', async () => {
    const mark = await ds.getGlobalStamp();
    const a = await create('Item', 'a');
    const b = await create('Item', 'b');
    assert.equal(a.__GlobalStamp, mark + 1, 'a save answers the stamp it stored');
    const since = await request(`/rest/Item?$filter=${q('"__GlobalStamp > :1"')}&$params=${q(`'[${mark}]'`)}&$orderby=${q('__GlobalStamp desc')}&$attributes=__GlobalStamp,name`);
    assert.equal(since.status, 200, JSON.stringify(since.body));
    assert.deepEqual((since.body as Json).__ENTITIES.map((e: Json) => [e.name, e.__GlobalStamp]), [['b', b.__GlobalStamp], ['a', a.__GlobalStamp]]);
    const none = await request(`/rest/Item?$filter=${q('"__GlobalStamp > :1"')}&$params=${q(`'[${b.__GlobalStamp}]'`)}`);
    assert.equal((none.body as Json).__COUNT, 0);
  });

  it('answers the drops since a stamp from __DeletedRecords, the key as text and the dataclass named', async () => {
    const gone = await create('Item', 'gone');
    const mark = await ds.getGlobalStamp();
    const dropped = await request(`/rest/Item(${gone.__KEY})?$method=delete`, 'POST');
    assert.equal(dropped.status, 200, JSON.stringify(dropped.body));
    const res = await request(`/rest/__DeletedRecords?$filter=${q('"__Stamp > :1 and __TableName = :2"')}&$params=${q(`'[${mark},"Item"]'`)}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual((res.body as Json).__ENTITIES.map((e: Json) => [e.__PrimaryKey, e.__Stamp, e.__TableName, e.__TableNumber]), [[String(gone.__KEY), mark + 1, 'Item', 1]]);
  });

  it("shows a session only the drops of the dataclasses it may read", async () => {
    const secret = ds.dataClass('Secret')!.new();
    secret.set('name', 'hidden');
    await secret.save();
    const mark = await ds.getGlobalStamp();
    await secret.drop();
    assert.equal((await ds.dataClass('__DeletedRecords')!.query('__TableName = :1', 'Secret').toArray()).length, 1, 'the drop is recorded');
    const asGuest = await request(`/rest/__DeletedRecords?$filter=${q('"__Stamp > :1"')}&$params=${q(`'[${mark}]'`)}`);
    assert.equal(asGuest.status, 200, JSON.stringify(asGuest.body));
    assert.equal((asGuest.body as Json).__COUNT, 0, JSON.stringify(asGuest.body));
    const named = await request(`/rest/__DeletedRecords?$filter=${q('"__TableName = Secret"')}`);
    assert.equal((named.body as Json).__COUNT, 0);
    const hidden = ds.dataClass('Hidden')!.new();
    hidden.set('name', 'unexposed');
    await hidden.save();
    await hidden.drop();
    const all = await request('/rest/__DeletedRecords?$attributes=__TableName');
    assert.ok((all.body as Json).__ENTITIES.every((e: Json) => e.__TableName === 'Item'), JSON.stringify(all.body));
    const distinct = await request('/rest/__DeletedRecords/__TableName?$distinct=true');
    assert.deepEqual(distinct.body, ['Item'], JSON.stringify(distinct.body));
  });

  it('answers a page stamp a sync may resume from while a tracked write is under way: the write is found after it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = ds.transaction(async () => {
      const e = ds.dataClass('Item')!.new();
      e.set('name', 'in flight');
      await e.save();
      await gate;
      return e;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const page = request(`/rest/Item?$filter=${q('"name = :1"')}&$params=${q(`'["in flight"]'`)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    const [written, first] = await Promise.all([slow, page]);
    const mark = (first.body as Json).__GlobalStamp as number;
    const seen = (first.body as Json).__COUNT as number;
    const next = await request(`/rest/Item?$filter=${q('"__GlobalStamp > :1 and name = :2"')}&$params=${q(`'[${mark},"in flight"]'`)}`);
    assert.equal(seen + (next.body as Json).__COUNT, 1, `the first page saw ${seen} with stamp ${mark}, the next sync ${JSON.stringify(next.body)}; the write's stamp ${String(written.get('__GlobalStamp'))}`);
  });

  it('refuses a body that writes __GlobalStamp (403, 7071) and takes one that gives it back as it was', async () => {
    const item = await create('Item', 'w');
    const changed = await request('/rest/Item?$method=update', 'POST', { __KEY: item.__KEY, __STAMP: item.__STAMP, name: 'w2', __GlobalStamp: 1 });
    assert.equal(changed.status, 403, JSON.stringify(changed.body));
    assert.equal((changed.body as Json).__ERROR[0].errCode, 7071);
    assert.match((changed.body as Json).__ERROR[0].message, /Item\.__GlobalStamp is kept by the server/);
    const back = await request('/rest/Item?$method=update', 'POST', { __KEY: item.__KEY, __STAMP: item.__STAMP, name: 'w2', __GlobalStamp: item.__GlobalStamp });
    assert.equal(back.status, 200, JSON.stringify(back.body));
    assert.ok((back.body as Json).__GlobalStamp > item.__GlobalStamp);
  });

  it('refuses every write of __DeletedRecords (403, 7071), and nothing changes', async () => {
    const before = (await request('/rest/__DeletedRecords?$attributes=ID')).body as Json;
    const attempts = [
      await request('/rest/__DeletedRecords?$method=update', 'POST', { __PrimaryKey: 'x', __Stamp: 1, __TableName: 'Item', __TableNumber: 1 }),
      await request('/rest/__DeletedRecords?$method=update', 'POST', { __KEY: before.__ENTITIES[0].__KEY, __STAMP: 1, __Stamp: 0 }),
      await request(`/rest/__DeletedRecords(${before.__ENTITIES[0].__KEY})?$method=delete`, 'POST'),
      await request(`/rest/__DeletedRecords?$filter=${q('"ID > 0"')}&$method=delete`, 'POST'),
    ];
    for (const res of attempts) {
      assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.equal((res.body as Json).__ERROR[0].errCode, 7071, JSON.stringify(res.body));
    }
    assert.deepEqual((await request('/rest/__DeletedRecords?$attributes=ID')).body, before);
  });

  it('lists __GlobalStamp among a tracked dataclass\'s attributes and __DeletedRecords among the dataclasses', async () => {
    const item = (await request('/rest/$catalog/Item')).body as Json;
    const stamp = item.attributes.find((a: Json) => a.name === '__GlobalStamp');
    assert.equal(stamp?.type, 'long64', JSON.stringify(item.attributes));
    assert.equal(stamp?.readOnly, true);
    const catalog = (await request('/rest/$catalog')).body as Json;
    assert.ok(catalog.dataClasses.some((d: Json) => d.name === '__DeletedRecords'), JSON.stringify(catalog));
    const described = (await injected(app, '/rest/$catalog/__DeletedRecords', 'GET', undefined, { prefer: 'extensions' })).body as Json;
    assert.deepEqual({ ...described.sessionMay, read: undefined, methods: undefined, restricted: undefined }, { read: undefined, create: false, update: false, drop: false, methods: undefined, restricted: undefined });
    const api = (await request('/rest/$openapi')).body as Json;
    const paths = Object.entries(api.paths as Record<string, Json>).filter(([path]) => path.startsWith('/rest/__DeletedRecords'));
    assert.ok(paths.length > 0, 'the API description shows the reads');
    assert.deepEqual(paths.filter(([, ops]) => ops.post !== undefined).map(([path]) => path), [], 'and offers no write');
    // a tracked dataclass's reads describe their stream too
    const items = (api.paths as Record<string, Json>)['/rest/Item'].get;
    assert.ok(items.parameters.some((p: Json) => p.name === '$method' && p.schema.enum.includes('watch')), JSON.stringify(items.parameters));
    assert.ok(items.responses['200'].content['text/event-stream'], JSON.stringify(items.responses['200']));
    // (and the document stays valid OpenAPI 3.1 with them: a media type has no description of its own)
    const valid = await new Validator().validate(api as never);
    assert.equal(valid.valid, true, JSON.stringify(valid.errors)?.slice(0, 1000));
  });
});
