// The REST pipeline in one place: URL → route, query string → options, route → handler.

import { MAX_URL_LENGTH } from '../config/limits.js';
import type { Datastore } from '../datastore/datastore.js';
import { DatasetError } from '../errors/dataset-error.js';
import { WIRE } from '../config/wire.js';
import { REST_PREFIX } from './constants.js';
import { catalogAll, catalogDataClass, catalogList, exposedDataClass } from './handlers/catalog.js';
import { info, releaseSets } from './handlers/entity-sets.js';
import { callDataClassFunction, callDatastoreFunction, functionOf } from './handlers/functions.js';
import { readDataClass } from './handlers/read.js';
import { fileAttributeOf, readFile } from './handlers/files.js';
import { writeDataClass } from './handlers/write.js';
import { parseOptions } from './options.js';
import { parseRestPath } from './url.js';
import { datastoreMethods } from '../functions/catalog.js';

export interface RestRequest {
  readonly method: string;
  /** the request target as received: /rest/…?… */
  readonly url: string;
  /** who asks: the session when sessions exist; until then the client address */
  readonly caller: string;
  /** the parsed JSON body of a POST, if any */
  readonly body?: unknown;
  /** the request headers (names in lower case), for the context of function calls */
  readonly headers?: Readonly<Record<string, string | string[] | undefined>>;
  /** the file descriptor of the client's socket, if it has one (not under inject): the function watchdog answers through it */
  readonly socketFd?: number;
  /** scheme and host the client used (http://127.0.0.1:8080), for the absolute uri of saved entities */
  readonly origin?: string;
}

/** Runs one REST request; resolves to the JSON body of a 200 answer, throws DatasetError otherwise. */
export async function handleRest(ds: Datastore, req: RestRequest): Promise<unknown> {
  if (req.url.length > MAX_URL_LENGTH) throw new DatasetError('LIMIT_EXCEEDED', `the URL is ${req.url.length} characters long; at most ${MAX_URL_LENGTH} are read`);
  const q = req.url.indexOf('?');
  const path = req.url.slice(REST_PREFIX.length, q < 0 ? undefined : q);
  const route = parseRestPath(path);
  const options = parseOptions(q < 0 ? '' : req.url.slice(q + 1));
  const isRead = req.method === 'GET' || req.method === 'HEAD';
  switch (route.kind) {
    case 'catalogItem':
      // /rest/$catalog/{name}: a dataclass's description, or a call of a DataStore class function
      if (isFunctionCall(ds, route.name, isRead)) return callDatastoreFunction(ds, route.name, req, options);
      if (!isRead) throw new DatasetError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on the catalog: use GET`);
      return catalogDataClass(ds, route.name);
    case 'catalog':
    case 'catalogAll':
      if (!isRead) throw new DatasetError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on the catalog: use GET`);
      return route.kind === 'catalog' ? catalogList(ds) : catalogAll(ds);
    case 'queryPath':
      if (!isRead) throw new DatasetError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on $querypath: use GET`);
      return { [WIRE.QUERY_PATH]: (await ds.lastQueryPath(req.caller)) ?? { steps: [] } };
    case 'info':
      if (!isRead) throw new DatasetError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on $info: use GET`);
      return info(ds);
    case 'upload':
      throw new DatasetError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on $upload: POST the file's bytes, with $rawPict=true (an image) or $binary=true`);
    case 'releaseSets':
      if (req.method !== 'POST') throw new DatasetError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on $entityset/$release: POST the ids`);
      return releaseSets(ds, req.body);
    case 'dataClass': {
      exposedDataClass(ds, route.dataClass); // 7002 for a dataclass REST does not have, whatever the request
      const file = isRead ? fileAttributeOf(ds, route) : undefined;
      if (file) return readFile(ds, route, file, options, req.headers ?? {});
      const fn = functionOf(ds, route, req.method, options);
      if (fn !== undefined) return callDataClassFunction(ds, route, fn, req, options);
      if (isRead) return readDataClass(ds, route, options, req.caller);
      if (req.method === 'POST' && options.method !== undefined) return writeDataClass(ds, route, options, req.body, req.origin ?? '');
      throw new DatasetError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here: read with GET; change data with POST and $method=update or $method=delete`);
    }
    default: {
      const never: never = route;
      return never;
    }
  }
}

/** A POST to /rest/$catalog/{name} that names no dataclass calls a function; a GET does when the name is a datastore function. */
function isFunctionCall(ds: Datastore, name: string, isRead: boolean): boolean {
  if (ds.model.dataClassesByName.get(name)?.exposed) return false;
  return !isRead || datastoreMethods(ds).some((m) => m.name === name);
}
