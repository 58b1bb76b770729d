// POST with $method=update (create and update, one entity or an array, $atomic, $refresh),
// $method=validate and $method=delete. Every change goes through the datastore core
// (entity.set, entity.save, entity.drop, selection.drop), so REST runs the rules and events that
// code runs; this file maps bodies and answers. A saved entity is answered from what its save
// knows (the values written, its key, stamp and time) where that is the entity as stored, and
// read again where it may not be (see fromSave).

import { WRITE_SLICE_MS } from '../../../config/limits.js';
import { WIRE } from '../../../config/wire.js';
import { type DataClassCore, type Entity, EntityLockedError, existingKeys, type FetchedEntity, fetchRelated, type InlineBudget, knownTargets, leadsTo, type Projection, queryWith, readGlobalStamp, relatedKeyOf, requireDataClass, saveInBatch, staleStamp, touchedValuesOf, withBudget, type WriteBatch } from '../../../datastore/index.js';
import type { DataClassModel, RelatedEntityAttribute } from '../../../model/types.js';
import { LoopTurns } from '../../../util/loop-turns.js';
import { DatasetError, isDatasetError, type WireError } from '../../../errors/dataset-error.js';
import { ERRORS } from '../../../errors/registry.js';
import type { Action } from '../../plan/action.js';
import { findEntity } from '../collections.js';
import { ifMatchIdentityHolds, type IfMatch } from '../../request/etag.js';
import { applyValues, attachUploads, entityOf, storedEntityWithTargets, type PendingUpload } from '../input.js';
import { answering, hasInlineSelection, projectionFor } from '../../present/present.js';
import { json, type RestResponse } from '../../present/response.js';
import type { Scope } from '../../scope/scope.js';
import { entityUri, serializeEntity } from '../../present/serialize.js';

type Json = Record<string, unknown>;

/** One input entity with its values applied (not saved), or the error that stopped it. */
interface Prepared {
  entity?: Entity;
  /** the uploads its body names, attached just before it is saved or validated */
  uploads?: readonly PendingUpload[];
  error?: DatasetError;
  /** the entity as stored, for the answer of a failed update */
  current?: Entity;
  /** its save went through (or had nothing to write): the names of the attributes it wrote */
  written?: ReadonlySet<string>;
  /** an update read with its N→1 targets (storedEntityWithTargets): the key each relation reached, or null */
  targets?: ReadonlyMap<RelatedEntityAttribute, unknown>;
}

/** `withTargets`: an update reads its N→1 targets with the entity (its answer will come from its save). */
async function prepare(scope: Scope, dc: DataClassCore, input: unknown, index: number, withTargets = false, ifMatch?: IfMatch): Promise<Prepared> {
  try {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw new DatasetError('INVALID_BODY', `entity #${index + 1} of the body is not a JSON object`);
    }
    const obj = input as Json;
    const hasKey = obj[WIRE.KEY] !== undefined;
    const sent = obj[WIRE.STAMP];
    const matchStamp = ifMatch === undefined || ifMatch === '*' ? ifMatch : ifMatch.stamp;
    if (ifMatch !== undefined) {
      if (!hasKey) throw new DatasetError('INVALID_HEADER', 'If-Match names the version of an entity that exists: the body has no __KEY (to create an entity, send no If-Match)');
      if (sent !== undefined && matchStamp !== '*' && sent !== matchStamp) throw new DatasetError('INVALID_BODY', `the body's __STAMP ${JSON.stringify(sent)} and If-Match's stamp ${matchStamp} disagree: give one of them`);
    }
    const hasStamp = sent !== undefined || ifMatch !== undefined;
    if (hasKey !== hasStamp) {
      throw new DatasetError('INVALID_BODY', `entity #${index + 1}: an update needs both __KEY and __STAMP (to create an entity, send neither and give the key as its attribute)`);
    }
    // a session that may not update the dataclass at all is told so, not that its stamp is stale
    // (what each attribute needs is judged by the save)
    if (hasKey) requireDataClass(scope.access, dc.model, 'update');
    let entity: Entity;
    let targets: ReadonlyMap<RelatedEntityAttribute, unknown> | undefined;
    if (hasKey && withTargets) ({ entity, targets } = await storedEntityWithTargets(scope, dc, obj[WIRE.KEY]));
    else entity = await entityOf(scope, dc, obj[WIRE.KEY]);
    // (If-Match: * asks only that the entity exist: its save still checks the stamp it was read at)
    const stamp = sent ?? matchStamp;
    if (hasKey && stamp !== '*') {
      if (!Number.isInteger(stamp)) throw new DatasetError('INVALID_BODY', `entity #${index + 1}: __STAMP must be a whole number, not ${JSON.stringify(stamp)}`);
      // the client read it at another stamp: refused by the core before any event runs (and the
      // save itself checks the stamp it read in its UPDATE, so no update is lost)
      const stale = staleStamp(entity, stamp as number) ?? otherLife(ifMatch, entity);
      if (stale) return { error: stale, current: entity };
    }
    return { entity, targets, uploads: applyValues(scope, dc, entity, obj, index) };
  } catch (e) {
    if (isDatasetError(e)) return { error: e };
    throw e;
  }
}

