// The REST request path, stage by stage: the caller's scope, the request target read (URL grammar
// and $-options), the action planned (what is asked, with the options its kind accepts), the
// action authorized (what the session may ask of it), the action run (a handler, through the
// datastore, which checks every read and write again), one response. Every request takes it, uploads
// and the Expect: 100-continue check included.

import type { IncomingMessage } from 'node:http';
import { DatasetError } from '../errors/dataset-error.js';
import { runAsCaller } from '../datastore/caller.js';
import type { Session } from '../datastore/sessions.js';
import type { Action, ActionKind } from './action.js';
import { authorize } from './authorize.js';
import { checkUploadHead } from './plan-parts.js';
import { isAttributeUpload, isUploadTarget, planRequest, readTarget, type RestRequest } from './request.js';
import type { RestResponse } from './response.js';
import { run } from './run.js';
import { scopeFor, type RestCore, type Services } from './scope.js';

export interface IncomingRest extends RestRequest {
  /** the client's address */
  readonly caller: string;
  /** the request's web session (from its cookie, or a new guest one) */
  readonly session: Session;
  readonly socketFd?: number;
  /** the request itself: an upload's bytes are read from it */
  readonly raw: IncomingMessage;
  /** the request's id (X-Request-Id, or the server's own) */
  readonly id?: string;
  /** the body is a file's bytes, left unread for an upload's handler ($upload, or $rawPict / $binary in the query) */
  readonly rawBody?: boolean;
}

export async function handleRest(services: Services, req: IncomingRest): Promise<RestResponse> {
  const scope = scopeFor(services, { method: req.method, url: req.url, caller: req.caller, headers: req.headers, socketFd: req.socketFd, id: req.id }, req.session);
  const target = readTarget(req.method, req.url, services.maxPageSize);
  // $rawPict or $binary made it an upload, its body unread: anything else would run without its body
  if (req.rawBody && target.route.kind !== 'upload' && target.route.kind !== 'dataClass') throw notAnUpload();
  const action = planRequest(req, scope, target);
  planned.set(req.raw, action.kind);
  refuseUnevaluatedPreconditions(req, action);
  if (req.rawBody && action.kind !== 'upload' && action.kind !== 'storeFile') throw notAnUpload();
  // (the route constraint and the options read the query string alike: an upload whose body a JSON parser took is a bug, said so)
  if (!req.rawBody && action.kind === 'storeFile') throw new DatasetError('INTERNAL', 'an upload into an attribute came by the JSON route');
  authorize(action, scope);
  // writes run the dataclasses' events, and reads their entity classes and calculated attributes: user code, which
  // runs as its caller (a function runs so through invoke). A project without such code reads
  // outside the caller's context: on Node 20 an active AsyncLocalStorage costs every promise.
  if (RUNS_EVENTS.has(action.kind) || readsRunUserCode(services.core)) return runAsCaller({ access: scope.access, session: scope.session, requestId: req.id }, () => run(action, scope, req.raw));
  return run(action, scope, req.raw);
}

/** The methods a REST URL may be asked with (HEAD goes with GET, OPTIONS with all). */
const REST_VERBS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * The methods the REST API takes at `url` for this session, found by planning the request with
 * each (nothing is read or run): what OPTIONS and a 405's Allow list (RFC 9110 §9.3.7, §15.5.6).
 * A method the planner refuses as such (405) is left out; one it refuses for what the request
 * holds (a missing body, an option, a permission) is the URL's all the same. Where no method
 * plans because the URL names nothing (an unknown dataclass or function), that refusal is thrown:
 * OPTIONS answers it, 404, as a GET would.
 */
