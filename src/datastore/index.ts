// The core's public surface: what the layers above the datastore (rest/ today) may use of it, in
// one list. The core's own files import each other directly; rest/ imports this file only (a lint
// rule, eslint.config.js), so what the HTTP side leans on is written down here, and a file of the
// core can be split or moved without touching rest/.

export { type Access, withBudget, withoutBudget } from './access/access.js';
export { runAsCaller } from './access/caller.js';
export { inSnapshot } from './access/snapshot.js';
export { bothVisible, readableBy, refusal, requireDataClass, sessionMay } from './access/guard.js';
export { DataClass } from './dataclass.js';
export { type DataClassCore, PLAIN } from './dataclass-core.js';
export { type Core, coreOf, Datastore, readGlobalStamp } from './datastore.js';
export { type Change, type ChangeBatch, type Subscription } from './live/change-feed.js';
export { entitiesWithin, type EntityWithin, judgedByOwnValues, type Within } from './reads/entities-within.js';
export { rowsRestricted } from './access/row-filters.js';
export { type WebhookConfig, type WebhookCursor } from './live/webhook-cursors.js';
export type { DirectoryHook, DirectoryHooks, DirectoryUser } from './directory.js';
export { checkTouched, Entity, entityClassOf, relatedKeyOf, staleStamp } from './entities/entity.js';
export type { FileKind, FileStore, StoredFile, UploadQuota } from './files/files.js';
export { AnswerBudget, sizeText } from './reads/answer-size.js';
export { keyChunks, type RowChunks, selectionChunks } from './reads/export-read.js';
export { countRelated, type FetchedEntity, type FetchedSelection, fetchRelated, InlineBudget } from './reads/fetch.js';
export { type Page, type PagePlanParts, type PageRequest, readPage, readPageOf } from './reads/read-page.js';
export { readSetPage, type SetPage, type SetPageRequest } from './reads/set-page.js';
export { hasInlineSelection, leadsTo, type ProjectedAttribute, type Projection, resolveProjection } from './reads/projection.js';
export { aggregates, distinct } from './selections/compute.js';
export { classOf, EntitySelection, membersOf, queryWith, withAccess, withOrder } from './selections/selection.js';
export { isoSeconds } from './sessions/expiry.js';
export { Session, sessionInternals } from './sessions/session.js';
export type { SessionInfo } from './sessions/store.js';
export { EntityLockedError, lockEntity, unlockEntity } from './sessions/locks.js';
export type { KeyList, StoredSet } from './sets/entity-set-store.js';
export { setNotFound, type SetOperator } from './sets/entity-sets.js';
export { type ResolvedSet, type SetQuery, sessionSets, SessionSets } from './sets/session-sets.js';
export { relationsOf } from './writes/rules.js';
export { type BatchEntity, type BatchRequest, type PreparedSave, saveBatch, type SavedBatch } from './writes/save-batch.js';
export { entityNotFound, type WriteBatch } from './writes/writes.js';
