// HTTP scenarios for calling exposed functions (spec "Server-side functions and methods",
// reference §2.12): the demo's DataStore functions at /rest/$catalog/{function}; dataclass,
// selection and entity functions at /rest/{dataClass}/…; entity and selection parameters. The
// URL form of parameters is http-functions-url.test.ts, time limits, declared types, the context
// and the checks before a call http-functions-checks.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDemo, type DemoFixture } from '../support/helpers.js';

describe('HTTP: datastore functions (/rest/$catalog/{function})', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  const counts = async () => Object.fromEntries(await Promise.all(demo.ds.dataClasses().map(async (dc) => [dc.name, await dc.all().length])));

  it('answers a scalar or object result as {result}, called by POST with no body or an empty array', async () => {
    const expected = await counts();
    for (const body of [undefined, []]) {
      const res = await demo.request('/rest/$catalog/counts', 'POST', body);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { result: expected });
    }
  });

  it('calls an @onHttpGet function with GET, parameters from $params', async () => {
    assert.deepEqual((await demo.request('/rest/$catalog/counts')).body, { result: await counts() });
  });

  it('passes the JSON array body as the parameters, in order', async () => {
    const res = await demo.request('/rest/$catalog/earningAtLeast?$top=2', 'POST', [60000]);
    assert.equal(res.status, 200);
    const expected = await demo.ds.Employee.query('salary >= :1', 60000).length;
    assert.equal(res.body.__COUNT, expected);
    assert.equal(res.body.__ENTITIES.length, Math.min(2, expected));
    for (const e of res.body.__ENTITIES) assert.ok(e.salary >= 60000);
  });

  it('answers a selection result as a collection that honours $attributes, $skip and $method=entityset', async () => {
    const all = (await demo.request('/rest/$catalog/earningAtLeast', 'POST', [0])).body;
    const page = (await demo.request('/rest/$catalog/earningAtLeast?$skip=1&$top=1&$attributes=lastName', 'POST', [0])).body;
    assert.equal(page.__COUNT, all.__COUNT);
    assert.deepEqual(Object.keys(page.__ENTITIES[0]).filter((k) => !k.startsWith('__')), ['lastName']);
    assert.equal(page.__ENTITIES[0].__KEY, all.__ENTITIES[1].__KEY);
    const set = await demo.request('/rest/$catalog/earningAtLeast?$method=entityset', 'POST', [0]);
    assert.equal(set.status, 200);
    assert.match(String(set.body.__ENTITYSET), /\/rest\/Employee\/\$entityset\//);
  });

  it('answers an entity result as the entity object itself, with __DATACLASS', async () => {
    const res = await demo.request('/rest/$catalog/topEarner', 'POST');
    assert.equal(res.status, 200);
    const top = await demo.ds.Employee.all().orderBy('salary desc').first();
    assert.equal(res.body.__KEY, String(top?.getKey()));
    assert.equal(res.body.salary, top?.get('salary'));
    assert.equal('result' in res.body, false);
  });

  it('answers -10729 "Unknown member method" for a function that is not exposed, or does not exist', async () => {
    for (const name of ['secretReport', 'dataClasses', 'countz']) {
      const res = await demo.request(`/rest/$catalog/${name}`, 'POST', []);
      assert.equal(res.status, 404, name);
      assert.equal(res.body.__ERROR[0].errCode, -10729, name);
      assert.match(res.body.__ERROR[0].message, new RegExp(`Unknown member method: '${name}' is no exposed function of the DataStore class`));
    }
    assert.match((await demo.request('/rest/$catalog/countz', 'POST')).body.__ERROR[0].message, /did you mean 'counts'\?/);
  });

  it('refuses GET on a function without @onHttpGet (405), and keeps GET of other names for dataclasses', async () => {
    const res = await demo.request('/rest/$catalog/topEarner');
    assert.equal(res.status, 405);
    assert.match(res.body.__ERROR[0].message, /GET cannot call topEarner of the DataStore class: call it with POST, or mark it @onHttpGet/);
    assert.equal((await demo.request('/rest/$catalog/secretReport')).body.__ERROR[0].errCode, 7002);
    assert.equal((await demo.request('/rest/$catalog/Company')).body.name, 'Company');
    assert.equal((await demo.request('/rest/$catalog/Company', 'POST', [])).status, 405);
  });

  it('refuses a body that is not an array of parameters', async () => {
    const res = await demo.request('/rest/$catalog/earningAtLeast', 'POST', { min: 5 });
    assert.equal(res.status, 400);
    assert.match(res.body.__ERROR[0].message, /the body of a function call is a JSON array of its parameters/);
  });

  it('refuses a parameter of the wrong type before the call when the function declares it: 400 7021 naming the parameter', async () => {
    const res = await demo.request('/rest/$catalog/earningAtLeast', 'POST', ['lots']);
    assert.equal(res.status, 400);
    assert.equal(res.body.__ERROR[0].errCode, 7021);
    assert.match(res.body.__ERROR[0].message, /parameter #1 \(min\) of earningAtLeast of the DataStore class is a number; got "lots"/);
  });

  it('answers a function that refuses (DatasetError REFUSED) with its own status, code and message, rolls back its transaction, and keeps serving', async () => {
    const before = (await demo.ds.Employee.query('employer.ID = 1').toArray()).map((e) => e.get('salary'));
    const res = await demo.request('/rest/$catalog/raiseSalaries', 'POST', [1, 80]);
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.__ERROR, [{ message: 'a 80% raise needs a board decision', componentSignature: 'dsrs', errCode: 20001 }]);
    assert.deepEqual((await demo.ds.Employee.query('employer.ID = 1').toArray()).map((e) => e.get('salary')), before);
    const ok = await demo.request('/rest/$catalog/raiseSalaries', 'POST', [1, 10]);
    assert.deepEqual(ok.body, { result: before.length });
  });
});

