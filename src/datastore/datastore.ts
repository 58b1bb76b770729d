// Datastore: the ORDA-like core over one storage adapter. It owns the dataclasses, the schema
// sync at open, the global stamp, and the few statements that change data (insert, update,
// delete), so every save and drop, from REST or from user code, goes through the same checks.

import { DatasetError } from '../errors/dataset-error.js';
import type { DataClassModel, Model, StorageAttribute } from '../model/types.js';
import { and, directPath, type Condition } from '../query/plan.js';
import { compileCount, compileDelete, compileInsert, compileUpdate } from '../sql/compiler.js';
import { ConstraintError, type Storage } from '../storage/adapter.js';
import { STAMP_COLUMN, syncSchema } from '../storage/schema.js';
import { bumpGlobalStamp, lastQueryPath, readGlobalStamp, recordQueryPath } from '../storage/system-tables.js';
import type { TransactionManager } from '../storage/transactions.js';
import { DataClass } from './dataclass.js';
import { withDeadlines } from './deadline-storage.js';
import { FileStore, type StoredFile } from './files.js';
import { MemoryEntitySetStore, type EntitySetStore } from './entity-sets.js';
import { logEventError, type EventErrorReporter } from './events.js';
import type { CalculatedLookup } from './order-by.js';

/** The error for a key no entity has: 4D's 1542, in 4D's words. */
export function entityNotFound(dc: DataClassModel, key: unknown): DatasetError {
  return new DatasetError('ENTITY_NOT_FOUND', `Cannot find entity with "${String(key)}" key in the "${dc.name}" dataclass`);
}

/** The hidden stamp column, as a storage attribute the compiler can compare. */
function stampAttribute(dc: DataClassModel): StorageAttribute {
  return { ...dc.key, name: STAMP_COLUMN, column: STAMP_COLUMN, type: 'long64', identifying: false, autoincrement: false, autogenerate: false };
}

export interface SavedState {
  key: unknown;
  stamp: number;
  timestamp: number;
}

/** A datastore whose dataclasses are also reachable as properties: ds.Employee. */
export type DatastoreWithClasses = Datastore & { readonly [dataClass: string]: DataClass };

/** The image and blob attributes of a dataclass. */
function fileAttributes(dc: DataClassModel): StorageAttribute[] {
  return dc.storage.filter((a) => a.type === 'image' || a.type === 'blob');
}

/** How long a file stored by code waits for an entity to hold it before it is removed. */
const UNCLAIMED_FILE_MS = 24 * 3600 * 1000;

/** The default time limit of a function called over REST (--function-timeout). */
export const DEFAULT_FUNCTION_TIMEOUT_MS = 30_000;

export class Datastore {
  readonly #classes = new Map<string, DataClass>();
  readonly #byModel = new Map<DataClassModel, DataClass>();

  /**
   * Reports the errors of entity events that cannot stop anything (touched, afterSave, afterDrop)
   * and the exceptions of those that can: a pino warning on stderr unless replaced.
   */
  onEventError: EventErrorReporter = logEventError;

  /** the engine's storage, checking the time limit of function calls before each statement */
  readonly storage: Storage;
  /** picture and blob contents, and uploads waiting for an entity */
  readonly files: FileStore;

  /** Protected so that a user DataStore class can extend Datastore; datastores come from Datastore.open(). */
  protected constructor(readonly model: Model, storage: TransactionManager) {
    this.storage = withDeadlines(storage);
    this.files = new FileStore(this.storage);
    for (const m of model.dataClasses) {
      const dc = new DataClass(this, m);
      this.#classes.set(m.name, dc);
      this.#byModel.set(m, dc);
      if (!(m.name in this)) Object.defineProperty(this, m.name, { value: dc, enumerable: true });
    }
  }

  /** Brings the database schema in line with the model, then returns the datastore. */
  static async open(model: Model, storage: TransactionManager): Promise<DatastoreWithClasses> {
    await syncSchema(storage, model);
    return new Datastore(model, storage) as DatastoreWithClasses;
  }

