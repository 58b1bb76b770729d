// 4D's data change tracking in the core (issue 36, ORDA/global-stamp.md): a dataclass with
// "trackChanges": true (or a declared __GlobalStamp long64) stores, at each create and update, the
// global stamp the write moved to in __GlobalStamp; each drop adds a __DeletedRecords entity (the
// key as text, that stamp, the dataclass's name and number) — on every write path: a save, a
// batch, a drop, a selection's drop, an import's bulk insert — and neither is written by code. A
// sync that asks `__GlobalStamp > :1` with ds.getGlobalStamp() taken before misses nothing. On the
// engine the run names (test/run.ts runs this file on SQLite and on PostgreSQL: testStorage).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { coreOf, Datastore, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import type { Entity } from '../../src/datastore/entities/entity.js';
import { BulkInserter } from '../../src/datastore/writes/import-writes.js';
import { buildModel, ModelError } from '../../src/model/load-model.js';
import type { StorageAttribute } from '../../src/model/types.js';
import { syncSchema } from '../../src/storage/schema.js';
import { databaseTarget, openStorage } from '../../src/storage/open.js';
import { TEST_ENGINE, tempDir, testDatabase, testStorage } from '../support/helpers.js';

const KEY = { name: 'ID', type: 'long64', identifying: true, autoincrement: true };
const MODEL = {
  name: 'Tracked',
  dataClasses: [
    { name: 'Item', trackChanges: true, attributes: [KEY, { name: 'name', type: 'string' }] },
    // 4D's way: the attribute declared in the structure
    { name: 'Note', attributes: [{ name: 'code', type: 'string', identifying: true }, { name: 'text', type: 'string' }, { name: '__GlobalStamp', type: 'long64' }] },
    { name: 'Plain', attributes: [KEY, { name: 'name', type: 'string' }] },
  ],
};

describe('change tracking in the model', () => {
  it('gives a tracked dataclass a __GlobalStamp long64 kept by the server, and the model a __DeletedRecords dataclass', () => {
    const m = buildModel(MODEL);
    for (const name of ['Item', 'Note']) {
      const stamp = m.dataClassesByName.get(name)!.globalStamp!;
      assert.equal(stamp.name, '__GlobalStamp');
      assert.equal(stamp.type, 'long64');
      assert.equal(stamp.indexed, true);
      assert.equal(stamp.serverSet, true);
    }
    assert.equal(m.dataClassesByName.get('Plain')!.globalStamp, undefined);
    const deleted = m.deletedRecords!;
    assert.equal(deleted.name, '__DeletedRecords');
    assert.equal(deleted.system, true);
    assert.deepEqual(deleted.storage.map((a) => [a.name, a.type]), [['ID', 'long64'], ['__PrimaryKey', 'string'], ['__Stamp', 'long64'], ['__TableName', 'string'], ['__TableNumber', 'long']]);
    assert.equal(m.dataClassesByName.get('__DeletedRecords'), deleted);
  });

  it('has no __DeletedRecords when no dataclass tracks its changes', () => {
    const m = buildModel({ name: 'N', dataClasses: [MODEL.dataClasses[2]] });
    assert.equal(m.deletedRecords, undefined);
    assert.equal(m.dataClasses.length, 1);
  });

  it('refuses a __GlobalStamp of another type and a trackChanges that is not a boolean, naming where', () => {
    assert.throws(() => buildModel({ name: 'B', dataClasses: [{ name: 'A', attributes: [KEY, { name: '__GlobalStamp', type: 'long' }] }] }),
      (e: unknown) => e instanceof ModelError && /\$\.dataClasses\[0\]\.attributes\[1\]: __GlobalStamp turns on change tracking and must be a storage attribute of type long64/.test(e.message));
    assert.throws(() => buildModel({ name: 'B', dataClasses: [{ name: 'A', trackChanges: 'yes', attributes: [KEY] }] }),
      (e: unknown) => e instanceof ModelError && /\$\.dataClasses\[0\]\.trackChanges: must be true or false/.test(e.message));
    assert.throws(() => buildModel({ name: 'B', dataClasses: [{ name: 'A', trackChanges: false, attributes: [KEY, { name: '__GlobalStamp', type: 'long64' }] }] }), /trackChanges: is false, but the dataclass declares __GlobalStamp/);
    assert.throws(() => buildModel({ name: 'B', dataClasses: [{ name: 'A', attributes: [KEY, { name: '__GlobalStamp', type: 'long64', exposed: false }] }] }), /unknown property 'exposed'/);
  });

  it('refuses a relation to __DeletedRecords', () => {
    assert.throws(() => buildModel({ name: 'B', dataClasses: [{ name: 'A', trackChanges: true, attributes: [KEY, { name: 'drop', kind: 'relatedEntity', type: '__DeletedRecords' }] }] }),
      /relatedEntity 'drop' names __DeletedRecords, which the server keeps for change tracking/);
  });
});

