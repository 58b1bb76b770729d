// The REST request path, stage by stage: the caller's scope, the request target read (URL grammar
// and $-options), the action planned (what is asked, with the options its kind accepts), the
// action authorized (what the session may ask of it), the action run (a handler, through the
// datastore, which checks every read and write again), one response. Every request takes it, uploads
// and the Expect: 100-continue check included.

import type { IncomingMessage } from 'node:http';
import { DatasetError } from '../errors/dataset-error.js';
import { runAsCaller, type Session } from '../datastore/index.js';
import type { Action, ActionKind } from './plan/action.js';
import { authorize } from './plan/authorize.js';
import { checkUploadHead } from './plan/plan-parts.js';
import { isAttributeUpload, isUploadTarget, planRequest, readTarget, type RestRequest } from './plan/request.js';
import { readIfMatch } from './request/etag.js';
import type { RestResponse } from './present/response.js';
import { run } from './run/run.js';
import { keepAnswer, keepsAnswer, keptAnswer, lookUpAnswer } from './run/kept-answers.js';
import { scopeFor, type RestCore, type Scope, type Services } from './scope/scope.js';

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
  /** a GET from the web page of another origin, in words (http-guards.ts foreignPage): refused if it changes something */
  readonly foreignPage?: string;
}

export async function handleRest(services: Services, req: IncomingRest): Promise<RestResponse> {
  const scope = scopeFor(services, { method: req.method, url: req.url, caller: req.caller, headers: req.headers, socketFd: req.socketFd, id: req.id }, req.session);
  try {
    return await planAndRun(services, req, scope);
  } catch (e) {
    // (an answer made and then not sent — a 412 of If-Match, a failed snapshot release — lets go of what it reserved)
    services.answers.releaseOpenedFor(scope.request);
    throw e;
  }
}

/** What handleRest does: plans the request, refuses what it may not do, runs it. */
async function planAndRun(services: Services, req: IncomingRest, scope: Scope): Promise<RestResponse> {
  // a read asked again while the data stands still, by a caller who sees the same: answered from
  // memory, unplanned (scope/answer-cache: what is kept, and how long)
  const lookup = lookUpAnswer(services, req, scope, readsRunUserCode(services.core));
  const kept = lookup && keptAnswer(lookup);
  if (kept) {
    planned.set(req.raw, kept.action);
    return kept.response;
  }
  const target = readTarget(req.method, req.url, services.maxPageSize);
  // $rawPict or $binary made it an upload, its body unread: anything else would run without its body
  if (req.rawBody && target.route.kind !== 'upload' && target.route.kind !== 'dataClass') throw notAnUpload();
  refuseDatePreconditions(req);
  const action = planRequest(req, scope, target);
  refuseUnsafeHead(req.method, action);
  if (req.foreignPage !== undefined) refuseForeignEffect(action, req.foreignPage);
  planned.set(req.raw, action.kind);
  refuseUnevaluatedPreconditions(req, action);
  if (req.rawBody && action.kind !== 'upload' && action.kind !== 'storeFile') throw notAnUpload();
  // (the route constraint and the options read the query string alike: an upload whose body a JSON parser took is a bug, said so)
  if (!req.rawBody && action.kind === 'storeFile') throw new DatasetError('INTERNAL', 'an upload into an attribute came by the JSON route');
  authorize(action, scope);
  // writes run the dataclasses' events, and reads their entity classes and calculated attributes: user code, which
  // runs as its caller (a function runs so through invoke). A project without such code reads
  // outside the caller's context: on Node 20 an active AsyncLocalStorage costs every promise.
  // (a write whose dataclasses run no user code — no event, no calculated set, no entity class — likewise)
  const answer = (RUNS_EVENTS.has(action.kind) && writesRunUserCode(services.core)) || readsRunUserCode(services.core) ? runAsCaller({ access: scope.access, session: scope.session, requestId: req.id }, () => run(action, scope, req.raw)) : run(action, scope, req.raw);
  // a read of one entity with If-Match: answered only when the entity is the one the tag names (the read changes nothing: it is made, then judged)
  const ifMatch = action.kind === 'readEntity' ? req.headers['if-match'] : undefined;
  if (lookup && keepsAnswer(action)) return keepAnswer(lookup, action, await answer);
  return ifMatch === undefined ? answer : readIfMatched(await answer, ifMatch);
}