  get name(): string {
    return this.model.name;
  }

  dataClass(name: string): DataClass | undefined {
    return this.#classes.get(name);
  }

  dataClasses(): DataClass[] {
    return [...this.#classes.values()];
  }

  /** Where entity sets are kept: in this process by default; a shared store can replace it. */
  entitySets: EntitySetStore = new MemoryEntitySetStore();

  /** How long a function called over REST may take before its caller gets FUNCTION_TIMEOUT (ms). */
  functionTimeoutMs = DEFAULT_FUNCTION_TIMEOUT_MS;

  /** @internal Finds the code of a calculated attribute, for the query resolver and the sorts. */
  readonly calculatedLookup: CalculatedLookup = (attr) => this.dataClassOf(attr.dataClass).calculated(attr.name);

  /** @internal */
  dataClassOf(model: DataClassModel): DataClass {
    return this.#byModel.get(model) as DataClass;
  }

  /** Runs fn in one transaction; saves and drops inside it (however deep) join it. */
  transaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.storage.transaction(fn);
  }

  /** The datastore's modification counter: increased by every save and drop. */
  globalStamp(): Promise<number> {
    return readGlobalStamp(this.storage);
  }

  async close(): Promise<void> {
    await this.storage.close();
  }

  /**
   * Stores file contents with the data; assign the result to an image or blob attribute (a file
   * no entity holds is removed after a day). The type is read from the content unless given.
   */
  storeFile(bytes: Uint8Array | AsyncIterable<Uint8Array>, mime?: string): Promise<StoredFile> {
    return this.files.store(bytes, { mime, expiresIn: UNCLAIMED_FILE_MS });
  }

  /** Keeps the last query path of a caller (a session, or a client address until sessions exist). */
  recordQueryPath(caller: string, path: unknown): Promise<void> {
    return recordQueryPath(this.storage, caller, path, Date.now());
  }

  /** The last query path recorded for a caller, if any. */
  lastQueryPath(caller: string): Promise<unknown> {
    return lastQueryPath(this.storage, caller);
  }

  /** @internal */
  async countWhere(dc: DataClassModel, where: Condition | null): Promise<number> {
    const { sql, params } = compileCount(this.storage.dialect, dc, where);
    const row = await this.storage.get(sql, params);
    return Number(row?.n ?? 0);
  }

  /** @internal Inserts a new entity; resolves to its key, stamp and time. */
  async storeNew(dc: DataClassModel, values: ReadonlyMap<StorageAttribute, unknown>): Promise<SavedState> {
    return this.transaction(async () => {
      // the time is taken once the writer is ours, so that saves are stamped in the order they commit
      const timestamp = Date.now();
      const { sql, params } = compileInsert(this.storage.dialect, dc, values, 1, timestamp);
      const row = await this.#write(dc, () => this.storage.get(sql, params));
      await this.#moveFiles(dc, row?.[dc.key.name], new Map(), values);
      await bumpGlobalStamp(this.storage);
      return { key: row?.[dc.key.name], stamp: 1, timestamp };
    });
  }

  /** @internal Updates an entity if its stamp still matches; resolves to its new stamp and time. */
  async storeUpdate(dc: DataClassModel, key: unknown, stamp: number, values: ReadonlyMap<StorageAttribute, unknown>): Promise<SavedState> {
    return this.transaction(async () => {
      const timestamp = Date.now();
      const files = fileAttributes(dc).filter((a) => values.has(a));
      const before = await this.#storedFiles(dc, key, files);
      const { sql, params } = compileUpdate(this.storage.dialect, dc, key, stamp, values, timestamp);
      const changed = await this.#write(dc, () => this.storage.run(sql, params));
      if (changed === 0) await this.#whyUnchanged(dc, key, 'saved');
      await this.#moveFiles(dc, key, before, values);
      await bumpGlobalStamp(this.storage);
      return { key, stamp: stamp + 1, timestamp };
    });
  }

