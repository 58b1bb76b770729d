// Planning a call of user code over REST: which function or project method a URL names, what it
// runs on (the datastore, a dataclass, an entity, a selection), its raw parameters, and how its
// answer is shown. What to call, and whether GET may call it, is settled before any data is read.

import { DataClass, type DataClassCore, Datastore, Entity, EntitySelection, leadsTo } from '../../datastore/index.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { checkHttpMethod, exposedNames, findExposed, unknownMember, type CallTarget } from '../../functions/call.js';
import { datastoreMethods } from '../../functions/catalog.js';
import { projectMethodsOf } from '../../functions/method-registry.js';
import { Singleton, singletonsOf } from '../../functions/singletons.js';
import { didYouMean } from '../../util/suggest.js';
import type { MethodScope } from '../../functions/project-methods.js';
import type { Action, FunctionAnswer, FunctionSubject, RelationStep } from './action.js';
import { optionsFor } from './option-rules.js';
import type { RestOptions } from '../request/options.js';
import { entitySelector, narrowing, paging, shape, withoutExpand } from './plan-parts.js';
import type { RestRequest } from './request.js';
import type { Scope } from '../scope/scope.js';
import { parseParam, type ParamType } from '../../functions/params.js';
import type { DataClassRoute, Selector, UrlArgument } from '../request/url.js';
type ClassTarget = CallTarget & { readonly kind: 'selection' | 'dataClass' | 'entity' };

/** A POST to /rest/$catalog/{name} that names no dataclass calls a function; a GET does when the name is a datastore function. */
export function isDatastoreCall(scope: Scope, name: string, isRead: boolean): boolean {
  const dc = scope.ds.model.dataClassesByName.get(name);
  if (dc && scope.sees(dc)) return false;
  return !isRead || datastoreMethods(scope.ds).some((m) => m.name === name);
}

/** POST or GET /rest/$catalog/{function}: a function of the DataStore class. */
export function planDatastoreCall(req: RestRequest, scope: Scope, name: string, options: RestOptions): Action {
  const targets: CallTarget[] = [{ proto: Object.getPrototypeOf(scope.ds) as object, stop: Datastore.prototype, label: 'the DataStore class' }];
  const found = findExposed(targets, name);
  if (!found) throw unknownMember(name, ['the DataStore class'], exposedNames(targets));
  const viaGet = readsByGet(req.method, name);
  checkHttpMethod(`${name} of ${found.target.label}`, viaGet, found.fn.onHttpGet);
  const opts = optionsFor('callFunction', options);
  return { kind: 'callFunction', code: { kind: 'class', name, fn: found.fn, target: found.target }, subject: { kind: 'datastore' }, args: rawArgs(viaGet, req.body, opts), viaGet, answer: answerOf(opts) };
}

/**
 * POST or GET /rest/$singleton/{Class}/{fn}: an exposed function of a shared singleton, run on
 * its one instance. Nothing is read before the call: $filter, $orderby and $entityset do not
 * apply (the answer's options do, when it returns an entity or a selection).
 */
export function planSingletonCall(req: RestRequest, scope: Scope, className: string, name: string, options: RestOptions): Action {
  const singletons = singletonsOf(scope.ds);
  const instance = singletons.get(className);
  if (!instance) {
    const known = [...singletons.keys()];
    throw new DatasetError('UNKNOWN_SINGLETON', `'${className}' is no shared singleton class of this project${known.length > 0 ? ` (singletons: ${known.join(', ')})${didYouMean(className, known)}` : ' (it has none)'}`);
  }
  const label = `the ${className} singleton`;
  const targets: CallTarget[] = [{ proto: Object.getPrototypeOf(instance) as object, stop: Singleton.prototype, label }];
  const found = findExposed(targets, name);
  if (!found) throw unknownMember(name, [label], exposedNames(targets));
  const viaGet = readsByGet(req.method, name);
  checkHttpMethod(`${name} of ${label}`, viaGet, found.fn.onHttpGet);
  const opts = optionsFor('callFunction', options);
  if (opts.filter !== undefined || opts.orderby !== undefined) {
    throw new DatasetError('INVALID_OPTION', `${name} of ${label} runs on no selection: $filter and $orderby do not apply`);
  }
  return {
    kind: 'callFunction', code: { kind: 'class', name, fn: found.fn, target: found.target },
    subject: { kind: 'singleton', name: className, instance }, args: rawArgs(viaGet, req.body, opts), viaGet, answer: answerOf(opts),
  };
}

