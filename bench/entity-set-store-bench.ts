// The entity-set store bench (`node --expose-gc --import tsx bench/entity-set-store-bench.ts`):
// what one set operation costs as the number of live sets grows, and what members cost in memory.
//   1. put / get / slice / release / owned of a small set, with --small (1,000) and --large (84,000)
//      sets already kept, in the in-process store (MemoryEntitySetStore) and in the database store
//      over a SQLite file (DatabaseEntitySetStore): the median of --ops operations each, and the
//      ratio large/small (an operation that scans every set grows with them; one that does not
//      stays near 1×)
//   2. bytes a member held by the in-process store, 1,000,000 integer keys and 1,000,000 uuid keys
//      (32 uppercase hex digits, as 4D writes them): process.memoryUsage() after gc() while the set
//      is kept, less before it; and what the store itself accounts (its `bytes`, when it has one)
// Stores only, no HTTP: the cost of the server around them is entity-set-bench.ts's.
// Options: --small N (1000), --large N (84000), --ops N (400), --members N a set of the table (10).

import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DatabaseEntitySetStore } from '../src/datastore/sets/database-set-store.js';
import { MemoryEntitySetStore, type EntitySetStore, type StoredSet } from '../src/datastore/sets/entity-set-store.js';
import { newSetId } from '../src/datastore/sets/entity-sets.js';
import { SqliteDriver } from '../src/storage/sqlite.js';
import { createSystemTables } from '../src/storage/system-tables/tables.js';
import { TransactionManager } from '../src/storage/transactions.js';
import { formatTable } from './measure.js';
import { temporaryFolder } from './processes.js';

const { values } = parseArgs({
  options: {
    small: { type: 'string', default: '1000' },
    large: { type: 'string', default: '84000' },
    ops: { type: 'string', default: '400' },
    members: { type: 'string', default: '10' },
  },
  strict: true,
});
const SMALL = Number(values.small);
const LARGE = Number(values.large);
const OPS = Number(values.ops);
const MEMBERS = Number(values.members);

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const us = (ms: number): string => `${(ms * 1000).toFixed(ms < 0.1 ? 1 : 0)} µs`;

const HOUR = 3_600_000;
const small = (owner: string): StoredSet => ({
  id: newSetId(), dataClass: 'Person', keys: Float64Array.from({ length: MEMBERS }, (_, i) => i + 1), sorted: false, timeoutMs: HOUR, refreshed: 0, owner,
});

type Op = 'put' | 'get' | 'slice' | 'owned' | 'release';
const OPS_TIMED: readonly Op[] = ['put', 'get', 'slice', 'owned', 'release'];

/** Fills `store` with `n` sets (owners of 1,000 sets each), then times each operation on sets of its own. */
async function timeOps(store: EntitySetStore, n: number): Promise<Record<Op, number>> {
  const owners = Math.max(1, Math.ceil(n / 1000));
  for (let i = 0; i < n; i++) await store.put(small(`owner-${i % owners}`));
  const mine = Array.from({ length: OPS }, () => small('bench'));
  const times: Record<Op, number[]> = { put: [], get: [], slice: [], owned: [], release: [] };
  const timed = async (op: Op, f: () => Promise<unknown>) => {
    const t = performance.now();
    await f();
    times[op].push(performance.now() - t);
  };
  for (const s of mine) await timed('put', () => store.put(s));
  for (const s of mine) await timed('get', () => store.get(s.id));
  for (const s of mine) await timed('slice', () => store.slice(s.id, 0, 5));
  for (let i = 0; i < OPS; i++) await timed('owned', () => store.owned('bench'));
  for (const s of mine) await timed('release', () => store.release(s.id));
  return Object.fromEntries(OPS_TIMED.map((op) => [op, median(times[op])])) as Record<Op, number>;
}

async function withDatabaseStore<T>(f: (store: EntitySetStore) => Promise<T>): Promise<T> {
  const driver = new SqliteDriver(join(temporaryFolder('set-store-bench'), 'sets.sqlite'));
  try {
    const storage = new TransactionManager(driver);
    await createSystemTables(storage);
    return await f(new DatabaseEntitySetStore(storage, { maxMembers: 1e12 }));
  } finally {
    await driver.close(); // (the folder goes when the bench ends)
  }
}

async function operations(): Promise<void> {
  const rows: string[][] = [];
  const stores: [string, (f: (s: EntitySetStore) => Promise<Record<Op, number>>) => Promise<Record<Op, number>>][] = [
    ['in process', async (f) => {
      const store = new MemoryEntitySetStore({ sweepEveryMs: 0, maxMembers: 1e12, maxBytes: 2 ** 40 } as ConstructorParameters<typeof MemoryEntitySetStore>[0]);
      try {
        return await f(store);
      } finally {
        store.close();
      }
    }],
    ['database (SQLite file)', withDatabaseStore],
  ];
  for (const [name, open] of stores) {
    const a = await open((s) => timeOps(s, SMALL));
    const b = await open((s) => timeOps(s, LARGE));
    for (const op of OPS_TIMED) rows.push([name, op, us(a[op]), us(b[op]), `${(b[op] / a[op]).toFixed(1)}×`]);
  }
  console.log(`1. one set operation (${MEMBERS}-member sets), median of ${OPS}, with ${SMALL} and ${LARGE} sets kept:`);
  console.log(formatTable(['store', 'operation', `${SMALL} sets`, `${LARGE} sets`, 'ratio'], rows).replace(/^/gm, '  '));
}

async function memory(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) {
    console.log('2. memory: run with node --expose-gc');
    return;
  }
  const held = (): number => {
    gc();
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const N = 1_000_000;
  const rows: string[][] = [];
  const kinds: [string, () => Float64Array | string[]][] = [
    ['integer keys', () => Float64Array.from({ length: N }, (_, i) => i * 3 + 1)],
    ['uuid keys', () => Array.from({ length: N }, () => randomUUID().replaceAll('-', '').toUpperCase())],
  ];
  for (const [name, make] of kinds) {
    const store = new MemoryEntitySetStore({ sweepEveryMs: 0, maxMembers: 1e12, maxBytes: 2 ** 40 } as ConstructorParameters<typeof MemoryEntitySetStore>[0]);
    const before = held();
    // (no reference kept here: what is held after is the store's)
    await store.put({ id: newSetId(), dataClass: 'Person', keys: make(), sorted: false, timeoutMs: HOUR, refreshed: 0 });
    const after = held();
    const accounted = (store as unknown as { bytes?: number }).bytes;
    rows.push([name, `${((after - before) / N).toFixed(2)}`, accounted === undefined ? '—' : (accounted / N).toFixed(2)]);
    store.close();
  }
  console.log(`\n2. bytes a member of one ${N}-member set kept in process (heap + ArrayBuffers after gc, less before):`);
  console.log(formatTable(['keys', 'measured', 'accounted by the store'], rows).replace(/^/gm, '  '));
}

await operations();
await memory();
