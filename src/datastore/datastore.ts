// Datastore: the ORDA-like core over one storage. It owns the dataclasses, the schema sync at
// open, the global stamp and the stores of state requests leave behind (entity sets, query paths,
// files). What user code may use is its public API; the storage and the stores stay private to
// the core (reached through coreOf), so user classes extending it never hold a raw connection.

import { DatasetError } from '../errors/dataset-error.js';
import { CountCache } from './selections/count-cache.js';
import { DEFAULT_MAX_TEXT_LENGTH, DEFAULT_SESSION_IDLE_MINUTES, UNCLAIMED_FILE_MS } from '../config/limits.js';
import type { CalculatedAttribute, DataClassModel, Model } from '../model/types.js';
import type { Snapshot, StatementBudget, Storage, TransactionOptions } from '../storage/adapter.js';
import { syncSchema } from '../storage/schema.js';
import { readGlobalStamp as readStamp, readSettledGlobalStamp, setGlobalStamp } from '../storage/system-tables/global-stamp.js';
import { Policy } from '../permissions/policy.js';
import type { Access } from './access/access.js';
import { currentAccess } from './access/caller.js';
import { accessFor } from './access/row-filters.js';
import { SessionStore, type SessionStoreOptions } from './sessions/store.js';
import type { Session } from './sessions/session.js';
import type { CalculatedDefinition } from './entities/calculated.js';
import { DataClass } from './dataclass.js';
import { DataClassCore } from './dataclass-core.js';
import { ChangeFeed } from './live/change-feed.js';
import { WebhookCursors } from './live/webhook-cursors.js';
import type { CoreView } from './core-types.js';
import { DatabaseEntitySetStore } from './sets/database-set-store.js';
import type { EntitySetStore } from './sets/entity-set-store.js';
import { EntitySets } from './sets/entity-sets.js';
import { classOf, EntitySelection, membersCondition } from './selections/selection.js';
import { logEventError, type EventErrorReporter } from './entities/events.js';
import { FileStore, type StoredFile } from './files/files.js';
import { NO_AUTH, type AuthConfig } from '../config/auth.js';
import { ApiTokens } from './users/api-tokens.js';
import { BuiltInUsers } from './users/built-in-users.js';
import { QueryPathStore } from './sessions/query-paths.js';

/** A datastore whose dataclasses are also reachable as properties: ds.Employee. */
export type DatastoreWithClasses = Datastore & { readonly [dataClass: string]: DataClass };

/** What a datastore is built with, besides its model and storage. */
export interface DatastoreOptions {
  /** where entity sets are kept; default: in the database, shared by every server instance (DatabaseEntitySetStore) */
  readonly entitySets?: EntitySetStore;
  /** the default store's bound: members of all sets together, past which the least recently used sets go */
  readonly maxSetMembers?: number;
  /** bytes the default store keeps at hand in this process, members read from the database (--max-set-memory; default DEFAULT_MAX_SET_MEMORY) */
  readonly maxSetMemory?: number;
  /** reports the failures of entity events that cannot stop anything; default: a pino warning on stderr */
  readonly onEventError?: EventErrorReporter;
  /** web sessions: idle timeout (default 60 minutes), caps, the clock */
  readonly sessions?: Partial<SessionStoreOptions>;
  /** the longest text a string attribute takes, in characters (default DEFAULT_MAX_TEXT_LENGTH; --max-text-length) */
  readonly maxTextLength?: number;
  /** how people log in besides the project's own authentify (auth.json): built-in users, API tokens, single sign-on */
  readonly auth?: AuthConfig;
}

/**
 * The core's own view of a datastore: what the rest of the core reaches through coreOf(). What
 * its helpers use of it is CoreView (core-types.ts): they depend on that, not on this file.
 */
