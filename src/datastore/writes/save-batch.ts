// Saving a batch of entities of one dataclass, whoever asks (REST's $method=update today; code
// may use it too): each input prepared (read, its values applied: the caller's prepare()), its
// stamp checked, saved (or, with `refresh`, only prepared), all or nothing with `atomic` (one
// transaction, run again from the reads on a conflict when no user code runs in it; its saves
// then move the global stamp once), the events of each save run by the save itself. What the
// answer shows of each entity comes after (SavedBatch.entities): the entity as stored, read again
// where its save may not have left it as its row is (see fromSave), with what the answer's
// projection inlines. Errors of one entity stay with it; a failure of the batch itself throws.

import type { DatasetError } from '../../errors/dataset-error.js';
import { isDatasetError } from '../../errors/dataset-error.js';
import type { DataClassModel, RelatedEntityAttribute } from '../../model/types.js';
import type { LoopTurns } from '../../util/loop-turns.js';
import type { Access } from '../access/access.js';
import type { DataClassCore } from '../dataclass-core.js';
import { readGlobalStamp, type Core } from '../datastore.js';
import { relatedKeyOf, saveInBatch, touchedValuesOf, type Entity } from '../entities/entity.js';
import { existingKeys, fetchRelated, type FetchedEntity, type InlineBudget } from '../reads/fetch.js';
import { hasInlineSelection, type Projection } from '../reads/projection.js';
import { knownTargets } from './rules.js';
import type { WriteBatch } from './writes.js';

/** One input of a batch as its caller prepared it: its entity with the values applied (not saved), or the error that stopped it. */
export interface PreparedSave {
  readonly entity?: Entity;
  readonly error?: DatasetError;
  /** the entity as stored, for the answer of a failed update (a stale stamp) */
  readonly current?: Entity;
  /** an update read with its N→1 targets: the key each relation reached, or null */
  readonly targets?: ReadonlyMap<RelatedEntityAttribute, unknown>;
  /** what is done just before the entity is saved (REST: the uploads its body names attached) */
  readonly beforeSave?: () => Promise<void>;
}

export interface BatchRequest {
  readonly dc: DataClassCore;
  /** the caller's access: the reads of the entities as stored, the write transaction's unit and the request's time budget */
  readonly access: Access;
  /** how many inputs */
  readonly size: number;
  /** all or nothing, in one transaction */
  readonly atomic: boolean;
  /** prepared only, nothing saved: the entities as they would be */
  readonly refresh: boolean;
  /** what the answer shows of each entity (whether a save's entity can be answered as it is depends on it) */
  readonly projection: Projection;
  /** lets other requests through between entities (a transaction stays open) */
  readonly turns: LoopTurns;
  /** reads input `index` and applies its values; `withTargets`: an update reads its N→1 targets with its entity */
  prepare(index: number, withTargets: boolean): Promise<PreparedSave>;
}

/** What the answer shows of one input: the entity (as stored, or as it would be with `refresh`) and what its projection reads; none for a new entity not saved. */
export interface BatchEntity {
  readonly entity?: Entity;
  readonly fetched?: FetchedEntity;
  readonly error?: DatasetError;
}

/** An input as the batch goes: what prepare() gave, what its save wrote or the error it met. */
interface Item {
  entity?: Entity;
  error?: DatasetError;
  current?: Entity;
  targets?: ReadonlyMap<RelatedEntityAttribute, unknown>;
  beforeSave?: () => Promise<void>;
  /** its save went through (or had nothing to write): the names of the attributes it wrote */
  written?: ReadonlySet<string>;
}

export interface SavedBatch {
  /** how many inputs were saved (or prepared, with `refresh`) without an error */
  readonly saved: number;
  /** how many inputs */
  readonly size: number;
  /** an input failed */
  readonly failed: boolean;
  /** an atomic batch that failed: nothing was saved */
  readonly rolledBack: boolean;
  /**
   * What the answer shows of each input, read through `access` (the caller's, with a time budget
   * of its own: made only when something is read — an answer from the saves reads nothing), what
   * it inlines counted within `budget`, and the global stamp when the projection sends a related
   * selection (0 otherwise).
   */
  entities(access: () => Access, budget: InlineBudget): Promise<{ entities: BatchEntity[]; globalStamp: number }>;
}

/** What a batch needs of the core: its transactions, and its dataclasses for what answers inline. */
type BatchCore = Pick<Core, 'transaction' | 'classOf'>;

