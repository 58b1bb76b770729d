// The server's side of the Data Explorer (issue 15): the page and its files at /$explorer, with
// their security and caching headers, and what the REST API tells a client for its forms — what
// the session may do in a dataclass (the catalog's sessionMay) and the attribute an error is
// about (attributeName).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { DEMO_DIR, openDemo, type DemoFixture } from '../support/helpers.js';

async function login(app: FastifyInstance, user: string, password: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/rest/$directory/login', payload: [user, password] });
  assert.equal(res.statusCode, 200, res.body);
  return String(res.headers['set-cookie']).split(';')[0];
}

describe('the Data Explorer page and its files', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('answers the page at /$explorer with a strict CSP whose style nonce is the one the page carries, never cached', async () => {
    const a = await demo.app.inject({ url: '/$explorer' });
    const b = await demo.app.inject({ url: '/$explorer/' });
    assert.equal(a.statusCode, 200);
    assert.equal(b.statusCode, 200);
    assert.match(String(a.headers['content-type']), /^text\/html/);
    assert.equal(a.headers['cache-control'], 'no-store');
    const csp = String(a.headers['content-security-policy']);
    for (const part of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'"]) assert.ok(csp.includes(part), `${part} in ${csp}`);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    const nonce = /style-src 'self' 'nonce-([^']+)'/.exec(csp)?.[1];
    assert.ok(nonce, csp);
    assert.ok(a.body.includes(`<meta name="csp-nonce" content="${nonce}">`));
    const other = /style-src 'self' 'nonce-([^']+)'/.exec(String(b.headers['content-security-policy']))?.[1];
    assert.notEqual(other, nonce, 'each answer has its own nonce');
    assert.equal(a.headers['x-content-type-options'], 'nosniff');
  });

  it('serves the hashed script and style for a year, immutable, with an ETag answered 304', async () => {
    const page = (await demo.app.inject({ url: '/$explorer' })).body;
    const files = [...page.matchAll(/(?:src|href)="(\/\$explorer\/assets\/[^"]+)"/g)].map((m) => m[1]);
    assert.equal(files.length, 2, page);
    for (const url of files) {
      const res = await demo.app.inject({ url });
      assert.equal(res.statusCode, 200, url);
      assert.match(String(res.headers['content-type']), url.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.ok(res.body.length > 1000);
      const again = await demo.app.inject({ url, headers: { 'if-none-match': String(res.headers.etag) } });
      assert.equal(again.statusCode, 304);
      assert.equal(again.body, '');
    }
  });

  it('answers an unknown file 404 in the __ERROR shape, naming it', async () => {
    const res = await demo.app.inject({ url: '/$explorer/assets/main-OLD.js' });
    assert.equal(res.statusCode, 404);
    const body = JSON.parse(res.body);
    assert.equal(body.__ERROR[0].errCode, 7001);
    assert.match(body.__ERROR[0].message, /main-OLD\.js/);
  });

  it('refuses a Host the server does not answer for, as /rest does (DNS rebinding)', async () => {
    const res = await demo.app.inject({ url: '/$explorer', headers: { host: 'evil.example:8080' } });
    assert.equal(res.statusCode, 421);
    assert.match(JSON.parse(res.body).__ERROR[0].message, /evil\.example/);
  });

  it('is not served when the server is built without it (--no-explorer)', async () => {
    const other = await demo.withServer({ explorer: false });
    try {
      const res = await other.request('/$explorer');
      assert.equal(res.status, 404);
      assert.equal(res.body.__ERROR[0].errCode, 7001);
    } finally {
      await other.close();
    }
  });
});

describe('what the REST API tells a form', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo({ roles: join(DEMO_DIR, 'roles.json') });
  });
  after(() => demo.close());

  it('the catalog says what the session may do in each dataclass: nothing but read as a guest, everything as admin', async () => {
    // (asked for with Prefer: extensions, as the explorer does; 4D's shape has no sessionMay)
    const guest = JSON.parse((await demo.app.inject({ url: '/rest/$catalog/Company', headers: { prefer: 'extensions' } })).body);
    assert.deepEqual({ ...guest.sessionMay, methods: undefined, restricted: undefined }, { read: true, create: false, update: false, drop: false, methods: undefined, restricted: undefined });
    const cookie = await login(demo.app, 'admin', 'admin123');
    const admin = JSON.parse((await demo.app.inject({ url: '/rest/$catalog/Company', headers: { cookie, prefer: 'extensions' } })).body);
    assert.deepEqual({ ...admin.sessionMay, methods: undefined, restricted: undefined }, { read: true, create: true, update: true, drop: true, methods: undefined, restricted: undefined });
  });

  it('an error about one attribute names it in attributeName: notNull, unique, a wrong type, an attribute\'s validateSave', async () => {
    const cookie = await login(demo.app, 'admin', 'admin123');
    const post = async (url: string, payload: object) => JSON.parse((await demo.app.inject({ method: 'POST', url, payload, headers: { cookie } })).body);
    assert.equal((await post('/rest/Company?$method=update', { name: null, companyCode: 'Z1' })).__ERROR[0].attributeName, 'name');
    assert.equal((await post('/rest/Company?$method=update', { name: 'Twin', companyCode: 'C1000' })).__ERROR[0].attributeName, 'companyCode');
    const e = JSON.parse((await demo.app.inject({ url: '/rest/Employee?$top=1&$attributes=salary', headers: { cookie } })).body).__ENTITIES[0];
    assert.equal((await post('/rest/Employee?$method=update', { __KEY: e.__KEY, __STAMP: e.__STAMP, salary: 'abc' })).__ERROR[0].attributeName, 'salary');
    const badKey = await post('/rest/Employee?$method=update', { __KEY: e.__KEY, __STAMP: e.__STAMP, employer: { __KEY: 'abc' } });
    assert.equal(badKey.__ERROR[0].attributeName, 'employer', 'a relation\'s bad key is about the relation, not the target\'s key');
    const refused = await post('/rest/Employee?$method=update', { __KEY: e.__KEY, __STAMP: e.__STAMP, salary: 99_999_999 });
    assert.equal(refused.__ERROR[0].errCode, 1002);
    assert.equal(refused.__ERROR[0].attributeName, 'salary');
  });
});

describe('keys in the explorer\'s URLs', () => {
  it('are written as the server writes its own URIs (parentheses, quotes, slashes, spaces)', async () => {
    const { keyInUri: server } = await import('../../src/rest/request/url.js');
    const { keyInUri: explorer } = await import('../../explorer/src/api.js');
    for (const key of ['12', 'A1', 'a(b)c', "it's", '"quoted"', "'q'", 'a/b', 'x y', '!*', '"', 'é€']) assert.equal(explorer(key), server(key), key);
  });
});
