// Calls of exposed functions and project methods over REST: which code a URL names, the
// parameters (a JSON array body, or $params for GET), and the answer: an entity as the entity
// object itself, a selection as a collection (paged by $top/$skip, projected by $attributes,
// stored by $method=entityset), anything else as {result}.

import { DataClass } from '../../datastore/dataclass.js';
import { Datastore } from '../../datastore/datastore.js';
import { Entity } from '../../datastore/entity.js';
import { parseOrderBy } from '../../query/order.js';
import { EntitySelection } from '../../datastore/selection.js';
import { entityNotFound } from '../../datastore/datastore.js';
import { requireKey } from '../../model/values.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { checkHttpMethod, exposedNames, findExposed, invoke, unknownMember, type CallTarget } from '../../functions/call.js';
import type { CallRequest } from '../../functions/context.js';
import type { MethodScope, ProjectMethod } from '../../functions/project-methods.js';
import type { RestRequest } from '../dispatch.js';
import { isExposed } from '../../model/types.js';
import type { Route } from '../url.js';
import { exposedDataClass } from './catalog.js';
import { setSelection } from './entity-sets.js';
import { applyValues, checkValues } from './write.js';
import type { RestOptions } from '../options.js';
import { findEntity, readCollection, readEntity } from './read.js';

type DataClassRoute = Extract<Route, { kind: 'dataClass' }>;

/** POST or GET /rest/$catalog/{function}: a function of the DataStore class. */
export async function callDatastoreFunction(ds: Datastore, name: string, req: RestRequest, opts: RestOptions): Promise<unknown> {
  const targets: CallTarget[] = [{ proto: Object.getPrototypeOf(ds) as object, stop: Datastore.prototype, label: 'the DataStore class' }];
  const found = findExposed(targets, name);
  if (!found) throw unknownMember(name, ['the DataStore class'], exposedNames(targets));
  const viaGet = req.method !== 'POST';
  checkHttpMethod(`${name} of ${found.target.label}`, viaGet, found.fn.onHttpGet);
  const args = await functionArgs(ds, viaGet, req.body, opts);
  return functionAnswer(ds, await callClassFunction(ds, ds, found, name, args, req), opts, req.caller, `${name} of ${found.target.label}`);
}

/**
 * The function a /rest/{dataClass}… URL calls, or undefined when it reads or writes data: the first
 * segment after the dataclass (or the entity) names no exposed attribute, and either names an
 * exposed function or project method, or comes with a POST that has no $method (then unknown
 * names answer -10729).
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
  if (dc.projectMethods.get(name)?.definition.exposed) return name;
  return findExposed(classTargets(dc, route.selector.kind !== 'all'), name) ? name : undefined;
}

/** Where /rest/{dc}/{fn} looks (the selection class, then the dataclass class), or /rest/{dc}({key})/{fn} (the entity class). */
function classTargets(dc: DataClass, entityLevel: boolean): (CallTarget & { kind: 'selection' | 'dataClass' | 'entity' })[] {
  if (entityLevel) return [{ kind: 'entity', proto: dc.entityPrototype ?? Entity.prototype, stop: Entity.prototype, label: `the ${dc.name}Entity class` }];
  return [
    { kind: 'selection', proto: dc.selectionPrototype ?? EntitySelection.prototype, stop: EntitySelection.prototype, label: `the ${dc.name}Selection class` },
    { kind: 'dataClass', proto: Object.getPrototypeOf(dc) as object, stop: DataClass.prototype, label: `the ${dc.name} class` },
  ];
}

/**
 * POST or GET /rest/{dc}/{fn} (selection class first, the whole dataclass as the selection, then the
 * dataclass class, then the project methods of scope table or currentSelection),
 * /rest/{dc}/{fn}/$entityset/{id}, /rest/{dc}/{fn}?$filter=…&$orderby=… and /rest/{dc}({key})/{fn}
 * (entity class, then project methods of scope currentRecord). What to call, and whether GET may
 * call it, is settled before any data is read.
 */
