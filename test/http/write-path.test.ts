// The write path as issue 16 made it (rest/run/handlers/write.ts, datastore/writes/writes.ts, rules.ts,
// files.ts): a saved entity answered from its save is the entity a read of it shows, byte for
// byte — every type of value, relations to targets that exist, that are gone, that the save named,
// to the dataclass itself — and read again where it may not be (aliases, user code in the save, a
// key twice in a batch); an $atomic batch without savepoints keeps all or nothing, moves the global
// stamp, checks its relations and another session's lock on any of its entities; uploads of one
// chunk and of several are stored complete, and the orphan chunks are the sweep's. On both engines.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { FILE_CHUNK } from '../../src/config/limits.js';
import { coreOf, Datastore, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import type { Entity } from '../../src/datastore/entities/entity.js';
import { buildModel } from '../../src/model/load-model.js';
import { cookieName } from '../../src/rest/scope/scope.js';
import { buildServer } from '../../src/http/server.js';
import { openStorage, databaseTarget } from '../../src/storage/open.js';
import { tempDir, testDatabase } from '../support/helpers.js';

const MODEL = {
  name: 'WritePath',
  dataClasses: [
    {
      name: 'Category',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
        { name: 'items', kind: 'relatedEntities', type: 'ItemSelection', path: 'category' },
      ],
    },
    {
      name: 'Item',
      collectionName: 'ItemSelection',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string', indexed: true },
        { name: 'code', type: 'string', unique: true },
        { name: 'price', type: 'number' },
        { name: 'qty', type: 'long' },
        { name: 'big', type: 'long64' },
        { name: 'hours', type: 'duration' },
        { name: 'created', type: 'date' },
        { name: 'day', type: 'date', dateOnly: true },
        { name: 'flag', type: 'bool' },
        { name: 'extra', type: 'object' },
        { name: 'ref', type: 'uuid' },
        { name: 'doc', type: 'blob' },
        { name: 'category', kind: 'relatedEntity', type: 'Category', foreignKey: 'categoryID' },
        { name: 'parent', kind: 'relatedEntity', type: 'Item', foreignKey: 'parentID' },
        { name: 'children', kind: 'relatedEntities', type: 'ItemSelection', path: 'parent' },
        { name: 'categoryName', kind: 'alias', path: 'category.name' },
      ],
    },
    {
      name: 'Note',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'text', type: 'string' },
        { name: 'mark', type: 'string' },
      ],
    },
  ],
};

type Json = Record<string, any>;
type Answer = { status: number; body: any; headers: Record<string, unknown> };

/** Every attribute of Item but its alias: an answer that comes from the save. */
const PLAIN = '$attributes=ID,name,code,price,qty,big,hours,created,day,flag,extra,ref,doc,category,parent,children';

