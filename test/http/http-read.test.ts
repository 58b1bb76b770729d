// HTTP scenarios for reading data: collections (envelope, paging, order), single entities (shape,
// value formats, key forms, deferred relations and following them), $attributes, $expand, alias
// attributes and $asArray, over the seeded demo project. Value formats follow the spec ("Resources
// and their fields") and the research decisions: date-only dates as d!m!yyyy, other dates ISO with
// milliseconds, durations in milliseconds, $asArray as a bare array.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { join } from 'node:path';
import { DEMO_DIR, openDemo, type DemoFixture } from '../support/helpers.js';
import { fold } from '../../src/util/fold.js';
import { readingThrough } from '../../src/datastore/access/access.js';
import { coreOf } from '../../src/datastore/datastore.js';
import { countRelated } from '../../src/datastore/reads/fetch.js';
import { resolveProjection } from '../../src/datastore/reads/projection.js';

type Json = Record<string, any>;

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** 4D's date-only form: day!month!year, no zero padding */
const DMY = /^([1-9]|[12]\d|3[01])!([1-9]|1[0-2])!\d{4}$/;
/** the $asArray date form */
const BANG_DATE = /^!!\d{4}-\d{2}-\d{2}!!$/;
const ENTITY_HEAD = ['__KEY', '__TIMESTAMP', '__STAMP'];
const COLLECTION_KEYS = ['__entityModel', '__GlobalStamp', '__COUNT', '__SENT', '__FIRST', '__ENTITIES'];
const INLINE_SELECTION_KEYS = ['__ENTITYSET', '__GlobalStamp', '__COUNT', '__FIRST', '__ENTITIES', '__SENT'];

const dmy = (d: Date) => `${d.getUTCDate()}!${d.getUTCMonth() + 1}!${d.getUTCFullYear()}`;
const sorted = (list: Iterable<string>) => [...list].sort();

/** Code-point order (the order of SQLite's default collation for these values). */
/** 4D's order: text without regard to case or accents (by its folded form), numbers as numbers. */
function cmp(a: string | number, b: string | number): number {
  const [x, y] = typeof a === 'string' && typeof b === 'string' ? [fold(a), fold(b)] : [a, b];
  return x < y ? -1 : x > y ? 1 : 0;
}

function assertEntityHead(e: Json, where: string): void {
  assert.equal(typeof e.__KEY, 'string', `${where}: __KEY is a string`);
  assert.match(e.__TIMESTAMP, ISO_MS, `${where}: __TIMESTAMP is ISO 8601 with ms and Z`);
  assert.ok(Number.isInteger(e.__STAMP) && e.__STAMP >= 0, `${where}: __STAMP is a non-negative integer`);
}

function assertInlineSelection(sel: Json, where: string): void {
  assert.deepEqual(sorted(Object.keys(sel)), sorted(INLINE_SELECTION_KEYS), `${where}: inline selection keys`);
  assert.ok(!('__entityModel' in sel));
  assert.equal(sel.__FIRST, 0);
  assert.equal(sel.__SENT, sel.__ENTITIES.length);
  assert.ok(sel.__COUNT >= sel.__SENT);
  assert.equal(typeof sel.__GlobalStamp, 'number');
}

