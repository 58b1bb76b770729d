// POST with $method=update (create and update, one entity or an array, $atomic, $refresh),
// $method=validate and $method=delete. Every change goes through the datastore core
// (entity.set, entity.save, entity.drop), so REST runs the checks and events that code runs.

import type { DataClass } from '../../datastore/dataclass.js';
import { entityNotFound, type Datastore } from '../../datastore/datastore.js';
import type { Entity } from '../../datastore/entity.js';
import { fetchRelated } from '../../datastore/fetch.js';
import { leadsTo, resolveProjection } from '../../datastore/projection.js';
import { requireKey } from '../../model/values.js';
import { DatasetError, isDatasetError, type WireError } from '../../errors/dataset-error.js';
import { isExposed, type AttributeModel, type StorageAttribute } from '../../model/types.js';
import { ERRORS } from '../../errors/registry.js';
import { kindOf, unknownAttribute } from '../../query/path.js';
import { WIRE } from '../../config/wire.js';
import type { RestOptions } from '../options.js';
import { entityUri, serializeEntity } from '../serialize.js';
import type { Route } from '../url.js';
import { exposedDataClass } from './catalog.js';
import { deleteSet } from './entity-sets.js';
import { UPLOAD_ID } from './upload.js';

type DataClassRoute = Extract<Route, { kind: 'dataClass' }>;
type Json = Record<string, unknown>;

/** An answer with its own HTTP status (a write whose entities failed). */
export class RestAnswer {
  constructor(readonly status: number, readonly body: unknown) {}
}

/** Properties of an input entity that are not attributes: read-only ones are refused, the others ignored. */
// (__ENTITY marks an entity given as a function parameter)
const IGNORED = new Set(['__entityModel', '__DATACLASS', 'uri', '__ENTITY']);

export async function writeDataClass(ds: Datastore, route: DataClassRoute, opts: RestOptions, body: unknown, origin: string): Promise<unknown> {
  const dc = ds.dataClassOf(exposedDataClass(ds, route.dataClass));
  switch (opts.method) {
    case 'update':
    case 'validate':
      if (route.selector.kind !== 'all' || route.path.length > 0) {
        throw new DatasetError('MALFORMED_URL', `$method=${opts.method} is posted to the dataclass (/rest/${dc.name}), with the keys in the body`);
      }
      return opts.method === 'update' ? update(ds, dc, opts, body, origin) : validate(dc, body);
    case 'delete':
      return remove(ds, dc, route, opts);
    default:
      throw new DatasetError('METHOD_NOT_ALLOWED', `$method=${opts.method} is read with GET; POST takes $method=update, validate or delete`);
  }
}

function inputs(body: unknown): { list: unknown[]; single: boolean } {
  if (body === undefined || body === null || body === '') throw new DatasetError('INVALID_BODY', 'the body is empty: send a JSON object (one entity) or an array of objects');
  if (Array.isArray(body)) {
    if (body.length === 0) throw new DatasetError('INVALID_BODY', 'the body is an empty array: send at least one entity');
    return { list: body, single: false };
  }
  return { list: [body], single: true };
}

type RelatedAttribute = Extract<AttributeModel, { kind: 'relatedEntity' }>;

/**
 * What a body names that must be looked up before the save: a related entity ({"__KEY": k}) that
 * must exist, or an upload ({"ID": id}) an image or blob attribute takes.
 */
export type ValueCheck =
  | { kind: 'related'; attr: RelatedAttribute; key: unknown }
  | { kind: 'upload'; attr: StorageAttribute; upload: string; index: number };

/** One input entity with its values applied (not saved), or the error that stopped it. */
interface Prepared {
  entity?: Entity;
  /** related keys and uploads given in the body, looked up before the save */
  checks?: ValueCheck[];
  error?: DatasetError;
  /** the entity as stored, for the answer of a failed update */
  current?: Entity;
}

