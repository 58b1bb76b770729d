// Entity: one record of a dataclass, ORDA style. Attribute values are read and written through
// generated accessors (entity.lastName) or get()/set(); relations load lazily:
// `await entity.employer` (N→1) and `entity.staff` (an EntitySelection, 1→N). A user entity
// class (classes/<DataClass>Entity.ts) extends Entity; save() and drop() run its events.

import { DatasetError } from '../../errors/dataset-error.js';
import { EVERY_ATTRIBUTE, type AttributeModel, type StorageAttribute } from '../../model/types.js';
import { givenKey, isRequired, keyOfNewEntity, requireValue } from '../../model/save-rules.js';
import { coerceValue, requireStorableObject } from '../../model/values.js';
import { kindOf, unknownAttribute } from '../../query/path.js';
import { directPath } from '../../query/plan.js';
import type { Access } from '../access/access.js';
import { requireDrop, requireSave } from '../access/guard.js';
import { aliasLeadsToEntities, reachCondition, relationSteps, walkAlias } from '../reads/alias-values.js';
import type { DataClass } from '../dataclass.js';
import type { DataClassCore } from '../dataclass-core.js';
import { aroundWrite, fireTouched, runEvents, type EventContext } from './event-sequence.js';
import type { EventHandler, EventTable } from './events.js';
import { checkValues } from '../writes/rules.js';
import { lockEntity, NO_CLIENT, unlockEntity, type LockStatus } from '../sessions/locks.js';
import type { EntitySelection } from '../selections/selection.js';
import { deleteEntity, insertEntity, stampChanged, updateEntity, type WriteBatch } from '../writes/writes.js';

export type EntityRow = Record<string, unknown>;

/** An entity event handler: called with `this` the entity. It may be async. */
export type EntityEventHandler = EventHandler<Entity>;


/** What an entity is made of: its dataclass, its values as read (null for a new one), stamps, and the access it was read with. */
export interface EntityInit {
  readonly dc: DataClassCore;
  readonly values: EntityRow | null;
  readonly stamp: number;
  readonly timestamp: number;
  readonly access: Access;
}

/** The entity being constructed by createEntity (constructors of user classes call super() without arguments). */
let pending: EntityInit | undefined;

// The core's own doors into an entity (never reachable from user code, which extends the class).
export let createEntity: (cls: typeof Entity, init: EntityInit) => Entity;
export let relatedKeyOf: (e: Entity, name: string) => unknown;
export let entityClassOf: (e: Entity) => DataClassCore;
/**
 * A save from a client that read the entity at `stamp` (REST's __STAMP): the stamp-mismatch error
 * when the entity has been saved since (its events then never run), else undefined.
 */
export let staleStamp: (e: Entity, stamp: number, what?: 'saved' | 'dropped') => DatasetError | undefined;
/** The rules of a save (rules.ts) on the values set so far: a related entity exists, a file fits its attribute. */
export let checkTouched: (e: Entity) => Promise<void>;
/** The values a save of the entity would write now: its touched storage attributes. */
export let touchedValuesOf: (e: Entity) => Map<StorageAttribute, unknown>;
/**
 * save(), as one of the saves of a batch (writes.ts WriteBatch: one all-or-nothing transaction
 * the caller opened, in which no user code runs). An entity whose dataclass has events saves as
 * save() does.
 */
export let saveInBatch: (e: Entity, batch: WriteBatch) => Promise<void>;

export class Entity {
  readonly #dc: DataClassCore;
  readonly #access: Access;
  /** attribute values by attribute name (storage values, and alias values when they were read) */
  #values: EntityRow;
  #stamp: number;
  #timestamp: number;
  #isNew: boolean;
  /** attributes changed since loaded or saved (allocated on first change: most entities are only read) */
  #touched: Set<string> | undefined;
  /** true while a user constructor runs for an entity read from the database: its sets are ignored */
  #loading = false;
  /** true while touched events run: sets they make fire no further touched events */
  #inTouched = false;

