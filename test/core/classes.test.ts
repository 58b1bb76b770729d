// User classes (classes/ in a project folder): loading each kind, TypeScript and JavaScript,
// instances and methods, calculated attributes declared by entity classes (through the core and
// through REST), and the start-up errors of bad class files.

import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { DataClass, Datastore, Entity, EntitySelection, type DatastoreWithClasses } from '../../src/index.js';
import { openProject, ProjectError } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { openDemo, tempDir, testDatabase } from '../support/helpers.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

const MODEL = {
  name: 'Classes',
  dataClasses: [
    {
      name: 'Company',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
        { name: 'revenues', type: 'number' },
        { name: 'staff', kind: 'relatedEntities', type: 'PersonSelection', path: 'employer' },
      ],
    },
    {
      name: 'Person',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'firstName', type: 'string' },
        { name: 'lastName', type: 'string' },
        { name: 'salary', type: 'number' },
        { name: 'employer', kind: 'relatedEntity', type: 'Company' },
        { name: 'fullName', kind: 'calculated', type: 'string' },
        { name: 'yearly', kind: 'calculated', type: 'number' },
      ],
    },
  ],
};

/** A project folder with model.json, the given class files, and dataset-rest installed (a link to this repository). */
function project(files: Record<string, string>, model: unknown = MODEL): { dir: string; remove(): void } {
  const tmp = tempDir('dataset-rest-classes-');
  writeFileSync(join(tmp.dir, 'model.json'), JSON.stringify(model));
  mkdirSync(join(tmp.dir, 'classes'));
  mkdirSync(join(tmp.dir, 'node_modules'));
  symlinkSync(REPO, join(tmp.dir, 'node_modules', 'dataset-rest'), 'dir');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(tmp.dir, 'classes', name), text);
  return tmp;
}

const PERSON_ENTITY_TS = `
import { Entity, type CalculatedQueryEvent, type CalculatedOrderByEvent } from 'dataset-rest';
export default class PersonEntity extends Entity {
  declare firstName: string | null;
  declare lastName: string | null;
  declare salary: number | null;
  get fullName(): string { return [this.firstName, this.lastName].filter(Boolean).join(' '); }
  set fullName(value: unknown) {
    const [first, ...rest] = String(value).split(' ');
    this.firstName = first;
    this.lastName = rest.join(' ');
  }
  static queryFullName(event: CalculatedQueryEvent) {
    return { query: 'firstName ' + event.operator + ' :1 or lastName ' + event.operator + ' :1', parameters: [event.value] };
  }
  static orderByFullName(event: CalculatedOrderByEvent) {
    return event.descending ? 'lastName desc, firstName desc' : 'lastName, firstName';
  }
  get yearly(): Promise<number> { return new Promise((r) => setTimeout(() => r((this.salary ?? 0) * 12), 1)); }
  queryYearly(event: CalculatedQueryEvent) { return 'salary ' + event.operator + ' ' + Number(event.value) / 12; }
  greet(): string { return 'Hello, ' + this.fullName; }
  savingsTotal(): number { return 0; }
}
`;

const FILES_TS: Record<string, string> = {
  'PersonEntity.ts': PERSON_ENTITY_TS,
  'Person.ts': `
import { DataClass } from 'dataset-rest';
export default class Person extends DataClass {
  richest() { return this.all().orderBy('salary desc').first(); }
}
`,
  'PersonSelection.ts': `
import { EntitySelection } from 'dataset-rest';
export class PersonSelection extends EntitySelection {
  async payroll() { let t = 0; for await (const p of this) t += Number(p.get('salary') ?? 0); return t; }
}
`,
  'CompanyEntity.ts': `
import { Entity } from 'dataset-rest';
export default class CompanyEntity extends Entity { label() { return '#' + String(this.getKey()) + ' ' + String(this.get('name')); } }
`,
  'DataStore.ts': `
import { Datastore } from 'dataset-rest';
export default class DataStore extends Datastore { hello() { return 'datastore ' + this.name; } }
`,
};

