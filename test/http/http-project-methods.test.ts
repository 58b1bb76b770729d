// Project methods (methods/ in a project folder) over REST: the demo's methods of each scope —
// table, currentSelection, currentRecord — at every path, their parameters, results and errors;
// then the start-up errors of bad method modules and the rule that a method answers an object or
// an array (spec "Server-side functions and methods" rules 1–2, reference §2.13).

import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openProject, ProjectError } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { pino } from 'pino';
import { openDemo, tempDir, testDatabase, type DemoFixture } from '../support/helpers.js';

describe('HTTP: the demo\'s project methods', () => {
  let demo: DemoFixture;
  let key: string;
  before(async () => {
    demo = await openDemo();
    key = (await demo.request('/rest/Employee?$top=1&$orderby=employeeNumber')).body.__ENTITIES[0].__KEY;
  });
  after(() => demo.close());

  const bands = async () => ({
    under40k: await demo.ds.Employee.query('salary < 40000').length,
    from40kTo80k: await demo.ds.Employee.query('salary >= 40000 and salary < 80000').length,
    from80k: await demo.ds.Employee.query('salary >= 80000').length,
    unknown: await demo.ds.Employee.query('salary = null').length,
  });

  it('runs a table method on the whole dataclass, by POST and (onHttpGet) by GET, answering {result}', async () => {
    const expected = await bands();
    for (const method of ['POST', 'GET'] as const) {
      const res = await demo.request('/rest/Employee/salaryBands', method);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { result: expected });
    }
  });

  it('refuses $filter, $orderby and $entityset on a table method (400 naming the scope)', async () => {
    for (const url of ['/rest/Employee/salaryBands?$filter="salary>1"', '/rest/Employee/salaryBands?$orderby=salary']) {
      const res = await demo.request(url, 'POST');
      assert.equal(res.status, 400, url);
      assert.equal(res.body.__ERROR[0].errCode, 7007);
      assert.match(res.body.__ERROR[0].message, /salaryBands works on the whole Employee dataclass \(scope table\)/);
    }
  });

  it('runs a currentSelection method on the whole dataclass without $filter', async () => {
    const res = await demo.request('/rest/Employee/payrollSummary', 'POST');
    assert.equal(res.status, 200);
    assert.equal(res.body.result.count, await demo.ds.Employee.all().length);
    assert.equal(res.body.result.total, await demo.ds.Employee.all().sum('salary'));
  });

  it('runs a currentSelection method on the selection of $filter/$params, with its declared parameter', async () => {
    const res = await demo.request('/rest/Employee/payrollSummary?$filter="salary > :1"&$params=[70000]', 'POST', [10]);
    assert.equal(res.status, 200);
    const selection = demo.ds.Employee.query('salary > :1', 70000);
    const total = await selection.sum('salary');
    assert.deepEqual(res.body.result, { count: await selection.length, total, average: total / (await selection.length), totalAfterRaise: Math.round(total * 1.1) });
  });

  it('runs a currentSelection method on an entity set (/{method}/$entityset/{id})', async () => {
    const set = (await demo.request('/rest/Employee?$filter="salary < 40000"&$method=entityset', 'GET')).body.__ENTITYSET as string;
    const id = set.split('/').pop();
    const res = await demo.request(`/rest/Employee/payrollSummary/$entityset/${id}`, 'POST');
    assert.equal(res.status, 200);
    assert.equal(res.body.result.count, await demo.ds.Employee.query('salary < 40000').length);
  });

  it('checks declared parameters before the method runs (400, 7021, naming the parameter)', async () => {
    const wrong = await demo.request('/rest/Employee/payrollSummary', 'POST', ['ten']);
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.__ERROR[0].errCode, 7021);
    assert.equal(wrong.body.__ERROR[0].message, 'parameter #1 (raisePercent) of the project method payrollSummary is a number; got "ten"');
    const many = await demo.request('/rest/Employee/payrollSummary', 'POST', [1, 2]);
    assert.equal(many.status, 400);
    assert.equal(many.body.__ERROR[0].message, 'the project method payrollSummary takes 1 parameter; got 2');
  });

  it('refuses GET for a method without onHttpGet (405)', async () => {
    const res = await demo.request('/rest/Employee/payrollSummary');
    assert.equal(res.status, 405);
    assert.match(res.body.__ERROR[0].message, /GET cannot call the project method payrollSummary/);
  });

  it('runs a currentRecord method on the entity of (key) and [key], answering a selection as a paged, projected collection', async () => {
    const employee = await demo.ds.Employee.get(key);
    const expected = await demo.ds.Employee.query('employerID = :1 and ID != :2', employee!.get('employerID'), key).length;
    for (const path of [`(${key})`, `[${key}]`]) {
      const res = await demo.request(`/rest/Employee${path}/teammates?$top=2&$attributes=lastName`, 'POST');
      assert.equal(res.status, 200, path);
      assert.equal(res.body.__COUNT, expected);
      assert.equal(res.body.__ENTITIES.length, Math.min(2, expected));
      assert.deepEqual(Object.keys(res.body.__ENTITIES[0]).filter((k) => !k.startsWith('__')), ['lastName']);
      assert.ok(res.body.__ENTITIES.every((e: { __KEY: string }) => e.__KEY !== key));
    }
  });

  it('answers 404 with 1542 when the entity of a currentRecord method does not exist', async () => {
    const res = await demo.request('/rest/Employee(00000000000000000000000000000000)/teammates', 'POST');
    assert.equal(res.status, 404);
    assert.equal(res.body.__ERROR[0].errCode, 1542);
  });

  it('answers -10729 with the right path when a method is called at the other scope\'s URL', async () => {
    const onSelection = await demo.request('/rest/Employee/teammates', 'POST');
    assert.equal(onSelection.status, 404);
    assert.equal(onSelection.body.__ERROR[0].errCode, -10729);
    assert.match(onSelection.body.__ERROR[0].message, /the project method teammates exists, but it runs on one entity \(scope currentRecord\): call \/rest\/Employee\(\{key\}\)\/teammates/);
    const onEntity = await demo.request(`/rest/Employee(${key})/salaryBands`, 'POST');
    assert.equal(onEntity.status, 404);
    assert.match(onEntity.body.__ERROR[0].message, /it runs on the dataclass or a selection \(scope table\): call \/rest\/Employee\/salaryBands/);
  });

  it('answers -10729 for a method that is not exposed, naming no such method', async () => {
    const res = await demo.request('/rest/Company/inactiveCompanies', 'POST');
    assert.equal(res.status, 404);
    assert.equal(res.body.__ERROR[0].errCode, -10729);
    assert.equal(res.body.__ERROR[0].message, "Unknown member method: 'inactiveCompanies' is no exposed function of the CompanySelection class or the Company class");
    assert.equal((await demo.request('/rest/Company/inactiveCompanies')).status, 404); // GET: an unknown attribute
  });

  it('suggests the closest exposed method for a misspelt one', async () => {
    const res = await demo.request('/rest/Employee/salaryBand', 'POST');
    assert.match(res.body.__ERROR[0].message, /did you mean 'salaryBands'\?/);
  });
});

