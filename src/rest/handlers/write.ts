// POST with $method=update (create and update, one entity or an array, $atomic, $refresh),
// $method=validate and $method=delete. Every change goes through the datastore core
// (entity.set, entity.save, entity.drop, selection.drop), so REST runs the rules and events that
// code runs; this file maps bodies and answers.

import { WIRE } from '../../config/wire.js';
import { readGlobalStamp } from '../../datastore/datastore.js';
import type { DataClassCore } from '../../datastore/dataclass-core.js';
import { staleStamp, type Entity } from '../../datastore/entity.js';
import { fetchRelated } from '../../datastore/fetch.js';
import { requireDataClass } from '../../datastore/guard.js';
import { EntityLockedError } from '../../datastore/locks.js';
import { leadsTo } from '../../datastore/projection.js';
import { queryWith } from '../../datastore/selection.js';
import { DatasetError, isDatasetError, type WireError } from '../../errors/dataset-error.js';
import { ERRORS } from '../../errors/registry.js';
import type { Action } from '../action.js';
import { findEntity } from '../collections.js';
import { applyValues, attachUploads, entityOf, type PendingUpload } from '../input.js';
import { projectionFor } from '../present.js';
import { json, type RestResponse } from '../response.js';
import type { Scope } from '../scope.js';
import { entityUri, serializeEntity } from '../serialize.js';

type Json = Record<string, unknown>;

/** One input entity with its values applied (not saved), or the error that stopped it. */
interface Prepared {
  entity?: Entity;
  /** the uploads its body names, attached just before it is saved or validated */
  uploads?: readonly PendingUpload[];
  error?: DatasetError;
  /** the entity as stored, for the answer of a failed update */
  current?: Entity;
}

async function prepare(scope: Scope, dc: DataClassCore, input: unknown, index: number): Promise<Prepared> {
  try {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw new DatasetError('INVALID_BODY', `entity #${index + 1} of the body is not a JSON object`);
    }
    const obj = input as Json;
    const hasKey = obj[WIRE.KEY] !== undefined;
    const hasStamp = obj[WIRE.STAMP] !== undefined;
    if (hasKey !== hasStamp) {
      throw new DatasetError('INVALID_BODY', `entity #${index + 1}: an update needs both __KEY and __STAMP (to create an entity, send neither and give the key as its attribute)`);
    }
    // a session that may not update the dataclass at all is told so, not that its stamp is stale
    // (what each attribute needs is judged by the save)
    if (hasKey) requireDataClass(scope.access, dc.model, 'update');
    const entity = await entityOf(scope, dc, obj[WIRE.KEY]);
    if (hasKey) {
      const stamp = obj[WIRE.STAMP];
      if (!Number.isInteger(stamp)) throw new DatasetError('INVALID_BODY', `entity #${index + 1}: __STAMP must be a whole number, not ${JSON.stringify(stamp)}`);
      // the client read it at another stamp: refused by the core before any event runs (and the
      // save itself checks the stamp it read in its UPDATE, so no update is lost)
      const stale = staleStamp(entity, stamp as number);
      if (stale) return { error: stale, current: entity };
    }
    return { entity, uploads: applyValues(scope, dc, entity, obj, index) };
  } catch (e) {
    if (isDatasetError(e)) return { error: e };
    throw e;
  }
}

