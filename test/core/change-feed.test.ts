// The change feed of the tracked dataclasses (issue 36, datastore/live/change-feed.ts): a
// subscriber is told each change of its dataclass — created or updated, dropped — in stamp order,
// none twice; from a past stamp it is told what it missed first; the writes of another instance
// over the same database reach it at the next poll of the global stamp. On the engine the run
// names (testDatabase).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { coreOf, Datastore, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import type { Entity } from '../../src/datastore/entities/entity.js';
import { ChangeFeed, type Change, type ChangeBatch } from '../../src/datastore/live/change-feed.js';
import { buildModel } from '../../src/model/load-model.js';
import { databaseTarget, openStorage } from '../../src/storage/open.js';
import { TEST_ENGINE, tempDir, testDatabase } from '../support/helpers.js';

const KEY = { name: 'ID', type: 'long64', identifying: true, autoincrement: true };
const MODEL = buildModel({
  name: 'Feed',
  dataClasses: [
    { name: 'Item', trackChanges: true, attributes: [KEY, { name: 'name', type: 'string' }] },
    { name: 'Other', trackChanges: true, attributes: [KEY, { name: 'name', type: 'string' }] },
  ],
});

/** The changes a subscriber has been told, and a way to wait for some more. */
function recorder() {
  const told: Change[] = [];
  const batches: ChangeBatch[] = [];
  let waiting: { n: number; resolve: () => void } | undefined;
  return {
    told,
    batches,
    listener: (batch: ChangeBatch) => {
      batches.push(batch);
      told.push(...batch.changes);
      if (waiting && told.length >= waiting.n) waiting.resolve();
    },
    /** resolves once `n` changes in all were told (or fails after a few seconds) */
    async until(n: number): Promise<void> {
      if (told.length >= n) return;
      // (a timer of the test's own keeps the process up meanwhile: the feed's poll does not)
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          new Promise<void>((resolve) => (waiting = { n, resolve })),
          new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`told ${told.length} changes, waited for ${n}: ${JSON.stringify(told)}`)), 5000))),
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

