// Runs an action: one handler per kind, chosen by an exhaustive switch, each returning a
// RestResponse. Handlers get the action and the caller's scope, nothing else (an upload also gets
// the body still arriving).

import type { IncomingMessage } from 'node:http';
import type { Action, Shape } from '../plan/action.js';
import { watch } from './handlers/watch.js';
import { catalog, catalogDataClass, lastQueryPath } from './handlers/catalog.js';
import { compute, distinctValues } from './handlers/compute.js';
import { createSet, deleteSet, info, readSet, release, releaseSets } from './handlers/entity-sets.js';
import { admin } from './handlers/admin.js';
import { directory } from './handlers/directory.js';
import { readFile } from './handlers/files.js';
import { lock } from './handlers/lock.js';
import { openapi } from './handlers/openapi.js';
import { callFunction } from './handlers/functions.js';
import { exportCollection, exportSet } from './handlers/export.js';
import { readCollection, readEntity, readRelation } from './handlers/read.js';
import { storeFile, upload } from './handlers/upload.js';
import { remove, update, validate } from './handlers/write.js';
import type { RestResponse } from '../present/response.js';
import { inSnapshot, type Scope } from '../scope/scope.js';

export function run(action: Action, scope: Scope, raw: IncomingMessage): RestResponse | Promise<RestResponse> {
  switch (action.kind) {
    case 'catalog':
      return catalog(scope, action);
    case 'catalogDataClass':
      return catalogDataClass(scope, action);
    case 'info':
      return info(scope);
    case 'openapi':
      return openapi(scope, action);
    case 'queryPath':
      return lastQueryPath(scope);
    // reads of more than one statement see one state of the data (a page alone is one statement: it decides)
    case 'readCollection':
      // ($format=csv or ndjson: every entity selected, streamed a chunk at a time)
      return isExport(action.shape) ? exportCollection(scope, action) : readCollection(scope, action);
    case 'readEntity':
      return readEntity(scope, action);
    case 'readRelation':
      return inSnapshot(scope, (s) => readRelation(s, action));
    case 'readFile':
      return readFile(scope, action);
    case 'createSet':
      return inSnapshot(scope, (s) => createSet(s, action));
    // (a page of a set as it is is one statement: readSet decides)
    case 'readSet':
      return isExport(action.shape) ? exportSet(scope, action) : readSet(scope, action);
    case 'release':
      return release(scope, action);
    case 'releaseSets':
      return releaseSets(scope, action);
    case 'update':
      return update(scope, action);
    case 'validate':
      return validate(scope, action);
    case 'delete':
      return remove(scope, action);
    case 'deleteSet':
      return deleteSet(scope, action);
    // (one statement, or a snapshot: compute decides)
    case 'compute':
      return compute(scope, action);
    case 'distinct':
      return inSnapshot(scope, (s) => distinctValues(s, action));
    case 'callFunction':
      return callFunction(scope, action);
    case 'upload':
      return upload(scope, action, raw);
    case 'storeFile':
      return storeFile(scope, action, raw);
    case 'directory':
      return directory(scope, action);
    case 'admin':
      return admin(scope, action);
    case 'watch':
      return watch(scope, action);
    case 'lock':
      return lock(scope, action);
    default: {
      const never: never = action;
      return never;
    }
  }
}

function isExport(shape: Shape): boolean {
  return shape.format === 'csv' || shape.format === 'ndjson';
}