async function prepare(dc: DataClass, input: unknown, index: number): Promise<Prepared> {
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
    let entity: Entity;
    if (hasKey) {
      const key = requireKey(dc.model.key, obj[WIRE.KEY]);
      const found = await dc.get(key);
      if (!found) throw entityNotFound(dc.model, key);
      const stamp = obj[WIRE.STAMP];
      if (!Number.isInteger(stamp)) throw new DatasetError('INVALID_BODY', `entity #${index + 1}: __STAMP must be a whole number, not ${JSON.stringify(stamp)}`);
      // An early answer only: the save itself checks the stamp in its UPDATE, so no update is lost.
      if (stamp !== found.getStamp()) return { error: stampError(dc, key), current: found };
      entity = found;
    } else {
      entity = dc.new();
    }
    return { entity, checks: applyValues(dc, entity, obj, index) };
  } catch (e) {
    if (isDatasetError(e)) return { error: e };
    throw e;
  }
}

/** Sets the attribute values of a body object on an entity (not saved); answers what to look up before saving (checkValues). */
export function applyValues(dc: DataClass, entity: Entity, obj: Json, index: number): ValueCheck[] {
  const checks: ValueCheck[] = [];
  for (const [name, value] of Object.entries(obj)) applyValue(dc, entity, name, value, index, checks);
  return checks;
}

function applyValue(dc: DataClass, entity: Entity, name: string, value: unknown, index: number, checks: ValueCheck[]): void {
  if (name === WIRE.KEY || name === WIRE.STAMP) return;
  const attr = dc.model.attributesByName.get(name);
  if (!attr || !isExposed(attr)) {
    if (IGNORED.has(name)) return;
    if (name === WIRE.TIMESTAMP) throw new DatasetError('INVALID_VALUE', `entity #${index + 1}: __TIMESTAMP is set by the server and cannot be written`);
    throw unknownAttribute(dc.model, name, isExposed, `entity #${index + 1}`);
  }
  if (isDeferredEcho(value)) return; // a relation or picture sent back as it was read: unchanged
  switch (attr.kind) {
    case 'storage':
      if ((attr.type === 'image' || attr.type === 'blob') && value !== null) return attachUpload(dc, attr, value, index, checks);
      return entity.set(name, value);
    case 'relatedEntity':
      return setRelated(dc, entity, attr, value, index, checks);
    case 'calculated':
      // a set function makes it writable; entity.set refuses it otherwise
      return entity.set(name, value);
    default:
      throw new DatasetError('INVALID_VALUE', `${dc.name}.${name} is ${kindOf(attr)}: it is read-only (entity #${index + 1})`);
  }
}

/** A relatedEntity given as {"__KEY": k} (the entity must exist) or null. */
function setRelated(dc: DataClass, entity: Entity, attr: RelatedAttribute, value: unknown, index: number, checks: ValueCheck[]): void {
  if (value === null) return entity.set(attr.name, null);
  const key = typeof value === 'object' && !Array.isArray(value) ? (value as Json)[WIRE.KEY] : undefined;
  if (key === undefined) {
    throw new DatasetError('INVALID_VALUE', `${dc.name}.${attr.name} takes {"__KEY": <key of a ${attr.target.name}>} or null (entity #${index + 1}), not ${JSON.stringify(value)}`);
  }
  const k = requireKey(attr.target.key, key);
  // checked at save time too (the foreign key); here to name the missing entity
  entity.set(attr.foreignKey.name, k);
  checks.push({ kind: 'related', attr, key: k });
}

/** An image or blob attribute given {"ID": "<upload id>"} (spec "Upload"): looked up by checkValues. */
function attachUpload(dc: DataClass, attr: StorageAttribute, value: unknown, index: number, checks: ValueCheck[]): void {
  const id = typeof value === 'object' && !Array.isArray(value) ? (value as Json).ID : undefined;
  if (typeof id !== 'string' || !UPLOAD_ID.test(id)) {
    throw new DatasetError('INVALID_VALUE', `${dc.name}.${attr.name} takes {"ID": "<the id POST /rest/$upload answered>"} or null (entity #${index + 1}), not ${JSON.stringify(value)?.slice(0, 80)}`);
  }
  checks.push({ kind: 'upload', attr, upload: id.toUpperCase(), index });
}

/**
 * Looks up what the body named: related entities must exist; an upload must be waiting (not
 * expired, not attached elsewhere), and an image attribute takes an image. The save then claims
 * the upload in its own transaction.
 */
