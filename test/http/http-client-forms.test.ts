// The request forms wakanda-client sends that 4D's documented API does not (issue 14), each with
// its refusals: $method=subentityset on a stored set, a selection function on a set written
// after it (/$entityset/{id}/{fn}) and on a relation ($emMethod), a POST of values to an entity,
// a file's bytes posted into an image or blob attribute, a saved entity's key given back as it is;
// and a stored set read without __ENTITYSET.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { coreOf } from '../../src/datastore/datastore.js';
import { BLOB_TABLE } from '../../src/storage/system-tables/tables.js';
import { DEMO_DIR, openDemo, tempDir, type DemoFixture } from '../support/helpers.js';

type Json = Record<string, any>;

describe('wakanda-client\'s request forms', () => {
  let demo: DemoFixture;
  let png: Buffer;
  before(async () => {
    demo = await openDemo();
    png = await sharp({ create: { width: 5, height: 4, channels: 3, background: '#33cc66' } }).png().toBuffer();
  });
  after(() => demo.close());

  const errCode = (res: { body: any }): number | undefined => res.body?.__ERROR?.[0]?.errCode;
  /** A stored set of the employees earning more than `min`, by salary then ID; resolves to its id and its keys in order. */
  const employeeSet = async (min = 50_000) => {
    const res = await demo.request(`/rest/Employee?$filter="salary > ${min}"&$orderby="salary desc, ID"&$method=entityset&$top=1`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const keys = (await demo.ds.Employee.query('salary > :1', min).orderBy('salary desc, ID').toArray()).map((e) => e.getKey());
    return { uri: res.body.__ENTITYSET as string, id: (res.body.__ENTITYSET as string).split('/').pop() as string, keys };
  };
  const keysOf = (body: Json) => (body.__ENTITIES as Json[]).map((e) => e.__KEY);
  let address: string | undefined;
  /** The server on a socket (a slow upload needs one). */
  const listening = async () => (address ??= await demo.app.listen({ port: 0, host: '127.0.0.1' }));
  /** A raw body through inject, as a client posting a file sends it. */
  const post = (url: string, body: Buffer, headers: Record<string, string> = { 'content-type': 'application/octet-stream' }) => demo.app.inject({ method: 'POST', url, payload: body, headers });

  describe('a stored set read', () => {
    it('answers its pages without __ENTITYSET: only a request that stores a set carries it', async () => {
      const set = await employeeSet();
      const page = await demo.request(`/rest/Employee/$entityset/${set.id}?$top=3&$skip=1`);
      assert.equal(page.status, 200);
      assert.equal(page.body.__ENTITYSET, undefined);
      assert.deepEqual(keysOf(page.body), set.keys.slice(1, 4));
      assert.equal(page.body.__COUNT, set.keys.length);
    });

    it('pages it with $method=subentityset, as wakanda-client\'s more(), nextPage() and fetch() do', async () => {
      const set = await employeeSet();
      const page = await demo.request(`/rest/Employee/$entityset/${set.id}?$expand=employer&$limit=4&$skip=2&$method=subentityset`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      assert.equal(page.body.__ENTITYSET, undefined);
      assert.equal(page.body.__FIRST, 2);
      assert.deepEqual(keysOf(page.body), set.keys.slice(2, 6));
      assert.ok(page.body.__ENTITIES[0].employer.__KEY, 'employer expanded');
    });

    it('stores the set a $method=subentityset makes with $orderby or $filter, for the pages after it to read', async () => {
      const set = await employeeSet();
      const sorted = await demo.request(`/rest/Employee/$entityset/${set.id}?$orderby="ID"&$top=2&$method=subentityset`);
      assert.equal(sorted.status, 200);
      assert.match(sorted.body.__ENTITYSET, /^\/rest\/Employee\/\$entityset\/[0-9A-F]{32}$/);
      assert.notEqual(sorted.body.__ENTITYSET, set.uri);
      const byId = [...set.keys].sort((a, b) => (String(a) < String(b) ? -1 : 1));
      const next = await demo.request(`${sorted.body.__ENTITYSET}?$top=2&$skip=2&$method=subentityset`);
      assert.deepEqual(keysOf(next.body), byId.slice(2, 4));
    });
  });

  it('orders a $method=subentityset of a set by $subOrderby too, and refuses $subOrderby elsewhere on a set', async () => {
    const set = await employeeSet();
    const sorted = await demo.request(`/rest/Employee/$entityset/${set.id}?$subOrderby="ID desc"&$top=3&$method=subentityset`);
    assert.equal(sorted.status, 200, JSON.stringify(sorted.body));
    const byId = [...set.keys].sort((a, b) => (String(a) < String(b) ? 1 : -1));
    assert.deepEqual(keysOf(sorted.body), byId.slice(0, 3));
    assert.ok(sorted.body.__ENTITYSET);
    assert.equal(errCode(await demo.request(`/rest/Employee/$entityset/${set.id}?$subOrderby="ID"`)), 7007);
    assert.equal(errCode(await demo.request(`/rest/Employee/$entityset/${set.id}?$subOrderby="ID"&$orderby="ID"&$method=subentityset`)), 7007);
  });

  it('calls functions only with GET (an @onHttpGet one) or POST: PUT, PATCH and DELETE are refused naming the method', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      for (const url of ['/rest/Company/byCode', '/rest/$catalog/counts', '/rest/City(1)/companies?$emMethod=totalRevenues']) {
        const res = await demo.request(url, method, []);
        assert.equal(res.status, 405, `${method} ${url}: ${JSON.stringify(res.body)}`);
        assert.match(res.body.__ERROR[0].message, new RegExp(`^${method} cannot call`), url);
      }
    }
  });

  describe('a selection function on a stored set, written after it: /rest/{dc}/$entityset/{id}/{fn}', () => {
    it('runs on the set\'s members, as /rest/{dc}/{fn}/$entityset/{id} does', async () => {
      const res = await demo.request('/rest/Company?$filter="ID < 4"&$method=entityset&$top=1');
      const id = (res.body.__ENTITYSET as string).split('/').pop();
      const expected = Number(await demo.ds.Company.query('ID < 4').sum('revenues'));
      assert.deepEqual((await demo.request(`/rest/Company/$entityset/${id}/totalRevenues`, 'POST', [])).body, { result: expected });
      assert.deepEqual((await demo.request(`/rest/Company/totalRevenues/$entityset/${id}`, 'POST', [])).body, { result: expected });
    });

    it('refuses an unknown function (-10729), a GET of a POST-only one (405) and an unknown set (1802)', async () => {
      const res = await demo.request('/rest/Company?$method=entityset&$top=1');
      const id = (res.body.__ENTITYSET as string).split('/').pop();
      const unknown = await demo.request(`/rest/Company/$entityset/${id}/totalRevenue`, 'POST', []);
      assert.equal(errCode(unknown), -10729);
      assert.match(unknown.body.__ERROR[0].message, /did you mean 'totalRevenues'/);
      assert.equal((await demo.request(`/rest/Company/$entityset/${id}/totalRevenues`)).status, 405);
      assert.equal(errCode(await demo.request('/rest/Company/$entityset/0123456789ABCDEF0123456789ABCDEF/totalRevenues', 'POST', [])), 1802);
    });
  });

  describe('$emMethod: a selection function on the entities of a relation', () => {
    it('runs the related dataclass\'s selection function on them (the deferred URI\'s $expand is spent)', async () => {
      const res = await demo.request('/rest/City(1)/companies?$expand=companies&$method=subentityset&$emMethod=totalRevenues', 'POST', []);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, { result: Number(await demo.ds.Company.query('city.ID = 1').sum('revenues')) });
      // a selection result answered as a collection of the related dataclass
      const best = await demo.request('/rest/Company(1)/staff?$expand=staff&$method=subentityset&$emMethod=bestPaid', 'POST', []);
      assert.equal(best.status, 200, JSON.stringify(best.body));
    });

    it('refuses an N→1 relation, an unknown function, a bad name and another $method, naming each', async () => {
      const cases: [string, number, RegExp][] = [
        ['/rest/Employee(1)/employer?$emMethod=totalRevenues', 7004, /1→N relation/],
        ['/rest/City?$emMethod=totalRevenues', 7004, /1→N relation/],
        ['/rest/City(1)/companies?$emMethod=totalRevenue', -10729, /CompanySelection.*did you mean 'totalRevenues'/],
        ['/rest/City(1)/companies?$emMethod=total-revenues', 7007, /\$emMethod names a function/],
        ['/rest/City(1)/companies?$method=update&$emMethod=totalRevenues', 7007, /goes with \$method=subentityset/],
      ];
      for (const [url, code, message] of cases) {
        const res = await demo.request(url, 'POST', []);
        assert.equal(errCode(res), code, `${url}: ${JSON.stringify(res.body)}`);
        assert.match(res.body.__ERROR[0].message, message, url);
      }
    });
  });

  describe('POST /rest/{dc}({key}) with values: an update of that entity', () => {
    it('updates it with __KEY and __STAMP as $method=update would (media delete() saves null this way)', async () => {
      const company = (await demo.ds.Company.get(3))!;
      const res = await demo.request('/rest/Company(3)', 'POST', { __KEY: '3', __STAMP: company.getStamp(), revenues: 123 });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.__STAMP, company.getStamp() + 1);
      assert.equal((await demo.ds.Company.get(3))!.get('revenues'), 123);
      // a __KEY left out is the URL's
      const again = await demo.request('/rest/Company(3)', 'POST', { __STAMP: res.body.__STAMP, revenues: 124 });
      assert.equal(again.status, 200, JSON.stringify(again.body));
    });

    it('refuses another entity\'s __KEY, a body that is no object, a missing __STAMP and a stale one', async () => {
      const stamp = (await demo.ds.Company.get(3))!.getStamp();
      const other = await demo.request('/rest/Company(3)', 'POST', { __KEY: '4', __STAMP: 1, revenues: 1 });
      assert.equal(errCode(other), 7014);
      assert.match(other.body.__ERROR[0].message, /not the key of the URL, Company\(3\)/);
      assert.equal(errCode(await demo.request('/rest/Company(3)', 'POST', [{ revenues: 1 }])), 7014);
      const stampless = await demo.request('/rest/Company(3)', 'POST', { revenues: 1 });
      assert.equal(errCode(stampless), 7014);
      assert.match(stampless.body.__ERROR[0].message, /give the __STAMP it was read with/);
      assert.equal(errCode(await demo.request('/rest/Company(3)', 'POST', { __STAMP: stamp - 1, revenues: 1 })), 1263);
    });
  });

  describe('a file posted into an entity\'s attribute: POST /rest/{dc}({key})/{attribute}?$rawPict=<type> | $binary=true', () => {
    it('stores an image into an image attribute, saved as an update (its stamp moves), and serves it back', async () => {
      const before = (await demo.ds.Company.get(5))!;
      const res = await post('/rest/Company(5)/logo?$rawPict=image/png', png);
      assert.equal(res.statusCode, 200, res.body);
      const body = JSON.parse(res.body);
      assert.equal(body.__KEY, '5');
      assert.equal(body.__STAMP, before.getStamp() + 1);
      const served = await demo.app.inject({ url: '/rest/Company(5)/logo' });
      assert.equal(served.headers['content-type'], 'image/png');
      assert.ok(served.rawPayload.equals(png));
      // $rawPict=true, as 4D's $upload takes it, works too
      assert.equal((await post('/rest/Company(5)/logo?$rawPict=true', png)).statusCode, 200);
    });

    it('stores any bytes into a blob attribute with $binary=true, and the file it replaces goes', async () => {
      const key = (await demo.ds.Employee.all().first())!.getKey() as string;
      const count = async () => Number((await coreOf(demo.ds).storage.get(`SELECT COUNT(*) AS n FROM "${BLOB_TABLE}"`))?.n);
      assert.equal((await post(`/rest/Employee(${key})/resume?$binary=true`, Buffer.from('first resume'))).statusCode, 200);
      const files = await count();
      assert.equal((await post(`/rest/Employee(${key})/resume?$binary=true`, Buffer.from('second resume'))).statusCode, 200);
      assert.equal(await count(), files);
      const served = await demo.app.inject({ url: `/rest/Employee(${key})/resume?$binary=true` });
      assert.equal(served.body, 'second resume');
    });

    it('reads $rawPict and $binary as every option is read: percent-encoded names upload, a false value does not', async () => {
      assert.equal((await post('/rest/Company(5)/logo?$raw%50ict=image/png', png)).statusCode, 200);
      assert.equal((await post('/rest/Company(5)/logo?%24rawPict=%22true%22', png)).statusCode, 200);
      // a browser's File of a type it does not know: the bytes say what it is
      assert.equal((await post('/rest/Company(5)/logo?$rawPict=application/octet-stream', png)).statusCode, 200);
      // $binary=false on a function call: its JSON body is read as usual
      const expected = Number(await demo.ds.Company.query('ID < 4').sum('revenues'));
      const call = await demo.request('/rest/Company/totalRevenues?$filter="ID < 4"&$binary=false', 'POST', []);
      assert.deepEqual(call.body, { result: expected });
      const hire = await demo.request('/rest/$catalog/pause?$rawPict=0', 'POST', [1, 'kept']);
      assert.deepEqual(hire.body, { result: { ms: 1, tag: 'kept' } });
    });

    it('stores the file even when the entity is saved by someone else while it uploads (no stamp was given)', async () => {
      const address = await listening();
      const { request } = await import('node:http');
      const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(`${address}/rest/Company(7)/logo?$rawPict=image/png`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'content-length': png.length } }, (res) => {
          let body = '';
          res.on('data', (d) => (body += d)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.write(png.subarray(0, 10));
        // while the bytes come, another save of the company
        setTimeout(async () => {
          const c = (await demo.ds.Company.get(7))!;
          c.set('revenues', 777);
          await c.save();
          req.end(png.subarray(10));
        }, 100);
      });
      const res = await answer;
      assert.equal(res.status, 200, res.body);
      const stored = (await demo.ds.Company.get(7))!;
      assert.equal(stored.get('revenues'), 777);
      assert.ok(stored.get('logo'), 'the logo is stored');
    });

    it('checks the answer\'s attributes before the bytes are read: a mistake there changes nothing', async () => {
      const before = (await demo.ds.Company.get(5))!.getStamp();
      const res = await post('/rest/Company(5)/logo?$rawPict=true&$attributes=nope', png);
      assert.equal(JSON.parse(res.body).__ERROR[0].errCode, 1500);
      assert.equal((await demo.ds.Company.get(5))!.getStamp(), before);
      const update = await demo.request('/rest/Company?$method=update&$attributes=nope', 'POST', { __KEY: '5', __STAMP: before, revenues: 5 });
      assert.equal(errCode(update), 1500);
      assert.equal((await demo.ds.Company.get(5))!.getStamp(), before, 'nothing saved');
    });

    it('refuses the wrong kind, an attribute that holds no file, bytes that are no image, an unknown entity, a bad $rawPict and a file past the limit', async () => {
      const key = (await demo.ds.Employee.all().first())!.getKey() as string;
      const cases: [string, Buffer, number, number, RegExp][] = [
        ['/rest/Company(5)/logo?$binary=true', png, 400, 7025, /an image: upload it with \$rawPict/],
        [`/rest/Employee(${key})/resume?$rawPict=image/png`, png, 400, 7025, /a blob: upload it with \$binary=true/],
        ['/rest/Company(5)/name?$binary=true', png, 400, 7013, /no image or blob attribute/],
        ['/rest/Company(5)/nmae?$binary=true', png, 404, 1500, /nmae/],
        ['/rest/Company(5)/logo?$rawPict=image/png', Buffer.from('not a picture at all'), 400, 7024, /announced as an image/],
        ['/rest/Company(999999)/logo?$rawPict=image/png', png, 404, 1542, /999999/],
        ['/rest/Company(5)/logo?$rawPict=undefined', png, 400, 7007, /buf\.type = 'image\/png'/],
        ['/rest/Company(5)/logo?$rawPict=maybe', png, 400, 7007, /\$rawPict is true or false, or the file's MIME type/],
        ['/rest/Company/logo?$rawPict=true', png, 400, 7004, /into an image or blob attribute of an entity/],
        ['/rest/Company?$method=update&$binary=true', png, 400, 7004, /uploads a file/],
        ['/rest/Company(5)/logo?$rawPict=true', Buffer.alloc(0), 400, 7014, /empty/],
      ];
      for (const [url, body, status, code, message] of cases) {
        const res = await post(url, body);
        const parsed = JSON.parse(res.body);
        assert.equal(res.statusCode, status, `${url}: ${res.body}`);
        assert.equal(parsed.__ERROR[0].errCode, code, url);
        assert.match(parsed.__ERROR[0].message, message, url);
      }
      // a body left unread for an upload never reaches another kind of request
      for (const url of ['/rest/$catalog/topEarner?$binary=true', '/rest/$directory/logout?$rawPict=true', '/rest/$entityset/$release?%24binary=true']) {
        const res = await post(url, Buffer.from('[]'));
        assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
        assert.match(JSON.parse(res.body).__ERROR[0].message, /uploads a file/, url);
      }
      const small = await demo.withServer({ maxUploadBytes: 16 });
      try {
        const res = await small.request('/rest/Company(5)/logo?$rawPict=true', 'POST', png, { 'content-type': 'application/octet-stream' });
        assert.equal(res.status, 413);
        assert.equal(errCode(res), 7016);
      } finally {
        await small.close();
      }
    });
  });

  it('takes a saved entity\'s key given back as it is (wakanda-client\'s save() sends every attribute), and refuses another', async () => {
    const company = (await demo.ds.Company.get(6))!;
    const same = await demo.request('/rest/Company?$method=update', 'POST', { __KEY: '6', __STAMP: company.getStamp(), ID: 6, revenues: 66 });
    assert.equal(same.status, 200, JSON.stringify(same.body));
    const changed = await demo.request('/rest/Company?$method=update', 'POST', { __KEY: '6', __STAMP: same.body.__STAMP, ID: 7 });
    assert.equal(errCode(changed), 7013);
    assert.match(changed.body.__ERROR[0].message, /key Company\.ID of a saved entity cannot change/);
  });
});