/**
 * A batch of more entities than --max-batch-entities is refused (400, 7009) before anything is
 * read or written: its work and its answer grow with it, and one request should not hold the
 * writer (or, with $atomic, one transaction) for minutes.
 */
function checkBatchSize(scope: Scope, method: 'update' | 'validate', list: readonly unknown[]): void {
  const max = scope.services.maxBatchEntities;
  if (list.length <= max) return;
  throw new DatasetError('LIMIT_EXCEEDED', `the body has ${list.length} entities: one $method=${method} takes ${max} at most (--max-batch-entities); send them in several requests${method === 'update' ? ' (or load a large data set with dataset-rest import)' : ''}`);
}

export async function update(scope: Scope, action: Extract<Action, { kind: 'update' }>): Promise<RestResponse> {
  const { dc, entities: list, atomic } = action;
  checkBatchSize(scope, 'update', list);
  // a big batch lets other requests through between its entities (its transaction, if any, stays open)
  const turns = new LoopTurns(WRITE_SLICE_MS);
  // the answer's attributes ($attributes, $expand) are checked before anything is saved: a mistake there loses nothing
  const projection = projectionFor(dc.model, action.shape, scope);
  let prepared: Prepared[] = [];
  // an answer from the save that shows N→1 relations: updates read their targets with their entity
  const withTargets = !action.refresh && mayAnswerFromSave(dc, projection) && projection.attributes.some((a) => a.kind === 'deferred' && a.attr.kind === 'relatedEntity');
  const prepareAll = async () => {
    prepared = [];
    for (let i = 0; i < list.length; i++) {
      prepared.push(await prepare(scope, dc, list[i], i, withTargets, action.ifMatch));
      await turns.pass();
    }
  };
  const saveAll = async (batch?: WriteBatch) => {
    if (batch) {
      // the relation targets the batch names, looked up at once (in its transaction)
      const saves = prepared.flatMap((p) => (p.entity && !p.error ? [touchedValuesOf(p.entity)] : []));
      if (saves.length > 1) batch.known = await knownTargets(dc, saves, scope.access);
    }
    // the request's statements past its budget: the entities not saved yet are not tried (each
    // would be refused at its first statement), and answered with that error
    let outOfTime: DatasetError | undefined;
    for (const p of prepared) {
      if (p.error || !p.entity) {
        if (atomic) throw p.error;
        continue;
      }
      if (outOfTime) {
        p.error = outOfTime;
        continue;
      }
      try {
        await attachUploads(scope, p.entity, p.uploads ?? []);
        // (what is touched now is what the save writes where no user code runs in it: only there is it used, see fromSave)
        const written = new Set(p.entity.touchedAttributes());
        if (batch) await saveInBatch(p.entity, batch);
        else await p.entity.save();
        p.written = written;
      } catch (e) {
        if (!isDatasetError(e)) throw e;
        p.error = e;
        if (e.code === 'STAMP_CHANGED') p.current = (await dc.get(p.entity.getKey(), scope.access)) ?? undefined;
        if (atomic) throw e;
        if (e.code === 'QUERY_TIMEOUT' && (scope.access.budget?.left() ?? 1) <= 0) outOfTime = e;
      }
      await turns.pass();
    }
  };
  if (action.refresh) await prepareAll();
  else if (atomic) {
    // one transaction, read and written: any failure rolls every save back; one the database
    // stopped for a conflict is run again from the reads on when no user code runs in it. Then
    // (no user code in its saves) its saves need no savepoint each, and move the global stamp once.
    const batched = !dc.writesRunUserCode;
    await scope.core.transaction(async () => {
      await prepareAll();
      await saveAll(batched ? { stampMoved: false } : undefined);
    }, dc.writeUnit(scope.access)).catch((e) => {
      // an entity's failure is in its answer; a failure of the transaction itself (no connection,
      // the commit refused) is the answer
      if (!isDatasetError(e) || !prepared.some((p) => p.error)) throw e;
    });
  } else {
    await prepareAll();
    await saveAll();
  }
  // what was saved, read back, has a budget of its own: the client learns what was written even
  // when the writes spent the request's (a non-atomic batch keeps the saves made before it ran out)
  // (and the limits of every answer, for the whole batch: the entities it inlines, its bytes,
  // reserved in the answers in flight as they are counted — one budget, not one per entity)
  try {
    return await answering(scope, async (budget) => {
      const answers = await answerAll(ownTimeBudget(scope), action, projection, prepared, list, turns, budget);
      const failed = prepared.find((p) => p.error);
      // a stamp If-Match named that is no longer the entity's: 412, with the stamp's own __ERROR
      if (action.single) return json(answers[0], failed?.error ? (action.ifMatch !== undefined && failed.error.code === 'STAMP_CHANGED' ? 412 : failed.error.status) : 200);
      // an atomic batch that failed saved nothing: the answer has the status of the failure
      return json({ [WIRE.ENTITIES]: answers }, atomic && failed?.error ? failed.error.status : 200);
    }, true);
  } catch (e) {
    // (what was saved stays saved: the refusal says so, lest a client write it again)
    if (isDatasetError(e) && (e.code === 'LIMIT_EXCEEDED' || e.code === 'SERVER_BUSY')) {
      const saved = prepared.filter((p) => !p.error).length;
      const made = action.atomic && prepared.some((p) => p.error) ? 'nothing was saved' : `${saved} of the ${prepared.length} entities were saved`;
      throw new DatasetError(e.code, `${made}, but their answer cannot be sent: ${e.message}`, [], { status: e.status, retryAfterS: e.retryAfterS });
    }
    throw e;
  }
}

