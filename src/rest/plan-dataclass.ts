// Planning /rest/{dataClass}…: which action a dataclass URL asks for — the contents of a picture
// or blob, a function call, a read (collection, entity, relation, set, computation) or a write
// ($method=update, validate, delete) — and the options of that action, read through its rule.

import type { DataClassCore } from '../datastore/dataclass-core.js';
import { DatasetError } from '../errors/dataset-error.js';
import type { StorageAttribute } from '../model/types.js';
import { parseOrderList, parseQuery } from '../query/parser.js';
import { leadsTo } from '../datastore/projection.js';
import type { Action, CollectionSource, RelationStep, SetRequest } from './action.js';
import { optionsFor } from './option-rules.js';
import type { RestOptions } from './options.js';
import { functionOf, planDataClassCall } from './plan-function.js';
import { attributeList, entitySelector, narrowing, paging, refuseMethod, shape } from './plan-parts.js';
import type { RestRequest } from './request.js';
import { dataClassFor, type Scope } from './scope.js';
import type { DataClassRoute, PathSegment, Selector } from './url.js';

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
  const opts = optionsFor('readFile', options);
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
    if (options.method === 'release') return { kind: 'release', dc, id: seg.id, shape: shape(attributeList(route.path.slice(0, setAt)), optionsFor('release', options)) };
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
    // a relation the session may not follow is refused, not read as an attribute list
    const denied = attr && !scope.visible(attr) && leadsTo(attr) ? scope.visible.denied?.(attr) : undefined;
    if (denied) throw denied;
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
      return { kind: 'readRelation', dc: target, step, shape: shape(attributeList(rest), optionsFor('readRelation', spent)) };
    }
  }
  return { kind: 'readEntity', dc, selector, shape: shape(attributeList(route.path), optionsFor('readEntity', options)) };
}

/** A collection read: a page, a stored set ($method=entityset), or a computation ($compute, $distinct) on it. */
function planCollection(dc: DataClassCore, source: CollectionSource, listed: string[] | undefined, options: RestOptions, kind: 'readCollection' | 'readSet' = 'readCollection'): Action {
  if (options.compute !== undefined || options.distinct) {
    const computed = options.compute !== undefined ? 'compute' : 'distinct';
    const opts = optionsFor(computed, options);
    if (!listed || listed.length !== 1) throw new DatasetError('INVALID_OPTION', `$${computed} needs exactly one attribute in the path: /rest/${dc.name}/{attribute}?$${computed}=…`);
    // (an order means nothing to a computation: one in $filter and $orderby is not refused)
    if (opts.compute !== undefined) return { kind: 'compute', dc, source, narrowing: narrowing(opts, 'orderby wins'), attribute: listed[0], keyword: opts.compute };
    return { kind: 'distinct', dc, source, narrowing: narrowing(opts, 'orderby wins'), attribute: listed[0], paging: paging(opts) };
  }
  if (kind === 'readSet') {
    const opts = optionsFor('readSet', options);
    const set = (source as Extract<CollectionSource, { kind: 'set' }>).set;
    // a page of a set takes $orderby over the order of its $filter (as 4D does)
    return { kind: 'readSet', dc, set, narrowing: narrowing(opts, 'orderby wins'), paging: paging(opts), shape: shape(listed, opts), store: opts.method === 'entityset', timeoutS: opts.timeout };
  }
  if (options.method === 'entityset') {
    const opts = optionsFor('createSet', options);
    return { kind: 'createSet', dc, source, narrowing: narrowing(opts, 'refused'), paging: paging(opts), shape: shape(listed, opts), timeoutS: opts.timeout };
  }
  const opts = optionsFor('readCollection', options);
  return { kind: 'readCollection', dc, source, narrowing: narrowing(opts, 'refused'), paging: paging(opts), shape: shape(listed, opts), plan: { queryplan: opts.queryplan, querypath: opts.querypath } };
}

/** $method=subentityset: the related entities stored as a set, sorted by $subOrderby (its only order; $filter does not apply). */
function subEntitySet(dc: DataClassCore, step: RelationStep, listed: string[] | undefined, options: RestOptions): Action {
  const opts = optionsFor('createSet', options);
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
      const opts = optionsFor('update', options);
      return { kind: 'update', dc, entities: list, single, atomic: opts.atomic, refresh: opts.refresh, shape: shape(undefined, opts), origin: req.origin };
    }
    case 'delete':
      return planDelete(dc, route, optionsFor('delete', options));
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

/** A set as the request defines it: combined with another ($logicOperator), cleaned, rebuilt from saved options. */
function setRequest(id: string, options: RestOptions): SetRequest {
  const opts = optionsFor('readSet', options);
  const saved = opts.savedFilter === undefined && opts.savedOrderby === undefined ? undefined : {
    filter: opts.savedFilter === undefined ? undefined : parseQuery(opts.savedFilter),
    orderBy: opts.savedOrderby === undefined ? undefined : parseOrderList(opts.savedOrderby),
    params: opts.params,
  };
  return { id, logic: opts.logic, clean: opts.clean, saved };
}

/** Deferred URIs carry ?$expand=<relation>; once the relation is followed, that $expand is spent. */
function withoutExpand(opts: RestOptions, relation: string): RestOptions {
  if (!opts.expand) return opts;
  const expand = opts.expand.filter((e) => e !== relation);
  return { ...opts, expand: expand.length > 0 ? expand : undefined };
}
