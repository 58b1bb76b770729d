// Operating the server (issue 17): request ids (taken from X-Request-Id, echoed, in every log line
// of the request) and Prometheus metrics at /metrics behind --metrics.
// (test:quick leaves this file out: operating the server: logs and metrics.)

import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { join } from 'node:path';
import { DEMO_DIR, openDemo, startCommand, tempDir, type DemoFixture } from '../support/helpers.js';

/** A debug logger whose lines are kept as objects. */
function capturingLogger(): { log: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines };
}

describe('request ids', () => {
  it('echoes a sent X-Request-Id (ours in place of an unusable one), sends none on a success nobody asked one of, names every error with one, and puts it in the request\'s log lines', async () => {
    const { log, lines } = capturingLogger();
    const demo = await openDemo({ log });
    try {
      const sent = await demo.app.inject({ url: '/rest/City?$top=1', headers: { 'x-request-id': 'trace-42.abc' } });
      assert.equal(sent.headers['x-request-id'], 'trace-42.abc');
      assert.equal((await demo.app.inject({ url: '/rest/City?$top=1' })).headers['x-request-id'], undefined);
      const made = await demo.app.inject({ url: '/rest/Nope' });
      assert.equal(made.statusCode, 404);
      assert.match(String(made.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      assert.notEqual((await demo.app.inject({ url: '/rest/Nope' })).headers['x-request-id'], made.headers['x-request-id']);
      // a value that could forge a log line, or is too long, is not taken
      for (const bad of ['a b', 'x'.repeat(129), 'line\u2028break', '"quoted"']) {
        const res = await demo.app.inject({ url: '/health', headers: { 'x-request-id': bad } });
        assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/, JSON.stringify(bad));
      }
      // errors answered are echoed too
      assert.equal((await demo.app.inject({ url: '/rest/Nope', headers: { 'x-request-id': 'err-1' } })).headers['x-request-id'], 'err-1');
      const logged = lines.filter((l) => l.msg === 'request');
      assert.ok(logged.some((l) => l.reqId === 'trace-42.abc' && l.url === '/rest/City?$top=1'), JSON.stringify(logged));
      assert.ok(logged.every((l) => typeof l.reqId === 'string' && l.reqId !== ''));
    } finally {
      await demo.close();
    }
  });
});

describe('metrics', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo({ metrics: true });
  });
  after(() => demo.close());

  const scrape = async () => {
    const res = await demo.app.inject({ url: '/metrics' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return res.body;
  };
  const value = (text: string, series: string): number | undefined => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it('is not served without --metrics', async () => {
    const plain = await openDemo();
    try {
      assert.equal((await plain.app.inject({ url: '/metrics' })).statusCode, 404);
    } finally {
      await plain.close();
    }
  });

  it('counts requests by REST action and status, with their latency', async () => {
    const before = await scrape();
    const readsBefore = value(before, 'dataset_rest_requests_total{kind="readCollection",status="200"}') ?? 0;
    for (let i = 0; i < 3; i++) await demo.app.inject({ url: '/rest/City?$top=2' });
    await demo.app.inject({ url: '/rest/City(999999)' });
    await demo.app.inject({ url: '/rest/Nope' });
    await demo.app.inject({ method: 'OPTIONS', url: '/rest/City' });
    await demo.app.inject({ method: 'POST', url: '/health' });
    const text = await scrape();
    assert.equal(value(text, 'dataset_rest_requests_total{kind="options",status="204"}'), 1, 'an OPTIONS is no refusal');
    assert.equal(value(text, 'dataset_rest_requests_total{kind="methodNotAllowed",status="405"}'), 1, 'a 405 outside /rest is no 404');
    assert.equal(value(text, 'dataset_rest_requests_total{kind="readCollection",status="200"}'), readsBefore + 3);
    assert.equal(value(text, 'dataset_rest_requests_total{kind="readEntity",status="404"}'), 1);
    assert.equal(value(text, 'dataset_rest_requests_total{kind="refused",status="404"}'), 1, 'an unknown dataclass is refused before any action is planned');
    assert.ok((value(text, 'dataset_rest_request_duration_seconds_count{kind="readCollection"}') ?? 0) >= 3);
    assert.match(text, /dataset_rest_request_duration_seconds_bucket\{le="0\.001",kind="readCollection"\}/);
    // the process's own
    assert.match(text, /^dataset_rest_process_resident_memory_bytes /m);
    assert.match(text, /^dataset_rest_nodejs_eventloop_lag_seconds /m);
  });

  it('shows the entity sets held, their members, the uploads waiting and the database waits', async () => {
    const made = await demo.app.inject({ url: '/rest/City?$method=entityset&$top=1' });
    assert.equal(made.statusCode, 200, made.body);
    const count = made.json().__COUNT as number;
    const upload = await demo.app.inject({ method: 'POST', url: '/rest/$upload?$binary=true', payload: Buffer.alloc(3000, 7), headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(upload.statusCode, 200, upload.body);
    const text = await scrape();
    assert.ok((value(text, 'dataset_rest_entity_sets{measure="sets"}') ?? 0) >= 1);
    assert.ok((value(text, 'dataset_rest_entity_sets{measure="members"}') ?? 0) >= count);
    assert.ok((value(text, 'dataset_rest_uploads_pending{measure="files"}') ?? 0) >= 1);
    assert.ok((value(text, 'dataset_rest_uploads_pending{measure="bytes"}') ?? 0) >= 3000);
    // (the scrape's own reads may be waiting for a connection while it is taken)
    assert.ok(Number.isInteger(value(text, 'dataset_rest_database_waiting')));
    assert.equal(value(text, 'dataset_rest_function_timeouts_total'), 0);
  });
});

describe('metrics with several workers', () => {
  it('answers every worker\'s requests summed, whichever worker the scrape reaches, and the database\'s numbers once', async () => {
    const tmp = tempDir();
    const server = await startCommand(['--project', DEMO_DIR, '--db', join(tmp.dir, 'w.sqlite'), '--port', '0', '--workers', '2', '--metrics', '--log-level', 'warn']);
    const origin = server.base.replace(/\/rest$/, '');
    const series = (text: string, name: string) => Number(text.split('\n').find((l) => l.startsWith(`${name} `))?.split(' ')[1] ?? NaN);
    try {
      // new connections each: the workers take them in turn, as the kernel hands them out
      const get = (path: string) => fetch(`${origin}${path}`, { headers: { connection: 'close' }, signal: AbortSignal.timeout(10_000) });
      for (let i = 0; i < 40; i++) assert.equal((await get('/rest/City?$top=1')).status, 200);
      await get('/rest/City?$method=entityset&$top=1');
      for (let i = 0; i < 4; i++) {
        const res = await get('/metrics');
        assert.equal(res.status, 200);
        const text = await res.text();
        assert.equal(series(text, 'dataset_rest_requests_total{kind="readCollection",status="200"}'), 40, text.slice(0, 2000));
        assert.equal(series(text, 'dataset_rest_entity_sets{measure="sets"}'), 1, 'the sets in the database, counted once, not once per worker');
      }
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      tmp.remove();
    }
  });
});
