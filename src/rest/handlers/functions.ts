// Calls of exposed functions over REST: the parameters (a JSON array body, or $params for GET),
// and the answer: an entity as the entity object itself, a selection as a collection (paged by
// $top/$skip, projected by $attributes, stored by $method=entityset), anything else as {result}.

import { Datastore } from '../../datastore/datastore.js';
import { Entity } from '../../datastore/entity.js';
import { EntitySelection } from '../../datastore/selection.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { callExposed } from '../../functions/call.js';
import type { RestOptions } from '../options.js';
import { readCollection, readEntity } from './read.js';

/** POST or GET /rest/$catalog/{function}: a function of the DataStore class. */
export async function callDatastoreFunction(ds: Datastore, name: string, method: string, body: unknown, opts: RestOptions, caller: string): Promise<unknown> {
  const viaGet = method !== 'POST';
  const result = await callExposed([{ self: ds, stop: Datastore.prototype, label: 'the DataStore class' }], name, functionArgs(viaGet, body, opts), viaGet);
  return functionAnswer(ds, result, opts, caller);
}

/** The parameters of a call: the JSON array body of a POST (none when empty), $params for a GET. */
function functionArgs(viaGet: boolean, body: unknown, opts: RestOptions): readonly unknown[] {
  if (viaGet) return opts.params;
  if (body === undefined || body === null) return [];
  if (!Array.isArray(body)) throw new DatasetError('INVALID_BODY', `the body of a function call is a JSON array of its parameters, like ["Paris", 5]; got ${JSON.stringify(body).slice(0, 60)}`);
  return body;
}

/** The answer of a call, by the kind of value the function returned. */
async function functionAnswer(ds: Datastore, result: unknown, opts: RestOptions, caller: string): Promise<unknown> {
  // $filter and $params belong to the call here, not to the answer
  const answerOpts: RestOptions = { ...opts, filter: undefined, params: [] };
  if (result instanceof Entity) return readEntity(ds, result, undefined, answerOpts);
  if (result instanceof EntitySelection) return readCollection(ds, result, undefined, answerOpts, caller);
  return { result: result === undefined ? null : result };
}
