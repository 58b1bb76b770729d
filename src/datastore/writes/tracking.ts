// 4D's data change tracking on the write path (ORDA/global-stamp.md; the model's side is
// model/build/tracking.ts). A write of a dataclass that tracks its changes moves the global stamp
// before its statement, the dialect's way that gives such writes their stamps in the order they
// commit (Dialect.schema.globalStamp's `ordered`), and stores the new value: in the entity's
// `__GlobalStamp` when it creates or updates, in a new `__DeletedRecords` entity (the key as text,
// the stamp, the dataclass's name and number) when it drops. A sync asking
// `__GlobalStamp > :1` (and `__Stamp > :1` of `__DeletedRecords`) with the largest stamp it has
// seen, or with ds.getGlobalStamp(), then misses no change. The writes of a batch share one stamp,
// as they share one move of it; model.json's deletedRecordsRetention bounds __DeletedRecords
// (pruneDrops). Every write path comes here: an entity's save and drop
// (writes.ts), the big drops (bulk-drop.ts), an import's bulk insert (import-writes.ts).

import { TRACKING, type DataClassModel, type StorageAttribute } from '../../model/types.js';
import { compileBulkInsert } from '../../sql/bulk-insert.js';
import { TIMESTAMP_COLUMN } from '../../sql/hidden-columns.js';
import { bumpTrackedGlobalStamp } from '../../storage/system-tables/global-stamp.js';
import { storedFold } from '../../util/fold.js';
import type { CoreView } from '../core-types.js';

/** What a tracked write of a batch shares with the others: the global stamp it moved to, once. */
export interface TrackedBatch {
  stampMoved: boolean;
  /** the stamp the batch's tracked writes store, once the first has moved it */
  globalStamp?: number;
  /** the dataclasses its tracked writes touch: the live feed reads theirs after the commit */
  touched?: Set<string>;
}

/** The stamp a tracked write stores: the batch's, else a new one (the global stamp moved for it). */
export async function trackedStamp(core: CoreView, dc: DataClassModel, batch: TrackedBatch | undefined): Promise<number> {
  if (batch?.globalStamp !== undefined) {
    batch.touched?.add(dc.name);
    return batch.globalStamp;
  }
  const stamp = await bumpTrackedGlobalStamp(core.storage);
  // the live streams hear of it once it commits — the feed reads the changes of the dataclasses
  // written, not every one followed; other instances hear through the engine's messages where it
  // has them (PostgreSQL's NOTIFY), else at their next poll
  const touched = new Set([dc.name]);
  await core.storage.afterCommit(async () => core.changes.committed(touched));
  if (batch) {
    batch.stampMoved = true;
    batch.globalStamp = stamp;
    batch.touched = touched;
  }
  return stamp;
}

/** The values a write stores: the caller's, and for a tracked dataclass the stamp in `__GlobalStamp`. */
export function stampedValues(dc: DataClassModel, values: ReadonlyMap<StorageAttribute, unknown>, stamp: number | undefined): ReadonlyMap<StorageAttribute, unknown> {
  return dc.globalStamp && stamp !== undefined ? new Map(values).set(dc.globalStamp, stamp) : values;
}

/**
 * Records the drop of the entities of `keys` (their keys as stored) of a tracked dataclass: one
 * `__DeletedRecords` entity each, written with the drop in its transaction (a multi-row INSERT).
 */
export async function recordDrops(core: CoreView, dc: DataClassModel, keys: readonly unknown[], stamp: number): Promise<void> {
  const deleted = core.model.deletedRecords;
  if (!deleted || keys.length === 0) return;
  const d = core.storage.dialect;
  // (the ID is the engine's autoincrement: not among the columns written)
  const attrs = deleted.storage.filter((a) => !a.identifying);
  const now = Date.now();
  const table = dc.name;
  const tableFold = storedFold(table);
  const params: unknown[] = [];
  for (const key of keys) {
    const text = String(key);
    for (const a of attrs) {
      // (in compileBulkInsert's order: each value, then a string's fold)
      if (a.name === TRACKING.PRIMARY_KEY) params.push(text, storedFold(text));
      else if (a.name === TRACKING.STAMP) params.push(stamp);
      else if (a.name === TRACKING.TABLE_NAME) params.push(table, tableFold);
      else params.push(dc.tableNumber); // __TableNumber
    }
    params.push(1, now);
  }
  await core.storage.run(compileBulkInsert(d, deleted, attrs, keys.length), params);
  await pruneDrops(core, deleted, stamp, now);
}

/** When each datastore last let go of the drops past its retention. */
const lastPrune = new WeakMap<CoreView, number>();
/** How often a datastore lets go of old drops at most (a drop's cost stays one INSERT). */
const PRUNE_EVERY_MS = 60_000;

/**
 * With model.json's `deletedRecordsRetention`, the drops older than it go — in a drop's
 * transaction, once a minute at most per process: `{ "days": N }` by the time they were recorded,
 * `{ "stamps": N }` by their stamp (those N or more stamps behind this one).
 */
async function pruneDrops(core: CoreView, deleted: DataClassModel, stamp: number, now: number): Promise<void> {
  const keep = core.model.deletedRecordsRetention;
  if (!keep || now - (lastPrune.get(core) ?? 0) < PRUNE_EVERY_MS) return;
  lastPrune.set(core, now);
  const { quote: q, placeholder: p } = core.storage.dialect.sql;
  const stampColumn = (deleted.attributesByName.get(TRACKING.STAMP) as StorageAttribute).column;
  const [column, bound] = keep.days !== undefined ? [TIMESTAMP_COLUMN, now - keep.days * 86_400_000] : [stampColumn, stamp - (keep.stamps ?? 0)];
  await core.storage.run(`DELETE FROM ${q(deleted.table)} WHERE ${q(column)} <= ${p(1)}`, [bound]);
}
