// The answer bytes a server holds in flight (--max-answers-in-flight) and the send timeout
// (--send-timeout), over real sockets (issue 34): clients that ask for big answers and never read
// them hold what their answers measured; past the budget a read is refused 503 with Retry-After,
// before its rows are read; what an answer holds is let go when it has been sent, when it fails,
// and when its socket closes — the client's doing, or the send timeout's, which closes a socket
// that stops taking its answer (or an export) but not one that reads slowly and steadily. Watched through the
// server's /metrics (dataset_rest_answers_in_flight). On both engines (test/run.ts).
// (test:quick leaves this file out: limits under load, over real sockets.)

import assert from 'node:assert/strict';
import { get as httpGet } from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { openProject } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { TransactionManager } from '../../src/storage/transactions.js';
import { tempDir, testDatabase } from '../support/helpers.js';

const DOCS = 150;
const TEXT = 200_000;
const MB = 1024 * 1024;
const TIMEOUT = 1500;
const BIG = `/rest/Doc?$top=${DOCS}`;
/** the big page, and every document's siblings inline: the page is measured (reserved), then its level past --max-answer-size */
const FAILING = `${BIG}&$attributes=title,body,siblings.title`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The answers in flight and their bytes, as the server's /metrics says. */
async function flight(app: FastifyInstance): Promise<{ answers: number; bytes: number }> {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  const value = (measure: string) => Number(new RegExp(`^dataset_rest_answers_in_flight\\{measure="${measure}"\\} (\\S+)`, 'm').exec(text)?.[1]);
  return { answers: value('answers'), bytes: value('bytes') };
}

async function until(what: string, test: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(50);
  }
}

/** A client that asks for `path` and reads nothing (until resumed). */
async function nonReader(app: FastifyInstance, path: string): Promise<{ socket: Socket; received(): number; closed: Promise<void> }> {
  const { port } = app.server.address() as { port: number };
  const socket = connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  let received = 0;
  socket.on('data', (d: Buffer) => (received += d.length));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
  socket.pause();
  return { socket, received: () => received, closed };
}

/** GET `path` over HTTP, reading a chunk every `pauseMs`: the status, the body, how long it took. */
function slowRead(app: FastifyInstance, path: string, pauseMs: number): Promise<{ status: number; body: string; ms: number }> {
  const { port } = app.server.address() as { port: number };
  const started = Date.now();
  return new Promise((resolve, reject) => {
    httpGet({ host: '127.0.0.1', port, path, headers: { 'accept-encoding': 'identity' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        res.pause();
        setTimeout(() => res.resume(), pauseMs);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), ms: Date.now() - started }));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('the server cut the answer')));
    }).on('error', reject);
  });
}

type Reads = { arrays: (...a: unknown[]) => Promise<unknown[][]>; all: (...a: unknown[]) => Promise<Record<string, unknown>[]> };

/** The characters of text in the rows every statement returns while `fn` runs (as answer-size.test.ts counts them). */
async function textRead<T>(fn: () => Promise<T>): Promise<{ result: T; total: number }> {
  const proto = Object.getPrototypeOf(TransactionManager.prototype) as Reads;
  const { arrays, all } = proto;
  let total = 0;
  const count = (rows: readonly unknown[]) => {
    for (const row of rows) for (const v of Object.values(row as object)) if (typeof v === 'string') total += v.length;
    return rows;
  };
  proto.arrays = function (this: unknown, ...a: unknown[]) {
    return arrays.apply(this, a).then(count) as Promise<unknown[][]>;
  };
  proto.all = function (this: unknown, ...a: unknown[]) {
    return all.apply(this, a).then(count) as Promise<Record<string, unknown>[]>;
  };
  try {
    return { result: await fn(), total };
  } finally {
    proto.arrays = arrays;
    proto.all = all;
  }
}

const connections = (app: FastifyInstance) => new Promise<number>((r) => app.server.getConnections((_e, n) => r(n)));

