// A request's web session as HTTP carries it: opened from its cookie (a new guest without one),
// and kept when the request ends — what the request changed stored before the answer leaves, and
// the cookie set when its token is new. The REST routes use it, and so do the routes outside
// /rest that log a session in (single sign-on's callback), so that every door opens and keeps a
// session the same way.

import type {} from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Session, sessionInternals } from '../datastore/index.js';
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

/** The session a request's cookie names (a new guest one without a cookie, or with one no longer known); one read lately comes at once, not as a promise. */
export function sessionOf(services: Services, request: FastifyRequest): Session | Promise<Session> {
  const cookies = request.headers.cookie;
  return services.core.sessions.open(cookies === undefined ? undefined : cookieValue(cookies, services.cookie.name));
}

/**
 * Stores what the request changed of its session (before the answer leaves: the next request, on
 * any instance, sees it) and sets the cookie when its token is new. `onFailure` runs when the
 * store fails, before the failure is thrown (an answer not sent lets go of what it holds).
 */
export async function keepSession(services: Services, request: FastifyRequest, reply: FastifyReply, session: Session, attributes: CookieAttributes, onFailure?: () => void): Promise<void> {
  const saving = services.core.sessions.save(session, request.ip);
  if (saving) await saving.catch((e: unknown) => {
    onFailure?.();
    throw e;
  });
  if (sessionInternals.newToken(session)) reply.header('set-cookie', `${services.cookie.name}=${sessionInternals.cookie(session)}${services.cookie.secure || request.protocol === 'https' ? attributes.secure : attributes.plain}`);
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
