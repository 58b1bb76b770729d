// HTTP scenarios for calling exposed functions of the demo's DataStore class at
// /rest/$catalog/{function} (spec "Server-side functions and methods", reference §2.12).

import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { openProject } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { openDemo, tempDir, testDatabase, type DemoFixture } from '../support/helpers.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

// One demo for the suites whose calls change no stored data (the time limit, declared parameter
// types, the checks before a call, the demo's calls in the URL form); each suite that writes opens
// its own.
let unchanged: Promise<DemoFixture> | undefined;
const unchangedDemo = (): Promise<DemoFixture> => (unchanged ??= openDemo());
after(async () => {
  await (await unchanged)?.close();
});

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

describe('HTTP: parameters in the URL, 4D\'s legacy form (/rest/{dc}/{fn}(a,b))', () => {
  let app: FastifyInstance;
  let demo: DemoFixture;
  let close: () => Promise<void>;
  before(async () => {
    demo = await unchangedDemo();
    const tmp = tempDir('dataset-rest-url-args-');
    writeFileSync(join(tmp.dir, 'model.json'), JSON.stringify({
      name: 'People',
      dataClasses: [{ name: 'Person', collectionName: 'PersonSelection', attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'name', type: 'string' }, { name: 'age', type: 'long' },
      ] }],
    }));
    for (const d of ['classes', 'node_modules']) mkdirSync(join(tmp.dir, d));
    symlinkSync(REPO, join(tmp.dir, 'node_modules', 'dataset-rest'), 'dir');
    writeFileSync(join(tmp.dir, 'classes', 'Person.ts'), `import { DataClass, exposed, onHttpGet, params } from 'dataset-rest';
export default class Person extends DataClass {
  @exposed @onHttpGet echo(...args: unknown[]) { return args; }
  @exposed @onHttpGet @params('string', 'number?') typed(code: string, n?: number) { return [code, n ?? null]; }
  @exposed postOnly(n: number) { return n; }
  @exposed async addPerson(name: string, age: number) {
    const p = this.new();
    p.set('name', name);
    p.set('age', age);
    await p.save();
    return p;
  }
}
`);
    writeFileSync(join(tmp.dir, 'classes', 'PersonSelection.ts'), `import { EntitySelection, exposed, onHttpGet } from 'dataset-rest';
export default class PersonSelection extends EntitySelection {
  @exposed @onHttpGet async namesWith(prefix: string) {
    return (await this.orderBy('name').toArray()).map((p) => String(p.get('name'))).filter((n) => n.startsWith(prefix));
  }
}
`);
    writeFileSync(join(tmp.dir, 'classes', 'PersonEntity.ts'), `import { Entity, exposed, onHttpGet } from 'dataset-rest';
export default class PersonEntity extends Entity {
  @exposed @onHttpGet greet(greeting: string, times: number) { return Array(times).fill(greeting + ' ' + String(this.get('name'))).join(', '); }
}
`);
    const ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'data.sqlite')) });
    for (const [name, age] of [['Ann', 41], ['Anna', 25], ['Bob', 33]] as const) {
      const p = ds.Person.new();
      p.set('name', name);
      p.set('age', age);
      await p.save();
    }
    app = await buildServer(ds, { logLevel: 'silent' });
    close = async () => {
      await app.close();
      await ds.close();
      tmp.remove();
    };
  });
  after(() => close());

  const call = async (url: string, method: 'GET' | 'POST' = 'GET', body?: unknown) => {
    const res = await app.inject({ method, url, ...(body === undefined ? {} : { payload: body as object }) });
    return { status: res.statusCode, body: JSON.parse(res.body) };
  };

  it('calls a dataclass function with the parameters written in the URL: addPerson(John,Smith) style', async () => {
    const res = await call('/rest/Person/echo(John,Smith)');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { result: ['John', 'Smith'] });
    assert.deepEqual((await call('/rest/Person/echo()')).body, { result: [] });
  });

  it('reads an unquoted parameter as a JSON number, true, false or null when it is one, else as text; a quoted one as text', async () => {
    const res = await call(`/rest/Person/echo(12,-1.5,1e3,true,null,007,O'Brien,"12",'x,y',%22q,r%22,a%2Cb,a%20b,Zo%C3%AB,"")`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.result, [12, -1.5, 1000, true, null, '007', "O'Brien", '12', 'x,y', 'q,r', 'a,b', 'a b', 'Zoë', '']);
  });

  it('reads a fully encoded call once, spaces (%20) around parameters out, and refuses a parenthesis too many (issue 14)', async () => {
    assert.deepEqual((await call('/rest/Person/echo%28C1000%2CC1001%29')).body, { result: ['C1000,C1001'] });
    assert.deepEqual((await call('/rest/Person/echo%28C%2528,100%25%29')).body, { result: ['C%28', '100%'] });
    assert.deepEqual((await call('/rest/Person/echo(%20%22C1000%22%20,%2012,%20%22a,%20b%22)')).body, { result: ['C1000', 12, 'a, b'] });
    for (const url of ['/rest/Person/echo(C1000))', '/rest/Person/echo(a)(b)']) {
      const res = await call(url);
      assert.equal(res.status, 400, url);
      assert.equal(res.body.__ERROR[0].errCode, 7004, url);
      assert.match(res.body.__ERROR[0].message, /unexpected '\)' at offset \d+/, url);
    }
  });

  it('keeps the text of a parameter the function declares a string (@params)', async () => {
    assert.deepEqual((await call('/rest/Person/typed(12,5)')).body, { result: ['12', 5] });
    const wrong = await call('/rest/Person/typed(12,five)');
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.__ERROR[0].errCode, 7021);
  });

  it('calls with POST too (a function without @onHttpGet: GET answers 405), refusing a body that gives the parameters again', async () => {
    assert.deepEqual((await call('/rest/Person/postOnly(3)', 'POST')).body, { result: 3 });
    assert.deepEqual((await call('/rest/Person/postOnly(3)', 'POST', [])).body, { result: 3 });
    const get = await call('/rest/Person/postOnly(3)');
    assert.equal(get.status, 405);
    assert.match(get.body.__ERROR[0].message, /GET cannot call postOnly/);
    const twice = await call('/rest/Person/postOnly(3)', 'POST', [4]);
    assert.equal(twice.status, 400);
    assert.equal(twice.body.__ERROR[0].errCode, 7014);
    assert.match(twice.body.__ERROR[0].message, /in the URL \(fn\(a,b\)\) and in the body: give them once/);
    const made = await call('/rest/Person/addPerson(Carl,52)', 'POST');
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.deepEqual([made.body.name, made.body.age], ['Carl', 52]);
    await call(`/rest/Person(${String(made.body.__KEY)})?$method=delete`, 'POST');
  });

  it('calls an entity function (/rest/{dc}({key})/{fn}(…)) and a selection function with $filter, whose $params are then the filter\'s', async () => {
    assert.deepEqual((await call('/rest/Person(1)/greet(Hello,2)')).body, { result: 'Hello Ann, Hello Ann' });
    assert.deepEqual((await call('/rest/Person/namesWith(An)')).body, { result: ['Ann', 'Anna'] });
    const filtered = await call('/rest/Person/namesWith(An)?$filter="age > :1"&$params=\'[30]\'');
    assert.deepEqual(filtered.body, { result: ['Ann'] });
    const stray = await call('/rest/Person/namesWith(An)?$params=\'[30]\'');
    assert.equal(stray.status, 400);
    assert.match(stray.body.__ERROR[0].message, /the parameters of namesWith are in the URL; \$params gives the values of \$filter's placeholders/);
  });

  it('calls a project method and a dataclass function of the demo in the URL form', async () => {
    const bands = await demo.request('/rest/Employee/salaryBands()');
    assert.equal(bands.status, 200, JSON.stringify(bands.body));
    assert.deepEqual(bands.body, (await demo.request('/rest/Employee/salaryBands')).body);
    const acme = await demo.ds.Company.all().first();
    const byCode = await demo.request(`/rest/Company/byCode(${encodeURIComponent(String(acme?.get('companyCode')))})`);
    assert.equal(byCode.body.__KEY, String(acme?.getKey()));
  });

  it('refuses a malformed call, a call where no function can be and a name that is no function, naming what is wrong', async () => {
    const cases: [string, number, number, RegExp][] = [
      ['/rest/Person/echo(a,,b)', 400, 7004, /parameter #2 is empty \(write "" for an empty string\)/],
      ['/rest/Person/echo(a,)', 400, 7004, /parameter #2 is empty/],
      ['/rest/Person/echo(a,"b"c)', 400, 7004, /unexpected 'c' after the quoted parameter #2/],
      ['/rest/Person/echo(a,"b,c)', 400, 7004, /the quote of parameter #2 is not closed/],
      ['/rest/Person/echo(a)x', 400, 7004, /is no attribute list nor a function call/],
      ['/rest/Person/ec-ho(a)', 400, 7004, /is no attribute list nor a function call/],
      ['/rest/Person/echo(a)/name', 400, 7004, /echo\(…\): a function with its parameters in the URL follows the dataclass or the entity, alone/],
      ['/rest/Person/nope(1)', 404, -10729, /'nope' is no exposed function/],
      ['/rest/Person/name(1)', 404, -10729, /'name' is no exposed function/],
    ];
    for (const [url, status, errCode, message] of cases) {
      const res = await call(url);
      assert.equal(res.status, status, `${url}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.__ERROR[0].errCode, errCode, url);
      assert.match(res.body.__ERROR[0].message, message, url);
    }
  });

  it('leaves keys and attribute lists as they were: commas and quotes in a key, a list of names', async () => {
    assert.equal((await call('/rest/Person(1)/name,age')).status, 200);
    const byValue = await call('/rest/Person:name("A,n")');
    assert.equal(byValue.status, 404, JSON.stringify(byValue.body));
    assert.equal(byValue.body.__ERROR[0].errCode, 1542);
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

describe('HTTP: function time limit and concurrency', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await unchangedDemo();
  });

  it('answers 7020 (504) when a function passes the time limit, and serves other calls meanwhile', async () => {
    const quick = await demo.withServer({ functionTimeoutMs: 100 });
    try {
      const slow = quick.request('/rest/$catalog/pause', 'POST', [600]);
      // answered while the slow one is still running
      assert.deepEqual((await quick.request('/rest/$catalog/pause', 'POST', [1, 'quick'])).body, { result: { ms: 1, tag: 'quick' } });
      const res = await slow;
      assert.equal(res.status, 504);
      assert.equal(res.body.__ERROR[0].errCode, 7020);
      assert.match(res.body.__ERROR[0].message, /pause of the DataStore class took longer than 100 ms \(the server's --function-timeout\): it is stopped at its next datastore call/);
    } finally {
      await quick.close();
    }
  });

  it('runs two slow functions at once, each answering with its own parameters', async () => {
    const [a, b] = await Promise.all([
      demo.request('/rest/$catalog/pause', 'POST', [150, 'first']),
      demo.request('/rest/$catalog/pause', 'POST', [100, 'second']),
    ]);
    assert.deepEqual(a.body, { result: { ms: 150, tag: 'first' } });
    assert.deepEqual(b.body, { result: { ms: 100, tag: 'second' } });
  });
});

describe('HTTP: declared parameter types', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await unchangedDemo();
  });

  it('gives a Date for an ISO 8601 date or date-time where @params declares a date', async () => {
    const expected = await demo.ds.Employee.query('hiredAt >= :1 and hiredAt < :2', new Date('2019-01-01'), new Date('2021-06-01T12:00:00Z')).length;
    assert.ok(expected > 0 && expected < (await demo.ds.Employee.all().length), 'the demo has employees on both sides');
    const res = await demo.request('/rest/$catalog/hiredBetween?$top=1', 'POST', ['2019-01-01', '2021-06-01T12:00:00Z']);
    assert.equal(res.status, 200);
    assert.equal(res.body.__COUNT, expected);
    const open = await demo.request('/rest/$catalog/hiredBetween?$top=1', 'POST', ['2019-01-01']); // the optional one left out
    assert.equal(open.body.__COUNT, await demo.ds.Employee.query('hiredAt >= :1', new Date('2019-01-01')).length);
  });

  it('answers 400 (7021) naming the parameter for a date that is no ISO 8601 date, a missing one, or one too many', async () => {
    const cases: [unknown[], string][] = [
      [['last year'], 'parameter #1 (since) of hiredBetween of the DataStore class is a date: an ISO 8601 string such as "2024-05-01" or "2024-05-01T09:30:00Z"; got "last year"'],
      [['2019-02-30'], 'parameter #1 (since) of hiredBetween of the DataStore class is a date: an ISO 8601 string such as "2024-05-01" or "2024-05-01T09:30:00Z"; got "2019-02-30"'],
      [[20190101], 'parameter #1 (since) of hiredBetween of the DataStore class is a date: an ISO 8601 string such as "2024-05-01" or "2024-05-01T09:30:00Z"; got 20190101'],
      [[], 'parameter #1 (since) of hiredBetween of the DataStore class is required (date); got nothing'],
      [['2019-01-01', '2020-01-01', '2021-01-01'], 'hiredBetween of the DataStore class takes 2 parameters; got 3'],
    ];
    for (const [body, message] of cases) {
      const res = await demo.request('/rest/$catalog/hiredBetween', 'POST', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual(res.body.__ERROR, [{ message, componentSignature: 'dsrs', errCode: 7021 }]);
    }
  });

  it('leaves undeclared parameters as JSON gives them: a date stays a string', async () => {
    const res = await demo.request('/rest/$catalog/pause', 'POST', [1, '2019-01-01']);
    assert.deepEqual(res.body, { result: { ms: 1, tag: '2019-01-01' } });
  });

  it('checks an object parameter: authentify takes {userName, password}', async () => {
    const ok = await demo.request('/rest/$catalog/authentify', 'POST', [{ userName: 'alice', password: 'alice123' }]);
    assert.deepEqual(ok.body, { result: { success: true, userName: 'alice', privileges: [] } }, 'without roles.json there are no privileges to give');
    const wrong = await demo.request('/rest/$catalog/authentify', 'POST', [{ userName: 'alice', password: 'nope' }]);
    assert.deepEqual(wrong.body, { result: { success: false, reason: 'unknown user name or wrong password' } });
    const shape = await demo.request('/rest/$catalog/authentify', 'POST', ['me']);
    assert.equal(shape.status, 400);
    assert.equal(shape.body.__ERROR[0].message, 'parameter #1 (credentials) of authentify of the DataStore class is a JSON object; got "me"');
  });
});

describe('HTTP: the context of a call', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('gives each of several slow calls running at once its own request, before and after it waits', async () => {
    const delays = [120, 40, 80, 10, 100, 60];
    const answers = await Promise.all(delays.map((ms, i) => demo.request('/rest/$catalog/whoCalls', 'POST', [ms], { 'x-demo-tag': `caller-${i}` })));
    answers.forEach((res, i) => {
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.result, { before: `caller-${i}`, after: `caller-${i}`, function: 'whoCalls of the DataStore class' });
    });
  });

  it('has no context outside a call', async () => {
    const { callContext } = await import('../../src/index.js');
    assert.throws(() => callContext(), /callContext\(\) is only available while a function called over REST runs/);
  });

  it('rolls back the transaction of a function past its time limit: its next datastore call is refused', async () => {
    const before = (await demo.ds.Company.get(1))?.get('name');
    const quick = await demo.withServer({ functionTimeoutMs: 100 });
    try {
      const res = await quick.request('/rest/$catalog/renameSlowly', 'POST', [1, 'Too Slow Inc', 300]);
      assert.equal(res.status, 504);
      assert.equal(res.body.__ERROR[0].errCode, 7020);
      assert.match(res.body.__ERROR[0].message, /renameSlowly of the DataStore class took longer than 100 ms/);
      await new Promise((resolve) => setTimeout(resolve, 350)); // the function wakes up and tries its second save
    } finally {
      await quick.close();
    }
    assert.equal((await demo.ds.Company.get(1))?.get('name'), before, 'the first save was rolled back');
    // the writer is free again: the same function within its limit commits
    const ok = await demo.request('/rest/$catalog/renameSlowly', 'POST', [1, 'Quick Inc', 1]);
    assert.deepEqual(ok.body, { result: 'Quick Inc (confirmed)' });
  });

  it('frees the writer at the time limit: other writes go on while the function still sleeps, and it never commits', async () => {
    const before = (await demo.ds.Company.get(1))?.get('name');
    const quick = await demo.withServer({ functionTimeoutMs: 100 });
    const started = Date.now();
    try {
      // saves, then sleeps 3 s, then returns without touching the datastore again
      const res = await quick.request('/rest/$catalog/renameSlowly', 'POST', [1, 'Late Commit Ltd', 3000, false]);
      assert.equal(res.status, 504);
    } finally {
      await quick.close();
    }
    const other = await demo.ds.Company.get(2);
    const update = await demo.request('/rest/Company?$method=update', 'POST', { __KEY: 2, __STAMP: other?.getStamp(), revenues: 123 });
    assert.equal(update.status, 200);
    assert.ok(Date.now() - started < 2500, 'the update did not wait for the function');
    await new Promise((resolve) => setTimeout(resolve, 3100 - (Date.now() - started))); // the function returns
    assert.equal((await demo.ds.Company.get(1))?.get('name'), before, 'nothing of it committed');
  });
});

describe('HTTP: how a call is checked before it runs', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await unchangedDemo();
  });

  it('answers 405 for GET of a POST-only function before reading its $filter, entity set or entity', async () => {
    for (const url of ['/rest/Employee/payrollSummary?$filter="salary>:1"', '/rest/Company/totalRevenues/$entityset/0123456789ABCDEF0123456789ABCDEF', '/rest/Employee(00000000000000000000000000000000)/raise']) {
      const res = await demo.request(url);
      assert.equal(res.status, 405, url);
    }
  });

  it('refuses $filter on a function of the dataclass class or of an entity (they run on no selection)', async () => {
    const res = await demo.request('/rest/Company/byCode?$filter="ID>1"', 'POST', ['X']);
    assert.equal(res.status, 400);
    assert.match(res.body.__ERROR[0].message, /byCode of the Company class runs on the dataclass: \$filter, \$orderby and \$entityset do not apply/);
    const key = (await demo.ds.Employee.all().first())?.getKey();
    const entity = await demo.request(`/rest/Employee(${key})/seniority?$orderby=nope`);
    assert.equal(entity.status, 400);
    assert.match(entity.body.__ERROR[0].message, /seniority of the EmployeeEntity class runs on one entity: \$filter, \$orderby and \$entityset do not apply/);
  });

  it('runs a selection function and a currentSelection method on the selection sorted by $orderby', async () => {
    const res = await demo.request('/rest/Employee/bestPaid?$filter="salary < 50000"&$orderby=salary', 'POST');
    assert.equal(res.status, 200);
    const expected = await demo.ds.Employee.query('salary < 50000').orderBy('salary desc').first();
    assert.equal(res.body.__KEY, expected?.getKey());
    assert.equal(res.body.__entityModel, 'Employee');
    const revenues = await demo.request('/rest/Company/totalRevenues?$orderby=revenues desc', 'POST');
    assert.equal(revenues.status, 200);
  });

  it('answers 7002 for a call under a dataclass REST does not have', async () => {
    const res = await demo.request('/rest/AuditLog/anything', 'POST');
    assert.equal(res.status, 404);
    assert.equal(res.body.__ERROR[0].errCode, 7002);
  });
});
