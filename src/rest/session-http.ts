// A request's web session as HTTP carries it: opened from its cookie (a new guest without one),
// and kept when the request ends — what the request changed stored before the answer leaves, and
// the cookie set when its token is new. The REST routes use it, and so do the routes outside
// /rest that log a session in (single sign-on's callback), so that every door opens and keeps a
// session the same way.

import type {} from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Session, sessionInternals } from '../datastore/index.js';
import { DatasetError } from '../errors/dataset-error.js';
import { notFollowed } from './request/http-guards.js';
import { PASSCODE_PARAMETER } from './request/options.js';
import type { Services } from './scope/scope.js';

/** The cookie's attributes after its value (serialised once, by the server's cookie package). */
export interface CookieAttributes {
  readonly plain: string;
  readonly secure: string;
}

/** The session cookie's attributes, serialised by the cookie package (registered on `app` by restRoutes: call it after). */
export function cookieAttributesOf(app: FastifyInstance): CookieAttributes {
  return {
    plain: app.serializeCookie('x', '', { path: '/', httpOnly: true, sameSite: 'lax' }).slice('x='.length),
    secure: app.serializeCookie('x', '', { path: '/', httpOnly: true, sameSite: 'lax', secure: true }).slice('x='.length),
  };
}

/**
 * The session of a request: an API token's (Authorization: Bearer, whatever cookie comes with it),
 * the one a one-time passcode resumes ($4DSID in the query string: only where `passcodes`, the
 * REST handler's — an OPTIONS or a 405 must not use one up), or the one its cookie names (alone
 * where `bearer` is false: a sign-in logs the cookie's session in)
 * (a new guest one without a cookie, or with one no longer known); one read lately comes at once,
 * not as a promise.
 */
export function sessionOf(services: Services, request: FastifyRequest, doors: { readonly passcodes?: boolean; readonly bearer?: boolean } = {}): Session | Promise<Session> {
  const authorization = request.headers.authorization;
  // (a project without tokens leaves the header to whoever put it there: a gateway's JWT, say)
  if (doors.bearer !== false && authorization !== undefined && services.core.tokens && BEARER.test(authorization)) return bearerSession(services, authorization.replace(BEARER, '').trim());
  const url = request.raw.url ?? '';
  if (doors.passcodes && url.includes('4DSID=')) {
    const passcode = passcodeOf(url);
    if (passcode !== undefined) return restoredSession(services, request, passcode);
  }
  const cookies = request.headers.cookie;
  return services.core.sessions.open(cookies === undefined ? undefined : cookieValue(cookies, services.cookie.name));
}

const BEARER = /^Bearer\s+/i;

/** The session an API token acts as: its user, the token's privileges; never stored, no cookie (no cross-site request can carry it). */
async function bearerSession(services: Services, token: string): Promise<Session> {
  const holder = await (services.core.tokens as NonNullable<Services['core']['tokens']>).holder(token);
  return services.core.sessions.forToken(holder.sessionId, holder.userName, holder.privileges);
}

/** $4DSID's value in a URL's query string (its first), if it has one. */
function passcodeOf(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  try {
    // (an empty one is none: a link template left unfilled)
    return new URLSearchParams(url.slice(q + 1)).get(PASSCODE_PARAMETER) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The session a passcode resumes (once): the requester's from now on, under a new cookie;
 * OTP_INVALID when it resumes none. Only a GET or HEAD the user asked for: a link followed, a
 * redirect — never another site's image, script or fetch, which would plant the passcode's
 * session in the victim's browser (a login forged across sites). A browser says which by its
 * Fetch metadata; a client without them (no browser) is taken at its word.
 */
async function restoredSession(services: Services, request: FastifyRequest, passcode: string): Promise<Session> {
  // (not a HEAD: link checkers and previews send those, and would spend the passcode)
  if (request.method !== 'GET') throw new DatasetError('OTP_INVALID', `a ${PASSCODE_PARAMETER} passcode is taken by a GET (a link followed), not a ${request.method}`);
  const from = notFollowed(request.headers);
  if (from !== undefined) throw new DatasetError('CROSS_SITE_REFUSED', `a ${PASSCODE_PARAMETER} passcode is taken from a link the user follows, not from ${from}`);
  const session = await services.core.sessions.restore(passcode);
  if (!session) throw new DatasetError('OTP_INVALID', `the ${PASSCODE_PARAMETER} passcode resumes no session: it is unknown, used already or expired, or its session has ended`);
  return session;
}

/**
 * Stores what the request changed of its session (before the answer leaves: the next request, on
 * any instance, sees it) and sets the cookie when its token is new. `onFailure` runs when the
 * store fails, before the failure is thrown (an answer not sent lets go of what it holds).
 */
export async function keepSession(services: Services, request: FastifyRequest, reply: FastifyReply, session: Session, attributes: CookieAttributes, onFailure?: () => void): Promise<void> {
  // (an API token's session is made anew at each request: nothing to keep, no cookie)
  if (sessionInternals.bearer(session)) return;
  const saving = services.core.sessions.save(session, request.ip);
  if (saving) await saving.catch((e: unknown) => {
    onFailure?.();
    throw e;
  });
  // A guest that keeps nothing (no storage, set, lock, login) and whose id nothing read gets no
  // cookie: its next request is a new guest, the same to it in every way, and an answer without
  // a cookie costs neither the token nor the header (4D's protocol needs a session only where the
  // client keeps state: docs/decisions.md). One whose id was shown (user code, $info) gets it,
  // so that it stays the same session; so does one refused a lock or a query path for want of a
  // session its client keeps (its next request, with the cookie, may have them).
  if (sessionInternals.newToken(session) && (sessionInternals.stored(session) || sessionInternals.cookieWanted(session))) reply.header('set-cookie', `${services.cookie.name}=${sessionInternals.cookie(session)}${services.cookie.secure || request.protocol === 'https' ? attributes.secure : attributes.plain}`);
}

/**
 * The value of the cookie `name` in a Cookie header (the first of that name, as browsers send the
 * most specific first), or undefined. Only the session's cookie is wanted, and its value is a token
 * that needs no decoding (one that is not a token names no session): reading it alone costs a read
 * by key a fraction of parsing every cookie into an object (measured with bench:sessions).
 */
export function cookieValue(header: string, name: string): string | undefined {
  // one pass over the header: the next '=' is looked for again only once the pairs have passed it
  // (looking for it from each pair would read a header of many '=' -less pairs again per pair)
  let eq = -1;
  for (let at = 0; at < header.length; ) {
    if (eq < at) {
      eq = header.indexOf('=', at);
      if (eq < 0) return undefined;
    }
    let end = header.indexOf(';', at);
    if (end < 0) end = header.length;
    if (eq < end && header.slice(at, eq).trim() === name) return header.slice(eq + 1, end).trim();
    at = end + 1;
  }
  return undefined;
}
