// The public API of dataset-rest, for embedding and for user code (classes, seeds, tests).

export { Datastore, type DatastoreWithClasses } from './datastore/datastore.js';
export type { CalculatedDefinition, CalculatedOrderByEvent, CalculatedQueryEvent } from './datastore/calculated.js';
export { DataClass } from './datastore/dataclass.js';
export { Entity } from './datastore/entity.js';
export { EntitySelection } from './datastore/selection.js';
export { DatasetError } from './errors/dataset-error.js';
export { buildModel, loadModelFile, ModelError } from './model/load-model.js';
export { openProject, type SeedFunction } from './project.js';
export { buildServer } from './server.js';
export { SqliteAdapter } from './storage/sqlite.js';