export async function callDataClassFunction(ds: Datastore, route: DataClassRoute, name: string, req: RestRequest, opts: RestOptions): Promise<unknown> {
  const dc = ds.dataClass(route.dataClass) as DataClass;
  const viaGet = req.method !== 'POST';
  const entityLevel = route.selector.kind !== 'all';
  const targets = classTargets(dc, entityLevel);
  const found = findExposed(targets, name);
  const method = found ? undefined : dc.projectMethods.get(name);
  const scope = method?.definition.exposed ? method.definition.scope : undefined;
  if (!found && !(scope && (scope === 'currentRecord') === entityLevel)) throw unknownCall(dc, name, targets, entityLevel, scope);
  if (found) checkHttpMethod(`${name} of ${found.target.label}`, viaGet, found.fn.onHttpGet);
  else checkHttpMethod(`the project method ${name}`, viaGet, method?.definition.onHttpGet === true);
  const set = route.path[1]?.kind === 'entitySet' ? route.path[1].id : undefined;
  const onSelection = !entityLevel && (found ? found.target.kind === 'selection' : scope === 'currentSelection');
  if (!onSelection && (set !== undefined || opts.filter !== undefined || opts.orderby !== undefined)) {
    const what = found
      ? `${name} of ${found.target.label} runs on ${entityLevel ? 'one entity' : 'the dataclass'}`
      : `the project method ${name} works on ${entityLevel ? 'one entity (scope currentRecord)' : `the whole ${dc.name} dataclass (scope table)`}`;
    const instead = found ? `a function of the ${dc.name}Selection class runs on a selection` : 'give it scope currentSelection to run on a selection';
    throw new DatasetError('INVALID_OPTION', `${what}: $filter, $orderby and $entityset do not apply; ${instead}`);
  }
  // what the code runs on
  let self: object;
  if (route.selector.kind !== 'all') self = await findEntity(dc, route.selector);
  else if (found?.target.kind === 'dataClass' || scope === 'table') self = dc;
  else {
    let selection = !set ? dc.all() : await setSelection(ds, set, dc);
    // on GET, $params are the function's: a $filter then takes its values inline
    if (opts.filter !== undefined) selection = selection.queryAs(isExposed, opts.filter, viaGet ? [] : opts.params);
    if (opts.orderby !== undefined) selection = selection.withOrder(parseOrderBy(dc.model, opts.orderby, isExposed, ds.calculatedLookup));
    self = selection;
  }
  const args = await functionArgs(ds, viaGet, req.body, opts);
  const result = found ? await callClassFunction(ds, self, found, name, args, req) : await callProjectMethod(ds, method as ProjectMethod, self, args, req);
  return functionAnswer(ds, result, opts, req.caller, found ? `${name} of ${found.target.label}` : `the project method ${name}`);
}

/** -10729 for a name /rest/{dc}/… cannot call, saying where a project method of the other scope is called. */
function unknownCall(dc: DataClass, name: string, targets: readonly CallTarget[], entityLevel: boolean, scope: MethodScope | undefined): DatasetError {
  const methods = [...dc.projectMethods.values()].filter((m) => m.definition.exposed && (m.definition.scope === 'currentRecord') === entityLevel).map((m) => m.name);
  const where = [...targets.map((t) => t.label), ...(methods.length ? [`the project methods of ${dc.name}`] : [])];
  const error = unknownMember(name, where, [...exposedNames(targets), ...methods]);
  if (!scope) return error;
  const hint = scope === 'currentRecord' ? `it runs on one entity (scope currentRecord): call /rest/${dc.name}({key})/${name}` : `it runs on the dataclass or a selection (scope ${scope}): call /rest/${dc.name}/${name}`;
  return new DatasetError('UNKNOWN_MEMBER_METHOD', `${error.message}; the project method ${name} exists, but ${hint}`);
}

/** What a function may know of the request that called it (callContext().request). */
function callRequest(req: RestRequest): CallRequest {
  return { method: req.method, url: req.url, caller: req.caller, headers: req.headers ?? {} };
}