/**
 * If-Match on a GET (or HEAD) of one entity (RFC 9110 §13.1.1): the answer when the tag names
 * the entity as it is now — its stamp and which entity, which life of it, as an update reads
 * If-Match (etag.ts readIfMatch; the view after them says how it was shown, not which version,
 * so a tag read through other $attributes matches too) — else 412 with a stale stamp's __ERROR.
 */
function readIfMatched(response: RestResponse, header: string | string[]): RestResponse {
  const held = readIfMatch(Array.isArray(header) ? header.join(',') : header);
  const tag = response.kind === 'file' ? undefined : response.etag;
  // (an answer without a tag is no entity's: an error, answered as it is)
  if (held === '*' || tag === undefined || response.status !== 200) return response;
  const current = readIfMatch(tag.startsWith('W/') ? tag.slice(2) : tag);
  if (current !== '*' && current.stamp === held.stamp && (held.identity === undefined || held.identity === current.identity)) return response;
  throw new DatasetError('STAMP_CHANGED', `If-Match ${JSON.stringify(Array.isArray(header) ? header.join(',') : header).slice(0, 100)} does not name the entity as it is now (its ETag is ${tag}): read it again without If-Match`, [], { status: 412 });
}

/** The methods a REST URL may be asked with (OPTIONS goes with all; HEAD is planned as itself: it is refused where GET has side effects). */
const REST_VERBS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

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
      refuseUnsafeHead(method, planRequest(req, scopeFor(services, { ...req, caller: request.caller, id: request.id }, session), { ...target, method }));
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
  return [...allowed, 'OPTIONS'];
}

/**
 * HEAD is safe (RFC 9110 §9.2.1, §9.3.2): it answers GET's headers and changes nothing. A GET
 * that changes something — logs out, stores or releases an entity set (counted against the
 * session's quota, or again from $savedfilter), calls user code (an @onHttpGet function may
 * write), locks, records the caller's query path ($querypath) — is refused with HEAD, 405, and HEAD is left out of its Allow.
 * (A HEAD keeps the session, and a set it reads, alive as a GET does: any request does.)
 */
function refuseUnsafeHead(method: string, action: Action): void {
  if (method !== 'HEAD') return;
  const effect = sideEffectOf(action);
  if (effect !== undefined) throw new DatasetError('METHOD_NOT_ALLOWED', `HEAD is not allowed here: it must change nothing, and this request ${effect}; use GET (or POST)`);
}

/**
 * A GET that changes something, from the web page of another origin (a link, an image, a form
 * of another site: the session's SameSite=Lax cookie goes with a top-level navigation, and with
 * everything a page of the same site sends), is refused: 4D's protocol has these GETs
 * (docs/decisions.md lists them), its clients send them from the API's own pages or without a
 * browser, and those still work; a GET that changes nothing is answered whoever asks (another
 * origin's page cannot read the answer).
 */
function refuseForeignEffect(action: Action, page: string): void {
  const effect = sideEffectOf(action);
  if (effect !== undefined) throw new DatasetError('CROSS_SITE_REFUSED', `this GET ${effect}, and it came from ${page}: a request that changes something is taken only from the server's own pages, a --cors-origin's, or a client without a browser`);
}

/** (a set read with $savedfilter / $savedorderby is stored again under its id when it has gone: collections.ts rebuild) */
const REBUILDS = 'stores the entity set again when it has gone ($savedfilter, $savedorderby)';