export async function checkValues(ds: Datastore, entity: Entity, checks: readonly ValueCheck[] = []): Promise<void> {
  const dc = entity.getDataClass().name;
  for (const check of checks) {
    if (check.kind === 'related') {
      const { attr, key } = check;
      if (!(await ds.dataClassOf(attr.target).get(key))) {
        throw new DatasetError('ENTITY_NOT_FOUND', `${dc}.${attr.name}: Cannot find entity with "${String(key)}" key in the "${attr.target.name}" dataclass`);
      }
      continue;
    }
    const { attr, upload, index } = check;
    const file = await ds.files.findUpload(upload);
    if (!file) {
      throw new DatasetError('UPLOAD_NOT_FOUND', `${dc}.${attr.name}: no upload ${upload} is waiting to be attached (entity #${index + 1}): it never existed, expired ($timeout), or another entity holds it`);
    }
    // the kind the upload was announced as: images ($rawPict) for image attributes, files ($binary) for blobs
    const wanted = attr.type === 'image' ? 'image' : 'binary';
    if (file.kind !== wanted) {
      const how = (k: string) => (k === 'image' ? '$rawPict=true' : '$binary=true');
      throw new DatasetError('UPLOAD_WRONG_KIND', `${dc}.${attr.name} is ${attr.type === 'image' ? 'an image' : 'a blob'} attribute: it takes an upload made with ${how(wanted)}, and upload ${upload} was made with ${how(file.kind)} (entity #${index + 1})`);
    }
    entity.set(attr.name, file);
  }
}

function isDeferredEcho(value: unknown): boolean {
  return typeof value === 'object' && value !== null && WIRE.DEFERRED in value;
}

function stampError(dc: DataClass, key: unknown): DatasetError {
  return new DatasetError('STAMP_CHANGED', `Given stamp does not match current one for record# ${String(key)} of table ${dc.name}`, [
    { name: 'RECORD_NOT_SAVED', message: `Cannot save record ${String(key)} in table ${dc.name} of database ${dc.ds.name}` },
    { name: 'ENTITY_NOT_SAVED', message: `The entity# ${String(key)} in the "${dc.name}" dataclass cannot be saved` },
  ]);
}

async function update(ds: Datastore, dc: DataClass, opts: RestOptions, body: unknown, origin: string): Promise<unknown> {
  const { list, single } = inputs(body);
  const atomic = opts.atomic;
  const prepared: Prepared[] = [];
  for (let i = 0; i < list.length; i++) prepared.push(await prepare(dc, list[i], i));
  if (!opts.refresh) {
    const saveAll = async () => {
      for (const p of prepared) {
        if (p.error || !p.entity) {
          if (atomic) throw p.error;
          continue;
        }
        try {
          await checkValues(ds, p.entity, p.checks);
          await p.entity.save();
        } catch (e) {
          if (!isDatasetError(e)) throw e;
          p.error = e;
          if (e.code === 'STAMP_CHANGED') p.current = (await dc.get(p.entity.getKey())) ?? undefined;
          if (atomic) throw e;
        }
      }
    };
    if (atomic) {
      // one transaction: any failure rolls every save back (the entities get their stamps back)
      await ds.transaction(saveAll).catch((e) => {
        if (!isDatasetError(e)) throw e;
      });
    } else await saveAll();
  }
  const answers: Json[] = [];
  for (let i = 0; i < prepared.length; i++) answers.push(await answer(ds, dc, prepared[i], list[i], opts, origin, !single));
  const failed = prepared.find((p) => p.error);
  if (single) return failed?.error ? new RestAnswer(failed.error.status, answers[0]) : answers[0];
  // an atomic batch that failed saved nothing: the answer has the status of the failure
  return atomic && failed?.error ? new RestAnswer(failed.error.status, { [WIRE.ENTITIES]: answers }) : { [WIRE.ENTITIES]: answers };
}

/**
 * The answer for one input entity: the entity as stored (re-read, so that aliases and calculated
 * values are current) with its absolute uri; with $refresh, as it would be; after a failure, the
 * stored entity (or, for a new one, the values sent) with __ERROR, and __STATUS for a stamp.
 */
