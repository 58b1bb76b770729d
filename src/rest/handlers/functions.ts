// Calls of exposed functions over REST: the parameters (a JSON array body, or $params for GET),
// and the answer: an entity as the entity object itself, a selection as a collection (paged by
// $top/$skip, projected by $attributes, stored by $method=entityset), anything else as {result}.

import { DataClass } from '../../datastore/dataclass.js';
import { Datastore } from '../../datastore/datastore.js';
import { Entity } from '../../datastore/entity.js';
import { parseOrderBy } from '../../datastore/order-by.js';
import { EntitySelection } from '../../datastore/selection.js';
import { entityNotFound } from '../../datastore/datastore.js';
import { requireKey } from '../../datastore/values.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { callExposed, type CallTarget } from '../../functions/call.js';
import { exposedFunctions } from '../../functions/exposure.js';
import { isExposed } from '../../model/types.js';
import type { Route } from '../url.js';
import { exposedDataClass } from './catalog.js';
import { setSelection } from './entity-sets.js';
import { applyValues, checkRelated } from './write.js';
import type { RestOptions } from '../options.js';
import { findEntity, readCollection, readEntity } from './read.js';

type DataClassRoute = Extract<Route, { kind: 'dataClass' }>;

/** POST or GET /rest/$catalog/{function}: a function of the DataStore class. */
export async function callDatastoreFunction(ds: Datastore, name: string, method: string, body: unknown, opts: RestOptions, caller: string): Promise<unknown> {
  const viaGet = method !== 'POST';
  const result = await callExposed([{ self: ds, stop: Datastore.prototype, label: 'the DataStore class' }], name, await functionArgs(ds, viaGet, body, opts), viaGet, ds.functionTimeoutMs);
  return functionAnswer(ds, result, opts, caller);
}

/**
 * The function a /rest/{dataClass}… URL calls, or undefined when it reads or writes data: the first
 * segment after the dataclass (or the entity) names no exposed attribute, and either names an
 * exposed function or comes with a POST that has no $method (then unknown names answer -10729).
 */
export function functionOf(ds: Datastore, route: DataClassRoute, method: string, opts: RestOptions): string | undefined {
  const [first, ...rest] = route.path;
  if (first?.kind !== 'names' || first.names.length !== 1) return undefined;
  if (rest.length > 1 || (rest.length === 1 && (rest[0].kind !== 'entitySet' || route.selector.kind !== 'all'))) return undefined;
  const dc = ds.dataClass(route.dataClass);
  if (!dc || !dc.model.exposed) return undefined;
  const name = first.names[0];
  const attr = dc.model.attributesByName.get(name);
  if (attr && isExposed(attr)) return undefined;
  if (method === 'POST' && opts.method === undefined) return name;
  const protos = route.selector.kind === 'all' ? [[dc.selectionPrototype, EntitySelection.prototype], [Object.getPrototypeOf(dc), DataClass.prototype]] : [[dc.entityPrototype, Entity.prototype]];
  return protos.some(([p, stop]) => p && exposedFunctions(p as object, stop as object).some((f) => f.name === name)) ? name : undefined;
}

/**
 * POST or GET /rest/{dc}/{fn} (selection class first, the whole dataclass as the selection, then the
 * dataclass class), /rest/{dc}/{fn}/$entityset/{id}, /rest/{dc}/{fn}?$filter=… and /rest/{dc}({key})/{fn}.
 */
export async function callDataClassFunction(ds: Datastore, route: DataClassRoute, name: string, method: string, body: unknown, opts: RestOptions, caller: string): Promise<unknown> {
  const dc = ds.dataClass(route.dataClass) as DataClass;
  const viaGet = method !== 'POST';
  const args = await functionArgs(ds, viaGet, body, opts);
  let targets: CallTarget[];
  if (route.selector.kind === 'all') {
    const set = route.path[1]?.kind === 'entitySet' ? route.path[1].id : '';
    let selection = set === '' ? dc.all() : await setSelection(ds, set, dc);
    // on GET, $params are the function's: a $filter then takes its values inline
    if (opts.filter !== undefined) selection = selection.queryAs(isExposed, opts.filter, viaGet ? [] : opts.params);
    if (opts.orderby !== undefined) selection = selection.withOrder(parseOrderBy(dc.model, opts.orderby, isExposed, ds.calculatedLookup));
    targets = [
      { self: selection, stop: EntitySelection.prototype, label: `the ${dc.name}Selection class` },
      { self: dc, stop: DataClass.prototype, label: `the ${dc.name} class` },
    ];
  } else {
    targets = [{ self: await findEntity(dc, route.selector), stop: Entity.prototype, label: `the ${dc.name}Entity class` }];
  }
  return functionAnswer(ds, await callExposed(targets, name, args, viaGet, ds.functionTimeoutMs), opts, caller);
}

/**
 * The parameters of a call: the JSON array body of a POST (none when empty), $params for a GET.
 * An entity parameter ({__DATACLASS, __ENTITY: true, __KEY?, values…}) arrives as an entity with
 * the values applied, not saved; a selection parameter ({__DATASET: id, __ENTITIES: true}) as the
 * members of that entity set. Every other value arrives as JSON gives it.
 */
async function functionArgs(ds: Datastore, viaGet: boolean, body: unknown, opts: RestOptions): Promise<unknown[]> {
  let raw: readonly unknown[];
  if (viaGet) raw = opts.params;
  else if (body === undefined || body === null) raw = [];
  else if (Array.isArray(body)) raw = body;
  else throw new DatasetError('INVALID_BODY', `the body of a function call is a JSON array of its parameters, like ["Paris", 5]; got ${JSON.stringify(body).slice(0, 60)}`);
  return Promise.all(raw.map((v, i) => param(ds, v, i)));
}

async function param(ds: Datastore, v: unknown, index: number): Promise<unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
  const obj = v as Record<string, unknown>;
  if (obj.__ENTITIES === true) {
    if (typeof obj.__DATASET !== 'string') throw new DatasetError('INVALID_BODY', `parameter #${index + 1}: a selection parameter gives its entity set id as "__DATASET"`);
    return setSelection(ds, obj.__DATASET);
  }
  if (obj.__ENTITY !== true) return v;
  if (typeof obj.__DATACLASS !== 'string') throw new DatasetError('INVALID_BODY', `parameter #${index + 1}: an entity parameter names its dataclass in "__DATACLASS"`);
  const dc = ds.dataClassOf(exposedDataClass(ds, obj.__DATACLASS));
  let entity: Entity;
  if (obj.__KEY !== undefined) {
    const key = requireKey(dc.model.key, obj.__KEY);
    const found = await dc.get(key);
    if (!found) throw entityNotFound(dc.model, key);
    entity = found;
  } else {
    entity = dc.new();
  }
  await checkRelated(ds, entity, applyValues(dc, entity, obj, index));
  return entity;
}

/** The answer of a call, by the kind of value the function returned. */
async function functionAnswer(ds: Datastore, result: unknown, opts: RestOptions, caller: string): Promise<unknown> {
  // $filter and $params belong to the call here, not to the answer
  const answerOpts: RestOptions = { ...opts, filter: undefined, params: [] };
  if (result instanceof Entity) return readEntity(ds, result, undefined, answerOpts);
  if (result instanceof EntitySelection) return readCollection(ds, result, undefined, answerOpts, caller);
  return { result: result === undefined ? null : result };
}
