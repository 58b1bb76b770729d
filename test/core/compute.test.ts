// Computations: ORDA's sum/average/min/max/count/distinct on selections, and REST's $compute and
// $distinct, checked against the values computed here from the same entities.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDemo, type DemoFixture } from '../support/helpers.js';

describe('computations', () => {
  let demo: DemoFixture;
  let salaries: number[];
  before(async () => {
    demo = await openDemo();
    salaries = (await demo.ds.Employee.all().toArray()).map((e) => e.get('salary') as number);
  });
  after(() => demo.close());

  it('sums, averages, counts and finds extremes in SQL, as the values say', async () => {
    const all = demo.ds.Employee.all();
    assert.equal(await all.sum('salary'), salaries.reduce((a, b) => a + b, 0));
    assert.equal(Math.round((await all.average('salary'))! * 1000), Math.round((salaries.reduce((a, b) => a + b, 0) / salaries.length) * 1000));
    assert.equal(await all.min('salary'), Math.min(...salaries));
    assert.equal(await all.max('salary'), Math.max(...salaries));
    assert.equal(await all.count('notes'), (await demo.ds.Employee.query('notes # null').length));
  });

  it('computes on a query and on a slice only over their members', async () => {
    const rich = demo.ds.Employee.query('salary > 100000');
    const values = salaries.filter((s) => s > 100000);
    assert.equal(await rich.sum('salary'), values.reduce((a, b) => a + b, 0));
    const three = demo.ds.Employee.all().orderBy('salary desc').slice(0, 3);
    const top = [...salaries].sort((a, b) => b - a).slice(0, 3);
    assert.equal(await three.sum('salary'), top.reduce((a, b) => a + b, 0));
  });

  it('finds the lowest and highest text without regard to case or accents', async () => {
    const names = (await demo.ds.Employee.all().toArray()).map((e) => e.get('lastName') as string);
    const folded = (s: string) => s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
    const sorted = [...names].sort((a, b) => (folded(a) < folded(b) ? -1 : folded(a) > folded(b) ? 1 : 0));
    assert.equal(await demo.ds.Employee.all().min('lastName'), sorted[0]);
    assert.equal(folded(String(await demo.ds.Employee.all().max('lastName'))), folded(sorted[sorted.length - 1]));
  });

  it('answers $compute keywords with bare values, $all with the object of the spec', async () => {
    const sum = await demo.request('/rest/Employee/salary?$compute=sum');
    assert.equal(sum.body, salaries.reduce((a, b) => a + b, 0));
    assert.equal((await demo.request('/rest/Employee/salary?$compute=count')).body, salaries.length);
    const all = (await demo.request('/rest/Employee/salary?$compute=$all')).body;
    assert.deepEqual(Object.keys(all), ['salary']);
    assert.deepEqual(Object.keys(all.salary), ['count', 'sum', 'average', 'min', 'max']);
    const text = (await demo.request('/rest/Employee/lastName?$compute=$all')).body;
    assert.deepEqual(Object.keys(text.lastName), ['count', 'min', 'max']);
    const filtered = await demo.request('/rest/Employee/salary?$compute=max&$filter=%22salary%20%3C%2050000%22');
    assert.equal(filtered.body, Math.max(...salaries.filter((s) => s < 50000)));
    const staff = await demo.request('/rest/Company(1)/staff/salary?$compute=count&$expand=staff');
    assert.equal(staff.body, (await demo.request('/rest/Company(1)/staff?$expand=staff')).body.__COUNT);
  });

  it('finds the lowest and highest boolean (false before true), nulls left out, on both engines', async () => {
    assert.equal((await demo.request('/rest/Employee/isManager?$compute=min')).body, false);
    assert.equal((await demo.request('/rest/Employee/isManager?$compute=max')).body, true);
    const all = (await demo.request('/rest/Employee/isManager?$compute=$all')).body.isManager;
    assert.deepEqual([all.min, all.max], [false, true]);
    assert.equal((await demo.request('/rest/Employee/isManager?$compute=min&$filter="isManager = true"')).body, true);
    assert.equal((await demo.request('/rest/Employee/isManager?$compute=max&$filter="isManager = false"')).body, false);
  });

  it('sums and averages numbers near the largest double without failing: a sum past it is null, as infinity is in JSON', async () => {
    const ds = demo.ds;
    const [a, b] = await ds.Company.all().orderBy('ID').slice(0, 2).toArray();
    const before = [a.get('revenues'), b.get('revenues')];
    try {
      await ds.transaction(async () => {
        a.set('revenues', 1.7e308);
        b.set('revenues', 1.7e308);
        await a.save();
        await b.save();
      });
      const sum = await demo.request(`/rest/Company/revenues?$compute=sum&$filter=${encodeURIComponent(`"ID in [${a.get('ID')}, ${b.get('ID')}]"`)}`);
      assert.equal(sum.status, 200, JSON.stringify(sum.body));
      assert.equal(sum.body, null);
      const one = await demo.request(`/rest/Company/revenues?$compute=average&$filter=${encodeURIComponent(`"ID = ${a.get('ID')}"`)}`);
      assert.equal(one.status, 200, JSON.stringify(one.body));
      assert.equal(one.body, 1.7e308);
    } finally {
      await ds.transaction(async () => {
        a.set('revenues', before[0]);
        b.set('revenues', before[1]);
        await a.save();
        await b.save();
      });
    }
  });

  it('computes on properties of object attributes', async () => {
    const ratings = (await demo.ds.Company.all().toArray()).map((c) => (c.get('extra') as { rating: number }).rating);
    const sum = (await demo.request('/rest/Company/extra.rating?$compute=sum')).body;
    assert.equal(Math.round(sum * 10), Math.round(ratings.reduce((a, b) => a + b, 0) * 10));
    assert.equal((await demo.request('/rest/Company/extra.rating?$compute=max')).body, Math.max(...ratings));
  });

  it('sums and averages only the numbers of an object property, as 4D ignores other value types', async () => {
    const ds = demo.ds;
    const companies = await ds.Company.all().toArray();
    const numbers = companies.map((c) => (c.get('extra') as { rating: number }).rating);
    // one company's rating becomes text, another's a boolean: both are left out of sum and average
    await ds.transaction(async () => {
      for (const [i, v] of [[0, 'high'], [1, true]] as const) {
        companies[i].set('extra', { ...(companies[i].get('extra') as object), rating: v });
        await companies[i].save();
      }
    });
    try {
      const rest = numbers.slice(2);
      const sum = (await demo.request('/rest/Company/extra.rating?$compute=sum')).body;
      assert.equal(Math.round(sum * 10), Math.round(rest.reduce((a, b) => a + b, 0) * 10));
      const average = (await demo.request('/rest/Company/extra.rating?$compute=average')).body;
      assert.equal(Math.round(average * 1000), Math.round((rest.reduce((a, b) => a + b, 0) / rest.length) * 1000));
      // a property no entity holds as a number sums to 0, and has no average
      assert.equal((await demo.request('/rest/Company/extra.nowhere?$compute=sum')).body, 0);
      assert.equal((await demo.request('/rest/Company/extra.nowhere?$compute=average')).body, null);
    } finally {
      await ds.transaction(async () => {
        for (const i of [0, 1]) {
          companies[i].set('extra', { ...(companies[i].get('extra') as object), rating: numbers[i] });
          await companies[i].save();
        }
      });
    }
  });

  it('answers $distinct with the sorted distinct values, $skip and $top applied to them', async () => {
    const countries = [...new Set((await demo.ds.City.all().toArray()).map((c) => c.get('country') as string))].sort();
    assert.deepEqual((await demo.request('/rest/City/country?$distinct=true')).body, countries);
    assert.deepEqual((await demo.request('/rest/City/country?$distinct=true&$skip=2&$top=3')).body, countries.slice(2, 5));
    assert.deepEqual((await demo.ds.City.all().distinct('country')), countries);
  });

  it('refuses sum and average on text, and paths that have no single value', async () => {
    for (const [url, message] of [
      ['/rest/Employee/lastName?$compute=average', /average needs a number attribute/],
      ['/rest/Company/staff?$compute=count', /1→N relation has many values/],
      ['/rest/Employee/photo?$compute=count', /image attributes have no value to compute/],
      ['/rest/Employee/salary?$compute=sum&$distinct=true', /two requests/],
    ] as const) {
      const res = await demo.request(url);
      assert.equal(res.status, 400, url);
      assert.match(res.body.__ERROR[0].message, message, url);
    }
  });
});
