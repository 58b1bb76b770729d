// 4D's data change tracking in the model (ORDA/global-stamp.md; model/load-model.ts runs these
// passes). A dataclass tracks its changes when its entry says `"trackChanges": true`, or, as 4D's
// structure does it, declares an attribute `__GlobalStamp` of type long64. It then gets that
// attribute — kept by the server: every create and update stores the global stamp it moved to
// (datastore/writes/tracking.ts), no client or code writes it — indexed, for the
// `__GlobalStamp > :1` queries of a sync. When any dataclass tracks, the model gets 4D's
// `__DeletedRecords` dataclass too: one entity per drop of a tracked entity (its key as text, the
// stamp, its dataclass's name and number), read-only, each session seeing the rows of the
// dataclasses it may read.

import { TRACKING, type DataClassModel, type DeletedRecordsRetention, type StorageAttribute } from '../types.js';
import { attributesOf, checkKeys, isObject, type Draft, type Fail, type Json, type Mutable } from './checks.js';

/** What a declared `__GlobalStamp` entry may say (its name and type are all it needs). */
const STAMP_KEYS = ['name', 'kind', 'type'];

/**
 * Before the attributes are read: which dataclasses track their changes. A declared
 * `__GlobalStamp` entry is taken out of the attribute entries (its name is a reserved one, which
 * the attribute pass refuses); the attribute itself is made by addTracking.
 */
export function readTracking(draft: Draft, rawClasses: readonly unknown[], fail: Fail): Set<DataClassModel> {
  const tracked = new Set<DataClassModel>();
  for (const dc of draft.classes) {
    const i = draft.jsonIndex.get(dc) ?? 0;
    const raw = rawClasses[i] as Json;
    const path = `$.dataClasses[${i}]`;
    if (raw.trackChanges !== undefined && typeof raw.trackChanges !== 'boolean') fail(`${path}.trackChanges`, 'must be true or false');
    if (raw.trackChanges === true) tracked.add(dc);
    const entries = draft.rawAttrs.get(dc) ?? [];
    const declared = entries.filter((e) => isObject(e.raw) && e.raw.name === TRACKING.GLOBAL_STAMP);
    for (const { raw: attr, path: at } of declared) {
      checkKeys(attr, STAMP_KEYS, at, fail);
      if ((attr.kind ?? 'storage') !== 'storage' || attr.type !== 'long64') fail(at, `${TRACKING.GLOBAL_STAMP} turns on change tracking and must be a storage attribute of type long64 (or say "trackChanges": true on the dataclass instead)`);
      else tracked.add(dc);
    }
    if (declared.length > 0 && raw.trackChanges === false) fail(`${path}.trackChanges`, `is false, but the dataclass declares ${TRACKING.GLOBAL_STAMP}, which turns tracking on: remove one of them`);
    if (declared.length > 0) draft.rawAttrs.set(dc, entries.filter((e) => !declared.includes(e)));
  }
  return tracked;
}

/** After the attributes are read: `__GlobalStamp` on each tracked dataclass, and `__DeletedRecords` when there is one. */
export function addTracking(draft: Draft, tracked: ReadonlySet<DataClassModel>): DataClassModel | undefined {
  if (tracked.size === 0) return undefined;
  for (const dc of tracked) {
    const attr = serverAttribute(dc, TRACKING.GLOBAL_STAMP, 'long64', '__global_stamp', true);
    attributesOf(dc).push(attr);
    (dc as Mutable<DataClassModel>).globalStamp = attr;
  }
  const deleted: Mutable<DataClassModel> = {
    name: TRACKING.DELETED_RECORDS,
    className: TRACKING.DELETED_RECORDS,
    collectionName: `${TRACKING.DELETED_RECORDS}Selection`,
    tableNumber: draft.classes.length + 1,
    table: TRACKING.DELETED_RECORDS,
    defaultTopSize: undefined,
    exposed: true,
    extraProperties: {},
    attributes: [],
    attributesByName: new Map(),
    key: undefined as unknown as StorageAttribute,
    storage: [],
    system: true,
  };
  const key: StorageAttribute = { ...serverAttribute(deleted, 'ID', 'long64', 'ID', true), identifying: true, autoincrement: true };
  attributesOf(deleted).push(
    key,
    serverAttribute(deleted, TRACKING.PRIMARY_KEY, 'string', '__primary_key', false),
    serverAttribute(deleted, TRACKING.STAMP, 'long64', '__stamp_of_drop', true),
    serverAttribute(deleted, TRACKING.TABLE_NAME, 'string', '__table_name', true),
    serverAttribute(deleted, TRACKING.TABLE_NUMBER, 'long', '__table_number', false),
  );
  deleted.key = key;
  draft.classes.push(deleted);
  draft.byName.set(deleted.name, deleted);
  draft.byCollection.set(deleted.collectionName, deleted);
  return deleted;
}

function serverAttribute(dc: DataClassModel, name: string, type: StorageAttribute['type'], column: string, indexed: boolean): StorageAttribute {
  return {
    name, kind: 'storage', type, column, fieldPos: 0, exposed: true, dataClass: dc,
    identifying: false, autoincrement: false, autogenerate: false, indexed, unique: false, dateOnly: false, notNull: false, implicit: false, serverSet: true,
  };
}

/** model.json's `deletedRecordsRetention`: `{ "days": N }` or `{ "stamps": N }`, N a whole number above 0. */
export function readRetention(raw: unknown, tracks: boolean, fail: Fail): DeletedRecordsRetention | undefined {
  if (raw === undefined) return undefined;
  const path = '$.deletedRecordsRetention';
  if (!isObject(raw)) return void fail(path, 'must be an object: { "days": N } or { "stamps": N }');
  checkKeys(raw, ['days', 'stamps'], path, fail);
  const given = (['days', 'stamps'] as const).filter((k) => raw[k] !== undefined);
  if (given.length !== 1) return void fail(path, 'gives one of "days" (keep the drops of the last N days) or "stamps" (of the last N global stamps)');
  const n = raw[given[0]];
  if (!Number.isSafeInteger(n) || (n as number) < 1) return void fail(`${path}.${given[0]}`, `must be a whole number above 0, not ${JSON.stringify(n)}`);
  if (!tracks) return void fail(path, 'bounds __DeletedRecords, which only a dataclass with "trackChanges": true brings');
  return { [given[0]]: n as number };
}
