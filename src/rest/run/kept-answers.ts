// Which answers a server keeps (scope/answer-cache/answer-cache.ts), and under which key: the pipeline's hook
// (rest/pipeline.ts). A GET or HEAD is looked up before it is planned, by its URL as sent and by
// what its caller may see — its grants (privileges, whether a guest: they decide every
// permission of dataclasses and attributes, and so what its names resolve to) and its user name.
// An answer is kept only when nothing else decides it:
//   - reads only (an entity, a relation, a page of a dataclass or of a relation followed, $compute,
//     $distinct): never an entity set's (the session's own), $querypath (it records the query in
//     the session), an export (streamed), a file;
//   - no user code on the way: no restrict() (it may read session() or the time), no entity class
//     or calculated attribute in the project (the same) — those are read every time;
//   - a 200 sent whole (an error, a 304 is never kept; an answer in slices, or one past
//     ANSWER_CACHE_ENTRY_BYTES, passes through).
// The URL names everything else an answer depends on ($filter, $params, $attributes, $top …);
// the request's headers change none of it (If-Match is judged on the entity read, an Accept naming
// CSV or NDJSON may make it an export: such a request is neither looked up nor kept; compression
// and 304 are send()'s, the same for both).
// A request that says `Cache-Control: no-cache` (or `Pragma: no-cache`) is read fresh, and its
// answer kept for the next ones (RFC 9111 §5.2.1.4).

import type { IncomingHttpHeaders } from 'node:http';
import { coreOf } from '../../datastore/index.js';
import type { Action, ActionKind } from '../plan/action.js';
import type { RestResponse } from '../present/response.js';
import type { Scope, Services } from '../scope/scope.js';
import { AnswerCache } from '../scope/answer-cache/answer-cache.js';
import { stampWatchOf } from '../scope/answer-cache/stamp-watch.js';

/** A request looked up: where its answer would be kept, and the generation before its read began. */
export interface AnswerLookup {
  readonly cache: AnswerCache;
  readonly key: string;
  readonly generation: number;
  /** the request asked for a fresh answer (Cache-Control: no-cache): kept, not served */
  readonly fresh: boolean;
}

const caches = new WeakMap<Services, AnswerCache>();

/** A server's cache of answers (one per server: its options, a page's size limit, shape its answers). */
export function answerCacheOf(services: Services): AnswerCache {
  let cache = caches.get(services);
  // (the watch is the storage's: it counts the moves of its stamp, as the core's change feed hears its commits)
  if (!cache) caches.set(services, (cache = new AnswerCache(stampWatchOf(coreOf(services.ds).storage))));
  return cache;
}

/**
 * The lookup of a request whose answer may be kept; undefined for one that is never (not a read,
 * If-Match, user code on the way: `readsRunUserCode`, or a restrict()) — nothing is then asked of
 * the cache, nor is the stamp watched for it.
 */
export function lookUpAnswer(services: Services, request: { readonly method: string; readonly url: string; readonly headers: IncomingHttpHeaders }, scope: Scope, readsRunUserCode: boolean): AnswerLookup | undefined {
  const { method, headers } = request;
  if ((method !== 'GET' && method !== 'HEAD') || headers['if-match'] !== undefined || readsRunUserCode || scope.access.restrict !== null || mayAskAnExport(headers)) return undefined;
  const cache = answerCacheOf(services);
  const grants = scope.access.grants;
  // (NUL is in no URL as sent nor in a privilege's name; the privileges counted, the user name last:
  // no two callers make one key, whatever a user name holds)
  const { privileges } = grants;
  const key = `${request.url}\u0000${grants.guest ? 'g' : 'u'}${privileges.length}\u0000${privileges.length === 0 ? '' : `${privileges.join('\u0000')}\u0000`}${scope.session.userName}`;
  return { cache, key, generation: cache.generation, fresh: asksFresh(headers) };
}

/** The answer kept for a lookup, as send() takes it (no hold: sendText follows a large one itself), and the kind of action it answered. */
export function keptAnswer(lookup: AnswerLookup): { response: RestResponse; action: ActionKind } | undefined {
  if (lookup.fresh) return undefined;
  const kept = lookup.cache.get(lookup.key);
  if (kept === undefined) return undefined;
  const response: RestResponse = kept.etag === undefined ? { kind: 'jsonText', status: kept.status, text: kept.text } : { kind: 'jsonText', status: kept.status, text: kept.text, etag: kept.etag };
  return { response, action: kept.action as ActionKind };
}

/** Whether an action's answer may be kept for the same caller (above; user code was ruled out by lookUpAnswer). */
export function keepsAnswer(action: Action): boolean {
  switch (action.kind) {
    case 'readEntity':
    case 'readRelation':
      return true;
    case 'readCollection':
      return action.source.kind !== 'set' && !action.plan.querypath && action.shape.format !== 'csv' && action.shape.format !== 'ndjson';
    case 'compute':
    case 'distinct':
      return action.source.kind !== 'set';
    default:
      return false;
  }
}

/**
 * Keeps `response` when it is a 200 sent whole; resolves to the response to send (a value to
 * serialise is sent as the text kept, the same bytes: send() would stringify it so).
 */
export function keepAnswer(lookup: AnswerLookup, action: Action, response: RestResponse): RestResponse {
  if (response.status !== 200 || (response.kind !== 'json' && response.kind !== 'jsonText')) return response;
  const text = response.kind === 'jsonText' ? response.text : (JSON.stringify(response.body) as string | undefined);
  if (text === undefined) return response;
  lookup.cache.set(lookup.key, lookup.generation, { status: 200, text, etag: response.etag, action: action.kind });
  if (response.kind === 'jsonText') return response;
  const { etag, hold } = response;
  return { kind: 'jsonText', status: 200, text, ...(etag === undefined ? {} : { etag }), ...(hold === undefined ? {} : { hold }) };
}

/**
 * An Accept that names CSV or NDJSON may make the URL an export (request.ts acceptedExport): the
 * key holds no header, so such a request is neither looked up (it would get the JSON answer of
 * the same URL) nor kept.
 */
function mayAskAnExport(headers: IncomingHttpHeaders): boolean {
  const accept = headers.accept;
  return accept !== undefined && /csv|ndjson/i.test(Array.isArray(accept) ? accept.join(',') : accept);
}

/** Cache-Control: no-cache (or max-age=0), or Pragma: no-cache: the client asks for an answer read now. */
function asksFresh(headers: IncomingHttpHeaders): boolean {
  const control = headers['cache-control'];
  if (control !== undefined && /(?:^|,)\s*(?:no-cache|no-store|max-age\s*=\s*0)\s*(?:,|$)/i.test(control)) return true;
  const pragma = headers.pragma;
  return pragma !== undefined && /no-cache/i.test(pragma);
}
