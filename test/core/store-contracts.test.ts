// The contract of each store the core keeps request state in, one suite per interface, run
// against every implementation (Hono's common.case pattern). Entity sets: in memory, and in the
// database on every engine (shared by server instances). Query paths: kept in the database,
// so run on every storage engine. (Sessions get their suite with their store.)

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryEntitySetStore, type EntitySetStore, type StoredSet } from '../../src/datastore/sets/entity-set-store.js';
import { DatabaseEntitySetStore } from '../../src/datastore/sets/database-set-store.js';
import { newSetId } from '../../src/datastore/sets/entity-sets.js';
import { QueryPathStore } from '../../src/datastore/sessions/query-paths.js';
import { SessionStore } from '../../src/datastore/sessions/store.js';
import { sessionInternals, type Session } from '../../src/datastore/sessions/session.js';
import { Policy } from '../../src/permissions/policy.js';
import { lastQueryPath } from '../../src/storage/system-tables/query-paths.js';
import { createSystemTables } from '../../src/storage/system-tables/tables.js';
import { TransactionManager } from '../../src/storage/transactions.js';
import { ENGINES, type TestDatabase } from '../support/storage-engines.js';
import { SET_RECORD_BYTES, SET_ROW_MEMBERS } from '../../src/config/limits.js';
import { pack, packedBytes } from '../../src/datastore/sets/packed-keys.js';

/** the other instance's bound: two 6-member sets do not fit in it (each set's row counts SET_ROW_MEMBERS more) */
const BOUND = 2 * (6 + SET_ROW_MEMBERS) - 1;

interface SetStoreImplementation {
  readonly name: string;
  /** two instances' stores may keep sets at the same moment (in one test process: not two SQLite connections, whose waits block the thread) */
  readonly concurrentInstances?: boolean;
  /** a new, empty store whose clock is `now` */
  open(now: () => number): Promise<{ store: EntitySetStore; other?: EntitySetStore; cleanup(): Promise<void> }>;
  /** a new, empty store bounded to hold `sets` sets of `members` integer members each, all owners together (its memory, or its members) */
  bounded(now: () => number, sets: number, members: number): Promise<{ store: EntitySetStore; cleanup(): Promise<void> }>;
}

const SET_STORES: readonly SetStoreImplementation[] = [
  {
    name: 'in memory',
    async open(now) {
      const store = new MemoryEntitySetStore({ now, sweepEveryMs: 0 });
      return { store, cleanup: async () => store.close() };
    },
    async bounded(now, sets, members) {
      const store = new MemoryEntitySetStore({ now, sweepEveryMs: 0, maxBytes: sets * (packedBytes(pack(new Float64Array(members))) + SET_RECORD_BYTES) });
      return { store, cleanup: async () => store.close() };
    },
  },
  // in the database, on every engine; `other` is a second instance's store over the same database
  ...ENGINES.map((engine): SetStoreImplementation => ({
    name: `in the database: ${engine.name}`,
    concurrentInstances: engine.concurrentWriters,
    async open(now) {
      const db = await engine.open();
      const storage = new TransactionManager(db.driver);
      await createSystemTables(storage);
      const other = db.another ? new DatabaseEntitySetStore(new TransactionManager(db.another()), { now, maxMembers: BOUND }) : undefined;
      return { store: new DatabaseEntitySetStore(storage, { now }), other, cleanup: () => db.cleanup() };
    },
    async bounded(now, sets, members) {
      const db = await engine.open();
      const storage = new TransactionManager(db.driver);
      await createSystemTables(storage);
      return { store: new DatabaseEntitySetStore(storage, { now, maxMembers: sets * (members + SET_ROW_MEMBERS) }), cleanup: () => db.cleanup() };
    },
  })),
];

const set = (keys: Float64Array | string[], timeoutMs = 1000): StoredSet => ({ id: newSetId(), dataClass: 'Employee', keys, sorted: false, timeoutMs, refreshed: 0 });