async function fill(ds: DatastoreWithClasses): Promise<void> {
  const acme = ds.Company.new();
  acme.set('name', 'Acme');
  await acme.save();
  for (const [first, last, salary] of [['Anna', 'Smith', 3000], ['Bob', 'Jones', 2000], ['Anna', 'Jones', 1500]] as const) {
    const p = ds.Person.new();
    p.set('firstName', first);
    p.set('lastName', last);
    p.set('salary', salary);
    p.set('employer', acme);
    await p.save();
  }
}

describe('user classes (TypeScript)', () => {
  let tmp: ReturnType<typeof project>;
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url });
    return { status: res.statusCode, body: JSON.parse(res.body) };
  };

  before(async () => {
    tmp = project(FILES_TS);
    ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'data.sqlite')) });
    await fill(ds);
    app = await buildServer(ds, { logLevel: 'silent' });
  });
  after(async () => {
    await app.close();
    await ds.close();
    tmp.remove();
  });

  it('makes new and read entities instances of the entity class, with its methods and the attribute accessors', async () => {
    const p = ds.Person.new() as Entity & { greet(): string; firstName: string; lastName: string };
    assert.ok(p instanceof Entity);
    assert.equal(p.constructor.name, 'PersonEntity');
    p.firstName = 'Zoé';
    p.lastName = 'Martin';
    assert.equal(p.greet(), 'Hello, Zoé Martin');
    const read = (await ds.Person.get(1)) as Entity & { greet(): string; lastName: string };
    assert.equal(read.greet(), 'Hello, Anna Smith');
    assert.equal(read.lastName, 'Smith');
    assert.equal(Object.getPrototypeOf(Object.getPrototypeOf(read)).constructor.name, 'PersonEntity');
    const fromQuery = (await ds.Person.query('lastName = jones').toArray()) as unknown as { greet(): string }[];
    assert.deepEqual(fromQuery.map((e) => e.greet()), ['Hello, Bob Jones', 'Hello, Anna Jones']);
    const company = (await ds.Company.get(1)) as Entity & { label(): string };
    assert.equal(company.label(), '#1 Acme');
  });

  it('gives the dataclass, selection and datastore classes their methods', async () => {
    assert.ok(ds.Person instanceof DataClass);
    const richest = await (ds.Person as DataClass & { richest(): Promise<Entity | null> }).richest();
    assert.equal(richest?.get('firstName'), 'Anna');
    type Payroll = EntitySelection & { payroll(): Promise<number> };
    assert.equal(await (ds.Person.all() as Payroll).payroll(), 6500);
    // selections derived from a selection, and relations, keep the class
    assert.equal(await (ds.Person.all().orderBy('salary').slice(0, 2) as Payroll).payroll(), 3500);
    assert.equal(await (ds.Person.query('salary > 1600').query('lastName = jones') as Payroll).payroll(), 2000);
    const company = await ds.Company.get(1);
    assert.equal(await ((company as Entity).related('staff') as Payroll).payroll(), 6500);
    assert.equal(typeof (ds.Company.all() as Partial<Payroll>).payroll, 'undefined', 'another dataclass keeps the base class');
    assert.ok(ds instanceof Datastore);
    assert.equal((ds as unknown as { hello(): string }).hello(), 'datastore Classes');
  });

  it('reads calculated attributes: a getter, an async getter, get() and the accessor', async () => {
    const p = (await ds.Person.get(2)) as Entity & { fullName: string; yearly: Promise<number> };
    assert.equal(p.fullName, 'Bob Jones');
    assert.equal(p.get('fullName'), 'Bob Jones');
    assert.equal(await p.yearly, 24000);
    assert.equal(await p.get('yearly'), 24000);
  });

  it('writes a calculated attribute through its setter, and saves what it set', async () => {
    const p = ds.Person.new();
    p.set('fullName', 'Carla de la Vega');
    assert.deepEqual(p.touchedAttributes().sort(), ['firstName', 'lastName']);
    await p.save();
    const read = await ds.Person.get(p.getKey());
    assert.equal(read?.get('lastName'), 'de la Vega');
    await read?.drop();
  });

  it('queries and sorts calculated attributes through their query and orderBy functions', async () => {
    const names = async (q: string, ...params: unknown[]) => (await ds.Person.query(q, ...params).toArray()).map((e) => e.get('fullName'));
    assert.deepEqual(await names('fullName = :1', 'anna'), ['Anna Smith', 'Anna Jones']);
    assert.deepEqual(await names('fullName = jones and yearly > 20000'), ['Bob Jones']);
    const sorted = (await ds.Person.all().orderBy('fullName desc').toArray()).map((e) => e.get('fullName'));
    assert.deepEqual(sorted, ['Anna Smith', 'Bob Jones', 'Anna Jones']);
  });

  it('serves calculated attributes over REST: values, $filter and $orderby', async () => {
    const one = await get('/rest/Person(1)');
    assert.equal(one.status, 200);
    assert.equal(one.body.fullName, 'Anna Smith');
    assert.equal(one.body.yearly, 36000);
    const filtered = await get(`/rest/Person?$filter=${encodeURIComponent('"fullName = jones"')}&$orderby=${encodeURIComponent('fullName desc')}`);
    assert.equal(filtered.status, 200, JSON.stringify(filtered.body));
    assert.deepEqual(filtered.body.__ENTITIES.map((e: any) => e.fullName), ['Bob Jones', 'Anna Jones']);
    const byYearly = await get(`/rest/Person?$filter=${encodeURIComponent('"yearly >= 24000"')}&$orderby=fullName&$attributes=fullName`);
    assert.deepEqual(byYearly.body.__ENTITIES.map((e: any) => e.fullName), ['Bob Jones', 'Anna Smith']);
    const catalog = await get('/rest/$catalog/Person');
    const attr = (name: string) => catalog.body.attributes.find((a: any) => a.name === name);
    assert.equal(attr('fullName').readOnly, undefined, 'a setter makes it writable');
    assert.equal(attr('yearly').readOnly, true);
  });
});