describe('wakanda-client\'s request forms and roles.json', () => {
  let demo: DemoFixture;
  let tmp: { dir: string; remove(): void };
  let png: Buffer;
  let alice: string;
  before(async () => {
    tmp = tempDir();
    const roles = JSON.parse(readFileSync(join(DEMO_DIR, 'roles.json'), 'utf8'));
    roles.permissions.allowed.push(
      { applyTo: 'Employee.photo', type: 'attribute', update: ['salaries'] },
      { applyTo: 'City.companies', type: 'attribute', read: ['salaries'] },
    );
    writeFileSync(join(tmp.dir, 'roles.json'), JSON.stringify(roles));
    demo = await openDemo({ roles: join(tmp.dir, 'roles.json') });
    png = await sharp({ create: { width: 3, height: 3, channels: 3, background: '#123456' } }).png().toBuffer();
    const login = await demo.app.inject({ method: 'POST', url: '/rest/$directory/login', payload: ['alice', 'alice123'] });
    alice = String(login.headers['set-cookie']).split(';')[0];
  });
  after(async () => {
    await demo.close();
    tmp.remove();
  });

  const files = async () => Number((await coreOf(demo.ds).storage.get(`SELECT COUNT(*) AS n FROM "${BLOB_TABLE}"`))?.n);

  it('refuses an upload into an attribute the session may not update before a byte is stored: 401 to a guest, 403 to an Editor', async () => {
    const key = (await demo.ds.Employee.all().first())!.getKey() as string;
    const before = await files();
    const url = `/rest/Employee(${key})/photo?$rawPict=image/png`;
    const guest = await demo.app.inject({ method: 'POST', url, payload: png, headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(guest.statusCode, 401);
    assert.equal(JSON.parse(guest.body).__ERROR[0].errCode, 1558);
    const editor = await demo.app.inject({ method: 'POST', url, payload: png, headers: { 'content-type': 'application/octet-stream', cookie: alice } });
    assert.equal(editor.statusCode, 403, editor.body);
    assert.match(JSON.parse(editor.body).__ERROR[0].message, /for attribute Employee\.photo/);
    assert.equal(await files(), before, 'nothing stored');
    // the same Editor may upload where roles.json lets her
    const logo = await demo.app.inject({ method: 'POST', url: '/rest/Company(1)/logo?$rawPict=image/png', payload: png, headers: { 'content-type': 'application/octet-stream', cookie: alice } });
    assert.equal(logo.statusCode, 200, logo.body);
  });

  it('refuses $emMethod on a relation the session may not read as a read of it is refused (7040), not as a bad URL', async () => {
    const res = await demo.app.inject({ method: 'POST', url: '/rest/City(1)/companies?$emMethod=totalRevenues', payload: [], headers: { cookie: alice } });
    assert.equal(res.statusCode, 403, res.body);
    assert.equal(JSON.parse(res.body).__ERROR[0].errCode, 7040);
  });
});