function callClassFunction(ds: Datastore, self: object, found: NonNullable<ReturnType<typeof findExposed>>, name: string, args: unknown[], req: RestRequest): Promise<unknown> {
  const code = (self as Record<string, (...a: unknown[]) => unknown>)[name];
  return invoke({
    name: `${name} of ${found.target.label}`,
    run: (a) => code.apply(self, a),
    args,
    params: found.fn.params,
    timeoutMs: ds.functionTimeoutMs,
    request: callRequest(req),
    socketFd: req.socketFd,
  });
}

function callProjectMethod(ds: Datastore, m: ProjectMethod, target: object, args: unknown[], req: RestRequest): Promise<unknown> {
  const d = m.definition;
  const name = `the project method ${m.name}`;
  const run = d.run as (target: object, ...a: unknown[]) => unknown;
  return invoke({
    name,
    run: async (a) => {
      const result = await run(target, ...a);
      // 4D's rule: a method answers an object or a collection (an entity or a selection is an object)
      if (result === null || typeof result !== 'object') {
        throw new DatasetError('METHOD_BAD_RESULT', `${name} must return an object or an array; it returned ${result === undefined ? 'nothing' : JSON.stringify(result).slice(0, 60)}`);
      }
      return result;
    },
    args,
    params: d.params,
    timeoutMs: ds.functionTimeoutMs,
    request: callRequest(req),
    socketFd: req.socketFd,
  });
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
  await checkValues(ds, entity, applyValues(dc, entity, obj, index));
  return entity;
}

/** The answer of a call, by the kind of value the function returned. */
async function functionAnswer(ds: Datastore, result: unknown, opts: RestOptions, caller: string, what: string): Promise<unknown> {
  // $filter, $params and $orderby belong to the call here (its selection), not to the answer
  const answerOpts: RestOptions = { ...opts, filter: undefined, params: [], orderby: undefined };
  if (result instanceof Entity) return readEntity(ds, result, undefined, answerOpts);
  if (result instanceof EntitySelection) return readCollection(ds, result, undefined, answerOpts, caller);
  return new JsonText(sendable({ result: result === undefined ? null : result }, what));
}

/** An answer already in JSON (so that a function's result is serialised once, here, where a failure can be named). */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * A result sent as {"result": …} must be plain JSON: an entity or a selection inside it would be
 * sent as {}, and a bigint, a cycle, a throwing getter or toJSON cannot be sent at all. Either is
 * the function's mistake (7019), said plainly rather than a bare 500. Resolves to the JSON text.
 */
function sendable(answer: { result: unknown }, what: string): string {
  try {
    const nested = nestedEntity(answer.result, 0, new Set());
    if (nested) {
      throw new DatasetError('FUNCTION_FAILED', `${what} returned an ${nested} inside an object or array: return it alone (it is then sent as REST sends it), or plain values read from it`);
    }
    return JSON.stringify(answer);
  } catch (e) {
    if (e instanceof DatasetError) throw e;
    const why = e instanceof Error ? e.message : String(e);
    throw new DatasetError('FUNCTION_FAILED', `${what} returned a value that cannot be sent as JSON: ${why}${/BigInt/.test(why) ? ' (return a number or a string)' : ''}`);
  }
}

/** 'entity' or 'entity selection' when one sits inside the value (searched 64 levels deep: JSON.stringify refuses deeper cycles and depths itself). */
function nestedEntity(value: unknown, depth: number, seen: Set<object>): string | undefined {
  if (value === null || typeof value !== 'object' || depth > 64 || seen.has(value)) return undefined;
  if (value instanceof Entity) return depth > 0 ? 'entity' : undefined;
  if (value instanceof EntitySelection) return depth > 0 ? 'entity selection' : undefined;
  seen.add(value);
  for (const v of Object.values(value)) {
    const found = nestedEntity(v, depth + 1, seen);
    if (found) return found;
  }
  return undefined;
}

