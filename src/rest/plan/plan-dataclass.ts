// Planning /rest/{dataClass}…: which action a dataclass URL asks for — the contents of a picture
// or blob, a function call, a read (collection, entity, relation, set, computation) or a write
// ($method=update, validate, delete) — and the options of that action, read through its rule.

import { type DataClassCore, leadsTo } from '../../datastore/index.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { DataClassModel, StorageAttribute } from '../../model/types.js';
import { attributeOf } from '../../query/path.js';
import { parseOrderList, parseQuery } from '../../query/parser.js';
import type { Action, CollectionSource, RelationStep, SetRequest, Shape } from './action.js';
import { readIfMatch, type IfMatch } from '../request/etag.js';
import { logicWithoutSet, optionsFor } from './option-rules.js';
import type { RestOptions } from '../request/options.js';
import { strayAttributeFilter } from '../request/stray-parameters.js';
import { functionOf, planDataClassCall, planRelationCall } from './plan-function.js';
import { attributeList, checkUploadHead, entitySelector, narrowing, paging, refuseMethod, shape, withoutExpand } from './plan-parts.js';
import type { RestRequest } from './request.js';
import { dataClassFor, type Scope } from '../scope/scope.js';
import type { DataClassRoute, PathSegment, Selector } from '../request/url.js';

export function planDataClass(req: RestRequest, scope: Scope, route: DataClassRoute, options: RestOptions): Action {
  const dc = dataClassFor(scope, route.dataClass); // 7002 for a dataclass REST does not have, whatever the request
  const q = req.url.indexOf('?');
  const attributeParameter = q < 0 ? undefined : strayAttributeFilter(req.url.slice(q + 1), readDataClass(dc.model, route, scope), scope.visible);
  if (attributeParameter) throw attributeParameter; // ?lastName=Smith, which would otherwise answer every entity
  if (options.lock !== undefined) return planLock(req, scope, dc, route, options);
  const isRead = req.method === 'GET' || req.method === 'HEAD';
  const file = fileAttributeOf(dc, route, scope);
  if (file && isRead) return planReadFile(req, scope, dc, route, file, options);
  if (req.method === 'POST' && (options.rawPict || options.binary)) return planStoreFile(req, scope, dc, route, file, options);
  if (options.emMethod !== undefined) return planRelationCall(req, scope, dc, route, options);
  const call = setBeforeFunction(route);
  const fn = functionOf(scope, dc, call, req.method, options);
  if (fn !== undefined) return planDataClassCall(req, scope, dc, call, fn, options);
  const stray = route.path.find((s) => s.kind === 'call');
  if (stray) throw new DatasetError('MALFORMED_URL', `${stray.name}(…): a function with its parameters in the URL follows the dataclass or the entity, alone: /rest/${dc.name}/${stray.name}(…), /rest/${dc.name}({key})/${stray.name}(…)`);
  if (isRead && options.method === 'watch') return planWatch(req, scope, dc, route, options);
  if (isRead) return planRead(scope, dc, route, options);
  if (req.method === 'POST' && options.method !== undefined) return planWrite(req, dc, route, options);
  if (req.method === 'POST' && route.selector.kind === 'key' && route.path.length === 0) return planEntityPost(req, dc, route.selector.key, options);
  throw new DatasetError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here: read with GET; change data with POST and $method=update or $method=delete`);
}

/** The dataclass a read of the route answers entities of: the URL's, or the target of the relation it follows (Company(1)/staff). */
function readDataClass(model: DataClassModel, route: DataClassRoute, scope: Scope): DataClassModel {
  const [first] = route.path;
  if (first?.kind !== 'names' || first.names.length !== 1) return model;
  const attr = model.attributesByName.get(first.names[0]);
  return (attr && scope.visible(attr) && leadsTo(attr)?.target) || model;
}

/**
 * $lock=true / $lock=false on one entity: GET as 4D documents it, or POST (which the cross-site
 * guard covers); HEAD, which must change nothing, is refused, as is any target but one entity.
 */
function planLock(req: RestRequest, scope: Scope, dc: DataClassCore, route: DataClassRoute, options: RestOptions): Action {
  const usage = `$lock locks or unlocks one entity: /rest/${dc.name}({key})/?$lock=true (or false)`;
  if (req.method !== 'GET' && req.method !== 'POST') throw new DatasetError('METHOD_NOT_ALLOWED', `${req.method} cannot lock: ${usage}, with GET or POST`);
  if (route.selector.kind === 'all') throw new DatasetError('INVALID_OPTION', `${usage}; /rest/${dc.name}${route.path.length > 0 ? '/…' : ''} names no single entity`);
  if (route.path.length > 0) throw new DatasetError('MALFORMED_URL', `${usage}, with nothing after the entity`);
  const opts = optionsFor('lock', options);
  return { kind: 'lock', dc, selector: entitySelector(scope, dc, route.selector), lock: opts.lock as boolean };
}

/**
 * wakanda-client calls a selection function of a stored set as /rest/{dc}/$entityset/{id}/{fn}:
 * read as 4D's /rest/{dc}/{fn}/$entityset/{id}. (An attribute list cannot follow a set's id, so
 * the name there is a function's or a mistake.)
 */
function setBeforeFunction(route: DataClassRoute): DataClassRoute {
  const [first, second] = route.path;
  if (route.path.length !== 2 || first.kind !== 'entitySet' || (second.kind !== 'names' && second.kind !== 'call') || route.selector.kind !== 'all') return route;
  return { ...route, path: [second, first] };
}

/**
 * POST /rest/{dc}({key}) with an entity's values and no $method: an update of that entity (what
 * wakanda-client's media delete() sends, {"__KEY", "__STAMP", "photo": null}). A __KEY in the body
 * must be the URL's.
 */
function planEntityPost(req: RestRequest, dc: DataClassCore, key: string, options: RestOptions): Action {
  const body = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new DatasetError('INVALID_BODY', `a POST to /rest/${dc.name}(${key}) without $method updates that entity: its body is one JSON object of values (or call a function: /rest/${dc.name}(${key})/{function})`);
  }
  const given = (body as Record<string, unknown>).__KEY;
  if (given !== undefined && String(given) !== key) {
    throw new DatasetError('INVALID_BODY', `the body's __KEY ${JSON.stringify(given)} is not the key of the URL, ${dc.name}(${key})`);
  }
  const ifMatch = ifMatchOf(req, true);
  if ((body as Record<string, unknown>).__STAMP === undefined && ifMatch === undefined) {
    throw new DatasetError('INVALID_BODY', `a POST to /rest/${dc.name}(${key}) updates it: give the __STAMP it was read with (or its ETag in If-Match)`);
  }
  const opts = optionsFor('update', options);
  return { kind: 'update', dc, entities: [{ ...body, __KEY: given ?? key }], single: true, atomic: false, refresh: opts.refresh, shape: shape(undefined, opts), origin: req.origin, ifMatch };
}

