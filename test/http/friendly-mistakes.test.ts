// The mistakes a newcomer makes first, each answered with a 400 that shows what was meant:
// an attribute given as a query parameter (?lastName=Smith), an option without its '$', another
// API's name for one of ours, $limit in MySQL's form, and misspelt attributes in every option
// that names them. Parameters that are not ours and not meant as ours stay ignored.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DEMO_DIR, openDemo, type DemoFixture } from '../support/helpers.js';

describe('friendly mistakes', () => {
  let demo: DemoFixture;
  let guarded: DemoFixture;
  before(async () => {
    demo = await openDemo();
    guarded = await openDemo({ roles: join(DEMO_DIR, 'roles.json') });
  });
  after(async () => {
    await demo.close();
    await guarded.close();
  });

  const refused = async (fixture: DemoFixture, url: string, errCode: number) => {
    const res = await fixture.request(url);
    assert.equal(res.status, 400, `${url}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body.__ERROR[0].errCode, errCode, url);
    return res.body.__ERROR[0].message as string;
  };

  it('answers ?lastName=Smith with 400 and the $filter it meant, instead of every entity', async () => {
    const message = await refused(demo, '/rest/Employee?lastName=Smith', 7006);
    assert.equal(message, `'lastName' is an attribute of Employee, not an option: to select entities by it, write $filter="lastName = Smith"`);
    const meant = await demo.request(`/rest/Employee?$filter="lastName = Smith"`);
    assert.equal(meant.status, 200);
    assert.ok(meant.body.__COUNT > 0);
  });

  it('writes several attribute parameters, relation paths and PostgREST operators as one $filter', async () => {
    assert.match(await refused(demo, '/rest/Employee?lastName=eq.Smith&firstName=John', 7006), /'lastName', 'firstName' are attributes of Employee, not options: .* \$filter="lastName = Smith and firstName = John"$/);
    assert.match(await refused(demo, '/rest/Employee?employer.name=acme', 7006), /\$filter="employer\.name = acme"$/);
    assert.match(await refused(demo, '/rest/Employee?salary=gte.5000', 7006), /\$filter="salary >= 5000"$/);
    assert.match(await refused(demo, '/rest/Employee?lastName=like.Sm*', 7006), /\$filter="lastName = Sm@"$/);
    assert.match(await refused(demo, '/rest/Employee?lastName=constructor.x', 7006), /\$filter="lastName = constructor\.x"$/);
    assert.match(await refused(demo, '/rest/Employee?$constructor=1', 7006), /^unknown option '\$constructor'/);
    assert.match(await refused(demo, `/rest/Employee?lastName=${encodeURIComponent('Smith and Co')}`, 7006), /\$filter="lastName = 'Smith and Co'"$/);
  });

  it('hints on an entity, a relation and a set too, and never names an attribute the session may not read', async () => {
    await refused(demo, '/rest/Employee(1)?lastName=Smith', 7006);
    await refused(demo, '/rest/Company(1)/staff?lastName=Smith', 7006);
    // Employee.salary is readable by the 'salaries' privilege only: for a guest it is no attribute, and the parameter is ignored
    const hidden = await guarded.request('/rest/Employee?salary=5000&$top=1&$attributes=lastName');
    assert.equal(hidden.status, 200, JSON.stringify(hidden.body));
    assert.equal(await refused(guarded, '/rest/Employee?lastName=Smith', 7006), `'lastName' is an attribute of Employee, not an option: to select entities by it, write $filter="lastName = Smith"`);
  });

  it('keeps ignoring parameters that are not meant as options: cache-busters and unknown names', async () => {
    for (const url of ['/rest/Employee?_=1733240000000&$top=1', '/rest/Employee?constructor=1&__proto__=2&toString=3&$top=1', '/rest/Employee?v=2&$top=1', '/rest/Employee?nocache&$top=1', '/rest/$catalog?_=1', '/rest/$openapi?format=json']) {
      const res = await demo.request(url);
      assert.equal(res.status, 200, `${url}: ${JSON.stringify(res.body).slice(0, 200)}`);
    }
  });

  const plain: [string, RegExp][] = [
    ['filter=%22salary%3E1%22', /^'filter' is not an option of this API \(options begin with '\$'\): write \$filter="salary>1"$/],
    ['select=lastName,firstName', /write \$attributes=lastName,firstName$/],
    ['fields=lastName', /write \$attributes=lastName$/],
    ['order=lastName.desc,firstName', /write \$orderby="lastName desc, firstName"$/],
    ['sort=-lastName,%2BfirstName', /write \$orderby="lastName desc, firstName"$/],
    ['limit=10', /write \$top=10 \(4D's \$limit is the same\)$/],
    ['offset=20', /write \$skip=20$/],
    ['top=5', /write \$top=5$/],
    ['page=2&perPage=50', /: pages are read with \$skip and \$top: page 3 of 50 is \$skip=100&\$top=50$/],
  ];
  for (const [query, expected] of plain) {
    it(`points ?${decodeURIComponent(query)} to this API's option`, async () => {
      assert.match(await refused(demo, `/rest/Employee?${query}`, 7006), expected);
    });
  }

  it("points other APIs' $-names to ours: $select, $sort, $where, $offset", async () => {
    assert.equal(await refused(demo, '/rest/Employee?$select=lastName', 7006), "unknown option '$select': this API's is $attributes=lastName");
    assert.equal(await refused(demo, '/rest/Employee?$sort=-lastName', 7006), `unknown option '$sort': this API's is $orderby="lastName desc"`);
    assert.match(await refused(demo, '/rest/Employee?$where=%22a%3D1%22', 7006), /this API's is \$filter=a=1$/);
    assert.match(await refused(demo, '/rest/Employee?$offset=10', 7006), /this API's is \$skip=10$/);
    assert.match(await refused(demo, '/rest/Employee?$fitler=x', 7006), /did you mean '\$filter'\?$/);
  });

  it("reads $limit=10,20 as MySQL's LIMIT and $top=all as every entity, and says how to write them", async () => {
    assert.match(await refused(demo, '/rest/Employee?$limit=10,20', 7007), /LIMIT 10,20 is \$skip=10&\$top=20\)$/);
    assert.match(await refused(demo, '/rest/Employee?$top=all', 7007), /for every entity leave it out/);
    assert.match(await refused(demo, '/rest/Employee?$top=-1', 7007), /for every entity leave it out/);
  });

  it('suggests the attribute meant in $orderby, $attributes and $expand, as in $filter', async () => {
    const near = /did you mean 'lastName'\?$/;
    for (const url of ['/rest/Employee?$orderby=lastNme', '/rest/Employee?$orderby=lastNme%20desc', '/rest/Employee?$attributes=lastNme', `/rest/Employee?$filter="lastNme = x"`]) {
      const res = await demo.request(url);
      assert.equal(res.status, url.includes('$filter') ? 400 : 404, url);
      assert.match(res.body.__ERROR[0].message, near, url);
    }
    for (const url of ['/rest/Employee?$expand=employr', '/rest/Employee?$attributes=employr.name']) {
      const res = await demo.request(url);
      assert.match(res.body.__ERROR[0].message, /did you mean 'employer'\?$/, url);
    }
    const deep = await demo.request('/rest/Employee?$orderby=employer.nme');
    assert.match(deep.body.__ERROR[0].message, /"nme" attribute cannot be found in the "Company" dataclass .*did you mean 'name'\?$/);
  });
});