describe('HTTP reads', () => {
  let demo: DemoFixture;
  /** exposed attribute names per dataclass, from the catalog */
  const attributes = new Map<string, Json[]>();
  const names = (dc: string) => (attributes.get(dc) as Json[]).map((a) => a.name);
  const ofKind = (dc: string, ...kinds: string[]) => (attributes.get(dc) as Json[]).filter((a) => kinds.includes(a.kind)).map((a) => a.name);
  /** the 320 employees with their key, number and employer key */
  let employees: Json[];

  const get = async (url: string): Promise<Json> => {
    const res = await demo.request(url);
    assert.equal(res.status, 200, `${url} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    return res.body;
  };
  const employee = (n: number) => get(`/rest/Employee:employeeNumber(${n})`);
  const keyOf = (n: number) => {
    const e = employees.find((x) => x.employeeNumber === n);
    assert.ok(e, `employee ${n}`);
    return e.__KEY as string;
  };

  before(async () => {
    demo = await openDemo();
    const all = await get('/rest/$catalog/$all');
    for (const d of all.dataClasses) attributes.set(d.name, d.attributes);
    const list = await get('/rest/Employee?$top=1000&$attributes=employeeNumber,employerID,managerID');
    employees = list.__ENTITIES;
  });
  after(() => demo.close());

  describe('collections: GET /rest/{dataClass}', () => {
    it('answers the collection envelope with exactly __entityModel, __GlobalStamp, __COUNT, __SENT, __FIRST, __ENTITIES', async () => {
      const body = await get('/rest/Employee');
      assert.deepEqual(sorted(Object.keys(body)), sorted(COLLECTION_KEYS));
      assert.equal(body.__entityModel, 'Employee');
      assert.ok(Number.isInteger(body.__GlobalStamp) && body.__GlobalStamp > 0, '__GlobalStamp counts the seed saves');
      assert.equal(body.__COUNT, 320);
      assert.equal(body.__FIRST, 0);
      assert.ok(Array.isArray(body.__ENTITIES));
    });

    it('sends the first 100 entities by default', async () => {
      const body = await get('/rest/Employee');
      assert.equal(body.__SENT, 100);
      assert.equal(body.__ENTITIES.length, 100);
    });

    it('sends entities without __entityModel, each with __KEY, __TIMESTAMP and __STAMP', async () => {
      const body = await get('/rest/Employee?$top=5');
      for (const e of body.__ENTITIES) {
        assert.ok(!('__entityModel' in e));
        assertEntityHead(e, 'collection entity');
      }
    });

    it('counts every entity in __COUNT, whatever the page', async () => {
      for (const [url, count] of [['/rest/Company', 40], ['/rest/City', 20], ['/rest/Employee?$top=3', 320], ['/rest/Company?$skip=39', 40]] as const) {
        assert.equal((await get(url)).__COUNT, count, url);
      }
    });

    const paging = [
      { url: '/rest/Company?$top=5', first: 0, keys: [1, 2, 3, 4, 5] },
      { url: '/rest/Company?$limit=5', first: 0, keys: [1, 2, 3, 4, 5] },
      { url: '/rest/Company?$skip=10&$top=3', first: 10, keys: [11, 12, 13] },
      { url: '/rest/Company?$skip=10&$limit=3', first: 10, keys: [11, 12, 13] },
      { url: '/rest/Company?$top=3&$skip=10', first: 10, keys: [11, 12, 13] },
      { url: '/rest/Company?$skip=37', first: 37, keys: [38, 39, 40] },
      { url: '/rest/Company?$skip=40', first: 40, keys: [] },
      { url: '/rest/Company?$skip=500&$top=10', first: 500, keys: [] },
      { url: '/rest/Company/?$top=2', first: 0, keys: [1, 2] },
      { url: '/rest/City?$top=100', first: 0, keys: Array.from({ length: 20 }, (_, i) => i + 1) },
    ];
    for (const { url, first, keys } of paging) {
      it(`pages ${url}: __FIRST ${first}, keys [${keys.length > 5 ? `${keys[0]}…${keys.at(-1)}` : keys.join(',')}]`, async () => {
        const body = await get(url);
        assert.equal(body.__FIRST, first);
        assert.equal(body.__SENT, keys.length);
        assert.deepEqual(body.__ENTITIES.map((e: Json) => e.__KEY), keys.map(String));
      });
    }

    it('applies $top and $skip to Employee: $skip=300 leaves 20', async () => {
      const body = await get('/rest/Employee?$skip=300');
      assert.equal(body.__FIRST, 300);
      assert.equal(body.__SENT, 20);
      const big = await get('/rest/Employee?$top=250');
      assert.equal(big.__SENT, 250);
    });

    it('orders by primary key when no $orderby is given', async () => {
      const body = await get('/rest/Employee?$top=320&$attributes=ID');
      const keys = body.__ENTITIES.map((e: Json) => e.__KEY);
      for (let i = 1; i < keys.length; i++) assert.ok(cmp(keys[i - 1], keys[i]) < 0, `${keys[i - 1]} < ${keys[i]}`);
    });

    it('gives consecutive pages that neither overlap nor leave gaps', async () => {
      const whole = (await get('/rest/Employee?$top=150&$attributes=ID')).__ENTITIES.map((e: Json) => e.__KEY);
      const p1 = (await get('/rest/Employee?$top=50&$attributes=ID')).__ENTITIES.map((e: Json) => e.__KEY);
      const p2 = (await get('/rest/Employee?$skip=50&$top=50&$attributes=ID')).__ENTITIES.map((e: Json) => e.__KEY);
      const p3 = (await get('/rest/Employee?$skip=100&$top=50&$attributes=ID')).__ENTITIES.map((e: Json) => e.__KEY);
      assert.equal(new Set([...p1, ...p2, ...p3]).size, 150);
      assert.deepEqual([...p1, ...p2, ...p3], whole);
    });

    it('answers the same page twice in the same order', async () => {
      const a = await get('/rest/Employee?$skip=17&$top=40&$attributes=ID');
      const b = await get('/rest/Employee?$skip=17&$top=40&$attributes=ID');
      assert.deepEqual(a.__ENTITIES, b.__ENTITIES);
    });

    describe('$orderby', () => {
      it('sorts ascending by an attribute (default direction) and descending with desc', async () => {
        const asc = (await get('/rest/Company?$orderby=name&$attributes=name')).__ENTITIES.map((e: Json) => e.name);
        assert.equal(asc.length, 40);
        assert.deepEqual(asc, [...asc].sort(cmp));
        const explicit = (await get('/rest/Company?$orderby=name%20asc&$attributes=name')).__ENTITIES.map((e: Json) => e.name);
        assert.deepEqual(explicit, asc);
        const desc = (await get('/rest/Company?$orderby=name%20desc&$attributes=name')).__ENTITIES.map((e: Json) => e.name);
        assert.deepEqual(desc, [...asc].reverse());
      });

      it('accepts a quoted order string and upper-case DESC', async () => {
        const plain = await get('/rest/Company?$orderby=name%20desc&$attributes=name&$top=5');
        assert.deepEqual((await get('/rest/Company?$orderby=%22name%20desc%22&$attributes=name&$top=5')).__ENTITIES, plain.__ENTITIES);
        assert.deepEqual((await get('/rest/Company?$orderby=name+DESC&$attributes=name&$top=5')).__ENTITIES, plain.__ENTITIES);
      });

      it('sorts by the primary key descending', async () => {
        const body = await get('/rest/Company?$orderby=ID%20desc&$top=3&$attributes=ID');
        assert.deepEqual(body.__ENTITIES.map((e: Json) => e.__KEY), ['40', '39', '38']);
      });

      for (const dir of ['asc', 'desc'] as const) {
        it(`sorts by a relation path (employer.name ${dir}) and breaks ties by primary key in the same direction`, async () => {
          const body = await get(`/rest/Employee?$orderby=employer.name%20${dir}&$top=320&$attributes=employerName`);
          const rows: { key: string; name: string | null }[] = body.__ENTITIES.map((e: Json) => ({ key: e.__KEY, name: e.employerName }));
          assert.equal(rows.length, 320);
          const named = rows.filter((r) => r.name !== null);
          // employees without an employer come all together, at one end
          const nullAt = rows.map((r, i) => (r.name === null ? i : -1)).filter((i) => i >= 0);
          assert.ok(nullAt.length > 0);
          assert.ok(nullAt.every((i, j) => i === nullAt[0] + j), 'null employers are grouped');
          assert.ok(nullAt[0] === 0 || nullAt.at(-1) === rows.length - 1, 'null employers are at one end');
          for (let i = 1; i < named.length; i++) {
            const [a, b] = [named[i - 1], named[i]];
            const order = dir === 'asc' ? cmp(a.name as string, b.name as string) : cmp(b.name as string, a.name as string);
            assert.ok(order <= 0, `${a.name} then ${b.name}`);
            // (ties by key in the sort's direction: an index on the attribute gives them so, no sort)
          if (a.name === b.name) assert.ok((dir === 'asc' ? cmp(a.key, b.key) : cmp(b.key, a.key)) < 0, `tie on ${a.name}: ${a.key} before ${b.key}`);
          }
        });
      }

      it('sorts by an alias exactly as by its path', async () => {
        const byAlias = await get('/rest/Employee?$orderby=employerName&$top=320&$attributes=ID');
        const byPath = await get('/rest/Employee?$orderby=employer.name&$top=320&$attributes=ID');
        assert.deepEqual(byAlias.__ENTITIES.map((e: Json) => e.__KEY), byPath.__ENTITIES.map((e: Json) => e.__KEY));
      });

      it('sorts by several terms', async () => {
        const body = await get('/rest/Employee?$orderby=lastName%20desc,firstName&$top=320&$attributes=lastName,firstName');
        const rows = body.__ENTITIES;
        for (let i = 1; i < rows.length; i++) {
          const [a, b] = [rows[i - 1], rows[i]];
          const last = cmp(b.lastName, a.lastName);
          assert.ok(last <= 0, `${a.lastName} then ${b.lastName}`);
          if (last === 0) {
            const firstOrder = cmp(a.firstName, b.firstName);
            assert.ok(firstOrder <= 0);
            if (firstOrder === 0) assert.ok(cmp(a.__KEY, b.__KEY) < 0);
          }
        }
      });

      it('pages a sorted selection without overlap', async () => {
        const url = '/rest/Employee?$orderby=lastName&$attributes=lastName';
        const whole = (await get(`${url}&$top=120`)).__ENTITIES.map((e: Json) => e.__KEY);
        const p1 = (await get(`${url}&$top=60`)).__ENTITIES.map((e: Json) => e.__KEY);
        const p2 = await get(`${url}&$top=60&$skip=60`);
        assert.equal(p2.__FIRST, 60);
        const keys2 = p2.__ENTITIES.map((e: Json) => e.__KEY);
        assert.equal(new Set([...p1, ...keys2]).size, 120);
        assert.deepEqual([...p1, ...keys2], whole);
      });
    });

    describe("Company's defaultTopSize", () => {
      let big: DemoFixture;
      before(async () => {
        big = await openDemo();
        // 40 seeded + 20 = 60 companies: more than the defaultTopSize of 50
        for (let i = 0; i < 20; i++) {
          const c = big.ds.Company.new();
          c.set('name', `Extra ${i}`);
          c.set('companyCode', `X${i}`);
          await c.save();
        }
      });
      after(() => big.close());

      it('sends 50 companies by default (Company.defaultTopSize), counting all 60', async () => {
        const res = await big.request('/rest/Company?$attributes=name');
        assert.equal(res.status, 200);
        assert.equal(res.body.__COUNT, 60);
        assert.equal(res.body.__SENT, 50);
        assert.equal(res.body.__ENTITIES.length, 50);
      });

      it('lets $top go past the defaultTopSize', async () => {
        const res = await big.request('/rest/Company?$attributes=name&$top=55');
        assert.equal(res.body.__SENT, 55);
      });
    });
  });

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

  describe('$attributes', () => {
    /** employee 10001: has an employer, manages others */
    let e1: Json;
    let employerKey: string;
    before(async () => {
      e1 = await employee(10001);
      employerKey = e1.employer.__deferred.__KEY;
    });

    for (const value of [undefined, '*']) {
      it(`gives all attributes, relations deferred, with $attributes ${value === undefined ? 'absent' : '=*'}`, async () => {
        const url = `/rest/Employee(${e1.__KEY})${value === undefined ? '' : `?$attributes=${value}`}`;
        const body = await get(url);
        assert.deepEqual(body, e1);
        assert.ok('__deferred' in body.employer);
        assert.ok('__deferred' in body.reports);
      });
    }

    it('gives the simple (deferred) form for $attributes=<relatedEntity>, and nothing else', async () => {
      const body = await get(`/rest/Employee(${e1.__KEY})?$attributes=employer`);
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, 'employer']));
      assert.deepEqual(body.employer, e1.employer);
    });

    it('inlines the whole related entity for $attributes=<relatedEntity>.*, without __entityModel', async () => {
      const body = await get(`/rest/Employee(${e1.__KEY})?$attributes=employer.*`);
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, 'employer']));
      const company = await get(`/rest/Company(${employerKey})`);
      const { __entityModel: _model, ...expected } = company;
      assert.deepEqual(body.employer, expected);
      assert.ok(!('__entityModel' in body.employer));
      assert.ok('__deferred' in body.employer.city, 'relations of the inline entity stay deferred');
      assert.ok('__deferred' in body.employer.staff);
    });

    it('inlines only the listed attributes for $attributes=<relatedEntity>.a,<relatedEntity>.b', async () => {
      const body = await get(`/rest/Employee(${e1.__KEY})?$attributes=employer.name,employer.companyCode`);
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, 'employer']));
      assert.deepEqual(sorted(Object.keys(body.employer)), sorted([...ENTITY_HEAD, 'name', 'companyCode']));
      assert.equal(body.employer.__KEY, employerKey);
      assertEntityHead(body.employer, 'inline employer');
      const company = await get(`/rest/Company(${employerKey})`);
      assert.equal(body.employer.name, company.name);
      assert.equal(body.employer.companyCode, company.companyCode);
      assert.equal(body.employer.__TIMESTAMP, company.__TIMESTAMP);
      assert.equal(body.employer.__STAMP, company.__STAMP);
    });

    it('mixes scalar attributes and relation paths: $attributes=lastName,employer.name', async () => {
      const body = await get(`/rest/Employee(${e1.__KEY})?$attributes=lastName,employer.name`);
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, 'lastName', 'employer']));
      assert.equal(body.lastName, e1.lastName);
      assert.deepEqual(sorted(Object.keys(body.employer)), sorted([...ENTITY_HEAD, 'name']));
    });

    it('gives null for a path through a missing related entity', async () => {
      const body = await get(`/rest/Employee(${keyOf(10028)})?$attributes=employer.name`);
      assert.equal(body.employer, null);
    });

    it('gives the deferred uri for $attributes=<relatedEntities> alone', async () => {
      const body = await get('/rest/Company(1)?$attributes=staff');
      assert.deepEqual(body.staff, { __deferred: { uri: '/rest/Company(1)/staff?$expand=staff' } });
    });

    it('inlines all related entities with all attributes for $attributes=<relatedEntities>.*', async () => {
      const body = await get('/rest/Company(2)?$attributes=staff.*');
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, 'staff']));
      assertInlineSelection(body.staff, 'Company(2).staff');
      assert.equal(body.staff.__ENTITYSET, '/rest/Company(2)/staff?$expand=staff');
      const expected = employees.filter((e) => e.employerID === 2).map((e) => e.__KEY);
      assert.equal(body.staff.__COUNT, expected.length);
      assert.deepEqual(sorted(body.staff.__ENTITIES.map((e: Json) => e.__KEY)), sorted(expected));
      for (const e of body.staff.__ENTITIES) {
        assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, ...names('Employee')]));
        assert.ok(!('__entityModel' in e));
      }
    });

    it('inlines related entities with only the listed attribute for $attributes=<relatedEntities>.a', async () => {
      const body = await get('/rest/Company(2)?$attributes=staff.lastName');
      assertInlineSelection(body.staff, 'Company(2).staff');
      assert.ok(body.staff.__ENTITIES.length > 0);
      for (const e of body.staff.__ENTITIES) {
        assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, 'lastName']));
        assertEntityHead(e, 'inline staff entity');
      }
    });

    it('follows chained paths: $attributes=employer.staff.lastName', async () => {
      const body = await get(`/rest/Employee(${e1.__KEY})?$attributes=employer.staff.lastName`);
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, 'employer']));
      assert.deepEqual(sorted(Object.keys(body.employer)), sorted([...ENTITY_HEAD, 'staff']));
      assert.equal(body.employer.__KEY, employerKey);
      const staff = body.employer.staff;
      assertInlineSelection(staff, 'employer.staff');
      assert.equal(staff.__ENTITYSET, `/rest/Company(${employerKey})/staff?$expand=staff`);
      const expected = employees.filter((e) => String(e.employerID) === employerKey).map((e) => e.__KEY);
      assert.equal(staff.__COUNT, expected.length);
      assert.ok(staff.__ENTITIES.some((e: Json) => e.__KEY === e1.__KEY), 'the employee is among its colleagues');
      for (const e of staff.__ENTITIES) assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, 'lastName']));
    });

    it('gives inline selections the datastore __GlobalStamp (collection request)', async () => {
      const body = await get('/rest/Company?$top=2&$attributes=staff.lastName');
      for (const c of body.__ENTITIES) assert.equal(c.staff.__GlobalStamp, body.__GlobalStamp);
    });

    it('gives inline selections the datastore __GlobalStamp (single-entity request)', async () => {
      const globalStamp = (await get('/rest/Company?$top=1')).__GlobalStamp;
      const body = await get('/rest/Company(2)?$attributes=staff.lastName');
      assert.equal(body.staff.__GlobalStamp, globalStamp);
      const chained = await get(`/rest/Employee(${e1.__KEY})?$attributes=employer.staff.lastName`);
      assert.equal(chained.employer.staff.__GlobalStamp, globalStamp);
    });

    describe('on a collection', () => {
      it('applies $attributes=employer (simple form) to every entity', async () => {
        const body = await get('/rest/Employee?$top=5&$attributes=employer');
        for (const e of body.__ENTITIES) {
          assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, 'employer']));
          const row = employees.find((x) => x.__KEY === e.__KEY) as Json;
          assert.deepEqual(e.employer, row.employerID === null ? null : { __deferred: { uri: `/rest/Company(${row.employerID})`, __KEY: String(row.employerID) } });
        }
      });

      it('applies $attributes=lastName,employer.name to every entity', async () => {
        const body = await get('/rest/Employee?$top=40&$attributes=lastName,employer.name');
        assert.equal(body.__SENT, 40);
        for (const e of body.__ENTITIES) {
          assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, 'lastName', 'employer']));
          const row = employees.find((x) => x.__KEY === e.__KEY) as Json;
          if (row.employerID === null) assert.equal(e.employer, null);
          else {
            assert.deepEqual(sorted(Object.keys(e.employer)), sorted([...ENTITY_HEAD, 'name']));
            assert.equal(e.employer.__KEY, String(row.employerID));
          }
        }
      });

      it('applies $attributes=employer.* to every entity', async () => {
        const body = await get('/rest/Employee?$top=5&$attributes=employer.*');
        for (const e of body.__ENTITIES) {
          if (e.employer === null) continue;
          assert.deepEqual(sorted(Object.keys(e.employer)), sorted([...ENTITY_HEAD, ...names('Company')]));
        }
      });

      it('applies $attributes=name,staff.lastName to every entity, with counts per company', async () => {
        const body = await get('/rest/Company?$top=4&$attributes=name,staff.lastName');
        for (const c of body.__ENTITIES) {
          assert.deepEqual(sorted(Object.keys(c)), sorted([...ENTITY_HEAD, 'name', 'staff']));
          assertInlineSelection(c.staff, `Company(${c.__KEY}).staff`);
          assert.equal(c.staff.__ENTITYSET, `/rest/Company(${c.__KEY})/staff?$expand=staff`);
          assert.equal(c.staff.__COUNT, employees.filter((e) => String(e.employerID) === c.__KEY).length);
          for (const e of c.staff.__ENTITIES) assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, 'lastName']));
        }
      });

      it('applies $attributes=staff.* and chained employer.staff.lastName', async () => {
        const companies = await get('/rest/Company?$top=2&$attributes=staff.*');
        for (const c of companies.__ENTITIES) {
          for (const e of c.staff.__ENTITIES) assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, ...names('Employee')]));
        }
        const body = await get('/rest/Employee?$top=3&$attributes=employer.staff.lastName');
        for (const e of body.__ENTITIES) {
          if (e.employer === null) continue;
          assert.deepEqual(sorted(Object.keys(e.employer)), sorted([...ENTITY_HEAD, 'staff']));
          assertInlineSelection(e.employer.staff, 'employer.staff');
          assert.ok(e.employer.staff.__ENTITIES.some((x: Json) => x.__KEY === e.__KEY));
        }
      });

      it('combines a trailing attribute list with $attributes', async () => {
        const body = await get('/rest/Company/name?$top=2&$attributes=city.name');
        for (const c of body.__ENTITIES) {
          assert.deepEqual(sorted(Object.keys(c)), sorted([...ENTITY_HEAD, 'name', 'city']));
          assert.deepEqual(sorted(Object.keys(c.city)), sorted([...ENTITY_HEAD, 'name']));
        }
      });
    });
  });

  describe('$expand', () => {
    it('inlines the related entity with all its attributes for $expand=employer, keeping every other attribute', async () => {
      const e = await employee(10001);
      const body = await get(`/rest/Employee(${e.__KEY})?$expand=employer`);
      assert.deepEqual(sorted(Object.keys(body)), sorted(Object.keys(e)));
      for (const n of names('Employee')) if (n !== 'employer') assert.deepEqual(body[n], e[n], n);
      const { __entityModel: _model, ...company } = await get(e.employer.__deferred.uri);
      assert.deepEqual(body.employer, company);
      assert.deepEqual(Object.keys(body.employer).slice(0, 3), ENTITY_HEAD);
    });

    it('inlines the related entities as a selection for $expand=staff', async () => {
      const company = await get('/rest/Company(2)');
      const body = await get('/rest/Company(2)?$expand=staff');
      for (const n of names('Company')) if (n !== 'staff') assert.deepEqual(body[n], company[n], n);
      assertInlineSelection(body.staff, 'Company(2).staff');
      assert.equal(body.staff.__ENTITYSET, '/rest/Company(2)/staff?$expand=staff');
      const followed = await get('/rest/Company(2)/staff?$expand=staff');
      assert.equal(body.staff.__COUNT, followed.__COUNT);
      assert.deepEqual(body.staff.__ENTITIES, followed.__ENTITIES);
    });

    it('expands on every entity of a collection: $expand=employer', async () => {
      const body = await get('/rest/Employee?$top=30&$expand=employer');
      assert.equal(body.__SENT, 30);
      for (const e of body.__ENTITIES) {
        const row = employees.find((x) => x.__KEY === e.__KEY) as Json;
        if (row.employerID === null) {
          assert.equal(e.employer, null);
          continue;
        }
        assert.equal(e.employer.__KEY, String(row.employerID));
        assert.ok(!('__entityModel' in e.employer));
        assert.deepEqual(sorted(Object.keys(e.employer)), sorted([...ENTITY_HEAD, ...names('Company')]));
      }
    });

    it('expands on every entity of a collection: $expand=staff', async () => {
      const body = await get('/rest/Company?$top=3&$expand=staff');
      for (const c of body.__ENTITIES) {
        assertInlineSelection(c.staff, `Company(${c.__KEY}).staff`);
        assert.equal(c.staff.__GlobalStamp, body.__GlobalStamp);
        assert.equal(c.staff.__COUNT, employees.filter((e) => String(e.employerID) === c.__KEY).length);
      }
    });

    it('expands several relations at once: $expand=employer,manager', async () => {
      const worker = employees.find((x) => x.managerID !== null && x.employerID !== null) as Json;
      const body = await get(`/rest/Employee(${worker.__KEY})?$expand=employer,manager`);
      assert.equal(body.employer.__KEY, String(worker.employerID));
      assert.equal(body.manager.__KEY, worker.managerID);
      assert.ok(!('__deferred' in body.employer) && !('__deferred' in body.manager));
    });

    it('adds the expanded relation to an $attributes list', async () => {
      const body = await get('/rest/Company(1)?$attributes=name&$expand=staff');
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, 'name', 'staff']));
      assertInlineSelection(body.staff, 'Company(1).staff');
    });
  });

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
