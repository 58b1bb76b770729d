// The stage that decides what a request is: (method, URL, headers, body) → a typed Action, or a
// DatasetError before any data is read. Every request passes here — reads, writes, function
// calls, uploads (whose body is still arriving) and the Expect: 100-continue check — so that the
// URL grammar, the $-options and what each kind accepts are read in one place.

import { MAX_UPLOAD_TIMEOUT_S, DEFAULT_UPLOAD_TIMEOUT_S, MAX_URL_LENGTH } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { Action, RequestHeaders } from './action.js';
import { REST_PREFIX } from '../request/constants.js';
import { checkFormat, optionsFor } from './option-rules.js';
import { givesUpload, parseOptions, type RestOptions } from '../request/options.js';
import { planDataClass } from './plan-dataclass.js';
import { planAdmin } from './plan-admin.js';
import { planDirectory } from './plan-directory.js';
import { openapiFormat } from '../request/openapi-format.js';
import { checkUploadHead } from './plan-parts.js';
import { planDatastoreCall, isDatastoreCall, planSingletonCall } from './plan-function.js';
import { dataClassFor, type Scope } from '../scope/scope.js';
import { parseRestPath, type Route } from '../request/url.js';

/** A request as the stage reads it. */
export interface RestRequest {
  readonly method: string;
  /** the request target as received: /rest/…?… */
  readonly url: string;
  readonly headers: RequestHeaders;
  /** the parsed JSON body (undefined when none); an upload's bytes are read by its handler */
  readonly body?: unknown;
  /** scheme and host the client used (http://127.0.0.1:8080), for the absolute uri of saved entities */
  readonly origin: string;
}

/** The request target read: its route and options, checked before any body is read. */
export interface Target {
  readonly method: string;
  readonly route: Route;
  readonly options: RestOptions;
}

/** Reads the path and the query string (URL length, grammar, option values). */
export function readTarget(method: string, url: string, maxPageSize?: number): Target {
  if (url.length > MAX_URL_LENGTH) throw new DatasetError('LIMIT_EXCEEDED', `the URL is ${url.length} characters long; at most ${MAX_URL_LENGTH} are read`);
  const q = url.indexOf('?');
  const route = parseRestPath(url.slice(REST_PREFIX.length, q < 0 ? undefined : q));
  return { method, route, options: parseOptions(q < 0 ? '' : url.slice(q + 1), maxPageSize) };
}

/** A query string that makes a POST an upload into an entity's attribute (its body read raw: $rawPict or $binary given true); false for /rest/$upload, whose own route reads it. */
export function isAttributeUpload(url: string): boolean {
  const q = url.indexOf('?');
  return q >= 0 && givesUpload(url.slice(q + 1)) && !isUploadTarget(url);
}

/** Whether a request target is /rest/$upload, whatever its options (false for a path that does not parse). */
export function isUploadTarget(url: string): boolean {
  if (!url.startsWith(`${REST_PREFIX}/`)) return false;
  const q = url.indexOf('?');
  try {
    return parseRestPath(url.slice(REST_PREFIX.length, q < 0 ? undefined : q)).kind === 'upload';
  } catch {
    return false;
  }
}

/** The action a request asks for. */
export function planRequest(req: RestRequest, scope: Scope, target: Target = readTarget(req.method, req.url, scope.services.maxPageSize)): Action {
  const accepted = acceptedExport(req, target.options);
  const action = planTarget(req, scope, accepted === undefined ? target : { ...target, options: { ...target.options, format: accepted } });
  checkFormat(action.kind, target.options);
  return action;
}

/**
 * A GET without $format whose Accept ranks text/csv (or application/x-ndjson) above JSON (RFC 9110
 * §12.5.1; a tie goes to the type listed first): an export, as $format=csv would ask. Where the
 * request is no collection read, the preference is ignored (option-rules.ts checkFormat).
 */