/**
 * POST /rest/{dc}({key})/{attribute}?$rawPict=<type> (an image) or ?$binary=true (a blob): the
 * request body stored into that attribute of that entity, saved as an update without a stamp
 * (wakanda-client's media upload()). Anything else with these options is a mistake named here.
 */
function planStoreFile(req: RestRequest, scope: Scope, dc: DataClassCore, route: DataClassRoute, attribute: StorageAttribute | undefined, options: RestOptions): Action {
  const usage = `POST with $rawPict or $binary uploads a file: to /rest/$upload, or into an image or blob attribute of an entity, /rest/${dc.name}({key})/{attribute}`;
  if (route.selector.kind === 'all' || route.path.length !== 1 || route.path[0].kind !== 'names') throw new DatasetError('MALFORMED_URL', usage);
  if (!attribute) {
    const name = route.path[0].names.join(',');
    attributeOf(dc.model, name, scope.visible, 'the URL'); // unknown (1500) or not readable (7040)
    throw new DatasetError('INVALID_VALUE', `${dc.name}.${name} is no image or blob attribute: ${usage}`);
  }
  const opts = optionsFor('storeFile', options);
  if (opts.rawPict && opts.binary) throw new DatasetError('INVALID_OPTION', 'an upload is an image ($rawPict) or any other file ($binary=true), not both');
  const fileKind = opts.rawPict ? 'image' : 'binary';
  if ((attribute.type === 'image') !== (fileKind === 'image')) {
    throw new DatasetError('UPLOAD_WRONG_KIND', `${dc.name}.${attribute.name} is ${attribute.type === 'image' ? 'an image: upload it with $rawPict=true (or its MIME type)' : 'a blob: upload it with $binary=true'}`);
  }
  checkUploadHead(req.headers, scope.maxUploadBytes);
  return { kind: 'storeFile', dc, selector: entitySelector(scope, dc, route.selector), attribute, fileKind, shape: shape(undefined, opts) };
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
    // (wakanda-client pages a set with $method=subentityset: a read of the set, like none)
    if (options.method !== undefined && options.method !== 'entityset' && options.method !== 'release' && options.method !== 'subentityset') refuseMethod(options.method);
    if (options.method === 'release') return { kind: 'release', dc, id: seg.id, shape: shape(attributeList(route.path.slice(0, setAt)), optionsFor('release', options)) };
    return planCollection(dc, { kind: 'set', set: setRequest(seg.id, options) }, attributeList(route.path.slice(0, setAt)), options, 'readSet');
  }
  if (options.method !== undefined && options.method !== 'entityset' && options.method !== 'subentityset') refuseMethod(options.method);
  if (route.selector.kind === 'all') {
    if (options.method === 'subentityset') throw new DatasetError('INVALID_OPTION', '$method=subentityset stores the entities of a relation, /rest/{dataClass}({key})/{relation}?$method=subentityset, or pages a stored set, /rest/{dataClass}/$entityset/{id}?$method=subentityset');
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

/**
 * $method=watch (a GET): the changes of the entities a $filter selects (`/rest/{dc}`, every
 * entity without one), or of one entity (`/rest/{dc}({key})`), streamed; an attribute list in the
 * path or $attributes shapes each event as it shapes a read. Last-Event-ID names the stamp the
 * client has everything up to (what a browser's EventSource sends when it reconnects).
 */
function planWatch(req: RestRequest, scope: Scope, dc: DataClassCore, route: DataClassRoute, options: RestOptions): Action {
  // (HEAD would open a stream with no body to end it)
  if (req.method !== 'GET') throw new DatasetError('METHOD_NOT_ALLOWED', `$method=watch is asked with GET (an EventSource's request), not ${req.method}`);
  const opts = optionsFor('watch', options);
  const since = lastEventId(req.headers['last-event-id']);
  const setAt = route.path.findIndex((s) => s.kind === 'entitySet');
  if (setAt >= 0) {
    const seg = route.path[setAt] as Extract<PathSegment, { kind: 'entitySet' }>;
    if (route.selector.kind !== 'all' || setAt !== route.path.length - 1 || seg.id === '' || route.path.slice(0, setAt).some((s) => s.kind !== 'names')) {
      throw new DatasetError('MALFORMED_URL', `an entity set is watched as /rest/${dc.name}/$entityset/{id}?$method=watch, with an optional attribute list before $entityset`);
    }
    return { kind: 'watch', dc, target: { kind: 'set', id: seg.id, narrowing: narrowing(opts, 'refused') }, shape: shape(attributeList(route.path.slice(0, setAt)), opts), since };
  }
  if (route.path.some((s) => s.kind !== 'names')) throw new DatasetError('MALFORMED_URL', `$method=watch follows /rest/${dc.name} (with $filter), /rest/${dc.name}({key}) or /rest/${dc.name}/$entityset/{id}, with an optional attribute list: not a relation or a function`);
  const listed = attributeList(route.path);
  if (route.selector.kind === 'all') return { kind: 'watch', dc, target: { kind: 'query', narrowing: narrowing(opts, 'refused') }, shape: shape(listed, opts), since };
  if (opts.filter !== undefined) throw new DatasetError('INVALID_OPTION', `$filter narrows a collection: /rest/${dc.name}?$filter=…&$method=watch (one entity is watched without one)`);
  return { kind: 'watch', dc, target: { kind: 'entity', selector: entitySelector(scope, dc, route.selector) }, shape: shape(listed, opts), since };
}

/** Last-Event-ID: a stamp (a whole number the server sent as an event's id), or none. */
function lastEventId(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header[header.length - 1] : header;
  if (!/^\d{1,15}$/.test(text.trim())) throw new DatasetError('INVALID_HEADER', `Last-Event-ID ${JSON.stringify(text.slice(0, 40))} is not a stamp this server sent (a whole number): leave it out to start from now`);
  return Number(text.trim());
}

/** A collection read: a page, a stored set ($method=entityset), or a computation ($compute, $distinct) on it. */
function planCollection(dc: DataClassCore, source: CollectionSource, listed: string[] | undefined, options: RestOptions, kind: 'readCollection' | 'readSet' = 'readCollection'): Action {
  const unread = source.kind === 'set' ? undefined : logicWithoutSet(options, dc.name, `reads ${source.kind === 'all' ? 'the dataclass' : 'the entities of a relation'} (store them first with $method=entityset)`);
  if (unread) throw new DatasetError('INVALID_OPTION', unread);
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
    // a page of a set takes $orderby over the order of its $filter (as 4D does); $method=subentityset
    // takes $subOrderby as its order too, and with a $filter or an order stores the set it makes,
    // for the pages that follow to read
    const sub = opts.method === 'subentityset';
    if (opts.subOrderby !== undefined && (!sub || opts.orderby !== undefined)) {
      throw new DatasetError('INVALID_OPTION', sub ? 'the order is given twice: in $orderby and in $subOrderby; keep one' : '$subOrderby orders a $method=subentityset; a set is ordered with $orderby');
    }
    const ordered = sub && opts.subOrderby !== undefined ? { ...opts, orderby: opts.subOrderby } : opts;
    const store = opts.method === 'entityset' || (sub && (ordered.filter !== undefined || ordered.orderby !== undefined));
    return { kind: 'readSet', dc, set, narrowing: narrowing(ordered, 'orderby wins'), paging: paging(opts), shape: collectionShape(listed, opts), store, timeoutS: opts.timeout };
  }
  if (options.method === 'entityset') {
    const opts = optionsFor('createSet', options);
    return { kind: 'createSet', dc, source, narrowing: narrowing(opts, 'refused'), paging: paging(opts), shape: shape(listed, opts), timeoutS: opts.timeout };
  }
  const opts = optionsFor('readCollection', options);
  return { kind: 'readCollection', dc, source, narrowing: narrowing(opts, 'refused'), paging: paging(opts), shape: collectionShape(listed, opts), plan: { queryplan: opts.queryplan, querypath: opts.querypath } };
}

