// The model's last pass, run only when no earlier one found a problem (model/load-model.ts): every
// attribute is finished, so each dataclass gets its lookups (attributes by name, its storage
// attributes in order) and each attribute its field position; then the whole model is frozen,
// read-only for every layer and for user code alike.

import type { AttributeModel, DataClassModel, Model, StorageAttribute } from '../types.js';
import type { Mutable } from './checks.js';

/** Builds each dataclass's lookups and places its fields. */
export function placeFields(classes: readonly Mutable<DataClassModel>[]): void {
  for (const dc of classes) {
    dc.attributesByName = new Map(dc.attributes.map((a) => [a.name, a]));
    dc.storage = dc.attributes.filter((a): a is StorageAttribute => a.kind === 'storage');
    // fieldPos is a field's position in its table (storage attributes); a relation shows the
    // position of the field it is built on, as 4D does; alias and calculated attributes have none.
    dc.storage.forEach((a, i) => ((a as Mutable<AttributeModel>).fieldPos = i + 1));
  }
  for (const dc of classes) {
    for (const a of dc.attributes as Mutable<AttributeModel>[]) {
      if (a.kind === 'relatedEntity') a.fieldPos = a.foreignKey.fieldPos;
      else if (a.kind === 'relatedEntities') a.fieldPos = dc.key.fieldPos;
    }
  }
}

/** Freezes an object graph (maps included: their setters throw), cycles and all. */
export function deepFreeze<T extends Model>(root: T): T {
  const seen = new Set<unknown>();
  const visit = (v: unknown): void => {
    if (v === null || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (v instanceof Map) {
      for (const [k, x] of v) {
        visit(k);
        visit(x);
      }
      const frozen = () => {
        throw new TypeError('the model is read-only');
      };
      Object.assign(v, { set: frozen, delete: frozen, clear: frozen });
    }
    for (const x of Object.values(v)) visit(x);
    Object.freeze(v);
  };
  visit(root);
  return root;
}
