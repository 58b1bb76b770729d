// HTTP's conventions (issue 17): entity tags with If-None-Match (304) and If-Match on an update
// (412 with the stamp's own __ERROR), compression by Accept-Encoding, HEAD and OPTIONS.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { DEMO_DIR, openDemo, type DemoFixture } from '../support/helpers.js';

type Res = Awaited<ReturnType<FastifyInstance['inject']>>;

async function get(app: FastifyInstance, url: string, headers: Record<string, string> = {}): Promise<Res> {
  return app.inject({ url, headers });
}

async function post(app: FastifyInstance, url: string, payload: unknown, headers: Record<string, string> = {}): Promise<Res> {
  return app.inject({ method: 'POST', url, payload: payload as InjectOptions['payload'], headers });
}

const errCode = (res: Res): number | undefined => res.json().__ERROR?.[0]?.errCode;

describe('entity tags and conditional requests', () => {
  let demo: DemoFixture;
  let app: FastifyInstance;
  let key: string;
  before(async () => {
    demo = await openDemo();
    app = demo.app;
    key = (await get(app, '/rest/Employee?$top=1')).json().__ENTITIES[0].__KEY;
  });
  after(() => demo.close());

  it('gives an entity an ETag that starts with its __STAMP, and answers 304 with no body when If-None-Match names it', async () => {
    const first = await get(app, `/rest/Employee(${key})`);
    assert.equal(first.statusCode, 200);
    const etag = first.headers.etag as string;
    assert.match(etag, new RegExp(`^"${first.json().__STAMP}-`));
    const again = await get(app, `/rest/Employee(${key})`, { 'if-none-match': etag });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    assert.equal(again.headers.etag, etag);
    // a list, and the weak form of the same tag, match too (If-None-Match compares weakly)
    assert.equal((await get(app, `/rest/Employee(${key})`, { 'if-none-match': `"other", W/${etag}` })).statusCode, 304);
    assert.equal((await get(app, `/rest/Employee(${key})`, { 'if-none-match': '"1-nothing"' })).statusCode, 200);
    // the 304 carries the tag a 200 would: strong, though the client wrote it weak
    const weak = await get(app, `/rest/Employee(${key})`, { 'if-none-match': `W/${etag}` });
    assert.equal(weak.statusCode, 304);
    assert.equal(weak.headers.etag, etag);
    const page = await get(app, '/rest/City?$top=2');
    const pageTag = page.headers.etag as string;
    const strongPage = await get(app, '/rest/City?$top=2', { 'if-none-match': pageTag.slice(2) });
    assert.equal(strongPage.statusCode, 304);
    assert.equal(strongPage.headers.etag, pageTag, 'a page\'s tag stays weak');
  });

  it('changes an entity\'s ETag when it is saved, and when what it shows of another entity changes (a relation, an alias)', async () => {
    const before = await get(app, `/rest/Employee(${key})`);
    const saved = await post(app, '/rest/Employee?$method=update', { __KEY: key, __STAMP: before.json().__STAMP, firstName: 'Tagged' });
    assert.equal(saved.statusCode, 200, saved.body);
    const after = await get(app, `/rest/Employee(${key})`, { 'if-none-match': before.headers.etag as string });
    assert.equal(after.statusCode, 200);
    assert.notEqual(after.headers.etag, before.headers.etag);
    // Company shows its city's name through an alias: a change of the city changes the company's answer and tag
    const company = await get(app, '/rest/Company(1)');
    const cityKey = company.json().city.__deferred.__KEY;
    const city = (await get(app, `/rest/City(${cityKey})`)).json();
    assert.equal((await post(app, '/rest/City?$method=update', { __KEY: cityKey, __STAMP: city.__STAMP, name: 'Renamed City' })).statusCode, 200);
    const later = await get(app, '/rest/Company(1)', { 'if-none-match': company.headers.etag as string });
    assert.equal(later.statusCode, 200, 'not 304: the company\'s answer shows the renamed city');
    assert.equal(later.json().cityName, 'Renamed City');
  });

  it('gives no 304 after a change an alias shows, a key taken by another entity, or a key deleted and created again', async () => {
    // an alias alone in $attributes reaches past the row
    const company = await get(app, '/rest/Company(2)?$attributes=name,cityName');
    const cityKey = (await get(app, '/rest/Company(2)')).json().city.__deferred.__KEY;
    const city = (await get(app, `/rest/City(${cityKey})`)).json();
    assert.equal((await post(app, '/rest/City?$method=update', { __KEY: cityKey, __STAMP: city.__STAMP, name: 'Alias Town' })).statusCode, 200);
    assert.equal((await get(app, '/rest/Company(2)?$attributes=name,cityName', { 'if-none-match': company.headers.etag as string })).statusCode, 200);
    // a read by a unique attribute that now reaches another entity (both at stamp 1)
    const made = await post(app, '/rest/City?$method=update', { name: 'Tagtown', country: 'Nowhere' });
    const byName = await get(app, '/rest/City:name(Tagtown)?$attributes=name,country');
    await post(app, `/rest/City(${made.json().__KEY})?$method=delete`, undefined);
    const other = await post(app, '/rest/City?$method=update', { name: 'Tagtown', country: 'Elsewhere' });
    assert.equal(other.json().__STAMP, byName.json().__STAMP);
    assert.equal((await get(app, '/rest/City:name(Tagtown)?$attributes=name,country', { 'if-none-match': byName.headers.etag as string })).statusCode, 200);
    // the same key deleted and created again starts at the same stamp: another life, another tag
    const first = await post(app, '/rest/City?$method=update', { ID: 900, name: 'Once' });
    const tag = (await get(app, '/rest/City(900)?$attributes=name')).headers.etag as string;
    await post(app, '/rest/City(900)?$method=delete', undefined);
    await new Promise((r) => setTimeout(r, 5));
    const again = await post(app, '/rest/City?$method=update', { ID: 900, name: 'Twice' });
    assert.equal(again.json().__STAMP, first.json().__STAMP);
    assert.equal((await get(app, '/rest/City(900)?$attributes=name', { 'if-none-match': tag })).statusCode, 200);
    // If-Match names the entity and its life, not its stamp alone (issue 17's review): the old life's tag is refused
    const oldLife = await post(app, '/rest/City?$method=update', { __KEY: 900, name: 'Thrice' }, { 'if-match': tag });
    assert.equal(oldLife.statusCode, 412, oldLife.body);
    assert.equal(errCode(oldLife), 1263);
    assert.equal((await post(app, '/rest/City(900)', { name: 'Thrice' }, { 'if-match': tag })).statusCode, 412, 'POST /rest/City(key) too');
    assert.equal((await post(app, '/rest/City(900)', { name: 'Thrice' }, { 'if-match': tag.replace(/"$/, '+br"') })).statusCode, 412, 'with an encoding too');
    const oldDelete = await post(app, '/rest/City(900)?$method=delete', undefined, { 'if-match': tag });
    assert.equal(oldDelete.statusCode, 412, oldDelete.body);
    assert.equal(errCode(oldDelete), 1263);
    assert.equal((await get(app, '/rest/City(900)?$attributes=name')).json().name, 'Twice', 'nothing saved, nothing deleted');
    // a tag of another entity at the same stamp, or a made-up one, is refused as well
    const stamp = again.json().__STAMP;
    for (const foreign of [`"${stamp}-zzzz-abc"`, String((await get(app, `/rest/City(${other.json().__KEY})?$attributes=name`)).headers.etag)]) {
      assert.match(foreign, new RegExp(`^"${stamp}-`));
      const res = await post(app, '/rest/City(900)', { name: 'Thrice' }, { 'if-match': foreign });
      assert.equal(res.statusCode, 412, `${foreign}: ${res.body}`);
      assert.equal(errCode(res), 1263);
      assert.equal((await post(app, '/rest/City(900)?$method=delete', undefined, { 'if-match': foreign })).statusCode, 412, foreign);
    }
    // the current tag (read through any $attributes: the view says how it was shown, not which version) passes
    const current = (await get(app, '/rest/City(900)')).headers.etag as string;
    assert.equal((await post(app, '/rest/City(900)', { name: 'Thrice' }, { 'if-match': current })).statusCode, 200);
  });

  it('evaluates If-Match on a GET of one entity (412 when it is not the entity as it is now), refuses it on other reads', async () => {
    const read = await get(app, '/rest/City(3)?$attributes=name');
    const tag = read.headers.etag as string;
    const same = await get(app, '/rest/City(3)', { 'if-match': tag });
    assert.equal(same.statusCode, 200, same.body);
    assert.equal((await app.inject({ method: 'HEAD', url: '/rest/City(3)', headers: { 'if-match': tag } })).statusCode, 200);
    assert.equal((await get(app, '/rest/City(3)', { 'if-match': '*' })).statusCode, 200);
    for (const stale of [`"${read.json().__STAMP}-zzzz-abc"`, `"${read.json().__STAMP + 1}"`]) {
      const res = await get(app, '/rest/City(3)', { 'if-match': stale });
      assert.equal(res.statusCode, 412, `${stale}: ${res.body}`);
      assert.equal(errCode(res), 1263);
    }
    const saved = await post(app, '/rest/City(3)', { name: 'Changed since' }, { 'if-match': tag });
    assert.equal(saved.statusCode, 200, saved.body);
    assert.equal((await get(app, '/rest/City(3)', { 'if-match': tag })).statusCode, 412, 'changed since');
    const page = await get(app, '/rest/City?$top=2', { 'if-match': tag });
    assert.equal(page.statusCode, 400, page.body);
    assert.equal(errCode(page), 7054);
    assert.equal((await get(app, '/rest/City(3)', { 'if-match': 'W/"1-abc"' })).statusCode, 400, 'a weak tag names no version');
  });

  it('refuses If-Unmodified-Since and If-Modified-Since on a write (400, 7054, naming If-Match), saving and deleting nothing', async () => {
    const read = await get(app, '/rest/City(4)');
    const stamp = read.json().__STAMP;
    const past = 'Sat, 01 Jan 2000 00:00:00 GMT';
    for (const header of ['if-unmodified-since', 'if-modified-since']) {
      for (const [url, body] of [
        ['/rest/City?$method=update', { __KEY: 4, __STAMP: stamp, name: 'Dated' }],
        ['/rest/City(4)', { name: 'Dated' }],
        ['/rest/City?$method=delete&$filter="ID=4"', undefined],
        ['/rest/City(4)?$method=delete', undefined],
      ] as const) {
        const res = await post(app, url, body, { [header]: past });
        assert.equal(res.statusCode, 400, `${header} ${url}: ${res.body}`);
        assert.equal(errCode(res), 7054);
        assert.match(res.json().__ERROR[0].message, new RegExp(`${header}.*If-Match`, 'i'));
      }
    }
    const after = await get(app, '/rest/City(4)');
    assert.equal(after.statusCode, 200, 'not deleted');
    assert.equal(after.json().__STAMP, stamp, 'not saved');
  });

  it('refuses If-Match on a write that does not evaluate it, and If-None-Match on any write, saving nothing', async () => {
    const read = await get(app, '/rest/City(3)');
    const tag = read.headers.etag as string;
    const del = await post(app, `/rest/City?$method=delete&$filter="ID=3"`, undefined, { 'if-match': tag });
    assert.equal(del.statusCode, 400, 'a delete by filter takes no If-Match');
    assert.equal(errCode(del), 7054);
    const upd = await post(app, '/rest/City?$method=update', { __KEY: 3, __STAMP: read.json().__STAMP, name: 'X' }, { 'if-none-match': '*' });
    assert.equal(upd.statusCode, 400);
    assert.equal(errCode(upd), 7054);
    assert.equal((await get(app, '/rest/City(3)')).json().__STAMP, read.json().__STAMP, 'nothing deleted or saved');
  });

  it('deletes one entity with If-Match only while it is as the client read it: 412 with the stamp\'s __ERROR otherwise', async () => {
    const made = await post(app, '/rest/City?$method=update', { name: 'Doomed' });
    assert.equal(made.statusCode, 200, made.body);
    const id = made.json().__KEY;
    const first = await get(app, `/rest/City(${id})`);
    await post(app, '/rest/City?$method=update', { __KEY: id, __STAMP: first.json().__STAMP, name: 'Doomed twice' });
    const stale = await post(app, `/rest/City(${id})?$method=delete`, undefined, { 'if-match': first.headers.etag as string });
    assert.equal(stale.statusCode, 412, stale.body);
    assert.equal(errCode(stale), 1263);
    assert.match(stale.json().__ERROR[1].message, /delete/);
    assert.equal((await get(app, `/rest/City(${id})`)).statusCode, 200, 'not deleted');
    const current = String((await get(app, `/rest/City(${id})`)).headers.etag).replace(/"$/, '+gzip"');
    const gone = await post(app, `/rest/City(${id})?$method=delete`, undefined, { 'if-match': current });
    assert.equal(gone.statusCode, 200, gone.body);
    assert.equal((await get(app, `/rest/City(${id})`)).statusCode, 404);
  });

  it('gives a page a weak ETag from the global stamp: 304 until anything is saved', async () => {
    const page = await get(app, '/rest/Company?$top=5&$orderby=name');
    const etag = page.headers.etag as string;
    assert.match(etag, /^W\/"g\d+-/);
    assert.equal(page.json().__GlobalStamp !== undefined, true);
    assert.equal((await get(app, '/rest/Company?$top=5&$orderby=name', { 'if-none-match': etag })).statusCode, 304);
    const e = (await get(app, `/rest/Employee(${key})`)).json();
    await post(app, '/rest/Employee?$method=update', { __KEY: key, __STAMP: e.__STAMP, lastName: 'Elsewhere' });
    const after = await get(app, '/rest/Company?$top=5&$orderby=name', { 'if-none-match': etag });
    assert.equal(after.statusCode, 200);
    assert.notEqual(after.headers.etag, etag);
  });

  it('gives no ETag to answers that are not reads of data (a function\'s result, $catalog, an error)', async () => {
    assert.equal((await get(app, '/rest/$catalog')).headers.etag, undefined);
    assert.equal((await get(app, '/rest/Employee(nope)')).headers.etag, undefined);
  });

  it('updates with If-Match in place of __STAMP, and answers 412 with the stamp\'s __ERROR when the entity changed since', async () => {
    const read = await get(app, `/rest/Employee(${key})`);
    const etag = read.headers.etag as string;
    const ok = await post(app, '/rest/Employee?$method=update', { __KEY: key, firstName: 'Matched' }, { 'if-match': etag });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.json().firstName, 'Matched');
    const stale = await post(app, '/rest/Employee?$method=update', { __KEY: key, firstName: 'Stale' }, { 'if-match': etag });
    assert.equal(stale.statusCode, 412);
    assert.equal(errCode(stale), 1263);
    assert.equal((await get(app, `/rest/Employee(${key})`)).json().firstName, 'Matched', 'the stale update saved nothing');
    // the bare stamp, quoted, is a tag too; and POST /rest/Employee(key) takes it as well
    const stamp = ok.json().__STAMP;
    const byUrl = await post(app, `/rest/Employee(${key})`, { firstName: 'ByUrl' }, { 'if-match': `"${stamp}"` });
    assert.equal(byUrl.statusCode, 200, byUrl.body);
    // * asks only that the entity exist
    assert.equal((await post(app, '/rest/Employee?$method=update', { __KEY: key, firstName: 'Any' }, { 'if-match': '*' })).statusCode, 200);
  });

  it('refuses an If-Match it cannot use with 400 INVALID_HEADER naming why, and saves nothing', async () => {
    const read = (await get(app, `/rest/Employee(${key})`)).json();
    const cases: [unknown, string, RegExp][] = [
      [{ __KEY: key, firstName: 'X' }, 'W/"1-abc"', /weak/],
      [{ __KEY: key, firstName: 'X' }, 'nonsense', /ETag of the entity/],
      [{ __KEY: key, firstName: 'X' }, '"1-a", "2-b"', /one tag/],
      [[{ __KEY: key, __STAMP: read.__STAMP, firstName: 'X' }], `"${read.__STAMP}"`, /one entity, not a list/],
      [{ firstName: 'New' }, `"${read.__STAMP}"`, /no __KEY/],
    ];
    for (const [body, header, message] of cases) {
      const res = await post(app, '/rest/Employee?$method=update', body, { 'if-match': header });
      assert.equal(res.statusCode, 400, `${header}: ${res.body}`);
      assert.equal(errCode(res), 7054);
      assert.match(res.json().__ERROR[0].message, message);
    }
    const disagree = await post(app, '/rest/Employee?$method=update', { __KEY: key, __STAMP: read.__STAMP, firstName: 'X' }, { 'if-match': `"${read.__STAMP + 1}"` });
    assert.equal(disagree.statusCode, 400);
    assert.match(disagree.json().__ERROR[0].message, /disagree/);
    assert.equal((await get(app, `/rest/Employee(${key})`)).json().__STAMP, read.__STAMP, 'nothing was saved');
  });
});

describe('entity tags name what the session is shown', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo({ roles: join(DEMO_DIR, 'roles.json') });
  });
  after(() => demo.close());

  it('gives a session that sees more attributes (after its login) another tag for the same URL', async () => {
    const app = demo.app;
    const key = (await get(app, '/rest/Employee?$top=1')).json().__ENTITIES[0].__KEY;
    const guest = await get(app, `/rest/Employee(${key})`);
    assert.equal(guest.json().salary, undefined, 'a guest does not see salaries');
    const login = await post(app, '/rest/$directory/login', ['bob', 'bob123']);
    const cookie = String(([] as string[]).concat(login.headers['set-cookie'] as string[]).find((c) => c.startsWith('4DSID_'))).split(';')[0];
    const privileged = await get(app, `/rest/Employee(${key})`, { cookie, 'if-none-match': guest.headers.etag as string });
    assert.equal(privileged.statusCode, 200, 'not 304: this session is shown the salary');
    assert.notEqual(privileged.json().salary, undefined);
    assert.notEqual(privileged.headers.etag, guest.headers.etag);
    const page = await get(app, '/rest/Employee?$top=3');
    assert.equal((await get(app, '/rest/Employee?$top=3', { cookie, 'if-none-match': page.headers.etag as string })).statusCode, 200);
  });
});

describe('compression, HEAD and OPTIONS', () => {
  let demo: DemoFixture;
  let app: FastifyInstance;
  before(async () => {
    demo = await openDemo();
    app = demo.app;
  });
  after(() => demo.close());

  it('compresses a JSON page over 1 KB with br or gzip, as Accept-Encoding asks, to the same JSON', async () => {
    const plain = await get(app, '/rest/Employee?$top=100');
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.ok(plain.rawPayload.length > 1024);
    const br = await get(app, '/rest/Employee?$top=100', { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(br.headers.vary, 'accept-encoding');
    assert.deepEqual(JSON.parse(brotliDecompressSync(br.rawPayload).toString()), plain.json());
    assert.ok(br.rawPayload.length < plain.rawPayload.length / 3, `${br.rawPayload.length} of ${plain.rawPayload.length} bytes`);
    const gz = await get(app, '/rest/Employee?$top=100', { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(JSON.parse(gunzipSync(gz.rawPayload).toString()), plain.json());
    // RFC 9110 §12.5.3: `*` stands for the codings not named; one named with q=0 is refused
    for (const [header, expected] of [['gzip;q=0, *', 'br'], ['br;q=0, gzip;q=0, *', undefined], ['*;q=0', undefined], ['*', 'br'], ['x-gzip', 'gzip'], ['br;q=0.1, *;q=0.5', 'gzip']] as const) {
      const res = await get(app, '/rest/Employee?$top=100', { 'accept-encoding': header });
      assert.equal(res.headers['content-encoding'], expected, header);
    }
    const yaml = await get(app, '/rest/$openapi?format=yaml', { 'accept-encoding': 'br' });
    assert.match(String(yaml.headers['content-type']), /^application\/yaml/);
    assert.equal(yaml.headers['content-encoding'], 'br', 'YAML is text');
  });

  it('says Vary: accept-encoding on every answer that could have been compressed, sent compressed or not', async () => {
    for (const encoding of [undefined, 'identity', 'deflate', 'gzip;q=0, br;q=0']) {
      const res = await get(app, '/rest/Employee?$top=100', encoding === undefined ? {} : { 'accept-encoding': encoding });
      assert.equal(res.headers['content-encoding'], undefined, String(encoding));
      assert.ok(res.rawPayload.length > 1024);
      assert.equal(res.headers.vary, 'accept-encoding', String(encoding));
      const head = await app.inject({ method: 'HEAD', url: '/rest/Employee?$top=100', headers: encoding === undefined ? {} : { 'accept-encoding': encoding } });
      assert.equal(head.headers.vary, 'accept-encoding', `HEAD ${String(encoding)}`);
    }
    const key = (await get(app, '/rest/Employee?$top=1')).json().__ENTITIES[0].__KEY;
    const entity = await get(app, `/rest/Employee(${key})?$expand=employer`);
    assert.ok(entity.rawPayload.length > 1024);
    assert.equal(entity.headers.vary, 'accept-encoding', 'its strong tag differs from the compressed variant\'s');
    const small = await get(app, '/rest/City?$top=1&$attributes=name');
    assert.ok(small.rawPayload.length < 1024);
    assert.equal(small.headers.vary, undefined, 'never compressed');
  });

  it('refuses HEAD (405, Allow without HEAD) wherever GET changes something: logout, sets stored or released, function calls, $lock, $querypath', async () => {
    const login = await post(app, '/rest/$directory/login', ['alice', 'alice123']);
    assert.equal(login.statusCode, 200, login.body);
    const cookie = String(login.headers['set-cookie']).split(';', 1)[0];
    const user = async () => (await get(app, '/rest/$directory/currentUser', { cookie })).json().result?.userName;
    assert.equal(await user(), 'alice');
    const made = await get(app, '/rest/City?$method=entityset&$top=1', { cookie });
    assert.equal(made.statusCode, 200, made.body);
    const setUrl = made.json().__ENTITYSET as string;
    const key = (await get(app, '/rest/Employee?$top=1')).json().__ENTITIES[0].__KEY;
    for (const url of [
      '/rest/$directory/logout',
      `${setUrl}?$method=release`,
      '/rest/City?$method=entityset&$top=1',
      `${setUrl}?$method=entityset&$filter="ID>0"`,
      '/rest/Company/byCode?$params=["X"]',
      '/rest/Employee/salaryBands',
      `/rest/Employee(${key})?$lock=true`,
      '/rest/City?$filter="ID>0"&$querypath=true',
      `${setUrl}?$savedfilter="ID>0"`,
    ]) {
      const head = await app.inject({ method: 'HEAD', url, headers: { cookie } });
      assert.equal(head.statusCode, 405, `HEAD ${url}`);
      const allow = String(head.headers.allow);
      assert.doesNotMatch(allow, /HEAD/, `${url}: ${allow}`);
      assert.match(allow, /GET|POST/, `${url}: ${allow}`);
      const options = await app.inject({ method: 'OPTIONS', url, headers: { cookie } });
      assert.equal(options.statusCode, 204, url);
      assert.equal(options.headers.allow, allow, url);
    }
    assert.equal(await user(), 'alice', 'still logged in');
    assert.equal((await get(app, setUrl, { cookie })).statusCode, 200, 'the set is still there');
    // where GET changes nothing HEAD stays, and OPTIONS lists it
    assert.equal((await app.inject({ method: 'HEAD', url: '/rest/$directory/currentUser', headers: { cookie } })).statusCode, 200);
    assert.equal((await app.inject({ method: 'HEAD', url: setUrl, headers: { cookie } })).statusCode, 200);
    assert.equal((await app.inject({ method: 'OPTIONS', url: `/rest/Employee(${key})` })).headers.allow, 'GET, HEAD, POST, OPTIONS');
    assert.equal((await app.inject({ method: 'OPTIONS', url: `/rest/Employee(${key})?$lock=true` })).headers.allow, 'GET, POST, OPTIONS');
    assert.equal((await get(app, '/rest/$directory/logout', { cookie })).statusCode, 200);
  });

  it('sends a blob as it is, however compressible its bytes', async () => {
    const key = (await get(app, '/rest/Employee?$top=1')).json().__ENTITIES[0].__KEY;
    const stored = await app.inject({ method: 'POST', url: `/rest/Employee(${key})/resume?$binary=true`, payload: Buffer.alloc(5000, 0x61), headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(stored.statusCode, 200, stored.body);
    const blob = await get(app, `/rest/Employee(${key})/resume`, { 'accept-encoding': 'br, gzip' });
    assert.equal(blob.statusCode, 200, blob.body);
    assert.equal(blob.headers['content-encoding'], undefined);
    assert.equal(blob.rawPayload.length, 5000);
  });

  it('sends answers under 1 KB and images as they are', async () => {
    const small = await get(app, '/rest/City?$top=1&$attributes=name', { 'accept-encoding': 'br' });
    assert.ok(small.rawPayload.length < 1024);
    assert.equal(small.headers['content-encoding'], undefined);
    const company = (await get(app, '/rest/Company?$filter="logo!=null"&$top=1&$attributes=logo')).json().__ENTITIES[0];
    if (company) {
      const image = await get(app, `/rest/Company(${company.__KEY})/logo?$imageformat=best`, { 'accept-encoding': 'br, gzip' });
      assert.equal(image.statusCode, 200);
      assert.match(String(image.headers['content-type']), /^image\//);
      assert.equal(image.headers['content-encoding'], undefined);
    }
  });

  it('answers HEAD like GET, headers and no body', async () => {
    const got = await get(app, '/rest/City?$top=2');
    const head = await app.inject({ method: 'HEAD', url: '/rest/City?$top=2' });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers['content-type'], got.headers['content-type']);
    assert.equal(head.headers.etag, got.headers.etag);
    assert.equal((await app.inject({ method: 'HEAD', url: '/health' })).statusCode, 200);
    // with Accept-Encoding, HEAD's headers are the compressed GET's
    const br = await get(app, '/rest/Employee?$top=100', { 'accept-encoding': 'br' });
    const brHead = await app.inject({ method: 'HEAD', url: '/rest/Employee?$top=100', headers: { 'accept-encoding': 'br' } });
    assert.equal(brHead.body, '');
    assert.equal(brHead.headers['content-encoding'], 'br');
    assert.equal(brHead.headers.vary, br.headers.vary);
    assert.equal(brHead.headers.etag, br.headers.etag);
  });

  it('gives a compressed entity its own strong tag (+br, +gzip), which If-None-Match and If-Match read as the same version', async () => {
    const key = (await get(app, '/rest/Employee?$top=1')).json().__ENTITIES[0].__KEY;
    const url = `/rest/Employee(${key})?$expand=employer`;
    const plain = await get(app, url);
    assert.ok(plain.rawPayload.length > 1024, 'big enough to be compressed');
    const br = await get(app, url, { 'accept-encoding': 'br' });
    const gz = await get(app, url, { 'accept-encoding': 'gzip' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(br.headers.etag, String(plain.headers.etag).replace(/"$/, '+br"'));
    assert.equal(gz.headers.etag, String(plain.headers.etag).replace(/"$/, '+gzip"'));
    const fresh = await get(app, url, { 'accept-encoding': 'br', 'if-none-match': br.headers.etag as string });
    assert.equal(fresh.statusCode, 304);
    assert.equal(fresh.headers.etag, br.headers.etag, 'the 304 names the representation the client holds');
    assert.equal(fresh.headers.vary, 'accept-encoding');
    assert.equal((await get(app, url, { 'if-none-match': gz.headers.etag as string })).statusCode, 304, 'the same version of the entity');
    // a 304 carries the tag the 200 would have for this request: its encoding, not the one the client names
    for (const [held, encoding, expected] of [
      [gz.headers.etag, 'br', br.headers.etag],
      [`W/${String(br.headers.etag)}`, 'gzip;q=0.5, br;q=0.2', gz.headers.etag],
      [br.headers.etag, undefined, plain.headers.etag],
      [br.headers.etag, 'identity, deflate', plain.headers.etag],
      [plain.headers.etag, '*', br.headers.etag],
    ] as const) {
      const res = await get(app, url, { 'if-none-match': String(held), ...(encoding === undefined ? {} : { 'accept-encoding': encoding }) });
      assert.equal(res.statusCode, 304, `${held} ${encoding}`);
      assert.equal(res.headers.etag, expected, `${held} ${encoding}`);
      const ok = await get(app, url, encoding === undefined ? {} : { 'accept-encoding': encoding });
      assert.equal(ok.headers.etag, expected, `the 200's, ${encoding}`);
    }
    const updated = await post(app, '/rest/Employee?$method=update', { __KEY: key, firstName: 'Tagged' }, { 'if-match': br.headers.etag as string });
    assert.equal(updated.statusCode, 200, updated.body);
    assert.equal((await get(app, url, { 'accept-encoding': 'br', 'if-none-match': br.headers.etag as string })).statusCode, 200, 'changed since');
  });

  it('answers OPTIONS 204 with the methods the REST planner takes at that URL, and 404 where it names nothing', async () => {
    const allow = async (url: string) => {
      const res = await app.inject({ method: 'OPTIONS', url });
      assert.equal(res.statusCode, 204, `${url}: ${res.body}`);
      return res.headers.allow;
    };
    assert.equal(await allow('/rest/Employee?$top=1'), 'GET, HEAD, OPTIONS', 'a collection is read; it is changed with $method');
    assert.equal(await allow('/rest/Employee?$method=update'), 'POST, OPTIONS');
    assert.equal(await allow('/rest/Employee?$method=delete'), 'POST, OPTIONS');
    assert.equal(await allow('/rest/$upload'), 'POST, OPTIONS');
    assert.equal(await allow('/rest/$directory/login'), 'POST, OPTIONS');
    assert.equal(await allow('/rest/$catalog'), 'GET, HEAD, OPTIONS');
    assert.equal(await allow('/health'), 'GET, HEAD, OPTIONS');
    const unknown = await app.inject({ method: 'OPTIONS', url: '/rest/Nothing' });
    assert.equal(unknown.statusCode, 404, 'as a GET: the dataclass does not exist');
    assert.equal(errCode(unknown), 7002);
    const malformed = await app.inject({ method: 'OPTIONS', url: '/rest/Employee((' });
    assert.equal(malformed.statusCode, 400);
    const none = await app.inject({ method: 'OPTIONS', url: '/nothing/here' });
    assert.equal(none.statusCode, 404);
    assert.equal(errCode(none), 7001);
    // the Host guard holds for OPTIONS too
    assert.equal((await app.inject({ method: 'OPTIONS', url: '/rest/Employee', headers: { host: 'evil.example' } })).statusCode, 421);
  });

  it('echoes X-Request-Id on an answer refused before the hooks run (a bad percent-encoding)', async () => {
    const res = await app.inject({ url: '/rest/Employee?$filter=%E0%A4%A', headers: { 'x-request-id': 'bad-url-1' } });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.headers['x-request-id'], 'bad-url-1');
    const path = await app.inject({ url: '/rest/%E0%A4%A', headers: { 'x-request-id': 'bad-url-2' } });
    assert.equal(path.statusCode, 400, path.body);
    assert.equal(path.headers['x-request-id'], 'bad-url-2');
  });

  it('answers 405 with Allow: a method the planner refuses, one the REST API never takes, one a route outside it does not take', async () => {
    for (const [method, url, allow] of [
      ['PUT', '/rest/Employee', 'GET, HEAD, OPTIONS'],
      ['DELETE', '/rest/$catalog', 'GET, HEAD, OPTIONS'],
      ['GET', '/rest/Employee?$method=delete', 'POST, OPTIONS'],
      ['TRACE', '/rest/Employee', 'GET, HEAD, OPTIONS'],
      ['POST', '/health', 'GET, HEAD, OPTIONS'],
    ] as const) {
      const res = await app.inject({ method, url });
      assert.equal(res.statusCode, 405, `${method} ${url}`);
      assert.equal(errCode(res), 7010);
      assert.equal(res.headers.allow, allow, `${method} ${url}`);
    }
    // a route of this very method that finds nothing (a static file, a way out of its folder) is 404, not 405
    for (const url of ['/$api/nothing.js', '/$api/static/..%2f..%2fpackage.json', '/$explorer/assets/nothing.js']) {
      const res = await app.inject({ url });
      assert.equal(res.statusCode, 404, url);
      assert.equal(errCode(res), 7001, url);
    }
  });

  it('answers OPTIONS with Allow under --cors-origin too, a preflight or not', async () => {
    const cors = await openDemo({ corsOrigins: ['https://app.example.com'] });
    try {
      const plain = await cors.app.inject({ method: 'OPTIONS', url: '/rest/Employee' });
      assert.equal(plain.statusCode, 204, plain.body);
      assert.equal(plain.headers.allow, 'GET, HEAD, OPTIONS');
      const preflight = await cors.app.inject({ method: 'OPTIONS', url: '/rest/Employee?$method=update', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
      assert.equal(preflight.statusCode, 204);
      assert.equal(preflight.headers['access-control-allow-origin'], 'https://app.example.com');
      assert.equal(preflight.headers.allow, 'POST, OPTIONS');
      const health = await cors.app.inject({ method: 'OPTIONS', url: '/health', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET' } });
      assert.equal(health.headers.allow, 'GET, HEAD, OPTIONS');
    } finally {
      await cors.close();
    }
  });
});
