// The suite's data set generator (bench/suite/generate.ts): 20,000 items written straight into the
// database read back through the datastore core and REST exactly as itemValues and
// categoryValues say, every row's hidden columns as a save through the server writes them (the
// fold by fold() itself), and the next entity created through the core gets the next key. On
// SQLite, and on PostgreSQL under test/run.ts (testDatabase).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { GENERATED_AT, generateProject, type Generated } from '../../bench/suite/generate.js';
import { CATEGORIES, categoryValues, itemValues, keysWithPrefix, prefixOf } from '../../bench/suite/model.js';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { openProject } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { fold } from '../../src/util/fold.js';
import { tempDir, TEST_ENGINE, testDatabase } from '../support/helpers.js';

const ROWS = 20_000;

interface RawItem {
  ID: number;
  name: string;
  price: number;
  qty: number;
  created: unknown;
  categoryID: number;
  name__fold: string;
  __stamp: number;
  __timestamp: number;
}

/** Every item and category as stored, by SQL (not through the core). */
async function rawRows(g: Generated): Promise<{ items: RawItem[]; categories: Record<string, unknown>[]; tables: Record<string, unknown>[] }> {
  if (TEST_ENGINE === 'sqlite') {
    const db = new Database(g.db, { readonly: true });
    try {
      return {
        items: db.prepare('SELECT * FROM "Item" ORDER BY "ID"').all() as RawItem[],
        categories: db.prepare('SELECT * FROM "Category" ORDER BY "ID"').all() as Record<string, unknown>[],
        tables: db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_stat%' ORDER BY name").all() as Record<string, unknown>[],
      };
    } finally {
      db.close();
    }
  }
  const c = new pg.Client({ connectionString: g.db, types: { getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 20 ? Number : pg.types.getTypeParser(oid, format ?? 'text')) } as pg.CustomTypesConfig });
  await c.connect();
  try {
    return {
      items: (await c.query<RawItem>('SELECT * FROM "Item" ORDER BY "ID"')).rows,
      categories: (await c.query('SELECT * FROM "Category" ORDER BY "ID"')).rows,
      tables: (await c.query("SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname")).rows,
    };
  } finally {
    await c.end();
  }
}