for (const impl of SET_STORES) {
  describe(`entity set store contract: ${impl.name}`, () => {
    let now = 1_000;
    let store: EntitySetStore;
    let other: EntitySetStore | undefined;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ store, other, cleanup } = await impl.open(() => now));
    });
    after(() => cleanup());

    it('gives back a set as it was kept: its dataclass, order and keys, integer or text', async () => {
      const ints = set(Float64Array.from([3, 1, 2]));
      const texts = set(['B', 'A']);
      await store.put(ints);
      await store.put(texts);
      const got = await store.get(ints.id);
      assert.equal(got?.dataClass, 'Employee');
      assert.deepEqual(Array.from(got?.keys as ArrayLike<number>), [3, 1, 2]);
      assert.deepEqual((await store.get(texts.id))?.keys, ['B', 'A']);
      assert.equal(await store.get(newSetId()), undefined);
    });

    it('starts a set\'s lifetime when it is kept, by the store\'s clock, and again at every use', async () => {
      const s = set(Float64Array.from([1]), 1000);
      await store.put({ ...s, refreshed: -1e12 }); // the caller's clock does not count
      now += 900;
      assert.ok(await store.get(s.id));
      now += 900;
      assert.ok(await store.get(s.id), 'used 900 ms ago: alive');
      now += 1001;
      assert.equal(await store.get(s.id), undefined);
    });

    it('releases a set once: true when it existed', async () => {
      const s = set(['X']);
      await store.put(s);
      assert.equal(await store.release(s.id), true);
      assert.equal(await store.release(s.id), false);
      assert.equal(await store.get(s.id), undefined);
    });

    it('keeps a set of 200,000 integer members and gives them back in order, members counted in $info', async () => {
      const keys = Float64Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 1_000_003);
      const s = set(keys, 60_000);
      await store.put(s);
      const got = await store.get(s.id);
      assert.ok(got?.keys instanceof Float64Array);
      assert.deepEqual(got.keys, keys);
      assert.equal((await store.list()).find((x) => x.id === s.id)?.size, 200_000);
      await store.release(s.id);
    });

    it('is one store for every instance over the database: a set kept on one is read, used and released on another', async (t) => {
      if (!other) return t.skip('a store of one process');
      const s = set(['K1', 'K2', 'K3'], 1000);
      await store.put(s);
      assert.deepEqual((await other.get(s.id))?.keys, ['K1', 'K2', 'K3']);
      now += 900;
      assert.ok(await store.get(s.id), 'the use on the other instance started its lifetime again');
      assert.equal(await other.release(s.id), true);
      assert.equal(await store.get(s.id), undefined, 'released on the other instance: gone here too, cached members or not');
      // the bound counts every instance's sets: the other store keeps one of these at most
      const a = set(Float64Array.from([1, 2, 3, 4, 5, 6]), 60_000);
      const b = set(Float64Array.from([7, 8, 9, 10, 11, 12]), 60_000);
      await store.put(a);
      await other.put(b);
      assert.equal(await store.get(a.id), undefined, 'the least recently used set went to make room');
      assert.ok(await store.get(b.id));
      await other.release(b.id);
    });

    it('gives the members of a set rebuilt under its id (a saved filter run again) on every instance, not the ones an instance cached', async (t) => {
      if (!other) return t.skip('a store of one process');
      const first = set(['A1', 'A2'], 60_000);
      await store.put(first);
      assert.deepEqual((await other.get(first.id))?.keys, ['A1', 'A2']); // cached there now
      await store.release(first.id);
      await store.put({ ...first, dataClass: 'Company', keys: ['B1'] });
      const rebuilt = await other.get(first.id);
      assert.equal(rebuilt?.dataClass, 'Company');
      assert.deepEqual(rebuilt?.keys, ['B1']);
      await store.release(first.id);
    });

    it('holds the bound when sets are kept at once (on several connections or instances): each put counts the sets the others kept', async (t) => {
      if (!other || !impl.concurrentInstances) return t.skip('a store of one process, or instances that write one at a time');
      // the other store keeps BOUND at most: of eight 4-member sets (each counting SET_ROW_MEMBERS
      // more) kept through it at once (on as many connections), two stay
      const sets = Array.from({ length: 8 }, (_, i) => set(Float64Array.from([1, 2, 3, 4].map((k) => k + 10 * i)), 60_000));
      await Promise.all(sets.map((x) => other!.put(x)));
      const kept = (await other.list()).filter((x) => sets.some((y) => y.id === x.id)).reduce((n, x) => n + x.size + SET_ROW_MEMBERS, 0);
      assert.ok(kept <= BOUND, `${kept} members kept (rows counted), past the bound of ${BOUND}`);
      for (const x of sets) await store.release(x.id);
    });

    it('keeps a set for the owner that made it: another reader gets, pages, releases and replaces it as if it did not exist', async () => {
      const s = { ...set(Float64Array.from([1, 2, 3]), 60_000), owner: 'S1' };
      assert.equal(await store.put(s), true);
      assert.equal(await store.get(s.id, 'S2'), undefined);
      assert.equal(await store.slice(s.id, 0, 2, 'S2'), undefined);
      assert.equal(await store.release(s.id, 'S2'), false);
      assert.equal(await store.put({ ...s, keys: Float64Array.from([9]), owner: 'S2' }), false);
      assert.deepEqual(Array.from((await store.get(s.id, 'S1'))?.keys as Float64Array), [1, 2, 3]);
      assert.ok(await store.get(s.id), 'a reader of every set reaches it');
      assert.equal(await store.owned('S2'), 0);
      assert.equal(await store.release(s.id, 'S1'), true);
    });

    it('counts every set toward the bound, empty ones too', async (t) => {
      if (!other) return t.skip('the bound of a store of one process is in memory (entity-sets.test.ts)');
      // each empty set counts its row (SET_ROW_MEMBERS): BOUND holds two of them, not three
      const empties = Array.from({ length: 3 }, () => set(new Float64Array(0), 60_000));
      for (const e of empties) {
        await other.put(e);
        now += 1;
      }
      assert.equal(await other.get(empties[0].id), undefined, 'the oldest went');
      assert.ok(await other.get(empties[1].id));
      assert.ok(await other.get(empties[2].id));
      for (const e of empties) await other.release(e.id);
    });

    it('lists the sets alive now, expired ones left out', async () => {
      const alive = set(['Y'], 10_000);
      const dying = set(['Z'], 10);
      await store.put(alive);
      await store.put(dying);
      now += 11;
      const ids = (await store.list()).map((s) => s.id);
      assert.ok(ids.includes(alive.id) && !ids.includes(dying.id));
    });
  });
}