/** Prepares and saves the inputs of `req` (see the header). */
export async function saveBatch(core: BatchCore, req: BatchRequest): Promise<SavedBatch> {
  const { dc, atomic, turns, access } = req;
  let items: Item[] = [];
  // an answer from the save that shows N→1 relations: updates read their targets with their entity
  const withTargets = !req.refresh && mayAnswerFromSave(dc, req.projection) && req.projection.attributes.some((a) => a.kind === 'deferred' && a.attr.kind === 'relatedEntity');
  const prepareAll = async () => {
    items = [];
    for (let i = 0; i < req.size; i++) {
      items.push({ ...(await req.prepare(i, withTargets)) });
      await turns.pass();
    }
  };
  const saveAll = async (batch?: WriteBatch) => {
    if (batch) {
      // the relation targets the batch names, looked up at once (in its transaction)
      const saves = items.flatMap((p) => (p.entity && !p.error ? [touchedValuesOf(p.entity)] : []));
      if (saves.length > 1) batch.known = await knownTargets(dc, saves, access);
    }
    // the request's statements past its budget: the entities not saved yet are not tried (each
    // would be refused at its first statement), and answered with that error
    let outOfTime: DatasetError | undefined;
    for (const p of items) {
      if (p.error || !p.entity) {
        if (atomic) throw p.error;
        continue;
      }
      if (outOfTime) {
        p.error = outOfTime;
        continue;
      }
      try {
        await p.beforeSave?.();
        // (what is touched now is what the save writes where no user code runs in it: only there is it used, see fromSave)
        const written = new Set(p.entity.touchedAttributes());
        if (batch) await saveInBatch(p.entity, batch);
        else await p.entity.save();
        p.written = written;
      } catch (e) {
        if (!isDatasetError(e)) throw e;
        p.error = e;
        if (e.code === 'STAMP_CHANGED') p.current = (await dc.get(p.entity.getKey(), access)) ?? undefined;
        if (atomic) throw e;
        if (e.code === 'QUERY_TIMEOUT' && (access.budget?.left() ?? 1) <= 0) outOfTime = e;
      }
      await turns.pass();
    }
  };
  if (req.refresh) await prepareAll();
  else if (atomic) {
    // one transaction, read and written: any failure rolls every save back; one the database
    // stopped for a conflict is run again from the reads on when no user code runs in it. Then
    // (no user code in its saves) its saves need no savepoint each, and move the global stamp once.
    const batched = !dc.writesRunUserCode;
    await core.transaction(async () => {
      await prepareAll();
      await saveAll(batched ? { stampMoved: false } : undefined);
    }, dc.writeUnit(access)).catch((e) => {
      // an entity's failure is in its answer; a failure of the transaction itself (no connection,
      // the commit refused) is the answer
      if (!isDatasetError(e) || !items.some((p) => p.error)) throw e;
    });
  } else {
    await prepareAll();
    await saveAll();
  }
  const failed = items.some((p) => p.error);
  const rolledBack = atomic && failed;
  return {
    saved: items.filter((p) => !p.error).length,
    size: items.length,
    failed,
    rolledBack,
    entities: (reader, budget) => {
      let made: Access | undefined;
      return batchEntities(core, req, items, rolledBack, () => (made ??= reader()), budget);
    },
  };
}

/** The entities the answer shows, one per input (see SavedBatch.entities). */
async function batchEntities(core: BatchCore, req: BatchRequest, items: readonly Item[], rolledBack: boolean, access: () => Access, budget: InlineBudget): Promise<{ entities: BatchEntity[]; globalStamp: number }> {
  const { dc, projection, turns } = req;
  const trusted = fromSave(dc, projection, items, rolledBack || req.refresh);
  const shown: (Entity | undefined)[] = [];
  for (const p of items) {
    let entity: Entity | undefined;
    // the entity as stored now (another entity of the batch may have saved it since it was read)
    if (p.current) entity = (await dc.get(p.current.getKey(), access())) ?? p.current;
    else if (p.entity && !p.entity.isNew()) entity = req.refresh || trusted.has(p) ? p.entity : (await dc.get(p.entity.getKey(), access())) ?? p.entity;
    else if (p.entity && req.refresh && !p.error) entity = p.entity;
    shown.push(entity);
    await turns.pass();
  }
  // the global stamp is only sent inside inline selections: read it only then
  const globalStamp = hasInlineSelection(projection) ? await readGlobalStamp(access()) : 0;
  // what saves already know of their N→1 targets, and the others looked up together
  const targets = trusted.size > 0 && plainProjection(projection) ? await relationTargets(access, projection, items, shown, trusted) : undefined;
  const entities: BatchEntity[] = [];
  for (let i = 0; i < items.length; i++) {
    const p = items[i];
    const entity = shown[i];
    const fetched = !entity ? undefined : targets && trusted.has(p) ? await fetchedFromSave(entity, projection, targets) : (await fetchRelated(core, [entity], projection, access(), budget))[0];
    entities.push({ entity, fetched, error: p.error });
    await turns.pass();
  }
  return { entities, globalStamp };
}

