// One state of the data for reads of more than one statement: an access that reads through a
// snapshot of the storage (a page's count, entities, global stamp and what it inlines all see one
// state, whatever commits meanwhile; PostgreSQL runs them in one REPEATABLE READ transaction).

import { readingThrough, type Access } from './access.js';
import type { Core } from '../datastore.js';

/** Runs `fn` with `access` reading through one snapshot (the same access when it reads through one already). */
export async function inSnapshot<T>(core: Pick<Core, 'snapshot'>, access: Access, fn: (access: Access) => Promise<T>): Promise<T> {
  // Already reading one: the same. A second would be a second connection of the pool held by one
  // request — N requests holding N snapshots, each waiting for another, until their time ran out.
  if (snapshotAccesses.has(access)) return fn(access);
  const snapshot = await core.snapshot();
  try {
    const through = readingThrough(access, snapshot);
    snapshotAccesses.add(through);
    return await fn(through);
  } finally {
    await snapshot.release();
  }
}

/** The accesses that read through a snapshot inSnapshot() took. */
const snapshotAccesses = new WeakSet<Access>();
