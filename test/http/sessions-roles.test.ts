// Web sessions (issue 13): what the demo's roles.json allows the guest and each of its users. The
// other files of sessions are sessions-*.test.ts and http-guards.test.ts; what they share is
// sessions-shared.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDemo, type DemoFixture } from '../support/helpers.js';
import { type Json, ROLES, call, errCode, login, info } from './sessions-shared.js';

// the demo with its roles.json, shared by the suites that do not move a clock or need options of the datastore
let demo: DemoFixture;
before(async () => {
  demo = await openDemo({ roles: ROLES });
});
after(() => demo.close());

describe("sessions: what the demo's roles.json allows", () => {
  let cookies: Record<string, string>;
  before(async () => {
    cookies = { alice: await login(demo.app, 'alice'), bob: await login(demo.app, 'bob') };
  });

  const first = async (cookie?: string): Promise<Json> => (await call(demo.app, '/rest/Employee?$top=1', { cookie })).body.__ENTITIES[0];
  const salary = async (key: string) => (await demo.ds.Employee.get(key))?.get('salary');
  const lastName = async (key: string) => (await demo.ds.Employee.get(key))?.get('lastName');
  const update = (body: Json, cookie?: string) => call(demo.app, '/rest/Employee?$method=update', { method: 'POST', body, cookie });

  it('lets a guest read employees but leaves salary out of its answers; a Payroll session sees it', async () => {
    const page = await call(demo.app, '/rest/Employee?$top=3');
    assert.equal(page.status, 200);
    assert.equal(page.body.__ENTITIES.length, 3);
    for (const e of page.body.__ENTITIES) assert.equal('salary' in e, false);
    const one = await call(demo.app, `/rest/Employee(${page.body.__ENTITIES[0].__KEY})`);
    assert.equal(one.status, 200);
    assert.equal('salary' in one.body, false);
    assert.equal(typeof (await first(cookies.bob)).salary, 'number');
  });

  it('refuses a guest a filter or a sort on salary (401, 7040): a hidden value cannot be learnt by querying it', async () => {
    for (const url of ['/rest/Employee?$filter="salary > 1"', '/rest/Employee?$orderby=salary']) {
      const res = await call(demo.app, url);
      assert.equal(res.status, 401, url);
      assert.equal(errCode(res), 7040, url);
    }
    assert.equal((await call(demo.app, '/rest/Employee?$filter="salary > 1"&$top=1', { cookie: cookies.bob })).status, 200);
  });

  it('refuses a guest creating an employee (401, 7041), and saves nothing', async () => {
    const before = await demo.ds.Employee.all().length;
    const res = await call(demo.app, '/rest/Employee?$method=update', { method: 'POST', body: { firstName: 'Eve', lastName: 'Guest' } });
    assert.equal(res.status, 401);
    assert.equal(errCode(res), 7041);
    assert.equal(await demo.ds.Employee.all().length, before);
  });

  it('refuses a guest an update as a guest (401, 1558) whatever stamp it sends: a stale one is no reason to answer 409 first', async () => {
    const e = await first();
    for (const stamp of [e.__STAMP, e.__STAMP + 7]) {
      const res = await update({ __KEY: e.__KEY, __STAMP: stamp, lastName: 'Guest' });
      assert.equal(res.status, 401, `stamp ${stamp}: ${JSON.stringify(res.body)}`);
      assert.equal(errCode(res), 1558, `stamp ${stamp}`);
    }
    assert.notEqual(await lastName(e.__KEY), 'Guest');
  });

  it('lets an Editor update lastName but not salary (403, 1558), and a refused update saves nothing', async () => {
    const e = await first(cookies.alice);
    const ok = await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, lastName: 'Edited' }, cookies.alice);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(await lastName(e.__KEY), 'Edited');
    const pay = await salary(e.__KEY);
    const refused = await update({ __KEY: e.__KEY, __STAMP: ok.body.__STAMP, lastName: 'Again', salary: 1 }, cookies.alice);
    assert.equal(refused.status, 403);
    assert.equal(errCode(refused), 1558);
    assert.equal(await salary(e.__KEY), pay);
    assert.equal(await lastName(e.__KEY), 'Edited');
  });

  it('lets an Editor delete an employee whose salary it cannot read (a value hidden from it is no reason to refuse the drop); a guest may not (401, 7042)', async () => {
    const e = demo.ds.Employee.new();
    e.set('lastName', 'Leaving');
    e.set('salary', 12345);
    await e.save();
    const key = String(e.getKey());
    const guest = await call(demo.app, `/rest/Employee(${key})?$method=delete`, { method: 'POST' });
    assert.equal(guest.status, 401, JSON.stringify(guest.body));
    assert.equal(errCode(guest), 7042);
    const res = await call(demo.app, `/rest/Employee(${key})?$method=delete`, { method: 'POST', cookie: cookies.alice });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(await demo.ds.Employee.get(key), null);
  });

  it('refuses an Editor creating an employee with a salary (403, 7041): giving a value at creation needs the attribute\'s create', async () => {
    const before = await demo.ds.Employee.all().length;
    const res = await call(demo.app, '/rest/Employee?$method=update', { method: 'POST', body: { lastName: 'Paid', salary: 12345 }, cookie: cookies.alice });
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.equal(errCode(res), 7041);
    assert.equal(await demo.ds.Employee.all().length, before);
  });

  it('logs in by the user name as given, in any case, never by a pattern (a@ or @ is no one)', async () => {
    for (const userName of ['@', 'a@', 'ali@']) {
      const res = await call(demo.app, '/rest/$catalog/authentify', { method: 'POST', body: [{ userName, password: 'alice123' }], remoteAddress: '10.9.9.9' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.result.success, false, userName);
    }
    const upper = await call(demo.app, '/rest/$catalog/authentify', { method: 'POST', body: [{ userName: 'ALICE', password: 'alice123' }], remoteAddress: '10.9.9.9' });
    assert.equal(upper.body.result.success, true);
  });

  it('lets Payroll read salaries but not update lastName (403, 1558)', async () => {
    const e = await first(cookies.bob);
    const before = await lastName(e.__KEY);
    const res = await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, lastName: 'ByBob' }, cookies.bob);
    assert.equal(res.status, 403);
    assert.equal(errCode(res), 1558);
    assert.equal(await lastName(e.__KEY), before);
  });

  it('runs ds.raiseSalaries for Payroll (promote gives edit while it runs), refuses it to an Editor (403, 1561) and a guest (401, 1561)', async () => {
    const companyID = (await first()).employerID;
    const staff = () => demo.ds.Employee.query('employer.ID = :1', companyID);
    const total = () => staff().sum('salary');
    const before = await total();
    for (const [cookie, status] of [[cookies.alice, 403], [undefined, 401]] as const) {
      const res = await call(demo.app, '/rest/$catalog/raiseSalaries', { method: 'POST', body: [companyID, 10], cookie });
      assert.equal(res.status, status);
      assert.equal(errCode(res), 1561);
    }
    assert.equal(await total(), before);
    const res = await call(demo.app, '/rest/$catalog/raiseSalaries', { method: 'POST', body: [companyID, 10], cookie: cookies.bob });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.result, await staff().length);
    assert.ok((await total()) > before);
    // promote lasted while the function ran: the session holds only bob's privilege
    const after = await info(demo.app, cookies.bob);
    assert.deepEqual(after.session.privileges, ['salaries']);
    const e = await first(cookies.bob);
    assert.equal(errCode(await update({ __KEY: e.__KEY, __STAMP: e.__STAMP, lastName: 'StillNot' }, cookies.bob)), 1558);
  });
});
