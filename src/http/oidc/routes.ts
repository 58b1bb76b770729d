// Single sign-on with OpenID Connect (issue 37): the authorization code flow with PKCE, under the
// REST prefix, for the providers of auth.json's "oidc" section (config/oidc.ts).
//   GET /rest/$oidc                      the providers, for a login page: {"providers": [{"name", "login"}]}
//   GET /rest/$oidc/<name>/login?redirect=/path
//                                        302 to the provider, the sign-in kept in the database (pending.ts)
//   GET /rest/$oidc/<name>/callback?code&state
//                                        the sign-in taken back (once, on any instance), the code exchanged
//                                        and the ID token checked (provider-client.ts), the claims mapped
//                                        to a user name and roles (claims.ts); the request's session logged
//                                        in with them, then 302 to the path the login was given.
// Each is guarded as the REST routes are (Host, request quota); a failure answers in the __ERROR
// shape (OIDC_* codes) and changes no session. Only GET: a HEAD (a link checker, a prefetch)
// would start a sign-in or spend a callback, so none is routed.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OIDC_STATE_TTL_MS, type OidcProviderConfig } from '../../config/oidc.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { coreOf, type Datastore } from '../../datastore/index.js';
import { REST_PREFIX } from '../../rest/request/constants.js';
import type { HttpGuard } from '../../rest/request/http-guards.js';
import { SECURITY_HEADERS } from '../../rest/present/response.js';
import type { Services } from '../../rest/scope/scope.js';
import { cookieAttributesOf, cookieValue, keepSession, sessionOf } from '../../rest/session-http.js';
import { rolesOf, userNameOf } from './claims.js';
import { bindingValue, startSignIn, takeSignIn } from './pending.js';
import type { ProviderClient } from './provider-client.js';
import { DEFAULT_RETURN_PATH, sameOriginPath } from './return-path.js';

const OIDC_PREFIX = `${REST_PREFIX}/$oidc`;

/** The providers of the datastore's project (auth.json's "oidc", which the project loader keeps on the core; none without one). */
export function oidcProvidersOf(ds: Datastore): readonly OidcProviderConfig[] {
  return coreOf(ds).auth.oidc;
}

