// Read replicas (--db-replica) against a real streaming replica: a primary and a hot standby
// started here (replicas-cluster.ts: PostgreSQL's own base backup, standby.signal and
// primary_conninfo). Reads outside a transaction go to the standby once it has replayed the
// primary's position at the read's start, everything else to the primary; the global stamp is
// the primary's; a standby that is down, or lags past the bound, is left out and reads fall back
// to the primary; two instances on the primary and the replica see each other's writes, sets and
// sessions at once.
// (test:quick leaves this file out: it starts a PostgreSQL primary and a standby of its own.)

import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../src/http/server.js';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { postgresDialect } from '../../src/sql/dialect-postgres.js';
import { GLOBAL_STAMP_TABLE } from '../../src/storage/system-tables/tables.js';
import { openStorage, databaseTarget, StorageConfigError } from '../../src/storage/open.js';
import { ReplicatedDriver } from '../../src/storage/replicas/router.js';
import { TransactionManager } from '../../src/storage/transactions.js';
import { injected, openDemoProject, type Answer } from '../support/helpers.js';
import { clusterUnavailable, startReplicaCluster, type ReplicaCluster } from './replicas-cluster.js';

type Json = any;
const unavailable = clusterUnavailable();
const STAMP = postgresDialect.sql.quote(GLOBAL_STAMP_TABLE);

/** Runs `probe` until it returns true (a standby replays within a few hundred ms here), else fails saying `what`. */
async function eventually(what: string, probe: () => Promise<boolean>, ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await probe()) return;
    await sleep(50);
  }
  assert.fail(`${what}: not within ${ms} ms`);
}

