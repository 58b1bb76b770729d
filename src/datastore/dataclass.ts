// DataClass: the entry point to one dataclass, ORDA style — get(key), all(), query(), new() —
// and the class user dataclass classes extend (classes/<DataClass>.ts). Its machinery sits in
// its DataClassCore, which user code never reaches.

import type { DataClassModel } from '../model/types.js';
import type { Access } from './access/access.js';
import { currentAccess } from './access/caller.js';
import type { CalculatedDefinition } from './entities/calculated.js';
import type { DataClassCore } from './dataclass-core.js';
import type { Datastore } from './datastore.js';
import type { Entity, EntityEventHandler } from './entities/entity.js';
import type { EventKind } from './entities/events.js';
import type { EntitySelection } from './selections/selection.js';

/** The core of a dataclass (for modules of the core and the layers above it; never for user code). */
export let classCoreOf: (dc: DataClass) => DataClassCore;

export class DataClass {
  readonly name: string;
  readonly #core: DataClassCore;

  static {
    classCoreOf = (dc) => dc.#core;
  }

  /** The access of the code running now: its REST caller's (grants, row filters), or the server's. */
  #access(): Access {
    return currentAccess(this.#core.core.root);
  }

  /** Dataclasses come from their datastore: ds.Employee, ds.dataClass('Employee'). */
  constructor(readonly ds: Datastore, readonly model: DataClassModel, core: DataClassCore) {
    this.name = model.name;
    this.#core = core;
  }

  /** The entity with this primary key, or null (also null when the value cannot be a key). */
  get(key: unknown): Promise<Entity | null> {
    return this.#core.get(key, this.#access());
  }

  /**
   * The entities of these keys, in their order: null where no entity has the key. One query per
   * thousand keys.
   */
  getMany(keys: readonly unknown[]): Promise<(Entity | null)[]> {
    return this.#core.getMany(keys, this.#access());
  }

  /**
   * The first entity (in key order) whose storage attribute `name` equals `value` (converted to
   * the attribute's type; text without regard to case or accents), or null: the lookup of
   * `/rest/{dataClass}:{attribute}(value)`.
   */
  findBy(name: string, value: unknown): Promise<Entity | null> {
    return this.#core.findBy(name, value, this.#access());
  }

  /**
   * The entities matching an ORDA query ("salary > :1 and employer.name = :2 order by lastName"),
   * values for :1, :2 … given after the text. Counted, sorted and paged in SQL like any selection.
   */
  query(text: string, ...params: unknown[]): EntitySelection {
    return this.all().query(text, ...params);
  }

  /** Every entity, in creation (primary key) order. */
  all(): EntitySelection {
    return this.#core.selectWhere(null, this.#access());
  }

  /** A new entity, not yet saved. A user entity class's constructor runs (4D's constructor event). */
  new(): Entity {
    return this.#core.newEntity(this.#access());
  }

  /**
   * Gives the dataclass an entity event handler (user entity classes register theirs when they
   * are loaded). Without attributeName: entity level; with one: attribute level (not for
   * afterSave and afterDrop). A handler returning an error object stops a save or drop.
   */
  defineEvent(kind: EventKind, handler: EntityEventHandler, attributeName?: string): void {
    this.#core.defineEvent(kind, handler, attributeName);
  }

  /** Gives a calculated attribute of the model its code (get, set, query, orderBy). */
  defineCalculated(name: string, definition: CalculatedDefinition): void {
    this.#core.defineCalculated(name, definition);
  }
}