export async function update(scope: Scope, action: Extract<Action, { kind: 'update' }>): Promise<RestResponse> {
  const { dc, entities: list, atomic } = action;
  // the answer's attributes ($attributes, $expand) are checked before anything is saved: a mistake there loses nothing
  projectionFor(dc.model, action.shape, scope);
  let prepared: Prepared[] = [];
  const prepareAll = async () => {
    prepared = [];
    for (let i = 0; i < list.length; i++) prepared.push(await prepare(scope, dc, list[i], i));
  };
  const saveAll = async () => {
    for (const p of prepared) {
      if (p.error || !p.entity) {
        if (atomic) throw p.error;
        continue;
      }
      try {
        await attachUploads(scope, p.entity, p.uploads ?? []);
        await p.entity.save();
      } catch (e) {
        if (!isDatasetError(e)) throw e;
        p.error = e;
        if (e.code === 'STAMP_CHANGED') p.current = (await dc.get(p.entity.getKey(), scope.access)) ?? undefined;
        if (atomic) throw e;
      }
    }
  };
  if (action.refresh) await prepareAll();
  else if (atomic) {
    // one transaction, read and written: any failure rolls every save back; one the database
    // stopped for a conflict is run again from the reads on when no user code runs in it
    await scope.core.transaction(async () => {
      await prepareAll();
      await saveAll();
    }, dc.writeUnit).catch((e) => {
      // an entity's failure is in its answer; a failure of the transaction itself (no connection,
      // the commit refused) is the answer
      if (!isDatasetError(e) || !prepared.some((p) => p.error)) throw e;
    });
  } else {
    await prepareAll();
    await saveAll();
  }
  const answers: Json[] = [];
  for (let i = 0; i < prepared.length; i++) answers.push(await answer(scope, action, prepared[i], list[i]));
  const failed = prepared.find((p) => p.error);
  if (action.single) return json(answers[0], failed?.error ? failed.error.status : 200);
  // an atomic batch that failed saved nothing: the answer has the status of the failure
  return json({ [WIRE.ENTITIES]: answers }, atomic && failed?.error ? failed.error.status : 200);
}

/**
 * The answer for one input entity: the entity as stored (re-read, so that aliases and calculated
 * values are current) with its absolute uri; with $refresh, as it would be; after a failure, the
 * stored entity (or, for a new one, the values sent) with __ERROR, and __STATUS for a stamp.
 */
async function answer(scope: Scope, action: Extract<Action, { kind: 'update' }>, p: Prepared, input: unknown): Promise<Json> {
  const { dc } = action;
  let shown: Entity | undefined;
  // the entity as stored now (another entity of the batch may have saved it since it was read)
  if (p.current) shown = (await dc.get(p.current.getKey(), scope.access)) ?? p.current;
  else if (p.entity && !p.entity.isNew()) shown = action.refresh ? p.entity : (await dc.get(p.entity.getKey(), scope.access)) ?? p.entity;
  else if (p.entity && action.refresh && !p.error) shown = p.entity;
  let out: Json;
  if (shown) {
    const projection = projectionFor(dc.model, action.shape, scope);
    const [fetched] = await fetchRelated(scope.core, [shown], projection, scope.access);
    out = serializeEntity(fetched, projection, { globalStamp: await readGlobalStamp(scope.access) }, action.single);
    if (shown.isNew()) {
      // not saved ($refresh): no key, time or related selection of its own yet
      delete out[WIRE.KEY];
      delete out[WIRE.TIMESTAMP];
      for (const a of projection.attributes) if (a.kind === 'deferred' && leadsTo(a.attr)?.many) out[a.attr.name] = null;
    } else out.uri = `${action.origin}${entityUri(dc.model, shown.getKey())}`;
  } else {
    // a new entity that was not saved: the values it was sent with
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
  return out;
}

/** $method=validate: the values are applied and checked as a save would check them, nothing is saved. */
export async function validate(scope: Scope, action: Extract<Action, { kind: 'validate' }>): Promise<RestResponse> {
  const { dc, entities: list } = action;
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
  }
  // a permission refusal answers its own status (401: log in first; 403), other failures 400
  return failures.length === 0 ? json({ ok: true }) : json({ [WIRE.ENTITIES]: failures }, refused ?? 400);
}

/** $method=delete on an entity, or on every entity a $filter selects (one transaction). */
export async function remove(scope: Scope, action: Extract<Action, { kind: 'delete' }>): Promise<RestResponse> {
  const { dc, target } = action;
  if (target.kind === 'entity') await (await findEntity(scope, dc, target.selector)).drop();
  else await queryWith(dc.selectWhere(null, scope.access), target.filter, target.params, scope.visible).drop();
  return json({ ok: true });
}
