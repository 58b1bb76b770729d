// Property-based tests of function calls and uploads (fast-check): whatever a client sends — any
// name, any JSON body, any $params, any options — the answer is a result or a typed __ERROR, and a
// 500 is only ever the function's own failure (7019, 7022), never the server's (7500).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { openDemo, type DemoFixture } from '../support/helpers.js';

fc.configureGlobal({ includeErrorInReport: true });

/** Names that exist (functions and methods of the demo), near misses, and junk. */
const NAMES = ['counts', 'topEarner', 'earningAtLeast', 'raiseSalaries', 'hire', 'payroll', 'pause', 'hiredBetween', 'whoCalls', 'authentify', 'renameSlowly', 'secretReport',
  'byCode', 'totalRevenues', 'raise', 'seniority', 'salaryBands', 'payrollSummary', 'teammates', 'bestPaid', 'inactiveCompanies', 'name', 'ID', '$all', 'constructor', '__proto__', 'toString'];

/** JSON values, with the special shapes REST gives a meaning to (entity and selection parameters). */
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  any: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, '', '2024-05-01', 'x'.repeat(300), '\u0000', '💥'),
    fc.integer(),
    fc.string(),
    fc.record({ __DATACLASS: fc.constantFrom('Employee', 'Company', 'Nope', 42), __ENTITY: fc.constantFrom(true, 'yes'), __KEY: fc.oneof(fc.integer(), fc.string()) }, { requiredKeys: ['__ENTITY'] }),
    fc.record({ __DATASET: fc.oneof(fc.string(), fc.constant('0123456789ABCDEF0123456789ABCDEF')), __ENTITIES: fc.constantFrom(true, 1) }),
    fc.array(tie('any'), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 8 }), tie('any'), { maxKeys: 3 }),
  ),
})).any;

const target = fc.constantFrom('/rest/$catalog/', '/rest/Employee/', '/rest/Company/', '/rest/Employee(1)/', '/rest/Company(1)/', '/rest/Company[2]/', '/rest/City/', '/rest/AuditLog/');
const options = fc.constantFrom('', '?$top=2', '?$filter="salary>1"', '?$filter=bad filter', '?$orderby=salary desc', '?$params=[1]', '?$params=oops', '?$method=entityset', '?$attributes=nope', '?$timeout=1');

describe('function calls: fuzz', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo({ functionTimeoutMs: 200 }); // pause() and renameSlowly() with big numbers end early
  });
  after(() => demo.close());

  it('answers any call — name, body, options, verb — with a result or a typed error, never an internal one', async () => {
    await fc.assert(
      fc.asyncProperty(target, fc.constantFrom(...NAMES), options, fc.constantFrom('POST', 'GET'), fc.option(fc.oneof(fc.array(value, { maxLength: 4 }), value)), async (base, name, query, method, body) => {
        const res = await demo.request(`${base}${encodeURIComponent(name)}${query}`, method as 'GET' | 'POST', method === 'POST' && body !== null ? body : undefined);
        if (res.status >= 500) {
          assert.ok(res.body?.__ERROR, `a ${res.status} without __ERROR`);
          assert.ok([7019, 7020, 7022].includes(res.body.__ERROR[0].errCode), `${method} ${base}${name}${query} ${JSON.stringify(body)?.slice(0, 200)} → ${JSON.stringify(res.body).slice(0, 300)}`);
        } else if (res.status >= 400) {
          assert.ok(res.body?.__ERROR?.[0]?.errCode, `a ${res.status} without a typed __ERROR: ${JSON.stringify(res.body).slice(0, 200)}`);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('answers any upload request with an id or a typed error', async () => {
    const query = fc.array(fc.constantFrom('$rawPict=true', '$binary=true', '$rawPict=yes', '$timeout=0', '$timeout=5', '$timeout=-1', '$timeout=999999', '$top=1', '$bogus=1', 'x=1'), { maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(query, fc.uint8Array({ maxLength: 64 }), async (parts, bytes) => {
        const res = await demo.app.inject({ method: 'POST', url: `/rest/$upload?${parts.join('&')}`, payload: Buffer.from(bytes), headers: { 'content-type': 'application/octet-stream' } });
        const body = JSON.parse(res.body);
        if (res.statusCode === 200) assert.match(body.ID, /^[0-9A-F]{32}$/);
        else assert.ok(res.statusCode < 500 && body.__ERROR?.[0]?.errCode, `${parts.join('&')} → ${res.statusCode} ${res.body}`);
      }),
      { numRuns: 200 },
    );
  });
});
