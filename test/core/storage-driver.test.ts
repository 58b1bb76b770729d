// The driver contract (src/storage/driver.ts): one suite, run on every engine's driver
// (storage-engines.ts). What the core relies on of transactions is the manager's suite.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConstraintError, type Connection, type Driver } from '../../src/storage/driver.js';
import { ENGINES, sleep, type TestDatabase } from '../support/storage-engines.js';

for (const engine of ENGINES) {
  describe(`driver contract: ${engine.name}`, () => {
    let db: TestDatabase;
    let d: Driver;
    const p = (n: number) => d.dialect.sql.placeholder(n);
    const q = (id: string) => d.dialect.sql.quote(id);
    const insert = () => `INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${p(1)}, ${p(2)})`;
    const ids = async (from: number, to: number) =>
      (await d.execute(`SELECT ${q('id')} FROM ${q('T')} WHERE ${q('id')} BETWEEN ${from} AND ${to} ORDER BY ${q('id')}`, [], { pluck: true })).rows;
    /** runs fn on a connection acquired for it, given back whatever happens */
    const using = async <T>(kind: 'write' | 'snapshot', fn: (c: Connection) => Promise<T>): Promise<T> => {
      const c = await d.acquire(kind);
      try {
        return await fn(c);
      } finally {
        d.release(c);
      }
    };

    before(async () => {
      db = await engine.open();
      d = db.driver;
      await d.execute(`CREATE TABLE ${q('T')} (${q('id')} INTEGER PRIMARY KEY, ${q('name')} TEXT UNIQUE)`);
    });
    after(() => db.cleanup());

    it('runs a statement on its own: a write counts the rows it changed, a read returns rows and their number', async () => {
      assert.deepEqual(await d.execute(insert(), [1, 'a']), { rows: [], rowCount: 1 });
      await d.execute(insert(), [2, 'b']);
      assert.deepEqual(await d.execute(`SELECT ${q('id')}, ${q('name')} FROM ${q('T')} ORDER BY ${q('id')}`), { rows: [{ id: 1, name: 'a' }, { id: 2, name: 'b' }], rowCount: 2 });
      assert.deepEqual(await d.execute(`UPDATE ${q('T')} SET ${q('name')} = ${q('name')} WHERE ${q('id')} > 0`), { rows: [], rowCount: 2 });
      assert.deepEqual(await d.execute(`SELECT ${q('id')} FROM ${q('T')} WHERE ${q('id')} = ${p(1)}`, [99]), { rows: [], rowCount: 0 });
    });

    it('runs an INSERT … RETURNING on its own, committed: a statement that writes goes to the writer, whatever it returns', async () => {
      assert.deepEqual(await d.execute(`${insert()} RETURNING ${q('id')} AS id`, [3, 'c']), { rows: [{ id: 3 }], rowCount: 1 });
      assert.deepEqual((await d.execute(`SELECT ${q('name')} FROM ${q('T')} WHERE ${q('id')} = ${p(1)}`, [3])).rows, [{ name: 'c' }]);
    });

    it('plucks the first column of each row, and leaves the statement as it was', async () => {
      const sql = `SELECT ${q('id')}, ${q('name')} FROM ${q('T')} WHERE ${q('id')} <= 3 ORDER BY ${q('id')}`;
      assert.deepEqual(await d.execute(sql, [], { pluck: true }), { rows: [1, 2, 3], rowCount: 3 });
      assert.deepEqual((await d.execute(sql)).rows.map((r) => r.id), [1, 2, 3]);
      await using('write', async (c) => assert.deepEqual((await c.execute(sql, [], { pluck: true })).rows, [1, 2, 3]));
    });

    it('returns the first row alone when only it is wanted, and none when there is none', async () => {
      const sql = `SELECT ${q('id')} FROM ${q('T')} WHERE ${q('id')} >= ${p(1)} ORDER BY ${q('id')}`;
      assert.deepEqual(await d.execute(sql, [2], { first: true }), { rows: [{ id: 2 }], rowCount: 1 });
      assert.deepEqual(await d.execute(sql, [99], { first: true }), { rows: [], rowCount: 0 });
      assert.deepEqual((await d.execute(sql, [1])).rows.length, 3); // the same statement reads every row again
    });

    it('translates a unique violation into a ConstraintError naming the table and column', async () => {
      const unique = (e: ConstraintError) => e instanceof ConstraintError && e.constraint === 'unique' && e.table === 'T' && e.column === 'name';
      await assert.rejects(d.execute(insert(), [4, 'a']), unique);
      await using('write', async (c) => {
        await c.begin('write');
        await assert.rejects(c.execute(insert(), [4, 'a']), unique);
        await c.rollback();
      });
    });

    it('commits and rolls back the transaction of a write connection, and its savepoints', async () => {
      await using('write', async (c) => {
        await c.begin('write');
        await c.execute(insert(), [10, 'x']);
        await c.savepoint('sp_a');
        await c.execute(insert(), [11, 'y']);
        await c.rollbackTo('sp_a');
        await c.releaseSavepoint('sp_a');
        await c.savepoint('sp_b');
        await c.execute(insert(), [12, 'z']);
        await c.releaseSavepoint('sp_b');
        await c.commit();
        await c.begin('write');
        await c.execute(insert(), [13, 'w']);
        await c.rollback();
      });
      assert.deepEqual(await ids(10, 13), [10, 12]);
    });

    it('lends the writer to one user at a time: another acquire, and a write on its own, wait for its release; a read does not', async (t) => {
      if (engine.concurrentWriters) return t.skip('writers hold rows, not the database: storage-contract shows a write waiting for the row');
      const c = await d.acquire('write');
      await c.begin('write');
      await c.execute(insert(), [20, 'held']);
      const waited: string[] = [];
      const second = d.acquire('write').then((c2) => {
        waited.push('acquired');
        d.release(c2);
      });
      const write = d.execute(insert(), [21, 'waits']).then(() => waited.push('written'));
      const read = await d.execute(`SELECT ${q('id')} FROM ${q('T')} WHERE ${q('id')} = 20`);
      if (engine.isolated) assert.deepEqual(read.rows, []); // not committed yet
      await sleep(20);
      assert.deepEqual(waited, []);
      await c.commit();
      d.release(c);
      await Promise.all([second, write]);
      assert.deepEqual(waited.sort(), ['acquired', 'written']);
      assert.deepEqual(await ids(20, 21), [20, 21]);
    });

    it('rolls back a transaction left open on a connection given back', async () => {
      await using('write', async (c) => {
        await c.begin('write');
        await c.execute(insert(), [30, 'left open']);
      });
      assert.deepEqual(await ids(30, 30), []);
      await using('write', async (c) => {
        await c.begin('write'); // the connection is usable again
        await c.rollback();
      });
    });

    it('lends snapshot connections whose reads see the state of their first read, afresh each time', async () => {
      const count = async (c: Connection) => Number((await c.execute(`SELECT COUNT(*) AS n FROM ${q('T')}`)).rows[0].n);
      const [first, later] = await using('snapshot', async (c) => {
        await c.begin('snapshot');
        const n = await count(c);
        await d.execute(insert(), [40, 'after the first read']);
        const again = await count(c);
        await c.commit();
        return [n, again];
      });
      assert.equal(later, engine.isolated ? first : first + 1);
      assert.equal(await using('snapshot', async (c) => {
        await c.begin('snapshot');
        const n = await count(c);
        await c.commit();
        return n;
      }), first + 1);
    });

    it('lends at most MAX_SNAPSHOT_CONNECTIONS snapshot connections at once: the next one waits for one to be given back', async (t) => {
      if (!engine.isolated) return t.skip('one shared connection');
      if (engine.concurrentWriters) return t.skip('one pool for every connection, bounded by its size');
      const { MAX_SNAPSHOT_CONNECTIONS } = await import('../../src/config/limits.js');
      const lent = await Promise.all(Array.from({ length: MAX_SNAPSHOT_CONNECTIONS }, () => d.acquire('snapshot')));
      let got: Connection | undefined;
      const waiting = d.acquire('snapshot').then((c) => (got = c));
      await sleep(10);
      assert.equal(got, undefined, 'waits while every connection is lent');
      d.release(lent[0]);
      await waiting;
      assert.equal(got, lent[0], 'the connection given back is handed to the waiting snapshot');
      for (const c of [...lent.slice(1), got]) d.release(c);
    });

    it('cancels nothing when no statement runs, and the connection goes on', async () => {
      await using('write', async (c) => {
        await c.begin('write');
        await c.cancel();
        await c.execute(insert(), [50, 'after cancel']);
        await c.rollback();
      });
    });

    it('tells retryable errors: a real lock conflict with another connection is, others are not', async (t) => {
      assert.equal(d.isRetryable(new Error('not an engine error')), false);
      assert.equal(d.isRetryable(await d.execute(insert(), [60, 'a']).catch((e: unknown) => e)), false); // a unique violation
      if (!db.another || !db.holdWriteLock) return t.skip('no second connection to conflict with');
      const other = db.another({ lockWaitMs: 20 });
      const unlock = db.holdWriteLock();
      try {
        const busy: unknown = await other.execute(insert(), [61, 'busy']).catch((e: unknown) => e);
        assert.ok(busy instanceof Error, 'the write failed');
        assert.ok(other.isRetryable(busy), `retryable: ${String(busy)}`);
      } finally {
        unlock();
      }
    });
  });
}

describe('the PostgreSQL pool', () => {
  it('fails a snapshot that waits for a turn longer than the wait time with 503 (STORAGE_UNAVAILABLE), and lends the turn once one is given back', async () => {
    const { PostgresDriver } = await import('../../src/storage/postgres.js');
    const { freshDatabase } = await import('../support/postgres-server.js');
    const database = await freshDatabase();
    // two connections: one for snapshots, one kept for what a request holding a snapshot needs
    const driver = new PostgresDriver(database.url, { poolSize: 2, waitMs: 200 });
    try {
      const first = await driver.acquire('snapshot');
      await assert.rejects(driver.acquire('snapshot'), (e: { code?: string; status?: number; message?: string }) =>
        e.code === 'STORAGE_UNAVAILABLE' && e.status === 503 && /no database connection came free for reading within 0.2 s/.test(String(e.message)));
      const waiting = driver.acquire('snapshot');
      await sleep(20);
      driver.release(first);
      driver.release(await waiting);
      // the connection kept from snapshots serves a statement meanwhile
      assert.equal((await driver.execute('SELECT 1 AS one')).rows[0].one, 1);
    } finally {
      await driver.close();
      await database.drop();
    }
  });
});