/** What a read-method request changes, in words; undefined when it changes nothing. */
function sideEffectOf(action: Action): string | undefined {
  switch (action.kind) {
    case 'catalog':
    case 'catalogDataClass':
    case 'info':
    case 'openapi':
    case 'queryPath':
    case 'readEntity':
    case 'readRelation':
    case 'readFile':
      return undefined;
    case 'watch':
      return 'holds a watch stream open in the session\'s name';
    case 'compute':
    case 'distinct':
      return action.source.kind === 'set' && action.source.set.saved ? REBUILDS : undefined;
    case 'readCollection':
      if (action.source.kind === 'set' && action.source.set.saved) return REBUILDS;
      return action.plan.querypath ? 'records the query path ($querypath=true) that /rest/$querypath answers' : undefined;
    case 'readSet':
      return action.store ? 'stores an entity set' : action.set.saved ? REBUILDS : undefined;
    case 'createSet':
      return 'stores an entity set ($method=entityset, subentityset)';
    case 'release':
      return 'releases an entity set';
    case 'callFunction':
      return 'calls a function, which may change data';
    case 'lock':
      return 'locks or unlocks an entity';
    case 'directory':
      return action.request.name === 'currentUser' ? undefined : `changes the session ($directory/${action.request.name})`;
    default:
      return `changes data (${action.kind})`;
  }
}

/** The kind of action each request in flight was planned as (what the metrics count it by). */
const planned = new WeakMap<IncomingMessage, ActionKind>();

/** What a request was planned as; undefined when it was refused before (a bad URL, an unknown dataclass). */
export function plannedKind(raw: IncomingMessage): ActionKind | undefined {
  return planned.get(raw);
}

/** A write's If-Unmodified-Since or If-Modified-Since, refused before the request is planned (whatever else is wrong with it: see below). */
function refuseDatePreconditions(req: IncomingRest): void {
  if (req.method === 'GET' || req.method === 'HEAD') return;
  const date = req.headers['if-unmodified-since'] !== undefined ? 'If-Unmodified-Since' : req.headers['if-modified-since'] !== undefined ? 'If-Modified-Since' : undefined;
  if (date) throw new DatasetError('INVALID_HEADER', `${date} is not evaluated on a write (answers carry no Last-Modified): to change an entity only while it is as you read it, send If-Match with its ETag (an update or a delete of one entity); or send the request without ${date}`);
}

/**
 * A request carrying a precondition it would not evaluate is refused rather than run as if it had
 * none (RFC 9110 §13.1: a false precondition must stop the method): If-Match is taken by an update
 * or a delete of one entity, and by a read of one entity; If-None-Match by reads only;
 * If-Unmodified-Since and If-Modified-Since by no write (answers carry no Last-Modified: their
 * ETags are the validators, If-Match says what If-Unmodified-Since would). A read ignores the two
 * dates, as RFC 9110 §13.1.3-4 has a server without a modification date do (a read changes
 * nothing either way).
 */
function refuseUnevaluatedPreconditions(req: IncomingRest, action: Action): void {
  if (req.method === 'GET' || req.method === 'HEAD') {
    if (req.headers['if-match'] === undefined) return;
    if (action.kind !== 'readEntity') throw new DatasetError('INVALID_HEADER', `If-Match is not evaluated on this request (${action.kind}): a read takes it on one entity only (/rest/{dataClass}({key}), 412 when it changed); send If-None-Match to read a page again only when it changed, or send the request without it`);
    // (a tag it cannot read is refused before the read: 400, as on an update)
    const header = req.headers['if-match'];
    readIfMatch(Array.isArray(header) ? header.join(',') : header);
    return;
  }
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

const writesRunCode = new WeakMap<RestCore, boolean>();

/** Saving or dropping some dataclass runs user code (an event, a calculated set, an entity class's drop()): found once, as readsRunUserCode. */
function writesRunUserCode(core: RestCore): boolean {
  let runs = writesRunCode.get(core);
  if (runs === undefined) {
    runs = core.model.dataClasses.some((dc) => {
      const c = core.classOf(dc);
      return c.writesRunUserCode || c.dropsRunUserCode || c.readsRunUserCode;
    });
    writesRunCode.set(core, runs);
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
