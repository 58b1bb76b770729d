// HTTP scenarios for calling exposed functions: the function time limit and concurrency, declared
// parameter types, the context of a call, and how a call is checked before it runs. The other
// function calls are http-functions-*.test.ts; what they share is http-functions-shared.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDemo, type DemoFixture } from '../support/helpers.js';
import { unchangedDemoOfFile } from './http-functions-shared.js';

// One demo for the suites whose calls change no stored data; each suite that writes opens its own.
const unchangedDemo = unchangedDemoOfFile();

describe('HTTP: function time limit and concurrency', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await unchangedDemo();
  });

  it('answers 7020 (504) when a function passes the time limit, and serves other calls meanwhile', async () => {
    const quick = await demo.withServer({ functionTimeoutMs: 100 });
    try {
      const slow = quick.request('/rest/$catalog/pause', 'POST', [600]);
      // answered while the slow one is still running
      assert.deepEqual((await quick.request('/rest/$catalog/pause', 'POST', [1, 'quick'])).body, { result: { ms: 1, tag: 'quick' } });
      const res = await slow;
      assert.equal(res.status, 504);
      assert.equal(res.body.__ERROR[0].errCode, 7020);
      assert.match(res.body.__ERROR[0].message, /pause of the DataStore class took longer than 100 ms \(the server's --function-timeout\): it is stopped at its next datastore call/);
    } finally {
      await quick.close();
    }
  });

  it('runs two slow functions at once, each answering with its own parameters', async () => {
    const [a, b] = await Promise.all([
      demo.request('/rest/$catalog/pause', 'POST', [150, 'first']),
      demo.request('/rest/$catalog/pause', 'POST', [100, 'second']),
    ]);
    assert.deepEqual(a.body, { result: { ms: 150, tag: 'first' } });
    assert.deepEqual(b.body, { result: { ms: 100, tag: 'second' } });
  });
});

describe('HTTP: declared parameter types', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await unchangedDemo();
  });

  it('gives a Date for an ISO 8601 date or date-time where @params declares a date', async () => {
    const expected = await demo.ds.Employee.query('hiredAt >= :1 and hiredAt < :2', new Date('2019-01-01'), new Date('2021-06-01T12:00:00Z')).length;
    assert.ok(expected > 0 && expected < (await demo.ds.Employee.all().length), 'the demo has employees on both sides');
    const res = await demo.request('/rest/$catalog/hiredBetween?$top=1', 'POST', ['2019-01-01', '2021-06-01T12:00:00Z']);
    assert.equal(res.status, 200);
    assert.equal(res.body.__COUNT, expected);
    const open = await demo.request('/rest/$catalog/hiredBetween?$top=1', 'POST', ['2019-01-01']); // the optional one left out
    assert.equal(open.body.__COUNT, await demo.ds.Employee.query('hiredAt >= :1', new Date('2019-01-01')).length);
  });

  it('answers 400 (7021) naming the parameter for a date that is no ISO 8601 date, a missing one, or one too many', async () => {
    const cases: [unknown[], string][] = [
      [['last year'], 'parameter #1 (since) of hiredBetween of the DataStore class is a date: an ISO 8601 string such as "2024-05-01" or "2024-05-01T09:30:00Z"; got "last year"'],
      [['2019-02-30'], 'parameter #1 (since) of hiredBetween of the DataStore class is a date: an ISO 8601 string such as "2024-05-01" or "2024-05-01T09:30:00Z"; got "2019-02-30"'],
      [[20190101], 'parameter #1 (since) of hiredBetween of the DataStore class is a date: an ISO 8601 string such as "2024-05-01" or "2024-05-01T09:30:00Z"; got 20190101'],
      [[], 'parameter #1 (since) of hiredBetween of the DataStore class is required (date); got nothing'],
      [['2019-01-01', '2020-01-01', '2021-01-01'], 'hiredBetween of the DataStore class takes 2 parameters; got 3'],
    ];
    for (const [body, message] of cases) {
      const res = await demo.request('/rest/$catalog/hiredBetween', 'POST', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual(res.body.__ERROR, [{ message, componentSignature: 'dsrs', errCode: 7021 }]);
    }
  });

  it('leaves undeclared parameters as JSON gives them: a date stays a string', async () => {
    const res = await demo.request('/rest/$catalog/pause', 'POST', [1, '2019-01-01']);
    assert.deepEqual(res.body, { result: { ms: 1, tag: '2019-01-01' } });
  });

  it('checks an object parameter: authentify takes {userName, password}', async () => {
    const ok = await demo.request('/rest/$catalog/authentify', 'POST', [{ userName: 'alice', password: 'alice123' }]);
    assert.deepEqual(ok.body, { result: { success: true, userName: 'alice', privileges: [] } }, 'without roles.json there are no privileges to give');
    const wrong = await demo.request('/rest/$catalog/authentify', 'POST', [{ userName: 'alice', password: 'nope' }]);
    assert.deepEqual(wrong.body, { result: { success: false, reason: 'unknown user name or wrong password' } });
    const shape = await demo.request('/rest/$catalog/authentify', 'POST', ['me']);
    assert.equal(shape.status, 400);
    assert.equal(shape.body.__ERROR[0].message, 'parameter #1 (credentials) of authentify of the DataStore class is a JSON object; got "me"');
  });
});