/** The shape of a collection or set read: with $format=csv or ndjson (or Accept: text/csv), an export of every entity selected (handlers/export.ts). */
function collectionShape(listed: string[] | undefined, opts: RestOptions): Shape {
  const made = shape(listed, opts);
  return opts.format === 'csv' || opts.format === 'ndjson' ? { ...made, format: opts.format } : made;
}

/** $method=subentityset: the related entities stored as a set, sorted by $subOrderby (its only order; $filter does not apply). */
function subEntitySet(dc: DataClassCore, step: RelationStep, listed: string[] | undefined, options: RestOptions): Action {
  const opts = optionsFor('createSet', options);
  const orderBy = opts.subOrderby === undefined ? undefined : parseOrderList(opts.subOrderby);
  return { kind: 'createSet', dc, source: { kind: 'related', step }, narrowing: { params: [], orderBy }, paging: paging(opts), shape: shape(listed, opts), timeoutS: opts.timeout };
}

/** An update's or a delete's If-Match, read (RFC 9110 §13.1.1: in place of the body's __STAMP, and naming the entity too), or undefined without one. */
function ifMatchOf(req: RestRequest, single: boolean): IfMatch | undefined {
  const header = req.headers['if-match'];
  if (header === undefined) return undefined;
  if (!single) throw new DatasetError('INVALID_HEADER', 'If-Match names the version of one entity: it applies to an update whose body is one entity, not a list (give each entity its __STAMP)');
  return readIfMatch(Array.isArray(header) ? header.join(',') : header);
}