export interface Core extends CoreView {
  /** auth.json's settings (none: no built-in users, no single sign-on) */
  readonly auth: AuthConfig;
  /** the built-in users, when auth.json turns them on */
  readonly users: BuiltInUsers | undefined;
  /** their API tokens (with the built-in users) */
  readonly tokens: ApiTokens | undefined;
  /** reads with every row visible, straight from the storage */
  readonly root: Access;
  readonly entitySets: EntitySetStore;
  /** what is done with entity sets (kept by entitySets) */
  readonly sets: EntitySets;
  readonly queryPaths: QueryPathStore;
  /** the counts of selections read lately, with the data version they were read at (page-read.ts) */
  readonly counts: CountCache;
  readonly report: EventErrorReporter;
  /** the longest text a write gives a string attribute (--max-text-length) */
  readonly maxTextLength: number;
  /** who may do what (roles.json; open until a project installs one) */
  readonly policy: Policy;
  /** the changes of the dataclasses that track them, for the live streams */
  readonly changes: ChangeFeed;
  /** where each webhook's receiver is, and which instance delivers it */
  readonly webhooks: WebhookCursors;
  /**
   * The settled global stamp (readSettledGlobalStamp), where an answer's stamp must be read so to
   * be one a sync may resume from: a datastore that tracks changes, on an engine whose plain
   * stamp may run ahead of the commits (PostgreSQL); undefined where the plain one is that already.
   */
  settledStamp(): Promise<number> | undefined;
  /** the access of a request's session: its grants, the row filters of the dataclasses' restrict() */
  accessFor(session: Session): Access;
  /** runs fn in one transaction (the storage's) */
  transaction<T>(fn: () => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** reads that all see one state of the data, until released */
  snapshot(): Promise<Snapshot>;
  /** a new budget for the statements of one request (storage/budget.ts): none without a query time limit */
  requestBudget(): StatementBudget | undefined;
  /** the code of a calculated attribute, for the query resolver and the sorts */
  readonly calculated: (attr: CalculatedAttribute) => CalculatedDefinition | undefined;
  /** the core side of a dataclass of the model (CoreView's, as the class it is) */
  classOf(model: DataClassModel): DataClassCore;
}

/** The core of a datastore (for modules of the core and the layers above it; never for user code). */
export let coreOf: (ds: Datastore) => Core;

/** Gives a datastore its roles.json policy, once, when its project opens (after its classes: the policy names their functions). */
export let installPolicy: (ds: Datastore, policy: Policy) => void;

export class Datastore {
  readonly #classes = new Map<string, DataClass>();
  readonly #core: Core;
  #policy: Policy = Policy.open();
  #policyInstalled = false;

