// Writes the database stops for a conflict with another transaction (PostgreSQL: a deadlock,
// 40P01, or a serialization failure, 40001). A REST write unit that runs no user code is run again
// from its reads on, and succeeds; one that runs user code (entity events) answers 409 with 7032
// and keeps nothing. The deadlock is made for real: a second connection of the test holds the
// second row the unit writes, and once the unit waits for it, asks for the first, which the unit
// holds.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import type { DatastoreWithClasses } from '../../src/index.js';
import { buildServer } from '../../src/http/server.js';
import { tempDir, openDemoProject, TEST_ENGINE, testDatabase } from '../support/helpers.js';

type Json = any;

describe('REST writes stopped by the database for a conflict', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: SQLite has one writer, so no two transactions can cross' }, () => {
  const tmp = tempDir();
  let url: string;
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;

  before(async () => {
    url = await testDatabase(join(tmp.dir, 'unused.sqlite'));
    ds = await openDemoProject({ db: url, poolSize: 4, roles: false });
    app = await buildServer(ds, { logLevel: 'silent' });
  });

  after(async () => {
    await app?.close();
    await ds?.close();
    tmp.remove();
  });

  const post = async (path: string, body: unknown) => {
    const res = await app.inject({ method: 'POST', url: path, payload: body as object });
    return { status: res.statusCode, body: JSON.parse(res.body) as Json };
  };
  const get = async (path: string) => JSON.parse((await app.inject({ url: path })).body) as Json;

  /**
   * Runs `send` (a write of `table` rows `key1` then `key2`) while a connection of the test holds
   * row `key2`, then asks for row `key1`: the two wait for each other, and the database stops the
   * write (the test's side waits longer before it looks for deadlocks, so the write is the one
   * stopped). The test's side changes nothing (the stamps stay), and commits.
   */
  async function crossed<T>(table: string, key1: unknown, key2: unknown, send: () => Promise<T>): Promise<T> {
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query("SET deadlock_timeout = '60s'");
      await other.query('BEGIN');
      await other.query(`UPDATE "${table}" SET "__stamp" = "__stamp" WHERE "ID" = $1`, [key2]);
      const pending = send();
      // until the write waits for the row held here
      for (let i = 0; ; i++) {
        const { rows } = await other.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
        if (rows[0].n > 0) break;
        assert.ok(i < 500, 'the write never waited for the row');
        await sleep(10);
      }
      await other.query(`UPDATE "${table}" SET "__stamp" = "__stamp" WHERE "ID" = $1`, [key1]);
      await other.query('COMMIT');
      return await pending;
    } finally {
      await other.end();
    }
  }

  it('runs an $atomic batch again, and saves it, when it runs no user code (Company has no events)', async () => {
    const [c1, c2] = (await get('/rest/Company?$orderby=ID&$top=2&$attributes=name')).__ENTITIES;
    const res = await crossed('Company', Number(c1.__KEY), Number(c2.__KEY), () =>
      post('/rest/Company?$method=update&$atomic=true', [
        { __KEY: c1.__KEY, __STAMP: c1.__STAMP, name: 'First, once crossed' },
        { __KEY: c2.__KEY, __STAMP: c2.__STAMP, name: 'Second, once crossed' },
      ]));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.__ENTITIES.map((e: Json) => [e.name, e.__STAMP]), [['First, once crossed', c1.__STAMP + 1], ['Second, once crossed', c2.__STAMP + 1]]);
    assert.equal((await get(`/rest/Company(${c2.__KEY})`)).name, 'Second, once crossed');
  });

  it('answers 409 (7032) and keeps nothing when the batch runs user code (Employee has events)', async () => {
    const [e1, e2] = (await get('/rest/Employee?$orderby=employeeNumber&$top=2&$attributes=lastName')).__ENTITIES;
    const res = await crossed('Employee', e1.__KEY, e2.__KEY, () =>
      post('/rest/Employee?$method=update&$atomic=true', [
        { __KEY: e1.__KEY, __STAMP: e1.__STAMP, lastName: 'Crossed' },
        { __KEY: e2.__KEY, __STAMP: e2.__STAMP, lastName: 'Crossed' },
      ]));
    assert.equal(res.status, 409, JSON.stringify(res.body));
    const errors = res.body.__ENTITIES.flatMap((e: Json) => e.__ERROR ?? []);
    assert.equal(errors[0].errCode, 7032);
    assert.match(errors[0].message, /conflict with another/);
    for (const e of [e1, e2]) {
      const stored = await get(`/rest/Employee(${e.__KEY})`);
      assert.equal(stored.lastName, e.lastName);
      assert.equal(stored.__STAMP, e.__STAMP);
    }
  });
});
