// DataClass: the entry point to one table, ORDA style: get(key), all(), new(), and the reads the
// selections and the REST layer build on. Rows are decoded into Entities here. It also holds
// what user classes give a dataclass: its entity and selection classes, calculated attributes'
// code and entity events.

import { KEYS_PER_QUERY } from '../config/limits.js';
import type { AliasAttribute, DataClassModel, RelatedEntityAttribute, StorageAttribute, StorageType } from '../model/types.js';
import { attributeOf, kindOf } from '../query/path.js';
import { directPath, type ColumnSpec, type Condition, type SelectSpec } from '../query/plan.js';
import { compileSelect } from '../sql/compiler.js';
import { STAMP_COLUMN, TIMESTAMP_COLUMN } from '../storage/schema.js';
import type { Datastore } from './datastore.js';
import type { ProjectMethod } from '../functions/project-methods.js';
import type { CalculatedDefinition } from './calculated.js';
import { Entity, type EntityRow } from './entity.js';
import { ATTRIBUTE_EVENT_KINDS, EVENT_KINDS, EventTable, type EntityEventHandler, type EventKind } from './events.js';
import { EntitySelection } from './selection.js';
import { DatasetError } from '../errors/dataset-error.js';
import { fold } from '../util/fold.js';
import { coerceValue, keyFromInput } from '../model/values.js';

/** Types whose column values need the dialect's decode (the others arrive as they are). */
const PLAIN: ReadonlySet<StorageType> = new Set(['string', 'uuid', 'number', 'long', 'word', 'byte']);
/** Entity property names that stay methods even when an attribute has the same name. */
const RESERVED = new Set(Object.getOwnPropertyNames(Entity.prototype));

export class DataClass {
  readonly name: string;
  readonly #columns: ColumnSpec[];
  readonly #decoders: { name: string; type: StorageType; dateOnly: boolean }[];
  #EntityClass: typeof Entity;
  /** a user entity class is in the chain: entities are built through Entity.create (its constructor may call super()) */
  #userEntityClass = false;
  /** the prototype selections get when a user selection class is installed */
  #selectionPrototype: object | undefined;
  #getSql: string | undefined;
  readonly #calculated = new Map<string, CalculatedDefinition>();
  readonly #events = new EventTable();
  /** the project methods of this dataclass (methods/ folder), by name */
  readonly projectMethods = new Map<string, ProjectMethod>();

