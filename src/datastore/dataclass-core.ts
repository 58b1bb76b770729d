// The core side of a dataclass: how its entities are read (columns, decoding), built (through its
// entity class) and selected, and what user classes gave it (events, calculated attributes,
// entity and selection classes). User code never reaches it: the DataClass user classes extend
// is its public face, and the selections and entities it makes hold it privately.

import { KEYS_PER_QUERY } from '../config/limits.js';
import { DatasetError } from '../errors/dataset-error.js';
import { type AliasAttribute, type DataClassModel, type RelatedEntityAttribute, type StorageAttribute, type StorageType } from '../model/types.js';
import { coerceValue, keyFromInput } from '../model/values.js';
import { attributeOf, kindOf } from '../query/path.js';
import { foldedCompare } from '../query/folded-text.js';
import { directPath, type ColumnSpec, type Condition, type SelectSpec } from '../query/plan.js';
import { compileSelect } from '../sql/compiler/statements.js';
import type { TransactionOptions } from '../storage/adapter.js';
import { STAMP_COLUMN, TIMESTAMP_COLUMN } from '../storage/schema.js';
import { fold } from '../util/fold.js';
import type { Access } from './access/access.js';
import { readableBy, requireDataClass } from './access/guard.js';
import type { CalculatedDefinition } from './entities/calculated.js';
import { entityClassFor } from './entities/class-install.js';
import type { ClassCoreView } from './core-types.js';
import type { Core } from './datastore.js';
import type { DataClass } from './dataclass.js';
import { createEntity, Entity, type EntityEventHandler, type EntityRow } from './entities/entity.js';
import { ATTRIBUTE_EVENT_KINDS, EVENT_KINDS, EventTable, type EventKind } from './entities/events.js';
import { EntitySelection, type QuerySource } from './selections/selection.js';
import { dropWhere } from './writes/bulk-drop.js';
import { cascadesRunUserCode } from './writes/delete-rules.js';

/** Types whose column values arrive as they are (the others need the dialect's decode). */
export const PLAIN: ReadonlySet<StorageType> = new Set(['string', 'uuid', 'number', 'long', 'word', 'byte']);

export class DataClassCore implements ClassCoreView {
  readonly name: string;
  /** the public face, set once by the datastore that builds both */
  dataClass!: DataClass;
  readonly #columns: ColumnSpec[];
  /** the name each of #columns has in a row object */
  readonly #columnNames: string[];
  readonly #decoders: { name: string; type: StorageType; dateOnly: boolean }[];
  #EntityClass: typeof Entity;
  /** a user entity class is in the chain: entities are built through createEntity (its constructor may call super()) */
  #userEntityClass = false;
  /** the prototype selections get when a user selection class is installed */
  #selectionPrototype: object | undefined;
  /** the read by key of the root access, compiled once: the hottest read of all */
  #getSql: string | undefined;
  readonly #calculated = new Map<string, CalculatedDefinition>();
  readonly #events = new EventTable<Entity>();