  static {
    coreOf = (ds) => ds.#core;
    installPolicy = (ds, policy) => {
      if (ds.#policyInstalled) throw new Error('the datastore has its policy already');
      ds.#policy = policy;
      ds.#policyInstalled = true;
    };
  }

  /** Protected so that a user DataStore class can extend Datastore; datastores come from Datastore.open(). */
  protected constructor(readonly model: Model, storage: Storage, options: DatastoreOptions = {}) {
    const byModel = new Map<DataClassModel, DataClassCore>();
    const entitySets = options.entitySets ?? new DatabaseEntitySetStore(storage, { maxMembers: options.maxSetMembers, maxBytes: options.maxSetMemory });
    const policyOf = () => this.#policy;
    // (an evicted guest's sets go with it)
    const sessions = new SessionStore(storage, policyOf, { idleMinutes: DEFAULT_SESSION_IDLE_MINUTES, ...options.sessions }, entitySets);
    let changes: ChangeFeed | undefined;
    const auth = options.auth ?? NO_AUTH;
    const users = auth.users && new BuiltInUsers(storage, auth.users, policyOf, sessions.now, (name) => sessions.forgetUser(name));
    const settles = model.deletedRecords !== undefined && storage.dialect.schema.globalStamp('').settled.length > 0;
    const core: Core = {
      name: model.name,
      model,
      storage,
      sessions,
      auth,
      users,
      tokens: users && new ApiTokens(storage, auth.tokens, policyOf, sessions.now),
      maxTextLength: options.maxTextLength ?? DEFAULT_MAX_TEXT_LENGTH,
      get policy() { return policyOf(); },
      // (made at the first use: most datastores track nothing, or have no one watching)
      get changes() { return (changes ??= new ChangeFeed(core)); },
      webhooks: new WebhookCursors(storage),
      settledStamp: () => (settles ? readSettledGlobalStamp(storage) : undefined),
      accessFor: (session) => accessFor(core, session),
      root: { reader: storage, restrict: null, grants: Policy.ALL },
      files: new FileStore(storage),
      entitySets,
      queryPaths: new QueryPathStore(storage, sessions.now),
      counts: new CountCache(),
      report: options.onEventError ?? logEventError,
      calculated: (attr) => byModel.get(attr.dataClass)?.calculated(attr.name),
      classOf: (m) => byModel.get(m) as DataClassCore,
      selectionCondition: (value) => (value instanceof EntitySelection ? { dataClass: classOf(value).model, condition: membersCondition(value) } : undefined),
      sets: new EntitySets(entitySets, storage),
      transaction: (fn, options) => storage.transaction(fn, options),
      snapshot: () => storage.snapshot(),
      requestBudget: () => storage.requestBudget(),
    };
    this.#core = core;
    for (const m of model.dataClasses) {
      const classCore = new DataClassCore(core, m);
      const dc = new DataClass(this, m, classCore);
      classCore.dataClass = dc;
      this.#classes.set(m.name, dc);
      byModel.set(m, classCore);
      if (!(m.name in this)) Object.defineProperty(this, m.name, { value: dc, enumerable: true });
    }
  }

  /** Brings the database schema in line with the model, then returns the datastore. */
  static async open(model: Model, storage: Storage, options: DatastoreOptions = {}): Promise<DatastoreWithClasses> {
    await syncSchema(storage, model);
    return new Datastore(model, storage, options) as DatastoreWithClasses;
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

  /** Runs fn in one transaction; saves and drops inside it (however deep) join it. */
  transaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.#core.storage.transaction(fn);
  }

  /** The datastore's modification counter: increased by every save and drop. */
  async globalStamp(): Promise<number> {
    return readGlobalStamp(currentAccess(this.#core.root));
  }

  /**
   * 4D's ds.getGlobalStamp(): the global stamp as committed changes leave it — every change of a
   * dataclass that tracks its changes with a stamp up to it is readable, none to come will have
   * one as small — what a sync keeps and asks `__GlobalStamp > :1` with next time.
   */
  getGlobalStamp(): Promise<number> {
    return readSettledGlobalStamp(this.#core.storage);
  }

  /** 4D's ds.setGlobalStamp(): sets the global stamp (a whole number, 0 or more); the next change takes the number after it. */
  async setGlobalStamp(stamp: number): Promise<void> {
    if (!Number.isSafeInteger(stamp) || stamp < 0) throw new DatasetError('INVALID_PARAMETER', `setGlobalStamp takes a whole number, 0 or more, not ${JSON.stringify(stamp)}`);
    await setGlobalStamp(this.#core.storage, stamp);
  }

  /**
   * Stores file contents with the data; assign the result to an image or blob attribute (a file
   * no entity holds is removed after a day). The type is read from the content unless given.
   */
  storeFile(bytes: Uint8Array | AsyncIterable<Uint8Array>, mime?: string): Promise<StoredFile> {
    return this.#core.files.store(bytes, { mime, expiresIn: UNCLAIMED_FILE_MS });
  }

  async close(): Promise<void> {
    this.#core.changes.close();
    this.#core.entitySets.close?.();
    await this.#core.storage.close();
  }
}

/** The global stamp, read through an access (a request's snapshot, say). */
export function readGlobalStamp(access: Access): Promise<number> {
  return readStamp(access.reader);
}
