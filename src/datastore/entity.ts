// Entity: one record of a dataclass, ORDA style. Attribute values are read and written through
// generated accessors (entity.lastName) or get()/set(); relations load lazily:
// `await entity.employer` (N→1) and `entity.staff` (an EntitySelection, 1→N).

import { DatasetError } from '../errors/dataset-error.js';
import type { AttributeModel, StorageAttribute } from '../model/types.js';
import type { DataClass } from './dataclass.js';
import type { EntitySelection } from './selection.js';
import { keyFromInput, newUuid } from './values.js';

export type EntityRow = Record<string, unknown>;

export class Entity {
  readonly #dc: DataClass;
  /** attribute values by attribute name (storage values, and alias values when they were read) */
  #values: EntityRow;
  #stamp: number;
  #timestamp: number;
  #isNew: boolean;
  readonly #touched = new Set<string>();

  /** @internal use dataClass.new() or a query; rows come decoded from the datastore */
  constructor(dc: DataClass, values: EntityRow | null, stamp = 0, timestamp = 0) {
    this.#dc = dc;
    this.#values = values ?? {};
    this.#stamp = stamp;
    this.#timestamp = timestamp;
    this.#isNew = values === null;
  }

  getDataClass(): DataClass {
    return this.#dc;
  }

  /** the primary key value (null for a new entity whose key is generated on save) */
  getKey(): unknown {
    return this.#values[this.#dc.model.key.name] ?? null;
  }

  /** the save counter: 0 for a new entity, increased by every save */
  getStamp(): number {
    return this.#stamp;
  }

  /** time of the last save */
  getTimeStamp(): Date {
    return new Date(this.#timestamp);
  }

  isNew(): boolean {
    return this.#isNew;
  }

  /** names of the attributes changed since the entity was loaded or saved */
  touchedAttributes(): string[] {
    return [...this.#touched];
  }

  /** The value of a storage, alias or calculated attribute (calculated ones read null until user classes load). */
  get(name: string): unknown {
    const attr = this.#attribute(name);
    if (attr.kind === 'relatedEntity' || attr.kind === 'relatedEntities') {
      throw new DatasetError('NOT_A_RELATION', `${this.#dc.name}.${name} is a relation: use entity.related('${name}')`);
    }
    return this.#values[name] ?? null;
  }

  /** Sets a storage attribute, or a relatedEntity (to an entity of its target, or null). */
  set(name: string, value: unknown): void {
    const attr = this.#attribute(name);
    if (attr.kind === 'relatedEntity') {
      if (value !== null && !(value instanceof Entity && value.getDataClass().model === attr.target)) {
        throw new DatasetError('INVALID_VALUE', `${this.#dc.name}.${name} takes an entity of ${attr.target.name} or null`);
      }
      return this.#assign(attr.foreignKey, value === null ? null : (value as Entity).getKey());
    }
    if (attr.kind !== 'storage') {
      throw new DatasetError('INVALID_VALUE', `${this.#dc.name}.${name} is a ${attr.kind} attribute and cannot be set`);
    }
    if (attr.type === 'image' || attr.type === 'blob') {
      // holds a stored file (see Datastore.storeFile), by id
      const id = value === null ? null : typeof value === 'object' && value !== null && 'id' in value ? (value as { id: unknown }).id : value;
      if (id !== null && !Number.isInteger(id)) throw new DatasetError('INVALID_VALUE', `${this.#dc.name}.${name} takes a stored file (ds.storeFile) or null`);
      return this.#assign(attr, id);
    }
    if (attr.identifying && !this.#isNew) {
      throw new DatasetError('INVALID_VALUE', `the key ${this.#dc.name}.${name} of a saved entity cannot change`);
    }
    this.#assign(attr, value);
  }

  /** N→1: the related entity (or null); 1→N: the selection of related entities. */
  related(name: string): Promise<Entity | null> | EntitySelection {
    const attr = this.#attribute(name);
    if (attr.kind === 'relatedEntity') {
      const key = this.#values[attr.foreignKey.name];
      return key === null || key === undefined ? Promise.resolve(null) : this.#dc.ds.dataClassOf(attr.target).get(key);
    }
    if (attr.kind === 'relatedEntities') {
      return this.#dc.ds.dataClassOf(attr.target).relatedTo(attr.inverse, this.getKey());
    }
    throw new DatasetError('NOT_A_RELATION', `${this.#dc.name}.${name} is a ${attr.kind} attribute, not a relation`);
  }

  /** Saves the entity: inserts a new one, or updates the touched attributes if the stamp still matches. */
  async save(): Promise<void> {
    const dc = this.#dc;
    const key = dc.model.key;
    const values = new Map<StorageAttribute, unknown>();
    for (const name of this.#touched) {
      const attr = dc.model.attributesByName.get(name) as StorageAttribute;
      values.set(attr, this.#values[name] ?? null);
    }
    if (this.#isNew) {
      if (!values.has(key) || values.get(key) === null) {
        if (key.autogenerate) values.set(key, newUuid());
        else if (!key.autoincrement) {
          throw new DatasetError('INVALID_VALUE', `a new ${dc.name} needs a value for its key '${key.name}'`);
        }
      }
      const saved = await dc.ds.storeNew(dc.model, values);
      this.#values = { ...this.#values, [key.name]: saved.key };
      this.#stamp = saved.stamp;
      this.#timestamp = saved.timestamp;
      this.#isNew = false;
    } else {
      if (values.size === 0) return; // 4D: a save with nothing touched does nothing
      const saved = await dc.ds.storeUpdate(dc.model, this.getKey(), this.#stamp, values);
      this.#stamp = saved.stamp;
      this.#timestamp = saved.timestamp;
    }
    this.#touched.clear();
  }

  /** Deletes the entity from the datastore. */
  async drop(): Promise<void> {
    if (this.#isNew) throw new DatasetError('ENTITY_NOT_FOUND', `this ${this.#dc.name} entity was never saved`);
    await this.#dc.ds.storeDrop(this.#dc.model, this.getKey());
  }

  #assign(attr: StorageAttribute, value: unknown): void {
    if (attr.identifying && value !== null && keyFromInput(attr, value) === undefined) {
      throw new DatasetError('INVALID_KEY', `${JSON.stringify(value)} is not a valid ${attr.type} key for ${this.#dc.name}`);
    }
    this.#values[attr.name] = attr.identifying && value !== null ? keyFromInput(attr, value) : value;
    this.#touched.add(attr.name);
  }

  #attribute(name: string): AttributeModel {
    const attr = this.#dc.model.attributesByName.get(name);
    if (!attr) throw new DatasetError('UNKNOWN_ATTRIBUTE', `The "${name}" attribute cannot be found in the "${this.#dc.name}" dataclass`);
    return attr;
  }
}
