// Big deletes (a selection's drop(), $method=delete with a $filter, the drop of an entity set):
// all of the entities or none, in one transaction, as before — but a chunk of keys at a time, with
// a turn of the event loop between chunks (util/loop-turns.ts), so that other requests are served
// while a delete of a million entities runs (reads go through other connections; on SQLite the
// writer stays this transaction's across the turns, other writes wait for it without blocking).
// Where no user code runs in a drop (no drop event, no drop() of the entity class) a chunk is one
// DELETE … RETURNING (writes.ts deleteKeys) and no entity is read; otherwise each entity is dropped
// through the core, its events run, as Entity.drop() does. Either way the delete controls of the
// dataclass's relations apply (delete-rules.ts): a drop of a whole condition asks its refuse
// relations once, before its first chunk; each chunk's cascades drop the related entities, a
// bounded chunk of parent keys at a time.

import { KEYS_PER_QUERY, WRITE_SLICE_MS } from '../../config/limits.js';
import { INTEGER_TYPES } from '../../model/types.js';
import { and, directPath, type Condition } from '../../query/plan.js';
import { compileSelect } from '../../sql/compiler/statements.js';
import { LoopTurns } from '../../util/loop-turns.js';
import type { Access } from '../access/access.js';
import type { ClassCoreView } from '../core-types.js';
import { requireDataClass, requireDrop } from '../access/guard.js';
import { refuseRelated } from './delete-rules.js';
import { deleteKeys, type WriteBatch } from './writes.js';

/** Keys read in one statement by dropWhere: a few ms of reading, and a filter the key order does not serve is scanned a few times, not once a chunk. */
const KEY_PAGE = 10 * KEYS_PER_QUERY;

/** One big delete: how its chunks are dropped, its turns of the loop, its one move of the global stamp. */
interface Run {
  readonly dc: ClassCoreView;
  readonly access: Access;
  readonly quick: boolean;
  readonly turns: LoopTurns;
  readonly batch: WriteBatch;
  /** the refuse relations were asked for the whole drop, before its first chunk (delete-rules.ts) */
  refuseChecked: boolean;
}

function start(dc: ClassCoreView, access: Access): Run {
  requireDataClass(access, dc.model, 'drop');
  return { dc, access, quick: dropsRunNoUserCode(dc, access), turns: new LoopTurns(WRITE_SLICE_MS), batch: { stampMoved: false }, refuseChecked: false };
}

/**
 * Drops the entities of `keys` (a key with no entity is skipped: a set keeps the keys of dropped
 * members), in the caller's transaction, a chunk at a time.
 */
export async function dropKeys(dc: ClassCoreView, keys: ArrayLike<unknown>, access: Access): Promise<void> {
  await dropChunks(start(dc, access), keys, null);
}

/**
 * Drops the entities that meet `where` (null: all) and the caller's row filter, in the caller's
 * transaction: their keys read a page at a time in key order (never all at once), each page
 * dropped a chunk at a time, `where` checked again by each chunk's DELETE.
 */
export async function dropWhere(dc: ClassCoreView, where: Condition | null, access: Access): Promise<void> {
  const run = start(dc, access);
  // a refuse relation with related entities for any of them: refused before anything is dropped, in one statement per relation
  await refuseRelated(dc.core, dc.model, where, access);
  run.refuseChecked = true;
  const key = dc.model.key;
  const reader = access.reader;
  let after: unknown;
  for (;;) {
    const page: Condition | null = after === undefined ? where : and(where, { kind: 'compare', path: directPath(key), op: '>', value: after });
    const { sql, params } = compileSelect(reader.dialect, { dataClass: dc.model, columns: [{ kind: 'storage', attr: key }], where: page, order: [{ path: directPath(key), descending: false }], offset: 0, limit: KEY_PAGE }, access.restrict);
    const found = await reader.column(sql, params);
    const keys = INTEGER_TYPES.has(key.type) ? found.map(Number) : found.map(String);
    await dropChunks(run, keys, where);
    if (keys.length < KEY_PAGE) return;
    after = keys[keys.length - 1];
  }
}

async function dropChunks(run: Run, keys: ArrayLike<unknown>, where: Condition | null): Promise<void> {
  for (let at = 0; at < keys.length; at += KEYS_PER_QUERY) {
    const chunk = Array.prototype.slice.call(keys, at, at + KEYS_PER_QUERY) as unknown[];
    if (run.quick) await deleteKeys(run.dc.core, run.dc.model, chunk, where, run.access, run.batch, run.refuseChecked);
    else await run.dc.dropEach(chunk, run.access);
    await run.turns.pass();
  }
}

/**
 * A drop of this dataclass by this caller runs no user code and needs no entity read: no drop
 * event (entity or attribute level), the entity class (if any) leaves drop() as it is, and the
 * caller may drop every attribute (requireDrop asks per attribute with a value: here, any).
 */
function dropsRunNoUserCode(dc: ClassCoreView, access: Access): boolean {
  if (dc.dropsRunUserCode) return false;
  try {
    requireDrop(access, dc.model, Object.fromEntries(dc.model.storage.map((a) => [a.name, true])));
  } catch {
    return false; // some attribute the caller may not drop: each entity is asked with its values
  }
  return true;
}