/** The scope a write's answer is read with: its own budget of statement time (the query time limit), the writes' spent or not. */
function ownTimeBudget(scope: Scope): Scope {
  return scope.access.budget === undefined ? scope : { ...scope, access: withBudget(scope.access, scope.core.requestBudget()) };
}

/**
 * The answers, one per input entity: the entity as stored with its absolute uri; with $refresh,
 * as it would be; after a failure, the stored entity (or, for a new one, the values sent) with
 * __ERROR, and __STATUS for a stamp.
 */
async function answerAll(scope: Scope, action: Extract<Action, { kind: 'update' }>, projection: Projection, prepared: readonly Prepared[], list: readonly unknown[], turns: LoopTurns, budget: InlineBudget): Promise<Json[]> {
  const { dc } = action;
  const rolledBack = action.atomic && prepared.some((p) => p.error);
  const trusted = fromSave(dc, projection, prepared, rolledBack || action.refresh);
  const shown: (Entity | undefined)[] = [];
  for (const p of prepared) {
    let entity: Entity | undefined;
    // the entity as stored now (another entity of the batch may have saved it since it was read)
    if (p.current) entity = (await dc.get(p.current.getKey(), scope.access)) ?? p.current;
    else if (p.entity && !p.entity.isNew()) entity = action.refresh || trusted.has(p) ? p.entity : (await dc.get(p.entity.getKey(), scope.access)) ?? p.entity;
    else if (p.entity && action.refresh && !p.error) entity = p.entity;
    shown.push(entity);
    await turns.pass();
  }
  // the global stamp is only sent inside inline selections: read it only then
  const globalStamp = hasInlineSelection(projection) ? await readGlobalStamp(scope.access) : 0;
  // what saves already know of their N→1 targets, and the others looked up together
  const targets = trusted.size > 0 && plainProjection(projection) ? await relationTargets(scope, projection, prepared, shown, trusted) : undefined;
  const answers: Json[] = [];
  for (let i = 0; i < prepared.length; i++) {
    const p = prepared[i];
    const entity = shown[i];
    let out: Json;
    if (entity) {
      const fetched = targets && trusted.has(p) ? await fetchedFromSave(entity, projection, targets) : (await fetchRelated(scope.core, [entity], projection, scope.access, budget))[0];
      out = serializeEntity(fetched, projection, { globalStamp }, action.single);
      if (entity.isNew()) {
        // not saved ($refresh): no key, time or related selection of its own yet
        delete out[WIRE.KEY];
        delete out[WIRE.TIMESTAMP];
        for (const a of projection.attributes) if (a.kind === 'deferred' && leadsTo(a.attr)?.many) out[a.attr.name] = null;
      } else out.uri = `${action.origin}${entityUri(dc.model, entity.getKey())}`;
    } else {
      // a new entity that was not saved: the values it was sent with
      const input = list[i];
      out = typeof input === 'object' && input !== null && !Array.isArray(input) ? { ...(input as Json) } : {};
    }
    if (p.error) {
      if (p.error.code === 'STAMP_CHANGED') out[WIRE.STATUS] = { status: 2, statusText: 'Stamp has changed', success: false };
      // another session holds it locked: 4D's dk status locked (3), with who holds it
      else if (p.error instanceof EntityLockedError) out[WIRE.STATUS] = p.error.lockStatus;
      // an entity event refused it: 4D's dk status validation failed (7) / serious validation error (8)
      else if (p.error.validation) out[WIRE.STATUS] = { status: p.error.validation.serious ? 8 : 7, statusText: p.error.validation.statusText, success: false };
      out[WIRE.ERROR] = p.error.toWire();
    }
    answers.push(out);
    await turns.pass();
  }
  return answers;
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
function fromSave(dc: DataClassCore, projection: Projection, prepared: readonly Prepared[], rolledBack: boolean): Set<Prepared> {
  const out = new Set<Prepared>();
  if (rolledBack || !mayAnswerFromSave(dc, projection)) return out;
  const seen = new Map<unknown, number>();
  for (const p of prepared) {
    const key = (p.entity ?? p.current)?.getKey();
    if (key !== undefined && key !== null) seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  for (const p of prepared) {
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
async function relationTargets(scope: Scope, projection: Projection, prepared: readonly Prepared[], shown: readonly (Entity | undefined)[], trusted: ReadonlySet<Prepared>): Promise<Map<string, Set<unknown>>> {
  const out = new Map<string, Set<unknown>>();
  for (const a of projection.attributes) {
    if (a.kind !== 'deferred' || a.attr.kind !== 'relatedEntity') continue;
    const relation: RelatedEntityAttribute = a.attr;
    const target: DataClassModel = relation.target;
    const known = new Set<unknown>();
    const unknown: unknown[] = [];
    for (let i = 0; i < prepared.length; i++) {
      const p = prepared[i];
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
    if (unknown.length > 0) for (const key of await existingKeys(target, unknown, scope.access)) known.add(key);
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

/**
 * $method=validate: the values are applied and checked as a save would check them, nothing is
 * saved. An array's failures are answered one element per failing input under __ENTITIES
 * (reference §3.14.6); one object's, as an update of one object answers them: its __ERROR at the
 * top level.
 */
export async function validate(scope: Scope, action: Extract<Action, { kind: 'validate' }>): Promise<RestResponse> {
  const { dc, entities: list } = action;
  checkBatchSize(scope, 'validate', list);
  const turns = new LoopTurns(WRITE_SLICE_MS);
  const failures: { [WIRE.ERROR]: WireError[] }[] = [];
  let refused: number | undefined;
  for (let i = 0; i < list.length; i++) {
    const p = await prepare(scope, dc, list[i], i);
    if (!p.error && p.entity) {
      try {
        await attachUploads(scope, p.entity, p.uploads ?? []);
        await p.entity.validate();
      } catch (e) {
        if (!isDatasetError(e)) throw e;
        p.error = e;
      }
    }
    if (p.error) {
      // a new entity's errors end with 1534, as 4D reports them (reference §3.14.6)
      const isNew = !(typeof list[i] === 'object' && list[i] !== null && WIRE.KEY in (list[i] as Json));
      const closing = isNew ? [{ message: `The new entity of the datastore class "${dc.name}" cannot be saved`, componentSignature: ERRORS.NEW_ENTITY_NOT_SAVED.signature, errCode: ERRORS.NEW_ENTITY_NOT_SAVED.errCode }] : [];
      failures.push({ [WIRE.ERROR]: [...p.error.toWire(), ...closing] });
      if (p.error.status === 401 || p.error.status === 403) refused ??= p.error.status;
    }
    await turns.pass();
  }
  // a permission refusal answers its own status (401: log in first; 403), other failures 400
  if (failures.length === 0) return json({ ok: true });
  return json(action.single ? failures[0] : { [WIRE.ENTITIES]: failures }, refused ?? 400);
}

/** $method=delete on an entity, or on every entity a $filter selects (one transaction). */
export async function remove(scope: Scope, action: Extract<Action, { kind: 'delete' }>): Promise<RestResponse> {
  const { dc, target } = action;
  if (target.kind === 'entity') {
    const entity = await findEntity(scope, dc, target.selector);
    // If-Match: the entity as the client read it, or nothing is dropped (412); drop() checks the
    // stamp again in its statement, so a save in between fails it too
    const ifMatch = target.ifMatch;
    const stale = ifMatch === undefined || ifMatch === '*' ? undefined : (staleStamp(entity, ifMatch.stamp, 'dropped') ?? otherLife(ifMatch, entity, 'dropped'));
    try {
      if (stale) throw stale;
      await entity.drop();
    } catch (e) {
      if (ifMatch !== undefined && isDatasetError(e) && e.code === 'STAMP_CHANGED') throw new DatasetError(e.code, e.message, [], { items: e.items, status: 412 });
      throw e;
    }
  } else await queryWith(dc.selectWhere(null, scope.access), target.filter, target.params, scope.visible).drop();
  return json({ ok: true });
}

/**
 * An If-Match whose tag names another entity, or another life of this one (its key deleted and
 * created again, then saved up to the same stamp), though its stamp is the entity's: refused as a
 * stale stamp is (1263, 412), the entity left as it is. Undefined when the tag names this entity
 * as it is now, or names no identity (`*`, a bare stamp: a __STAMP's check), or there is no If-Match.
 */
function otherLife(ifMatch: IfMatch | undefined, entity: Entity, what?: 'saved' | 'dropped'): DatasetError | undefined {
  if (ifMatch === undefined || ifMatchIdentityHolds(ifMatch, entity.getKey(), entity.getTimeStamp().getTime())) return undefined;
  // (no stamp is NaN: the core's own stale-stamp error, as a stamp mismatch gives it)
  return staleStamp(entity, Number.NaN, what);
}
