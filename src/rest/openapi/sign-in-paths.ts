// The single sign-on paths (http/oidc/routes.ts) in the document, when the project has providers
// (auth.json's "oidc"): they are a browser's, answered with redirects.

import { REST_PREFIX } from '../request/constants.js';
import type { Scope } from '../scope/scope.js';

type Operation = Record<string, unknown>;

const ERROR = { $ref: '#/components/responses/Error' };
const provider = { name: 'provider', in: 'path', required: true, description: 'the provider, as auth.json names it', schema: { type: 'string' } };

export function signInPaths(scope: Scope, out: Record<string, Record<string, Operation>>): void {
  const providers = scope.core.auth.oidc;
  if (providers.length === 0) return;
  const tags = ['session'];
  out[`${REST_PREFIX}/$oidc`] = {
    get: {
      operationId: 'listSignInProviders', tags, summary: 'The single sign-on providers (OpenID Connect)',
      responses: { 200: { description: 'the providers', content: { 'application/json': { schema: { type: 'object', properties: { providers: { type: 'array', items: { type: 'object', properties: { name: { enum: providers.map((p) => p.name) }, login: { type: 'string' } }, required: ['name', 'login'] } } }, required: ['providers'] } } } }, default: ERROR },
    },
  };
  out[`${REST_PREFIX}/$oidc/{provider}/login`] = {
    get: {
      operationId: 'signIn', tags, summary: "Start a sign-in: a redirect to the provider's login page",
      parameters: [provider, { name: 'redirect', in: 'query', required: false, description: 'a path of this server to come back to once signed in (default /$explorer)', schema: { type: 'string' } }],
      responses: { 302: { description: "to the provider's login page" }, default: ERROR },
    },
  };
  out[`${REST_PREFIX}/$oidc/{provider}/callback`] = {
    get: {
      operationId: 'signInCallback', tags, summary: 'Where the provider sends the browser back: the session is logged in, then redirected',
      parameters: [provider, { name: 'code', in: 'query', required: false, schema: { type: 'string' } }, { name: 'state', in: 'query', required: true, schema: { type: 'string' } }],
      responses: { 302: { description: 'to the path the sign-in was given, logged in (the session cookie is set)' }, default: ERROR },
    },
  };
}