for (const impl of SET_STORES) {
  describe(`entity set store, a share per session: ${impl.name}`, () => {
    let now = 1_000;
    const owned = (owner: string, i: number): StoredSet => ({ ...set(Float64Array.from({ length: 6 }, (_, k) => 100 * i + k), 600_000), owner });
    const ids = async (store: EntitySetStore, owner: string) => (await store.list(owner)).map((x) => x.id);

    it("makes a session filling the store give up its own least recently used sets, never another session's", async () => {
      const { store, cleanup } = await impl.bounded(() => now, 10, 6);
      try {
        const a = owned('A', 0);
        await store.put(a);
        const b = Array.from({ length: 25 }, (_, i) => owned('B', i + 1));
        for (const x of b) {
          now += 1;
          await store.put(x);
          // A uses its set now and then, B never goes back to its old ones
          if (x === b[12]) assert.ok(await store.get(a.id, 'A'));
        }
        assert.ok(await store.get(a.id, 'A'), "A's set stays, however many B keeps");
        const kept = await ids(store, 'B');
        assert.deepEqual(kept.sort(), b.slice(-9).map((x) => x.id).sort(), "B keeps its 9 most recent, within what A leaves");
      } finally {
        await cleanup();
      }
    });

    it('makes room for a newcomer out of the largest holder: its least recently used set goes, the small holders keep theirs', async () => {
      const { store, cleanup } = await impl.bounded(() => now, 10, 6);
      try {
        const small = [owned('S1', 0), owned('S2', 1)];
        for (const x of small) await store.put(x);
        const big = Array.from({ length: 8 }, (_, i) => owned('BIG', i + 2));
        for (const x of big) {
          now += 1;
          await store.put(x);
        }
        // full: 2 small + 8 big; S1 uses its set (the most recent of all now), then a newcomer keeps one
        now += 1;
        assert.ok(await store.get(small[0].id, 'S1'));
        const newcomer = owned('N', 20);
        now += 1;
        await store.put(newcomer);
        assert.ok(await store.get(newcomer.id, 'N'));
        for (const x of small) assert.ok(await store.get(x.id, x.owner), `${x.owner} keeps its set`);
        assert.deepEqual((await ids(store, 'BIG')).sort(), big.slice(1).map((x) => x.id).sort(), "the largest holder's oldest set went");
      } finally {
        await cleanup();
      }
    });

    it("releases every set of one owner (its session was evicted), and no other's", async () => {
      const { store, cleanup } = await impl.bounded(() => now, 10, 6);
      try {
        for (let i = 0; i < 3; i++) await store.put(owned('GONE', i));
        const stays = owned('STAYS', 9);
        await store.put(stays);
        assert.equal(await store.releaseOwned('GONE'), 3);
        assert.equal(await store.owned('GONE'), 0);
        assert.ok(await store.get(stays.id, 'STAYS'));
        // the room they held is free: ten sets fit again
        for (let i = 10; i < 19; i++) await store.put(owned('NEXT', i));
        assert.ok(await store.get(stays.id, 'STAYS'));
        assert.equal(await store.owned('NEXT'), 9);
      } finally {
        await cleanup();
      }
    });
  });
}

