// Planning /rest/{dataClass}…: which action a dataclass URL asks for — the contents of a picture
// or blob, a function call, a read (collection, entity, relation, set, computation) or a write
// ($method=update, validate, delete) — and the options of that action, read through its rule.

import type { DataClassCore } from '../datastore/dataclass-core.js';
import { DatasetError } from '../errors/dataset-error.js';
import type { StorageAttribute } from '../model/types.js';
import { parseOrderList, parseQuery } from '../query/parser.js';
import { attributeOf, kindOf } from '../query/path.js';
import { leadsTo } from '../datastore/projection.js';
import { OPTION_RULES, type Action, type CollectionSource, type EntitySelector, type Narrowing, type Paging, type RelationStep, type SetRequest, type Shape } from './action.js';
import { pick, type RestMethod, type RestOptions } from './options.js';
import { functionOf, planDataClassCall } from './plan-function.js';
import type { RestRequest } from './request.js';
import { dataClassFor, type Scope } from './scope.js';
import type { PathSegment, Route, Selector } from './url.js';

type DataClassRoute = Extract<Route, { kind: 'dataClass' }>;

export function planDataClass(req: RestRequest, scope: Scope, route: DataClassRoute, options: RestOptions): Action {
  const dc = dataClassFor(scope, route.dataClass); // 7002 for a dataclass REST does not have, whatever the request
  const isRead = req.method === 'GET' || req.method === 'HEAD';
  const file = isRead ? fileAttributeOf(dc, route, scope) : undefined;
  if (file) return planReadFile(req, scope, dc, route, file, options);
  const fn = functionOf(scope, dc, route, req.method, options);
  if (fn !== undefined) return planDataClassCall(req, scope, dc, route, fn, options);
  if (isRead) return planRead(scope, dc, route, options);
  if (req.method === 'POST' && options.method !== undefined) return planWrite(req, dc, route, options);
  throw new DatasetError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here: read with GET; change data with POST and $method=update or $method=delete`);
}

/**
 * The image or blob attribute whose contents the request asks for: one such attribute after one
 * entity (`/rest/Employee(1)/photo`, with or without the `$expand=photo` of the deferred uri).
 */
function fileAttributeOf(dc: DataClassCore, route: DataClassRoute, scope: Scope): StorageAttribute | undefined {
  if (route.selector.kind === 'all' || route.path.length !== 1) return undefined;
  const [segment] = route.path;
  if (segment.kind !== 'names' || segment.names.length !== 1) return undefined;
  const attr = dc.model.attributesByName.get(segment.names[0]);
  if (attr?.kind !== 'storage' || (attr.type !== 'image' && attr.type !== 'blob') || !scope.visible(attr)) return undefined;
  return attr;
}

function planReadFile(req: RestRequest, scope: Scope, dc: DataClassCore, route: DataClassRoute, attribute: StorageAttribute, options: RestOptions): Action {
  const opts = pick(options, OPTION_RULES.readFile);
  if (attribute.type === 'blob' && opts.imageFormat !== undefined && opts.imageFormat !== 'best') {
    throw new DatasetError('INVALID_OPTION', `$imageformat converts images; ${route.dataClass}.${attribute.name} is a blob (read it with $binary=true)`);
  }
  return { kind: 'readFile', dc, selector: entitySelector(scope, dc, route.selector as Exclude<Selector, { kind: 'all' }>), attribute, imageFormat: opts.imageFormat, download: opts.binary, headers: req.headers };
}

function planRead(scope: Scope, dc: DataClassCore, route: DataClassRoute, options: RestOptions): Action {
  const setAt = route.path.findIndex((s) => s.kind === 'entitySet');
  if (setAt >= 0) {
    // /rest/{dc}/$entityset/{id}, an attribute list before it: /rest/{dc}/a,b/$entityset/{id}
    const seg = route.path[setAt] as Extract<PathSegment, { kind: 'entitySet' }>;
    if (route.selector.kind !== 'all' || setAt !== route.path.length - 1 || seg.id === '') {
      throw new DatasetError('MALFORMED_URL', `an entity set is read as /rest/${dc.name}/$entityset/{id}, with an optional attribute list before $entityset`);
    }
    if (options.method !== undefined && options.method !== 'entityset' && options.method !== 'release') refuseMethod(options.method);
    if (options.method === 'release') return { kind: 'release', dc, id: seg.id };
    return planCollection(dc, { kind: 'set', set: setRequest(seg.id, options) }, attributeList(route.path.slice(0, setAt)), options, 'readSet');
  }
  if (options.method !== undefined && options.method !== 'entityset' && options.method !== 'subentityset') refuseMethod(options.method);
  if (route.selector.kind === 'all') {
    if (options.method === 'subentityset') throw new DatasetError('INVALID_OPTION', '$method=subentityset stores the entities of a relation: /rest/{dataClass}({key})/{relation}?$method=subentityset');
    return planCollection(dc, { kind: 'all' }, attributeList(route.path), options);
  }
  const selector = entitySelector(scope, dc, route.selector);
  const [first, ...rest] = route.path;
  if (first?.kind === 'names' && first.names.length === 1) {
    const attr = dc.model.attributesByName.get(first.names[0]);
    const leads = attr && scope.visible(attr) ? leadsTo(attr) : undefined;
    if (attr && leads) {
      // a deferred URI: /Company(1)/staff?$expand=staff — that $expand names the relation followed
      const spent = withoutExpand(options, attr.name);
      const step: RelationStep = { from: selector, relation: attr as RelationStep['relation'] };
      const target = scope.core.classOf(leads.target);
      if (options.method === 'subentityset') {
        if (!leads.many) throw new DatasetError('INVALID_OPTION', `$method=subentityset stores the entities of a 1→N relation; ${dc.name}.${attr.name} leads to one entity`);
        return subEntitySet(target, step, attributeList(rest), spent);
      }
      if (leads.many) return planCollection(target, { kind: 'related', step }, attributeList(rest), spent);
      return { kind: 'readRelation', dc: target, step, shape: entityShape(attributeList(rest), spent) };
    }
  }
  return { kind: 'readEntity', dc, selector, shape: entityShape(attributeList(route.path), options) };
}

/** A collection read: a page, a stored set ($method=entityset), or a computation ($compute, $distinct) on it. */
function planCollection(dc: DataClassCore, source: CollectionSource, listed: string[] | undefined, options: RestOptions, kind: 'readCollection' | 'readSet' = 'readCollection'): Action {
  if (options.compute !== undefined || options.distinct) {
    const option = options.compute !== undefined ? '$compute' : '$distinct';
    if (options.compute !== undefined && options.distinct) throw new DatasetError('INVALID_OPTION', '$compute and $distinct are two requests: give one');
    if (!listed || listed.length !== 1) throw new DatasetError('INVALID_OPTION', `${option} needs exactly one attribute in the path: /rest/${dc.name}/{attribute}?${option}=…`);
    if (options.compute !== undefined) {
      const opts = pick(options, OPTION_RULES.compute);
      // (an order means nothing to a computation: one in $filter and $orderby is not refused)
      return { kind: 'compute', dc, source, narrowing: narrowing(opts, false), attribute: listed[0], keyword: options.compute };
    }
    const opts = pick(options, OPTION_RULES.distinct);
    return { kind: 'distinct', dc, source, narrowing: narrowing(opts, false), attribute: listed[0], paging: paging(opts) };
  }
  if (kind === 'readSet') {
    const opts = pick(options, OPTION_RULES.readSet);
    const set = (source as Extract<CollectionSource, { kind: 'set' }>).set;
    return { kind: 'readSet', dc, set, narrowing: narrowing(opts), paging: paging(opts), shape: shape(listed, opts), store: opts.method === 'entityset', timeoutS: opts.timeout };
  }
  if (options.method === 'entityset') {
    const opts = pick(options, OPTION_RULES.createSet);
    return { kind: 'createSet', dc, source, narrowing: narrowing(opts), paging: paging(opts), shape: shape(listed, opts), timeoutS: opts.timeout };
  }
  const opts = pick(options, OPTION_RULES.readCollection);
  return { kind: 'readCollection', dc, source, narrowing: narrowing(opts), paging: paging(opts), shape: shape(listed, opts), plan: { queryplan: opts.queryplan, querypath: opts.querypath } };
}

/** $method=subentityset: the related entities stored as a set, sorted by $subOrderby (its only order; $filter does not apply). */
function subEntitySet(dc: DataClassCore, step: RelationStep, listed: string[] | undefined, options: RestOptions): Action {
  const opts = pick(options, OPTION_RULES.createSet);
  const orderBy = opts.subOrderby === undefined ? undefined : parseOrderList(opts.subOrderby);
  return { kind: 'createSet', dc, source: { kind: 'related', step }, narrowing: { params: [], orderBy }, paging: paging(opts), shape: shape(listed, opts), timeoutS: opts.timeout };
}

function planWrite(req: RestRequest, dc: DataClassCore, route: DataClassRoute, options: RestOptions): Action {
  switch (options.method) {
    case 'update':
    case 'validate': {
      if (route.selector.kind !== 'all' || route.path.length > 0) {
        throw new DatasetError('MALFORMED_URL', `$method=${options.method} is posted to the dataclass (/rest/${dc.name}), with the keys in the body`);
      }
      const { list, single } = inputs(req.body);
      if (options.method === 'validate') return { kind: 'validate', dc, entities: list };
      const opts = pick(options, OPTION_RULES.update);
      return { kind: 'update', dc, entities: list, single, atomic: opts.atomic, refresh: opts.refresh, shape: shape(undefined, opts), origin: req.origin };
    }
    case 'delete':
      return planDelete(dc, route, pick(options, OPTION_RULES.delete));
    default:
      throw new DatasetError('METHOD_NOT_ALLOWED', `$method=${options.method} is read with GET; POST takes $method=update, validate or delete`);
  }
}

/** $method=delete on an entity, on an entity set, or on every entity a $filter selects. */
function planDelete(dc: DataClassCore, route: DataClassRoute, opts: RestOptions): Action {
  const [first] = route.path;
  if (route.selector.kind === 'all' && route.path.length === 1 && first.kind === 'entitySet' && first.id !== '') return { kind: 'deleteSet', dc, id: first.id };
  if (route.path.length > 0) throw new DatasetError('MALFORMED_URL', `$method=delete applies to /rest/${dc.name}(key) or to /rest/${dc.name}?$filter=…, without a path after it`);
  if (route.selector.kind === 'key') return { kind: 'delete', dc, target: { kind: 'entity', selector: route.selector } };
  if (route.selector.kind === 'attribute') throw new DatasetError('MALFORMED_URL', `$method=delete takes an entity by key (/rest/${dc.name}(key)) or a $filter`);
  // deleting a whole dataclass by accident is too easy: a filter is required
  if (opts.filter === undefined) throw new DatasetError('INVALID_OPTION', `$method=delete on /rest/${dc.name} needs a $filter naming the entities to delete`);
  return { kind: 'delete', dc, target: { kind: 'filter', filter: parseQuery(opts.filter), params: opts.params } };
}

/** One entity (an object) or several (an array) to save or validate. */
function inputs(body: unknown): { list: unknown[]; single: boolean } {
  if (body === undefined || body === null || body === '') throw new DatasetError('INVALID_BODY', 'the body is empty: send a JSON object (one entity) or an array of objects');
  if (Array.isArray(body)) {
    if (body.length === 0) throw new DatasetError('INVALID_BODY', 'the body is an empty array: send at least one entity');
    return { list: body, single: false };
  }
  return { list: [body], single: true };
}

// ---- the parts actions share ----

/** `Company(1)`, `Company[1]` (the key checked when read), `Company:code(A1)` (the attribute resolved now). */
export function entitySelector(scope: Scope, dc: DataClassCore, selector: Exclude<Selector, { kind: 'all' }>): EntitySelector {
  if (selector.kind === 'key') return selector;
  const attr = attributeOf(dc.model, selector.attribute, scope.visible);
  if (attr.kind !== 'storage') throw new DatasetError('INVALID_VALUE', `${dc.name}:${attr.name}(…) needs a storage attribute; '${attr.name}' is ${kindOf(attr)}`);
  return { kind: 'attribute', attribute: attr, value: selector.value };
}

/**
 * $filter and $orderby parsed (a syntax error is answered before any data is read), with $params.
 * An order given twice is refused (a function's selection takes $orderby after its filter's order).
 */
export function narrowing(opts: RestOptions, refuseTwoOrders = true): Narrowing {
  const filter = opts.filter === undefined ? undefined : parseQuery(opts.filter);
  if (refuseTwoOrders && filter && filter.orderBy.length > 0 && opts.orderby !== undefined) {
    throw new DatasetError('INVALID_OPTION', 'the order is given twice: in $filter (order by …) and in $orderby; keep one');
  }
  return { filter, params: opts.params, orderBy: opts.orderby === undefined ? undefined : parseOrderList(opts.orderby) };
}

export function paging(opts: RestOptions): Paging {
  return { skip: opts.skip, top: opts.top };
}

/** The attributes an answer shows: the /a,b list of the URL and $attributes together. */
export function shape(listed: readonly string[] | undefined, opts: RestOptions): Shape {
  const attributes = listed || opts.attributes ? [...(listed ?? []), ...(opts.attributes ?? [])] : undefined;
  return { attributes, expand: opts.expand, asArray: opts.asArray };
}

/** The shape of a single-entity answer: $top, $skip, $orderby, $filter and $method=entityset would mean nothing there. */
export function entityShape(listed: readonly string[] | undefined, options: RestOptions): Shape {
  if (options.top !== undefined || options.skip > 0 || options.orderby !== undefined || options.filter !== undefined || options.method === 'entityset') {
    throw new DatasetError('INVALID_OPTION', '$top, $limit, $skip, $orderby, $filter and $method=entityset apply to collections, not to a single entity');
  }
  return shape(listed, pick(options, OPTION_RULES.readEntity));
}

/** A set as the request defines it: combined with another ($logicOperator), cleaned, rebuilt from saved options. */
function setRequest(id: string, options: RestOptions): SetRequest {
  const opts = pick(options, OPTION_RULES.readSet);
  if (opts.clean && opts.method !== 'entityset') throw new DatasetError('INVALID_OPTION', '$clean=true makes a new set: give $method=entityset with it');
  const saved = opts.savedFilter === undefined && opts.savedOrderby === undefined ? undefined : {
    filter: opts.savedFilter === undefined ? undefined : parseQuery(opts.savedFilter),
    orderBy: opts.savedOrderby === undefined ? undefined : parseOrderList(opts.savedOrderby),
    params: opts.params,
  };
  return { id, logic: opts.logic, clean: opts.clean, saved };
}

/** The attribute list of the trailing /attr1,attr2 segment, if any. */
export function attributeList(path: readonly PathSegment[]): string[] | undefined {
  if (path.length === 0) return undefined;
  if (path.length > 1 || path[0].kind !== 'names') {
    throw new DatasetError('MALFORMED_URL', `unexpected segments after the resource: only one attribute list (/attr1,attr2) can follow`);
  }
  return [...path[0].names];
}

/** Deferred URIs carry ?$expand=<relation>; once the relation is followed, that $expand is spent. */
function withoutExpand(opts: RestOptions, relation: string): RestOptions {
  if (!opts.expand) return opts;
  const expand = opts.expand.filter((e) => e !== relation);
  return { ...opts, expand: expand.length > 0 ? expand : undefined };
}

export function refuseMethod(method: RestMethod): never {
  if (method === 'update' || method === 'delete' || method === 'validate') {
    throw new DatasetError('METHOD_NOT_ALLOWED', `$method=${method} changes data: send it with POST`);
  }
  throw new DatasetError('OPTION_NOT_SUPPORTED', `$method=${method} is not supported here by this version of the server yet`);
}
