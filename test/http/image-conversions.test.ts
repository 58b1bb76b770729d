// The bounded queue of image conversions ($imageformat, rest/scope/conversions.ts): one runs at a time,
// at most --max-queued-conversions wait (503 7070 past them), one client has at most
// --max-conversions-per-client running or waiting (429 7044 past them), both with Retry-After; so
// another client's conversion waits for no more than the bound implies (the probe: 12 queued
// 25-megapixel conversions made another client's wait 3.2 s).
// (test:quick leaves this file out: limits under load: queues of image conversions.)

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import sharp from 'sharp';
import { DatasetError } from '../../src/errors/dataset-error.js';
import { ConversionQueue } from '../../src/rest/scope/conversions.js';
import { buildServer } from '../../src/http/server.js';
import { openDemo, type DemoFixture } from '../support/helpers.js';

describe('the conversion queue', () => {
  /** Work that ends when told to. */
  const gate = () => {
    let open!: () => void;
    const done = new Promise<void>((resolve) => (open = resolve));
    return { done, open };
  };
  const refusal = (e: unknown, code: string) => e instanceof DatasetError && e.code === code && (e.retryAfterS ?? 0) >= 1;

  it('runs one at a time in arrival order, refuses a client past its share (429) and everyone past the queue (503), and frees both when work ends or fails', async () => {
    const q = new ConversionQueue({ queued: 2, perClient: 2 });
    const order: string[] = [];
    const gates = [gate(), gate(), gate()];
    const job = (name: string, g: { done: Promise<void> }, fail = false) => async () => {
      order.push(`start ${name}`);
      await g.done;
      order.push(`end ${name}`);
      if (fail) throw new Error('broken image');
      return name;
    };
    const a1 = q.run('a', job('a1', gates[0], true));
    const a2 = q.run('a', job('a2', gates[1]));
    await assert.rejects(q.run('a', job('a3', gate())), (e) => refusal(e, 'TOO_MANY_REQUESTS'));
    const b1 = q.run('b', job('b1', gates[2]));
    assert.equal(q.size, 3);
    await assert.rejects(q.run('c', job('c1', gate())), (e) => refusal(e, 'CONVERSIONS_BUSY'));
    gates[0].open();
    await assert.rejects(a1, /broken image/);
    // a's failed one is no longer counted: a may ask again (it waits behind a2 and b1)
    gates[1].open();
    gates[2].open();
    assert.deepEqual(await Promise.all([a2, b1, q.run('a', async () => 'a4')]), ['a2', 'b1', 'a4']);
    assert.deepEqual(order, ['start a1', 'end a1', 'start a2', 'end a2', 'start b1', 'end b1']);
    assert.equal(q.size, 0);
  });

  it('with queued 0, runs one and lets none wait', async () => {
    const q = new ConversionQueue({ queued: 0, perClient: 5 });
    const g = gate();
    const first = q.run('a', () => g.done);
    await assert.rejects(q.run('b', async () => 1), (e) => refusal(e, 'CONVERSIONS_BUSY'));
    g.open();
    await first;
    assert.equal(await q.run('b', async () => 2), 2);
  });
});