describe('user classes (JavaScript, no package.json around the project)', () => {
  it('loads .js modules, default or named exports, as ESM or CommonJS', async () => {
    const tmp = project({
      'PersonEntity.js': `
import { Entity } from 'dataset-rest';
export class PersonEntity extends Entity {
  get fullName() { return this.get('firstName') + ' ' + this.get('lastName'); }
  static orderByFullName({ descending }) { return descending ? 'lastName desc' : 'lastName'; }
  shout() { return String(this.get('lastName')).toUpperCase(); }
}
`,
      'CompanySelection.js': `
const { EntitySelection } = require('dataset-rest');
module.exports = class CompanySelection extends EntitySelection { async names() { return (await this.toArray()).map((c) => c.get('name')); } };
`,
    });
    const ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'data.sqlite')) });
    try {
      await fill(ds);
      const p = (await ds.Person.get(2)) as Entity & { shout(): string };
      assert.equal(p.shout(), 'JONES');
      assert.equal(p.get('fullName'), 'Bob Jones');
      assert.deepEqual((await ds.Person.all().orderBy('fullName').toArray()).map((e) => e.get('lastName')), ['Jones', 'Jones', 'Smith']);
      assert.deepEqual(await (ds.Company.all() as EntitySelection & { names(): Promise<string[]> }).names(), ['Acme']);
    } finally {
      await ds.close();
      tmp.remove();
    }
  });
});

