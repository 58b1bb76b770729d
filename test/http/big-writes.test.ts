// Big writes (issue 19): a batch has a size limit (--max-batch-entities), refused before anything
// is written; a big batch and a big filtered delete give the event loop turns as they run, so a
// read issued while one runs is answered before it ends — and they stay what they were: an
// $atomic batch and a filtered delete are all or nothing, seen by others only once committed.
// (test:quick leaves this file out: limits under load: batches of thousands of entities.)

import { deepStrictEqual, ok, strictEqual } from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_MAX_BATCH_ENTITIES } from '../../src/config/limits.js';
import { coreOf, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { openProject } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { BLOB_TABLE } from '../../src/storage/schema.js';
import { LoopTurns } from '../../src/util/loop-turns.js';
import { tempDir, testDatabase, TEST_ENGINE } from '../support/helpers.js';

const MODEL = {
  name: 'BigWrites',
  dataClasses: [{ name: 'Item', attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'qty', type: 'long' }, { name: 'price', type: 'number' }, { name: 'doc', type: 'blob' }] }],
};

type Answer = { status: number; body: any };

/**
 * The size of the big batch: on SQLite 10,000, the most a batch may carry by default; on
 * PostgreSQL, where each save is a few round trips (≈5 ms each on a busy test machine), 4,000.
 */
const BATCH = TEST_ENGINE === 'postgres' ? 4_000 : DEFAULT_MAX_BATCH_ENTITIES;