function acceptedExport(req: RestRequest, options: RestOptions): 'csv' | 'ndjson' | undefined {
  if (options.given.has('$format') || (req.method !== 'GET' && req.method !== 'HEAD')) return undefined;
  const header = req.headers.accept;
  const text = Array.isArray(header) ? header.join(',') : header;
  // (most requests name neither)
  if (text === undefined || !/csv|ndjson/i.test(text)) return undefined;
  let best: { format: 'csv' | 'ndjson' | 'json'; q: number } | undefined;
  for (const range of text.split(',')) {
    const [type, ...params] = range.split(';');
    const t = type.trim().toLowerCase();
    const format = t === 'text/csv' ? 'csv' : t === 'application/x-ndjson' || t === 'application/ndjson' ? 'ndjson' : t === 'application/json' ? 'json' : undefined;
    if (format === undefined) continue;
    const qParam = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (q > 0 && (best === undefined || q > best.q)) best = { format, q };
  }
  return best === undefined || best.format === 'json' ? undefined : best.format;
}

function planTarget(req: RestRequest, scope: Scope, target: Target): Action {
  const { route, options } = target;
  const isRead = req.method === 'GET' || req.method === 'HEAD';
  switch (route.kind) {
    case 'catalogItem':
      // /rest/$catalog/{name}: a dataclass's description, or a call of a DataStore class function
      if (isDatastoreCall(scope, route.name, isRead)) return planDatastoreCall(req, scope, route.name, options);
      onlyGet(req, 'the catalog');
      return { kind: 'catalogDataClass', dc: dataClassFor(scope, route.name) };
    case 'catalog':
    case 'catalogAll':
      onlyGet(req, 'the catalog');
      return { kind: 'catalog', all: route.kind === 'catalogAll' };
    case 'queryPath':
      onlyGet(req, '$querypath');
      return { kind: 'queryPath' };
    case 'info':
      onlyGet(req, '$info');
      return { kind: 'info' };
    case 'openapi':
      onlyGet(req, '$openapi');
      return { kind: 'openapi', format: openapiFormat(req.url) };
    case 'releaseSets':
      if (req.method !== 'POST') throw new DatasetError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on $entityset/$release: POST the ids`);
      return { kind: 'releaseSets', ids: releaseIds(req.body) };
    case 'upload':
      if (req.method !== 'POST') throw new DatasetError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on $upload: POST the file's bytes, with $rawPict=true (an image) or $binary=true`);
      return planUpload(options, req.headers, scope.maxUploadBytes);
    case 'directory':
      optionsFor('directory', options);
      return planDirectory(req, route.name);
    case 'admin':
      optionsFor('admin', options);
      return planAdmin(req, route.resource, route.name);
    case 'singleton':
      return planSingletonCall(req, scope, route.className, route.fn, options);
    case 'dataClass':
      return planDataClass(req, scope, route, options);
    default: {
      const never: never = route;
      return never;
    }
  }
}

function onlyGet(req: RestRequest, what: string): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') throw new DatasetError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${what}: use GET`);
}

/** POST /rest/$entityset/$release takes a JSON array of entity set ids. */
function releaseIds(body: unknown): string[] {
  if (!Array.isArray(body) || body.some((id) => typeof id !== 'string')) {
    throw new DatasetError('INVALID_BODY', 'POST /rest/$entityset/$release takes a JSON array of entity set ids, like ["9718A30BF61343C796345F3BE5B01CE7"]');
  }
  return body as string[];
}

/**
 * POST /rest/$upload?$rawPict=true (an image) or ?$binary=true (any file): decided from the
 * target and the headers alone, so that an upload announced past the limit is refused before its
 * body is read (and before Expect: 100-continue is answered).
 */
function planUpload(given: RestOptions, headers: RequestHeaders, maxBytes: number): Action {
  const opts = optionsFor('upload', given);
  checkUploadHead(headers, maxBytes);
  const timeoutS = opts.timeout ?? DEFAULT_UPLOAD_TIMEOUT_S;
  if (timeoutS > MAX_UPLOAD_TIMEOUT_S) throw new DatasetError('LIMIT_EXCEEDED', `$timeout=${timeoutS}: an upload waits at most ${MAX_UPLOAD_TIMEOUT_S} seconds (a day) to be attached`);
  return { kind: 'upload', fileKind: opts.rawPict ? 'image' : 'binary', timeoutS };
}
