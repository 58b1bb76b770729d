// The scope of one REST request: who asks (its session), what it may see (the exposed dataclasses
// and, of their attributes, those its session may read), how it reaches the data (its access:
// grants, row filters, snapshot), and the stores and settings the handlers use. Built once per
// request and handed down; handlers reach for nothing global.

import { type Access, bothVisible, type Core, coreOf, type DataClassCore, type Datastore, inSnapshot as coreSnapshot, readableBy, type Session, sessionInternals, sessionSets, type SessionSets, type UploadQuota } from '../../datastore/index.js';
import { PENDING_UPLOADS_TOTAL } from '../../config/limits.js';
import type { ServerSettings, WebhookTiming } from '../../config/settings.js';
import { ConversionQueue } from './conversions.js';
import { LoginThrottle, RequestQuota } from './quotas.js';
import { AnswerFlight, type SendTimeoutReport } from './answer-flight.js';
import type { Grants } from '../../permissions/policy.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { CallRequest } from '../../functions/context.js';
import { isExposed, type AttributeModel, type DataClassModel, type Visibility } from '../../model/types.js';
import { didYouMean } from '../../util/suggest.js';

/** What REST may use of the datastore's core: its stores and services, never the storage itself. */
export type RestCore = Omit<Core, 'storage'>;

/** What the server was built with: the same for every request. */
export interface Services {
  readonly ds: Datastore;
  /** a function's unexpected exception is answered with its message and stack (development), not only logged */
  readonly exposeErrors: boolean;
  readonly core: RestCore;
  /** the time limit of a function called over REST, in ms (--function-timeout) */
  readonly functionTimeoutMs: number;
  /** the largest upload accepted, in bytes (--max-upload-size) */
  readonly maxUploadBytes: number;
  /** the most entities one page may ask for with $top (--max-page-size) */
  readonly maxPageSize: number;
  /** the most related entities one answer may inline, every level together (--max-inlined-entities) */
  readonly maxInlinedEntities: number;
  /** the most bytes of values one answer may hold, measured before big reads (--max-answer-size) */
  readonly maxAnswerBytes: number;
  /** the most entities one $method=update or validate may carry (--max-batch-entities) */
  readonly maxBatchEntities: number;
  /** how the project's webhooks are delivered in time (rest/webhooks/) */
  readonly webhookTiming: WebhookTiming;
  /** the uploads that may wait for an entity at once, per client and in all */
  readonly uploadQuota: UploadQuota;
  /** the session cookie: 4DSID_<project name>, Secure when asked (or the request came over TLS) */
  readonly cookie: { readonly name: string; readonly secure: boolean };
  /** requests a minute per session (per address for a guest) */
  readonly requests: RequestQuota;
  /** failed logins per address and user name */
  readonly logins: LoginThrottle;
  /** entity sets one session may hold at once */
  readonly setsPerSession: number;
  /** entity locks one session may hold at once */
  readonly locksPerSession: number;
  /** the image conversions running and waiting ($imageformat) */
  readonly conversions: ConversionQueue;
  /** the answer bytes this process holds in flight, and the send timeout (--max-answers-in-flight, --send-timeout) */
  readonly answers: AnswerFlight;
}

/** The request a scope is made for, as a function called by it may read it (callContext().request). */
export interface ScopeRequest extends CallRequest {
  /** the file descriptor of the client's socket, if it has one (not under inject): the function watchdog answers through it */
  readonly socketFd?: number;
}

export interface Scope {
  /** who asks, as the stores key what a caller leaves (its uploads waiting): its session's id once stored, else its address */
  readonly caller: string;
  /** the request's web session */
  readonly session: Session;
  readonly request: CallRequest;
  readonly socketFd?: number;
  readonly ds: Datastore;
  readonly core: RestCore;
  /** the dataclasses this caller sees */
  readonly sees: (dc: DataClassModel) => boolean;
  /** the attributes this caller sees */
  readonly visible: Visibility;
  /** how this caller's reads and writes reach the data */
  readonly access: Access;
  readonly functionTimeoutMs: number;
  readonly maxUploadBytes: number;
  /** what the server was built with (quotas, the cookie) */
  readonly services: Services;
}

export function scopeFor(services: Services, request: ScopeRequest, session: Session): Scope {
  const access = services.core.accessFor(session);
  return {
    caller: sessionInternals.stored(session) ? `session:${sessionInternals.id(session)}` : request.caller,
    session,
    request,
    socketFd: request.socketFd,
    ds: services.ds,
    core: services.core,
    sees: exposedClass,
    visible: visibleWith(access.grants),
    access,
    functionTimeoutMs: services.functionTimeoutMs,
    maxUploadBytes: services.maxUploadBytes,
    services,
  };
}