async function answer(ds: Datastore, dc: DataClass, p: Prepared, input: unknown, opts: RestOptions, origin: string, inArray: boolean): Promise<Json> {
  let shown: Entity | undefined;
  // the entity as stored now (another entity of the batch may have saved it since it was read)
  if (p.current) shown = (await dc.get(p.current.getKey())) ?? p.current;
  else if (p.entity && !p.entity.isNew()) shown = opts.refresh ? p.entity : (await dc.get(p.entity.getKey())) ?? p.entity;
  else if (p.entity && opts.refresh && !p.error) shown = p.entity;
  let out: Json;
  if (shown) {
    const projection = resolveProjection(dc.model, { attributes: opts.attributes, expand: opts.expand }, isExposed);
    const [fetched] = await fetchRelated(ds, [shown], projection);
    out = serializeEntity(fetched, projection, { globalStamp: await ds.globalStamp() }, !inArray);
    if (shown.isNew()) {
      // not saved ($refresh): no key, time or related selection of its own yet
      delete out[WIRE.KEY];
      delete out[WIRE.TIMESTAMP];
      for (const a of projection.attributes) if (a.kind === 'deferred' && leadsTo(a.attr)?.many) out[a.attr.name] = null;
    } else out.uri = `${origin}${entityUri(dc.model, shown.getKey())}`;
  } else {
    // a new entity that was not saved: the values it was sent with
    out = typeof input === 'object' && input !== null && !Array.isArray(input) ? { ...(input as Json) } : {};
  }
  if (p.error) {
    if (p.error.code === 'STAMP_CHANGED') out[WIRE.STATUS] = { status: 2, statusText: 'Stamp has changed', success: false };
    // an entity event refused it: 4D's dk status validation failed (7) / serious validation error (8)
    else if (p.error.validation) out[WIRE.STATUS] = { status: p.error.validation.serious ? 8 : 7, statusText: p.error.validation.statusText, success: false };
    out[WIRE.ERROR] = p.error.toWire();
  }
  return out;
}

/** $method=validate: the values are applied and checked, nothing is saved. */
async function validate(dc: DataClass, body: unknown): Promise<unknown> {
  const { list } = inputs(body);
  const failures: { [WIRE.ERROR]: WireError[] }[] = [];
  for (let i = 0; i < list.length; i++) {
    const p = await prepare(dc, list[i], i);
    if (!p.error && p.entity) {
      try {
        await checkValues(dc.ds, p.entity, p.checks);
        await p.entity.validate(); // the validateSave events
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
    }
  }
  return failures.length === 0 ? { ok: true } : new RestAnswer(400, { [WIRE.ENTITIES]: failures });
}

/** $method=delete on an entity, or on every entity a $filter selects (one transaction). */
async function remove(ds: Datastore, dc: DataClass, route: DataClassRoute, opts: RestOptions): Promise<unknown> {
  const [first] = route.path;
  if (route.selector.kind === 'all' && route.path.length === 1 && first.kind === 'entitySet' && first.id !== '') return deleteSet(ds, dc, first.id);
  if (route.path.length > 0) throw new DatasetError('MALFORMED_URL', `$method=delete applies to /rest/${dc.name}(key) or to /rest/${dc.name}?$filter=…, without a path after it`);
  if (route.selector.kind === 'key') {
    const key = requireKey(dc.model.key, route.selector.key);
    const entity = await dc.get(key);
    if (!entity) throw entityNotFound(dc.model, route.selector.key);
    await entity.drop();
    return { ok: true };
  }
  if (route.selector.kind === 'attribute') {
    throw new DatasetError('MALFORMED_URL', `$method=delete takes an entity by key (/rest/${dc.name}(key)) or a $filter`);
  }
  if (opts.filter === undefined) {
    // deleting a whole dataclass by accident is too easy: a filter is required
    throw new DatasetError('INVALID_OPTION', `$method=delete on /rest/${dc.name} needs a $filter naming the entities to delete`);
  }
  const selection = dc.all().queryAs(isExposed, opts.filter, opts.params);
  await ds.transaction(async () => {
    // keys first: dropping while paging would shift the pages
    const keys: unknown[] = [];
    for await (const e of selection) keys.push(e.getKey());
    for (const key of keys) await (await dc.get(key))?.drop();
  });
  return { ok: true };
}