export function allowedRestMethods(services: Services, request: { url: string; caller: string; id?: string }, session: Session): string[] {
  // (the target reads alike for every method: one that does not read is refused as it is, 400)
  const target = readTarget('GET', request.url, services.maxPageSize);
  const allowed: string[] = [];
  let missing: DatasetError | undefined;
  for (const method of REST_VERBS) {
    const req = { method, url: request.url, headers: {}, origin: '' };
    try {
      planRequest(req, scopeFor(services, { ...req, caller: request.caller, id: request.id }, session), { ...target, method });
      allowed.push(method);
    } catch (e) {
      if (!(e instanceof DatasetError)) throw e;
      if (e.code === 'METHOD_NOT_ALLOWED') continue;
      if (e.status === 404) {
        missing ??= e;
        continue;
      }
      allowed.push(method);
    }
  }
  if (allowed.length === 0 && missing) throw missing;
  return allowed.includes('GET') ? ['GET', 'HEAD', ...allowed.slice(1), 'OPTIONS'] : [...allowed, 'OPTIONS'];
}

/** The kind of action each request in flight was planned as (what the metrics count it by). */
const planned = new WeakMap<IncomingMessage, ActionKind>();

/** What a request was planned as; undefined when it was refused before (a bad URL, an unknown dataclass). */
export function plannedKind(raw: IncomingMessage): ActionKind | undefined {
  return planned.get(raw);
}

/**
 * A write carrying a precondition it would not evaluate is refused rather than run as if it had
 * none (RFC 9110 §13.1: a false precondition must stop the method): If-Match is taken by an update
 * of one entity only, If-None-Match by reads only.
 */
function refuseUnevaluatedPreconditions(req: IncomingRest, action: Action): void {
  if (req.method === 'GET' || req.method === 'HEAD') return;
  const takesIfMatch = action.kind === 'update' || (action.kind === 'delete' && action.target.kind === 'entity');
  const header = req.headers['if-none-match'] !== undefined ? 'If-None-Match' : req.headers['if-match'] !== undefined && !takesIfMatch ? 'If-Match' : undefined;
  if (header) throw new DatasetError('INVALID_HEADER', `${header} is not evaluated on this request (${action.kind}): If-Match is taken by an update or a delete of one entity ($method=update, POST /rest/{dataClass}({key}), /rest/{dataClass}({key})?$method=delete), If-None-Match by a GET; send the request without it`);
}

function notAnUpload(): DatasetError {
  return new DatasetError('INVALID_OPTION', 'a POST with $rawPict or $binary uploads a file: to /rest/$upload, or into an image or blob attribute of an entity, /rest/{dataClass}({key})/{attribute}');
}

const runsUserCode = new WeakMap<RestCore, boolean>();

/** Reading some dataclass runs user code (an entity class, a calculated attribute): found once, at the first request (the classes are loaded by then). */
function readsRunUserCode(core: RestCore): boolean {
  let runs = runsUserCode.get(core);
  if (runs === undefined) {
    runs = core.model.dataClasses.some((dc) => core.classOf(dc).readsRunUserCode);
    runsUserCode.set(core, runs);
  }
  return runs;
}

/** The kinds of action that save or drop entities, so run entity events. */
const RUNS_EVENTS: ReadonlySet<ActionKind> = new Set(['update', 'validate', 'delete', 'deleteSet', 'storeFile']);

/**
 * Expect: 100-continue: an upload the stage refuses from its head alone (its options, its
 * announced size) is answered before its body is sent; any other request goes on (its errors, if
 * any, are answered once its body has arrived, as usual).
 */
export function refusedBeforeBody(services: Services, raw: IncomingMessage, caller: string): DatasetError | undefined {
  const req = { method: raw.method ?? 'GET', url: raw.url ?? '', headers: raw.headers, origin: '' };
  const intoAttribute = req.method === 'POST' && isAttributeUpload(req.url);
  if (!intoAttribute && !isUploadTarget(req.url)) return undefined;
  try {
    // (the head alone: the session is not read yet; a guest's scope plans an upload, whose plan
    // reads no data, and only the target and the size of an upload into an attribute are checked)
    if (intoAttribute) {
      readTarget(req.method, req.url, services.maxPageSize);
      checkUploadHead(req.headers, services.maxUploadBytes);
    } else planRequest(req, scopeFor(services, { ...req, caller }, services.core.sessions.guest()));
    return undefined;
  } catch (e) {
    // any refusal of an upload's head, a bad option as much as a size past the limit (anything
    // else is no refusal: the request goes on, and the usual path answers it)
    return e instanceof DatasetError ? e : undefined;
  }
}
