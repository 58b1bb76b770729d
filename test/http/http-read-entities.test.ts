// HTTP reads over the seeded demo project, single entities: their shape, value formats (spec
// "Resources and their fields", the research decisions: date-only dates as d!m!yyyy, other dates
// ISO with milliseconds, durations in milliseconds), key forms, deferred relations and following
// them. The other reads are the other http-read-*.test.ts; what they share is http-read-shared.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDemo, type DemoFixture } from '../support/helpers.js';
import { assertEntityHead, cmp, COLLECTION_KEYS, demoReads, DMY, dmy, ENTITY_HEAD, ISO_MS, sorted, type Json } from './http-read-shared.js';

describe('HTTP reads', () => {
  let demo: DemoFixture;
  const { names, employees, get, employee, keyOf, learn } = demoReads(() => demo);

  before(async () => {
    demo = await openDemo();
    await learn();
  });
  after(() => demo.close());

  describe('entities', () => {
    it('answers one entity with __entityModel, __KEY (a string), __TIMESTAMP (ISO, ms, Z) and __STAMP first', async () => {
      const body = await get('/rest/Company(1)');
      assert.deepEqual(Object.keys(body).slice(0, 4), ['__entityModel', ...ENTITY_HEAD]);
      assert.equal(body.__entityModel, 'Company');
      assert.equal(body.__KEY, '1');
      assert.equal(body.ID, 1);
      assertEntityHead(body, 'Company(1)');
    });

    it('gives a Company every exposed attribute, as the catalog lists them', async () => {
      const body = await get('/rest/Company(1)');
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, ...names('Company')]));
    });

    it('gives an Employee every exposed attribute and never the non-exposed secret', async () => {
      const body = await employee(10000);
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, ...names('Employee')]));
      assert.ok(!('secret' in body));
      const list = await get('/rest/Employee?$top=3');
      for (const e of list.__ENTITIES) assert.ok(!('secret' in e));
    });

    it('uses the uuid key as __KEY of an Employee (32 upper-case hex digits)', async () => {
      const body = await employee(10000);
      assert.match(body.__KEY, /^[0-9A-F]{32}$/);
      assert.equal(body.ID, body.__KEY);
      assert.equal(body.__KEY, keyOf(10000));
    });

    it('serializes scalar attributes with their JSON types', async () => {
      const body = await employee(10000);
      const stored = await demo.ds.Employee.get(body.__KEY);
      assert.ok(stored);
      for (const n of ['employeeNumber', 'salary', 'level', 'extension', 'badge']) {
        assert.equal(typeof body[n], 'number', n);
        assert.equal(body[n], stored.get(n), n);
      }
      assert.equal(body.badge, 9_000_000_000, 'long64 stays a JSON number');
      assert.equal(typeof body.isManager, 'boolean');
      assert.equal(body.isManager, stored.get('isManager'));
      assert.equal(typeof body.firstName, 'string');
      assert.equal(body.notes, 'Speaks three languages.\nMentors new hires.');
      assert.equal((await employee(10001)).notes, null, 'an empty value is null');
    });

    it('sends a duration as a number of milliseconds', async () => {
      for (const n of [10000, 10001, 10002]) {
        const body = await employee(n);
        const stored = await demo.ds.Employee.get(body.__KEY);
        const ms: number = body.dailyHours;
        assert.equal(ms, stored?.get('dailyHours'));
        // the seed gives 6 to 9 hours a day
        assert.ok(Number.isInteger(ms) && ms % 3_600_000 === 0, String(ms));
        assert.ok(ms >= 6 * 3_600_000 && ms <= 9 * 3_600_000, String(ms));
      }
    });

    it('sends a date-only attribute as d!m!yyyy without zero padding', async () => {
      const company = await get('/rest/Company(1)');
      assert.match(company.founded, DMY);
      const founded = (await demo.ds.Company.get(1))?.get('founded') as Date;
      assert.equal(company.founded, dmy(founded));
      for (const e of (await get('/rest/Employee?$top=100&$attributes=birthDate')).__ENTITIES) {
        assert.match(e.birthDate, DMY);
        const stored = await demo.ds.Employee.get(e.__KEY);
        assert.equal(e.birthDate, dmy(stored?.get('birthDate') as Date));
      }
    });

    it('sends other dates as ISO 8601 with milliseconds and Z', async () => {
      for (const e of (await get('/rest/Employee?$top=20&$attributes=hiredAt')).__ENTITIES) {
        assert.match(e.hiredAt, ISO_MS);
        const stored = await demo.ds.Employee.get(e.__KEY);
        assert.equal(e.hiredAt, (stored?.get('hiredAt') as Date).toISOString());
      }
    });

    it('sends a null date as null', async () => {
      const c = demo.ds.Company.new();
      c.set('name', 'No founding date');
      c.set('companyCode', 'NODATE');
      await c.save();
      const body = await get('/rest/Company:companyCode(NODATE)/founded,revenues,extra,logo,city');
      assert.deepEqual(
        { founded: body.founded, revenues: body.revenues, extra: body.extra, logo: body.logo, city: body.city },
        { founded: null, revenues: null, extra: null, logo: null, city: null },
      );
      await c.drop();
    });

    it('sends object attributes as plain JSON', async () => {
      const company = await get('/rest/Company(1)');
      const extra: Json = company.extra;
      assert.equal(typeof extra.sector, 'string');
      assert.ok(Array.isArray(extra.tags));
      assert.deepEqual(extra, (await demo.ds.Company.get(1))?.get('extra'));
      const e = await employee(10000);
      assert.deepEqual(e.skills, (await demo.ds.Employee.get(e.__KEY))?.get('skills'));
    });

    it('sends a related entity as a deferred {uri, __KEY}', async () => {
      const company = await get('/rest/Company(1)');
      assert.deepEqual(company.city, { __deferred: { uri: `/rest/City(${company.cityID})`, __KEY: String(company.cityID) } });
      const e = await employee(10000);
      assert.deepEqual(e.employer, { __deferred: { uri: `/rest/Company(${e.employerID})`, __KEY: String(e.employerID) } });
      const worker = employees.find((x) => x.managerID !== null) as Json;
      const w = await get(`/rest/Employee(${worker.__KEY})`);
      assert.deepEqual(w.manager, { __deferred: { uri: `/rest/Employee(${worker.managerID})`, __KEY: worker.managerID } });
    });

    it('sends a missing related entity as null', async () => {
      const noEmployer = await employee(10028);
      assert.equal(noEmployer.employerID, null);
      assert.equal(noEmployer.employer, null);
      const boss = await employee(10000);
      assert.equal(boss.isManager, true);
      assert.equal(boss.manager, null);
    });

    it('sends related entities as a deferred uri ending with ?$expand=<relation>', async () => {
      const company = await get('/rest/Company(1)');
      assert.deepEqual(company.staff, { __deferred: { uri: '/rest/Company(1)/staff?$expand=staff' } });
      const e = await employee(10000);
      assert.deepEqual(e.reports, { __deferred: { uri: `/rest/Employee(${e.__KEY})/reports?$expand=reports` } });
      const city = await get('/rest/City(1)');
      assert.deepEqual(city.companies, { __deferred: { uri: '/rest/City(1)/companies?$expand=companies' } });
    });

    it('sends an image as a deferred uri with $imageformat, $version and $expand, and image: true', async () => {
      const company = await get('/rest/Company(1)');
      assert.deepEqual(Object.keys(company.logo), ['__deferred']);
      assert.deepEqual(sorted(Object.keys(company.logo.__deferred)), ['image', 'uri']);
      assert.equal(company.logo.__deferred.image, true);
      const uri = new URL(company.logo.__deferred.uri, 'http://x');
      assert.equal(uri.pathname, '/rest/Company(1)/logo');
      assert.equal(uri.searchParams.get('$expand'), 'logo');
      assert.ok(uri.searchParams.has('$imageformat'));
      assert.match(uri.searchParams.get('$version') ?? '', /^\d+$/);
      const e = await employee(10000);
      assert.equal(e.photo.__deferred.image, true);
      assert.ok(e.photo.__deferred.uri.startsWith(`/rest/Employee(${e.__KEY})/photo?`));
    });

    it('sends an empty image as null', async () => {
      assert.equal((await get('/rest/Company(13)')).logo, null);
      assert.equal((await employee(10010)).photo, null);
    });

    it('sends a blob as a deferred uri without image: true, and an empty blob as null', async () => {
      const e = await employee(10000);
      assert.deepEqual(Object.keys(e.resume), ['__deferred']);
      assert.ok(!('image' in e.resume.__deferred));
      const uri = new URL(e.resume.__deferred.uri, 'http://x');
      assert.equal(uri.pathname, `/rest/Employee(${e.__KEY})/resume`);
      assert.equal(uri.searchParams.get('$expand'), 'resume');
      assert.equal((await employee(10003)).resume, null);
    });

    it('sends the values of alias attributes (employerName, employerCity, cityName)', async () => {
      for (const n of [10000, 10001, 10002, 10003, 10004]) {
        const e = await employee(n);
        const company = await get(`/rest/Company(${e.employerID})`);
        const city = await get(`/rest/City(${company.cityID})`);
        assert.equal(e.employerName, company.name, `${n}.employerName`);
        assert.equal(e.employerCity, city.name, `${n}.employerCity`);
        assert.equal(company.cityName, city.name);
      }
    });

    it('sends null aliases when the path has no entity', async () => {
      const e = await employee(10028);
      assert.equal(e.employerName, null);
      assert.equal(e.employerCity, null);
    });

    it('sends alias values in collections too', async () => {
      const body = await get('/rest/Employee?$top=30&$attributes=employerID,employerName,employerCity');
      const companies = new Map<number, Json>();
      for (const c of (await get('/rest/Company?$top=100&$attributes=name,cityName')).__ENTITIES) companies.set(Number(c.__KEY), c);
      for (const e of body.__ENTITIES) {
        const c = e.employerID === null ? undefined : companies.get(e.employerID);
        assert.equal(e.employerName, c?.name ?? null);
        assert.equal(e.employerCity, c?.cityName ?? null);
      }
    });

    describe('key forms', () => {
      const companyForms = ['/rest/Company(1)', '/rest/Company[1]', '/rest/Company("1")', "/rest/Company('1')", '/rest/Company(%221%22)', '/rest/Company(1)/'];
      for (const url of companyForms) {
        it(`finds Company 1 at ${url}`, async () => {
          const body = await get(url);
          assert.equal(body.__entityModel, 'Company');
          assert.equal(body.__KEY, '1');
          assert.equal(body.name, 'Acme Industries');
        });
      }

      it('finds an Employee by its uuid key in (), [] and quoted forms', async () => {
        const key = keyOf(10000);
        for (const url of [`/rest/Employee(${key})`, `/rest/Employee[${key}]`, `/rest/Employee("${key}")`, `/rest/Employee(%22${key}%22)`]) {
          const body = await get(url);
          assert.equal(body.__KEY, key, url);
          assert.equal(body.employeeNumber, 10000, url);
        }
      });

      const attributeForms = [
        '/rest/Company:companyCode(C1000)',
        '/rest/Company:companyCode("C1000")',
        "/rest/Company:companyCode('C1000')",
        '/rest/Company:companyCode(%22C1000%22)',
      ];
      for (const url of attributeForms) {
        it(`finds Company 1 by its unique companyCode at ${url}`, async () => {
          const body = await get(url);
          assert.equal(body.__entityModel, 'Company');
          assert.equal(body.__KEY, '1');
          assert.equal(body.companyCode, 'C1000');
        });
      }

      it('answers the same entity by key and by unique attribute', async () => {
        const byKey = await get('/rest/Company(8)');
        const byCode = await get(`/rest/Company:companyCode(${byKey.companyCode})`);
        assert.deepEqual(byCode, byKey);
        const e = await get(`/rest/Employee(${keyOf(10042)})`);
        assert.deepEqual(await employee(10042), e);
      });
    });

    describe('attribute list: /{attr1,attr2}', () => {
      const cases = [
        { url: '/rest/Company(1)/name,city', keys: ['__entityModel', ...ENTITY_HEAD, 'name', 'city'] },
        { url: '/rest/Company(1)/name', keys: ['__entityModel', ...ENTITY_HEAD, 'name'] },
        { url: '/rest/Company:companyCode(C1000)/name,city', keys: ['__entityModel', ...ENTITY_HEAD, 'name', 'city'] },
        { url: '/rest/Company[1]/name,cityName,staff', keys: ['__entityModel', ...ENTITY_HEAD, 'name', 'cityName', 'staff'] },
      ];
      for (const { url, keys } of cases) {
        it(`limits the entity to ${keys.slice(4).join(', ')} at ${url}`, async () => {
          const body = await get(url);
          assert.deepEqual(sorted(Object.keys(body)), sorted(keys));
          if ('city' in body) assert.deepEqual(body.city, { __deferred: { uri: '/rest/City(1)', __KEY: '1' } });
          if ('staff' in body) assert.deepEqual(body.staff, { __deferred: { uri: '/rest/Company(1)/staff?$expand=staff' } });
        });
      }

      it('limits every entity of a collection: /rest/Company/name,city', async () => {
        const body = await get('/rest/Company/name,city?$top=5');
        assert.equal(body.__SENT, 5);
        for (const e of body.__ENTITIES) assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, 'name', 'city']));
      });
    });

    describe('following deferred uris', () => {
      it('follows /rest/Company(1)/staff?$expand=staff to the collection of its Employees', async () => {
        const company = await get('/rest/Company(1)');
        const body = await get(company.staff.__deferred.uri);
        const expected = employees.filter((e) => e.employerID === 1).map((e) => e.__KEY);
        assert.ok(expected.length > 0);
        assert.deepEqual(sorted(Object.keys(body)), sorted(COLLECTION_KEYS));
        assert.equal(body.__entityModel, 'Employee');
        assert.equal(body.__COUNT, expected.length);
        assert.equal(body.__SENT, expected.length);
        assert.deepEqual(sorted(body.__ENTITIES.map((e: Json) => e.__KEY)), sorted(expected));
        for (const e of body.__ENTITIES) {
          assert.deepEqual(e.employer.__deferred, { uri: '/rest/Company(1)', __KEY: '1' });
          // a followed relation lists full entities, with their own deferred relations
          assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, ...names('Employee')]));
        }
      });

      it('gives every company a staff collection whose __COUNT is its number of employees', async () => {
        for (const id of [1, 2, 17, 40]) {
          const body = await get(`/rest/Company(${id})/staff?$expand=staff&$attributes=ID`);
          assert.equal(body.__COUNT, employees.filter((e) => e.employerID === id).length, `Company(${id})`);
        }
      });

      it('pages and sorts a followed relation', async () => {
        const body = await get('/rest/Company(1)/staff?$expand=staff&$orderby=lastName%20desc&$top=2&$skip=1&$attributes=lastName');
        assert.equal(body.__FIRST, 1);
        assert.equal(body.__SENT, 2);
        assert.equal(body.__COUNT, employees.filter((e) => e.employerID === 1).length);
        assert.ok(cmp(body.__ENTITIES[0].lastName, body.__ENTITIES[1].lastName) >= 0);
      });

      it('follows /rest/Employee(<key>)/employer to the Company entity', async () => {
        const e = await employee(10000);
        const body = await get(`/rest/Employee(${e.__KEY})/employer`);
        assert.equal(body.__entityModel, 'Company');
        assert.equal(body.__KEY, e.employer.__deferred.__KEY);
        assert.deepEqual(body, await get(e.employer.__deferred.uri));
      });

      it('follows a related entity deferred uri (manager) to the entity', async () => {
        const worker = employees.find((x) => x.managerID !== null) as Json;
        const w = await get(`/rest/Employee(${worker.__KEY})`);
        const boss = await get(w.manager.__deferred.uri);
        assert.equal(boss.__entityModel, 'Employee');
        assert.equal(boss.__KEY, worker.managerID);
        assert.equal(boss.isManager, true);
      });

      it('follows a self relation (reports) to the employees managed', async () => {
        const boss = await employee(10000);
        const body = await get(boss.reports.__deferred.uri);
        const expected = employees.filter((e) => e.managerID === boss.__KEY).map((e) => e.__KEY);
        assert.equal(body.__COUNT, expected.length);
        assert.deepEqual(sorted(body.__ENTITIES.map((e: Json) => e.__KEY)), sorted(expected));
      });

      it('follows City(1)/companies to the companies of that city', async () => {
        const body = await get('/rest/City(1)/companies?$expand=companies&$attributes=cityID');
        assert.equal(body.__entityModel, 'Company');
        assert.ok(body.__COUNT > 0);
        for (const c of body.__ENTITIES) assert.equal(c.cityID, 1);
      });
    });
  });

});
