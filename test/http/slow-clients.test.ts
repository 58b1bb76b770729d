// Clients that hold connections (issue 19, "Slow clients"), over real sockets: a body sent too
// slowly is answered 408 and its connection closed, nothing of it kept; an upload only has to keep
// coming; connections past the caps (in all, from one address) are answered 503 and closed.
// (test:quick leaves this file out: limits under load: clients that read slowly.)

import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/http/server.js';
import { openDemo, type DemoFixture } from '../support/helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A raw connection: what it received, and when it closed. */
async function socketTo(port: number): Promise<{ socket: Socket; text(): string; closed: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  let text = '';
  socket.on('data', (d) => (text += String(d)));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  return { socket, text: () => text, closed };
}

const head = (method: string, path: string, headers: Record<string, string | number>) =>
  `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;

const errorOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).__ERROR[0];

describe('slow clients', () => {
  let demo: DemoFixture;
  let app: FastifyInstance;
  let port: number;
  before(async () => {
    demo = await openDemo();
    app = await buildServer(demo.ds, { logLevel: 'silent', bodyTimeoutMs: 600, uploadProgress: { windowMs: 500, minBytes: 2000 }, maxConnectionsPerAddress: 4 });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as { port: number }).port;
  });
  after(async () => {
    await app.close();
    await demo.close();
  });

  it('answers 408 to a JSON body that does not arrive in full in time, closes the connection, and keeps nothing of it', async () => {
    const body = JSON.stringify({ name: 'slow company' });
    const c = await socketTo(port);
    c.socket.write(head('POST', '/rest/Company?$method=update', { 'content-type': 'application/json', 'content-length': body.length }) + body.slice(0, 5));
    const started = Date.now();
    // a byte now and then: still not in full when the time is up
    const trickle = setInterval(() => c.socket.writable && c.socket.write(' '), 200);
    await c.closed;
    clearInterval(trickle);
    assert.ok(Date.now() - started < 5000);
    assert.match(c.text(), /^HTTP\/1\.1 408 /);
    const error = errorOf(c.text());
    assert.equal(error.errCode, 7049);
    assert.match(error.message, /did not arrive in full within 0\.6 s/);
    assert.equal((await demo.request(`/rest/Company?$filter="name='slow company'"`)).body.__COUNT, 0);
  });

  it('lets an upload take as long as it needs while it keeps coming, and cuts one that stops coming with 408', async () => {
    // 12 KB at 4 KB a half second: three windows long, each past the least progress
    const steady = await socketTo(port);
    const size = 12_000;
    steady.socket.write(head('POST', '/rest/$upload?$binary=true', { 'content-type': 'application/octet-stream', 'content-length': size }));
    for (let sent = 0; sent < size; sent += 2000) {
      steady.socket.write(Buffer.alloc(2000, 7));
      await sleep(250);
    }
    for (let i = 0; i < 100 && !steady.text().includes('\r\n\r\n{'); i++) await sleep(20);
    assert.match(steady.text(), /^HTTP\/1\.1 200 /, steady.text());
    assert.match(steady.text(), /"ID"/);
    steady.socket.destroy();

    const stalled = await socketTo(port);
    stalled.socket.write(head('POST', '/rest/$upload?$binary=true', { 'content-type': 'application/octet-stream', 'content-length': size }));
    stalled.socket.write(Buffer.alloc(3000, 7));
    // then a byte a second: less than 2000 bytes a window
    const trickle = setInterval(() => stalled.socket.writable && stalled.socket.write(Buffer.alloc(1)), 300);
    await stalled.closed;
    clearInterval(trickle);
    assert.match(stalled.text(), /^HTTP\/1\.1 408 /);
    assert.match(errorOf(stalled.text()).message, /the upload came too slowly: \d+ bytes in the last 0\.5 s, less than the 2000/);
  });

  it('answers a connection past the cap of one address 503 (7062, Retry-After) and closes it; once one closes, a new one is served', async () => {
    const held = await Promise.all([1, 2, 3, 4].map(() => socketTo(port)));
    const refused = await socketTo(port);
    await refused.closed;
    assert.match(refused.text(), /^HTTP\/1\.1 503 /);
    assert.match(refused.text(), /retry-after: 1\r\n/i);
    const error = errorOf(refused.text());
    assert.equal(error.errCode, 7062);
    assert.match(error.message, /127\.0\.0\.1 holds the 4 connections one address may keep open/);
    // the connections held are served
    held[0].socket.write(head('GET', '/rest/$catalog', { connection: 'close' }));
    await held[0].closed;
    assert.match(held[0].text(), /^HTTP\/1\.1 200 /);
    const next = await socketTo(port);
    next.socket.write(head('GET', '/rest/$catalog', { connection: 'close' }));
    await next.closed;
    assert.match(next.text(), /^HTTP\/1\.1 200 /);
    for (const c of held) c.socket.destroy();
  });
});

describe('the cap on connections in all', () => {
  it('refuses a connection past --max-connections with 503, and serves again once one closes', async () => {
    const demo = await openDemo({ maxConnections: 2 });
    const app = demo.app;
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as { port: number }).port;
    try {
      const held = [await socketTo(port), await socketTo(port)];
      const refused = await socketTo(port);
      await refused.closed;
      assert.match(refused.text(), /^HTTP\/1\.1 503 /);
      assert.match(errorOf(refused.text()).message, /the server holds the 2 connections it takes at once/);
      held[0].socket.destroy();
      await held[0].closed;
      await sleep(50);
      const next = await socketTo(port);
      next.socket.write(head('GET', '/rest/$catalog', { connection: 'close' }));
      await next.closed;
      assert.match(next.text(), /^HTTP\/1\.1 200 /);
      held[1].socket.destroy();
    } finally {
      await demo.close();
    }
  });
});
