// The write statements kept per shape (sql/compiler/statements.ts insertShape, updateShape): a
// save that writes the same attributes as an earlier one uses its statement again (counted in
// compiles, not in time), and the kept UPDATE still checks the stamp — a conflict answers the
// stamp's error (1263; 409 over REST, 412 with If-Match), and nothing is written.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { writeShapeCompiles } from '../../src/sql/compiler/statements.js';
import { openDemo, type DemoFixture } from '../support/helpers.js';

type Json = any;

describe('write statements kept per shape', () => {
  let demo: DemoFixture;
  let ds: Json;

  before(async () => {
    demo = await openDemo();
    ds = demo.ds;
  });

  after(async () => {
    await demo?.close();
  });

  it('compiles an update once per set of attributes written, and uses it again for the next save of that set', async () => {
    const city = await ds.City.get(1);
    city.population = 1001;
    await city.save();
    const compiled = writeShapeCompiles();
    for (let i = 2; i < 6; i++) {
      city.population = 1000 + i;
      await city.save();
    }
    const other = await ds.City.get(2);
    other.population = 77;
    await other.save();
    assert.equal(writeShapeCompiles(), compiled, 'the same shape is not compiled again');
    assert.equal((await ds.City.get(1)).population, 1005);
    assert.equal((await ds.City.get(2)).population, 77);
    // another set of attributes: a statement of its own, kept too
    city.population = 9;
    city.name = 'Shape town';
    await city.save();
    assert.equal(writeShapeCompiles(), compiled + 1);
    city.population = 10;
    city.name = 'Shape town again';
    await city.save();
    assert.equal(writeShapeCompiles(), compiled + 1);
    const stored = await ds.City.get(1);
    assert.deepEqual([stored.name, stored.population, stored.getStamp()], ['Shape town again', 10, city.getStamp()]);
  });

  it('compiles a create once per set of attributes given, each new entity stored with its own values', async () => {
    const make = async (name: string, population: number) => {
      const c = ds.City.new();
      c.name = name;
      c.population = population;
      await c.save();
      return c.getKey();
    };
    await make('First new', 1);
    const compiled = writeShapeCompiles();
    const keys = [await make('Second new', 2), await make('Third new', 3)];
    assert.equal(writeShapeCompiles(), compiled);
    assert.deepEqual(await Promise.all(keys.map(async (k) => (await ds.City.get(k)).name)), ['Second new', 'Third new']);
  });

  it('moves the global stamp once a create (in its INSERT where the engine allows), once an $atomic batch', async () => {
    const before = Number(await ds.getGlobalStamp());
    const c = ds.City.new();
    c.name = 'Stamped';
    await c.save();
    assert.equal(Number(await ds.getGlobalStamp()), before + 1);
    const batch = await demo.request('/rest/City?$method=update&$atomic=true', 'POST', [{ name: 'B1' }, { name: 'B2' }, { name: 'B3' }]);
    assert.equal(batch.status, 200, JSON.stringify(batch.body));
    assert.equal(Number(await ds.getGlobalStamp()), before + 2);
    const one = await demo.request('/rest/City?$method=update', 'POST', { name: 'B4' });
    assert.equal(one.status, 200);
    assert.equal(Number(await ds.getGlobalStamp()), before + 3);
  });

  it('still refuses, with the kept statement, a save of an entity saved since it was read (1263), writing nothing', async () => {
    const a = await ds.City.get(3);
    const b = await ds.City.get(3);
    a.population = 5;
    await a.save();
    b.population = 6;
    await assert.rejects(b.save(), (e: Json) => e.code === 'STAMP_CHANGED');
    assert.equal((await ds.City.get(3)).population, 5);
    // and again once the shape is kept
    const c = await ds.City.get(3);
    a.population = 7;
    await a.save();
    c.population = 8;
    await assert.rejects(c.save(), (e: Json) => e.code === 'STAMP_CHANGED');
    assert.equal((await ds.City.get(3)).population, 7);
  });

  it('answers a stale stamp over REST with 409 and the stamp\'s __ERROR, and a stale If-Match with 412', async () => {
    const read = await demo.request('/rest/City(4)');
    const stamp = read.body.__STAMP as number;
    const saved = await demo.request('/rest/City?$method=update', 'POST', { __KEY: '4', __STAMP: stamp, population: 41 });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.equal(saved.body.__STAMP, stamp + 1);
    const stale = await demo.request('/rest/City?$method=update', 'POST', { __KEY: '4', __STAMP: stamp, population: 42 });
    assert.equal(stale.status, 409, JSON.stringify(stale.body));
    assert.equal(stale.body.__ERROR[0].errCode, 1263);
    assert.equal(stale.body.__STATUS.status, 2);
    assert.equal(stale.body.__STAMP, stamp + 1, 'the answer shows the entity as stored');
    const tagged = await demo.request('/rest/City(4)', 'POST', { population: 43 }, { 'if-match': String(read.headers.etag) });
    assert.equal(tagged.status, 412, JSON.stringify(tagged.body));
    assert.equal(tagged.body.__ERROR[0].errCode, 1263);
    assert.equal((await ds.City.get(4)).population, 41);
  });
});
