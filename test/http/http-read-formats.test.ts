// HTTP reads over the seeded demo project in other forms: $asArray (a bare array) and
// $format=looker (under roles.json too). The other reads are the other http-read-*.test.ts; what
// they share is http-read-shared.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { join } from 'node:path';
import { DEMO_DIR, openDemo, type DemoFixture } from '../support/helpers.js';
import { coreOf } from '../../src/datastore/datastore.js';
import { readingThrough } from '../../src/datastore/access/access.js';
import { countRelated } from '../../src/datastore/reads/fetch.js';
import { resolveProjection } from '../../src/datastore/reads/projection.js';
import { BANG_DATE, demoReads, sorted, type Json } from './http-read-shared.js';

describe('HTTP reads', () => {
  let demo: DemoFixture;
  const { names, ofKind, get, learn } = demoReads(() => demo);

  before(async () => {
    demo = await openDemo();
    await learn();
  });
  after(() => demo.close());

  describe('$asArray', () => {
    it('answers a bare array, without the collection envelope', async () => {
      const body = (await demo.request('/rest/Company?$top=3&$asArray=true')).body;
      assert.ok(Array.isArray(body));
      assert.equal(body.length, 3);
    });

    it('gives __KEY as the raw key value and __STAMP, without __TIMESTAMP or __entityModel', async () => {
      const body = (await demo.request('/rest/Company?$top=3&$asArray=true')).body;
      body.forEach((c: Json, i: number) => {
        assert.equal(c.__KEY, i + 1, 'a number for a long key');
        assert.equal(c.ID, i + 1);
        assert.ok(Number.isInteger(c.__STAMP));
        assert.ok(!('__TIMESTAMP' in c));
        assert.ok(!('__entityModel' in c));
      });
      const employeesArray = (await demo.request('/rest/Employee?$top=2&$asArray=true')).body;
      for (const e of employeesArray) {
        assert.equal(e.__KEY, e.ID, 'a uuid key as its string');
        assert.match(e.__KEY, /^[0-9A-F]{32}$/);
      }
    });

    it('reads a 1→N relation as {"__COUNT": n}, the number of related entities', async () => {
      const companies = (await demo.request('/rest/Company?$asArray=true&$orderby=ID')).body;
      assert.ok(companies.length > 3);
      let some = 0;
      for (const c of companies) {
        const staff = await demo.ds.Employee.query('employer.ID = :1', c.ID).length;
        assert.deepEqual(c.staff, { __COUNT: staff }, `Company(${c.ID}).staff`);
        if (staff > 0) some++;
      }
      assert.ok(some > 0, 'companies with staff');
      const empty = demo.ds.Company.new();
      empty.set('name', 'Nobody Works Here');
      await empty.save();
      try {
        const [alone] = (await demo.request(`/rest/Company(${String(empty.getKey())})?$asArray=true`)).body;
        assert.deepEqual(alone.staff, { __COUNT: 0 });
      } finally {
        await empty.drop();
      }
      const one = (await demo.request('/rest/Company(1)?$asArray=true')).body;
      assert.deepEqual(one[0].staff, { __COUNT: await demo.ds.Employee.query('employer.ID = 1').length });
    });

    it('leaves out N→1 relations and aliases that lead to entities', async () => {
      const companies = (await demo.request('/rest/Company?$top=3&$asArray=true')).body;
      const employeesArray = (await demo.request('/rest/Employee?$top=3&$asArray=true')).body;
      for (const [list, dc] of [[companies, 'Company'], [employeesArray, 'Employee']] as const) {
        for (const e of list) {
          for (const rel of ofKind(dc, 'relatedEntity')) assert.ok(!(rel in e), `${dc}.${rel} is left out`);
          for (const rel of ofKind(dc, 'relatedEntities')) assert.ok(typeof e[rel]?.__COUNT === 'number', `${dc}.${rel} is counted`);
        }
      }
      for (const e of employeesArray) assert.ok(!('colleagues' in e), 'an alias leading to entities is left out');
      const cities = (await demo.request('/rest/City?$top=3&$asArray=true')).body;
      for (const c of cities) assert.ok(!('workers' in c) && typeof c.companies.__COUNT === 'number');
    });

    it('counts a 1→N relation only where the answer shows it ($attributes, the /a,b list)', async () => {
      const named = (await demo.request('/rest/Company?$top=2&$attributes=name&$asArray=true')).body;
      for (const c of named) assert.deepEqual(sorted(Object.keys(c)), ['__KEY', '__STAMP', 'name']);
      for (const url of ['/rest/Company?$top=2&$attributes=name,staff&$asArray=true', '/rest/Company/name,staff?$top=2&$asArray=true']) {
        const listed = (await demo.request(url)).body;
        for (const c of listed) {
          assert.deepEqual(sorted(Object.keys(c)), ['__KEY', '__STAMP', 'name', 'staff'], url);
          assert.equal(c.staff.__COUNT, await demo.ds.Employee.query('employer.ID = :1', c.__KEY).length, url);
        }
      }
    });

    it('counts the related entities of a whole page with one grouped statement per relation, reading no related row', async () => {
      const core = coreOf(demo.ds);
      const statements: string[] = [];
      const reader = core.root.reader;
      const counting = Object.create(reader, {
        all: { value: (sql: string, params?: readonly unknown[]) => (statements.push(sql), reader.all(sql, params)) },
      }) as typeof reader;
      const access = readingThrough(core.root, counting);
      const page = await demo.ds.Company.all().orderBy('ID asc').slice(0, 8).toArray();
      const fetched = page.map((entity) => ({ entity, related: new Map<string, unknown>() }));
      await countRelated(fetched, resolveProjection(demo.ds.Company.model, {}, () => true), access);
      assert.equal(statements.length, 1, statements.join('\n'));
      assert.match(statements[0], /COUNT\(\*\)/);
      assert.match(statements[0], /GROUP BY/);
      for (const f of fetched) assert.equal(f.related.get('staff'), await demo.ds.Employee.query('employer.ID = :1', f.entity.getKey()).length);
    });

    it('sends date-only dates as !!yyyy-mm-dd!! and the other attributes as in the default form', async () => {
      const array = (await demo.request('/rest/Employee?$top=10&$asArray=true')).body;
      const envelope = await get('/rest/Employee?$top=10');
      const relations = new Set(ofKind('Employee', 'relatedEntity', 'relatedEntities'));
      array.forEach((a: Json, i: number) => {
        const e = envelope.__ENTITIES[i];
        assert.equal(String(a.__KEY), e.__KEY);
        assert.equal(a.__STAMP, e.__STAMP);
        assert.match(a.birthDate, BANG_DATE);
        const [d, m, y] = e.birthDate.split('!');
        assert.equal(a.birthDate, `!!${y}-${m.padStart(2, '0')}-${d.padStart(2, '0')}!!`);
        for (const n of names('Employee')) {
          if (relations.has(n) || n === 'birthDate' || !(n in a)) continue;
          assert.deepEqual(a[n], e[n], n);
        }
        for (const n of ['ID', 'lastName', 'salary', 'hiredAt', 'dailyHours', 'skills', 'employerName']) assert.ok(n in a, n);
      });
      const founded = (await demo.request('/rest/Company?$top=1&$asArray=true')).body[0].founded;
      const date = (await demo.ds.Company.get(1))?.get('founded') as Date;
      assert.equal(founded, `!!${date.toISOString().slice(0, 10)}!!`);
    });

    it('pages, sorts and limits attributes like the envelope form', async () => {
      const array = (await demo.request('/rest/Company?$skip=5&$top=4&$orderby=name%20desc&$attributes=name&$asArray=true')).body;
      const envelope = await get('/rest/Company?$skip=5&$top=4&$orderby=name%20desc&$attributes=name');
      assert.deepEqual(array.map((c: Json) => String(c.__KEY)), envelope.__ENTITIES.map((e: Json) => e.__KEY));
      for (const c of array) assert.deepEqual(sorted(Object.keys(c)), ['__KEY', '__STAMP', 'name']);
    });

    it('answers the envelope for $asArray=false', async () => {
      const body = await get('/rest/Company?$top=1&$asArray=false');
      assert.equal(body.__entityModel, 'Company');
    });
  });
  describe('$format=looker', () => {
    const N = { conceptType: 'METRIC', semanticGroup: 'NUMERIC', semanticType: 'NUMBER' };
    const T = { conceptType: 'DIMENSION', semanticGroup: 'TEXT', semanticType: 'TEXT' };
    const field = (name: string) => (looker: Json) => looker.schema.find((f: Json) => f.name === name);

    it('reads no related entity for a table: the relations and value lists it has no column for are not fetched', async () => {
      const storage = coreOf(demo.ds).storage as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
      const statements: string[] = [];
      const original = { snapshot: storage.snapshot, get: storage.get, all: storage.all, column: storage.column };
      for (const m of ['get', 'all', 'column'] as const) storage[m] = function (this: unknown, ...a: unknown[]) { statements.push(String(a[0])); return original[m].apply(this, a); };
      storage.snapshot = async function (this: unknown) {
        const snap = (await original.snapshot.call(this)) as Record<string, (...a: unknown[]) => Promise<unknown>>;
        for (const m of ['get', 'all', 'column']) {
          const read = snap[m].bind(snap);
          snap[m] = (...a: unknown[]) => { statements.push(String(a[0])); return read(...a); };
        }
        return snap;
      };
      try {
        // Company has staff (1→N), city (N→1) and staffNames (a list through staff): none is a column
        const res = await demo.request('/rest/Company?$format=looker&$top=20');
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.deepEqual(statements.filter((sql) => /"Employee"/.test(sql)), []);
      } finally {
        Object.assign(storage, original);
      }
    });

    it('answers a page in Looker Studio\'s shape: __COUNT, __FIRST, schema, rows of values, filtersApplied', async () => {
      const res = await demo.request('/rest/Company?$format=looker&$top=3&$orderby=ID');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(Object.keys(res.body), ['__COUNT', '__FIRST', 'schema', 'rows', 'filtersApplied']);
      assert.equal(res.body.__COUNT, await demo.ds.Company.all().length);
      assert.equal(res.body.__FIRST, 0);
      assert.equal(res.body.filtersApplied, false);
      assert.deepEqual(field('ID')(res.body), { name: 'ID', dataType: 'NUMBER', semantics: N });
      assert.deepEqual(field('name')(res.body), { name: 'name', dataType: 'STRING', semantics: T });
      const envelope = await get('/rest/Company?$top=3&$orderby=ID');
      assert.equal(res.body.rows.length, 3);
      res.body.rows.forEach((row: Json, i: number) => {
        assert.deepEqual(Object.keys(row), ['values']);
        assert.equal(row.values.length, res.body.schema.length);
        for (const n of ['ID', 'name', 'revenues', 'companyCode', 'cityName']) {
          assert.deepEqual(row.values[res.body.schema.findIndex((f: Json) => f.name === n)], envelope.__ENTITIES[i][n], n);
        }
      });
    });

    it('types numbers as NUMBER metrics, booleans as BOOLEAN, dates as YEAR_MONTH_DAY or YEAR_MONTH_DAY_SECOND strings, the rest as TEXT', async () => {
      const res = (await demo.request('/rest/Employee?$format=looker&$orderby=employeeNumber&$top=5')).body;
      for (const n of ['employeeNumber', 'salary', 'level', 'extension', 'badge', 'dailyHours']) assert.deepEqual(field(n)(res), { name: n, dataType: 'NUMBER', semantics: N }, n);
      for (const n of ['ID', 'lastName', 'notes', 'skills', 'employerName', 'fullName']) assert.deepEqual(field(n)(res), { name: n, dataType: 'STRING', semantics: T }, n);
      assert.deepEqual(field('isManager')(res), { name: 'isManager', dataType: 'BOOLEAN', semantics: { conceptType: 'DIMENSION', semanticGroup: 'BOOLEAN', semanticType: 'BOOLEAN' } });
      assert.deepEqual(field('birthDate')(res).semantics, { conceptType: 'DIMENSION', semanticGroup: 'DATETIME', semanticType: 'YEAR_MONTH_DAY' });
      assert.deepEqual(field('hiredAt')(res).semantics, { conceptType: 'DIMENSION', semanticGroup: 'DATETIME', semanticType: 'YEAR_MONTH_DAY_SECOND' });
      const names = res.schema.map((f: Json) => f.name);
      for (const n of ['photo', 'resume', 'employer', 'manager', 'reports', 'colleagues', 'secret']) assert.ok(!names.includes(n), `${n} is no column`);
      const at = (n: string) => names.indexOf(n);
      const first = await demo.ds.Employee.all().orderBy('employeeNumber').first();
      const row = res.rows[0].values;
      const birth = first?.get('birthDate') as Date | null;
      const hired = first?.get('hiredAt') as Date | null;
      assert.equal(row[at('birthDate')], birth ? birth.toISOString().slice(0, 10).replaceAll('-', '') : null);
      assert.equal(row[at('hiredAt')], hired ? hired.toISOString().slice(0, 19).replace(/[-T:]/g, '') : null);
      if (row[at('hiredAt')] !== null) assert.match(row[at('hiredAt')], /^\d{14}$/);
      assert.equal(typeof row[at('isManager')] === 'boolean' || row[at('isManager')] === null, true);
      assert.equal(row[at('skills')], first?.get('skills') === null ? null : JSON.stringify(first?.get('skills')), 'an object as its JSON text');
      assert.equal(row[at('fullName')], await first?.get('fullName'));
    });

    it('pages, filters, sorts and limits the columns like the JSON answer ($skip as __FIRST, $attributes in their model order)', async () => {
      const res = (await demo.request('/rest/Company?$format=looker&$filter="revenues > 0"&$orderby=name&$skip=2&$top=2&$attributes=revenues,name')).body;
      const envelope = await get('/rest/Company?$filter="revenues > 0"&$orderby=name&$skip=2&$top=2');
      assert.equal(res.__COUNT, envelope.__COUNT);
      assert.equal(res.__FIRST, 2);
      assert.deepEqual(res.schema.map((f: Json) => f.name), ['name', 'revenues']);
      assert.deepEqual(res.rows.map((r: Json) => r.values), envelope.__ENTITIES.map((e: Json) => [e.name, e.revenues]));
    });

    it('answers a relation\'s entities and a stored set in the same shape, and $format=json as usual', async () => {
      const staff = (await demo.request('/rest/Company(1)/staff?$format=looker&$attributes=lastName')).body;
      assert.equal(staff.__COUNT, await demo.ds.Employee.query('employer.ID = 1').length);
      assert.deepEqual(staff.schema.map((f: Json) => f.name), ['lastName']);
      const set = (await demo.request('/rest/Company?$method=entityset&$filter="ID < 4"')).body.__ENTITYSET;
      const page = (await demo.request(`${set}?$format=looker&$attributes=ID`)).body;
      assert.deepEqual(page.rows.map((r: Json) => r.values), [[1], [2], [3]]);
      assert.equal(page.__COUNT, 3);
      assert.equal((await demo.request('/rest/Company?$format=json&$top=1')).body.__entityModel, 'Company');
      assert.equal((await demo.request('/rest/Company?$format=LOOKER&$top=1')).body.filtersApplied, false);
    });

    it('refuses what it cannot answer in that shape, naming why (400)', async () => {
      const set = (await demo.request('/rest/Company?$method=entityset')).body.__ENTITYSET;
      const cases: [string, number, RegExp][] = [
        ['/rest/Company?$format=lookr', 7007, /\$format must be json or looker; got 'lookr', did you mean 'looker'\?/],
        ['/rest/Company(1)?$format=looker', 7007, /\$format=looker answers a page of entities .* this request is answered in JSON only/],
        ['/rest/$catalog?$format=looker', 7007, /answered in JSON only/],
        ['/rest/Company/name?$distinct=true&$format=looker', 7007, /answered in JSON only/],
        ['/rest/Company?$method=entityset&$format=looker', 7007, /answered in JSON only/],
        ['/rest/Company?$format=looker&$asArray=true', 7007, /\$asArray shapes 4D's JSON answer/],
        ['/rest/Company?$format=looker&$expand=city', 7007, /\$expand shapes 4D's JSON answer/],
        [`${set}?$format=looker&$method=entityset`, 7007, /\$method=entityset answers the new set in JSON/],
        ['/rest/Company?$format=looker&$attributes=name,city.name', 7007, /'city' is a relation sent inline; name the values you want/],
      ];
      for (const [url, errCode, message] of cases) {
        const res = await demo.request(url);
        assert.equal(res.status, 400, `${url}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.__ERROR[0].errCode, errCode, url);
        assert.match(res.body.__ERROR[0].message, message, url);
      }
      const call = await demo.request('/rest/$catalog/earningAtLeast?$format=looker', 'POST', [0]);
      assert.equal(call.status, 400);
      assert.match(call.body.__ERROR[0].message, /answered in JSON only/);
    });
  });

  describe('$format=looker under roles.json', () => {
    let guarded: DemoFixture;
    before(async () => {
      guarded = await openDemo({ roles: join(DEMO_DIR, 'roles.json') });
    });
    after(() => guarded.close());

    it('leaves out the columns the session may not read (a guest: Employee.salary)', async () => {
      const res = await guarded.request('/rest/Employee?$format=looker&$top=2');
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const names = res.body.schema.map((f: Json) => f.name);
      assert.ok(names.includes('lastName') && !names.includes('salary'));
    });
  });
});
