// The entity class of a dataclass: an Entity subclass with one accessor per attribute
// (entity.lastName, await entity.employer, entity.staff), built on the user entity class when
// there is one, so entities have its methods.

import type { DataClassModel } from '../../model/types.js';
import { Entity } from './entity.js';

/** Entity property names that stay methods even when an attribute has the same name. */
const RESERVED = new Set(Object.getOwnPropertyNames(Entity.prototype));

/**
 * Members the user class declares keep their own meaning (the loader refuses such a member for a
 * storage or relation attribute; a calculated attribute's accessor stays ours and runs its code).
 */
export function entityClassFor(model: DataClassModel, base: typeof Entity = Entity): typeof Entity {
  const cls = class extends base {};
  Object.defineProperty(cls, 'name', { value: base === Entity ? `${model.name}Entity` : base.name });
  const own = userMembers(base.prototype, Entity.prototype);
  for (const attr of model.attributes) {
    if (RESERVED.has(attr.name) || (own.has(attr.name) && attr.kind !== 'calculated')) continue;
    const name = attr.name;
    const relation = attr.kind === 'relatedEntity' || attr.kind === 'relatedEntities';
    Object.defineProperty(cls.prototype, name, {
      get(this: Entity) {
        return relation ? this.related(name) : this.get(name);
      },
      set(this: Entity, value: unknown) {
        this.set(name, value);
      },
      enumerable: true,
    });
  }
  return cls;
}

/** Member names a user class (and its own bases) declares on its prototype chain down to `stop`. */
export function userMembers(proto: object, stop: object): Set<string> {
  const names = new Set<string>();
  for (let p: object | null = proto; p && p !== stop && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const n of Object.getOwnPropertyNames(p)) if (n !== 'constructor') names.add(n);
  }
  return names;
}