describe('HTTP: the context of a call', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('gives each of several slow calls running at once its own request, before and after it waits', async () => {
    const delays = [120, 40, 80, 10, 100, 60];
    const answers = await Promise.all(delays.map((ms, i) => demo.request('/rest/$catalog/whoCalls', 'POST', [ms], { 'x-demo-tag': `caller-${i}` })));
    answers.forEach((res, i) => {
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.result, { before: `caller-${i}`, after: `caller-${i}`, function: 'whoCalls of the DataStore class' });
    });
  });

  it('has no context outside a call', async () => {
    const { callContext } = await import('../../src/index.js');
    assert.throws(() => callContext(), /callContext\(\) is only available while a function called over REST runs/);
  });

  it('rolls back the transaction of a function past its time limit: its next datastore call is refused', async () => {
    const before = (await demo.ds.Company.get(1))?.get('name');
    const quick = await demo.withServer({ functionTimeoutMs: 100 });
    try {
      const res = await quick.request('/rest/$catalog/renameSlowly', 'POST', [1, 'Too Slow Inc', 300]);
      assert.equal(res.status, 504);
      assert.equal(res.body.__ERROR[0].errCode, 7020);
      assert.match(res.body.__ERROR[0].message, /renameSlowly of the DataStore class took longer than 100 ms/);
      await new Promise((resolve) => setTimeout(resolve, 350)); // the function wakes up and tries its second save
    } finally {
      await quick.close();
    }
    assert.equal((await demo.ds.Company.get(1))?.get('name'), before, 'the first save was rolled back');
    // the writer is free again: the same function within its limit commits
    const ok = await demo.request('/rest/$catalog/renameSlowly', 'POST', [1, 'Quick Inc', 1]);
    assert.deepEqual(ok.body, { result: 'Quick Inc (confirmed)' });
  });

  it('frees the writer at the time limit: other writes go on while the function still sleeps, and it never commits', async () => {
    const before = (await demo.ds.Company.get(1))?.get('name');
    const quick = await demo.withServer({ functionTimeoutMs: 100 });
    const started = Date.now();
    try {
      // saves, then sleeps 3 s, then returns without touching the datastore again
      const res = await quick.request('/rest/$catalog/renameSlowly', 'POST', [1, 'Late Commit Ltd', 3000, false]);
      assert.equal(res.status, 504);
    } finally {
      await quick.close();
    }
    const other = await demo.ds.Company.get(2);
    const update = await demo.request('/rest/Company?$method=update', 'POST', { __KEY: 2, __STAMP: other?.getStamp(), revenues: 123 });
    assert.equal(update.status, 200);
    assert.ok(Date.now() - started < 2500, 'the update did not wait for the function');
    await new Promise((resolve) => setTimeout(resolve, 3100 - (Date.now() - started))); // the function returns
    assert.equal((await demo.ds.Company.get(1))?.get('name'), before, 'nothing of it committed');
  });
});

describe('HTTP: how a call is checked before it runs', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await unchangedDemo();
  });

  it('answers 405 for GET of a POST-only function before reading its $filter, entity set or entity', async () => {
    for (const url of ['/rest/Employee/payrollSummary?$filter="salary>:1"', '/rest/Company/totalRevenues/$entityset/0123456789ABCDEF0123456789ABCDEF', '/rest/Employee(00000000000000000000000000000000)/raise']) {
      const res = await demo.request(url);
      assert.equal(res.status, 405, url);
    }
  });

  it('refuses $filter on a function of the dataclass class or of an entity (they run on no selection)', async () => {
    const res = await demo.request('/rest/Company/byCode?$filter="ID>1"', 'POST', ['X']);
    assert.equal(res.status, 400);
    assert.match(res.body.__ERROR[0].message, /byCode of the Company class runs on the dataclass: \$filter, \$orderby and \$entityset do not apply/);
    const key = (await demo.ds.Employee.all().first())?.getKey();
    const entity = await demo.request(`/rest/Employee(${key})/seniority?$orderby=nope`);
    assert.equal(entity.status, 400);
    assert.match(entity.body.__ERROR[0].message, /seniority of the EmployeeEntity class runs on one entity: \$filter, \$orderby and \$entityset do not apply/);
  });

  it('runs a selection function and a currentSelection method on the selection sorted by $orderby', async () => {
    const res = await demo.request('/rest/Employee/bestPaid?$filter="salary < 50000"&$orderby=salary', 'POST');
    assert.equal(res.status, 200);
    const expected = await demo.ds.Employee.query('salary < 50000').orderBy('salary desc').first();
    assert.equal(res.body.__KEY, expected?.getKey());
    assert.equal(res.body.__entityModel, 'Employee');
    const revenues = await demo.request('/rest/Company/totalRevenues?$orderby=revenues desc', 'POST');
    assert.equal(revenues.status, 200);
  });

  it('answers 7002 for a call under a dataclass REST does not have', async () => {
    const res = await demo.request('/rest/AuditLog/anything', 'POST');
    assert.equal(res.status, 404);
    assert.equal(res.body.__ERROR[0].errCode, 7002);
  });
});