describe('the write path: answers from saves, batches, uploads', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  let codes = 0;
  const COOKIE = cookieName(MODEL.name);

  const call = async (url: string, o: { method?: InjectOptions['method']; body?: unknown; cookie?: string; type?: string } = {}): Promise<Answer> => {
    const headers: Record<string, string> = { ...(o.cookie ? { cookie: o.cookie } : {}), ...(o.type ? { 'content-type': o.type } : {}) };
    const res = await app.inject({ method: o.method ?? 'GET', url: `/rest/${url}`, headers, ...(o.body === undefined ? {} : { payload: o.body as object }) });
    let body: unknown = res.body;
    try {
      body = JSON.parse(res.body);
    } catch {
      // not JSON
    }
    return { status: res.statusCode, body, headers: res.headers };
  };
  const post = (url: string, body: unknown, cookie?: string) => call(url, { method: 'POST', body, cookie });
  const read = async (dc: string, key: unknown, query = ''): Promise<Json> => (await call(`${dc}(${String(key)})${query ? `?${query}` : ''}`)).body;
  const globalStamp = async (): Promise<number> => (await call('Item?$top=0')).body.__GlobalStamp;
  const code = () => `C-${++codes}`;
  /** a new Item's body with a value of every type */
  const item = (n: number, more: Json = {}): Json => ({
    name: `item ${n}`, code: code(), price: n + 0.25, qty: n, big: 2 ** 40 + n, hours: 3_600_000 * n, created: `2021-03-0${(n % 9) + 1}T10:20:30.456Z`,
    day: `${(n % 28) + 1}!2!2020`, flag: n % 2 === 0, extra: { n, list: [1, 'two', null], nested: { ok: true } }, ref: '0123456789ABCDEF0123456789ABCDEF',
    category: { __KEY: String((n % 3) + 1) }, ...more,
  });
  /** An answered entity as a read of it shows it: the answer without uri (and, in a batch, as a top-level read without __entityModel). */
  const asRead = (answer: Json, single: boolean): Json => {
    const { uri, ...rest } = answer;
    assert.match(String(uri), new RegExp(`/rest/\\w+\\(${answer.__KEY}\\)$`));
    return single ? rest : { __entityModel: 'Item', ...rest };
  };
  /** Each answered entity is what a read with the same attributes shows now. */
  const sameAsRead = async (answers: Json[], query: string, single: boolean) => {
    for (const a of answers) assert.deepEqual(asRead(a, single), await read('Item', a.__KEY, query), `Item(${a.__KEY})`);
  };

  before(async () => {
    const db = await testDatabase(join(tmp.dir, 'write-path.sqlite'));
    ds = await Datastore.open(buildModel(MODEL), await openStorage(databaseTarget(db), { poolSize: 4 }));
    app = await buildServer(ds, { logLevel: 'silent' });
    const made = await post('Category?$method=update', [{ name: 'one' }, { name: 'two' }, { name: 'three' }, { name: 'doomed' }]);
    assert.equal(made.status, 200, JSON.stringify(made.body));
  });
  after(async () => {
    await app.close();
    await ds.close();
    tmp.remove();
  });

  it('answers a create and an update as a read of the entity shows it, with every type of value, and nulls for what was not given', async () => {
    for (const query of [PLAIN, '']) {
      const created = await post(`Item?$method=update${query ? `&${query}` : ''}`, item(1));
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal(created.body.__STAMP, 1);
      await sameAsRead([created.body], query, true);
      const bare = await post(`Item?$method=update${query ? `&${query}` : ''}`, { name: 'bare' });
      assert.equal(bare.body.price, null);
      await sameAsRead([bare.body], query, true);
      const updated = await post(`Item?$method=update${query ? `&${query}` : ''}`, { __KEY: created.body.__KEY, __STAMP: 1, qty: 77, day: null, extra: { again: [1] }, category: { __KEY: 2 } });
      assert.equal(updated.status, 200, JSON.stringify(updated.body));
      assert.equal(updated.body.__STAMP, 2);
      assert.equal(updated.body.qty, 77);
      await sameAsRead([updated.body], query, true);
      // the alias is read again: it follows the relation the update changed
      if (!query) assert.equal(updated.body.categoryName, 'two');
      const untouched = await post(`Item?$method=update${query ? `&${query}` : ''}`, { __KEY: created.body.__KEY, __STAMP: 2, name: 'renamed' });
      assert.equal(untouched.body.category.__deferred.__KEY, '2');
      await sameAsRead([untouched.body], query, true);
    }
  });

  it('answers a relation whose target was dropped since as null, as a read does, and one the update sets as it is', async () => {
    const doomed = await read('Category', 4);
    const saved = (await post(`Item?$method=update&${PLAIN}`, item(2, { category: { __KEY: 4 } }))).body;
    assert.equal(saved.category.__deferred.__KEY, '4');
    assert.deepEqual((await post(`Category(4)?$method=delete`, undefined)).body, { ok: true });
    const updated = await post(`Item?$method=update&${PLAIN}`, { __KEY: saved.__KEY, __STAMP: saved.__STAMP, qty: 5 });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.category, null, 'a relation to a dropped entity reads null');
    await sameAsRead([updated.body], PLAIN, true);
    const moved = await post(`Item?$method=update&${PLAIN}`, { __KEY: saved.__KEY, __STAMP: updated.body.__STAMP, category: { __KEY: 3 } });
    assert.equal(moved.body.category.__deferred.__KEY, '3');
    await sameAsRead([moved.body], PLAIN, true);
    assert.equal(doomed.__KEY, '4');
    const refused = await post(`Item?$method=update`, item(3, { category: { __KEY: 4 } }));
    assert.equal(refused.status, 404);
    assert.match(refused.body.__ERROR[0].message, /Item\.category: Cannot find entity with "4" key in the "Category" dataclass/);
  });

  it('saves an $atomic batch in one transaction: answers as reads show them, moves the global stamp, a relation to the dataclass itself made earlier in the batch', async () => {
    const g0 = await globalStamp();
    const first = item(10, { ID: 100_000 });
    const list = [first, item(11, { parent: { __KEY: 100_000 } }), item(12, { category: { __KEY: 1 } }), item(13, { category: null })];
    const res = await post(`Item?$method=update&$atomic=true&${PLAIN}`, list);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.__ENTITIES.length, 4);
    assert.equal(res.body.__ENTITIES[1].parent.__deferred.__KEY, '100000');
    await sameAsRead(res.body.__ENTITIES, PLAIN, false);
    assert.ok((await globalStamp()) > g0, 'the global stamp moved');
    // the same with the alias shown: read again
    const aliased = await post('Item?$method=update&$atomic=true', [item(14), item(15)]);
    assert.deepEqual(aliased.body.__ENTITIES.map((e: Json) => e.categoryName), ['three', 'one']);
    await sameAsRead(aliased.body.__ENTITIES, '', false);
  });

  it('keeps nothing of an $atomic batch whose third entity names a target that is not there, or repeats a unique value; says which failed', async () => {
    const g0 = await globalStamp();
    const count0 = (await call('Item?$top=0')).body.__COUNT;
    const existing = (await post(`Item?$method=update&${PLAIN}`, item(20))).body;
    const missing = await post(`Item?$method=update&$atomic=true&${PLAIN}`, [
      { __KEY: existing.__KEY, __STAMP: existing.__STAMP, qty: 999 }, item(21), item(22, { category: { __KEY: 999 } }), item(23),
    ]);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.__ENTITIES[0].__STAMP, existing.__STAMP, 'the update is shown as stored: its stamp unchanged');
    assert.equal(missing.body.__ENTITIES[0].qty, existing.qty);
    assert.equal(missing.body.__ENTITIES[1].__KEY, undefined, 'a new entity not saved: the values it was sent with');
    assert.match(missing.body.__ENTITIES[2].__ERROR[0].message, /"999" key in the "Category" dataclass/);
    assert.equal(missing.body.__ENTITIES[3].__ERROR, undefined);
    const twice = item(24);
    const dup = await post(`Item?$method=update&$atomic=true`, [twice, item(25), { ...item(26), code: twice.code }]);
    assert.equal(dup.status, 409);
    assert.match(dup.body.__ENTITIES[2].__ERROR[0].message, /code/);
    assert.equal((await call('Item?$top=0')).body.__COUNT, count0 + 1, 'only the entity saved alone before');
    assert.equal((await read('Item', existing.__KEY)).qty, existing.qty);
    assert.ok((await globalStamp()) >= g0 + 1);
  });

  it('answers every entity of a batch that names one entity twice as it is stored at the end', async () => {
    const saved = (await post(`Item?$method=update&${PLAIN}`, item(30))).body;
    for (const atomic of [false, true]) {
      const stamp = (await read('Item', saved.__KEY)).__STAMP;
      // the first changes nothing (no save), the second saves: both show the entity as the second left it
      const res = await post(`Item?$method=update${atomic ? '&$atomic=true' : ''}&${PLAIN}`, [
        { __KEY: saved.__KEY, __STAMP: stamp }, { __KEY: saved.__KEY, __STAMP: stamp, qty: atomic ? 2 : 1 },
      ]);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      for (const e of res.body.__ENTITIES) {
        assert.equal(e.qty, atomic ? 2 : 1);
        assert.equal(e.__STAMP, stamp + 1);
      }
      await sameAsRead(res.body.__ENTITIES, PLAIN, false);
      // twice with the same stamp: the second save finds it changed, and shows it as stored
      const again = await post(`Item?$method=update${atomic ? '&$atomic=true' : ''}&${PLAIN}`, [
        { __KEY: saved.__KEY, __STAMP: stamp + 1, qty: 10 }, { __KEY: saved.__KEY, __STAMP: stamp + 1, qty: 11 },
      ]);
      assert.equal(again.status, atomic ? 409 : 200);
      assert.equal(again.body.__ENTITIES[1].__STATUS.status, 2);
      const stored = await read('Item', saved.__KEY);
      assert.equal(stored.qty, atomic ? 2 : 10);
      for (const e of again.body.__ENTITIES) assert.deepEqual([e.qty, e.__STAMP], [stored.qty, stored.__STAMP]);
    }
  });

  it('saves each entity of a batch without $atomic on its own: one failing keeps the others, answered as reads show them', async () => {
    const res = await post(`Item?$method=update&${PLAIN}`, [item(40), item(41, { category: { __KEY: 999 } }), item(42, { qty: 'many' }), item(43)]);
    assert.equal(res.status, 200);
    const [a, b, c, d] = res.body.__ENTITIES;
    assert.match(b.__ERROR[0].message, /"999" key/);
    assert.match(c.__ERROR[0].message, /Item\.qty \(long\) cannot take "many"/);
    await sameAsRead([a, d], PLAIN, false);
  });

  it('refuses an $atomic batch of updates when another session holds one of its entities locked (423), saving none of them', async () => {
    const [a, b] = (await post(`Item?$method=update&${PLAIN}`, [item(50), item(51)])).body.__ENTITIES;
    const first = await call('$info');
    const cookie = (first.headers['set-cookie'] as string | string[] | undefined);
    const line = (Array.isArray(cookie) ? cookie : [String(cookie)]).find((l) => l.startsWith(`${COOKIE}=`));
    assert.ok(line, 'a session cookie');
    const locker = line.split(';')[0];
    const locked = await call(`Item(${b.__KEY})/?$lock=true`, { cookie: locker });
    assert.deepEqual(locked.body, { result: true, __STATUS: { success: true } });
    for (const atomic of [true, false]) {
      const res = await post(`Item?$method=update${atomic ? '&$atomic=true' : ''}&${PLAIN}`, [{ __KEY: a.__KEY, __STAMP: a.__STAMP, qty: 500 }, { __KEY: b.__KEY, __STAMP: b.__STAMP, qty: 501 }]);
      assert.equal(res.status, atomic ? 423 : 200, JSON.stringify(res.body));
      assert.equal(res.body.__ENTITIES[1].__STATUS.status, 3);
      assert.equal(res.body.__ENTITIES[1].__ERROR[0].errCode, 7052);
      assert.equal((await read('Item', b.__KEY)).qty, b.qty);
      if (atomic) assert.equal((await read('Item', a.__KEY)).qty, a.qty, 'nothing of the batch saved');
      else {
        assert.equal((await read('Item', a.__KEY)).qty, 500, 'the other entity saved on its own');
        await sameAsRead([res.body.__ENTITIES[0]], PLAIN, false);
      }
    }
    // the locker itself saves it
    const mine = await post(`Item?$method=update&${PLAIN}`, { __KEY: b.__KEY, __STAMP: b.__STAMP, qty: 502 }, locker);
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    await sameAsRead([mine.body], PLAIN, true);
  });

  it('answers what user code in the save did: an afterSave that saves the entity again is answered as stored', async () => {
    ds.Note.defineEvent('saving', function (this: Entity) {
      this.set('mark', 'saving ran');
    });
    ds.Note.defineEvent('afterSave', async function (this: Entity) {
      if (this.get('text') !== 'again') return;
      const copy = (await ds.Note.get(this.getKey())) as Entity;
      copy.set('text', 'changed by afterSave');
      await copy.save();
    });
    const res = await post('Note?$method=update', { text: 'again' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.text, 'changed by afterSave');
    assert.equal(res.body.mark, 'saving ran');
    assert.equal(res.body.__STAMP, 2);
    const batch = await post('Note?$method=update&$atomic=true', [{ text: 'a' }, { text: 'b' }]);
    assert.equal(batch.status, 200, JSON.stringify(batch.body));
    assert.deepEqual(batch.body.__ENTITIES.map((e: Json) => e.mark), ['saving ran', 'saving ran']);
  });

  it('stores an upload of one chunk and one of several complete: attachable, read back whole; leaves chunks without a file to the sweep', async () => {
    const files = coreOf(ds).files;
    for (const size of [10_000, FILE_CHUNK, FILE_CHUNK * 2 + 123]) {
      const bytes = Buffer.alloc(size);
      for (let i = 0; i < size; i++) bytes[i] = (i * 7 + size) % 251;
      const up = await call('$upload?$binary=true', { method: 'POST', body: bytes, type: 'application/octet-stream' });
      assert.equal(up.status, 200, JSON.stringify(up.body));
      const pending = await files.findUpload(up.body.ID);
      assert.equal(pending?.size, size);
      assert.equal(pending?.kind, 'binary');
      const saved = await post('Item?$method=update', { name: `doc ${size}`, doc: { ID: up.body.ID } });
      assert.equal(saved.status, 200, JSON.stringify(saved.body));
      const back = await app.inject({ url: saved.body.doc.__deferred.uri });
      assert.equal(back.statusCode, 200);
      assert.ok(back.rawPayload.equals(bytes), `the ${size} bytes read back`);
      assert.equal(await files.findUpload(up.body.ID), undefined, 'claimed');
    }
    // chunks left without their file (a crash): an upload does not look for them, the sweep does
    const storage = coreOf(ds).storage;
    const p = storage.dialect.sql.placeholder;
    const orphans = async () => Number((await storage.get('SELECT COUNT(*) AS n FROM "__dataset_blob_chunks" WHERE "blob" = 987654320'))?.n);
    await storage.run(`INSERT INTO "__dataset_blob_chunks" ("blob", "seq", "data") VALUES (987654320, 0, ${p(1)})`, [Buffer.from([0])]);
    assert.equal((await call('$upload?$binary=true', { method: 'POST', body: Buffer.from('x'), type: 'application/octet-stream' })).status, 200);
    assert.equal(await orphans(), 1);
    await files.sweep();
    assert.equal(await orphans(), 0);
  });

  it('sweeps an expired upload at a later upload (a second apart at least)', async () => {
    const files = coreOf(ds).files;
    const up = await call('$upload?$binary=true&$timeout=1', { method: 'POST', body: Buffer.from('soon gone'), type: 'application/octet-stream' });
    const id = (await files.findUpload(up.body.ID))?.id;
    assert.ok(id !== undefined);
    await new Promise((r) => setTimeout(r, 1100));
    assert.equal((await call('$upload?$binary=true', { method: 'POST', body: Buffer.from('next'), type: 'application/octet-stream' })).status, 200);
    assert.equal(await files.info(id), undefined, 'swept');
  });
});
