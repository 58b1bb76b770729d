// Hostile text in every place a client writes query text ($filter, $params, $orderby,
// $attributes, keys): answers are typed errors or ordinary results, the data is intact, and no
// answer is a 500.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDemo, type DemoFixture } from '../support/helpers.js';

const HOSTILE = [
  "'", '"', "';--", '"; DROP TABLE "Employee"; --', "' OR '1'='1", '1 OR 1=1', '1; DELETE FROM "Company"',
  "x' UNION SELECT name, sql FROM sqlite_master --", '/* comment */', '-- comment', '\\', '\u0000', '\u001b[2J', '\r\nX-Injected: 1',
  ')', '(', '[', ']', '{', '}', ':1', ':999', '@', '%', '_', '$', '`', 'NULL', 'null)', 'order by', 'éé', '💥',
];

describe('injection', () => {
  let demo: DemoFixture;
  let counts: number[];
  const count = async () => Promise.all(['Employee', 'Company', 'City'].map(async (dc) => (await demo.request(`/rest/${dc}?$top=0`)).body.__COUNT as number));

  before(async () => {
    demo = await openDemo();
    counts = await count();
  });
  after(() => demo.close());

  const places: [string, (h: string) => string][] = [
    ['a $filter value', (h) => `/rest/Employee?$filter=${encodeURIComponent(`lastName = '${h.replaceAll("'", "\\'")}'`)}`],
    ['a $filter, raw', (h) => `/rest/Employee?$filter=${encodeURIComponent(`lastName = ${h}`)}`],
    ['a $filter attribute', (h) => `/rest/Employee?$filter=${encodeURIComponent(`${h} = 1`)}`],
    ['a $params value', (h) => `/rest/Employee?$filter=${encodeURIComponent('lastName = :1')}&$params=${encodeURIComponent(JSON.stringify([h]))}`],
    ['a $params path', (h) => `/rest/Employee?$filter=${encodeURIComponent(':1 = 1')}&$params=${encodeURIComponent(JSON.stringify([h]))}`],
    ['$orderby', (h) => `/rest/Employee?$orderby=${encodeURIComponent(`lastName ${h}`)}`],
    ['$attributes', (h) => `/rest/Employee?$attributes=${encodeURIComponent(h)}`],
    ['a key', (h) => `/rest/Company(${encodeURIComponent(h)})`],
    ['an attribute lookup', (h) => `/rest/Company:companyCode(${encodeURIComponent(h)})`],
  ];
  for (const [place, url] of places) {
    it(`answers hostile text in ${place} with a result or a typed error, never a 500`, async () => {
      for (const h of HOSTILE) {
        const res = await demo.request(url(h));
        assert.ok(res.status < 500, `${url(h)} → ${res.status} ${JSON.stringify(res.body)}`);
        if (res.status >= 400) assert.ok(Array.isArray(res.body.__ERROR) && res.body.__ERROR[0].errCode, url(h));
      }
    });
  }

  it('leaves the data as it was', async () => {
    assert.deepEqual(await count(), counts);
  });
});
