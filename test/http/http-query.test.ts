// $filter, $params, $orderby, $queryplan and $querypath over HTTP, on the demo.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDemo, type DemoFixture } from '../support/helpers.js';

describe('$filter over HTTP', () => {
  let demo: DemoFixture;
  const get = async (path: string, query: Record<string, string>) => {
    const qs = Object.entries(query).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
    return demo.request(`${path}?${qs}`);
  };
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('answers the same entities as ds.X.query(), with __COUNT of the whole match', async () => {
    const { status, body } = await get('/rest/Employee', { $filter: '"salary > :1 and employer.name begin :2"', $params: "'[60000, \"g\"]'", $top: '5' });
    assert.equal(status, 200);
    const expected = await demo.ds.Employee.query('salary > :1 and employer.name begin :2', 60000, 'g').length;
    assert.equal(body.__COUNT, expected);
    assert.ok(body.__SENT <= 5);
    for (const e of body.__ENTITIES) assert.ok(e.salary > 60000);
  });

  it('accepts $params without the single quotes, and URL-encoded quotes and spaces', async () => {
    const a = await demo.request(`/rest/Employee?$filter=%22lastName%20%3D%20%3A1%22&$params=${encodeURIComponent('["SMITH"]')}`);
    const b = await demo.request(`/rest/Employee?$filter=${encodeURIComponent("lastName = 'smith'")}`);
    assert.equal(a.status, 200);
    assert.equal(a.body.__COUNT, b.body.__COUNT);
    assert.ok(a.body.__COUNT > 0);
  });

  it('sorts by the order by of the filter, and refuses an order given twice', async () => {
    const sorted = await get('/rest/Employee', { $filter: 'salary > 0 order by salary desc', $attributes: 'salary', $top: '10' });
    const salaries = sorted.body.__ENTITIES.map((e: { salary: number }) => e.salary);
    assert.deepEqual(salaries, [...salaries].sort((x, y) => y - x));
    const twice = await get('/rest/Employee', { $filter: 'salary > 0 order by salary', $orderby: 'lastName' });
    assert.equal(twice.status, 400);
    assert.match(twice.body.__ERROR[0].message, /order is given twice/);
  });

  it('answers a query of 800 criteria (a chain a database would refuse as too deep), and refuses an order of more terms than it sorts by', async () => {
    const many = Array.from({ length: 800 }, (_, i) => `salary=${i % 10}`).join('|');
    const wide = await get('/rest/Employee', { $filter: many, $top: '1' });
    assert.equal(wide.status, 200, JSON.stringify(wide.body).slice(-200));
    assert.equal(wide.body.__COUNT, await demo.ds.Employee.query(many).length);
    const deep = Array.from({ length: 450 }, () => 'employer.name=a').join('|');
    const through = await get('/rest/Employee', { $filter: deep, $top: '1' });
    assert.equal(through.status, 200, JSON.stringify(through.body).slice(-200));
    const order = await get('/rest/Employee', { $orderby: Array.from({ length: 65 }, () => 'lastName').join(',') });
    assert.equal(order.status, 400);
    assert.equal(order.body.__ERROR[0].errCode, 7009);
    assert.match(order.body.__ERROR[0].message, /the order has 65 terms; at most 64 are sorted by/);
  });

  it('reads "order by" inside a quoted value as text, not as a second order (with $orderby, in a set)', async () => {
    const res = await get('/rest/Employee', { $filter: `lastName = "order by" or salary > 0`, $orderby: 'lastName', $attributes: 'lastName', $top: '20' });
    assert.equal(res.status, 200);
    const names = res.body.__ENTITIES.map((e: { lastName: string }) => e.lastName.toLowerCase());
    assert.deepEqual(names, [...names].sort());
    const set = await get('/rest/Employee', { $filter: `lastName = "order by"`, $method: 'entityset' });
    const info = await demo.request('/rest/$info');
    const id = set.body.__ENTITYSET.split('/').pop();
    assert.equal(info.body.entitySet.find((s: { id: string }) => s.id === id).sorted, false, 'a set without an order is not sorted');
  });

  it("refuses an unquoted value that begins with a comparator character: 400, errCode 7017, at its offset", async () => {
    const mistyped = await get('/rest/Employee', { $filter: `"firstName =~ 'x'"` });
    assert.equal(mistyped.status, 400);
    assert.equal(mistyped.body.__ERROR[0].errCode, 7017);
    assert.match(mistyped.body.__ERROR[0].message, /"firstName =~ 'x'" at offset 11: expected a value after =, found '~ 'x''/);
  });

  it("reads 4D's own examples of a value with an apostrophe: lastName=O'Reilly unquoted, and \\u0027 in $params", async () => {
    const e = demo.ds.Employee.new();
    e.set('lastName', "O'Reilly");
    e.set('firstName', 'Sean');
    await e.save();
    // the two URLs of 4D's $filter page, as written there
    const direct = await demo.request(`/rest/Employee/?$filter="lastName=O'Reilly"`);
    const placeholder = await demo.request(`/rest/Employee/?$filter="lastName=:1"&$params='["O\\u0027Reilly"]'`);
    for (const res of [direct, placeholder]) {
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.__ENTITIES.map((x: { lastName: string }) => x.lastName), ["O'Reilly"]);
    }
    const inList = await get('/rest/Employee', { $filter: `"lastName in [Nobody, O'Reilly] and firstName = Sean"` });
    assert.equal(inList.body.__COUNT, 1);
    const quoted = await get('/rest/Employee', { $filter: `"lastName = 'O\\'Reilly'"` });
    assert.equal(quoted.body.__COUNT, 1);
  });

  it("reads the other examples of 4D's $filter page", async () => {
    for (const filter of ["firstName!='' AND salary>30000", 'firstName=john AND salary>20000', 'lastName begin j', 'salary>20000 AND employer.name!=acme']) {
      const res = await demo.request(`/rest/Employee?$filter=${encodeURIComponent(`"${filter}"`)}&$orderby="lastName,firstName"&$top=3`);
      assert.equal(res.status, 200, `${filter}: ${JSON.stringify(res.body)}`);
    }
    const params = await demo.request(`/rest/Employee?$filter="firstName=:1 AND salary>:2"&$params='["john",20000]'`);
    assert.equal(params.status, 200, JSON.stringify(params.body));
  });

  it('filters a relation followed from an entity', async () => {
    const { body } = await get('/rest/Company(1)/staff', { $filter: 'salary > 0', $expand: 'staff' });
    const all = await demo.request('/rest/Company(1)/staff?$expand=staff');
    assert.equal(body.__COUNT, all.body.__COUNT);
  });

  it('adds __queryPlan and __queryPath in the reference shapes', async () => {
    const { body } = await get('/rest/Company', { $filter: 'staff.lastName = smith and city.name begin p', $queryplan: 'true', $querypath: 'true', $top: '0' });
    assert.deepEqual(Object.keys(body.__queryPlan), ['And']);
    assert.equal(body.__queryPlan.And[0].item, 'Join on Table : Employee : Company.ID = Employee.employerID');
    assert.deepEqual(body.__queryPlan.And[0].subquery, [{ item: '[index : Employee.lastName ] = smith' }]);
    assert.deepEqual(body.__queryPlan.And[1].subquery, [{ item: '[index : City.name ] begin p' }]);
    const [root] = body.__queryPath.steps;
    assert.equal(root.description, 'AND');
    assert.equal(root.recordsfounds, body.__COUNT);
    assert.equal(typeof root.time, 'number');
    assert.equal(root.steps.length, 2);
    for (const s of root.steps) assert.deepEqual(Object.keys(s).sort(), ['description', 'recordsfounds', 'time']);
  });

  it('stops the path of an AND at the first step that finds nothing', async () => {
    const { body } = await get('/rest/Employee', { $filter: 'lastName = nobody and salary > 0', $querypath: 'true' });
    const [root] = body.__queryPath.steps;
    assert.equal(root.recordsfounds, 0);
    assert.equal(root.steps.length, 1);
    assert.equal(root.steps[0].recordsfounds, 0);
  });

  it('answers GET /rest/$querypath with the last path recorded for the session: a client keeping its cookie reads its own, and cookie-less guests behind one address share none', async () => {
    const cookieOf = (headers: Record<string, unknown>) => String(headers['set-cookie']).split(';')[0];
    const as = (cookie: string) => ({ cookie });
    const mine = cookieOf((await demo.request('/rest/$info')).headers);
    const before = await demo.request('/rest/$querypath', 'GET', undefined, as(mine));
    assert.deepEqual(before.body, { __queryPath: { steps: [] } });
    const { body } = await demo.request(`/rest/Employee?$filter=${encodeURIComponent('"salary > 50000"')}&$querypath=true&$top=0`, 'GET', undefined, as(mine));
    // (recording keeps the guest: it is stored, under its cookie's upper-case form)
    const kept = await demo.request('/rest/$querypath', 'GET', undefined, as(mine.toUpperCase().replace('4DSID_DEMO', '4DSID_Demo')));
    assert.deepEqual(kept.body, { __queryPath: body.__queryPath });
    // another client from the same address, with its own cookie: none
    const theirs = cookieOf((await demo.request('/rest/$info')).headers);
    assert.deepEqual((await demo.request('/rest/$querypath', 'GET', undefined, as(theirs))).body, { __queryPath: { steps: [] } });
    // the probe: a cookie-less guest's path is not read by the next cookie-less guest of its address
    const probe = await demo.request(`/rest/Employee?$filter=${encodeURIComponent('"lastName = smith"')}&$querypath=true&$top=0`);
    assert.ok(probe.body.__queryPath.steps.length > 0, 'the answer carries the path');
    assert.deepEqual((await demo.request('/rest/$querypath')).body, { __queryPath: { steps: [] } });
    const other = await demo.app.inject({ url: '/rest/$querypath', remoteAddress: '10.9.8.7' });
    assert.deepEqual(JSON.parse(other.body), { __queryPath: { steps: [] } });
  });
});