describe('HTTP: dataclass, selection and entity functions (/rest/{dataClass}/…)', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  const revenues = async (query?: string) => {
    const sel = query ? demo.ds.Company.query(query) : demo.ds.Company.all();
    let total = 0;
    for (const c of await sel.toArray()) total += Number(c.get('revenues') ?? 0);
    return total;
  };

  it('calls a selection class function on the whole dataclass: /rest/{dc}/{fn}', async () => {
    const res = await demo.request('/rest/Company/totalRevenues', 'POST');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { result: await revenues() });
  });

  it('calls it on the selection a $filter (with $params on POST) defines', async () => {
    const res = await demo.request('/rest/Company/totalRevenues?$filter="revenues > :1"&$params=\'[1000000]\'', 'POST');
    assert.deepEqual(res.body, { result: await revenues('revenues > 1000000') });
  });

  it('calls it on an entity set: /rest/{dc}/{fn}/$entityset/{id}', async () => {
    const set = await demo.request('/rest/Company?$filter="ID < 6"&$method=entityset');
    const id = String(set.body.__ENTITYSET).split('/').pop();
    const res = await demo.request(`/rest/Company/totalRevenues/$entityset/${id}`, 'POST');
    assert.deepEqual(res.body, { result: await revenues('ID < 6') });
    const gone = await demo.request('/rest/Company/totalRevenues/$entityset/0123456789ABCDEF0123456789ABCDEF', 'POST');
    assert.equal(gone.body.__ERROR[0].errCode, 1802);
  });

  it('calls a dataclass class function with the body as parameters, an entity answered as itself', async () => {
    const acme = await demo.ds.Company.all().first();
    const code = String(acme?.get('companyCode'));
    const res = await demo.request('/rest/Company/byCode', 'POST', [code.toLowerCase()]);
    assert.equal(res.status, 200);
    assert.equal(res.body.__KEY, String(acme?.getKey()));
    assert.deepEqual((await demo.request('/rest/Company/byCode', 'POST', ['no such code'])).body, { result: null });
  });

  it('calls an entity class function on /rest/{dc}({key})/{fn} and /rest/{dc}[key]/{fn}', async () => {
    const e = await demo.ds.Employee.query('salary > 0').first();
    const key = String(e?.getKey());
    const salary = Number(e?.get('salary'));
    const res = await demo.request(`/rest/Employee(${key})/raise`, 'POST', [10]);
    assert.equal(res.status, 200);
    assert.equal(res.body.__KEY, key);
    assert.equal(res.body.salary, Math.round(salary * 1.1));
    assert.equal((await demo.ds.Employee.get(e?.getKey()))?.get('salary'), Math.round(salary * 1.1));
    const years = await demo.request(`/rest/Employee[${key}]/seniority`);
    assert.equal(years.status, 200);
    assert.equal(typeof years.body.result, 'number');
  });

  it('keeps attribute reads and writes as they were', async () => {
    assert.equal((await demo.request('/rest/Company/name?$top=1')).status, 200);
    assert.equal((await demo.request('/rest/Company(1)/name')).body.name !== undefined, true);
  });

  it('answers -10729 for an unknown or hidden function, 405 for GET without @onHttpGet, 404 for a missing entity', async () => {
    const unknown = await demo.request('/rest/Company/totalRevenue', 'POST');
    assert.equal(unknown.body.__ERROR[0].errCode, -10729);
    assert.match(unknown.body.__ERROR[0].message, /'totalRevenue' is no exposed function of the CompanySelection class or the Company class, did you mean 'totalRevenues'\?/);
    // an entity function is not a dataclass function, nor the other way round
    assert.equal((await demo.request('/rest/Employee/raise', 'POST', [1])).body.__ERROR[0].errCode, -10729);
    assert.equal((await demo.request('/rest/Company(1)/byCode', 'POST', ['x'])).body.__ERROR[0].errCode, -10729);
    assert.equal((await demo.request('/rest/Company/totalRevenues')).status, 405);
    assert.equal((await demo.request('/rest/Employee(00000000000000000000000000000000)/raise', 'POST', [1])).body.__ERROR[0].errCode, 1542);
  });
});

