// POST with $method=update (create and update, one entity or an array, $atomic, $refresh),
// $method=validate and $method=delete. Every change goes through the datastore core
// (entity.set, entity.save, entity.drop, selection.drop), so REST runs the rules and events that
// code runs. A batch is saved by the core's saveBatch (datastore/writes/save-batch.ts: stamps,
// $atomic, the saves, the entities its answer shows); this file maps bodies onto entities (the
// batch's prepare) and the saved or failed entities onto the answer (__STATUS, __ERROR, uri).

import { WRITE_SLICE_MS } from '../../../config/limits.js';
import { WIRE } from '../../../config/wire.js';
import { type BatchEntity, type DataClassCore, type Entity, EntityLockedError, leadsTo, type Projection, queryWith, requireDataClass, saveBatch, staleStamp, withBudget } from '../../../datastore/index.js';
import type { RelatedEntityAttribute } from '../../../model/types.js';
import { LoopTurns } from '../../../util/loop-turns.js';
import { DatasetError, isDatasetError, type WireError } from '../../../errors/dataset-error.js';
import { ERRORS } from '../../../errors/registry.js';
import type { Action } from '../../plan/action.js';
import { findEntity } from '../collections.js';
import { ifMatchIdentityHolds, type IfMatch } from '../../request/etag.js';
import { applyValues, attachUploads, entityOf, storedEntityWithTargets, type PendingUpload } from '../input.js';
import { answering, projectionFor } from '../../present/present.js';
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
    // (and one that may not create is told so here too: $refresh, which saves nothing, would answer the entity it may not make)
    requireDataClass(scope.access, dc.model, hasKey ? 'update' : 'create');
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
  const batch = await saveBatch(scope.core, {
    dc, access: scope.access, size: list.length, atomic, refresh: action.refresh, projection, turns,
    prepare: async (i, withTargets) => {
      const p = await prepare(scope, dc, list[i], i, withTargets, action.ifMatch);
      const entity = p.entity;
      return entity ? { ...p, beforeSave: () => attachUploads(scope, entity, p.uploads ?? []) } : p;
    },
  });
  // what was saved, read back, has a budget of its own: the client learns what was written even
  // when the writes spent the request's (a non-atomic batch keeps the saves made before it ran out)
  // (and the limits of every answer, for the whole batch: the entities it inlines, its bytes,
  // reserved in the answers in flight as they are counted — one budget, not one per entity)
  try {
    return await answering(scope, async (budget) => {
      const { entities, globalStamp } = await batch.entities(() => ownTimeBudget(scope).access, budget);
      const answers = await answerAll(action, projection, entities, globalStamp, list, turns);
      const failed = entities.find((p) => p.error);
      // a stamp If-Match named that is no longer the entity's: 412, with the stamp's own __ERROR
      if (action.single) return json(answers[0], failed?.error ? (action.ifMatch !== undefined && failed.error.code === 'STAMP_CHANGED' ? 412 : failed.error.status) : 200);
      // an atomic batch that failed saved nothing: the answer has the status of the failure
      return json({ [WIRE.ENTITIES]: answers }, atomic && failed?.error ? failed.error.status : 200);
    }, true);
  } catch (e) {
    // (what was saved stays saved: the refusal says so, lest a client write it again)
    if (isDatasetError(e) && (e.code === 'LIMIT_EXCEEDED' || e.code === 'SERVER_BUSY')) {
      const made = batch.rolledBack ? 'nothing was saved' : `${batch.saved} of the ${batch.size} entities were saved`;
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
async function answerAll(action: Extract<Action, { kind: 'update' }>, projection: Projection, entities: readonly BatchEntity[], globalStamp: number, list: readonly unknown[], turns: LoopTurns): Promise<Json[]> {
  const { dc } = action;
  const answers: Json[] = [];
  for (let i = 0; i < entities.length; i++) {
    const { entity, fetched, error } = entities[i];
    let out: Json;
    if (entity && fetched) {
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
    if (error) {
      if (error.code === 'STAMP_CHANGED') out[WIRE.STATUS] = { status: 2, statusText: 'Stamp has changed', success: false };
      // another session holds it locked: 4D's dk status locked (3), with who holds it
      else if (error instanceof EntityLockedError) out[WIRE.STATUS] = error.lockStatus;
      // an entity event refused it: 4D's dk status validation failed (7) / serious validation error (8)
      else if (error.validation) out[WIRE.STATUS] = { status: error.validation.serious ? 8 : 7, statusText: error.validation.statusText, success: false };
      out[WIRE.ERROR] = error.toWire();
    }
    answers.push(out);
    await turns.pass();
  }
  return answers;
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