describe('user classes: start-up errors', () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ['a class naming an unknown dataclass', { 'PersonnEntity.ts': 'export default class X {}' },
      /classes[/\\]PersonnEntity\.ts: "PersonnEntity" names no dataclass of the model.*did you mean PersonEntity\?/],
    ['a module that fails to load', { 'PersonEntity.ts': 'export default class PersonEntity extends {' }, /classes[/\\]PersonEntity\.ts: failed to load: .*\(line \d+\)/],
    ['a module that throws when loaded, at its line', { 'Person.ts': 'const x = 1;\nif (x) throw new Error("boom at load");' }, /classes[/\\]Person\.ts:2:\d+: failed to load: boom at load/],
    ['a module without its class', { 'Person.ts': 'export const x = 1;' }, /Person\.ts: must export its class, as default or under the name Person/],
    ['a class not extending its base', { 'PersonSelection.ts': 'export default class PersonSelection {}' }, /PersonSelection\.ts: the class PersonSelection must extend EntitySelection/],
    ['an entity class extending the wrong base', { 'PersonEntity.ts': "import { DataClass } from 'dataset-rest'; export default class PersonEntity extends DataClass {}" }, /must extend Entity/],
    ['an event naming no attribute', { 'PersonEntity.ts': "import { Entity } from 'dataset-rest'; export default class PersonEntity extends Entity { validateSaveSalry() {} }" },
      /validateSaveSalry\(\) names no attribute of Person/],
    ['an attribute-level afterSave', { 'PersonEntity.ts': "import { Entity } from 'dataset-rest'; export default class PersonEntity extends Entity { afterSaveSalary() {} }" },
      /afterSave is an entity-level event/],
    ['a member hiding a storage attribute', { 'PersonEntity.ts': "import { Entity } from 'dataset-rest'; export default class PersonEntity extends Entity { get salary() { return 1; } }" },
      /"salary" is a storage attribute of Person/],
    ['a query function for a storage attribute', { 'PersonEntity.ts': "import { Entity } from 'dataset-rest'; export default class PersonEntity extends Entity { static queryLastName() { return ''; } }" },
      /queryLastName\(\) names Person\.lastName, a storage attribute/],
    ['a class defined twice', { 'Person.ts': 'export default 1', 'Person.js': 'export default 2' }, /the class Person is also defined by/],
    ['@onHttpGet without @exposed', { 'Person.ts': "import { DataClass, onHttpGet } from 'dataset-rest'; export default class Person extends DataClass { @onHttpGet list() { return 1; } }" },
      /Person\.ts: list: @onHttpGet allows GET for an exposed function; mark it @exposed too/],
    ['@exposed on a static method', { 'Person.ts': "import { DataClass, exposed } from 'dataset-rest'; export default class Person extends DataClass { @exposed static list() { return 1; } }" },
      /Person\.ts(:\d+:\d+)?: failed to load: @exposed marks an instance method of a class; list is static/],
    ['an entity class replacing a method of the core', { 'PersonEntity.ts': "import { Entity } from 'dataset-rest'; export default class PersonEntity extends Entity { async save() {} getKey() { return 1; } }" },
      /PersonEntity\.ts: save, getKey are methods of the core's Entity: a class cannot replace them/],
    ['a selection class replacing a method of the core', { 'PersonSelection.ts': "import { EntitySelection } from 'dataset-rest'; export default class PersonSelection extends EntitySelection { slice() { return this; } }" },
      /PersonSelection\.ts: slice is a method of the core's EntitySelection/],
    ['a DataStore class replacing a method of the core', { 'DataStore.ts': "import { Datastore } from 'dataset-rest'; export default class DataStore extends Datastore { async transaction(fn: () => Promise<unknown>) { return fn(); } }" },
      /DataStore\.ts: transaction is a method of the core's Datastore/],
    ['a singleton whose constructor throws', { 'Tools.ts': "import { Singleton } from 'dataset-rest'; export default class Tools extends Singleton { constructor() { super(); throw new Error('no clock'); } }" },
      /Tools\.ts: the constructor of the singleton Tools failed: no clock/],
    ['a singleton named ds', { 'ds.ts': "import { Singleton } from 'dataset-rest'; export default class ds extends Singleton {}" },
      /ds\.ts: a singleton class cannot be named ds/],
    ['a singleton replacing the core\'s ds', { 'Tools.ts': "import { Singleton } from 'dataset-rest'; export default class Tools extends Singleton { get ds() { return null as never; } }" },
      /Tools\.ts: ds is a method of the core's Singleton/],
    ['a singleton with @onHttpGet without @exposed', { 'Tools.ts': "import { Singleton, onHttpGet } from 'dataset-rest'; export default class Tools extends Singleton { @onHttpGet now() { return 1; } }" },
      /Tools\.ts: now: @onHttpGet allows GET for an exposed function; mark it @exposed too/],
    ['a class of another name that extends no Singleton', { 'Tools.ts': 'export default class Tools {}' },
      /Tools\.ts: "Tools" names no dataclass of the model: a class file is .* or a shared singleton class \(one that extends Singleton\)/],
    ['@exposed on a getter', { 'PersonEntity.ts': "import { Entity, exposed } from 'dataset-rest'; export default class PersonEntity extends Entity { @exposed get fullName() { return ''; } }" },
      /PersonEntity\.ts(:\d+:\d+)?: failed to load: @exposed marks an instance method of a class; fullName is a getter/],
  ];
  for (const [what, files, message] of cases) {
    it(`refuses ${what} with a ProjectError naming the file`, async () => {
      const tmp = project(files);
      try {
        await assert.rejects(openProject(tmp.dir), (e: unknown) => {
          assert.ok(e instanceof ProjectError, String(e));
          assert.match(e.message, message);
          assert.ok(e.message.includes(tmp.dir), e.message);
          return true;
        });
      } finally {
        tmp.remove();
      }
    });
  }

  it('loads helper modules from subfolders without taking them for classes', async () => {
    const tmp = project({ 'PersonEntity.ts': "import { Entity } from 'dataset-rest'; import { twice } from './lib/util.ts'; export default class PersonEntity extends Entity { two() { return twice(1); } }" });
    mkdirSync(join(tmp.dir, 'classes', 'lib'));
    writeFileSync(join(tmp.dir, 'classes', 'lib', 'util.ts'), 'export const twice = (n: number) => n * 2;');
    const ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'data.sqlite')) });
    try {
      assert.equal((ds.Person.new() as Entity & { two(): number }).two(), 2);
    } finally {
      await ds.close();
      tmp.remove();
    }
  });
});

