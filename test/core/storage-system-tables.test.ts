// The internal tables (src/storage/system-tables/) and the dialect hooks behind them (the
// global stamp, the schema lock, the catalog query), run on every engine (storage-engines.ts).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildModel } from '../../src/model/load-model.js';
import { syncSchema } from '../../src/storage/schema.js';
import { bumpGlobalStamp, readGlobalStamp } from '../../src/storage/system-tables/global-stamp.js';
import { lockSchema, readMeta, writeMeta } from '../../src/storage/system-tables/meta.js';
import { createSystemTables, tableColumns } from '../../src/storage/system-tables/tables.js';
import { TransactionManager } from '../../src/storage/transactions.js';
import { SET_ROW_MEMBERS } from '../../src/config/limits.js';
import { ENGINES, type TestDatabase } from '../support/storage-engines.js';

for (const engine of ENGINES) {
  describe(`system tables: ${engine.name}`, () => {
    let db: TestDatabase;
    let s: TransactionManager;

    before(async () => {
      db = await engine.open();
      s = new TransactionManager(db.driver);
      await s.transaction(() => createSystemTables(s));
    });
    after(() => db.cleanup());

    it('counts modifications with the global stamp, from 0, inside transactions and out', async () => {
      assert.equal(await readGlobalStamp(s), 0);
      await s.transaction(() => bumpGlobalStamp(s));
      await bumpGlobalStamp(s);
      assert.equal(await readGlobalStamp(s), 2);
      const snap = await s.snapshot();
      assert.equal(await readGlobalStamp(snap), 2); // a snapshot reads it too: a request's reads agree
      await snap.release();
    });

    it('stores file chunks and set members uncompressed on PostgreSQL, and creates the tables again unchanged', async (t) => {
      if (engine.name !== 'postgres') return t.skip('SQLite never compresses');
      await s.transaction(() => createSystemTables(s)); // a second start: nothing to change
      const storage = await s.column("SELECT attstorage FROM pg_attribute WHERE attname = 'data' AND attrelid IN ('\"__dataset_blob_chunks\"'::regclass, '\"__dataset_entity_set_chunks\"'::regclass)");
      assert.deepEqual(storage, ['e', 'e']);
    });

    it('records meta values, replacing them', async () => {
      assert.equal(await readMeta(s, 'k'), undefined);
      await writeMeta(s, 'k', 'one');
      await writeMeta(s, 'k', 'two');
      assert.equal(await readMeta(s, 'k'), 'two');
    });

    it('creates the internal tables once: created again, they keep what they hold', async () => {
      await s.transaction(() => createSystemTables(s));
      assert.equal(await readGlobalStamp(s), 2);
      assert.equal(await readMeta(s, 'k'), 'two');
    });

    it("adds to a database made before them the sessions' address and last use, and what each session's sets hold (filled in from the sets kept)", async () => {
      const q = s.dialect.sql.quote;
      // as a database of an older version has them: no such columns, no owners' table
      for (const index of ['__dataset_sessions_guest_used', '__dataset_sessions_address_used']) await s.exec(`DROP INDEX ${q(index)}`);
      for (const column of ['address', 'used']) await s.exec(`ALTER TABLE ${q('__dataset_sessions')} DROP COLUMN ${q(column)}`);
      await s.exec(`DROP TABLE ${q('__dataset_entity_set_owners')}`);
      const p = s.dialect.sql.placeholder;
      const insert = `INSERT INTO ${q('__dataset_entity_sets')} (${['id', 'dataClass', 'sorted', 'timeout', 'refreshed', 'size', 'text', 'owner', 'expires'].map((c) => q(c)).join(', ')}) VALUES (${[1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => p(i)).join(', ')})`;
      for (const [id, size, owner] of [['S1', 10, 'A'], ['S2', 5, 'A'], ['S3', 7, null]] as const) await s.run(insert, [id, 'Thing', 0, 1000, 0, size, 0, owner, 1000]);
      await s.transaction(() => createSystemTables(s));
      assert.deepEqual((await tableColumns(s, '__dataset_sessions')).slice(-2), ['address', 'used']);
      const owners = await s.all(`SELECT ${q('owner')} AS owner, ${q('members')} AS members FROM ${q('__dataset_entity_set_owners')} ORDER BY ${q('owner')}`);
      assert.deepEqual(owners.map((r) => [r.owner, Number(r.members)]), [['', 7 + SET_ROW_MEMBERS], ['A', 15 + 2 * SET_ROW_MEMBERS]]);
      await s.run(`DELETE FROM ${q('__dataset_entity_sets')}`);
      await s.run(`DELETE FROM ${q('__dataset_entity_set_owners')}`);
    });

    it('lists the columns of a table in order, and none for a missing table', async () => {
      assert.deepEqual(await tableColumns(s, '__dataset_meta'), ['key', 'value']);
      assert.deepEqual(await tableColumns(s, 'Missing'), []);
    });

    it('takes the schema lock inside a transaction, until it ends', async () => {
      await s.transaction(async () => {
        await lockSchema(s);
        await writeMeta(s, 'locked', 'yes');
      });
      await s.transaction(() => lockSchema(s)); // released with the transaction before
      assert.equal(await readMeta(s, 'locked'), 'yes');
    });

    it('brings the schema in line once when two instances start together on one database', async (t) => {
      if (!db.another) return t.skip('no second instance on one database');
      const model = buildModel({ name: 'S', dataClasses: [{ name: 'Thing', attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'n', type: 'string' }] }] });
      // a short lock wait: the two are in one process here, where a wait blocks the other too
      const [a, b] = [db.another({ lockWaitMs: 20 }), db.another({ lockWaitMs: 20 })].map((d) => new TransactionManager(d));
      await Promise.all([syncSchema(a, model), syncSchema(b, model)]);
      assert.deepEqual(await tableColumns(s, 'Thing'), ['ID', 'n', 'n__fold', '__stamp', '__timestamp']);
      assert.deepEqual(Object.keys(JSON.parse(await readMeta(s, 'schema') ?? '{}').tables), ['Thing']);
    });
  });
}
