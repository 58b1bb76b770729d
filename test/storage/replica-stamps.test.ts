// A replica's answer never shows data newer than its stamp. (Found in review: the primary's stamp
// was read before the replica's read, so a collection ETag W/"g<stamp>-…" named two states of the
// data, and If-None-Match answered 304 over a change.)

import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import net from 'node:net';
import pg from 'pg';
import { postgresDialect } from '../../src/sql/dialect-postgres.js';
import { GLOBAL_STAMP_TABLE } from '../../src/storage/system-tables/tables.js';
import { ReplicatedDriver } from '../../src/storage/replicas/router.js';
import { TransactionManager } from '../../src/storage/transactions.js';
import { clusterUnavailable, startReplicaCluster, type ReplicaCluster } from './replicas-cluster.js';

const unavailable = clusterUnavailable();
const STAMP = postgresDialect.sql.quote(GLOBAL_STAMP_TABLE);
const READ = `SELECT count(*)::int AS n, (SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS v FROM ${STAMP}) AS s FROM items`;

describe('replica reads and the stamp', { skip: unavailable ?? false }, () => {
  let cluster: ReplicaCluster;
  let primary: pg.Client;
  let driver: ReplicatedDriver;
  let storage: TransactionManager;

  before(async () => {
    cluster = await startReplicaCluster();
    primary = new pg.Client({ connectionString: cluster.primaryUrl });
    await primary.connect();
    // no monitor (check() would start one): the replicas are checked by hand
    driver = new ReplicatedDriver(cluster.primaryUrl, { urls: [cluster.standbyUrl] }, { poolSize: 4 });
    await driver.checkReplicas();
    storage = new TransactionManager(driver);
    await storage.exec('CREATE TABLE items (id int PRIMARY KEY)');
    await storage.exec(`CREATE SEQUENCE ${STAMP} AS bigint START WITH 1`);
    await storage.run('SELECT nextval($1)', [STAMP]);
  });

  after(async () => {
    await driver?.close();
    await primary?.end();
    await cluster?.stop();
  });

  it('never answers data newer than its stamp', async () => {
    let first: { n: number; s: number } | undefined;
    for (let i = 0; i < 100 && driver.served.replica === 0; i++) {
      await driver.checkReplicas();
      first = (await storage.get(READ)) as { n: number; s: number };
      await sleep(50);
    }
    assert.ok(driver.served.replica > 0, 'a read answered by the replica');
    // a write on the primary that moves the stamp (another instance's, or this client's own)
    await primary.query('BEGIN');
    await primary.query(`SELECT nextval('${STAMP}')`);
    await primary.query('INSERT INTO items VALUES (1)');
    await primary.query('COMMIT');
    const { rows } = await primary.query(`SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::float8 AS lsn`);
    // the replica replays it; someone (another read's #replicaFor) asks it its position
    for (let i = 0; i < 100 && (await driver.replicas[0].replayedNow()) < Number(rows[0].lsn); i++) await sleep(50);
    const second = (await storage.get(READ)) as { n: number; s: number };
    assert.equal(second.n, first!.n + 1, 'the write is seen');
    assert.ok(second.s > first!.s, `the data changed (${first!.n} → ${second.n} rows) but the stamp did not (${first!.s} → ${second.s}): ETag W/"g${second.s}-…" names both`);
  });

  it('never answers a snapshot newer than its stamp', async () => {
    const first = (await storage.get(READ)) as { n: number; s: number };
    // the position read (the stamp of the snapshot to come) waits while a write commits and replays
    const position = driver.acquire('snapshot');
    await primary.query('BEGIN');
    await primary.query(`SELECT nextval('${STAMP}')`);
    await primary.query(`INSERT INTO items VALUES (${first.n + 10})`);
    await primary.query('COMMIT');
    const conn = await position;
    await sleep(300); // replayed meanwhile
    try {
      await conn.begin('snapshot');
      const { rows } = await conn.execute(READ);
      const second = rows[0] as { n: number; s: number };
      if (second.n > first.n) assert.ok(second.s > first.s, `the snapshot shows the write (${first.n} → ${second.n} rows) with the stamp of before (${first.s} → ${second.s})`);
    } finally {
      await conn.commit();
      driver.release(conn);
    }
  });
});

describe('a replica gone silent', { skip: unavailable ?? false }, () => {
  let cluster: ReplicaCluster;
  let proxy: net.Server;
  let silent = false;
  const sockets: net.Socket[] = [];

  before(async () => {
    cluster = await startReplicaCluster();
    const target = new URL(cluster.standbyUrl);
    proxy = net.createServer((client) => {
      const server = net.connect(Number(target.port), target.hostname);
      sockets.push(client, server);
      // (silent: what either side sends is dropped, as by a host gone off the network)
      client.on('data', (d) => { if (!silent) server.write(d); });
      server.on('data', (d) => { if (!silent) client.write(d); });
      client.on('error', () => {});
      server.on('error', () => {});
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  });

  after(async () => {
    for (const s of sockets) s.destroy();
    proxy?.close();
    await cluster?.stop();
  });

  it('is left out within a bound, and reads go on on the primary', async () => {
    const url = new URL(cluster.standbyUrl);
    url.hostname = '127.0.0.1';
    url.port = String((proxy.address() as net.AddressInfo).port);
    const driver = new ReplicatedDriver(cluster.primaryUrl, { urls: [url.href] }, { poolSize: 2 });
    try {
      await driver.checkReplicas();
      assert.equal(driver.replicas[0].up, true);
      silent = true;
      const began = Date.now();
      await Promise.race([driver.checkReplicas(), sleep(8000)]);
      assert.equal(driver.replicas[0].up, false, 'left out');
      assert.ok(Date.now() - began < 5000);
      assert.deepEqual((await driver.execute('SELECT 1 AS one')).rows, [{ one: 1 }]);
    } finally {
      for (const s of sockets) s.destroy();
      await Promise.race([driver.close(), sleep(2000)]);
    }
  });
});