describe('the demo classes', () => {
  let demo: Awaited<ReturnType<typeof openDemo>>;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('uses each kind: entity (calculated fullName), dataclass, selection and datastore classes', async () => {
    const { ds } = demo;
    const e = await ds.Employee.all().first();
    assert.equal(e?.constructor.name, 'EmployeeEntity');
    assert.equal(e?.get('fullName'), `${String(e?.get('firstName'))} ${String(e?.get('lastName'))}`);
    const byCode = await (ds.Company as DataClass & { byCode(c: string): Promise<Entity | null> }).byCode('c1007');
    assert.equal(byCode?.get('companyCode'), 'C1007');
    const total = await (ds.Company.query('companyCode = :1', 'C1007') as EntitySelection & { totalRevenues(): Promise<number> }).totalRevenues();
    assert.equal(total, byCode?.get('revenues'));
    assert.deepEqual(await (ds as unknown as { counts(): Promise<Record<string, number>> }).counts(), { City: 20, Company: 40, Employee: 320, AuditLog: 5, User: 3 });
  });

  it('queries and sorts fullName over REST', async () => {
    const res = await demo.request(`/rest/Employee?$filter=${encodeURIComponent('"fullName = :1"')}&$params=${encodeURIComponent('["zoé thomas"]')}&$orderby=fullName&$attributes=fullName`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(res.body.__COUNT > 0);
    assert.ok(res.body.__ENTITIES.every((x: any) => x.fullName === 'Zoé Thomas'));
    const desc = await demo.request('/rest/Employee?$orderby=fullName%20desc&$top=3&$attributes=fullName');
    assert.deepEqual(desc.body.__ENTITIES.map((x: any) => x.fullName), ['Zoé Thomas', 'Zoé Thomas', 'Zoé Thomas']);
  });
});
