// HTTP scenarios for calling exposed functions with their parameters in the URL, 4D's legacy form
// (/rest/{dc}/{fn}(a,b)), on a small project of its own and on the demo. The other function calls
// are http-functions-*.test.ts; what they share is http-functions-shared.ts.

import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { openProject } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { tempDir, testDatabase, type DemoFixture } from '../support/helpers.js';
import { REPO, unchangedDemoOfFile } from './http-functions-shared.js';

// One demo for the suites whose calls change no stored data; each suite that writes opens its own.
const unchangedDemo = unchangedDemoOfFile();

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
