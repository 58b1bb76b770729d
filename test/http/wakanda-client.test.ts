// wakanda-client 3.1.0, the JavaScript client written for this API family, used unmodified over a
// real socket against the demo with its roles.json (issue 14): its directory (login, currentUser,
// belongs-to, logout), the catalog, find, query with params/orderBy/select, paging (more,
// nextPage, prevPage, fetch) of a query and of a relation, create/save/recompute/delete,
// dataclass, entity and collection functions (on a set and on a relation), media upload and delete.
// What the client itself gets wrong is in the README's compatibility notes.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { DEMO_DIR, openDemo, type DemoFixture } from '../support/helpers.js';

// (a CommonJS bundle: required, as its users do in Node)
const { WakandaClient } = createRequire(import.meta.url)('wakanda-client') as typeof import('wakanda-client');

/** What the client gives: entities and collections decorated with data and methods. */
type Any = any;

describe('wakanda-client 3.1.0, unmodified, against the demo over a socket', () => {
  let demo: DemoFixture;
  let client: InstanceType<typeof WakandaClient>;
  let ds: Any;
  before(async () => {
    demo = await openDemo({ roles: join(DEMO_DIR, 'roles.json') });
    const address = await demo.app.listen({ port: 0, host: '127.0.0.1' });
    client = new WakandaClient({ host: address });
  });
  after(() => demo.close());

  it('logs in through $directory, says who the user is and which groups they belong to; a wrong password is false', async () => {
    assert.equal(await client.directory.login('admin', 'wrong'), false);
    assert.equal(await client.directory.getCurrentUser(), null);
    assert.equal(await client.directory.login('admin', 'admin123'), true);
    assert.deepEqual(await client.directory.getCurrentUser(), { ID: 3, userName: 'admin', fullName: 'Ada Admin' });
    assert.equal(await client.directory.getCurrentUserBelongsTo('Administrator'), true);
    assert.equal(await client.directory.getCurrentUserBelongsTo('Payroll'), false);
  });

  it('reads the catalog: dataclasses, attributes with their kinds, and functions by what they apply to', async () => {
    ds = await client.getCatalog();
    for (const name of ['City', 'Company', 'Employee']) assert.ok(ds[name], name);
    assert.equal(ds.User, undefined, 'the catalog shows what the session may read: User needs the accounts privilege');
    const attrs = new Map((ds.Employee.attributes as Any[]).map((a) => [a.name, a]));
    assert.equal(attrs.get('photo').type, 'image');
    assert.equal(attrs.get('employer').kind, 'relatedEntity');
    assert.equal(attrs.get('fullName').kind, 'calculated');
    assert.deepEqual(ds.Company.methods, { entity: [], collection: ['totalRevenues'], dataClass: ['byCode'] });
    assert.ok(ds.Employee.methods.entity.includes('raise'));
  });

  it('finds an entity by key with a related entity expanded ($expand)', async () => {
    const stored = (await demo.ds.Employee.query('employer != null').first())!;
    const e = await ds.Employee.find(stored.getKey(), { select: 'employer' });
    assert.equal(e._key, stored.getKey());
    assert.equal(e.lastName, stored.get('lastName'));
    const employer = (await stored.related('employer')) as Any;
    assert.equal(e.employer.name, employer.get('name'));
    assert.equal(e.employer._deferred, false);
  });

  it('queries with params, orderBy and select, then pages the stored set: more(), nextPage(), prevPage(), fetch()', async () => {
    const expected = await demo.ds.Employee.query('salary > :1', 50_000).orderBy('salary desc, ID').toArray();
    const keys = expected.map((e) => e.getKey());
    const col = await ds.Employee.query({ filter: 'salary > :1', params: [50_000], orderBy: 'salary desc, ID', select: 'employer', pageSize: 5 });
    assert.equal(col._count, expected.length);
    const pageKeys = () => (col.entities as Any[]).map((e) => e._key);
    assert.deepEqual(pageKeys(), keys.slice(0, 5));
    assert.ok(col.entities[0].employer.name !== undefined, 'select expanded the employer');
    await col.more();
    assert.deepEqual(pageKeys(), keys.slice(0, 10));
    await col.nextPage();
    assert.equal(col._first, 5);
    assert.deepEqual(pageKeys(), keys.slice(5, 10));
    await col.prevPage();
    assert.deepEqual(pageKeys(), keys.slice(0, 5));
    await col.fetch({ start: 2, pageSize: 3, select: 'employer' });
    assert.deepEqual(pageKeys(), keys.slice(2, 5));
    assert.ok(col.entities[0].employer.name !== undefined);
  });

  it('pages a relation it read deferred: fetch() and more() on /Company(key)/staff', async () => {
    const stored = (await demo.ds.Company.all().first())!;
    const staffKeys = new Set((await ((await stored.related('staff')) as Any).toArray()).map((e: Any) => e.getKey()));
    const company = await ds.Company.find(stored.getKey());
    assert.equal(company.staff._deferred, true);
    await company.staff.fetch({ pageSize: 3 });
    assert.equal(company.staff._count, staffKeys.size);
    assert.equal(company.staff.entities.length, 3);
    await company.staff.more();
    assert.equal(company.staff.entities.length, Math.min(6, staffKeys.size));
    for (const e of company.staff.entities) assert.ok(staffKeys.has(e._key));
  });

  it('calls dataclass, entity and collection functions: on a query\'s set, and on an expanded relation ($emMethod)', async () => {
    const acme = await ds.Company.byCode('C1000');
    assert.equal(acme._key, '1');
    assert.equal(acme.name, (await demo.ds.Company.get(1))!.get('name'));
    const sum = async (filter: string, ...params: unknown[]) => Number(await demo.ds.Company.query(filter, ...params).sum('revenues'));
    const few = await ds.Company.query({ filter: 'ID < :1', params: [4] });
    assert.equal(await few.totalRevenues(), await sum('ID < :1', 4));
    const city = await ds.City.find(1, { select: 'companies' });
    assert.equal(await city.companies.totalRevenues(), await sum('city.ID = :1', 1));
    const stored = (await demo.ds.Employee.query('salary > :1', 0).first())!;
    const e = await ds.Employee.find(stored.getKey());
    assert.equal(typeof (await e.seniority()), 'number');
    const raised = await e.raise(10);
    assert.equal(raised.salary, Math.round(Number(stored.get('salary')) * 1.1));
  });

  it('creates, saves again, recomputes and deletes an entity', async () => {
    const company = ds.Company.create({ name: 'Wakanda Ltd', revenues: 5 });
    await company.save();
    assert.ok(company._key);
    assert.equal(company._stamp, 1);
    company.revenues = 7;
    await company.save();
    assert.equal(company._stamp, 2);
    assert.equal((await demo.ds.Company.get(company._key))!.get('revenues'), 7);
    const newcomer = ds.Employee.create({ firstName: 'Ada', lastName: 'Lovelace' });
    await newcomer.recompute();
    assert.equal(newcomer.fullName, 'Ada Lovelace');
    assert.equal(newcomer.dailyHours, 8 * 3_600_000);
    assert.equal(await demo.ds.Employee.query('lastName = :1', 'Lovelace').length, 0, 'recompute saves nothing');
    await company.delete();
    assert.equal(await demo.ds.Company.get(Number(company._key)), null);
  });

  it('refuses a save of an entity changed meanwhile (a stale __STAMP)', async () => {
    const company = await ds.Company.find(2);
    const other = (await demo.ds.Company.get(2))!;
    other.set('revenues', 1);
    await other.save();
    company.revenues = 99;
    await assert.rejects(company.save(), (e: Any) => JSON.parse(e.body).__ERROR[0].errCode === 1263);
  });

  it('uploads a picture into an entity\'s image attribute, and deletes it', async () => {
    const company = ds.Company.create({ name: 'Pictured' });
    await company.save();
    assert.equal(company.logo.uri, null);
    const png = await sharp({ create: { width: 4, height: 3, channels: 3, background: '#cc3366' } }).png().toBuffer();
    // (the client sends file.type as $rawPict: a Buffer needs one, as a browser's File has)
    await company.logo.upload(Object.assign(png, { type: 'image/png' }));
    assert.match(company.logo.uri, /^\/rest\/Company\(\d+\)\/logo\?/);
    const served = await demo.app.inject({ url: company.logo.uri, headers: { cookie: await cookieOf(client) } });
    assert.equal(served.headers['content-type'], 'image/png');
    assert.ok(served.rawPayload.equals(png));
    await company.logo.delete();
    assert.equal(company.logo.uri, null);
    assert.equal((await demo.ds.Company.get(Number(company._key)))!.get('logo'), null);
    await company.delete();
  });

  it('logs out: currentUser is null again, and what the roles keep from guests is refused', async () => {
    assert.equal(await client.directory.logout(), true);
    assert.equal(await client.directory.getCurrentUser(), null);
    await assert.rejects(ds.Employee.query({ filter: 'salary > :1', params: [1] }), (e: Any) => JSON.parse(e.body).__ERROR[0].errCode === 7040);
  });
});

/** The client's session cookie, to read as it (a guest would not see every picture). */
async function cookieOf(client: Any): Promise<string> {
  const jar = client._httpClient.cookieJar;
  return jar.getCookieString(client._httpClient.prefix) as string;
}
