// The query time limit (--query-timeout): a statement whose work multiplies — a filter through
// many levels of a 1→N relation — is stopped at the limit with QUERY_TIMEOUT (504), whatever it
// would have written is not kept, and the server goes on serving (on SQLite, where statements run
// on the event loop, the loop is held no longer than the limit).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDemo, startCommand, tempDir, testDatabase, testStorage, TEST_ENGINE, type DemoFixture } from '../support/helpers.js';
import { databaseTarget, openStorage } from '../../src/storage/open.js';

// PostgreSQL plans these filters without multiplying rows (it decorrelates the subqueries): the
// runaway is SQLite's; PostgreSQL's statement_timeout is shown with a statement that sleeps.
const SQLITE_ONLY = { skip: TEST_ENGINE !== 'sqlite' && 'PostgreSQL plans this filter without multiplying rows' };
const POSTGRES_ONLY = { skip: TEST_ENGINE !== 'postgres' && 'statement_timeout is PostgreSQL\'s' };

/** A filter through `depth` levels of colleagues (an alias of employer.staff: 1→N, ~32 each on the demo; 1,500 in company 1 once crowded). */
function colleaguesFilter(depth: number): string {
  return `$filter="${Array(depth).fill('colleagues').join('.')}.lastName = 'nobody'"`;
}

/** 1,500 more employees in company 1 (one batch): two levels of colleagues then visit ~5 billion rows. */
const CROWD = Array.from({ length: 1_500 }, (_, i) => ({ firstName: 'Crowd', lastName: `Crowd${i}`, employer: { __KEY: '1' } }));

describe('the query time limit on a filter whose rows multiply', SQLITE_ONLY, () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo({ queryTimeoutMs: 1_000 });
    assert.equal((await demo.request('/rest/Employee?$method=update', 'POST', CROWD)).status, 200);
  });
  after(() => demo.close());

  it('stops a filter through two levels of a crowded 1→N relation with 504 QUERY_TIMEOUT naming the option, then serves the next request', async () => {
    const { status, body } = await demo.request(`/rest/Employee?${colleaguesFilter(2)}&$top=1`);
    assert.equal(status, 504);
    assert.equal(body.__ERROR[0].errCode, 7066);
    assert.match(body.__ERROR[0].message, /time limit.*--query-timeout/);
    assert.equal((await demo.request('/rest/Employee?$top=1')).status, 200);
  });

  it('stops a filter through one level of a crowded 1→N relation, whose work is quadratic (each employee visits its whole company), for a read, a delete and a set', async () => {
    // several crowds' worth: each OR visits company 1's staff for each of its employees
    const filter = `$filter="${Array.from({ length: 12 }, (_, i) => `colleagues.lastName = 'zz${i}'`).join(' or ')}"`;
    for (const [url, method] of [[`/rest/Employee?${filter}&$top=1`, 'GET'], [`/rest/Employee?${filter}&$method=delete`, 'POST'], [`/rest/Employee?${filter}&$method=entityset`, 'GET']] as const) {
      const { status, body } = await demo.request(url, method);
      assert.equal(status, 504, `${method} ${url}: ${JSON.stringify(body).slice(0, 200)}`);
      assert.equal(body.__ERROR[0].errCode, 7066);
    }
  });

  it('answers a filter within the limit as before', async () => {
    const { status, body } = await demo.request(`/rest/Employee?$filter="lastName = 'nobody'"&$top=1`);
    assert.equal(status, 200);
    assert.equal(body.__COUNT, 0);
  });

  it('stops a delete through such a filter and deletes nothing', async () => {
    const before = (await demo.request('/rest/Employee?$top=0')).body.__COUNT;
    const { status, body } = await demo.request(`/rest/Employee?${colleaguesFilter(2)}&$method=delete`, 'POST');
    assert.equal(status, 504);
    assert.equal(body.__ERROR[0].errCode, 7066);
    assert.equal((await demo.request('/rest/Employee?$top=0')).body.__COUNT, before);
  });

  it('stops a query through the datastore API (a function, a class) with the same error', async () => {
    await assert.rejects(
      async () => (await demo.ds.Employee.query(`${Array(2).fill('colleagues').join('.')}.lastName = 'nobody'`)).length,
      (e: Error & { code?: string }) => e.code === 'QUERY_TIMEOUT',
    );
  });

  it('serves other requests while one runs into the limit', async () => {
    const order: string[] = [];
    const runaway = demo.request(`/rest/Employee?${colleaguesFilter(2)}&$top=1`).then((r) => (order.push('runaway'), r));
    const quick = demo.request('/rest/Company(1)').then((r) => (order.push('quick'), r));
    const [slow, fast] = await Promise.all([runaway, quick]);
    assert.equal(slow.status, 504);
    assert.equal(fast.status, 200);
    // SQLite runs the statement on the event loop: the quick one waits, but no longer than the limit
    assert.equal(order.length, 2);
  });
});