/**
 * The function a /rest/{dataClass}… URL calls, or undefined when it reads or writes data: the first
 * segment after the dataclass (or the entity) names no visible attribute, and either names an
 * exposed function or project method, or comes with a POST that has no $method (then unknown
 * names answer -10729).
 */
export function functionOf(scope: Scope, dc: DataClassCore, route: DataClassRoute, method: string, opts: RestOptions): string | undefined {
  const [first, ...rest] = route.path;
  if (rest.length > 1 || (rest.length === 1 && (rest[0].kind !== 'entitySet' || route.selector.kind !== 'all'))) return undefined;
  // fn(a,b): a call, whatever the name (an attribute takes no parentheses)
  if (first?.kind === 'call') return first.name;
  if (first?.kind !== 'names' || first.names.length !== 1) return undefined;
  const name = first.names[0];
  const attr = dc.model.attributesByName.get(name);
  if (attr && scope.visible(attr)) return undefined;
  if (method === 'POST' && opts.method === undefined) return name;
  if (projectMethodsOf(dc.dataClass).get(name)?.definition.exposed) return name;
  return findExposed(classTargets(dc, route.selector.kind !== 'all'), name) ? name : undefined;
}

/**
 * POST or GET /rest/{dc}/{fn} (selection class first, the whole dataclass as the selection, then the
 * dataclass class, then the project methods of scope table or currentSelection),
 * /rest/{dc}/{fn}/$entityset/{id}, /rest/{dc}/{fn}?$filter=…&$orderby=… and /rest/{dc}({key})/{fn}
 * (entity class, then project methods of scope currentRecord).
 */
export function planDataClassCall(req: RestRequest, scope: Scope, dc: DataClassCore, route: DataClassRoute, name: string, options: RestOptions): Action {
  const viaGet = readsByGet(req.method, name);
  const entityLevel = route.selector.kind !== 'all';
  const targets = classTargets(dc, entityLevel);
  const found = findExposed(targets, name);
  const method = found ? undefined : projectMethodsOf(dc.dataClass).get(name);
  const methodScope = method?.definition.exposed ? method.definition.scope : undefined;
  if (!found && !(methodScope && (methodScope === 'currentRecord') === entityLevel)) throw unknownCall(dc, name, targets, entityLevel, methodScope);
  if (found) checkHttpMethod(`${name} of ${found.target.label}`, viaGet, found.fn.onHttpGet);
  else checkHttpMethod(`the project method ${name}`, viaGet, method?.definition.onHttpGet === true);
  const opts = optionsFor('callFunction', options);
  const set = route.path[1]?.kind === 'entitySet' ? route.path[1].id : undefined;
  if (set === '') throw new DatasetError('MALFORMED_URL', `the entity set a function runs on is named: /rest/${dc.name}/${name}/$entityset/{id}`);
  const onSelection = !entityLevel && (found ? found.target.kind === 'selection' : methodScope === 'currentSelection');
  if (!onSelection && (set !== undefined || opts.filter !== undefined || opts.orderby !== undefined)) {
    const what = found
      ? `${name} of ${found.target.label} runs on ${entityLevel ? 'one entity' : 'the dataclass'}`
      : `the project method ${name} works on ${entityLevel ? 'one entity (scope currentRecord)' : `the whole ${dc.name} dataclass (scope table)`}`;
    const instead = found ? `a function of the ${dc.name}Selection class runs on a selection` : 'give it scope currentSelection to run on a selection';
    throw new DatasetError('INVALID_OPTION', `${what}: $filter, $orderby and $entityset do not apply; ${instead}`);
  }
  let subject: FunctionSubject;
  if (entityLevel) subject = { kind: 'entity', dc, selector: entitySelector(scope, dc, route.selector as Exclude<Selector, { kind: 'all' }>) };
  else if (found?.target.kind === 'dataClass' || methodScope === 'table') subject = { kind: 'dataClass', dc };
  // on GET, $params are the function's: a $filter then takes its values inline
  // (with the parameters in the URL, $params are the $filter's on GET too)
  else subject = { kind: 'selection', dc, set, narrowing: narrowing({ ...opts, params: viaGet && route.path[0]?.kind !== 'call' ? [] : opts.params }, 'orderby wins') };
  const code = found ? { kind: 'class' as const, name, fn: found.fn, target: found.target } : { kind: 'method' as const, method: method! };
  const inUrl = route.path[0]?.kind === 'call' ? route.path[0].args : undefined;
  if (inUrl && opts.given.has('$params') && opts.filter === undefined) {
    throw new DatasetError('INVALID_OPTION', `the parameters of ${name} are in the URL; $params gives the values of $filter's placeholders, and there is no $filter`);
  }
  const args = inUrl ? urlArgs(inUrl, found ? found.fn.params : method?.definition.params, req.body) : rawArgs(viaGet, req.body, opts);
  return { kind: 'callFunction', code, subject, args, viaGet, answer: answerOf(opts) };
}

