// Declared parameter types of functions called over REST (functions/params.ts): the declaration
// (`name?: type`, 4D's words, entities and selections of one dataclass), the check before the call
// (400 7021 naming the function, the parameter, what it takes and what it got), the start-up
// error for a dataclass the model lacks, the demo's declarations (the probe's hire ["x"] and
// payroll [null]), the API description, and a function that declares nothing: its own failure.

import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DatasetError } from '../../src/errors/dataset-error.js';
import { convertArgs, paramTypesProblem, parseParam, type ParamType } from '../../src/functions/params.js';
import { openProject, ProjectError } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { openDemo, tempDir, testDatabase, type DemoFixture } from '../support/helpers.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

describe('a parameter declaration', () => {
  it('reads a name, 4D\'s words and JavaScript\'s, a dataclass\'s entity or selection, and ? after the name or the type', () => {
    assert.deepEqual(parseParam('since: date'), { name: 'since', kind: 'date', optional: false });
    assert.deepEqual(parseParam('until?: date'), { name: 'until', kind: 'date', optional: true });
    assert.deepEqual(parseParam('until: date?'), { name: 'until', kind: 'date', optional: true });
    assert.deepEqual(parseParam('number?'), { kind: 'number', optional: true });
    assert.deepEqual(parseParam('name: text'), { name: 'name', kind: 'string', optional: false });
    assert.deepEqual(parseParam('tags: collection'), { name: 'tags', kind: 'array', optional: false });
    assert.deepEqual(parseParam('employee: EmployeeEntity'), { name: 'employee', kind: 'entity', dataClass: 'Employee', optional: false });
    assert.deepEqual(parseParam('StaffSelection?'), { kind: 'selection', dataClass: 'Staff', optional: true });
    assert.deepEqual(parseParam('entity'), { kind: 'entity', optional: false });
  });

  it('refuses an unknown type, a name that is no identifier, a name given twice and a required parameter after an optional one', () => {
    assert.match(paramTypesProblem(['x: int']) ?? '', /parameter #1 has type "int": a type is one of .*<DataClass>Entity/);
    assert.match(paramTypesProblem(['1x: number']) ?? '', /parameter #1 has the name "1x"/);
    assert.match(paramTypesProblem(['a: number', 'a: text']) ?? '', /the name a is given to two parameters/);
    assert.match(paramTypesProblem(['a?: number', 'b: number']) ?? '', /parameter #2 is required but follows an optional one/);
    assert.match(paramTypesProblem([3]) ?? '', /parameter #1 is 3/);
    assert.equal(paramTypesProblem(['a: number', 'b?: text', 'c: boolean?']), undefined);
  });

  const fails = (types: ParamType[], args: unknown[], message: RegExp) =>
    assert.throws(() => convertArgs(types, args, 'f of the DataStore class'), (e: unknown) => e instanceof DatasetError && e.code === 'INVALID_PARAMETER' && e.status === 400 && message.test(e.message));

  it('names the function, the parameter\'s position and name, what it takes and what it got', () => {
    fails(['since: date'], ['soon'], /^parameter #1 \(since\) of f of the DataStore class is a date: an ISO 8601 string .*; got "soon"$/);
    fails(['a: number', 'name: text'], [1, 2], /^parameter #2 \(name\) of f of the DataStore class is a text; got 2$/);
    fails(['tags: collection'], [{}], /^parameter #1 \(tags\) of f .* is a JSON array; got \{\}$/);
    fails(['ok: boolean'], [], /^parameter #1 \(ok\) of f .* is required \(boolean\); got nothing$/);
    fails(['e: EmployeeEntity'], [null], /^parameter #1 \(e\) of f .* is required: an entity of Employee: \{"__DATACLASS": "Employee", "__ENTITY": true, "__KEY": …\}; got null$/);
    assert.deepEqual(convertArgs(['a: number', 'b?: text'], [1], 'f'), [1, undefined]);
  });
});

describe('declared parameters over REST: the demo\'s functions', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  const refused = (res: { status: number; body: any }, message: RegExp) => {
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.__ERROR[0].errCode, 7021);
    assert.match(res.body.__ERROR[0].message, message);
  };

  it('answers hire ["x"] and payroll [null] with 400 7021 naming the parameter (the probe: they answered 500)', async () => {
    refused(await demo.request('/rest/$catalog/hire', 'POST', ['x']), /^parameter #1 \(employee\) of hire of the DataStore class is an entity of Employee: .*; got "x"$/);
    refused(await demo.request('/rest/$catalog/payroll', 'POST', [null]), /^parameter #1 \(staff\) of payroll of the DataStore class is required: an entity selection of Employee: .*; got null$/);
    refused(await demo.request('/rest/$catalog/payroll', 'POST', []), /^parameter #1 \(staff\) of payroll .*; got nothing$/);
  });

  it('refuses an entity or a selection of another dataclass than the one declared, and takes the declared one', async () => {
    refused(await demo.request('/rest/$catalog/hire', 'POST', [{ __DATACLASS: 'Company', __ENTITY: true, __KEY: 1 }]), /is an entity of Employee: .*; got an entity of Company$/);
    const companies = (await demo.request('/rest/Company?$method=entityset&$top=0')).body.__ENTITYSET.split('/').pop();
    refused(await demo.request('/rest/$catalog/payroll', 'POST', [{ __DATASET: companies, __ENTITIES: true }]), /is an entity selection of Employee: .*; got an entity selection of Company$/);
    const staff = (await demo.request('/rest/Employee?$method=entityset&$top=0&$filter=%22salary%3E0%22')).body.__ENTITYSET.split('/').pop();
    const total = await demo.request('/rest/$catalog/payroll', 'POST', [{ __DATASET: staff, __ENTITIES: true }]);
    assert.equal(total.status, 200, JSON.stringify(total.body));
    assert.equal(total.body.result, await demo.ds.Employee.query('salary > 0').sum('salary'));
    const hired = await demo.request('/rest/$catalog/hire', 'POST', [{ __DATACLASS: 'Employee', __ENTITY: true, firstName: 'Grace', lastName: 'Hopper', salary: 1000 }]);
    assert.equal(hired.status, 200, JSON.stringify(hired.body));
  });

  it('checks before the call: a refused parameter leaves the data as it was', async () => {
    const before = (await demo.ds.Company.get(1))?.get('name');
    refused(await demo.request('/rest/$catalog/renameSlowly', 'POST', [1, 42, 0]), /^parameter #2 \(name\) of renameSlowly of the DataStore class is a text; got 42$/);
    assert.equal((await demo.ds.Company.get(1))?.get('name'), before);
  });

  it('checks every kind of function the demo declares: dataclass, entity, singleton, project method, and one parameter too many', async () => {
    refused(await demo.request('/rest/Company/byCode', 'POST', [1]), /^parameter #1 \(code\) of byCode of the Company class is a text; got 1$/);
    const key = (await demo.ds.Employee.all().first())?.getKey();
    refused(await demo.request(`/rest/Employee(${String(key)})/raise`, 'POST', ['ten']), /^parameter #1 \(percent\) of raise of the EmployeeEntity class is a number; got "ten"$/);
    refused(await demo.request('/rest/$singleton/Tools/companiesIn', 'POST', [3]), /^parameter #1 \(country\) of companiesIn of the Tools singleton is a text; got 3$/);
    refused(await demo.request('/rest/Employee/payrollSummary', 'POST', ['x']), /^parameter #1 \(raisePercent\) of the project method payrollSummary is a number; got "x"$/);
    refused(await demo.request('/rest/$catalog/counts', 'POST', [1]), /^counts of the DataStore class takes 0 parameters; got 1$/);
  });

  it('shows the declared parameters in the API description: name, type and what each takes', async () => {
    const doc = (await demo.request('/rest/$openapi')).body;
    const body = doc.paths['/rest/$catalog/hire'].post.requestBody.content['application/json'].schema;
    assert.equal(body.minItems, 1);
    assert.equal(body.maxItems, 1);
    assert.equal(body.prefixItems[0].$ref, '#/components/schemas/EntityParameter');
    assert.match(body.prefixItems[0].description, /^employee: an entity of Employee/);
    const between = doc.paths['/rest/$catalog/hiredBetween'].post.requestBody.content['application/json'].schema;
    assert.deepEqual([between.minItems, between.maxItems], [1, 2]);
    assert.match(between.prefixItems[1].description, /^until: a date: .*\(optional\)$/);
  });
});

/** A project folder of one dataclass, with the given class files and methods, dataset-rest installed (a link to this repository). */
function project(classes: Record<string, string>, methods: Record<string, string> = {}): { dir: string; remove(): void } {
  const tmp = tempDir('dataset-rest-params-');
  writeFileSync(join(tmp.dir, 'model.json'), JSON.stringify({ name: 'Params', dataClasses: [{ name: 'Item', attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'label', type: 'string' }] }] }));
  for (const [dir, files] of [['classes', classes], ['methods', methods]] as const) {
    mkdirSync(join(tmp.dir, dir));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(tmp.dir, dir, name), text);
  }
  mkdirSync(join(tmp.dir, 'node_modules'));
  symlinkSync(REPO, join(tmp.dir, 'node_modules', 'dataset-rest'), 'dir');
  return tmp;
}

describe('declared parameters when the project opens, and functions that declare none', () => {
  it('refuses a declaration naming a dataclass the model does not have, in a class or a project method', async () => {
    const cases: [Record<string, string>, Record<string, string>, RegExp][] = [
      [{ 'DataStore.ts': "import { Datastore, exposed, params } from 'dataset-rest'; export default class DataStore extends Datastore { @exposed @params('boss: BossEntity') f(b: unknown) { return b; } }" }, {},
        /classes[/\\]DataStore\.ts: @params of f: parameter #1 is an entity of Boss, a dataclass the model does not have/],
      [{}, { 'count.ts': "import { projectMethod } from 'dataset-rest'; export default projectMethod({ dataClass: 'Item', scope: 'table', exposed: true, params: ['them: ItemsSelection'], run: () => ({}) });" },
        /count\.ts.*parameter #1 is an entity selection of Items, a dataclass the model does not have/],
    ];
    for (const [classes, methods, message] of cases) {
      const tmp = project(classes, methods);
      try {
        await assert.rejects(openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'p.sqlite')) }), (e: unknown) => e instanceof ProjectError && message.test(e.message));
      } finally {
        tmp.remove();
      }
    }
  });

  it('answers a TypeError a function that declares nothing throws on a bad parameter as that function\'s failure (500 7019 naming it), and runs it as before with a good one', async () => {
    const tmp = project({
      'DataStore.ts': `import { Datastore, exposed, params } from 'dataset-rest';
export default class DataStore extends Datastore {
  @exposed shout(text: string) { return text.toUpperCase(); }
  @exposed @params('text: text') shoutDeclared(text: string) { return text.toUpperCase(); }
}`,
    });
    const ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'p.sqlite')) });
    const app = await buildServer(ds, { logLevel: 'silent' });
    try {
      const call = async (fn: string, args: unknown[]) => {
        const res = await app.inject({ method: 'POST', url: `/rest/$catalog/${fn}`, payload: args as object });
        return { status: res.statusCode, body: JSON.parse(res.body) };
      };
      assert.deepEqual((await call('shout', ['hi'])).body, { result: 'HI' });
      const undeclared = await call('shout', [42]);
      assert.equal(undeclared.status, 500, JSON.stringify(undeclared.body));
      assert.equal(undeclared.body.__ERROR[0].errCode, 7019);
      assert.match(undeclared.body.__ERROR[0].message, /^shout of the DataStore class failed with an unexpected error \(request [^)]+\): its cause is in the server log$/);
      const declared = await call('shoutDeclared', [42]);
      assert.equal(declared.status, 400);
      assert.match(declared.body.__ERROR[0].message, /^parameter #1 \(text\) of shoutDeclared of the DataStore class is a text; got 42$/);
    } finally {
      await app.close();
      await ds.close();
      tmp.remove();
    }
  });
});
