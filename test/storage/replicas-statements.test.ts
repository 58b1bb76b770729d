// The replica router's pieces that need no server: which statements a standby may run, the global
// stamp's read turned into a parameter, and a value read after its caller began (FreshReading).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { postgresDialect } from '../../src/sql/dialect-postgres.js';
import { GLOBAL_STAMP_TABLE } from '../../src/storage/system-tables/tables.js';
import { FreshReading } from '../../src/storage/replicas/fresh-reading.js';
import { readsOnly, STAMP_VALUE, withPrimaryStamp } from '../../src/storage/replicas/statements.js';

const STAMP = postgresDialect.sql.quote(GLOBAL_STAMP_TABLE);

describe('statements on a replica', () => {
  it('lets plain reads go to a replica; writes, locking reads and functions that write stay on the primary', () => {
    assert.ok(readsOnly('SELECT "ID" FROM "Employee" WHERE "ID" = $1'));
    assert.ok(readsOnly('WITH k AS (SELECT 1) SELECT * FROM k'));
    assert.ok(readsOnly('SELECT "deletedAt", "updatedBy" FROM t'), 'a word inside a name is no write');
    for (const sql of [
      'UPDATE "Employee" SET x = 1',
      'SELECT * FROM "Employee" FOR UPDATE OF e',
      'SELECT * FROM t FOR KEY SHARE OF t',
      'SELECT * FROM t FOR NO KEY UPDATE',
      "SELECT nextval('s')",
      "SELECT pg_advisory_xact_lock(hashtext('x'))",
      "SELECT pg_notify('c', 'p')",
      'WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d',
      'SELECT * INTO copy FROM t',
      'CREATE TABLE x (a int)',
      'BEGIN',
      `SELECT last_value FROM ${STAMP}`,
      // (the primary's own locks: the answer caches' watch counts the writes under way there)
      'SELECT count(*) FROM pg_locks',
      postgresDialect.schema.globalStamp(STAMP).watch,
    ]) assert.equal(readsOnly(sql), false, sql);
  });

  it("turns every read of the global stamp's value into one more parameter, the text the same whatever the stamp", () => {
    const read = postgresDialect.schema.globalStamp(STAMP).read;
    const version = postgresDialect.concurrency.dataVersion(STAMP);
    assert.ok(read.includes(STAMP_VALUE) && version.includes(STAMP_VALUE), 'the dialect reads the stamp as the router expects');
    const page = `SELECT "ID", (${read}) AS s, ${version} AS v FROM "Item" WHERE "ID" > $1`;
    assert.ok(readsOnly(page));
    const a = withPrimaryStamp(page, [5], 41);
    const b = withPrimaryStamp(page, [5], 42);
    assert.equal(a.sql, b.sql);
    assert.ok(!a.sql.includes('last_value'));
    assert.equal((a.sql.match(/\$2::bigint/g) ?? []).length, 2);
    assert.deepEqual(a.params, [5, 41]);
    assert.deepEqual(withPrimaryStamp('SELECT 1', [], 7), { sql: 'SELECT 1', params: [] });
  });
});

describe('a value read after its caller began (FreshReading)', () => {
  it('shares one reading among callers waiting at once, and never answers a caller with one begun before it came', async () => {
    let readings = 0;
    const gates: (() => void)[] = [];
    const fresh = new FreshReading(async () => {
      const n = ++readings;
      await new Promise<void>((resolve) => gates.push(resolve));
      return n;
    });
    const first = fresh.get(); // reading 1 begins
    const second = fresh.get(); // 1 is under way: waits for 2
    const third = fresh.get(); // shares 2
    assert.equal(readings, 1);
    gates.shift()?.();
    assert.equal(await first, 1);
    await new Promise((r) => setImmediate(r));
    assert.equal(readings, 2);
    gates.shift()?.();
    assert.deepEqual([await second, await third], [2, 2]);
    const fourth = fresh.get(); // nothing under way: a reading of its own
    gates.shift()?.();
    assert.equal(await fourth, 3);
  });

  it('passes a failed reading to its callers, and reads again for the next', async () => {
    let fail = true;
    const fresh = new FreshReading(async () => {
      if (fail) throw new Error('down');
      return 'up';
    });
    await assert.rejects(fresh.get(), /down/);
    fail = false;
    assert.equal(await fresh.get(), 'up');
  });
});