/**
 * The parameters written in the URL (`addEmployee(John,Smith)`, reference §2.13), typed: a quoted
 * one is a string; an unquoted one is a number, true, false or null when it reads as one in JSON,
 * else a string — and stays its text where the function declares a string (@params). A body
 * besides them would give them twice.
 */
function urlArgs(args: readonly UrlArgument[], declared: readonly ParamType[] | undefined, body: unknown): unknown[] {
  if (body !== undefined && body !== null && !(Array.isArray(body) && body.length === 0)) {
    throw new DatasetError('INVALID_BODY', 'the parameters are given in the URL (fn(a,b)) and in the body: give them once');
  }
  return args.map((a, i) => {
    if (a.quoted || (declared?.[i] !== undefined && parseParam(declared[i]).kind === 'string')) return a.text;
    if (a.text === 'true' || a.text === 'false' || a.text === 'null') return JSON.parse(a.text) as unknown;
    return JSON_NUMBER.test(a.text) ? Number(a.text) : a.text;
  });
}

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * POST /rest/{dc}({key})/{relation}?$method=subentityset&$emMethod={fn} (wakanda-client's call of a
 * selection function on a relation it has paged): the function of the related dataclass's
 * selection class, or its project method of scope currentSelection, run on the related entities.
 */
export function planRelationCall(req: RestRequest, scope: Scope, dc: DataClassCore, route: DataClassRoute, options: RestOptions): Action {
  const name = options.emMethod as string;
  const [first] = route.path;
  const relationName = first?.kind === 'names' && first.names.length === 1 && route.path.length === 1 ? first.names[0] : undefined;
  const attr = relationName === undefined ? undefined : dc.model.attributesByName.get(relationName);
  // a relation the session may not follow is refused as a read of it would be
  const denied = attr && !scope.visible(attr) && leadsTo(attr) ? scope.visible.denied?.(attr) : undefined;
  if (denied) throw denied;
  const leads = attr && scope.visible(attr) ? leadsTo(attr) : undefined;
  if (route.selector.kind === 'all' || !attr || !leads?.many) {
    throw new DatasetError('MALFORMED_URL', `$emMethod calls a selection function on the entities of a 1→N relation: /rest/${dc.name}({key})/{relation}?$method=subentityset&$emMethod=${name}`);
  }
  if (options.method !== undefined && options.method !== 'subentityset') throw new DatasetError('INVALID_OPTION', `$emMethod goes with $method=subentityset (or no $method), not $method=${options.method}`);
  const target = scope.core.classOf(leads.target);
  const targets = classTargets(target, false).filter((t) => t.kind === 'selection');
  const viaGet = readsByGet(req.method, name);
  const found = findExposed(targets, name);
  const method = found ? undefined : projectMethodsOf(target.dataClass).get(name);
  if (!found && !(method?.definition.exposed && method.definition.scope === 'currentSelection')) throw unknownCall(target, name, targets, false, method?.definition.exposed ? method.definition.scope : undefined);
  if (found) checkHttpMethod(`${name} of ${found.target.label}`, viaGet, found.fn.onHttpGet);
  else checkHttpMethod(`the project method ${name}`, viaGet, method?.definition.onHttpGet === true);
  // the $expand=<relation> of the deferred URI is spent; $method=subentityset is how the client says "this relation's entities"
  const opts = optionsFor('callFunction', { ...withoutExpand(options, attr.name), method: undefined });
  const step: RelationStep = { from: entitySelector(scope, dc, route.selector), relation: attr as RelationStep['relation'] };
  const code = found ? { kind: 'class' as const, name, fn: found.fn, target: found.target } : { kind: 'method' as const, method: method! };
  const subject: FunctionSubject = { kind: 'selection', dc: target, related: step, narrowing: narrowing({ ...opts, params: viaGet ? [] : opts.params }, 'orderby wins') };
  return { kind: 'callFunction', code, subject, args: rawArgs(viaGet, req.body, opts), viaGet, answer: answerOf(opts) };
}