describe(`the suite's data set generator (${TEST_ENGINE})`, () => {
  const tmp = tempDir('dataset-rest-generate-');
  let g: Generated;
  let ds: DatastoreWithClasses;
  const db = (): Promise<string> => testDatabase(join(tmp.dir, 'unused.sqlite'));

  before(async () => {
    g = await generateProject(join(tmp.dir, 'p'), ROWS, TEST_ENGINE === 'postgres' ? { pgUrl: await db() } : {});
    ds = await openProject(g.dir, { db: TEST_ENGINE === 'postgres' ? g.db : undefined, roles: false });
  });
  after(async () => {
    await ds?.close();
    tmp.remove();
  });

  it('reports what it made', () => {
    assert.equal(g.rows, ROWS);
    assert.equal(g.fromCache, false);
    assert.ok(g.ms > 0 && g.rowsPerSecond > 0 && g.bytes > 0);
    if (TEST_ENGINE === 'sqlite') assert.equal(g.db, join(g.dir, 'data', 'data.sqlite'));
  });

  it('stores every row as a save through the server would: values, fold, stamp, time', async () => {
    const { items, categories } = await rawRows(g);
    assert.equal(items.length, ROWS);
    for (let n = 0; n < ROWS; n++) {
      const r = items[n];
      const v = itemValues(n);
      const created = r.created instanceof Date ? r.created.toISOString() : r.created;
      assert.deepEqual(
        { ID: Number(r.ID), name: r.name, price: r.price, qty: r.qty, created, categoryID: r.categoryID, name__fold: r.name__fold, __stamp: Number(r.__stamp), __timestamp: Number(r.__timestamp) },
        { ID: n + 1, name: v.name, price: v.price, qty: v.qty, created: v.created, categoryID: v.categoryID, name__fold: fold(v.name), __stamp: 1, __timestamp: GENERATED_AT },
        `item ${n + 1}`,
      );
    }
    assert.equal(categories.length, CATEGORIES);
    for (let n = 0; n < CATEGORIES; n++) {
      const c = categoryValues(n);
      const r = categories[n];
      assert.deepEqual(
        { ID: Number(r.ID), name: r.name, rate: r.rate, name__fold: r.name__fold, __stamp: Number(r.__stamp), __timestamp: Number(r.__timestamp) },
        { ID: n + 1, name: c.name, rate: c.rate, name__fold: fold(c.name), __stamp: 1, __timestamp: GENERATED_AT },
        `category ${n + 1}`,
      );
    }
  });

  it('leaves the schema as the server made it (every index back, with its own definition)', async () => {
    const made = tempDir('dataset-rest-generate-empty-');
    try {
      // the same project generated empty: the schema openProject makes, untouched
      const empty = await generateProject(join(made.dir, 'p'), 0, TEST_ENGINE === 'postgres' ? { pgUrl: await db() } : {});
      assert.deepEqual((await rawRows(g)).tables, (await rawRows(empty)).tables);
    } finally {
      made.remove();
    }
  });

  it('reads back through the core: counts, a few keys, the category of an item', async () => {
    assert.equal(await ds.Item.all().length, ROWS);
    assert.equal(await ds.Category.all().length, CATEGORIES);
    for (const key of [1, 2, 777, 12_345, ROWS]) {
      const e = await ds.Item.get(key);
      assert.ok(e, `Item(${key})`);
      const v = itemValues(key - 1);
      assert.deepEqual(
        { name: e.get('name'), price: e.get('price'), qty: e.get('qty'), created: (e.get('created') as Date).toISOString(), stamp: e.getStamp(), timestamp: e.getTimeStamp().getTime() },
        { name: v.name, price: v.price, qty: v.qty, created: v.created, stamp: 1, timestamp: GENERATED_AT },
      );
      const category = await e.related('category');
      assert.ok(category && 'getKey' in category);
      assert.equal(category.getKey(), v.categoryID);
      assert.equal(category.get('name'), categoryValues(v.categoryID - 1).name);
      assert.equal(category.get('rate'), categoryValues(v.categoryID - 1).rate);
    }
    const c = await ds.Category.get(CATEGORIES);
    assert.equal(c?.get('name'), categoryValues(CATEGORIES - 1).name);
  });

  it('answers a name prefix query (the fold index) with the items keysWithPrefix names', async () => {
    for (const n of [0, 5, 4321, ROWS - 1]) {
      const prefix = prefixOf(n);
      const expected = keysWithPrefix(prefix, ROWS);
      const found = ds.Item.query('name begin :1', prefix);
      assert.equal(await found.length, expected.length, prefix);
      assert.deepEqual(Array.from(await found.orderBy('ID').keys() as Iterable<unknown>, Number), expected, prefix);
      // the fold makes it case- and accent-blind, as for a row saved through the server
      assert.equal(await ds.Item.query('name begin :1', prefix.toUpperCase()).length, expected.length);
    }
  });

  it('answers REST with the category expanded', async () => {
    const app = await buildServer(ds, { logLevel: 'silent' });
    try {
      const res = await app.inject({ method: 'GET', url: '/rest/Item(12345)?$expand=category' });
      assert.equal(res.statusCode, 200);
      const body = JSON.parse(res.body) as { __KEY: string; name: string; created: string; category: { __KEY: string; name: string } };
      const v = itemValues(12_344);
      assert.equal(body.name, v.name);
      assert.equal(body.created, v.created);
      assert.equal(body.category.__KEY, String(v.categoryID));
      assert.equal(body.category.name, categoryValues(v.categoryID - 1).name);
    } finally {
      await app.close();
    }
  });

  it('gives the next entity created through the core the next key, and moves the global stamp on from one a save', async () => {
    assert.equal(await ds.globalStamp(), CATEGORIES + ROWS);
    const category = ds.Category.new();
    category.set('name', 'new one');
    await category.save();
    assert.equal(category.getKey(), CATEGORIES + 1);
    const item = ds.Item.new();
    item.set('name', 'Écrou-neuf');
    item.set('category', category);
    await item.save();
    assert.equal(item.getKey(), ROWS + 1);
    assert.equal(await ds.globalStamp(), CATEGORIES + ROWS + 2);
    assert.equal(await ds.Item.query('name begin :1', 'ecrou').length, 1);
  });
});