describe(`change tracking on the write paths (${TEST_ENGINE})`, () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  before(async () => {
    ds = await Datastore.open(buildModel(MODEL), await testStorage(join(tmp.dir, 'tracked.sqlite')));
  });
  after(async () => {
    await ds?.close();
    tmp.remove();
  });
  const create = async (cls: string, values: Record<string, unknown>): Promise<Entity> => {
    const e = ds.dataClass(cls)!.new();
    for (const [k, v] of Object.entries(values)) e.set(k, v);
    await e.save();
    return e;
  };
  const names = async (cls: string, filter: string, ...params: unknown[]) => (await ds.dataClass(cls)!.query(filter, ...params).orderBy('ID').toArray()).map((e) => e.get('name'));
  const deletedSince = async (stamp: number, table: string) =>
    (await ds.dataClass('__DeletedRecords')!.query('__Stamp > :1 and __TableName = :2', stamp, table).orderBy('ID').toArray()).map((e) => ({ key: e.get('__PrimaryKey'), stamp: e.get('__Stamp'), number: e.get('__TableNumber') }));

  it('stores the global stamp the write moved to, at each create and update, and a query by it finds what changed since', async () => {
    const start = await ds.getGlobalStamp();
    const a = await create('Item', { name: 'a' });
    const b = await create('Item', { name: 'b' });
    assert.equal(a.get('__GlobalStamp'), start + 1);
    assert.equal(b.get('__GlobalStamp'), start + 2);
    assert.equal(await ds.getGlobalStamp(), start + 2);
    const mark = await ds.getGlobalStamp();
    a.set('name', 'a2');
    await a.save();
    assert.equal(a.get('__GlobalStamp'), mark + 1);
    assert.equal((await ds.dataClass('Item')!.get(a.getKey()))!.get('__GlobalStamp'), mark + 1, 'the row holds what the entity shows');
    assert.deepEqual(await names('Item', '__GlobalStamp > :1', mark), ['a2']);
    assert.deepEqual(await names('Item', '__GlobalStamp > :1', start), ['a2', 'b']);
    assert.deepEqual((await ds.dataClass('Item')!.all().orderBy('__GlobalStamp desc').toArray()).slice(0, 2).map((e) => e.get('name')), ['a2', 'b']);
  });

  it('tracks a dataclass that declares __GlobalStamp itself, keyed by text', async () => {
    const mark = await ds.getGlobalStamp();
    const n = await create('Note', { code: 'n-1', text: 'hello' });
    assert.equal(n.get('__GlobalStamp'), mark + 1);
    await n.drop();
    assert.deepEqual(await deletedSince(mark, 'Note'), [{ key: 'n-1', stamp: mark + 2, number: 2 }]);
  });

  it('records each drop in __DeletedRecords with the stamp of the drop, the key as text and the dataclass', async () => {
    const c = await create('Item', { name: 'c' });
    const mark = await ds.getGlobalStamp();
    await c.drop();
    assert.deepEqual(await deletedSince(mark, 'Item'), [{ key: String(c.getKey()), stamp: mark + 1, number: 1 }]);
    assert.equal(await ds.getGlobalStamp(), mark + 1);
  });

  it("records every entity of a selection's drop, with the one stamp of that drop", async () => {
    for (const name of ['x1', 'x2', 'x3']) await create('Item', { name });
    const keys = (await ds.dataClass('Item')!.query('name begin x').orderBy('ID').toArray()).map((e) => String(e.getKey()));
    const mark = await ds.getGlobalStamp();
    await ds.dataClass('Item')!.query('name begin x').drop();
    const found = await deletedSince(mark, 'Item');
    assert.deepEqual(found.map((f) => f.key), keys);
    assert.ok(found.every((f) => f.stamp === mark + 1), JSON.stringify(found));
  });

  it('gives the saves of one transaction stamps that a later sync finds, all after the mark taken before', async () => {
    const mark = await ds.getGlobalStamp();
    await ds.transaction(async () => {
      await create('Item', { name: 't1' });
      await create('Item', { name: 't2' });
    });
    assert.deepEqual(await names('Item', '__GlobalStamp > :1', mark), ['t1', 't2']);
  });

  it('gives a tracked write that starts while another is under way a larger stamp, and getGlobalStamp() never names a change not yet readable', async () => {
    const mark = await ds.getGlobalStamp();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = ds.transaction(async () => {
      const e = await create('Item', { name: 'slow' });
      await gate;
      return e;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    // (what a sync would read at once with the stamp: every change up to it must be readable then)
    const reading = ds.getGlobalStamp().then(async (v) => ({ v, readable: await names('Item', '__GlobalStamp > :1 and __GlobalStamp <= :2', mark, v) }));
    const fast = create('Item', { name: 'fast' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    const [a, b, { v: seen, readable }] = await Promise.all([slow, fast, reading]);
    assert.ok((b.get('__GlobalStamp') as number) > (a.get('__GlobalStamp') as number), `${String(b.get('__GlobalStamp'))} > ${String(a.get('__GlobalStamp'))}`);
    // what a sync keeps: either from before the slow write, or past it once it is readable
    assert.ok(seen === mark || seen >= (a.get('__GlobalStamp') as number), `seen ${seen}, mark ${mark}, slow ${String(a.get('__GlobalStamp'))}`);
    if (seen > mark) assert.ok(readable.includes('slow'), `getGlobalStamp() said ${seen} while the slow write (${String(a.get('__GlobalStamp'))}) was not readable yet`);
    assert.deepEqual(await names('Item', '__GlobalStamp > :1', seen), seen === mark ? ['slow', 'fast'] : (seen >= (b.get('__GlobalStamp') as number) ? [] : ['fast']));
  });

  it("lets a selection's drop wait for a tracked write under way that it meets, rather than fail (PostgreSQL's ordering lock before any row's)", async () => {
    const b = await create('Item', { name: 'contended' });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const writing = ds.transaction(async () => {
      await create('Item', { name: 'first of two' });
      await gate;
      b.set('name', 'contended, saved');
      await b.save();
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const dropping = ds.dataClass('Item')!.query('ID = :1', b.getKey()).drop();
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    const [saved, dropped] = await Promise.allSettled([writing, dropping]);
    assert.equal(saved.status, 'fulfilled', JSON.stringify(saved));
    assert.equal(dropped.status, 'fulfilled', JSON.stringify(dropped));
    assert.equal(await ds.dataClass('Item')!.get(b.getKey()), null);
  });

  it('leaves an untracked dataclass untracked: no __GlobalStamp, no __DeletedRecords', async () => {
    const p = await create('Plain', { name: 'p' });
    const mark = await ds.getGlobalStamp();
    await p.drop();
    assert.equal(ds.dataClass('Plain')!.model.attributesByName.get('__GlobalStamp'), undefined);
    assert.deepEqual(await deletedSince(0, 'Plain'), []);
    assert.equal(await ds.getGlobalStamp(), mark + 1, 'the global stamp still moves');
  });

  it('refuses code that writes __GlobalStamp (given back as it is, it changes nothing)', async () => {
    const e = await create('Item', { name: 'w' });
    e.set('__GlobalStamp', e.get('__GlobalStamp'));
    assert.throws(() => e.set('__GlobalStamp', 1), (err: Error & { code?: string }) => err.code === 'READ_ONLY' && /Item\.__GlobalStamp is kept by the server/.test(err.message));
    const fresh = ds.dataClass('Item')!.new();
    assert.throws(() => fresh.set('__GlobalStamp', 5), (err: Error & { code?: string }) => err.code === 'READ_ONLY');
  });

  it('refuses code that creates, updates or drops __DeletedRecords entities', async () => {
    const deleted = ds.dataClass('__DeletedRecords')!;
    const e = deleted.new();
    await assert.rejects(e.save(), (err: Error & { code?: string }) => err.code === 'READ_ONLY' && /__DeletedRecords is kept by the server/.test(err.message));
    const one = await deleted.all().first();
    assert.ok(one, 'earlier tests dropped tracked entities');
    await assert.rejects(one.drop(), (err: Error & { code?: string }) => err.code === 'READ_ONLY');
    await assert.rejects(deleted.all().drop(), (err: Error & { code?: string }) => err.code === 'READ_ONLY');
  });

  it('setGlobalStamp() moves the counter: the next change takes the number after it', async () => {
    const now = await ds.getGlobalStamp();
    await ds.setGlobalStamp(now + 1000);
    assert.equal(await ds.getGlobalStamp(), now + 1000);
    const e = await create('Item', { name: 'after-set' });
    assert.equal(e.get('__GlobalStamp'), now + 1001);
    await assert.rejects(ds.setGlobalStamp(-1), (err: Error & { code?: string }) => err.code === 'INVALID_PARAMETER');
    await assert.rejects(ds.setGlobalStamp(1.5), (err: Error & { code?: string }) => err.code === 'INVALID_PARAMETER');
  });

  it("stamps the rows of an import's bulk insert with the stamp of their batch", async () => {
    const core = coreOf(ds);
    const model = ds.dataClass('Item')!.model;
    const inserter = new BulkInserter(core.classOf(model), [model.attributesByName.get('name') as StorageAttribute], core.root);
    const rows = inserter.preparer.rows();
    inserter.preparer.prepare(['imp-1'], rows);
    inserter.preparer.prepare(['imp-2'], rows);
    const mark = await ds.getGlobalStamp();
    assert.deepEqual((await inserter.insert(rows)).filter(Boolean), []);
    const found = await ds.dataClass('Item')!.query('name begin imp').toArray();
    assert.equal(found.length, 2);
    assert.ok(found.every((e) => e.get('__GlobalStamp') === mark + 1), JSON.stringify(found.map((e) => e.get('__GlobalStamp'))));
    assert.equal(await ds.getGlobalStamp(), mark + 1);
  });
});

describe(`turning change tracking on, and bounding __DeletedRecords (${TEST_ENGINE})`, () => {
  const tmp = tempDir();
  after(() => tmp.remove());
  const plain = { name: 'T', dataClasses: [{ name: 'Item', attributes: [KEY, { name: 'name', type: 'string' }] }] };
  const tracked = (more: Record<string, unknown> = {}) => buildModel({ ...more, name: 'T', dataClasses: [{ ...plain.dataClasses[0], trackChanges: true }] });

  it('is a model change like the others: the attribute and the dataclass added, the rows already there left unstamped', async () => {
    const db = await testDatabase(join(tmp.dir, 'turn-on.sqlite'));
    const open = async (m: ReturnType<typeof buildModel>) => Datastore.open(m, await openStorage(databaseTarget(db), { poolSize: 2 }));
    const before = await open(buildModel(plain));
    const old = before.dataClass('Item')!.new();
    old.set('name', 'old');
    await old.save();
    await before.close();
    const storage = await openStorage(databaseTarget(db), { poolSize: 2 });
    const steps = (await syncSchema(storage, tracked())).map((step) => step.description);
    await storage.close();
    assert.deepEqual(steps, ['Item: add attribute __GlobalStamp (long64)', 'create dataclass __DeletedRecords (5 storage attributes)']);
    const after = await open(tracked());
    try {
      assert.equal((await after.dataClass('Item')!.get(old.getKey()))!.get('__GlobalStamp'), null);
      const mark = await after.getGlobalStamp();
      const e = after.dataClass('Item')!.new();
      e.set('name', 'new');
      await e.save();
      assert.deepEqual((await after.dataClass('Item')!.query('__GlobalStamp > :1', mark).toArray()).map((x) => x.get('name')), ['new']);
    } finally {
      await after.close();
    }
  });

  it('refuses a retention that is not { "days": N } or { "stamps": N }, or without a tracked dataclass', () => {
    for (const [retention, message] of [
      [{ days: 0 }, /deletedRecordsRetention\.days: must be a whole number above 0/],
      [{ days: 1, stamps: 2 }, /gives one of "days"/],
      [{ weeks: 2 }, /unknown property 'weeks'/],
      [7, /must be an object/],
    ] as const) {
      assert.throws(() => tracked({ deletedRecordsRetention: retention }), (e: unknown) => e instanceof ModelError && message.test(e.message), JSON.stringify(retention));
    }
    assert.throws(() => buildModel({ ...plain, deletedRecordsRetention: { days: 3 } }), /only a dataclass with "trackChanges": true brings/);
  });

  it('with { "stamps": N } lets go of the drops N or more stamps behind a new drop', async () => {
    const db = await testDatabase(join(tmp.dir, 'retention.sqlite'));
    const open = async (m: ReturnType<typeof buildModel>) => Datastore.open(m, await openStorage(databaseTarget(db), { poolSize: 2 }));
    const make = async (ds: DatastoreWithClasses, name: string) => {
      const e = ds.dataClass('Item')!.new();
      e.set('name', name);
      await e.save();
      return e;
    };
    const keepAll = await open(tracked());
    await (await make(keepAll, 'first')).drop();
    await keepAll.close();
    // (a datastore lets go of old drops once a minute at most: a new one does at its first drop)
    const bounded = await open(tracked({ deletedRecordsRetention: { stamps: 1 } }));
    try {
      const second = await make(bounded, 'second');
      await second.drop();
      const left = (await bounded.dataClass('__DeletedRecords')!.all().toArray()).map((e) => e.get('__PrimaryKey'));
      assert.deepEqual(left, [String(second.getKey())]);
    } finally {
      await bounded.close();
    }
  });
});