describe('answers in flight and the send timeout', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  /** a budget of 4 MB in flight (less than one unread answer holds), no send timeout to speak of */
  let held: FastifyInstance;
  /** a budget of 40 MB (more than one unread answer holds, less than two) */
  let roomy: FastifyInstance;
  /** the send timeout at 1.5 s */
  let timed: FastifyInstance;

  before(async () => {
    const dir = join(tmp.dir, 'p');
    mkdirSync(dir);
    writeFileSync(join(dir, 'model.json'), JSON.stringify({
      name: 'Flight',
      dataClasses: [
        {
          name: 'Folder',
          attributes: [
            { name: 'ID', type: 'long', identifying: true, autoincrement: true },
            { name: 'docs', kind: 'relatedEntities', type: 'DocSelection', path: 'folder' },
          ],
        },
        {
          name: 'Doc',
          attributes: [
            { name: 'ID', type: 'long', identifying: true, autoincrement: true },
            { name: 'title', type: 'string' },
            { name: 'body', type: 'string' },
            { name: 'folder', kind: 'relatedEntity', type: 'Folder' },
            { name: 'siblings', kind: 'alias', path: 'folder.docs' },
          ],
        },
      ],
    }));
    ds = await openProject(dir, { db: await testDatabase(join(tmp.dir, 'p.sqlite')) });
    const d = ds as unknown as Record<string, any>;
    await ds.transaction(async () => {
      const folder = d.Folder.new();
      await folder.save();
      for (let i = 0; i < DOCS; i++) {
        const doc = d.Doc.new();
        doc.set('title', `doc ${i}`);
        doc.set('body', String.fromCharCode(97 + (i % 26)).repeat(TEXT));
        doc.set('folder', folder);
        await doc.save();
      }
    });
    held = await buildServer(ds, { logLevel: 'silent', metrics: true, maxAnswersInFlight: 4 * MB, sendTimeoutMs: 120_000 });
    roomy = await buildServer(ds, { logLevel: 'silent', metrics: true, maxAnswersInFlight: 40 * MB, sendTimeoutMs: 120_000 });
    timed = await buildServer(ds, { logLevel: 'silent', metrics: true, sendTimeoutMs: TIMEOUT });
    for (const app of [held, roomy, timed]) await app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    for (const app of [held, roomy, timed]) await app.close();
    await ds.close();
    tmp.remove();
  });

  it('refuses a measured read 503 with Retry-After, before its rows are read, when it does not fit beside an answer nobody reads; lets it through once that client goes', async () => {
    const reader = await nonReader(roomy, BIG);
    try {
      await until('the unread answer in flight', async () => (await flight(roomy)).answers === 1);
      await sleep(300);
      const holding = await flight(roomy);
      assert.ok(holding.bytes > 10 * MB && holding.bytes < 40 * MB, `${holding.bytes} bytes held`);
      const { result: big, total } = await textRead(() => roomy.inject({ method: 'GET', url: BIG }));
      assert.equal(big.statusCode, 503, big.body.slice(0, 300));
      assert.equal(big.headers['retry-after'], '1');
      const error = JSON.parse(big.body).__ERROR[0];
      assert.equal(error.errCode, 7067);
      assert.match(error.message, /hold [\d.]+ MB of the 40 MB it keeps in flight at once \(--max-answers-in-flight\); this one would add [\d.]+ MB/);
      assert.ok(total < 10_000, `${total} characters of text read`);
      // a read that fits, or is not measured: answered
      assert.equal((await roomy.inject({ method: 'GET', url: '/rest/Doc?$top=2' })).statusCode, 200);
    } finally {
      reader.socket.destroy();
    }
    await until('nothing in flight once the client went', async () => {
      const f = await flight(roomy);
      return f.answers === 0 && f.bytes === 0;
    });
    const again = await roomy.inject({ method: 'GET', url: BIG });
    assert.equal(again.statusCode, 200);
    assert.equal(JSON.parse(again.body).__ENTITIES.length, DOCS);
    assert.deepEqual(await flight(roomy), { answers: 0, bytes: 0 });
  });

  it('refuses every read 503 while the answers in flight hold the whole budget, and none once they are gone', async () => {
    const reader = await nonReader(held, BIG);
    try {
      await until('the unread answer in flight', async () => (await flight(held)).bytes > 4 * MB);
      for (const url of ['/rest/Doc?$top=2&$attributes=title', '/rest/Doc(1)', BIG]) {
        const res = await held.inject({ method: 'GET', url });
        assert.equal(res.statusCode, 503, url);
        assert.equal(res.headers['retry-after'], '1');
        assert.match(JSON.parse(res.body).__ERROR[0].message, /of the 4 MB it keeps in flight at once/);
      }
    } finally {
      reader.socket.destroy();
    }
    await until('nothing in flight', async () => (await flight(held)).answers === 0);
    assert.equal((await held.inject({ method: 'GET', url: '/rest/Doc(1)' })).statusCode, 200);
  });

  it('lets go of an answer once its client has read it all, and of one that fails after reserving its bytes', async () => {
    const whole = await slowRead(held, BIG, 0);
    assert.equal(whole.status, 200);
    assert.equal(JSON.parse(whole.body).__ENTITIES.length, DOCS);
    await until('nothing in flight once read', async () => (await flight(held)).answers === 0);
    assert.equal((await flight(held)).bytes, 0);
    // measured (reserved), then refused as its inline level is measured
    const failed = await held.inject({ method: 'GET', url: FAILING });
    assert.equal(failed.statusCode, 400, failed.body.slice(0, 300));
    assert.match(JSON.parse(failed.body).__ERROR[0].message, /entities through siblings/);
    assert.deepEqual(await flight(held), { answers: 0, bytes: 0 });
    // the same failing read while another answer holds the budget: refused at its reservation, before the level
    const reader = await nonReader(roomy, BIG);
    try {
      await until('the unread answer in flight', async () => (await flight(roomy)).answers === 1);
      assert.equal((await roomy.inject({ method: 'GET', url: FAILING })).statusCode, 503);
    } finally {
      reader.socket.destroy();
    }
    await until('nothing in flight', async () => (await flight(roomy)).answers === 0);
    // a client that goes while its answer is being made (measured, reserved, not sent yet)
    const gone = await nonReader(roomy, BIG);
    gone.socket.destroy();
    await until('nothing in flight once the answer is made for nobody', async () => {
      const f = await flight(roomy);
      return f.answers === 0 && f.bytes === 0;
    });
  });

  it('lets go of what an answer reserved when the request fails after making it (If-Match naming another version: 412), so that repeating it never fills the budget', async () => {
    const folder = JSON.parse((await held.inject({ url: '/rest/Folder?$top=1' })).body).__ENTITIES[0].__KEY;
    // (a folder inlining its documents' bodies: 30 MB reserved, more than the budget, alone in flight)
    for (let i = 0; i < 3; i++) {
      const refused = await held.inject({ url: `/rest/Folder(${folder})?$attributes=docs.body`, headers: { 'if-match': '"999"' } });
      assert.equal(refused.statusCode, 412);
      assert.deepEqual(await flight(held), { answers: 0, bytes: 0 });
    }
    assert.equal((await held.inject({ url: '/rest/Doc?$top=1' })).statusCode, 200);
  });

  it('closes the connection of a client that stops reading once its socket took nothing for the send timeout, and lets go of its bytes', async () => {
    const reader = await nonReader(timed, BIG);
    await until('the unread answer in flight', async () => (await flight(timed)).answers === 1);
    const started = Date.now();
    await until('the answer let go', async () => (await flight(timed)).answers === 0, 10_000);
    assert.ok(Date.now() - started >= TIMEOUT - 100, `${Date.now() - started} ms`);
    assert.equal((await flight(timed)).bytes, 0);
    await until('the connection closed', async () => (await connections(timed)) === 0, 2000);
    // the client sees it once it reads: the end of the connection, before the end of the answer
    reader.socket.resume();
    await reader.closed;
    assert.ok(reader.received() < DOCS * TEXT, `${reader.received()} bytes received`);
  });

  it('closes, after the send timeout and not the keep-alive, the connection of a client that reads nothing of an answer the kernel took whole; resumed, the client has it all', async () => {
    // (one document: 200 KB, followed, and within the loopback's buffers)
    const reader = await nonReader(timed, '/rest/Doc?$top=1');
    await until('the answer taken by the kernel', async () => (await flight(timed)).answers === 0, 5000);
    const started = Date.now();
    await until('the connection closed', async () => (await connections(timed)) === 0, TIMEOUT + 3000);
    assert.ok(Date.now() - started < TIMEOUT + 3000, 'closed within the send timeout');
    reader.socket.resume();
    await reader.closed;
    assert.ok(reader.received() > TEXT, `${reader.received()} bytes received: the whole answer`);
  });

  it('closes the connection of a client that stops reading an export, as an answer\'s', async () => {
    const reader = await nonReader(timed, '/rest/Doc?$format=ndjson');
    await until('the export in flight', async () => (await flight(timed)).answers === 1);
    await until('the export let go', async () => (await flight(timed)).answers === 0, 10_000);
    await until('the connection closed', async () => (await connections(timed)) === 0, 2000);
    reader.socket.destroy();
  });

  it('does not cut a client reading slowly but steadily', async () => {
    // (a pause after every chunk: about 2 MB a second at most, the whole answer over several timeouts)
    const slow = await slowRead(timed, BIG, 25);
    assert.equal(slow.status, 200);
    const body = JSON.parse(slow.body);
    assert.equal(body.__ENTITIES.length, DOCS);
    assert.ok(body.__ENTITIES.every((e: { body: string }) => e.body.length === TEXT));
    assert.ok(slow.ms > 2 * TIMEOUT, `read in ${slow.ms} ms: long enough for the timeout to have cut it`);
    await until('nothing in flight once read', async () => (await flight(timed)).answers === 0);
  });
});
