// The body of a write, put onto an entity: each property of an input object sets the attribute of
// that name (as the caller sees the model). A relation is given as {"__KEY": k}; a picture or
// blob as {"ID": "<upload id>"} (spec "Upload"), looked up by attachUploads() just before the save
// (so that an upload a batch gives twice is found by the first entity only); what a value must be
// — a related entity that exists, a file of the attribute's kind — the core checks when the
// entity is saved.

import { type DataClassCore, type Entity, entityNotFound, relationsOf } from '../../datastore/index.js';
import { WIRE } from '../../config/wire.js';
import { DatasetError, isDatasetError } from '../../errors/dataset-error.js';
import type { RelatedEntityAttribute, StorageAttribute } from '../../model/types.js';
import { requireKey } from '../../model/values.js';
import { kindOf, unknownAttribute } from '../../query/path.js';
import type { ColumnSpec } from '../../query/plan.js';
import type { Scope } from '../scope/scope.js';

type Json = Record<string, unknown>;

/** Properties of an input entity that are not attributes: read-only ones are refused, the others ignored. */
// (__ENTITY marks an entity given as a function parameter)
const IGNORED = new Set([WIRE.ENTITY_MODEL, WIRE.DATACLASS, 'uri', WIRE.ENTITY]);

/** An upload id: 32 hexadecimal digits (answered upper-case, accepted in any case). */
const UPLOAD_ID = /^[0-9A-Fa-f]{32}$/;

/** An upload a body names for an image or blob attribute, not looked up yet. */
export interface PendingUpload {
  readonly attr: StorageAttribute;
  readonly id: string;
  /** the entity's number in the body, for messages */
  readonly index: number;
}

/** The entity a body object is about: the stored one of its __KEY (1542 when there is none), or a new one. */
export async function entityOf(scope: Scope, dc: DataClassCore, key: unknown): Promise<Entity> {
  if (key === undefined) return dc.newEntity(scope.access);
  const k = requireKey(dc.model.key, key);
  const found = await dc.get(k, scope.access);
  if (!found) throw entityNotFound(dc.model, k);
  return found;
}

/** What storedEntityWithTargets reads of a dataclass: its entity's columns, then the key each N→1 relation reaches. */
const withTargets = new WeakMap<DataClassCore, { readonly columns: readonly ColumnSpec[]; readonly relations: readonly RelatedEntityAttribute[] }>();

/**
 * The stored entity of a __KEY (1542 when there is none), read with what its N→1 relations name
 * in the same statement: per relation, the key of its target if that exists and the caller can
 * see it, else null (an answer from the save need not look the targets up again).
 */
export async function storedEntityWithTargets(scope: Scope, dc: DataClassCore, key: unknown): Promise<{ entity: Entity; targets: ReadonlyMap<RelatedEntityAttribute, unknown> }> {
  const k = requireKey(dc.model.key, key);
  let shape = withTargets.get(dc);
  if (!shape) {
    const relations = relationsOf(dc);
    withTargets.set(dc, (shape = { columns: [...dc.columns, ...relations.map((r): ColumnSpec => ({ kind: 'relatedKey', via: [r] }))], relations }));
  }
  const row = await dc.valuesByKey(k, shape.columns, scope.access);
  if (!row) throw entityNotFound(dc.model, k);
  const at = dc.columns.length;
  return { entity: dc.entityFromValues(row, scope.access), targets: new Map(shape.relations.map((r, i) => [r, row[at + i] ?? null])) };
}

/**
 * Sets the attribute values of a body object on an entity (not saved). `index` numbers the object
 * in the body, for messages. Upload ids are checked for their form and answered, to be attached
 * with attachUploads() (an update's $refresh, which saves nothing, leaves them unattached).
 */
export function applyValues(scope: Scope, dc: DataClassCore, entity: Entity, obj: Json, index: number): PendingUpload[] {
  const uploads: PendingUpload[] = [];
  for (const [name, value] of Object.entries(obj)) applyValue(scope, dc, entity, name, value, index, uploads);
  return uploads;
}