  constructor(readonly core: Core, readonly model: DataClassModel) {
    this.name = model.name;
    // An entity is read whole: its storage attributes, stamps, and the aliases that are one
    // value through N→1 relations (a scalar subquery each).
    this.#columns = [
      ...model.storage.map((attr): ColumnSpec => ({ kind: 'storage', attr })),
      { kind: 'stamp' },
      { kind: 'timestamp' },
      ...scalarAliases(model).map((attr): ColumnSpec => ({ kind: 'alias', attr })),
    ];
    this.#columnNames = this.#columns.map((c) => (c.kind === 'stamp' ? STAMP_COLUMN : c.kind === 'timestamp' ? TIMESTAMP_COLUMN : (c as { attr: { name: string } }).attr.name));
    this.#decoders = [...model.storage.map((attr) => ({ name: attr.name, attr })), ...aliasTargets(model)]
      .filter(({ attr }) => !PLAIN.has(attr.type))
      .map(({ name, attr }) => ({ name, type: attr.type, dateOnly: attr.dateOnly }));
    this.#EntityClass = entityClassFor(model);
  }

  /** The entity with this primary key, or null (also null when the value cannot be a key). */
  async get(key: unknown, access: Access): Promise<Entity | null> {
    const row = await this.getRow(key, access);
    return row ? this.entityFromRow(row, access) : null;
  }

  /**
   * The row of the entity with this primary key as the database gives it (values not decoded), or
   * undefined: for readers that write rows out without making entities (REST's plain answers, see
   * rest/present/row-writer.ts). The same checks as get().
   */
  getRow(key: unknown, access: Access): Promise<EntityRow | undefined> {
    requireDataClass(access, this.model, 'read');
    const k = keyFromInput(this.model.key, key);
    if (k === undefined) return Promise.resolve(undefined);
    const reader = access.reader;
    let sql: string;
    let params: readonly unknown[];
    if (access.restrict === null) {
      // the hottest read of all: its SQL is compiled once, and the key is its only parameter
      sql = this.#getSql ??= compileSelect(reader.dialect, this.#byKey(k), null).sql;
      params = [reader.dialect.types.encode(this.model.key.type, k, false)];
    } else ({ sql, params } = compileSelect(reader.dialect, this.#byKey(k), access.restrict));
    return reader.get(sql, params) as Promise<EntityRow | undefined>;
  }

  /**
   * The values of `columns` (what a row writer reads) for the entity with this primary key, or
   * undefined: the same checks as get(). Without a row filter its SQL is compiled once per column list.
   */
  async valuesByKey(key: unknown, columns: readonly ColumnSpec[], access: Access): Promise<unknown[] | undefined> {
    requireDataClass(access, this.model, 'read');
    const k = keyFromInput(this.model.key, key);
    if (k === undefined) return undefined;
    const reader = access.reader;
    let sql: string | undefined;
    let params: readonly unknown[];
    if (access.restrict === null && (sql = this.#valuesSql.get(columns)) !== undefined) {
      params = [reader.dialect.types.encode(this.model.key.type, k, false)];
    } else {
      ({ sql, params } = compileSelect(reader.dialect, this.#byKey(k, columns), access.restrict));
      // (the key is the only parameter of the statement without a row filter)
      if (access.restrict === null) this.#valuesSql.set(columns, sql);
    }
    return (await reader.arrays(sql, params))[0];
  }

  /** The SQL of valuesByKey without a row filter, per column list. */
  readonly #valuesSql = new WeakMap<readonly ColumnSpec[], string>();

  /** The entity of one key: no LIMIT (a key matches one row at most), no order. */
  #byKey(key: unknown, columns: readonly ColumnSpec[] = this.#columns): SelectSpec {
    return { dataClass: this.model, columns, order: [], where: { kind: 'compare', path: directPath(this.model.key), op: '=', value: key } };
  }

  /** The entities of these keys, in their order: null where no entity has the key (an entity set keeps the keys of dropped entities, reference §8.2). */
  async getMany(keys: readonly unknown[], access: Access): Promise<(Entity | null)[]> {
    requireDataClass(access, this.model, 'read');
    const found = new Map<unknown, Entity>();
    for (let at = 0; at < keys.length; at += KEYS_PER_QUERY) {
      const where: Condition = { kind: 'in', path: directPath(this.model.key), values: keys.slice(at, at + KEYS_PER_QUERY) };
      for (const e of await this.readEntities({ dataClass: this.model, columns: this.#columns, order: [], where }, access)) found.set(e.getKey(), e);
    }
    return keys.map((k) => found.get(k) ?? null);
  }

  /**
   * The values of `columns` (what a row writer reads) of the entities of `keys` that exist (and the
   * caller sees), in no order, with the global stamp read by the first statement (KEYS_PER_QUERY keys a
   * statement: one for a page of that many).
   */
  async valuesOfKeys(keys: readonly unknown[], columns: readonly ColumnSpec[], access: Access): Promise<{ rows: (readonly unknown[])[]; globalStamp: number | undefined }> {
    requireDataClass(access, this.model, 'read');
    const rows: (readonly unknown[])[] = [];
    let globalStamp: number | undefined;
    const at = columns.length;
    for (let from = 0; from < keys.length; from += KEYS_PER_QUERY) {
      const where: Condition = { kind: 'in', path: directPath(this.model.key), values: keys.slice(from, from + KEYS_PER_QUERY) };
      const { sql, params } = compileSelect(access.reader.dialect, { dataClass: this.model, columns: [...columns, { kind: 'globalStamp' }], order: [], where }, access.restrict);
      for (const row of await access.reader.arrays(sql, params)) {
        globalStamp ??= Number(row[at]);
        rows.push(row);
      }
    }
    return { rows, globalStamp };
  }

  /**
   * Drops the entities of `keys` through the core (their events run), a batch at a time, in the
   * caller's transaction; a key with no entity is skipped (a set keeps the keys of dropped members).
   */
  async dropEach(keys: ArrayLike<unknown>, access: Access): Promise<void> {
    const list = Array.from(keys);
    for (let at = 0; at < list.length; at += KEYS_PER_QUERY) {
      for (const e of await this.getMany(list.slice(at, at + KEYS_PER_QUERY), access)) await e?.drop();
    }
  }

  /** Drops the entities that meet `where` (null: all) and the caller's row filter, in the caller's transaction (bulk-drop.ts): a cascade's drop (writes/delete-rules.ts). */
  dropMatching(where: Condition | null, access: Access): Promise<void> {
    return dropWhere(this, where, access);
  }

  /** The first entity (in key order) whose storage attribute `name` equals `value` (text without regard to case or accents), or null. */
  async findBy(name: string, value: unknown, access: Access): Promise<Entity | null> {
    const attr = attributeOf(this.model, name, readableBy(access.grants));
    if (attr.kind !== 'storage') throw new DatasetError('INVALID_VALUE', `${this.name}.${name} is ${kindOf(attr)}: a lookup needs a storage attribute`);
    const v = coerceValue(attr, value);
    const where: Condition = attr.type === 'string'
      ? foldedCompare({ via: [], attr }, '=', fold(v as string))
      : { kind: 'compare', path: directPath(attr), op: '=', value: v };
    return this.selectWhere(where, access).first();
  }

  /** The entities matching a condition (null: all of them), in key order. */
  selectWhere(where: Condition | null, access: Access): EntitySelection {
    return this.selection({ where, order: [], offset: 0, limit: null }, access);
  }

  /** A selection of this dataclass, of the user selection class if there is one. */
  selection(source: QuerySource, access: Access): EntitySelection {
    // every selection is made here: a caller that may not read the dataclass gets none
    requireDataClass(access, this.model, 'read');
    const s = new EntitySelection(this, source, access);
    if (this.#selectionPrototype) Object.setPrototypeOf(s, this.#selectionPrototype);
    return s;
  }

  /** The entities on the N side of a relation: those whose `inverse` points at `key` (none for a null key). */
  relatedTo(inverse: RelatedEntityAttribute, key: unknown, access: Access): EntitySelection {
    if (key === null || key === undefined) return this.selectWhere({ kind: 'in', path: directPath(inverse.foreignKey), values: [] }, access);
    return this.selectWhere({ kind: 'compare', path: directPath(inverse.foreignKey), op: '=', value: key }, access);
  }

  /** A new entity, not yet saved. A user entity class's constructor runs (4D's constructor event). */
  newEntity(access: Access): Entity {
    return createEntity(this.#EntityClass, { dc: this, values: null, stamp: 0, timestamp: 0, access });
  }

  /** The columns that make a complete entity. */
  get columns(): readonly ColumnSpec[] {
    return this.#columns;
  }

  /** Runs a SELECT of entity columns and turns the rows into entities. */
  async readEntities(spec: SelectSpec, access: Access): Promise<Entity[]> {
    return (await this.readRows(spec, access)).map((row) => this.entityFromRow(row, access));
  }

  /** The rows of a SELECT as the database gives them (values not decoded), through the caller's access: see getRow(). */
  readRows(spec: SelectSpec, access: Access): Promise<EntityRow[]> {
    const { sql, params } = compileSelect(access.reader.dialect, spec, access.restrict);
    return access.reader.all(sql, params) as Promise<EntityRow[]>;
  }

  /** An entity from the values of `columns` (in their order; more may follow). */
  entityFromValues(values: readonly unknown[], access: Access): Entity {
    const row: EntityRow = {};
    const names = this.#columnNames;
    for (let i = 0; i < names.length; i++) row[names[i]] = values[i];
    return this.entityFromRow(row, access);
  }

  entityFromRow(row: EntityRow, access: Access): Entity {
    const decode = access.reader.dialect.types.decode;
    for (const d of this.#decoders) {
      if (d.name in row) row[d.name] = decode(d.type, row[d.name], d.dateOnly);
    }
    // The hidden columns stay in the row (deleting them would slow every property access down);
    // an entity only ever reads its attributes by name.
    const init = { dc: this, values: row, stamp: Number(row[STAMP_COLUMN]), timestamp: Number(row[TIMESTAMP_COLUMN]), access };
    return this.#userEntityClass ? createEntity(this.#EntityClass, init) : new this.#EntityClass(init);
  }

  // ---- what user classes give a dataclass ----

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

  /** The entity events, or undefined when there are none (saves then skip them). */
  get events(): EventTable<Entity> | undefined {
    return this.#events.empty ? undefined : this.#events;
  }

  /**
   * A write of this dataclass runs user code (an event, a calculated attribute's set): a unit of
   * such writes is never run again after a conflict (the code could have acted outside the database).
   */
  get writesRunUserCode(): boolean {
    return this.events !== undefined || [...this.#calculated.values()].some((c) => c.set !== undefined);
  }

  /** A drop of this dataclass's entities runs user code: a drop event (entity or attribute level), or the entity class's own drop(). */
  get dropsRunUserCode(): boolean {
    const events = this.events;
    if (events) {
      for (const kind of ['validateDrop', 'dropping', 'afterDrop'] as const) {
        if (events.entity(kind) || events.attributes(kind).length > 0) return true;
      }
    }
    return (this.entityPrototype as Entity).drop !== Entity.prototype.drop;
  }

  /** A user entity class is installed: its constructor runs for every entity read too (README, entity events), so reads make entities. */
  get constructsOnRead(): boolean {
    return this.#userEntityClass;
  }

  /** Reading entities of this dataclass runs user code: an entity class's constructor, a calculated attribute's get, query or orderBy. */
  get readsRunUserCode(): boolean {
    return this.#userEntityClass || this.#calculated.size > 0;
  }

  /**
   * The options of a transaction of writes of this dataclass alone, for `access`: run again after
   * a conflict when no user code runs in it; its statements within the access's budget (a
   * request's).
   */
  writeUnit(access: Access): TransactionOptions {
    // (a drop's cascades may reach a dataclass whose drops run user code: writes/delete-rules.ts)
    const userCode = this.writesRunUserCode || cascadesRunUserCode(this.core, this.model);
    return { retries: userCode ? 0 : this.core.storage.dialect.concurrency.conflictRetries, budget: access.budget };
  }

  defineCalculated(name: string, definition: CalculatedDefinition): void {
    const attr = this.model.attributesByName.get(name);
    if (!attr || attr.kind !== 'calculated') throw new DatasetError('UNKNOWN_ATTRIBUTE', `${this.name}.${name} is not a calculated attribute of the model`);
    this.#calculated.set(name, definition);
  }

  calculated(name: string): CalculatedDefinition | undefined {
    return this.#calculated.get(name);
  }

  /** Installs a user entity class (classes/<DataClass>Entity): entities are built from a class extending it. */
  useEntityClass(userClass: typeof Entity): void {
    this.#EntityClass = entityClassFor(this.model, userClass);
    this.#userEntityClass = userClass !== Entity;
  }

  /** Installs a user selection class (classes/<DataClass>Selection): every selection of this dataclass is one. */
  useSelectionClass(userClass: typeof EntitySelection): void {
    this.#selectionPrototype = userClass.prototype;
  }

  /** The prototype of this dataclass's entities (the user entity class's, extended). */
  get entityPrototype(): object {
    return this.#EntityClass.prototype;
  }

  /** The prototype of this dataclass's selections: the user selection class's, or undefined. */
  get selectionPrototype(): object | undefined {
    return this.#selectionPrototype;
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
