// The core and a dataclass core as the core's helpers see them (writes, rules, locks, big drops,
// alias reads, row filters): interfaces, so that those files depend on what they use of the
// datastore and its dataclasses rather than on their classes — which import the helpers in turn
// (datastore.ts builds everything; entities save through writes/ and lock through sessions/).
// Nothing here imports a file that imports back: only leaf modules of datastore/ and the layers
// below. Core (datastore.ts) and DataClassCore (dataclass-core.ts) extend and implement these.

import type { DataClassModel, Model } from '../model/types.js';
import type { ColumnSpec, Condition, SelectSpec } from '../query/plan.js';
import type { Storage } from '../storage/adapter.js';
import type { Access } from './access/access.js';
import type { FileStore } from './files/files.js';
import type { SessionStore } from './sessions/store.js';

/** An entity as the helpers read it: its values by attribute name and its key (Entity is one). */
export interface EntityValues {
  get(name: string): unknown;
  getKey(): unknown;
}

/** The core as its helpers see it (the whole of it: Core, datastore.ts). */
export interface CoreView {
  /** the datastore's name (its model's), as 4D's messages name the database */
  readonly name: string;
  readonly model: Model;
  readonly storage: Storage;
  readonly files: FileStore;
  /** web sessions, in the database */
  readonly sessions: SessionStore;
  /** the changes of the dataclasses that track them (live/change-feed.ts): a tracked write wakes it once committed */
  readonly changes: { committed(touched: ReadonlySet<string>): void };
  /** the core side of a dataclass of the model */
  classOf(model: DataClassModel): ClassCoreView;
  /**
   * When `value` is an entity selection: its dataclass and the condition selecting its members
   * (null: all of them); else undefined. (What a restrict() returned, for access/row-filters.ts.)
   */
  selectionCondition(value: unknown): { readonly dataClass: DataClassModel; readonly condition: Condition | null } | undefined;
}

/** A dataclass core as the helpers see it (the whole of it: DataClassCore, dataclass-core.ts). */
export interface ClassCoreView {
  readonly name: string;
  readonly model: DataClassModel;
  readonly core: CoreView;
  /** the public face (a DataClass), the `this` of its user class's functions */
  readonly dataClass: object;
  /** the columns that make a complete entity */
  readonly columns: readonly ColumnSpec[];
  /** a drop of its entities runs user code: a drop event, or an entity class's own drop() */
  readonly dropsRunUserCode: boolean;
  /** runs a SELECT of entity columns and turns the rows into entities */
  readEntities(spec: SelectSpec, access: Access): Promise<EntityValues[]>;
  /** drops the entities of `keys` through the core (their events run), in the caller's transaction */
  dropEach(keys: ArrayLike<unknown>, access: Access): Promise<void>;
  /** drops the entities that meet `where` and the caller's row filter as a selection's drop() does, in the caller's transaction (a cascade: writes/delete-rules.ts) */
  dropMatching(where: Condition | null, access: Access): Promise<void>;
}
