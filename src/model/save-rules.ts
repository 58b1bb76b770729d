// The rules of a save that need only the model, in one place for every path that writes an
// entity: an entity's save (datastore/entities/entity.ts) and the bulk insert of an import
// (datastore/writes/import-writes.ts), so that an import refuses exactly what a save refuses, with the
// same error. A key given must be one of its attribute's type; a new entity given no key gets a
// new uuid (autogenerate) or the engine's next number (autoincrement), and is refused otherwise;
// a notNull attribute (the key apart: these rules give it one) must hold a value. The rules that
// need the database (relations, files) are datastore/writes/rules.ts's.

import { DatasetError } from '../errors/dataset-error.js';
import type { StorageAttribute } from './types.js';
import { keyFromInput, newUuid } from './values.js';

/** The key `value` (converted for its attribute already, not null) gives the key attribute `attr`; INVALID_KEY when it cannot be one. */
export function givenKey(attr: StorageAttribute, value: unknown): string | number {
  const key = keyFromInput(attr, value);
  if (key === undefined) throw new DatasetError('INVALID_KEY', `${JSON.stringify(value)} is not a valid ${attr.type} key for ${attr.dataClass.name}`);
  return key;
}

/**
 * The key of a new entity given none, by its key attribute `key`: a new uuid (autogenerate), or
 * undefined where the engine numbers it (autoincrement); any other key must be given (INVALID_VALUE).
 */
export function keyOfNewEntity(key: StorageAttribute): string | undefined {
  if (key.autogenerate) return newUuid();
  if (!key.autoincrement) throw new DatasetError('INVALID_VALUE', `a new ${key.dataClass.name} needs a value for its key '${key.name}'`);
  return undefined;
}

/** Must a save give the attribute a value? A notNull attribute, the key apart (keyOfNewEntity gives it one). */
export function isRequired(attr: StorageAttribute): boolean {
  return attr.notNull && !attr.identifying;
}

/** Refuses no value (null, undefined) for an attribute that isRequired() (VALUE_REQUIRED). */
export function requireValue(attr: StorageAttribute, value: unknown): void {
  if (value === null || value === undefined) throw new DatasetError('VALUE_REQUIRED', `${attr.dataClass.name}.${attr.name} cannot be null (it is notNull in the model)`, [], { attributeName: attr.name });
}