/** The sign-in routes (after restRoutes: they use the cookie package it registers). */
export async function oidcRoutes(app: FastifyInstance, services: Services, guard: HttpGuard, providers: readonly OidcProviderConfig[]): Promise<void> {
  // (openid-client is loaded only by a project that has a provider)
  const { ProviderClient } = providers.length === 0 ? { ProviderClient: undefined } : await import('./provider-client.js');
  const clients = new Map<string, ProviderClient>(ProviderClient === undefined ? [] : providers.map((p) => [p.name, new ProviderClient(p)]));
  const sessionCookie = cookieAttributesOf(app);
  const storage = coreOf(services.ds).storage;
  const now = () => services.core.sessions.now();

  /** The Host guard and the request quota, as REST's routes have them. */
  const admit = (request: FastifyRequest) => {
    const refused = guard(request);
    if (refused) throw refused;
    if (services.requests.perMinute > 0) services.requests.take(`address:${request.ip}`);
  };
  const clientOf = (request: FastifyRequest): ProviderClient => {
    const { provider } = request.params as { provider: string };
    const client = clients.get(provider);
    if (client === undefined) throw new DatasetError('OIDC_UNKNOWN_PROVIDER', `no sign-in provider is named ${JSON.stringify(provider.slice(0, 100))}${clients.size === 0 ? ': this project has none (auth.json, "oidc")' : `: the providers are ${[...clients.keys()].join(', ')}`}`);
    return client;
  };
  // the browser binding cookie (pending.ts): sent only to these routes, for as long as a sign-in waits
  const bindingCookie = `oidc_${services.cookie.name}`;
  const bindingAttributes = (secure: boolean) => app.serializeCookie('x', '', { path: OIDC_PREFIX, httpOnly: true, sameSite: 'lax', secure, maxAge: OIDC_STATE_TTL_MS / 1000 }).slice('x='.length);
  const binding = { plain: bindingAttributes(false), secure: bindingAttributes(true) };
  const isSecure = (request: FastifyRequest) => services.cookie.secure || request.protocol === 'https';
  const broughtBinding = (request: FastifyRequest) => (request.headers.cookie === undefined ? undefined : cookieValue(request.headers.cookie, bindingCookie));

  app.route({
    method: 'GET', url: OIDC_PREFIX, exposeHeadRoute: false,
    handler: async (request, reply) => {
      admit(request);
      return reply.headers(SECURITY_HEADERS).send({ providers: providers.map((p) => ({ name: p.name, login: `${OIDC_PREFIX}/${p.name}/login` })) });
    },
  });

  app.route({
    method: 'GET', url: `${OIDC_PREFIX}/:provider/login`, exposeHeadRoute: false,
    handler: async (request, reply) => {
      admit(request);
      const client = clientOf(request);
      const returnTo = returnPathOf(request);
      const configuration = await client.configuration();
      const redirectUri = client.provider.redirectUri ?? `${request.protocol}://${request.host}${OIDC_PREFIX}/${client.provider.name}/callback`;
      const value = bindingValue(broughtBinding(request));
      const { checks, codeChallenge } = await startSignIn(storage, now(), { provider: client.provider.name, redirectUri, returnTo, binding: value, address: request.ip });
      reply.header('set-cookie', `${bindingCookie}=${value}${isSecure(request) ? binding.secure : binding.plain}`);
      return redirect(reply, client.authorizationUrl(configuration, redirectUri, checks, codeChallenge).href);
    },
  });

  app.route({
    method: 'GET', url: `${OIDC_PREFIX}/:provider/callback`, exposeHeadRoute: false,
    handler: async (request, reply) => {
      admit(request);
      const client = clientOf(request);
      const query = request.query as Record<string, unknown>;
      const signIn = await takeSignIn(storage, now(), client.provider.name, query.state, broughtBinding(request));
      // the provider's own refusal (the user said no, or it failed): named, nothing changed
      if (query.error !== undefined) throw client.refusal(String(query.error), query.error_description === undefined ? undefined : String(query.error_description));
      if (typeof query.code !== 'string' || query.code === '') throw new DatasetError('OIDC_SIGN_IN_FAILED', `the provider "${client.provider.name}"'s callback carries no code`);
      const configuration = await client.configuration();
      // (the redirect_uri the sign-in was started with, and the callback's own parameters, as it came)
      const callbackUrl = new URL(signIn.redirectUri);
      callbackUrl.search = new URL(request.url, 'http://callback.invalid').search;
      const claims = await client.signIn(configuration, callbackUrl, signIn);
      const user = userNameOf(claims, client.provider);
      if ('missing' in user) throw new DatasetError('OIDC_SIGN_IN_FAILED', user.missing);
      // only now, every check passed: the session is logged in (a new token and id: Session.setPrivileges)
      const opened = sessionOf(services, request);
      const session = opened instanceof Promise ? await opened : opened;
      session.setPrivileges({ roles: rolesOf(claims, client.provider.roles), userName: user.userName });
      await keepSession(services, request, reply, session, sessionCookie);
      return redirect(reply, signIn.returnTo);
    },
  });
}

/** The login's `redirect` (default: the Data Explorer), a path of this server; else 400. */
function returnPathOf(request: FastifyRequest): string {
  const given = (request.query as Record<string, unknown>).redirect;
  if (given === undefined) return DEFAULT_RETURN_PATH;
  const path = typeof given === 'string' ? sameOriginPath(given) : undefined;
  if (path === undefined) throw new DatasetError('OIDC_BAD_REDIRECT', `redirect=${JSON.stringify(String(given).slice(0, 100))} is not a path of this server: give one such as /$explorer (another host, //host, a scheme or backslashes are refused)`);
  return path;
}

function redirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(302).headers(SECURITY_HEADERS).header('location', location).send();
}
