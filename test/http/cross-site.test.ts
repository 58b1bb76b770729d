// The guard against cross-site request forgery (rest/request/http-guards.ts, pipeline.ts): a write, and a
// GET that changes something (a logout, a stored or released set, a lock, a function), is refused
// when it comes from the web page of another origin — by its Origin, or without one by the
// browser's Sec-Fetch-Site, or without that by its Referer — and runs from the server's own pages,
// a --cors-origin's, the user's own action and clients that send none of these (wakanda-client,
// curl). Reads run whoever asks.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { httpGuard } from '../../src/rest/request/http-guards.js';
import { buildServer } from '../../src/http/server.js';
import { DEMO_DIR, openDemo, type DemoFixture } from '../support/helpers.js';

type Answer = { status: number; body: any; headers: Record<string, unknown> };

/** A client keeping its session cookie; `headers` are what its browser adds to every request. */
function client(app: FastifyInstance) {
  let cookie: string | undefined;
  return async (url: string, o: { method?: InjectOptions['method']; body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> => {
    const res = await app.inject({ method: o.method ?? 'GET', url, headers: { ...(cookie ? { cookie } : {}), ...o.headers }, ...(o.body === undefined ? {} : { payload: o.body as object }) });
    const set = ([] as string[]).concat((res.headers['set-cookie'] as string | string[] | undefined) ?? []).find((c) => c.startsWith('4DSID_'));
    if (set) cookie = set.split(';')[0];
    let body: unknown = res.body;
    try {
      body = JSON.parse(res.body);
    } catch {
      // not JSON
    }
    return { status: res.statusCode, body, headers: res.headers };
  };
}

const errCode = (res: Answer): number | undefined => res.body?.__ERROR?.[0]?.errCode;

// (under inject the Host is localhost:80: the server's own origin is http://localhost)
const CROSS_SITE = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' };
const EVIL_REFERER = { referer: 'http://evil.example/page.html' };
const OTHER_PORT = { 'sec-fetch-site': 'same-site', referer: 'http://localhost:3000/app' };

describe('the cross-site guard of writes and of GETs that change something', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo({ roles: join(DEMO_DIR, 'roles.json') });
  });
  after(() => demo.close());

  /** A client logged in as alice (edit), as a page of the server's own origin would be. */
  async function alice() {
    const c = client(demo.app);
    assert.deepEqual((await c('/rest/$directory/login', { method: 'POST', body: ['alice', 'alice123'] })).body, { result: true });
    return c;
  }

  const userOf = async (c: ReturnType<typeof client>) => (await c('/rest/$info')).body.session.userName as string;

  it('refuses a write without Origin that says it comes from another site (Sec-Fetch-Site: cross-site) or from a foreign Referer: 403 7046, nothing written (the probe)', async () => {
    const c = await alice();
    const pages: Record<string, string>[] = [CROSS_SITE, EVIL_REFERER, OTHER_PORT, { 'sec-fetch-site': 'same-site' }, { origin: 'null' }];
    for (const headers of pages) {
      const code = `XS-${Object.values(headers).join('-').replace(/[^A-Za-z0-9]/g, '').slice(0, 20)}`;
      const res = await c('/rest/Company?$method=update', { method: 'POST', body: { name: 'Forged', companyCode: code }, headers });
      assert.equal(res.status, 403, `${JSON.stringify(headers)}: ${JSON.stringify(res.body)}`);
      assert.equal(errCode(res), 7046);
      assert.match(res.body.__ERROR[0].message, /came from .*(another site|another origin)/);
      assert.equal(await demo.ds.dataClass('Company')!.query('companyCode = :1', code).length, 0, 'nothing was written');
    }
  });

  it('runs a write from the server\'s own page (Origin, same-origin, a Referer of its own), the user\'s own action (none) and a client that sends nothing', async () => {
    const c = await alice();
    const cases: Record<string, string>[] = [
      {},
      { origin: 'http://localhost' },
      { 'sec-fetch-site': 'same-origin', referer: 'http://evil.example/' },
      { 'sec-fetch-site': 'none' },
      { referer: 'http://localhost/$explorer/' },
      { 'sec-fetch-site': 'same-site', referer: 'http://localhost/$explorer/' },
    ];
    for (const [i, headers] of cases.entries()) {
      const res = await c('/rest/Company?$method=update', { method: 'POST', body: { name: 'Own', companyCode: `OWN-${i}` }, headers });
      assert.equal(res.status, 200, `${JSON.stringify(headers)}: ${JSON.stringify(res.body)}`);
    }
  });

  it('refuses GET $directory/logout from another site\'s page (a link, an image): the user stays logged in; the own page, the user\'s own action and header-less clients log out', async () => {
    for (const headers of [CROSS_SITE, EVIL_REFERER, OTHER_PORT, { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' }]) {
      const c = await alice();
      const res = await c('/rest/$directory/logout', { headers });
      assert.equal(res.status, 403, `${JSON.stringify(headers)}: ${JSON.stringify(res.body)}`);
      assert.equal(errCode(res), 7046);
      assert.match(res.body.__ERROR[0].message, /changes the session \(\$directory\/logout\)/);
      assert.equal(await userOf(c), 'alice', 'still logged in');
    }
    const own: Record<string, string>[] = [{}, { 'sec-fetch-site': 'same-origin' }, { 'sec-fetch-site': 'none' }, { referer: 'http://localhost/app' }];
    for (const headers of own) {
      const c = await alice();
      const res = await c('/rest/$directory/logout', { headers });
      assert.deepEqual(res.body, { result: true }, JSON.stringify(headers));
      assert.equal(await userOf(c), '', 'logged out');
    }
  });

  it('refuses the other GETs that change something from another site: storing a set, releasing one, a lock, a function, a rebuilt set, a recorded query path', async () => {
    const c = await alice();
    const stored = await c('/rest/Company?$method=entityset&$top=1');
    const uri = stored.body.__ENTITYSET as string;
    const key = stored.body.__ENTITIES[0].__KEY;
    const setsHeld = async () => (await c('/rest/$info')).body.entitySet.length as number;
    const held = await setsHeld();
    for (const url of [
      '/rest/Company?$method=entityset',
      `${uri}?$method=entityset`,
      `${uri}?$method=release`,
      `/rest/Company(${key})?$lock=true`,
      '/rest/$catalog/counts',
      `${uri}?$savedfilter=%22ID%3E0%22`,
      '/rest/Company?$querypath=true',
    ]) {
      const res = await c(url, { headers: CROSS_SITE });
      assert.equal(res.status, 403, `${url}: ${JSON.stringify(res.body)}`);
      assert.equal(errCode(res), 7046, url);
    }
    assert.equal(await setsHeld(), held, 'no set stored, none released');
    assert.equal((await c(`${uri}?$top=1`)).status, 200, 'the set is still there');
    // the same from the server's own page, and without a browser
    assert.equal((await c('/rest/$catalog/counts', { headers: { 'sec-fetch-site': 'same-origin' } })).status, 200);
    assert.equal((await c(`/rest/Company(${key})?$lock=true`)).body.result, true);
    assert.equal((await c(`/rest/Company(${key})?$lock=false`, { headers: { 'sec-fetch-site': 'same-origin' } })).body.result, true);
    assert.deepEqual((await c(`${uri}?$method=release`)).body, { ok: true });
  });

  it('answers a read from another site\'s page: it changes nothing, and the page cannot read the answer', async () => {
    const c = await alice();
    for (const url of ['/rest/Company?$top=1', '/rest/$directory/currentUser', '/rest/$catalog', '/rest/$info']) {
      assert.equal((await c(url, { headers: CROSS_SITE })).status, 200, url);
      assert.equal((await c(url, { headers: EVIL_REFERER })).status, 200, url);
    }
  });

  it('takes a --cors-origin\'s page: its Origin, or on a navigation its Referer; another port of localhost is same-site but another origin, refused unless listed', async () => {
    const cors = await buildServer(demo.ds, { logLevel: 'silent', corsOrigins: ['http://localhost:3000'] });
    try {
      const c = client(cors);
      assert.deepEqual((await c('/rest/$directory/login', { method: 'POST', body: ['alice', 'alice123'], headers: { origin: 'http://localhost:3000' } })).body, { result: true });
      const write = await c('/rest/Company?$method=update', { method: 'POST', body: { name: 'Listed', companyCode: 'CORS-1' }, headers: { 'sec-fetch-site': 'same-site', referer: 'http://localhost:3000/app' } });
      assert.equal(write.status, 200, JSON.stringify(write.body));
      const other = await c('/rest/Company?$method=update', { method: 'POST', body: { name: 'Other', companyCode: 'CORS-2' }, headers: { 'sec-fetch-site': 'same-site', referer: 'http://localhost:4000/app' } });
      assert.equal(errCode(other), 7046);
      assert.equal((await c('/rest/$directory/logout', { headers: { 'sec-fetch-site': 'cross-site', referer: 'http://evil.example/' } })).status, 403);
      assert.deepEqual((await c('/rest/$directory/logout', { headers: { 'sec-fetch-site': 'same-site', referer: 'http://localhost:3000/app' } })).body, { result: true });
    } finally {
      await cors.close();
    }
  });
});

describe('foreignPage: the page a request came from', () => {
  const guard = httpGuard({ allowedHosts: ['localhost'], corsOrigins: ['https://app.example.com/'] });
  const from = (headers: Record<string, string>, host = 'localhost:8080') => guard.foreignPage({ host, method: 'GET', protocol: 'http', headers });

  it('judges by Origin first, then Sec-Fetch-Site, then Referer; a request with none of them is no page\'s', () => {
    assert.equal(from({}), undefined);
    assert.equal(from({ origin: 'http://localhost:8080' }), undefined);
    assert.equal(from({ origin: 'https://app.example.com', 'sec-fetch-site': 'cross-site' }), undefined, 'a listed origin (its trailing slash dropped)');
    assert.match(from({ origin: 'http://localhost:3000', 'sec-fetch-site': 'same-site' }) ?? '', /Origin: http:\/\/localhost:3000/);
    assert.equal(from({ 'sec-fetch-site': 'same-origin', referer: 'http://evil.example/' }), undefined, 'the browser\'s own word over a Referer');
    assert.equal(from({ 'sec-fetch-site': 'none' }), undefined);
    assert.match(from({ 'sec-fetch-site': 'cross-site' }) ?? '', /another site.*no Referer/);
    assert.equal(from({ 'sec-fetch-site': 'cross-site', referer: 'https://app.example.com/list' }), undefined, 'a navigation from a listed page');
    assert.match(from({ 'sec-fetch-site': 'same-site', referer: 'http://localhost:3000/' }) ?? '', /another origin of the same site/);
    assert.equal(from({ 'sec-fetch-site': 'same-site', referer: 'http://localhost:8080/x' }), undefined);
    assert.match(from({ referer: 'http://evil.example/' }) ?? '', /Referer from http:\/\/evil\.example/);
    assert.match(from({ referer: 'not a url' }) ?? '', /Referer from null/);
    assert.equal(from({ referer: 'http://localhost/' }, 'localhost:80'), undefined, 'a default port is the same origin');
  });
});