const REPO = fileURLToPath(new URL('../..', import.meta.url));

const MODEL = {
  name: 'Methods',
  dataClasses: [
    {
      name: 'Person',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
      ],
    },
  ],
};

/** A project folder with the given methods/ and classes/ files, dataset-rest installed (a link to this repository). */
function project(methods: Record<string, string>, classes: Record<string, string> = {}): { dir: string; remove(): void } {
  const tmp = tempDir('dataset-rest-methods-');
  writeFileSync(join(tmp.dir, 'model.json'), JSON.stringify(MODEL));
  for (const d of ['methods', 'classes', 'node_modules']) mkdirSync(join(tmp.dir, d));
  symlinkSync(REPO, join(tmp.dir, 'node_modules', 'dataset-rest'), 'dir');
  for (const [name, text] of Object.entries(methods)) writeFileSync(join(tmp.dir, 'methods', name), text);
  for (const [name, text] of Object.entries(classes)) writeFileSync(join(tmp.dir, 'classes', name), text);
  return tmp;
}

const method = (props: string) => `import { projectMethod } from 'dataset-rest';\nexport default projectMethod({ ${props} } as any);\n`;

describe('project methods: results and start-up errors', () => {
  it('answers 500 (7022) when a method returns neither an object nor an array, and accepts an array', async () => {
    const tmp = project({
      'count.ts': method("dataClass: 'Person', scope: 'table', exposed: true, run: async (people: any) => people.all().length"),
      'names.ts': method("dataClass: 'Person', scope: 'table', exposed: true, run: () => ['a', 'b']"),
      // plain JavaScript, CommonJS style
      'nothing.js': "module.exports = { dataClass: 'Person', scope: 'table', exposed: true, run() {} };\n",
      'big.ts': method("dataClass: 'Person', scope: 'table', exposed: true, run: () => ({ n: BigInt(1) })"),
      'nested.ts': method("dataClass: 'Person', scope: 'table', exposed: true, run: async (people: any) => ({ first: await people.all().first() })"),
      'looped.ts': method("dataClass: 'Person', scope: 'table', exposed: true, run: () => { const o: any = {}; o.self = o; return o; }"),
      'getter.ts': method("dataClass: 'Person', scope: 'table', exposed: true, run: () => ({ get x() { throw new Error('getter boom'); } })"),
    });
    const ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'data.sqlite')) });
    const person = ds.Person.new();
    person.set('name', 'Ada');
    await person.save();
    const app = await buildServer(ds, { logLevel: 'silent' });
    try {
      const bad = await app.inject({ method: 'POST', url: '/rest/Person/count' });
      assert.equal(bad.statusCode, 500);
      assert.deepEqual(JSON.parse(bad.body).__ERROR[0], { message: 'the project method count must return an object or an array; it returned 1', componentSignature: 'dsrs', errCode: 7022 });
      const nothing = await app.inject({ method: 'POST', url: '/rest/Person/nothing' });
      assert.equal(JSON.parse(nothing.body).__ERROR[0].message, 'the project method nothing must return an object or an array; it returned nothing');
      const ok = await app.inject({ method: 'POST', url: '/rest/Person/names' });
      assert.deepEqual(JSON.parse(ok.body), { result: ['a', 'b'] });
      for (const [url, message] of [
        ['/rest/Person/big', /^the project method big returned a value that cannot be sent as JSON: Do not know how to serialize a BigInt \(return a number or a string\)$/],
        ['/rest/Person/nested', /^the project method nested returned an entity inside an object or array: return it alone \(it is then sent as REST sends it\), or plain values read from it$/],
        ['/rest/Person/looped', /^the project method looped returned a value that cannot be sent as JSON: Converting circular structure to JSON/],
        ['/rest/Person/getter', /^the project method getter returned a value that cannot be sent as JSON: getter boom$/],
      ] as const) {
        const res = await app.inject({ method: 'POST', url });
        assert.equal(res.statusCode, 500, url);
        const error = JSON.parse(res.body).__ERROR[0];
        assert.equal(error.errCode, 7019, url);
        assert.match(error.message, message);
      }
    } finally {
      await app.close();
      await ds.close();
      tmp.remove();
    }
  });

  const cases: [string, Record<string, string>, Record<string, string>, RegExp][] = [
    ['an unknown dataclass, with the closest name', { m: method("dataClass: 'Persn', scope: 'table', run: () => ({})") }, {}, /methods\/m\.ts: dataClass "Persn" names no dataclass of the model \(dataclasses: Person\); did you mean Person\?/],
    ['an unknown scope', { m: method("dataClass: 'Person', scope: 'record', run: () => ({})") }, {}, /methods\/m\.ts: scope "record" is not one of table, currentRecord, currentSelection/],
    ['no run function', { m: method("dataClass: 'Person', scope: 'table'") }, {}, /methods\/m\.ts: run must be a function/],
    ['onHttpGet without exposed', { m: method("dataClass: 'Person', scope: 'table', onHttpGet: true, run: () => ({})") }, {}, /methods\/m\.ts: onHttpGet allows GET for a method REST can call; set exposed: true too/],
    ['an unknown property', { m: method("dataClass: 'Person', scope: 'table', expose: true, run: () => ({})") }, {}, /methods\/m\.ts: unknown property expose/],
    ['a wrong parameter type', { m: method("dataClass: 'Person', scope: 'table', params: ['int'], run: () => ({})") }, {}, /methods\/m\.ts: parameter #1 has type "int": a type is one of any, string, text, number, boolean, date, object, array, collection, entity, selection, or <DataClass>Entity/],
    ['the name of an attribute', { name: method("dataClass: 'Person', scope: 'table', run: () => ({})") }, {}, /methods\/name\.ts: Person has an attribute named name/],
    ['the name of a class function at the same URL', { hello: method("dataClass: 'Person', scope: 'currentSelection', run: () => ({})") }, {
      'PersonSelection.ts': "import { EntitySelection, exposed } from 'dataset-rest';\nexport default class PersonSelection extends EntitySelection { @exposed hello() { return 1; } }\n",
    }, /methods\/hello\.ts: Person has a class function named hello, called at the same URL; rename one of them/],
    ['a file name that is no identifier', { 'my-method': method("dataClass: 'Person', scope: 'table', run: () => ({})") }, {}, /methods\/my-method\.ts: "my-method" cannot name a method/],
    ['no default export', { 'm.ts': 'export const x = 1;\n' }, {}, /methods\/m\.ts: must export default projectMethod/],
    ['a syntax error', { 'm.ts': 'export default {\n' }, {}, /methods\/m\.ts: failed to load/],
  ];
  for (const [what, methods, classes, message] of cases) {
    it(`refuses at start-up a method with ${what}`, async () => {
      const files = Object.fromEntries(Object.entries(methods).map(([k, v]) => [k.includes('.') ? k : `${k}.ts`, v]));
      const tmp = project(files, classes);
      try {
        await assert.rejects(openProject(tmp.dir), (e: Error) => {
          assert.ok(e instanceof ProjectError, String(e));
          assert.match(e.message, message);
          return true;
        });
      } finally {
        tmp.remove();
      }
    });
  }
});