describe(`the change feed of tracked dataclasses (${TEST_ENGINE})`, () => {
  const tmp = tempDir();
  let db: string;
  let ds: DatastoreWithClasses;
  const open = async () => Datastore.open(MODEL, await openStorage(databaseTarget(db), { poolSize: 3 }));
  before(async () => {
    db = await testDatabase(join(tmp.dir, 'feed.sqlite'));
    ds = await open();
  });
  after(async () => {
    await ds?.close();
    tmp.remove();
  });
  const create = async (store: DatastoreWithClasses, cls: string, name: string): Promise<Entity> => {
    const e = store.dataClass(cls)!.new();
    e.set('name', name);
    await e.save();
    return e;
  };

  it('tells a subscriber each create, update and drop of its dataclass, in stamp order, and nothing of another', async () => {
    const r = recorder();
    const sub = await coreOf(ds).changes.subscribe(ds.dataClass('Item')!.model, r.listener);
    try {
      const a = await create(ds, 'Item', 'a');
      await create(ds, 'Other', 'elsewhere');
      await r.until(1);
      a.set('name', 'a2');
      await a.save();
      await r.until(2);
      await a.drop();
      await r.until(3);
      await coreOf(ds).changes.settle();
      // (changes are read from the data: writes closer together than a read come as the last of
      // them — a create and update as the entity's latest stamp, anything dropped as its drop)
      const stamps = r.told.map((c) => c.stamp);
      assert.deepEqual(stamps, [...stamps].sort((x, y) => x - y), 'in stamp order');
      assert.equal(new Set(stamps).size, stamps.length, 'none twice');
      assert.ok(r.told.every((c) => c.key === a.getKey()), JSON.stringify(r.told));
      assert.equal(r.told.at(-1)?.dropped, true);
      assert.equal(sub.stamp, await ds.getGlobalStamp());
    } finally {
      sub.close();
    }
  });

  it('tells a subscriber from a past stamp what it missed, then what comes', async () => {
    const mark = await ds.getGlobalStamp();
    const b = await create(ds, 'Item', 'b');
    const c = await create(ds, 'Item', 'c');
    const r = recorder();
    const sub = await coreOf(ds).changes.subscribe(ds.dataClass('Item')!.model, r.listener, mark);
    try {
      await r.until(2);
      assert.deepEqual(r.told.map((x) => x.key), [b.getKey(), c.getKey()]);
      const d = await create(ds, 'Item', 'd');
      await r.until(3);
      assert.deepEqual(r.told.map((x) => x.key), [b.getKey(), c.getKey(), d.getKey()]);
      assert.equal(r.batches[0].since, mark);
    } finally {
      sub.close();
    }
  });

  it("hears another instance's writes over the same database at the next poll", async () => {
    const other = await open();
    const r = recorder();
    const sub = await coreOf(ds).changes.subscribe(ds.dataClass('Item')!.model, r.listener);
    try {
      const e = await create(other, 'Item', 'from the other instance');
      await r.until(1);
      assert.deepEqual(r.told.map((x) => [x.key, x.dropped]), [[e.getKey(), false]]);
      await e.drop();
      await r.until(2);
      assert.deepEqual(r.told.map((x) => [x.key, x.dropped]), [[e.getKey(), false], [e.getKey(), true]]);
    } finally {
      sub.close();
      await other.close();
    }
  });

  it("tells no one an empty batch: another dataclass's writes cost its subscribers nothing, and they keep up", async () => {
    const r = recorder();
    const sub = await coreOf(ds).changes.subscribe(ds.dataClass('Other')!.model, r.listener);
    try {
      for (let i = 0; i < 5; i++) await create(ds, 'Item', `item ${i}`);
      await coreOf(ds).changes.settle();
      // (past a poll of the global stamp, which reads every dataclass followed)
      await new Promise((resolve) => setTimeout(resolve, 400));
      await coreOf(ds).changes.settle();
      assert.equal(r.batches.length, 0, JSON.stringify(r.batches));
      assert.equal(sub.stamp, await ds.getGlobalStamp(), 'past the changes it had nothing to be told of');
      const o = await create(ds, 'Other', 'mine');
      await r.until(1);
      assert.deepEqual(r.told.map((c) => c.key), [o.getKey()]);
    } finally {
      sub.close();
    }
  });

  it("hears another instance's writes at once where the engine carries messages (PostgreSQL's NOTIFY), without waiting for a poll", { skip: TEST_ENGINE !== 'postgres' && 'SQLite carries no messages between processes: the poll hears them' }, async () => {
    const other = await open();
    // (a poll a minute away: only the message can tell it in time)
    const feed = new ChangeFeed(coreOf(ds), { pollMs: 60_000 });
    const r = recorder();
    const sub = await feed.subscribe(ds.dataClass('Item')!.model, r.listener);
    try {
      // (the LISTEN is under way once subscribed: a message sent before it is in place would be missed)
      assert.equal(await feed.hearsMessages(), true);
      const e = await create(other, 'Item', 'told by a message');
      await r.until(1);
      assert.deepEqual(r.told.map((x) => x.key), [e.getKey()]);
    } finally {
      sub.close();
      feed.close();
      await other.close();
    }
  });

  it('listens again after its LISTEN connection is lost, and opens none once closed', { skip: TEST_ENGINE !== 'postgres' && 'SQLite carries no messages between processes' }, async () => {
    const storage = coreOf(ds).storage;
    const listeners = async () => Number((await storage.get("SELECT COUNT(*) AS n FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' AND datname = current_database()"))?.n ?? 0);
    // (the earlier tests' feeds end their LISTEN as their last subscriber goes: once that settles)
    let before = await listeners();
    for (let i = 0; i < 30; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const now = await listeners();
      if (now === before) break;
      before = now;
    }
    const feed = new ChangeFeed(coreOf(ds), { pollMs: 100 });
    const sub = await feed.subscribe(ds.dataClass('Item')!.model, () => {});
    try {
      assert.equal(await feed.hearsMessages(), true);
      assert.equal(await listeners(), before + 1);
      // the server ends the listening connection (a restart, a network break)
      await storage.run("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' AND datname = current_database() AND pid <> pg_backend_pid()");
      const deadline = Date.now() + 15_000;
      while ((await listeners()) < before + 1 || !(await feed.hearsMessages())) {
        assert.ok(Date.now() < deadline, 'no LISTEN again within 15 s');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } finally {
      sub.close();
      feed.close();
    }
    // closed while a subscriber's stamp is read: refused, and no connection opened
    const late = new ChangeFeed(coreOf(ds), { pollMs: 100 });
    const subscribing = late.subscribe(ds.dataClass('Item')!.model, () => {});
    late.close();
    await assert.rejects(subscribing, /closed/);
    assert.equal(await late.hearsMessages(), false);
  });

  it('refuses a dataclass that does not track its changes', async () => {
    const plain = buildModel({ name: 'P', dataClasses: [{ name: 'Plain', attributes: [KEY] }] }).dataClasses[0];
    await assert.rejects(coreOf(ds).changes.subscribe(plain, () => {}), /Plain does not track its changes/);
  });
});
