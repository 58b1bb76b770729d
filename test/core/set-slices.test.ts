// A page of an entity set reads only the members it shows: EntitySetStore.slice(). A set larger
// than the store keeps at hand (its cacheMembers; 4,000,000 members by default, made small here) is
// read a chunk at a time, and every slice must be what the whole set holds at those positions —
// at its start, across chunk boundaries, at its end, past it — for integer and text keys, on
// every engine, and in memory.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SET_CHUNK_MEMBERS } from '../../src/config/limits.js';
import { DatabaseEntitySetStore } from '../../src/datastore/sets/database-set-store.js';
import { MemoryEntitySetStore, type EntitySetStore, type KeyList, type StoredSet } from '../../src/datastore/sets/entity-set-store.js';
import { newSetId } from '../../src/datastore/sets/entity-sets.js';
import { createSystemTables } from '../../src/storage/system-tables/tables.js';
import { TransactionManager } from '../../src/storage/transactions.js';
import { ENGINES } from '../support/storage-engines.js';

const MEMBERS = SET_CHUNK_MEMBERS * 2 + 1234;
const set = (keys: KeyList): StoredSet => ({ id: newSetId(), dataClass: 'Thing', keys, sorted: true, timeoutMs: 60_000, refreshed: 0 });
const C = SET_CHUNK_MEMBERS;
/** [from, to) slices worth asking: the start, inside a chunk, across one and two boundaries, the end, past it, empty */
const SLICES: readonly [number, number][] = [[0, 100], [500, 600], [C - 50, C + 50], [C - 1, 2 * C + 1], [MEMBERS - 100, MEMBERS], [MEMBERS - 10, MEMBERS + 100], [MEMBERS + 5, MEMBERS + 10], [300, 300], [2 * C, 2 * C + 100]];

const stores: { name: string; open(): Promise<{ store: EntitySetStore; cleanup(): Promise<void> }> }[] = [
  { name: 'in memory', open: async () => ({ store: new MemoryEntitySetStore({ sweepEveryMs: 0 }), cleanup: async () => {} }) },
  ...ENGINES.map((engine) => ({
    name: `in the database (${engine.name}), sets larger than 1,000 members read a chunk at a time`,
    async open() {
      const db = await engine.open();
      const storage = new TransactionManager(db.driver);
      await createSystemTables(storage);
      return { store: new DatabaseEntitySetStore(storage, { cacheMembers: 1000 }), cleanup: () => db.cleanup() };
    },
  })),
];

for (const impl of stores) {
  describe(`entity set slices: ${impl.name}`, () => {
    let store: EntitySetStore;
    let cleanup: () => Promise<void>;
    const ints = Float64Array.from({ length: MEMBERS }, (_, i) => (i * 7919) % 1_000_003);
    const texts = Array.from({ length: MEMBERS }, (_, i) => `k${(i * 31) % 99_991}`);
    const [intSet, textSet] = [set(ints), set(texts)];

    before(async () => {
      ({ store, cleanup } = await impl.open());
      await store.put(intSet);
      await store.put(textSet);
    });
    after(() => cleanup());

    it('gives the members at each position asked, integer keys', async () => {
      for (const [from, to] of SLICES) {
        const got = await store.slice(intSet.id, from, to);
        assert.ok(got, `${from}–${to}`);
        assert.equal(got.set.size, MEMBERS);
        assert.equal(got.from, Math.min(from, MEMBERS));
        assert.ok(got.keys instanceof Float64Array);
        assert.deepEqual(Array.from(got.keys), Array.from(ints.slice(from, to)), `${from}–${to}`);
      }
    });

    it('gives the members at each position asked, text keys', async () => {
      for (const [from, to] of SLICES) {
        const got = await store.slice(textSet.id, from, to);
        assert.deepEqual(got?.keys, texts.slice(from, to), `${from}–${to}`);
      }
    });

    it('reads the same again (from the chunks kept), and nothing of a set that is gone', async () => {
      assert.deepEqual(Array.from(((await store.slice(intSet.id, C - 5, C + 5))?.keys ?? []) as ArrayLike<number>), Array.from(ints.slice(C - 5, C + 5)));
      assert.equal(await store.slice(newSetId(), 0, 10), undefined);
      const gone = set(Float64Array.from([1, 2, 3]));
      await store.put(gone);
      await store.release(gone.id);
      assert.equal(await store.slice(gone.id, 0, 10), undefined);
    });
  });
}