for (const engine of ENGINES) {
  describe(`query path store contract: ${engine.name}`, () => {
    let db: TestDatabase;
    let storage: TransactionManager;
    let paths: QueryPathStore;
    let sessions: SessionStore;
    /** A session its client keeps: a guest stored (as one whose cookie came back and keeps something is). */
    const keptSession = async (): Promise<Session> => {
      const s = sessions.guest();
      sessionInternals.keep(s);
      await sessions.save(s, '10.0.0.1');
      return s;
    };
    before(async () => {
      db = await engine.open();
      storage = new TransactionManager(db.driver);
      await createSystemTables(storage);
      sessions = new SessionStore(storage, () => Policy.open(), { idleMinutes: 60 });
      paths = new QueryPathStore(storage, sessions.now);
    });
    after(() => db.cleanup());

    it('keeps the last path of each session, and nothing for a session with none', async () => {
      const [a, b, none] = [await keptSession(), await keptSession(), await keptSession()];
      await paths.record(a, { steps: [{ description: 'first' }] });
      await paths.record(a, { steps: [{ description: 'second' }] });
      await paths.record(b, { steps: [] });
      assert.deepEqual(await paths.last(a), { steps: [{ description: 'second' }] });
      assert.deepEqual(await paths.last(b), { steps: [] });
      assert.equal(await paths.last(none), undefined);
    });

    it('records nothing for a session new with its request (its client kept no cookie), and keeps (stores) a guest that records one', async () => {
      const fresh = sessions.guest();
      await paths.record(fresh, { steps: [{ description: 'lost' }] });
      assert.equal(await paths.last(fresh), undefined);
      assert.equal(sessionInternals.changed(fresh), undefined, 'nothing to store');
      // a guest whose cookie came back (never stored: its lower-case token) is kept by recording
      const back = await sessions.open(sessionInternals.cookie(sessions.guest()));
      await paths.record(back, { steps: [{ description: 'kept' }] });
      assert.ok(sessionInternals.changed(back)?.insert, 'the guest is stored with it');
      await sessions.save(back, '10.0.0.2');
      assert.deepEqual(await paths.last(await sessions.open(sessionInternals.token(back))), { steps: [{ description: 'kept' }] });
    });

    it('is seen by every instance over the same database', async (t) => {
      if (!db.another) return t.skip('one connection only');
      const shared = await keptSession();
      await paths.record(shared, { steps: [{ description: 'from one instance' }] });
      const other = new QueryPathStore(new TransactionManager(db.another()));
      assert.deepEqual(await other.last(shared), { steps: [{ description: 'from one instance' }] });
    });

    it('goes with its session: the sweep removes the paths of sessions no longer stored', async () => {
      let now = Date.now();
      const timed = new SessionStore(storage, () => Policy.open(), { idleMinutes: 60, now: () => now });
      const timedPaths = new QueryPathStore(storage, () => now);
      const s = timed.guest();
      sessionInternals.keep(s);
      await timed.save(s);
      await timedPaths.record(s, { steps: [] });
      now += 61 * 60_000;
      await timed.sweep();
      assert.equal(await lastQueryPath(storage, s.id), undefined);
    });
  });
}
