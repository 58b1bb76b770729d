// A page of a selection is read in one statement with its count and the global stamp, and the
// count is kept with the data version its statement saw (datastore/reads/page-read.ts,
// count-cache.ts): whatever changes the data — a save through the core, a write on another
// connection (another process, another instance), a write earlier in the reading transaction,
// a rollback — the next page counts what is there. On both engines.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { coreOf, Datastore, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { readPageRows } from '../../src/datastore/reads/page-read.js';
import { accessOf, type EntitySelection } from '../../src/datastore/selections/selection.js';
import { buildModel } from '../../src/model/load-model.js';
import { Policy } from '../../src/permissions/policy.js';
import { buildServer } from '../../src/http/server.js';
import { openStorage, databaseTarget } from '../../src/storage/open.js';
import { tempDir, testDatabase, TEST_ENGINE } from '../support/helpers.js';

const MODEL = {
  name: 'Pages',
  dataClasses: [
    {
      name: 'Box',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'label', type: 'string', indexed: true },
        { name: 'size', type: 'long' },
      ],
    },
  ],
};

describe('a page with its count, in one statement', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let db: string;
  /** a write on a connection of its own, as another process would make it */
  let elsewhere: (sql: string) => Promise<void>;
  let closeElsewhere: () => Promise<void>;

  const boxes = (): EntitySelection => ds.Box.query('label begin :1', 'box') as EntitySelection;
  const page = async (start = 0, n = 10) => {
    const r = await readPageRows(boxes(), start, n, []);
    return { count: r.count, rows: r.rows.length, stamp: r.globalStamp };
  };
  const add = async (label: string) => {
    const e = ds.Box.new();
    e.set('label', label);
    e.set('size', 1);
    await e.save();
    return e;
  };

  before(async () => {
    db = await testDatabase(join(tmp.dir, 'pages.sqlite'));
    ds = await Datastore.open(buildModel(MODEL), await openStorage(databaseTarget(db), { poolSize: 4 }));
    for (let i = 0; i < 5; i++) await add(`box ${i}`);
    if (TEST_ENGINE === 'sqlite') {
      const other = new Database(db);
      other.pragma('busy_timeout = 5000');
      elsewhere = async (sql) => void other.exec(sql);
      closeElsewhere = async () => void other.close();
    } else {
      const other = new pg.Client({ connectionString: db });
      await other.connect();
      elsewhere = async (sql) => void (await other.query(sql));
      closeElsewhere = () => other.end();
    }
  });
  after(async () => {
    await closeElsewhere();
    await ds.close();
    tmp.remove();
  });

  it('counts again after a save through the core, and reads the new global stamp', async () => {
    const before = await page();
    assert.deepEqual([before.count, before.rows], [5, 5]);
    assert.deepEqual(await page(), before, 'read again, the same');
    await add('box 5');
    const after = await page();
    assert.equal(after.count, 6);
    assert.ok(after.stamp > before.stamp, 'the save moved the global stamp');
  });

  it('counts again after a write on another connection, which moves no global stamp', async () => {
    const before = await page();
    await elsewhere(`INSERT INTO "Box" ("label", "label__fold", "size", "__stamp", "__timestamp") VALUES ('box x', 'box x', 1, 1, 0)`);
    const after = await page();
    assert.equal(after.count, before.count + 1);
    assert.equal(after.stamp, before.stamp, 'a write outside the datastore does not move its stamp: the count is right all the same');
    await elsewhere(`DELETE FROM "Box" WHERE "label" = 'box x'`);
    assert.equal((await page()).count, before.count);
  });

  it('counts the reading transaction\'s own writes, and what a rollback leaves', async () => {
    const before = (await page()).count;
    await assert.rejects(
      ds.transaction(async () => {
        await add('box in transaction');
        assert.equal((await page()).count, before + 1, 'inside: its own write counted');
        await add('box in transaction 2');
        assert.equal((await page()).count, before + 2);
        throw new Error('roll back');
      }),
      /roll back/,
    );
    assert.equal((await page()).count, before, 'rolled back: counted without them');
  });

  it('does not keep a count read before a rollback, on the connection that wrote (a transaction, a savepoint)', async () => {
    const before = (await page()).count;
    await assert.rejects(
      ds.transaction(async () => {
        await add('box rolled back');
        assert.equal((await page()).count, before + 1);
        throw new Error('roll back');
      }),
      /roll back/,
    );
    // the next transaction reads on the writing connection again, where nothing else moved
    await ds.transaction(async () => {
      assert.equal((await page()).count, before, 'the next transaction counts what the rollback left');
      await assert.rejects(
        ds.transaction(async () => {
          await add('box in a savepoint');
          assert.equal((await page()).count, before + 1);
          throw new Error('undo the savepoint');
        }),
        /undo the savepoint/,
      );
      assert.equal((await page()).count, before, 'after the savepoint rolled back');
    });
  });

  it('does not give a writing transaction\'s count to a reader beside it', async () => {
    const before = (await page()).count;
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => (wrote = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const writing = ds.transaction(async () => {
      await add('box not yet committed');
      assert.equal((await page()).count, before + 1);
      wrote();
      await held;
      throw new Error('roll back');
    });
    await written;
    try {
      assert.equal((await page()).count, before, 'outside the transaction: its rows are not there');
    } finally {
      release();
    }
    await assert.rejects(writing, /roll back/);
    assert.equal((await page()).count, before);
  });

  it('answers an empty page past the end with the count and the stamp', async () => {
    const full = await page();
    const past = await page(100, 10);
    assert.deepEqual(past, { count: full.count, rows: 0, stamp: full.stamp });
    const none = await readPageRows(ds.Box.query('label = :1', 'nothing') as EntitySelection, 0, 10, []);
    assert.deepEqual([none.count, none.rows.length], [0, 0]);
  });

  it('reads an empty page again when rows came in between it and its count: the stamp never names a state whose rows the answer lacks', async () => {
    const s = ds.Box.query('label = :1', 'late box') as EntitySelection;
    const reader = accessOf(s).reader as { arrays: (...args: unknown[]) => Promise<unknown[][]> };
    const arrays = reader.arrays;
    let pages = 0;
    // the first page statement finds nothing; a box is saved before the count is read
    reader.arrays = async function (this: unknown, ...args: unknown[]) {
      const rows = await arrays.apply(this, args);
      if (String(args[0]).includes('late box') || JSON.stringify(args[1] ?? []).includes('late box')) {
        if (pages++ === 0) await add('late box');
      }
      return rows;
    };
    try {
      const read = await readPageRows(s, 0, 10, []);
      assert.deepEqual([read.rows.length, read.count], [1, 1]);
      assert.equal(read.globalStamp, (await page()).stamp);
      assert.equal(pages, 2, 'the page was read twice');
    } finally {
      reader.arrays = arrays;
    }
  });

  it('keeps counts apart for callers that see different rows', async () => {
    const core = coreOf(ds);
    const box = core.model.dataClassesByName.get('Box')!;
    const small = { reader: core.storage, grants: Policy.ALL, restrict: () => ({ kind: 'compare' as const, path: { via: [], attr: box.attributesByName.get('ID') as never }, op: '<=' as const, value: 2 }) };
    const all = (await page()).count;
    const seen = await readPageRows(core.classOf(box).selectWhere(null, small), 0, 10, []);
    assert.equal(seen.count, 2, 'the row filter counted');
    assert.equal((await page()).count, all, 'and the unfiltered count is its own');
  });

  it('answers __COUNT over HTTP as it changes, page after page', async () => {
    const app = await buildServer(ds, { logLevel: 'silent' });
    try {
      const get = async () => (await app.inject({ url: '/rest/Box?$filter=%22label%20begin%20box%22&$top=2' })).json() as { __COUNT: number; __SENT: number; __GlobalStamp: number };
      const first = await get();
      assert.equal(first.__SENT, 2);
      await add('box http');
      const second = await get();
      assert.equal(second.__COUNT, first.__COUNT + 1);
      assert.equal(second.__GlobalStamp, first.__GlobalStamp + 1);
    } finally {
      await app.close();
    }
  });
});