  static {
    // Constructs an entity of a (generated) entity class whose user constructor may call super()
    // without arguments. For an entity read from the database, what the constructor sets is
    // ignored: 4D runs the constructor event for new entities only (§6.5).
    createEntity = (cls, init) => {
      pending = init;
      try {
        const e = new cls();
        e.#loading = false;
        return e;
      } finally {
        pending = undefined;
      }
    };
    relatedKeyOf = (e, name) => e.#relatedKey(name);
    entityClassOf = (e) => e.#dc;
    staleStamp = (e, stamp, what) => (stamp === e.#stamp ? undefined : stampChanged(e.#dc.core.name, e.#dc.model, e.#key(), what));
    checkTouched = (e) => checkValues(e.#dc, e.#touchedValues(), e.#access);
    touchedValuesOf = (e) => e.#touchedValues();
    saveInBatch = (e, batch) => e.#save(batch);
  }

  /**
   * Entities come from dataClass.new() or from reads, never from `new`. A user entity class's
   * constructor calls `super()` without arguments: 4D's constructor event (reference §6.5).
   */
  constructor(given?: EntityInit) {
    const init = pending ?? given;
    const fromUserClass = pending !== undefined;
    pending = undefined;
    if (!init) throw new DatasetError('INVALID_VALUE', 'entities are created with dataClass.new() or read from the datastore, not with new');
    this.#dc = init.dc;
    this.#access = init.access;
    this.#values = init.values ?? {};
    this.#stamp = init.stamp;
    this.#timestamp = init.timestamp;
    this.#isNew = init.values === null;
    this.#loading = !this.#isNew && fromUserClass;
  }

  getDataClass(): DataClass {
    return this.#dc.dataClass;
  }

  /** the primary key value (null for a new entity whose key is generated on save) */
  getKey(): unknown {
    return this.#key();
  }

  #key(): unknown {
    return this.#values[this.#dc.model.key.name] ?? null;
  }

  /** the save counter: 0 for a new entity, increased by every save */
  getStamp(): number {
    return this.#stamp;
  }

  /** time of the last save (REST's __TIMESTAMP): with the stamp, tells one life of a key from the next */
  getTimeStamp(): Date {
    return new Date(this.#timestamp);
  }

  isNew(): boolean {
    return this.#isNew;
  }

  /** names of the attributes changed since the entity was loaded or saved */
  touchedAttributes(): string[] {
    return this.#touched ? [...this.#touched] : [];
  }

  /**
   * The value of a storage attribute, of an alias that is one value, or of a calculated attribute
   * (null until user classes bring their code). Relations: use related(); lists: list().
   */
  get(name: string): unknown {
    const attr = this.#attribute(name);
    if (attr.kind === 'relatedEntity' || attr.kind === 'relatedEntities' || (attr.kind === 'alias' && aliasLeadsToEntities(attr))) {
      throw new DatasetError('NOT_A_RELATION', `${this.#dc.name}.${name} leads to entities: use await entity.related('${name}') (or entity.${name})`);
    }
    if (attr.kind === 'alias' && attr.toMany) {
      throw new DatasetError('NOT_A_RELATION', `${this.#dc.name}.${name} is a list through a 1→N relation: use await entity.list('${name}')`);
    }
    // a calculated attribute: its get function's result (a Promise if the function is async)
    if (attr.kind === 'calculated') return this.#dc.calculated(name)?.get?.(this) ?? null;
    return this.#values[name] ?? null;
  }

  /**
   * Sets a storage attribute (converted and checked for its type), a relatedEntity (to a saved
   * entity of its target, or null), or a calculated attribute with a set function; then runs the
   * touched events (attribute level, then entity level).
   */
  set(name: string, value: unknown): void {
    if (this.#loading) return;
    const attr = this.#attribute(name);
    // a saved entity's key given again as it is changes nothing (clients send every attribute
    // back: wakanda-client's save() does); any other value is refused by #setValue
    if (attr.kind === 'storage' && attr.identifying && !this.#isNew && value !== null && coerceValue(attr, value) === this.getKey()) return;
    // __GlobalStamp is the server's: given back as it is, nothing; else refused
    if (attr.kind === 'storage' && attr.serverSet) {
      if (value === null ? this.#values[name] === undefined || this.#values[name] === null : coerceValue(attr, value) === this.#values[name]) return;
      const what = this.#dc.model.system ? 'it records a drop of a dataclass that tracks its changes' : "it stores the global stamp of the entity's last change";
      throw new DatasetError('READ_ONLY', `${this.#dc.name}.${name} is kept by the server (${what}): it cannot be written`, [], { attributeName: name });
    }
    this.#setValue(attr, name, value);
    if (attr.kind === 'storage' || attr.kind === 'relatedEntity') this.#fireTouched(name);
  }

  #fireTouched(name: string): void {
    const events = this.#dc.events;
    if (!events || this.#inTouched) return;
    this.#inTouched = true;
    try {
      fireTouched(this.#events(events), name);
    } finally {
      this.#inTouched = false;
    }
  }

  #events(events: EventTable<Entity>): EventContext<Entity> {
    return { events, entity: this, dataClassName: this.#dc.name, report: this.#dc.core.report };
  }

  #setValue(attr: AttributeModel, name: string, value: unknown): void {
    if (attr.kind === 'relatedEntity') {
      if (value !== null && !(value instanceof Entity && value.getDataClass().model === attr.target)) {
        throw new DatasetError('INVALID_VALUE', `${this.#dc.name}.${name} takes an entity of ${attr.target.name} or null`);
      }
      if (value instanceof Entity && value.isNew()) {
        throw new DatasetError('INVALID_VALUE', `${this.#dc.name}.${name}: the ${attr.target.name} entity is not saved yet (save it first, it has no key)`);
      }
      return this.#assign(attr.foreignKey, value === null ? null : (value as Entity).getKey());
    }
    const setter = attr.kind === 'calculated' ? this.#dc.calculated(name)?.set : undefined;
    if (setter) return setter(this, value);
    if (attr.kind !== 'storage') {
      throw new DatasetError('INVALID_VALUE', `${this.#dc.name}.${name} is ${kindOf(attr)}${attr.kind === 'calculated' ? ' without a set function' : ''} and cannot be set`);
    }
    if (attr.identifying && !this.#isNew) {
      throw new DatasetError('INVALID_VALUE', `the key ${this.#dc.name}.${name} of a saved entity cannot change`);
    }
    if (attr.type === 'image' || attr.type === 'blob') {
      // holds a stored file (see Datastore.storeFile), by id
      value = value !== null && typeof value === 'object' && 'id' in value ? (value as { id: unknown }).id : value;
    }
    this.#assign(attr, coerceValue(attr, value, this.#dc.core.maxTextLength));
  }

  /**
   * What a relation, or an alias leading to entities, reaches: one entity (or null) through N→1
   * steps only, else a selection (lazy: counted and paged in SQL).
   */
  related(name: string): Promise<Entity | null> | EntitySelection {
    const attr = this.#attribute(name);
    const core = this.#dc.core;
    if (attr.kind === 'relatedEntity') {
      const key = this.#values[attr.foreignKey.name];
      return key === null || key === undefined ? Promise.resolve(null) : core.classOf(attr.target).get(key, this.#access);
    }
    if (attr.kind === 'relatedEntities') {
      return core.classOf(attr.target).relatedTo(attr.inverse, this.#isNew ? null : this.#key(), this.#access);
    }
    if (attr.kind === 'alias' && aliasLeadsToEntities(attr)) {
      const steps = relationSteps(attr);
      const target = core.classOf(steps[steps.length - 1].target);
      const where = this.#isNew ? { kind: 'in' as const, path: directPath(target.model.key), values: [] } : reachCondition(this.#dc.model, this.#key(), steps);
      const reached = target.selectWhere(where, this.#access);
      return attr.toMany || steps[steps.length - 1].kind === 'relatedEntities' ? reached : reached.first();
    }
    throw new DatasetError('NOT_A_RELATION', `${this.#dc.name}.${name} is ${kindOf(attr)}, not a relation`);
  }

  /** The key a relatedEntity (its foreign key) or a single-entity alias holds, or null. */
  #relatedKey(name: string): unknown {
    const attr = this.#attribute(name);
    return (attr.kind === 'relatedEntity' ? this.#values[attr.foreignKey.name] : this.#values[name]) ?? null;
  }

  /** The values of an alias through a 1→N relation (Company.staffNames = staff.lastName). */
  async list(name: string): Promise<unknown[]> {
    const attr = this.#attribute(name);
    if (attr.kind !== 'alias' || !attr.toMany || aliasLeadsToEntities(attr)) {
      throw new DatasetError('INVALID_VALUE', `${this.#dc.name}.${name} is not a list (an alias to values through a 1→N relation)`);
    }
    return (await walkAlias(this.#dc.core, [this], attr, this.#access)).get(this) ?? [];
  }

  /**
   * Saves the entity: inserts a new one, or updates the touched attributes if the stamp still
   * matches. Inside a transaction that later rolls back, the entity gets its former state back.
   * Events (§6.5): the values checked (rules.ts), validateSave (attribute level for touched
   * attributes, then entity level), then in one transaction with the write saving (same order),
   * then afterSave. A saved entity with nothing touched is not saved and runs no event.
   */
  save(): Promise<void> {
    return this.#save(undefined);
  }

  async #save(batch: WriteBatch | undefined): Promise<void> {
    if (!this.#isNew && !this.#touched?.size) return;
    const dc = this.#dc;
    // the caller's permissions first: a refused save runs no event and writes nothing
    const values = this.#touchedValues();
    requireSave(this.#access, dc.model, this.#isNew, values);
    const events = dc.events;
    if (!events) {
      await this.#write(batch, values);
      return;
    }
    // the values as given are checked before any event runs (an event sees only values that fit);
    // the write checks again, in its transaction, what the events may have set since
    await checkValues(dc, this.#touchedValues(), this.#access);
    await aroundWrite(this.#events(events), dc.core.storage, this.#access.budget, ['validateSave', 'saving'], (a) => this.#isTouched(a), () => this.#write(),
      (saved, ok) => ({ kind: 'afterSave', dataClassName: dc.name, savedAttributes: saved, saveStatus: ok ? 'success' : 'failed' }));
  }

  /**
   * Checks what a save would check — related entities exist, files fit their attributes, notNull
   * attributes hold a value — then runs the validateSave events (attribute level for touched
   * attributes, then entity level), without saving: what $method=validate asks. Throws the first
   * error.
   */
  async validate(): Promise<void> {
    requireSave(this.#access, this.#dc.model, this.#isNew, this.#touchedValues());
    await checkValues(this.#dc, this.#touchedValues(), this.#access);
    this.#checkRequired();
    const events = this.#dc.events;
    if (events) await runEvents(this.#events(events), 'validateSave', (a) => this.#isTouched(a));
  }

  /** notNull attributes: a new entity needs them all, an update may not clear one. */
  #checkRequired(): void {
    const dc = this.#dc;
    for (const attr of dc.model.storage) {
      if (isRequired(attr) && (this.#isNew || this.#isTouched(attr.name))) requireValue(attr, this.#values[attr.name]);
    }
  }

  #isTouched(name: string): boolean {
    const attr = this.#dc.model.attributesByName.get(name);
    if (attr?.kind === 'relatedEntity') return this.#touched?.has(attr.foreignKey.name) ?? false;
    return this.#touched?.has(name) ?? false;
  }

  /** The touched storage attributes, with their values: what a save writes. */
  #touchedValues(): Map<StorageAttribute, unknown> {
    const values = new Map<StorageAttribute, unknown>();
    for (const name of this.#touched ?? []) {
      const attr = this.#dc.model.attributesByName.get(name) as StorageAttribute;
      values.set(attr, this.#values[name] ?? null);
    }
    return values;
  }

  /** The write of save() (one of a batch's saves, with `batch`; `touched`: #touchedValues() as it is now, a map of its own): resolves to the names of the attributes written. */
  async #write(batch?: WriteBatch, touched?: Map<StorageAttribute, unknown>): Promise<string[]> {
    const dc = this.#dc;
    const key = dc.model.key;
    const values = touched ?? this.#touchedValues();
    if (!this.#isNew && values.size === 0) return []; // 4D: a save with nothing touched does nothing
    if (this.#isNew && (values.get(key) ?? null) === null) {
      values.delete(key);
      const generated = keyOfNewEntity(key);
      if (generated !== undefined) values.set(key, generated);
    }
    this.#checkRequired();
    // an object changed in place since it was set is checked again (nesting, lone surrogates)
    for (const [attr, value] of values) if (attr.type === 'object') requireStorableObject(attr, value);
    const before = { values: this.#values, stamp: this.#stamp, timestamp: this.#timestamp, isNew: this.#isNew, touched: this.touchedAttributes() };
    const saved = this.#isNew
      ? await insertEntity(dc, values, this.#access, batch)
      : await updateEntity(dc, this.#key(), this.#stamp, values, this.#access, batch);
    if (this.#isNew) this.#values = { ...this.#values, [key.name]: saved.key };
    const tracked = dc.model.globalStamp;
    if (tracked && saved.globalStamp !== undefined) this.#values = { ...this.#values, [tracked.name]: saved.globalStamp };
    this.#stamp = saved.stamp;
    this.#timestamp = saved.timestamp;
    this.#isNew = false;
    // Values set while the save was under way stay touched; the saved ones are no longer.
    for (const [attr, value] of values) if (this.#values[attr.name] === value || attr === key) this.#touched?.delete(attr.name);
    dc.core.storage.onRollback(() => {
      this.#values = before.values;
      this.#stamp = before.stamp;
      this.#timestamp = before.timestamp;
      this.#isNew = before.isNew;
      this.#touched = new Set(before.touched);
    });
    return [...values.keys()].map((a) => a.name);
  }

  /**
   * Deletes the entity, if its stamp still matches the stored one (else 1263: someone saved it
   * since). Events (§6.5): validateDrop (attribute level, then entity level), then in one
   * transaction with the delete dropping, then afterDrop.
   */
  async drop(): Promise<void> {
    const dc = this.#dc;
    if (this.#isNew) throw new DatasetError('ENTITY_NOT_FOUND', `this ${dc.name} entity was never saved`);
    requireDrop(this.#access, dc.model, this.#values ?? {});
    const events = dc.events;
    const remove = async () => {
      await deleteEntity(dc.core, dc.model, this.#key(), this.#stamp, this.#access);
      return dc.model.storage.map((a) => a.name);
    };
    if (!events) {
      await remove();
      return;
    }
    await aroundWrite(this.#events(events), dc.core.storage, this.#access.budget, ['validateDrop', 'dropping'], () => true, remove,
      (dropped, ok) => ({ kind: 'afterDrop', dataClassName: dc.name, droppedAttributes: dropped, dropStatus: ok ? 'success' : 'failed' }));
  }

  /**
   * 4D's lock(): a pessimistic lock of the caller's session on this entity's record (locks.ts),
   * until that session unlocks it, logs out or expires; other sessions can neither save nor drop
   * it meanwhile. Resolves to 4D's status object: { success: true }, or success false with status
   * 3 (locked by another session: lockKindText, lockInfo) or 5 (the entity is gone).
   */
  lock(): Promise<LockStatus> {
    if (this.#isNew) throw new DatasetError('ENTITY_NOT_FOUND', `this ${this.#dc.name} entity was never saved: there is nothing to lock`);
    return lockEntity(this.#dc, this.#key(), this.#access, NO_CLIENT);
  }

  /** 4D's unlock(): releases the caller's session's lock on this entity; resolves to 4D's status object (as lock()'s). */
  unlock(): Promise<LockStatus> {
    if (this.#isNew) throw new DatasetError('ENTITY_NOT_FOUND', `this ${this.#dc.name} entity was never saved: there is nothing to unlock`);
    return unlockEntity(this.#dc, this.#key(), this.#access);
  }

  #assign(attr: StorageAttribute, value: unknown): void {
    this.#values[attr.name] = attr.identifying && value !== null ? givenKey(attr, value) : value;
    (this.#touched ??= new Set()).add(attr.name);
  }

  #attribute(name: string): AttributeModel {
    const attr = this.#dc.model.attributesByName.get(name);
    if (!attr) throw unknownAttribute(this.#dc.model, name, EVERY_ATTRIBUTE);
    return attr;
  }
}
