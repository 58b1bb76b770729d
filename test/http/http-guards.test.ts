// The HTTP guards (issue 13): Host and Origin checks, CORS and the security headers, on the demo
// with its roles.json. The files of sessions are sessions-*.test.ts; what they share with this one
// is sessions-shared.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/http/server.js';
import { openDemo, type DemoFixture } from '../support/helpers.js';
import { ROLES, call, errCode } from './sessions-shared.js';

// the demo with its roles.json, shared by the suites that do not move a clock or need options of the datastore
let demo: DemoFixture;
before(async () => {
  demo = await openDemo({ roles: ROLES });
});
after(() => demo.close());

describe('HTTP guards: Host, Origin, CORS and security headers', () => {
  const host = (app: FastifyInstance, name: string) => call(app, '/rest/$info', { headers: { host: name } });
  // a call that changes nothing but is a POST: what the Origin check looks at
  const post = (headers: Record<string, string> = {}, app = demo.app) => call(app, '/rest/$catalog/hiredBetween', { method: 'POST', body: ['2019-01-01'], headers });

  it('refuses a Host it does not answer for (421, 7045) and answers localhost and 127.0.0.1 by default', async () => {
    const evil = await host(demo.app, 'evil.example');
    assert.equal(evil.status, 421);
    assert.equal(errCode(evil), 7045);
    assert.equal((await host(demo.app, 'evil.example:80')).status, 421);
    for (const name of ['localhost', 'localhost:8080', '127.0.0.1:3000', '[::1]:3000']) assert.equal((await host(demo.app, name)).status, 200, name);
  });

  it('refuses a Host whose port is not a port (localhost:1@evil.example), which would otherwise be echoed into uri', async () => {
    for (const name of ['localhost:1@evil.example', 'localhost:80/evil', 'localhost:evil.example']) assert.equal((await host(demo.app, name)).status, 421, name);
  });

  it("answers any Host with allowedHosts ['*'], and only the listed ones otherwise", async () => {
    const any = await buildServer(demo.ds, { logLevel: 'silent', allowedHosts: ['*'] });
    const listed = await buildServer(demo.ds, { logLevel: 'silent', allowedHosts: ['api.example'] });
    try {
      assert.equal((await host(any, 'evil.example')).status, 200);
      assert.equal((await host(listed, 'api.example:8443')).status, 200);
      assert.equal((await host(listed, 'localhost')).status, 421);
    } finally {
      await any.close();
      await listed.close();
    }
  });

  it("refuses a POST from another origin (403, 7046); without Origin, or from the server's own, it runs", async () => {
    const evil = await post({ origin: 'http://evil.example' });
    assert.equal(evil.status, 403);
    assert.equal(errCode(evil), 7046);
    assert.equal((await post()).status, 200);
    // under inject the Host is localhost:80
    assert.equal((await post({ origin: 'http://localhost:80' })).status, 200);
    assert.equal((await post({ origin: 'http://localhost:8080' })).status, 403, 'another port is another origin');
    // a GET changes nothing: not checked
    assert.equal((await call(demo.app, '/rest/$info', { headers: { origin: 'http://evil.example' } })).status, 200);
  });

  it('lets a --cors-origin call with credentials: its POST runs, its answer exposes the ETag and request id, and a preflight answers it', async () => {
    const cors = await buildServer(demo.ds, { logLevel: 'silent', corsOrigins: ['http://app.example'] });
    try {
      const ok = await post({ origin: 'http://app.example' }, cors);
      assert.equal(ok.status, 200);
      assert.equal(ok.headers['access-control-allow-origin'], 'http://app.example');
      assert.equal(ok.headers['access-control-allow-credentials'], 'true');
      // (a browser client on that origin reads the ETag for If-Match, the request id of an error, Retry-After)
      assert.equal(ok.headers['access-control-expose-headers'], 'etag, x-request-id, retry-after, location, allow');
      const preflight = await call(cors, '/rest/$catalog/pause', { method: 'OPTIONS', headers: { origin: 'http://app.example', 'access-control-request-method': 'POST' } });
      assert.ok(preflight.status < 300, String(preflight.status));
      assert.equal(preflight.headers['access-control-allow-origin'], 'http://app.example');
      assert.equal(preflight.headers['access-control-allow-credentials'], 'true');
      const other = await call(cors, '/rest/$catalog/pause', { method: 'OPTIONS', headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' } });
      assert.equal(other.headers['access-control-allow-origin'], undefined);
      assert.equal(errCode(await post({ origin: 'http://evil.example' }, cors)), 7046);
      // a preflight is answered before any route: the Host is judged, and the headers set, before it
      const foreign = await call(cors, '/rest/$catalog/pause', { method: 'OPTIONS', headers: { host: 'evil.example', origin: 'http://app.example', 'access-control-request-method': 'POST' } });
      assert.equal(foreign.status, 421);
      assert.equal(foreign.headers['access-control-allow-origin'], undefined);
      assert.equal(foreign.headers['x-content-type-options'], 'nosniff');
      assert.equal(preflight.headers['x-content-type-options'], 'nosniff');
    } finally {
      await cors.close();
    }
  });

  it('puts nosniff, no-store and a restrictive content-security-policy on answers, errors included', async () => {
    const answers = [await call(demo.app, '/rest/Employee?$top=1'), await call(demo.app, '/rest/Nothing'), await call(demo.app, '/elsewhere'), await host(demo.app, 'evil.example')];
    for (const res of answers) {
      assert.equal(res.headers['x-content-type-options'], 'nosniff', String(res.status));
      assert.equal(res.headers['cache-control'], 'no-store', String(res.status));
      assert.match(String(res.headers['content-security-policy']), /default-src 'none'/, String(res.status));
    }
  });
});
