// Wire names, spelled once: the reserved properties of REST answers (`__KEY`, `__ERROR` …). A
// leaf module: the REST layer writes them, and so does the function watchdog's last-resort answer.

export const WIRE = {
  KEY: '__KEY',
  STAMP: '__STAMP',
  TIMESTAMP: '__TIMESTAMP',
  ENTITY_MODEL: '__entityModel',
  DATACLASS: '__DATACLASS',
  /** marks an entity given as a function parameter */
  ENTITY: '__ENTITY',
  /** the entity set a selection parameter names */
  DATASET: '__DATASET',
  GLOBAL_STAMP: '__GlobalStamp',
  COUNT: '__COUNT',
  SENT: '__SENT',
  FIRST: '__FIRST',
  ENTITIES: '__ENTITIES',
  ENTITY_SET: '__ENTITYSET',
  DEFERRED: '__deferred',
  ERROR: '__ERROR',
  STATUS: '__STATUS',
  QUERY_PLAN: '__queryPlan',
  QUERY_PATH: '__queryPath',
} as const;