describe('HTTP: entity and selection parameters', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('gives a new entity built from an entity parameter without __KEY, related entities by {__KEY}', async () => {
    const res = await demo.request('/rest/$catalog/hire', 'POST', [
      { __DATACLASS: 'Employee', __ENTITY: true, firstName: 'Ada', lastName: 'Lovelace', salary: 1234, employer: { __KEY: 2 } },
    ]);
    assert.equal(res.status, 200);
    const saved = await demo.ds.Employee.get(res.body.__KEY);
    assert.equal(saved?.get('lastName'), 'Lovelace');
    assert.equal(saved?.get('employerID'), 2);
  });

  it('gives the stored entity with the values applied for an entity parameter with __KEY', async () => {
    const e = await demo.ds.Employee.all().first();
    const res = await demo.request('/rest/$catalog/hire', 'POST', [{ __DATACLASS: 'Employee', __ENTITY: true, __KEY: e?.getKey(), salary: 4321 }]);
    assert.equal(res.status, 200);
    assert.equal(res.body.__KEY, String(e?.getKey()));
    assert.equal((await demo.ds.Employee.get(e?.getKey()))?.get('salary'), 4321);
    assert.equal((await demo.ds.Employee.get(e?.getKey()))?.get('lastName'), e?.get('lastName'));
  });

  it('refuses entity parameters naming a missing entity, a missing related entity, or no dataclass', async () => {
    const missing = await demo.request('/rest/$catalog/hire', 'POST', [{ __DATACLASS: 'Employee', __ENTITY: true, __KEY: '00000000000000000000000000000000' }]);
    assert.equal(missing.body.__ERROR[0].errCode, 1542);
    const related = await demo.request('/rest/$catalog/hire', 'POST', [{ __DATACLASS: 'Employee', __ENTITY: true, employer: { __KEY: 99999 } }]);
    assert.equal(related.body.__ERROR[0].errCode, 1542);
    assert.match(related.body.__ERROR[0].message, /Employee\.employer: Cannot find entity with "99999" key in the "Company" dataclass/);
    // before the call, even for a function that saves nothing
    const unsaved = await demo.request('/rest/$catalog/pause', 'POST', [1, { __DATACLASS: 'Employee', __ENTITY: true, employer: { __KEY: 99999 } }]);
    assert.equal(unsaved.body.__ERROR?.[0].errCode, 1542);
    const unknown = await demo.request('/rest/$catalog/hire', 'POST', [{ __DATACLASS: 'Employe', __ENTITY: true }]);
    assert.equal(unknown.body.__ERROR[0].errCode, 7002);
    const unnamed = await demo.request('/rest/$catalog/hire', 'POST', [{ __ENTITY: true }]);
    assert.match(unnamed.body.__ERROR[0].message, /parameter #1: an entity parameter names its dataclass in "__DATACLASS"/);
  });

  it("honours an entity parameter's __STAMP as $method=update does: changed since the client read it, the call is refused (1263, as an update) and the function never runs; the current stamp passes", async () => {
    const read = (await demo.request('/rest/Employee?$top=1&$attributes=lastName')).body.__ENTITIES[0];
    // someone else changes it meanwhile
    const other = await demo.request('/rest/Employee?$method=update', 'POST', { __KEY: read.__KEY, __STAMP: read.__STAMP, lastName: 'Changed meanwhile' });
    assert.equal(other.status, 200);
    const stale = await demo.request('/rest/$catalog/hire', 'POST', [{ __DATACLASS: 'Employee', __ENTITY: true, __KEY: read.__KEY, __STAMP: read.__STAMP, lastName: 'From a stale read' }]);
    assert.equal(stale.body.__ERROR?.[0].errCode, 1263, JSON.stringify(stale.body));
    assert.equal((await demo.request(`/rest/Employee('${read.__KEY}')?$attributes=lastName`)).body.lastName, 'Changed meanwhile');
    const bad = await demo.request('/rest/$catalog/hire', 'POST', [{ __DATACLASS: 'Employee', __ENTITY: true, __KEY: read.__KEY, __STAMP: 'one' }]);
    assert.match(bad.body.__ERROR[0].message, /parameter #1: __STAMP must be a whole number/);
    const current = await demo.request('/rest/$catalog/hire', 'POST', [{ __DATACLASS: 'Employee', __ENTITY: true, __KEY: read.__KEY, __STAMP: other.body.__STAMP, lastName: 'From a fresh read' }]);
    assert.equal(current.status, 200, JSON.stringify(current.body));
    assert.equal((await demo.request(`/rest/Employee('${read.__KEY}')?$attributes=lastName`)).body.lastName, 'From a fresh read');
  });

  it('gives the members of an entity set for a selection parameter, 1802 when the set is gone', async () => {
    const set = await demo.request('/rest/Employee?$filter="salary > 50000"&$method=entityset');
    const id = String(set.body.__ENTITYSET).split('/').pop();
    const res = await demo.request('/rest/$catalog/payroll', 'POST', [{ __DATASET: id, __ENTITIES: true }]);
    assert.equal(res.body.result, await demo.ds.Employee.query('salary > 50000').sum('salary'));
    const gone = await demo.request('/rest/$catalog/payroll', 'POST', [{ __DATASET: '0123456789ABCDEF0123456789ABCDEF', __ENTITIES: true }]);
    assert.equal(gone.body.__ERROR[0].errCode, 1802);
  });

  it('passes other objects and arrays as they are (the declaration sees {"min": 1} as given, and refuses it for a number)', async () => {
    const res = await demo.request('/rest/$catalog/earningAtLeast', 'POST', [{ min: 1 }]);
    assert.match(res.body.__ERROR[0].message, /parameter #1 \(min\) of earningAtLeast of the DataStore class is a number; got \{"min":1\}/);
  });
});