function planWrite(req: RestRequest, dc: DataClassCore, route: DataClassRoute, options: RestOptions): Action {
  switch (options.method) {
    case 'update':
    case 'validate': {
      if (route.selector.kind !== 'all' || route.path.length > 0) {
        throw new DatasetError('MALFORMED_URL', `$method=${options.method} is posted to the dataclass (/rest/${dc.name}), with the keys in the body`);
      }
      const { list, single } = inputs(req.body);
      if (options.method === 'validate') return { kind: 'validate', dc, entities: list, single };
      const opts = optionsFor('update', options);
      return { kind: 'update', dc, entities: list, single, atomic: opts.atomic, refresh: opts.refresh, shape: shape(undefined, opts), origin: req.origin, ifMatch: ifMatchOf(req, single) };
    }
    case 'delete':
      return planDelete(req, dc, route, optionsFor('delete', options));
    default:
      throw new DatasetError('METHOD_NOT_ALLOWED', `$method=${options.method} is read with GET; POST takes $method=update, validate or delete`);
  }
}

/** $method=delete on an entity, on an entity set, or on every entity a $filter selects. */
function planDelete(req: RestRequest, dc: DataClassCore, route: DataClassRoute, opts: RestOptions): Action {
  const [first] = route.path;
  if (route.selector.kind === 'all' && route.path.length === 1 && first.kind === 'entitySet' && first.id !== '') return { kind: 'deleteSet', dc, id: first.id };
  if (route.path.length > 0) throw new DatasetError('MALFORMED_URL', `$method=delete applies to /rest/${dc.name}(key) or to /rest/${dc.name}?$filter=…, without a path after it`);
  if (route.selector.kind === 'key') return { kind: 'delete', dc, target: { kind: 'entity', selector: route.selector, ifMatch: ifMatchOf(req, true) } };
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

