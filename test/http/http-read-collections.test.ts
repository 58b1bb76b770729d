// HTTP reads over the seeded demo project, collections: GET /rest/{dataClass}'s envelope, paging
// and order. The other reads are the other http-read-*.test.ts (single entities, $attributes and
// $expand, $asArray and $format=looker); what they share is http-read-shared.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDemo, type DemoFixture } from '../support/helpers.js';
import { assertEntityHead, cmp, COLLECTION_KEYS, demoReads, sorted, type Json } from './http-read-shared.js';

describe('HTTP reads', () => {
  let demo: DemoFixture;
  const { get, learn } = demoReads(() => demo);

  before(async () => {
    demo = await openDemo();
    await learn();
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

  it('answers a $filter mistake before an $attributes one when the page reads more ($asArray, $format=looker, $querypath), as before issue 35', async () => {
    for (const shape of ['$asArray=true', '$format=looker', '$querypath=true']) {
      const res = await demo.request(`/rest/Company?${shape}&$filter="nope = 1"&$attributes=bogus`);
      assert.equal(res.status, 400, `${shape}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.__ERROR[0].errCode, 7017, shape);
    }
    // the plain envelope judges its attributes first (it asks whether its rows are enough before the query)
    const plain = await demo.request('/rest/Company?$filter="nope = 1"&$attributes=bogus');
    assert.equal(plain.status, 404, JSON.stringify(plain.body));
    assert.equal(plain.body.__ERROR[0].errCode, 1500);
  });
});
