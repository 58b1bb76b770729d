// Webhooks (issue 36): the changes of a tracked dataclass POSTed to a receiver that webhooks.json
// names — the events a watch stream sends, as the webhook's privileges see them, in stamp order,
// signed; retried with back-off until the receiver takes them, resumed after a restart from the
// cursor the database keeps (changes made while no server ran included), delivered by one
// instance of two (the lease), counted in /metrics. Against a local receiver, on the engine the
// run names (testDatabase).

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { buildServer } from '../../src/http/server.js';
import { openProject, ProjectError } from '../../src/project/open.js';
import { tempDir, TEST_ENGINE, testDatabase } from '../support/helpers.js';
import { LIVE_MODEL, LIVE_ROLES } from '../support/live-project.js';

const MODEL = LIVE_MODEL;
const ROLES = LIVE_ROLES;
const SECRET = 'a-secret-of-thirty-two-characters';
const TIMING = { retryFirstMs: 40, retryLastMs: 160, renewMs: 100, leaseMs: 600, timeoutMs: 2000 };

interface Delivery { headers: Record<string, string | string[] | undefined>; text: string; body: { webhook: string; dataClass: string; from: number; to: number; events: { event: string; id?: number; data: Record<string, unknown> }[] } }

/** A receiver on loopback: what it was sent, and how it answers (200 unless told). */
async function receiver() {
  const got: Delivery[] = [];
  let status = 200;
  const waiters: { n: number; resolve: () => void }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (status === 200) {
        got.push({ headers: req.headers, text, body: JSON.parse(text) as Delivery['body'] });
        for (const w of waiters.filter((x) => got.length >= x.n)) w.resolve();
      }
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'taken' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  let attempts = 0;
  server.on('request', () => attempts++);
  return {
    url: `http://127.0.0.1:${port}/hook`,
    got,
    get attempts() { return attempts; },
    answer(s: number) { status = s; },
    /** resolves once `n` deliveries came (fails after eight seconds) */
    async until(n: number): Promise<Delivery[]> {
      if (got.length < n) {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([new Promise<void>((resolve) => waiters.push({ n, resolve })), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${got.length} deliveries came, waited for ${n}: ${JSON.stringify(got.map((g) => g.body))}`)), 8000)))]);
        } finally {
          clearTimeout(timer);
        }
      }
      return got;
    },
    events() { return got.flatMap((g) => g.body.events); },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Receiver = Awaited<ReturnType<typeof receiver>>;

function project(dir: string, hooks: unknown): void {
  writeFileSync(join(dir, 'model.json'), JSON.stringify(MODEL));
  writeFileSync(join(dir, 'roles.json'), JSON.stringify(ROLES));
  writeFileSync(join(dir, 'webhooks.json'), JSON.stringify({ webhooks: hooks }));
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(`webhooks (${TEST_ENGINE})`, () => {
  const tmp = tempDir();
  let db: string;
  let hook: Receiver;
  let books: Receiver;
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  const post = async (url: string, body: unknown) => {
    const res = await app.inject({ method: 'POST', url, payload: body as object });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Record<string, any>>();
  };
  before(async () => {
    hook = await receiver();
    books = await receiver();
    project(tmp.dir, [
      { name: 'dear-items', dataClass: 'Item', filter: 'price > :1', params: [10], url: hook.url, secret: SECRET },
      { name: 'books', dataClass: 'Item', attributes: 'name,cost', url: books.url, secretEnv: 'DATASET_REST_TEST_HOOK_SECRET', privileges: ['books'] },
    ]);
    process.env.DATASET_REST_TEST_HOOK_SECRET = SECRET;
    db = await testDatabase(join(tmp.dir, 'data.sqlite'));
    ds = await openProject(tmp.dir, { db });
    app = await buildServer(ds, { logLevel: 'silent', metrics: true, webhookTiming: TIMING });
  });
  after(async () => {
    await app?.close();
    await ds?.close();
    await hook?.close();
    await books?.close();
    tmp.remove();
  });

  it('posts each change as the events a watch sends, in stamp order, signed, shaped as its privileges and attributes see them', async () => {
    const dear = await post('/rest/Item?$method=update', { name: 'dear', price: 50, cost: 20 });
    // (delivered before it is dropped: a webhook reading after the drop would see only the drop)
    await hook.until(1);
    const cheap = await post('/rest/Item?$method=update', { name: 'cheap', price: 5, cost: 1 });
    await post(`/rest/Item(${dear.__KEY})?$method=delete`, undefined);
    // (the three changes may come as one delivery or several: wait for all three events)
    for (let i = 0; i < 100 && hook.events().length < 3; i++) await wait(50);
    assert.deepEqual(hook.events().map((e) => [e.event, e.data.__KEY]), [['entity', String(dear.__KEY)], ['remove', String(cheap.__KEY)], ['remove', String(dear.__KEY)]]);
    const first = hook.got[0];
    assert.equal(first.body.events[0].data.name, 'dear');
    assert.equal(first.body.events[0].data.cost, undefined, 'a webhook without privileges reads as a guest: never the cost');
    assert.equal(first.headers['x-dataset-rest-signature'], `sha256=${createHmac('sha256', SECRET).update(first.text).digest('hex')}`);
    assert.equal(first.headers['x-dataset-rest-webhook'], 'dear-items');
    assert.equal(first.headers['x-dataset-rest-delivery'], `dear-items:${first.body.from}-${first.body.to}`);
    assert.equal(first.body.dataClass, 'Item');
    const ids = hook.events().map((e) => e.id).filter((id) => id !== undefined);
    assert.deepEqual(ids, [...ids].sort((a, b) => a! - b!));
    // deliveries follow one another: each starts where the last ended
    for (let i = 1; i < hook.got.length; i++) assert.equal(hook.got[i].body.from, hook.got[i - 1].body.to);
    // (cheap is never dropped: its event is an entity however late the webhook reads; dear's may
    // come only as its drop, read after it)
    const cheapEvent = () => books.events().find((e) => e.event === 'entity' && e.data.__KEY === String(cheap.__KEY));
    for (let i = 0; i < 100 && !cheapEvent(); i++) await wait(50);
    const booked = cheapEvent()!;
    assert.deepEqual(booked.data, { __KEY: String(cheap.__KEY), __TIMESTAMP: booked.data.__TIMESTAMP, __STAMP: booked.data.__STAMP, name: 'cheap', cost: 1 }, 'the books privilege reads the cost; "attributes" shapes the entity');
  });

  it('retries with back-off while the receiver fails, and loses nothing once it takes them', async () => {
    const before = hook.got.length;
    hook.answer(500);
    const attemptsBefore = hook.attempts;
    const a = await post('/rest/Item?$method=update', { name: 'while down a', price: 60 });
    const b = await post('/rest/Item?$method=update', { name: 'while down b', price: 70 });
    await wait(600);
    assert.ok(hook.attempts - attemptsBefore >= 3, `retried (${hook.attempts - attemptsBefore} attempts)`);
    assert.equal(hook.got.length, before, 'nothing taken yet');
    const metrics = await app.inject({ method: 'GET', url: '/metrics' });
    assert.match(metrics.body, /dataset_rest_webhook_failing\{webhook="dear-items"\} [1-9]/);
    assert.match(metrics.body, /dataset_rest_webhook_delivering\{webhook="dear-items"\} 1/);
    hook.answer(200);
    for (let i = 0; i < 100 && hook.events().filter((e) => e.data.__KEY === String(b.__KEY)).length === 0; i++) await wait(50);
    const after = hook.got.slice(before).flatMap((g) => g.body.events).map((e) => e.data.__KEY);
    assert.deepEqual(after, [String(a.__KEY), String(b.__KEY)], 'both, once each, in order');
    // (the receiver has the events once its answer is sent: the deliverer counts the success when that answer reaches it)
    let again = await app.inject({ method: 'GET', url: '/metrics' });
    for (let i = 0; i < 100 && !/dataset_rest_webhook_failing\{webhook="dear-items"\} 0/.test(again.body); i++) {
      await wait(50);
      again = await app.inject({ method: 'GET', url: '/metrics' });
    }
    assert.match(again.body, /dataset_rest_webhook_failing\{webhook="dear-items"\} 0/);
    assert.match(again.body, /dataset_rest_webhook_deliveries\{webhook="dear-items",outcome="delivered"\} [1-9]/);
  });

  it('resumes after a restart from the cursor the database keeps, with the changes made while no server ran', async () => {
    await app.close();
    const before = hook.events().length;
    // changes through the core, no server delivering
    const item = ds.dataClass('Item')!.new();
    item.set('name', 'while closed');
    item.set('price', 99);
    await item.save();
    await wait(300);
    assert.equal(hook.events().length, before, 'nothing is delivered while no server runs');
    app = await buildServer(ds, { logLevel: 'silent', metrics: true, webhookTiming: TIMING });
    for (let i = 0; i < 100 && hook.events().length === before; i++) await wait(50);
    assert.deepEqual(hook.events().slice(before).map((e) => [e.event, e.data.name]), [['entity', 'while closed']]);
  });

  it('is delivered by one instance of two, and the other takes over when the first closes', async () => {
    const other = await openProject(tmp.dir, { db });
    const second = await buildServer(other, { logLevel: 'silent', webhookTiming: TIMING });
    try {
      const before = hook.events().length;
      const one = await post('/rest/Item?$method=update', { name: 'for one instance', price: 11 });
      for (let i = 0; i < 100 && hook.events().length === before; i++) await wait(50);
      await wait(300);
      assert.equal(hook.events().filter((e) => e.data.__KEY === String(one.__KEY)).length, 1, 'delivered once');
      // the first closes (and gives its lease up): the second delivers what comes
      await app.close();
      const e = other.dataClass('Item')!.new();
      e.set('name', 'after the hand-over');
      e.set('price', 12);
      await e.save();
      for (let i = 0; i < 100 && !hook.events().some((x) => x.data.name === 'after the hand-over'); i++) await wait(50);
      assert.equal(hook.events().filter((x) => x.data.name === 'after the hand-over').length, 1);
    } finally {
      await second.close();
      await other.close();
      app = await buildServer(ds, { logLevel: 'silent', metrics: true, webhookTiming: TIMING });
    }
  });

  it('refuses a webhooks.json that cannot be delivered, naming the webhook and what is wrong', async () => {
    const cases: [unknown, RegExp][] = [
      [[{ name: 'x', dataClass: 'Itme', url: hook.url, secret: SECRET }], /no dataclass "Itme", did you mean 'Item'/],
      [[{ name: 'x', dataClass: 'Plain', url: hook.url, secret: SECRET }], /Plain does not track its changes/],
      [[{ name: 'x', dataClass: 'Item', url: hook.url }], /"secret" or name the environment variable/],
      [[{ name: 'x', dataClass: 'Item', url: hook.url, secret: 'short' }], /16 at least/],
      [[{ name: 'x', dataClass: 'Item', url: 'ftp://example.com/', secret: SECRET }], /http:\/\/ or https:\/\//],
      [[{ name: 'x', dataClass: 'Item', url: hook.url, secret: SECRET, fliter: 'a' }], /"fliter" is no setting of a webhook, did you mean 'filter'/],
      [[{ name: 'x', dataClass: 'Item', url: hook.url, secret: SECRET }, { name: 'x', dataClass: 'Item', url: hook.url, secret: SECRET }], /webhooks\[1\]: the name "x" is taken/],
      [[{ name: 'x', dataClass: 'Item', url: hook.url, secretEnv: 'DATASET_REST_TEST_UNSET_SECRET' }], /DATASET_REST_TEST_UNSET_SECRET \("secretEnv"\) is not set/],
    ];
    for (const [hooks, message] of cases) {
      const bad = tempDir();
      try {
        project(bad.dir, hooks);
        await assert.rejects(openProject(bad.dir, { db: join(bad.dir, 'data.sqlite') }), (e: Error) => e instanceof ProjectError && message.test(e.message) && e.message.includes('webhooks.json'), JSON.stringify(hooks));
      } finally {
        bad.remove();
      }
    }
    // a filter the model refuses stops the server's start
    const bad = tempDir();
    try {
      project(bad.dir, [{ name: 'typo', dataClass: 'Item', filter: 'nmae = 1', url: hook.url, secret: SECRET }]);
      const opened = await openProject(bad.dir, { db: join(bad.dir, 'data.sqlite') });
      try {
        await assert.rejects(buildServer(opened, { logLevel: 'silent' }), /webhook "typo" cannot watch Item as it is given: .*nmae/);
      } finally {
        await opened.close();
      }
    } finally {
      bad.remove();
    }
  });
});