/**
 * Whether a call comes by GET, whose parameters are $params; POST posts them; no other method
 * calls a function — not HEAD either, which must change nothing (RFC 9110 §9.3.2), when user
 * code may change anything (an @onHttpGet function is code like any other).
 */
function readsByGet(method: string, name: string): boolean {
  if (method === 'GET') return true;
  if (method === 'HEAD') throw new DatasetError('METHOD_NOT_ALLOWED', `HEAD cannot call ${name}: HEAD must change nothing, and a function may; call it with GET (when it is @onHttpGet) or POST`);
  if (method === 'POST') return false;
  throw new DatasetError('METHOD_NOT_ALLOWED', `${method} cannot call ${name}: call it with POST (or GET, when it is @onHttpGet)`);
}

/** Where /rest/{dc}/{fn} looks (the selection class, then the dataclass class), or /rest/{dc}({key})/{fn} (the entity class). */
function classTargets(dc: DataClassCore, entityLevel: boolean): ClassTarget[] {
  if (entityLevel) return [{ kind: 'entity', proto: dc.entityPrototype, stop: Entity.prototype, label: `the ${dc.name}Entity class` }];
  return [
    { kind: 'selection', proto: dc.selectionPrototype ?? EntitySelection.prototype, stop: EntitySelection.prototype, label: `the ${dc.name}Selection class` },
    { kind: 'dataClass', proto: Object.getPrototypeOf(dc.dataClass) as object, stop: DataClass.prototype, label: `the ${dc.name} class` },
  ];
}

/** -10729 for a name /rest/{dc}/… cannot call, saying where a project method of the other scope is called. */
function unknownCall(dc: DataClassCore, name: string, targets: readonly CallTarget[], entityLevel: boolean, scope: MethodScope | undefined): DatasetError {
  const methods = [...projectMethodsOf(dc.dataClass).values()].filter((m) => m.definition.exposed && (m.definition.scope === 'currentRecord') === entityLevel).map((m) => m.name);
  const where = [...targets.map((t) => t.label), ...(methods.length ? [`the project methods of ${dc.name}`] : [])];
  const error = unknownMember(name, where, [...exposedNames(targets), ...methods]);
  if (!scope) return error;
  const hint = scope === 'currentRecord' ? `it runs on one entity (scope currentRecord): call /rest/${dc.name}({key})/${name}` : `it runs on the dataclass or a selection (scope ${scope}): call /rest/${dc.name}/${name}`;
  return new DatasetError('UNKNOWN_MEMBER_METHOD', `${error.message}; the project method ${name} exists, but ${hint}`);
}

/** The parameters of a call as sent: the JSON array body of a POST (none when empty), $params for a GET. */
function rawArgs(viaGet: boolean, body: unknown, opts: RestOptions): readonly unknown[] {
  if (viaGet) return opts.params;
  if (body === undefined || body === null) return [];
  if (Array.isArray(body)) return body;
  throw new DatasetError('INVALID_BODY', `the body of a function call is a JSON array of its parameters, like ["Paris", 5]; got ${JSON.stringify(body).slice(0, 60)}`);
}

/** How an entity or selection result is shown ($filter, $params and $orderby belong to the call, not to the answer). */
function answerOf(opts: RestOptions): FunctionAnswer {
  return {
    paging: paging(opts),
    shape: shape(undefined, opts),
    store: opts.method === 'entityset',
    timeoutS: opts.timeout,
    plan: { queryplan: opts.queryplan, querypath: opts.querypath },
    collectionOptions: opts.top !== undefined || opts.skip > 0 || opts.method === 'entityset',
    selectionRefuses: opts.method === 'subentityset' ? 'subentityset'
      : opts.compute !== undefined && opts.distinct ? 'both' : opts.compute !== undefined ? '$compute' : opts.distinct ? '$distinct' : undefined,
  };
}