/**
 * The saved entities whose answer is the entity in memory, as its save left it, rather than a new
 * read: what was read before the save, the values written, the key the insert gave, the new stamp
 * and time are what the row holds. Not where that may not be so: when user code runs in the save
 * (entity events, calculated set functions: they may change anything, this entity included) or
 * builds the entities read (a user entity class), when the answer shows aliases (their values come
 * from other rows, read with the entity before the save), when a batch names one entity twice (the
 * answer shows where the last save left it), and after a rollback.
 */
function fromSave(dc: DataClassCore, projection: Projection, items: readonly Item[], rolledBack: boolean): Set<Item> {
  const out = new Set<Item>();
  if (rolledBack || !mayAnswerFromSave(dc, projection)) return out;
  const seen = new Map<unknown, number>();
  for (const p of items) {
    const key = (p.entity ?? p.current)?.getKey();
    if (key !== undefined && key !== null) seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  for (const p of items) {
    if (p.entity && !p.error && p.written && !p.entity.isNew() && seen.get(p.entity.getKey()) === 1) out.add(p);
  }
  return out;
}

/** No user code runs in a save of the dataclass or makes its entities, and the answer shows no alias: a saved entity may be answered from its save (fromSave). */
function mayAnswerFromSave(dc: DataClassCore, projection: Projection): boolean {
  return !dc.writesRunUserCode && !dc.constructsOnRead && !projection.attributes.some((a) => a.attr.kind === 'alias');
}

/** A projection of values and deferred relations only: what an answer from a save can fill without fetchRelated. */
function plainProjection(projection: Projection): boolean {
  return projection.attributes.every((a) => a.kind === 'value' || a.kind === 'deferred');
}

/**
 * For the answers from saves: per deferred N→1 relation, the target keys that exist (and that the
 * caller sees). A target whose key the save wrote was checked by the save's rules, in its
 * committed transaction, with the same access; the others are looked up, in one query per
 * relation for the whole batch. (Not a relation of the dataclass to itself: a save of the batch
 * may have changed what its row filter shows.)
 */
async function relationTargets(access: () => Access, projection: Projection, items: readonly Item[], shown: readonly (Entity | undefined)[], trusted: ReadonlySet<Item>): Promise<Map<string, Set<unknown>>> {
  const out = new Map<string, Set<unknown>>();
  for (const a of projection.attributes) {
    if (a.kind !== 'deferred' || a.attr.kind !== 'relatedEntity') continue;
    const relation: RelatedEntityAttribute = a.attr;
    const target: DataClassModel = relation.target;
    const known = new Set<unknown>();
    const unknown: unknown[] = [];
    for (let i = 0; i < items.length; i++) {
      const p = items[i];
      const entity = shown[i];
      if (!entity || !trusted.has(p)) continue;
      const key = relatedKeyOf(entity, relation.name);
      if (key === null) continue;
      if (target === projection.dataClass) unknown.push(key);
      else if (p.written?.has(relation.foreignKey.name)) known.add(key);
      // (an update that left the relation as it was read it with the entity)
      else if (p.targets?.has(relation)) {
        if (p.targets.get(relation) !== null) known.add(key);
      } else unknown.push(key);
    }
    if (unknown.length > 0) for (const key of await existingKeys(target, unknown, access())) known.add(key);
    out.set(relation.name, known);
  }
  return out;
}

/** An answer's entity from its save: calculated values (awaited, in the projection's order) and its N→1 targets as relationTargets found them. */
async function fetchedFromSave(entity: Entity, projection: Projection, targets: ReadonlyMap<string, ReadonlySet<unknown>>): Promise<FetchedEntity> {
  const related = new Map<string, unknown>();
  for (const a of projection.attributes) {
    if (a.kind === 'value' && a.attr.kind === 'calculated') related.set(a.attr.name, await entity.get(a.attr.name));
    else if (a.kind === 'deferred' && a.attr.kind === 'relatedEntity') {
      const key = relatedKeyOf(entity, a.attr.name);
      related.set(a.attr.name, key !== null && targets.get(a.attr.name)?.has(key) ? key : null);
    }
  }
  return { entity, related };
}
