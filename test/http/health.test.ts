// /health and /ready (src/http/health.ts): what load balancers and orchestrators probe, outside /rest.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { coreOf } from '../../src/datastore/datastore.js';
import { openDemo } from '../support/helpers.js';

describe('health and readiness', () => {
  it('answers /health 200 and /ready 200 on a running server, whatever the Host header names', async () => {
    const demo = await openDemo();
    try {
      for (const url of ['/health', '/ready']) {
        const res = await demo.app.inject({ url, headers: { host: '10.1.2.3:8080' } });
        assert.equal(res.statusCode, 200, res.body);
        assert.match(res.headers['content-type'] as string, /^application\/json/);
        assert.equal(res.headers['cache-control'], 'no-store');
        assert.equal(res.headers['x-content-type-options'], 'nosniff');
      }
      assert.deepEqual((await demo.app.inject({ url: '/health' })).json(), { status: 'ok' });
      assert.deepEqual((await demo.app.inject({ url: '/ready' })).json(), { status: 'ready' });
    } finally {
      await demo.close();
    }
  });

  it('answers /ready 503 when the database does not answer, and 200 again once it does', async () => {
    const demo = await openDemo();
    const storage = coreOf(demo.ds).storage as unknown as { get: (...a: unknown[]) => Promise<unknown> };
    const get = storage.get;
    try {
      storage.get = () => Promise.reject(new Error('connection refused'));
      const res = await demo.app.inject({ url: '/ready' });
      assert.equal(res.statusCode, 503);
      assert.deepEqual(res.json(), { status: 'database unreachable' });
      assert.equal((await demo.app.inject({ url: '/health' })).statusCode, 200, 'the process still answers');
      storage.get = get;
      assert.equal((await demo.app.inject({ url: '/ready' })).statusCode, 200);
    } finally {
      storage.get = get;
      await demo.close();
    }
  });
});