describe('stopping while a query runs', SQLITE_ONLY, () => {
  it('SIGTERM ends the server once the running statement reaches the query time limit', { timeout: 60_000 }, async () => {
    const tmp = tempDir();
    try {
      const db = await testDatabase(join(tmp.dir, 'stop.sqlite'));
      const server = await startCommand(['--db', db, '--port', '0', '--log-level', 'warn', '--roles', 'none', '--query-timeout', '1500', '--max-requests-per-minute', '0'], { alone: true });
      await crowd(server.base);
      const runaway = fetch(`${server.base}/Employee?${colleaguesFilter(2)}&$top=1`).then((r) => r.status, () => 'closed');
      await new Promise((resolve) => setTimeout(resolve, 300));
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0, server.stderr());
      assert.ok([504, 503, 'closed'].includes(await runaway));
    } finally {
      tmp.remove();
    }
  });
});

describe('stopping a server whose event loop is held', SQLITE_ONLY, () => {
  it('the supervisor kills a server process that has not stopped within its drain time after SIGTERM', { timeout: 60_000 }, async () => {
    const tmp = tempDir();
    try {
      // no query time limit: the statement holds the event loop, and the server cannot see the signal
      const server = await startCommand(['--db', join(tmp.dir, 'held.sqlite'), '--port', '0', '--log-level', 'warn', '--roles', 'none', '--query-timeout', '0', '--function-timeout', '1000', '--max-requests-per-minute', '0']);
      await crowd(server.base);
      const held = fetch(`${server.base}/Employee?${colleaguesFilter(2)}&$top=1`).then((r) => r.status, () => 'closed');
      await new Promise((resolve) => setTimeout(resolve, 500));
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 1);
      assert.match(server.stderr(), /did not stop within 8 s: killed/);
      assert.equal(await held, 'closed');
    } finally {
      tmp.remove();
    }
  });
});

describe('the query time limit on PostgreSQL', POSTGRES_ONLY, () => {
  it('stops a statement past the limit with QUERY_TIMEOUT (statement_timeout) and keeps the connection usable', async () => {
    const tmp = tempDir();
    const url = await testDatabase(join(tmp.dir, 'unused.sqlite'));
    const storage = await openStorage(databaseTarget(url), { poolSize: 2, queryTimeoutMs: 300 });
    try {
      await assert.rejects(storage.run('SELECT pg_sleep(3)'), (e: Error & { code?: string }) => e.code === 'QUERY_TIMEOUT' && /--query-timeout/.test(e.message));
      assert.equal(await storage.run('SELECT 1'), 1);
      // the schema sync lifts it for its own transaction (a conversion may take longer)
      await storage.transaction(async () => {
        await storage.run(storage.dialect.concurrency.noStatementTimeout ?? '');
        await storage.run('SELECT pg_sleep(0.6)');
      });
    } finally {
      await storage.close();
      tmp.remove();
    }
  });

  it('answers the three-level filter within the limit (planned without multiplying rows)', async () => {
    const demo = await openDemo({ queryTimeoutMs: 5_000 });
    try {
      const { status, body } = await demo.request(`/rest/Employee?${colleaguesFilter(3)}&$top=1`);
      assert.equal(status, 200);
      assert.equal(body.__COUNT, 0);
    } finally {
      await demo.close();
    }
  });

  it('a storage opened without a limit runs long statements', async () => {
    const tmp = tempDir();
    const storage = await testStorage(join(tmp.dir, 'unused.sqlite'));
    try {
      assert.equal(await storage.run('SELECT pg_sleep(0.4)'), 1);
    } finally {
      await storage.close();
      tmp.remove();
    }
  });
});

/** Crowds company 1 of a server started by the test (CROWD). */
async function crowd(base: string): Promise<void> {
  const res = await fetch(`${base}/Employee?$method=update`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(CROWD) });
  assert.equal(res.status, 200, await res.text());
}
