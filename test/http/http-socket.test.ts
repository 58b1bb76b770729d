// A few requests over a real TCP socket (not inject): the server listens on an ephemeral port and
// is called with fetch, so URL encoding by a real client, headers and UTF-8 bodies are exercised.

import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { openDemo, type DemoFixture } from '../support/helpers.js';

/** GET with a raw request target, sent byte for byte (fetch would normalize it). */
function rawGet(base: URL, target: string): Promise<{ status: number; contentType: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: base.hostname, port: base.port, method: 'GET', path: target }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HTTP over a socket', () => {
  let demo: DemoFixture;
  let base: URL;
  before(async () => {
    demo = await openDemo();
    const address = await demo.app.listen({ port: 0, host: '127.0.0.1' });
    base = new URL(address);
  });
  after(() => demo.close());

  const url = (path: string) => new URL(path, base);

  it('serves /rest/$catalog as application/json with a UTF-8 charset', async () => {
    const res = await fetch(url('/rest/$catalog'));
    assert.equal(res.status, 200);
    const type = res.headers.get('content-type') ?? '';
    assert.match(type, /^application\/json/);
    assert.match(type, /charset=utf-8/i);
    const body = await res.json();
    assert.deepEqual(body.dataClasses.map((d: { name: string }) => d.name), ['City', 'Company', 'Employee']);
  });

  it('serves an entity by key, in the () and [] forms', async () => {
    for (const path of ['/rest/Company(1)', '/rest/Company[1]']) {
      const res = await fetch(url(path));
      assert.equal(res.status, 200, path);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const body = await res.json();
      assert.equal(body.__entityModel, 'Company');
      assert.equal(body.__KEY, '1');
    }
  });

  it('decodes quotes and spaces the client percent-encodes', async () => {
    const byCode = await fetch(url('/rest/Company:companyCode("C1000")/name'));
    assert.equal(byCode.status, 200);
    assert.equal((await byCode.json()).__KEY, '1');
    const sorted = await fetch(url('/rest/Company?$orderby="name desc"&$top=3&$attributes=name'));
    assert.equal(sorted.status, 200);
    const names = (await sorted.json()).__ENTITIES.map((e: { name: string }) => e.name);
    assert.deepEqual(names, [...names].sort().reverse());
  });

  it('sends non-ASCII text as UTF-8', async () => {
    const res = await fetch(url('/rest/City?$attributes=name'));
    const names = (await res.json()).__ENTITIES.map((e: { name: string }) => e.name);
    for (const n of ['Montréal', 'São Paulo', 'Zürich']) assert.ok(names.includes(n), n);
  });

  it('answers a collection envelope with paging', async () => {
    const res = await fetch(url('/rest/Employee?$skip=10&$top=5&$attributes=lastName'));
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.__COUNT, 320);
    assert.equal(body.__FIRST, 10);
    assert.equal(body.__SENT, 5);
  });

  it('answers errors as JSON __ERROR with their status', async () => {
    for (const [path, status] of [['/rest/Compny', 404], ['/nowhere', 404], ['/rest/Company(abc)', 400], ['/rest/Company?$tpo=1', 400]] as const) {
      const res = await fetch(url(path));
      assert.equal(res.status, status, path);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/, path);
      const body = await res.json();
      assert.ok(Array.isArray(body.__ERROR) && body.__ERROR.length > 0, path);
    }
    const post = await fetch(url('/rest/Company'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(post.status, 405);
    assert.ok(Array.isArray((await post.json()).__ERROR));
  });

  it('answers a raw unbalanced bracket with 400 and __ERROR', async () => {
    const res = await rawGet(base, '/rest/Company(1');
    assert.equal(res.status, 400);
    assert.match(res.contentType, /^application\/json/);
    assert.ok(Array.isArray(JSON.parse(res.body).__ERROR));
  });

  it('answers a raw bad %-escape in the path with 400 and __ERROR', async () => {
    const res = await rawGet(base, '/rest/Company(%ZZ)');
    assert.equal(res.status, 400);
    assert.match(res.contentType, /^application\/json/);
    assert.ok(Array.isArray(JSON.parse(res.body).__ERROR), res.body);
  });

  /** Sends `text` as it is and reads what comes back until the server closes the connection. */
  const rawExchange = (text: string) => new Promise<string>((resolve, reject) => {
    const socket = connect(Number(base.port), base.hostname, () => socket.end(text));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
  });
  const answerOf = (raw: string) => {
    const [head, body] = raw.split('\r\n\r\n');
    return { status: Number(head.split(' ')[1]), head: head.toLowerCase(), body: JSON.parse(body) as { __ERROR: { errCode: number; message: string }[] } };
  };

  it("answers what Node's HTTP parser refuses in the __ERROR shape, then closes: headers past its size (431, 7048), Content-Length beside Transfer-Encoding (400, 7047)", async () => {
    const big = answerOf(await rawExchange(`GET /rest/Company(1) HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    assert.equal(big.status, 431);
    assert.equal(big.body.__ERROR[0].errCode, 7048);
    assert.match(big.head, /connection: close/);
    assert.match(big.head, /x-content-type-options: nosniff/);
    const smuggled = answerOf(await rawExchange('POST /rest/Company?$method=update HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'));
    assert.equal(smuggled.status, 400);
    assert.equal(smuggled.body.__ERROR[0].errCode, 7047);
    assert.match(smuggled.body.__ERROR[0].message, /cannot be read as HTTP/);
  });

  it('serves concurrent requests on one server', async () => {
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => fetch(url(`/rest/Company(${i + 1})/name`))));
    const bodies = await Promise.all(responses.map((r) => r.json()));
    assert.deepEqual(responses.map((r) => r.status), Array(20).fill(200));
    assert.deepEqual(bodies.map((b) => b.__KEY), Array.from({ length: 20 }, (_, i) => String(i + 1)));
  });
});

describe('HTTP over a socket: request lines and expectations', () => {
  let demo: DemoFixture;
  let port: number;
  before(async () => {
    demo = await openDemo();
    port = Number(new URL(await demo.app.listen({ port: 0, host: '127.0.0.1' })).port);
  });
  after(() => demo.close());

  /** Sends `text` on a new connection (kept open for writing: a half-closed one may be closed before its answer); resolves to all that came back once the server closed it. */
  const exchange = (text: string) => new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    socket.setTimeout(10_000, () => socket.destroy());
    let answer = '';
    socket.on('data', (d) => (answer += String(d)));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });

  it('routes a request line in absolute form (GET http://host/rest/… HTTP/1.1) by its path, as RFC 9112 asks', async () => {
    const answer = await exchange(`GET http://127.0.0.1:${port}/rest/Company(1)?$attributes=name HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.match(answer, /"__KEY":"1"/);
  });

  it('answers an Expect header other than 100-continue 417 in the __ERROR shape (7063), with a request id and the security headers', async () => {
    const answer = await exchange('GET /rest/$catalog HTTP/1.1\r\nHost: localhost\r\nExpect: 200-ok\r\nX-Request-Id: expect-1\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 417 /);
    assert.match(answer, /x-request-id: expect-1\r\n/i);
    assert.match(answer, /x-content-type-options: nosniff\r\n/i);
    const error = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).__ERROR[0];
    assert.equal(error.errCode, 7063);
    assert.match(error.message, /Expect: 200-ok is no expectation this server meets/);
  });
});
