// The parts the planners (plan-dataclass.ts, plan-function.ts) build actions from: the entity a
// URL names, the $filter/$orderby narrowing, the page, the shape of an answer, the attribute
// list of a path. Each reads options already passed through their kind's rule (optionsFor).

import type { DataClassCore } from '../../datastore/index.js';
import bytes from 'bytes';
import { DatasetError } from '../../errors/dataset-error.js';
import { parseOrderList, parseQuery } from '../../query/parser.js';
import { attributeOf, kindOf } from '../../query/path.js';
import type { EntitySelector, Narrowing, Paging, RequestHeaders, Shape } from './action.js';
import type { RestMethod, RestOptions } from '../request/options.js';
import type { Scope } from '../scope/scope.js';
import type { PathSegment, Selector } from '../request/url.js';

/** `Company(1)`, `Company[1]` (the key checked when read), `Company:code(A1)` (the attribute resolved now). */
export function entitySelector(scope: Scope, dc: DataClassCore, selector: Exclude<Selector, { kind: 'all' }>): EntitySelector {
  if (selector.kind === 'key') return selector;
  const attr = attributeOf(dc.model, selector.attribute, scope.visible);
  if (attr.kind !== 'storage') throw new DatasetError('INVALID_VALUE', `${dc.name}:${attr.name}(…) needs a storage attribute; '${attr.name}' is ${kindOf(attr)}`);
  return { kind: 'attribute', attribute: attr, value: selector.value };
}

/**
 * $filter and $orderby parsed (a syntax error is answered before any data is read), with $params.
 * When both give an order, $orderby wins — except where `twoOrders` is 'refused' (a page or a new
 * set of a dataclass, where 4D refuses it too).
 */
export function narrowing(opts: RestOptions, twoOrders: 'refused' | 'orderby wins'): Narrowing {
  const filter = opts.filter === undefined ? undefined : parseQuery(opts.filter);
  if (twoOrders === 'refused' && filter && filter.orderBy.length > 0 && opts.orderby !== undefined) {
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
  return { attributes, expand: opts.expand, asArray: opts.asArray, ...(opts.format === 'looker' ? { format: 'looker' as const } : {}) };
}

/** The attribute list of the trailing /attr1,attr2 segment, if any. */
export function attributeList(path: readonly PathSegment[]): string[] | undefined {
  if (path.length === 0) return undefined;
  if (path.length > 1 || path[0].kind !== 'names') {
    throw new DatasetError('MALFORMED_URL', `unexpected segments after the resource: only one attribute list (/attr1,attr2) can follow`);
  }
  return [...path[0].names];
}

/** A $method a URL does not take: a write sent with GET, or a method not served there. */
export function refuseMethod(method: RestMethod): never {
  if (method === 'update' || method === 'delete' || method === 'validate') {
    throw new DatasetError('METHOD_NOT_ALLOWED', `$method=${method} changes data: send it with POST`);
  }
  // a method served elsewhere, asked of a resource that has no such thing: the client's mistake
  // (400), not a feature the server lacks (501)
  throw new DatasetError('INVALID_OPTION', `$method=${method} does not apply here: ${WHERE_METHOD_APPLIES[method]}`);
}

/** Where each $method that reads (or releases) applies, for the message of a refusal elsewhere. */
const WHERE_METHOD_APPLIES: Record<Exclude<RestMethod, 'update' | 'delete' | 'validate'>, string> = {
  entityset: 'it stores a selection, /rest/{dataClass}?$method=entityset (with $filter, $orderby) or /rest/{dataClass}/$entityset/{id}?$method=entityset',
  release: 'it releases a stored set, /rest/{dataClass}/$entityset/{id}?$method=release',
  subentityset: 'it stores the entities of a 1→N relation, /rest/{dataClass}({key})/{relation}?$method=subentityset, or pages a set, /rest/{dataClass}/$entityset/{id}?$method=subentityset',
  watch: 'it streams the changes of a query, an entity or an entity set, GET /rest/{dataClass}?$filter=…&$method=watch, /rest/{dataClass}({key})?$method=watch or /rest/{dataClass}/$entityset/{id}?$method=watch',
};

/** Deferred URIs carry ?$expand=<relation>; once the relation is followed, that $expand is spent. */
export function withoutExpand(opts: RestOptions, relation: string): RestOptions {
  if (!opts.expand) return opts;
  const expand = opts.expand.filter((e) => e !== relation);
  return { ...opts, expand: expand.length > 0 ? expand : undefined };
}

/**
 * An upload's head: refused before its body is read (and before Expect: 100-continue is answered)
 * when it announces more bytes than the server takes, or comes as a multipart form.
 */
export function checkUploadHead(headers: RequestHeaders, maxBytes: number): void {
  const announced = Number(headers['content-length'] ?? Number.NaN);
  if (announced > maxBytes) {
    throw new DatasetError('BODY_TOO_LARGE', `the upload is ${announced} bytes, more than the ${bytes.format(maxBytes, { unitSeparator: ' ' })} this server accepts (--max-upload-size)`);
  }
  // a form's envelope is not the file: storing it would corrupt the upload silently
  if (/^multipart\//i.test(String(headers['content-type'] ?? ''))) {
    throw new DatasetError('INVALID_BODY', 'the upload is the file\'s bytes as the request body, not a multipart form: send them as they are (curl --data-binary @file)');
  }
}