  constructor(readonly ds: Datastore, readonly model: DataClassModel) {
    this.name = model.name;
    // An entity is read whole: its storage attributes, stamps, and the aliases that are one
    // value through N→1 relations (a scalar subquery each).
    this.#columns = [
      ...model.storage.map((attr): ColumnSpec => ({ kind: 'storage', attr })),
      { kind: 'stamp' },
      { kind: 'timestamp' },
      ...scalarAliases(model).map((attr): ColumnSpec => ({ kind: 'alias', attr })),
    ];
    this.#decoders = [...model.storage.map((attr) => ({ name: attr.name, attr })), ...aliasTargets(model)]
      .filter(({ attr }) => !PLAIN.has(attr.type))
      .map(({ name, attr }) => ({ name, type: attr.type, dateOnly: attr.dateOnly }));
    this.#EntityClass = entityClassFor(model);
  }

  /** The entity with this primary key, or null (also null when the value cannot be a key). */
  async get(key: unknown): Promise<Entity | null> {
    const k = keyFromInput(this.model.key, key);
    if (k === undefined) return null;
    // The hottest read of all: its SQL is compiled once.
    this.#getSql ??= compileSelect(this.ds.storage.dialect, {
      // no LIMIT: a key matches one row at most, and the only bound value is the key
      dataClass: this.model, columns: this.#columns, order: [],
      where: { kind: 'compare', path: directPath(this.model.key), op: '=', value: k },
    }).sql;
    const d = this.ds.storage.dialect;
    const row = await this.ds.storage.get(this.#getSql, [d.encode(this.model.key.type, k, false)]);
    return row ? this.entityFromRow(row) : null;
  }

  /**
   * The first entity (in key order) whose storage attribute `name` equals `value` (converted to
   * the attribute's type; text without regard to case or accents), or null: the lookup of
   * `/rest/{dataClass}:{attribute}(value)`.
   */
  async findBy(name: string, value: unknown): Promise<Entity | null> {
    const attr = attributeOf(this.model, name, () => true);
    if (attr.kind !== 'storage') throw new DatasetError('INVALID_VALUE', `${this.name}.${name} is ${kindOf(attr)}: a lookup needs a storage attribute`);
    const v = coerceValue(attr, value);
    // text compares as 4D compares it: without regard to case or accents
    if (attr.type === 'string') return this.selectionWhere({ kind: 'compare', path: { via: [], attr, fold: true }, op: '=', value: fold(v as string) }).first();
    return this.selectionWhere({ kind: 'compare', path: directPath(attr), op: '=', value: v }).first();
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
    return this.selectionWhere(null);
  }

  /** A new entity, not yet saved. A user entity class's constructor runs (4D's constructor event). */
  new(): Entity {
    return Entity.create(this.#EntityClass, this, null);
  }

  /**
   * Gives the dataclass an entity event handler (user entity classes register theirs when they
   * are loaded). Without attributeName: entity level; with one: attribute level (not for
   * afterSave and afterDrop). A handler returning an error object stops a save or drop.
   */
  defineEvent(kind: EventKind, handler: EntityEventHandler, attributeName?: string): void {
    if (!(EVENT_KINDS as readonly string[]).includes(kind)) throw new DatasetError('INVALID_VALUE', `"${kind}" is not an entity event (${EVENT_KINDS.join(', ')})`);
    if (attributeName !== undefined) {
      const attr = this.model.attributesByName.get(attributeName);
      if (!ATTRIBUTE_EVENT_KINDS.has(kind)) throw new DatasetError('INVALID_VALUE', `${kind} is an entity-level event: it takes no attribute`);
      if (!attr || (attr.kind !== 'storage' && attr.kind !== 'relatedEntity')) {
        throw new DatasetError('UNKNOWN_ATTRIBUTE', `${this.name}.${attributeName} is not a storage or relatedEntity attribute: it has no ${kind} event`);
      }
    }
    this.#events.set(kind, handler, attributeName);
  }

  /** @internal The entity events, or undefined when there are none (saves then skip them). */
  get events(): EventTable | undefined {
    return this.#events.empty ? undefined : this.#events;
  }

  /** @internal Installs a user entity class (classes/<DataClass>Entity): entities are built from a class extending it. */
  useEntityClass(userClass: typeof Entity): void {
    this.#EntityClass = entityClassFor(this.model, userClass);
    this.#userEntityClass = userClass !== Entity;
  }

  /** @internal Installs a user selection class (classes/<DataClass>Selection): every selection of this dataclass is one. */
  useSelectionClass(userClass: typeof EntitySelection): void {
    this.#selectionPrototype = selectionClassFor(userClass).prototype;
  }

  /** @internal The prototype of this dataclass's entities (the user entity class's, extended). */
  get entityPrototype(): object {
    return this.#EntityClass.prototype;
  }

  /** @internal The prototype of this dataclass's selections: the user selection class's, or undefined. */
  get selectionPrototype(): object | undefined {
    return this.#selectionPrototype;
  }

  /** @internal Gives a selection of this dataclass the user selection class, if any. */
  adopt(selection: EntitySelection): EntitySelection {
    if (this.#selectionPrototype && Object.getPrototypeOf(selection) !== this.#selectionPrototype) Object.setPrototypeOf(selection, this.#selectionPrototype);
    return selection;
  }

  /** Gives a calculated attribute of the model its code (get, set, query, orderBy). */
  defineCalculated(name: string, definition: CalculatedDefinition): void {
    const attr = this.model.attributesByName.get(name);
    if (!attr || attr.kind !== 'calculated') {
      throw new DatasetError('UNKNOWN_ATTRIBUTE', `${this.name}.${name} is not a calculated attribute of the model`);
    }
    this.#calculated.set(name, definition);
  }

  /** @internal */
  calculated(name: string): CalculatedDefinition | undefined {
    return this.#calculated.get(name);
  }

  /** @internal The entities matching a condition (null: all of them), in key order. */
  selectionWhere(where: Condition | null): EntitySelection {
    return this.adopt(new EntitySelection(this, { kind: 'query', where, order: [], offset: 0, limit: null }));
  }

  /** @internal The entities on the N side of a relation: those whose `inverse` points at `key` (none for a null key). */
  relatedTo(inverse: RelatedEntityAttribute, key: unknown): EntitySelection {
    if (key === null || key === undefined) return this.selectionWhere({ kind: 'in', path: directPath(inverse.foreignKey), values: [] });
    return this.selectionWhere({ kind: 'compare', path: directPath(inverse.foreignKey), op: '=', value: key });
  }

  /**
   * The entities of these keys, in their order: null where no entity has the key any more (an
   * entity set keeps the keys of dropped entities, reference §8.2). One query per KEYS_PER_QUERY keys.
   */
  async getMany(keys: readonly unknown[]): Promise<(Entity | null)[]> {
    const found = new Map<unknown, Entity>();
    for (let at = 0; at < keys.length; at += KEYS_PER_QUERY) {
      for (const e of await this.readEntities({
        dataClass: this.model, columns: this.#columns, order: [],
        where: { kind: 'in', path: directPath(this.model.key), values: keys.slice(at, at + KEYS_PER_QUERY) },
      })) found.set(e.getKey(), e);
    }
    return keys.map((k) => found.get(k) ?? null);
  }

  /** @internal The columns that make a complete entity. */
  entityColumns(): readonly ColumnSpec[] {
    return this.#columns;
  }

  /** @internal Runs a SELECT of entity columns and turns the rows into entities. */
  async readEntities(spec: SelectSpec): Promise<Entity[]> {
    const { sql, params } = compileSelect(this.ds.storage.dialect, spec);
    const rows = await this.ds.storage.all(sql, params);
    return rows.map((row) => this.entityFromRow(row));
  }

  /** @internal */
  entityFromRow(row: EntityRow): Entity {
    const decode = this.ds.storage.dialect.decode;
    for (const d of this.#decoders) {
      if (d.name in row) row[d.name] = decode(d.type, row[d.name], d.dateOnly);
    }
    // The hidden columns stay in the row (deleting them would slow every property access down);
    // an entity only ever reads its attributes by name.
    if (this.#userEntityClass) return Entity.create(this.#EntityClass, this, row, Number(row[STAMP_COLUMN]), Number(row[TIMESTAMP_COLUMN]));
    return new this.#EntityClass(this, row, Number(row[STAMP_COLUMN]), Number(row[TIMESTAMP_COLUMN]));
  }
}

/** Aliases that are one value read with the entity: through N→1 relations to a storage attribute or a relatedEntity. */
function scalarAliases(model: DataClassModel): AliasAttribute[] {
  return model.attributes.filter((a): a is AliasAttribute => {
    if (a.kind !== 'alias' || a.toMany) return false;
    const last = a.steps[a.steps.length - 1].kind;
    return last === 'storage' || last === 'relatedEntity';
  });
}

/** For scalar aliases ending on a storage attribute: the attribute whose type their value has. */
function aliasTargets(model: DataClassModel): { name: string; attr: StorageAttribute }[] {
  return scalarAliases(model).flatMap((a) => {
    const last = a.steps[a.steps.length - 1];
    return last.kind === 'storage' ? [{ name: a.name, attr: last }] : [];
  });
}

/**
 * An Entity subclass with one accessor per attribute: entity.lastName, await entity.employer,
 * entity.staff. It extends the user entity class when there is one, so entities have its methods;
 * members the user class declares keep their own meaning (the loader refuses such a member for a
 * storage or relation attribute; a calculated attribute's accessor stays ours and runs its code).
 */
function entityClassFor(model: DataClassModel, base: typeof Entity = Entity): typeof Entity {
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

/** Methods of EntitySelection that return another selection of the same dataclass. */
const SELECTION_RETURNING = ['slice', 'orderBy', 'query', 'queryAs', 'withOrder'] as const;

/**
 * A class extending a user selection class whose selection-returning methods give their result
 * the same class, so `ds.Company.all().orderBy('name')` still has the user's methods.
 */
function selectionClassFor(base: typeof EntitySelection): typeof EntitySelection {
  const cls = class extends base {};
  Object.defineProperty(cls, 'name', { value: base.name });
  for (const name of SELECTION_RETURNING) {
    const inherited = base.prototype[name] as (...args: unknown[]) => EntitySelection;
    Object.defineProperty(cls.prototype, name, {
      value(this: EntitySelection, ...args: unknown[]) {
        return this.getDataClass().adopt(inherited.apply(this, args));
      },
      writable: true,
      configurable: true,
    });
  }
  return cls;
}