describe('the generator on SQLite: cache, worker thread, folder', { skip: TEST_ENGINE !== 'sqlite' }, () => {
  it('generates a file once per size and key, then gives copies', async () => {
    const tmp = tempDir('dataset-rest-generate-cache-');
    try {
      const cacheDir = join(tmp.dir, 'cache');
      const first = await generateProject(join(tmp.dir, 'a'), 1000, { cacheDir });
      assert.equal(first.fromCache, false);
      assert.ok(first.cacheFile?.startsWith(join(cacheDir, 'suite-1000-')) && existsSync(first.cacheFile));
      const second = await generateProject(join(tmp.dir, 'b'), 1000, { cacheDir });
      assert.equal(second.fromCache, true);
      assert.equal(second.cacheFile, first.cacheFile);
      assert.equal(statSync(second.db).size, statSync(first.db).size);
      // a fresh copy: a write to one is not in the other, nor in the cache
      const ds = await openProject(second.dir, { roles: false });
      try {
        const e = ds.Item.new();
        e.set('name', 'extra');
        await e.save();
        assert.equal(e.getKey(), 1001);
      } finally {
        await ds.close();
      }
      const third = await generateProject(join(tmp.dir, 'c'), 1000, { cacheDir });
      assert.equal(third.fromCache, true);
      const ds3 = await openProject(third.dir, { roles: false });
      try {
        assert.equal(await ds3.Item.all().length, 1000);
      } finally {
        await ds3.close();
      }
    } finally {
      tmp.remove();
    }
  });

  it('fills the same file with the second half made on a worker thread (the path of big sizes)', async () => {
    const tmp = tempDir('dataset-rest-generate-parallel-');
    try {
      const alone = await generateProject(join(tmp.dir, 'a'), 5001, { parallel: false });
      const lines: string[] = [];
      const shared = await generateProject(join(tmp.dir, 'b'), 5001, { parallel: true, log: (line) => lines.push(line) });
      const worker = lines.map((l) => /^items 1 to ([\d,]+) inserted here, the others \((\d+) tables\) on the worker/.exec(l)).find((m) => m !== null);
      assert.ok(worker, lines.join('\n'));
      assert.ok(Number(worker[2]) > 0 && Number(worker[1].replaceAll(',', '')) < 5001, worker[0]);
      const [a, b] = [await rawRows(alone), await rawRows(shared)];
      assert.equal(b.items.length, 5001);
      assert.deepEqual(b, a);
      assert.ok(!existsSync(`${shared.db}.part`), 'the worker part is removed');
      const ds = await openProject(shared.dir, { roles: false });
      try {
        const e = ds.Item.new();
        e.set('name', 'next');
        await e.save();
        assert.equal(e.getKey(), 5002);
        assert.equal((await ds.Item.get(5001))?.get('name'), itemValues(5000).name);
      } finally {
        await ds.close();
      }
    } finally {
      tmp.remove();
    }
  });

  it('refuses a folder that is not empty', async () => {
    const tmp = tempDir('dataset-rest-generate-full-');
    try {
      await assert.rejects(generateProject(tmp.dir, 10).then(() => generateProject(tmp.dir, 10)), /not empty/);
    } finally {
      tmp.remove();
    }
  });
});