describe('image conversions over HTTP, at once from several clients', () => {
  let demo: DemoFixture;
  let uri: string;
  before(async () => {
    demo = await openDemo();
    // a 25-megapixel picture (the largest converted), small as a PNG; each conversion decodes it whole
    const big = await sharp({ create: { width: 5000, height: 5000, channels: 3, background: '#3366cc' } }).png().toBuffer();
    const up = await demo.app.inject({ method: 'POST', url: '/rest/$upload?$rawPict=true', payload: big, headers: { 'content-type': 'application/octet-stream' } });
    const { ID } = JSON.parse(up.body) as { ID: string };
    const e = (await demo.request('/rest/Employee?$top=1')).body.__ENTITIES[0];
    const saved = await demo.request('/rest/Employee?$method=update', 'POST', { __KEY: e.__KEY, __STAMP: e.__STAMP, photo: { ID } });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    uri = `/rest/Employee(${e.__KEY})/photo?$imageformat=jpeg`;
  });
  after(() => demo.close());

  /** A conversion asked by the guest at `address`, timed. */
  const convert = async (app: FastifyInstance, address: string) => {
    const started = performance.now();
    const res = await app.inject({ method: 'GET', url: uri, remoteAddress: address });
    return { status: res.statusCode, type: res.headers['content-type'], retryAfter: res.headers['retry-after'], body: res.statusCode === 200 ? undefined : JSON.parse(res.body), ms: performance.now() - started };
  };

  it('keeps one client\'s twelve conversions from holding another\'s: past its share (2) it is answered 429 at once, and the other waits for two at most (the probe)', async () => {
    // one conversion alone, twice (the first warms sharp up)
    await convert(demo.app, '10.0.0.9');
    const solo = (await convert(demo.app, '10.0.0.9')).ms;
    const flood = Array.from({ length: 12 }, () => convert(demo.app, '10.0.0.1'));
    // (the flood's requests are on their way, its first conversion running)
    await new Promise((resolve) => setTimeout(resolve, 20));
    const other = await convert(demo.app, '10.0.0.2');
    const answers = await Promise.all(flood);
    assert.equal(other.status, 200);
    assert.equal(other.type, 'image/jpeg');
    assert.equal(answers.filter((a) => a.status === 200).length, 2, JSON.stringify(answers.map((a) => a.status)));
    for (const a of answers.filter((x) => x.status !== 200)) {
      assert.equal(a.status, 429);
      assert.equal(a.body.__ERROR[0].errCode, 7044);
      assert.match(a.body.__ERROR[0].message, /--max-conversions-per-client 2/);
      assert.ok(Number(a.retryAfter) >= 1, `Retry-After ${String(a.retryAfter)}`);
    }
    // the other client waited for the flood's two and its own: far from the twelve it would otherwise
    assert.ok(other.ms < 6 * solo + 500, `another client's conversion took ${Math.round(other.ms)} ms; one alone ${Math.round(solo)} ms`);
  });

  it('counts the stored guests of one address as one client: each its own cookie, their conversions share the one share (2)', async () => {
    const cookies: string[] = [];
    for (let i = 0; i < 4; i++) {
      // (an entity set stores the guest: a cookie of its own)
      const made = await demo.app.inject({ method: 'GET', url: '/rest/Company?$method=entityset&$top=1', remoteAddress: '10.2.0.1' });
      assert.equal(made.statusCode, 200, made.body);
      cookies.push(String(made.headers['set-cookie']).split(';')[0]);
    }
    assert.equal(new Set(cookies).size, 4);
    const answers = await Promise.all(cookies.map((cookie) => demo.app.inject({ method: 'GET', url: uri, remoteAddress: '10.2.0.1', headers: { cookie } })));
    assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 200, 429, 429]);
  });

  it('answers 503 7070 with Retry-After past --max-queued-conversions, everyone\'s together, and converts again once the queue has room', async () => {
    const served = await buildServer(demo.ds, { logLevel: 'silent', conversions: { queued: 2, perClient: 1 } });
    try {
      const answers = await Promise.all(['10.1.0.1', '10.1.0.2', '10.1.0.3', '10.1.0.4', '10.1.0.5'].map((a) => convert(served, a)));
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [200, 200, 200, 503, 503]);
      for (const a of answers.filter((x) => x.status === 503)) {
        assert.equal(a.body.__ERROR[0].errCode, 7070);
        assert.match(a.body.__ERROR[0].message, /--max-queued-conversions 2/);
        assert.ok(Number(a.retryAfter) >= 1);
      }
      assert.equal((await convert(served, '10.1.0.4')).status, 200);
    } finally {
      await served.close();
    }
  });
});
