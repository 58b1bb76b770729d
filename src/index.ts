// The public API of dataset-rest, for embedding and for user code (classes, seeds, tests).
// The classes user classes extend are taken from a process-wide registry (see
// classes/canonical.ts), so a project module importing 'dataset-rest' extends the core's own
// classes even when tsx gave it a copy of this module.

import { canonical } from './util/canonical.js';
import { DataClass as CoreDataClass } from './datastore/dataclass.js';
import { Datastore as CoreDatastore } from './datastore/datastore.js';
import { Entity as CoreEntity } from './datastore/entities/entity.js';
import { EntitySelection as CoreEntitySelection } from './datastore/selections/selection.js';
import { DatasetError as CoreDatasetError } from './errors/dataset-error.js';
import { Singleton as CoreSingleton } from './functions/singletons.js';

/** Base class of classes/DataStore.ts (methods on `ds`). */
export const Datastore: typeof CoreDatastore = canonical('Datastore', CoreDatastore);
export type Datastore = CoreDatastore;
/** Base class of classes/<DataClass>.ts (methods on `ds.<DataClass>`). */
export const DataClass: typeof CoreDataClass = canonical('DataClass', CoreDataClass);
export type DataClass = CoreDataClass;
/** Base class of classes/<DataClass>Entity.ts (methods, calculated attributes and events of entities). */
export const Entity: typeof CoreEntity = canonical('Entity', CoreEntity);
export type Entity = CoreEntity;
/** Base class of classes/<DataClass>Selection.ts (methods on entity selections). */
export const EntitySelection: typeof CoreEntitySelection = canonical('EntitySelection', CoreEntitySelection);
export type EntitySelection = CoreEntitySelection;
export const DatasetError: typeof CoreDatasetError = canonical('DatasetError', CoreDatasetError);
export type DatasetError = CoreDatasetError;
/** Base class of a shared singleton, classes/<Name>.ts (one instance, its @exposed functions at /rest/$singleton/<Name>/{function}). */
export const Singleton: typeof CoreSingleton = canonical('Singleton', CoreSingleton);
export type Singleton = CoreSingleton;

export { exposed, onHttpGet, params } from './functions/exposure.js';
export { callContext, type CallContext, type CallRequest } from './functions/context.js';
// the web session of the REST request the code runs for (a function, an event, a restrict())
export { session } from './datastore/access/caller.js';
export type { PrivilegeSettings } from './datastore/sessions/privileges.js';
export type { Session } from './datastore/sessions/session.js';
// the hooks of 4D's legacy login (/rest/$directory) a DataStore class may define
export type { DirectoryHooks, DirectoryUser } from './datastore/directory.js';
// the storage a server with functions runs on: their time limit checked before each statement
export { withDeadlines } from './functions/deadlines.js';
export { projectMethod, type MethodScope, type MethodTarget, type ProjectMethodDefinition } from './functions/project-methods.js';
export type { ParamKind, ParamType } from './functions/params.js';
export type { DatastoreOptions, DatastoreWithClasses } from './datastore/datastore.js';
export type { CalculatedDefinition, CalculatedOrderByEvent, CalculatedQueryEvent } from './datastore/entities/calculated.js';
export type { EntityEvent, EventErrorObject, EventKind } from './datastore/entities/events.js';
export type { EntityEventHandler } from './datastore/entities/entity.js';
export type { ValidationFailure } from './errors/dataset-error.js';
export { buildModel, loadModelFile, ModelError } from './model/load-model.js';
export { openProject, ProjectError, type ProjectOptions, type SeedFunction } from './project/open.js';
export { projectModuleLoader, type ProjectModuleImport } from './classes/loader.js';
export { buildServer } from './http/server.js';
// sqliteStorage(file) builds the storage Datastore.open() takes; SqliteAdapter is its former name, kept
export { sqliteStorage } from './storage/open.js';
export type { Reader, Snapshot, Storage, TransactionOptions } from './storage/adapter.js';