  /** @internal Deletes one entity by key, if its stamp still matches. */
  async storeDrop(dc: DataClassModel, key: unknown, stamp: number): Promise<void> {
    const where = and(
      { kind: 'compare', path: directPath(dc.key), op: '=', value: key },
      { kind: 'compare', path: directPath(stampAttribute(dc)), op: '=', value: stamp },
    ) as Condition;
    const { sql, params } = compileDelete(this.storage.dialect, dc, where);
    await this.transaction(async () => {
      const before = await this.#storedFiles(dc, key, fileAttributes(dc));
      if ((await this.storage.run(sql, params)) === 0) await this.#whyUnchanged(dc, key, 'dropped');
      for (const id of before.values()) if (id !== null) await this.files.remove(id);
      await bumpGlobalStamp(this.storage);
    });
  }

  /** The files an entity's image and blob attributes hold now (read in the write's transaction). */
  async #storedFiles(dc: DataClassModel, key: unknown, attrs: readonly StorageAttribute[]): Promise<Map<StorageAttribute, number | null>> {
    const out = new Map<StorageAttribute, number | null>();
    if (attrs.length === 0) return out;
    const d = this.storage.dialect;
    const q = d.quote;
    const row = await this.storage.get(`SELECT ${attrs.map((a) => q(a.column)).join(', ')} FROM ${q(dc.table)} WHERE ${q(dc.key.column)} = ${d.placeholder(1)}`, [key]);
    for (const a of attrs) out.set(a, row?.[a.column] === null || row?.[a.column] === undefined ? null : Number(row[a.column]));
    return out;
  }

  /** After a write: the new files of image and blob attributes are claimed, the ones they replaced removed. */
  async #moveFiles(dc: DataClassModel, key: unknown, before: ReadonlyMap<StorageAttribute, number | null>, values: ReadonlyMap<StorageAttribute, unknown>): Promise<void> {
    for (const attr of fileAttributes(dc)) {
      if (!values.has(attr)) continue;
      const now = values.get(attr) === null || values.get(attr) === undefined ? null : Number(values.get(attr));
      const old = before.get(attr) ?? null;
      if (now === old) continue;
      if (now !== null) await this.files.claim(now, `${dc.name}(${String(key)}).${attr.name}`);
      if (old !== null) await this.files.remove(old);
    }
  }

  /** After an UPDATE or DELETE … AND stamp = ? changed nothing: the entity is gone, or its stamp moved. */
  async #whyUnchanged(dc: DataClassModel, key: unknown, what: 'saved' | 'dropped'): Promise<never> {
    const q = this.storage.dialect.quote;
    const row = await this.storage.get(`SELECT ${q(STAMP_COLUMN)} AS s FROM ${q(dc.table)} WHERE ${q(dc.key.column)} = ${this.storage.dialect.placeholder(1)}`, [key]);
    if (!row) throw entityNotFound(dc, key);
    throw new DatasetError('STAMP_CHANGED', `Given stamp does not match current one for record# ${String(key)} of table ${dc.name}`, [
      { name: 'RECORD_NOT_SAVED', message: `Cannot ${what === 'saved' ? 'save' : 'delete'} record ${String(key)} in table ${dc.name} of database ${this.name}` },
      { name: 'ENTITY_NOT_SAVED', message: `The entity# ${String(key)} in the "${dc.name}" dataclass cannot be ${what}` },
    ]);
  }

  /** Runs a write, turning an engine's constraint failure into a DatasetError naming the attribute. */
  async #write<T>(dc: DataClassModel, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof ConstraintError && e.constraint === 'unique') {
        const attr = dc.storage.find((a) => a.column === e.column);
        throw new DatasetError('VALUE_NOT_UNIQUE', `another ${dc.name} entity already has this value for '${attr?.name ?? e.column}'`);
      }
      throw e;
    }
  }
}