/** Sets each upload still waiting on its attribute; UPLOAD_NOT_FOUND for one that is not (unknown, expired, attached). */
export async function attachUploads(scope: Scope, entity: Entity, uploads: readonly PendingUpload[]): Promise<void> {
  const seen = new Set<string>();
  for (const { attr, id, index } of uploads) {
    // one file, one attribute: the save would claim it twice (validate must say so too)
    if (seen.has(id)) throw new DatasetError('UPLOAD_NOT_FOUND', `${attr.dataClass.name}.${attr.name}: upload ${id} is given to another attribute of this entity too (entity #${index + 1}): an upload is attached once`, [], { attributeName: attr.name });
    seen.add(id);
    const file = await scope.core.files.findUpload(id);
    if (!file) {
      throw new DatasetError('UPLOAD_NOT_FOUND', `${attr.dataClass.name}.${attr.name}: no upload ${id} is waiting to be attached (entity #${index + 1}): it never existed, expired ($timeout), or another entity holds it`, [], { attributeName: attr.name });
    }
    entity.set(attr.name, file);
  }
}

function applyValue(scope: Scope, dc: DataClassCore, entity: Entity, name: string, value: unknown, index: number, uploads: PendingUpload[]): void {
  if (name === WIRE.KEY || name === WIRE.STAMP) return;
  const attr = dc.model.attributesByName.get(name);
  // an attribute the session may not read is still a name it may give: the core judges the write (update needs read too)
  if (!attr || !(scope.visible(attr) || scope.visible.denied?.(attr))) {
    if (IGNORED.has(name)) return;
    if (name === WIRE.TIMESTAMP) throw new DatasetError('INVALID_VALUE', `entity #${index + 1}: __TIMESTAMP is set by the server and cannot be written`);
    throw unknownAttribute(dc.model, name, scope.visible, `entity #${index + 1}`);
  }
  if (isDeferredEcho(value)) return; // a relation or picture sent back as it was read: unchanged
  switch (attr.kind) {
    case 'storage':
      if ((attr.type === 'image' || attr.type === 'blob') && value !== null) {
        uploads.push({ attr, id: uploadId(dc, attr, value, index), index });
        return;
      }
      return entity.set(name, value);
    case 'relatedEntity':
      // null unsets the relation (its touched event is the relation's); a key sets its foreign key
      if (value === null) return entity.set(name, null);
      return entity.set(attr.foreignKey.name, relatedKey(dc, attr, value, index));
    case 'calculated':
      // a set function makes it writable; entity.set refuses it otherwise
      return entity.set(name, value);
    default:
      throw new DatasetError('INVALID_VALUE', `${dc.name}.${name} is ${kindOf(attr)}: it is read-only (entity #${index + 1})`, [], { attributeName: name });
  }
}

/** A relatedEntity given as {"__KEY": k}: the key (the core checks, when saving, that the entity exists). */
function relatedKey(dc: DataClassCore, attr: RelatedEntityAttribute, value: unknown, index: number): unknown {
  const key = typeof value === 'object' && !Array.isArray(value) ? (value as Json)[WIRE.KEY] : undefined;
  if (key === undefined) {
    throw new DatasetError('INVALID_VALUE', `${dc.name}.${attr.name} takes {"${WIRE.KEY}": <key of a ${attr.target.name}>} or null (entity #${index + 1}), not ${JSON.stringify(value)}`, [], { attributeName: attr.name });
  }
  try {
    return requireKey(attr.target.key, key);
  } catch (e) {
    // the message names the target's key; the form's field is this relation
    if (!isDatasetError(e)) throw e;
    throw new DatasetError(e.code, `${dc.name}.${attr.name}: ${e.message}`, [], { attributeName: attr.name });
  }
}

/** The upload id of an image or blob attribute given {"ID": "<upload id>"}, upper-cased. */
function uploadId(dc: DataClassCore, attr: StorageAttribute, value: unknown, index: number): string {
  const id = typeof value === 'object' && !Array.isArray(value) ? (value as Json).ID : undefined;
  if (typeof id !== 'string' || !UPLOAD_ID.test(id)) {
    throw new DatasetError('INVALID_VALUE', `${dc.name}.${attr.name} takes {"ID": "<the id POST /rest/$upload answered>"} or null (entity #${index + 1}), not ${JSON.stringify(value)?.slice(0, 80)}`, [], { attributeName: attr.name });
  }
  return id.toUpperCase();
}

function isDeferredEcho(value: unknown): boolean {
  return typeof value === 'object' && value !== null && WIRE.DEFERRED in value;
}
