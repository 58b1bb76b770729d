// Which watched queries hold each changed entity, in one statement (datastore/reads/entities-within.ts,
// what the live streams of issue 36 judge a batch with): the entities of the keys the caller sees,
// each with a 1/0 per query; the whole dataclass (null) holds every one; more queries than one
// statement takes are matched over several; the caller's row filter hides what it hides. On the
// engine the run names (testDatabase).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { coreOf, Datastore, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { entitiesWithin } from '../../src/datastore/reads/entities-within.js';
import { buildModel } from '../../src/model/load-model.js';
import { Policy } from '../../src/permissions/policy.js';
import { databaseTarget, openStorage } from '../../src/storage/open.js';
import { TEST_ENGINE, tempDir, testDatabase } from '../support/helpers.js';

const MODEL = buildModel({
  name: 'Within',
  dataClasses: [{
    name: 'Item',
    attributes: [
      { name: 'ID', type: 'long64', identifying: true, autoincrement: true },
      { name: 'name', type: 'string' },
      { name: 'price', type: 'number' },
    ],
  }],
});

describe(`which watched queries hold each changed entity (${TEST_ENGINE})`, () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  const keys: number[] = [];
  before(async () => {
    const db = await testDatabase(join(tmp.dir, 'within.sqlite'));
    ds = await Datastore.open(MODEL, await openStorage(databaseTarget(db), { poolSize: 2 }));
    for (let i = 0; i < 10; i++) {
      const e = ds.dataClass('Item')!.new();
      e.set('name', i % 2 ? `odd ${i}` : `even ${i}`);
      e.set('price', i * 10);
      await e.save();
      keys.push(e.getKey() as number);
    }
  });
  after(async () => {
    await ds?.close();
    tmp.remove();
  });

  const root = () => ({ reader: coreOf(ds).storage, restrict: null, grants: Policy.ALL });
  const items = () => ds.dataClass('Item')!;
  const dc = () => coreOf(ds).classOf(items().model);

  it('reads the entities of the keys once, with which queries hold each (null: the whole dataclass), a missing key absent', async () => {
    const queries = [items().query('price >= :1', 50), null, items().query('name begin :1', 'odd'), items().query('price < 0')];
    const { found } = await entitiesWithin(dc(), [keys[0], keys[5], keys[6], 987_654], queries, root());
    assert.deepEqual([...found.keys()].sort(), [keys[0], keys[5], keys[6]].map(String).sort(), 'no entity for an unknown key');
    assert.deepEqual([...found.get(String(keys[0]))!.within], [0, 1, 0, 0]);
    assert.deepEqual([...found.get(String(keys[5]))!.within], [1, 1, 1, 0]);
    assert.deepEqual([...found.get(String(keys[6]))!.within], [1, 1, 0, 0]);
    assert.equal(found.get(String(keys[5]))!.entity.get('name'), 'odd 5', 'the entity itself, read with them');
  });

  it('matches more queries than one statement takes, each as it would select alone', async () => {
    // 450 queries: three statements' worth; the i-th selects prices above i
    const queries = Array.from({ length: 450 }, (_, i) => items().query('price > :1', i));
    const { found } = await entitiesWithin(dc(), keys, queries, root());
    for (let n = 0; n < keys.length; n++) {
      const within = found.get(String(keys[n]))!.within;
      const expected = queries.map((_, i) => (n * 10 > i ? 1 : 0));
      assert.deepEqual([...within], expected, `entity ${n} (price ${n * 10})`);
    }
  });

  it('matches queries whose parameters together pass what one statement may bind, in parts', async () => {
    // seven filters of 9,000 values each (one query holds 10,000 at most): 63,000 together, past
    // SQLite's 32,766 and nearly PostgreSQL's 65,535 — the statement fails, its halves do not
    const filler = Array.from({ length: 8_999 }, (_, i) => i + 1_000_000);
    const queries = [...Array.from({ length: 7 }, (_, i) => items().query('ID in :1', [keys[i], ...filler])), items().query('ID in :1', [keys[0], ...filler, ...filler.slice(0, 1)])];
    const { found, failed } = await entitiesWithin(dc(), keys, queries, root());
    assert.equal(failed.size, 0, [...failed.values()].map(String).join('; '));
    for (let n = 0; n < 7; n++) assert.deepEqual([...found.get(String(keys[n]))!.within], queries.map((_, i) => (i === n || (n === 0 && i === 7) ? 1 : 0)), `entity ${n}`);
  });

  it("leaves out what the caller's row filter hides", async () => {
    const model = items().model;
    const cheap = { reader: coreOf(ds).storage, grants: Policy.ALL, restrict: () => ({ kind: 'compare' as const, path: { via: [], attr: model.attributesByName.get('price') as never }, op: '<' as const, value: 30 }) };
    const { found } = await entitiesWithin(dc(), keys, [null, items().query('name begin :1', 'even')], cheap);
    assert.deepEqual([...found.keys()].sort(), keys.slice(0, 3).map(String).sort());
    assert.deepEqual(keys.slice(0, 3).map((k) => [...found.get(String(k))!.within]), [[1, 1], [1, 0], [1, 1]]);
  });
});