describe('read replicas on a real streaming standby', { skip: unavailable ?? false }, () => {
  let cluster: ReplicaCluster;
  let standby: pg.Client;

  before(async () => {
    cluster = await startReplicaCluster();
    standby = new pg.Client({ connectionString: cluster.standbyUrl });
    await standby.connect();
  });

  after(async () => {
    await standby?.end();
    await cluster?.stop();
  });

  describe('the router', () => {
    let driver: ReplicatedDriver;
    let storage: TransactionManager;

    before(async () => {
      driver = new ReplicatedDriver(cluster.primaryUrl, { urls: [cluster.standbyUrl] }, { poolSize: 4 });
      await driver.check();
      storage = new TransactionManager(driver);
      await storage.exec('CREATE TABLE items (id int PRIMARY KEY, name text)');
      await storage.exec(`CREATE SEQUENCE ${STAMP} AS bigint START WITH 1`);
      await storage.run("INSERT INTO items VALUES (1, 'one')");
    });

    after(() => driver?.close());

    it('sends a read on its own, and a read snapshot, to the standby once it has replayed the primary', async () => {
      await eventually('a read answered by the replica', async () => {
        const before = driver.served.replica;
        const rows = await storage.all('SELECT name FROM items WHERE id = $1', [1]);
        assert.deepEqual(rows, [{ name: 'one' }]);
        return driver.served.replica > before;
      });
      const before = driver.served.replica;
      const snapshot = await storage.snapshot();
      try {
        assert.deepEqual(await snapshot.column('SELECT id FROM items'), [1]);
      } finally {
        await snapshot.release();
      }
      assert.equal(driver.served.replica, before + 1);
    });

    it('keeps writes, transactions, locking reads and sequences on the primary (the standby would refuse them)', async () => {
      const before = { ...driver.served };
      assert.deepEqual(await storage.all('SELECT id FROM items WHERE id = 1 FOR UPDATE'), [{ id: 1 }]);
      assert.equal(Number((await storage.get("SELECT nextval('items_seq_test') AS v").catch(() => ({ v: -1 })))?.v), -1); // no such sequence: the primary's error, not the standby's
      await storage.transaction(async () => {
        await storage.run("INSERT INTO items VALUES (2, 'two')");
        assert.equal((await storage.all('SELECT id FROM items')).length, 2); // its own write: the primary
      });
      assert.deepEqual(driver.served, before, 'none of them was a read outside a transaction');
    });

    it('reads a write at once after its commit, on the primary while the standby has not replayed it', async () => {
      for (let i = 10; i < 40; i++) {
        await storage.run('INSERT INTO items VALUES ($1, $2)', [i, `n${i}`]);
        const row = await storage.get('SELECT name FROM items WHERE id = $1', [i]);
        assert.deepEqual(row, { name: `n${i}` }, `row ${i} read right after its commit`);
      }
    });

    it("shows the primary's global stamp on a replica read, never the standby's sequence (logged 32 ahead)", async () => {
      for (let i = 0; i < 3; i++) await storage.run(`SELECT nextval('${STAMP}')`);
      const read = postgresDialect.schema.globalStamp(STAMP).read;
      await eventually('the stamp read by the replica', async () => {
        const before = driver.served.replica;
        assert.equal(Number((await storage.get(read))?.v), 3);
        return driver.served.replica > before;
      });
      const onStandby = Number((await standby.query(`SELECT last_value FROM ${STAMP}`)).rows[0].last_value);
      assert.ok(onStandby > 3, `the standby's own sequence shows ${onStandby}`);
    });

    it('leaves out a standby that is down (reads go to the primary) and takes it back once it is up', async () => {
      await standby.end();
      await cluster.standbyDown();
      await driver.checkReplicas();
      assert.equal(driver.replicaStates()[0].up, false);
      const before = driver.served.primary;
      assert.equal((await storage.all('SELECT id FROM items')).length, 32);
      assert.equal(driver.served.primary, before + 1);
      await cluster.standbyUp();
      standby = new pg.Client({ connectionString: cluster.standbyUrl });
      await standby.connect();
      await eventually('the standby back in use', async () => {
        await driver.checkReplicas();
        const before = driver.served.replica;
        await storage.all('SELECT id FROM items');
        return driver.served.replica > before;
      });
    });

    it('leaves out a standby that lags past --db-replica-max-lag until it catches up', async () => {
      const lagging = new ReplicatedDriver(cluster.primaryUrl, { urls: [cluster.standbyUrl], maxLagMs: 300 }, { poolSize: 2 });
      await lagging.check();
      try {
        await standby.query('SELECT pg_wal_replay_pause()');
        await storage.run("INSERT INTO items VALUES (100, 'while paused')");
        await eventually('the standby left out for its lag', async () => {
          await lagging.checkReplicas();
          return lagging.replicaStates()[0].lagMs > 300;
        });
        const before = { ...lagging.served };
        assert.deepEqual(await new TransactionManager(lagging).get('SELECT name FROM items WHERE id = 100'), { name: 'while paused' });
        assert.deepEqual(lagging.served, { replica: before.replica, primary: before.primary + 1 });
      } finally {
        await standby.query('SELECT pg_wal_replay_resume()');
      }
      await eventually('the standby caught up and taken back', async () => {
        await lagging.checkReplicas();
        return lagging.replicaStates()[0].lagMs === 0;
      });
      await lagging.close();
    });
  });

  describe('two instances of a project on the primary, each with the replica', () => {
    const reads = { replica: 0, primary: 0 };
    let a: { ds: DatastoreWithClasses; app: FastifyInstance };
    let b: { ds: DatastoreWithClasses; app: FastifyInstance };
    const on = (x: { app: FastifyInstance }, url: string, method?: 'GET' | 'POST', body?: unknown, headers?: Record<string, string>): Promise<Answer> => injected(x.app, url, method, body, headers);

    before(async () => {
      const url = new URL(cluster.primaryUrl);
      url.pathname = '/demo';
      const admin = new pg.Client({ connectionString: cluster.primaryUrl });
      await admin.connect();
      await admin.query("CREATE DATABASE demo ENCODING 'UTF8' TEMPLATE template0");
      await admin.end();
      const replica = new URL(cluster.standbyUrl);
      replica.pathname = '/demo';
      const open = async () => {
        const ds = await openDemoProject({ db: url.href, roles: false, poolSize: 4, replicas: { urls: [replica.href], onRead: (by) => reads[by]++ } });
        return { ds, app: await buildServer(ds, { logLevel: 'silent' }) };
      };
      a = await open();
      b = await open();
    });

    after(async () => {
      for (const x of [a, b]) {
        await x?.app.close();
        await x?.ds.close();
      }
    });

    it("answers pages from the replica with the primary's global stamp", async () => {
      const primary = new pg.Client({ connectionString: new URL('/demo', cluster.primaryUrl).href });
      await primary.connect();
      try {
        await eventually('a page answered by the replica', async () => {
          const before = reads.replica;
          const page = await on(a, '/rest/Employee?$top=3&$orderby=ID');
          assert.equal(page.status, 200, JSON.stringify(page.body));
          const stamp = Number((await primary.query(`SELECT COALESCE(pg_sequence_last_value('${STAMP}'::regclass), 0) AS v`)).rows[0].v);
          assert.equal(page.body.__GlobalStamp, stamp);
          return reads.replica > before;
        });
      } finally {
        await primary.end();
      }
    });

    it('reads on one instance a write made on the other, at once', async () => {
      const staff: Json = (await on(a, '/rest/Employee?$top=1&$orderby=ID&$attributes=lastName')).body.__ENTITIES[0];
      let stamp = staff.__STAMP as number;
      for (let i = 0; i < 10; i++) {
        const saved = await on(a, '/rest/Employee?$method=update', 'POST', { __KEY: staff.__KEY, __STAMP: stamp, lastName: `Renamed ${i}` });
        assert.equal(saved.status, 200, JSON.stringify(saved.body));
        stamp = saved.body.__STAMP;
        const read = await on(b, `/rest/Employee(${staff.__KEY})?$attributes=lastName`);
        assert.equal(read.body.lastName, `Renamed ${i}`);
      }
    });

    it('pages on one instance an entity set made on the other, with the session it belongs to', async () => {
      const made = await on(a, '/rest/Employee?$filter="salary > 60000"&$orderby=ID&$method=entityset&$top=2');
      assert.equal(made.status, 200, JSON.stringify(made.body));
      const cookie = String(made.headers['set-cookie'] ?? '').split(';')[0];
      const set = String(made.body.__ENTITYSET).split('/').pop();
      const paged = await on(b, `/rest/Employee/$entityset/${set}?$top=2&$attributes=ID`, 'GET', undefined, cookie ? { cookie } : {});
      assert.equal(paged.status, 200, JSON.stringify(paged.body));
      assert.equal(paged.body.__COUNT, made.body.__COUNT);
    });
  });
});

describe('--db-replica refused where it cannot serve', () => {
  it('refuses replicas of a SQLite database, and a replica named by anything but a postgres:// URL (its password not shown)', async () => {
    await assert.rejects(openStorage(databaseTarget(':memory:'), { replicas: { urls: ['postgres://127.0.0.1/x'] } }), (e: Error) => e instanceof StorageConfigError && /--db must be a postgres:\/\/ URL/.test(e.message));
    await assert.rejects(openStorage(databaseTarget('postgres://127.0.0.1:1/x'), { replicas: { urls: ['mysql://u:secret@h/x'] } }), (e: Error) => e instanceof StorageConfigError && /--db-replica/.test(e.message) && !e.message.includes('secret'));
  });
});

if (unavailable) it(`read replicas: skipped — ${unavailable}`, { skip: unavailable }, () => {});
