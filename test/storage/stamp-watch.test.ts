// On PostgreSQL, every statement that moves the global stamp holds the "in flight"
// lock to its transaction's end, and the watch counts exactly those holders (the lock taken
// before the stamp moves: a watch between the two would see the move with no write under way,
// and then the same text again once that write committed).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { postgresDialect } from '../../src/sql/dialect-postgres.js';
import { GLOBAL_STAMP_TABLE } from '../../src/storage/system-tables/tables.js';
import { freshDatabase } from '../support/postgres-server.js';

const sql = postgresDialect.schema.globalStamp(postgresDialect.sql.quote(GLOBAL_STAMP_TABLE));

describe('the stamp watch on PostgreSQL', () => {
  let db: { url: string; drop(): Promise<void> };
  let writer: pg.Client;
  let watcher: pg.Client;
  const watch = async () => String((await watcher.query(sql.watch)).rows[0].v);

  before(async () => {
    db = await freshDatabase();
    writer = new pg.Client({ connectionString: db.url });
    watcher = new pg.Client({ connectionString: db.url });
    await writer.connect();
    await watcher.connect();
    for (const s of sql.create) await writer.query(s);
    await writer.query('CREATE TABLE t (id int, stamp bigint)');
  });

  after(async () => {
    await writer?.end();
    await watcher?.end();
    await db?.drop();
  });

  for (const [name, text, params] of [
    ['bump', sql.bump, []],
    ['bumpReturning', sql.bumpReturning, []],
    ['set', sql.set, [40]],
    ['bumpExpression in an INSERT … RETURNING', `INSERT INTO t VALUES (1, 0), (2, 0) RETURNING id, ${sql.bumpExpression} AS s`, []],
  ] as const) {
    it(`${name}: counted while its transaction is under way, not after`, async () => {
      assert.match(await watch(), / 0$/);
      await writer.query('BEGIN');
      const { rows } = await writer.query(text, [...params]);
      assert.match(await watch(), / 1$/);
      if (name.startsWith('bumpExpression')) assert.equal(new Set(rows.map((r) => String(r.s))).size, 1, 'one move for the statement');
      await writer.query('COMMIT');
      assert.match(await watch(), / 0$/);
    });
  }

  it('takes the lock before it moves the stamp (the target list is evaluated in order)', () => {
    for (const text of [sql.bump, sql.bumpReturning, sql.set]) {
      assert.ok(text.indexOf('pg_advisory_xact_lock_shared') < text.search(/nextval|setval/), text);
    }
  });
});