describe('big writes', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  const request = async (url: string, method: 'GET' | 'POST' = 'GET', body?: unknown, server = app): Promise<Answer> => {
    const res = await server.inject({ method, url, ...(body === undefined ? {} : { payload: body as object }) });
    return { status: res.statusCode, body: JSON.parse(res.body) };
  };
  const count = async (filter?: string) => (await request(`/rest/Item?$top=0${filter ? `&$filter=${encodeURIComponent(filter)}` : ''}`)).body.__COUNT as number;

  /** `n` items (qty 0…n-1) added straight into the table, in one statement. */
  async function fill(n: number): Promise<void> {
    const storage = coreOf(ds).storage;
    const now = Date.now();
    await storage.run(TEST_ENGINE === 'postgres'
      ? `INSERT INTO "Item" ("qty", "price", "__stamp", "__timestamp") SELECT g, g / 10.0, 1, ${now} FROM generate_series(0, ${n - 1}) AS g`
      : `WITH RECURSIVE g(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g WHERE i < ${n - 1}) INSERT INTO "Item" ("qty", "price", "__stamp", "__timestamp") SELECT i, i / 10.0, 1, ${now} FROM g`);
  }

  /**
   * Runs `write` and, at its first turn of the event loop (it has begun), issues `read`: the order
   * in which the two are answered. Reads are answered first only if the write lets them through.
   */
  async function readDuring(write: () => Promise<Answer>, read: () => Promise<Answer>): Promise<{ order: string[]; written: Answer; readAnswer: Answer }> {
    const order: string[] = [];
    const pass = LoopTurns.prototype.pass;
    let begun!: () => void;
    let turned = false;
    // (the read is issued from here, not from inside the write: it must not run in its transaction)
    const reading = new Promise<void>((resolve) => (begun = resolve)).then(read).then((a) => (order.push('read'), a));
    LoopTurns.prototype.pass = function (this: LoopTurns) {
      turned = true;
      begun();
      return pass.call(this);
    };
    try {
      const written = await write().then((a) => (order.push('write'), a));
      ok(turned, 'the write gave the loop no turn');
      return { order, written, readAnswer: await reading };
    } finally {
      LoopTurns.prototype.pass = pass;
    }
  }

  before(async () => {
    writeFileSync(join(tmp.dir, 'model.json'), JSON.stringify(MODEL));
    ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'big.sqlite')), roles: false, poolSize: 4 });
    app = await buildServer(ds, { logLevel: 'silent', maxBodyBytes: 64 * 1024 * 1024 });
    await fill(1);
  });

  after(async () => {
    await app.close();
    await ds.close();
    tmp.remove();
  });

  test('a batch of more entities than --max-batch-entities is refused 400 (7009) naming the limit, and nothing of it is written', async () => {
    const small = await buildServer(ds, { logLevel: 'silent', maxBatchEntities: 5 });
    try {
      const before = await count();
      const six = Array.from({ length: 6 }, (_, i) => ({ qty: 1000 + i }));
      for (const url of ['/rest/Item?$method=update', '/rest/Item?$method=update&$atomic=true', '/rest/Item?$method=validate']) {
        const res = await request(url, 'POST', six, small);
        strictEqual(res.status, 400, url);
        strictEqual(res.body.__ERROR[0].errCode, 7009);
        ok(/6 entities/.test(res.body.__ERROR[0].message) && /5 at most \(--max-batch-entities\)/.test(res.body.__ERROR[0].message), res.body.__ERROR[0].message);
      }
      strictEqual(await count(), before);
      // as many as the limit: written
      const five = await request('/rest/Item?$method=update', 'POST', six.slice(0, 5), small);
      strictEqual(five.status, 200);
      strictEqual(await count(), before + 5);
      strictEqual((await request(`/rest/Item?$filter=${encodeURIComponent('qty >= 1000')}&$method=delete`, 'POST', undefined, small)).status, 200);
    } finally {
      await small.close();
    }
  });

  test(`a ${BATCH}-entity batch is written in full, and a read by key issued while it runs is answered before it ends`, async () => {
    const items = Array.from({ length: BATCH }, (_, i) => ({ qty: 100_000 + i, price: i }));
    const { order, written, readAnswer } = await readDuring(() => request('/rest/Item?$method=update&$attributes=qty', 'POST', items), () => request('/rest/Item(1)'));
    strictEqual(written.status, 200);
    strictEqual(written.body.__ENTITIES.length, BATCH);
    strictEqual(readAnswer.status, 200);
    deepStrictEqual(order, ['read', 'write']);
    strictEqual(await count('qty >= 100000'), BATCH);
  });

  test(`an $atomic batch of ${BATCH} updates lets a read through, which sees none of it before it commits; then all of it is there`, async () => {
    const { body } = await request(`/rest/Item?$filter=${encodeURIComponent('qty >= 100000')}&$top=${BATCH}&$attributes=qty&$orderby=ID`);
    const updates = body.__ENTITIES.map((e: { __KEY: string; __STAMP: number; qty: number }) => ({ __KEY: e.__KEY, __STAMP: e.__STAMP, qty: e.qty + 100_000 }));
    const { order, written, readAnswer } = await readDuring(
      () => request('/rest/Item?$method=update&$atomic=true&$attributes=qty', 'POST', updates),
      () => request(`/rest/Item?$top=0&$filter=${encodeURIComponent('qty >= 200000')}`),
    );
    strictEqual(written.status, 200);
    deepStrictEqual(order, ['read', 'write']);
    strictEqual(readAnswer.body.__COUNT, 0);
    strictEqual(await count('qty >= 200000'), BATCH);
  });

  test('an $atomic batch whose last entity fails writes none of the others, however many turns it took', async () => {
    const { body } = await request(`/rest/Item?$filter=${encodeURIComponent('qty >= 200000')}&$top=${BATCH / 4}&$attributes=qty&$orderby=ID`);
    const updates = body.__ENTITIES.map((e: { __KEY: string; __STAMP: number }) => ({ __KEY: e.__KEY, __STAMP: e.__STAMP, qty: 7 }));
    updates.push({ __KEY: updates[0].__KEY, __STAMP: 999, qty: 8 });
    const res = await request('/rest/Item?$method=update&$atomic=true', 'POST', updates);
    ok(res.status >= 400, String(res.status));
    strictEqual(await count('qty = 7'), 0);
  });

  test('a filtered delete of 50,000 entities drops them all at once: a read issued while it runs is answered before it ends and still sees them', async () => {
    await fill(50_000); // qty 0…49,999 (besides the batch's, qty ≥ 200,000, and the first item, qty 0)
    const kept = await count('qty >= 50000');
    const { order, written, readAnswer } = await readDuring(
      () => request(`/rest/Item?$filter=${encodeURIComponent('qty < 50000')}&$method=delete`, 'POST'),
      () => request(`/rest/Item?$top=0&$filter=${encodeURIComponent('qty < 50000')}`),
    );
    strictEqual(written.status, 200, JSON.stringify(written.body));
    deepStrictEqual(written.body, { ok: true });
    deepStrictEqual(order, ['read', 'write']);
    strictEqual(readAnswer.body.__COUNT, 50_001);
    strictEqual(await count('qty < 50000'), 0);
    strictEqual(await count(), kept);
  });

  test("a filtered delete over an entity another session locked, in its third chunk, is refused (423, 7052) and drops none; the locker's own goes through and frees the lock", async () => {
    await fill(3_000);
    const keys = (await request(`/rest/Item?$filter=${encodeURIComponent('qty < 3000')}&$top=3000&$attributes=ID&$orderby=ID`)).body.__ENTITIES.map((e: { __KEY: string }) => e.__KEY);
    strictEqual(keys.length, 3_000);
    // a client that keeps its session cookie locks one entity
    const info = await app.inject({ method: 'GET', url: '/rest/$info' });
    const cookie = String(info.headers['set-cookie']).split(';')[0];
    const lock = await app.inject({ method: 'GET', url: `/rest/Item(${keys[2_500]})?$lock=true`, headers: { cookie } });
    strictEqual(JSON.parse(lock.body).result, true, lock.body);
    const url = `/rest/Item?$filter=${encodeURIComponent('qty < 3000')}&$method=delete`;
    const refused = await request(url, 'POST');
    strictEqual(refused.status, 423, JSON.stringify(refused.body));
    strictEqual(refused.body.__ERROR[0].errCode, 7052);
    ok(refused.body.__ERROR[0].message.includes(`Item(${keys[2_500]})`), refused.body.__ERROR[0].message);
    strictEqual(await count('qty < 3000'), 3_000);
    const own = await app.inject({ method: 'POST', url, headers: { cookie } });
    strictEqual(own.statusCode, 200, own.body);
    strictEqual(await count('qty < 3000'), 0);
    strictEqual(Number((await coreOf(ds).storage.get('SELECT COUNT(*) AS n FROM "__dataset_locks"'))?.n), 0);
  });

  test('a filtered delete removes the files of the entities it drops, and only theirs', async () => {
    const files = async () => Number((await coreOf(ds).storage.get(`SELECT COUNT(*) AS n FROM "${BLOB_TABLE}"`))?.n);
    const before = await files();
    const upload = async () => JSON.parse((await app.inject({ method: 'POST', url: '/rest/$upload?$binary=true', payload: Buffer.alloc(100, 7), headers: { 'content-type': 'application/octet-stream' } })).body).ID;
    const items = [{ qty: -1, doc: { ID: await upload() } }, { qty: -2, doc: { ID: await upload() } }, { qty: -3, doc: { ID: await upload() } }];
    strictEqual((await request('/rest/Item?$method=update', 'POST', items)).status, 200);
    strictEqual(await files(), before + 3);
    strictEqual((await request(`/rest/Item?$filter=${encodeURIComponent('qty < -1')}&$method=delete`, 'POST')).status, 200);
    strictEqual(await files(), before + 1);
    strictEqual(await count('qty = -1'), 1);
  });

  test('a filtered delete through an entity set drops its members a chunk at a time too', async () => {
    await fill(3_000);
    const set = await request(`/rest/Item?$filter=${encodeURIComponent('qty < 3000')}&$method=entityset&$top=1`);
    const id = set.body.__ENTITYSET.split('/').at(-1);
    const res = await request(`/rest/Item/$entityset/${id}?$method=delete`, 'POST');
    strictEqual(res.status, 200, JSON.stringify(res.body));
    strictEqual(await count('qty < 3000'), 0);
  });
});