describe('project methods: failures and time limits', () => {
  const tmp = project({
    'renameAll.ts': method("dataClass: 'Person', scope: 'currentSelection', exposed: true, params: ['string', 'number?'], run: async (people: any, name: string, ms?: number) => people.getDataClass().ds.transaction(async () => { for await (const p of people) { p.set('name', name); await p.save(); } if (ms) await new Promise((r) => setTimeout(r, ms)); else throw new Error('changed my mind'); return {}; })"),
  });
  let ds: Awaited<ReturnType<typeof openProject>>;
  let app: Awaited<ReturnType<typeof buildServer>>;
  before(async () => {
    ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'data.sqlite')) });
    for (const name of ['Ann', 'Bob']) {
      const p = ds.Person.new();
      p.set('name', name);
      await p.save();
    }
    app = await buildServer(ds, { logLevel: 'silent' });
  });
  after(async () => {
    await app.close();
    await ds.close();
    tmp.remove();
  });
  const names = async () => (await ds.Person.all().orderBy('name').toArray()).map((p) => p.get('name'));

  it('answers 7019 naming the method (not its exception\'s text) when it throws, logs the exception with its stack and the request id, and rolls back its transaction', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
    const logged = await buildServer(ds, { log });
    try {
      const res = await logged.inject({ method: 'POST', url: '/rest/Person/renameAll', payload: ['Zed'], headers: { 'x-request-id': 'rename-1' } });
      assert.equal(res.statusCode, 500);
      assert.deepEqual(JSON.parse(res.body).__ERROR[0], { message: 'the project method renameAll failed with an unexpected error (request rename-1): its cause is in the server log', componentSignature: 'dsrs', errCode: 7019 });
      assert.deepEqual(await names(), ['Ann', 'Bob']);
      const entry = lines.map((l) => JSON.parse(l)).find((l) => l.reqId === 'rename-1');
      assert.ok(entry, 'the failure is logged under the request id');
      assert.equal(entry.err.message, 'changed my mind');
      assert.match(entry.err.stack, /methods\/renameAll\.ts:\d+:\d+\)/, 'the stack names the method\'s file and line');
    } finally {
      await logged.close();
    }
  });

  it('answers the exception\'s message and stack with exposeErrors (--expose-errors, during development)', async () => {
    const open = await buildServer(ds, { logLevel: 'silent', exposeErrors: true });
    try {
      const res = await open.inject({ method: 'POST', url: '/rest/Person/renameAll', payload: ['Zed'] });
      assert.equal(res.statusCode, 500);
      const [error] = JSON.parse(res.body).__ERROR;
      assert.equal(error.errCode, 7019);
      assert.match(error.message, /^the project method renameAll failed with an unexpected error \(request [^)]+\): changed my mind$/);
      assert.match(error.extraDescription.stack.join('\n'), /renameAll\.ts/);
    } finally {
      await open.close();
    }
  });

  it('answers 7020 for a method past the time limit, its transaction rolled back', async () => {
    const quick = await buildServer(ds, { logLevel: 'silent', functionTimeoutMs: 100 });
    try {
      const res = await quick.inject({ method: 'POST', url: '/rest/Person/renameAll?$filter="name = Ann"', payload: ['Zed', 400] });
      assert.equal(res.statusCode, 504);
      assert.match(JSON.parse(res.body).__ERROR[0].message, /^the project method renameAll took longer than 100 ms/);
    } finally {
      await quick.close();
    }
    await new Promise((r) => setTimeout(r, 450));
    assert.deepEqual(await names(), ['Ann', 'Bob']);
  });
});