/** REST sees the exposed attributes its session may read: one function per grants (projections are cached per visibility). */
const visibilities = new WeakMap<Grants, Visibility>();

function visibleWith(grants: Grants): Visibility {
  let v = visibilities.get(grants);
  if (!v) visibilities.set(grants, (v = bothVisible(isExposed, readableBy(grants))));
  return v;
}

function exposedClass(dc: DataClassModel): boolean {
  return dc.exposed;
}

/** The services of a server, from its settings as they are (their defaults were applied where they were built: config/settings.ts). */
export function servicesFor(ds: Datastore, { limits, functions, http }: ServerSettings, onSendTimeout?: SendTimeoutReport): Services {
  const core = coreOf(ds);
  return {
    ds,
    core,
    functionTimeoutMs: functions.timeoutMs,
    exposeErrors: functions.exposeErrors,
    maxUploadBytes: limits.maxUploadBytes,
    maxPageSize: limits.maxPageSize,
    webhookTiming: limits.webhooks,
    maxInlinedEntities: limits.maxInlinedEntities,
    maxAnswerBytes: limits.maxAnswerBytes,
    maxBatchEntities: limits.maxBatchEntities,
    uploadQuota: { perOwner: limits.pendingUploads, total: PENDING_UPLOADS_TOTAL },
    cookie: { name: cookieName(ds.name), secure: http.secureCookies },
    requests: new RequestQuota(limits.requestsPerMinute, core.sessions.now),
    logins: new LoginThrottle(core.storage, core.sessions.now),
    setsPerSession: limits.setsPerSession,
    locksPerSession: limits.locksPerSession,
    conversions: new ConversionQueue(limits.conversions),
    answers: new AnswerFlight(limits.maxAnswersInFlight, limits.sendTimeoutMs, onSendTimeout),
  };
}

/** 4D's cookie name, 4DSID_<project name>, with what a cookie name may not hold made '_'. */
export function cookieName(project: string): string {
  return `4DSID_${project.replace(/[^A-Za-z0-9!#$%&'*+.^_`|~-]/g, '_')}`;
}

/**
 * Runs `fn` with the scope's reads in one snapshot: a page's count, entities, global stamp and
 * what it inlines all see one state of the data, whatever commits meanwhile (PostgreSQL will run
 * them in one REPEATABLE READ transaction). For requests that read more than once. (The core's
 * inSnapshot, datastore/access/snapshot.ts, with the scope carrying its access.)
 */
export function inSnapshot<T>(scope: Scope, fn: (scope: Scope) => Promise<T>): Promise<T> {
  return coreSnapshot(scope.core, scope.access, (access) => fn(access === scope.access ? scope : { ...scope, access }));
}

/**
 * A scope that sees less: the dataclasses both see, and of their attributes those `visible` lets
 * through — never one on, or leading to, a dataclass it does not see (a relation, an alias). One
 * rule then answers everywhere: names, projections, queries, the catalog. (Build one per role:
 * projections are cached per visibility function.)
 */
export function narrowed(scope: Scope, sees: (dc: DataClassModel) => boolean, visible: Visibility): Scope {
  const seen = (dc: DataClassModel) => scope.sees(dc) && sees(dc);
  const reaches = (a: AttributeModel): boolean => {
    if (!seen(a.dataClass)) return false;
    if (a.kind === 'relatedEntity' || a.kind === 'relatedEntities') return seen(a.target);
    if (a.kind === 'alias') return a.steps.every(reaches);
    return true;
  };
  return { ...scope, sees: seen, visible: (a) => scope.visible(a) && visible(a) && reaches(a) };
}

/** The dataclasses the caller sees. */
export function visibleDataClasses(scope: Scope): DataClassModel[] {
  return scope.ds.model.dataClasses.filter(scope.sees);
}

/** The dataclass of that name the caller sees, or UNKNOWN_DATACLASS naming the closest one. */
export function dataClassFor(scope: Scope, name: string): DataClassCore {
  const model = scope.ds.model.dataClassesByName.get(name);
  if (model && scope.sees(model)) return scope.core.classOf(model);
  throw new DatasetError('UNKNOWN_DATACLASS', `The "${name}" dataclass cannot be found${didYouMean(name, visibleDataClasses(scope).map((d) => d.name))}`);
}

/** The entity sets as the scope's session may use them, through its access (the rule of who reads which set is the core's: datastore/sets/session-sets.ts). */
export function setsOf(scope: Scope): SessionSets {
  return sessionSets(scope.core, scope.session, scope.access, scope.services.setsPerSession);
}
