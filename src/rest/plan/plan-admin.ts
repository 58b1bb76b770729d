// Planning /rest/$users, /rest/$tokens and /rest/$roles: an administrator's management of the
// built-in users (GET the list, POST a new one, GET/POST/DELETE one by name), of their API tokens
// (GET the list — ?user=<name> for one user's —, POST a new one, DELETE one by id) and a read of
// roles.json as a matrix. Who may is the handler's to judge (handlers/admin.ts); the bodies are
// checked there too, by the core's stores.

import { DatasetError } from '../../errors/dataset-error.js';
import type { Action, AdminRequest } from './action.js';
import type { RestRequest } from './request.js';
import type { AdminResource } from '../request/url.js';

export function planAdmin(req: RestRequest, resource: AdminResource, name: string | undefined): Action {
  return { kind: 'admin', request: adminRequest(req, resource, name) };
}

function adminRequest(req: RestRequest, resource: AdminResource, name: string | undefined): AdminRequest {
  const method = req.method === 'HEAD' ? 'GET' : req.method;
  const where = `/rest/${resource}${name === undefined ? '' : `/${name}`}`;
  const refuse = (allowed: string) => new DatasetError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${where}: use ${allowed}`);
  switch (resource) {
    case '$roles':
      if (method !== 'GET') throw refuse('GET');
      return { op: 'roles' };
    case '$users':
      if (name === undefined) {
        if (method === 'GET') return { op: 'listUsers' };
        if (method === 'POST') return { op: 'addUser', body: objectBody(req.body, 'POST /rest/$users', '{"userName": "…", "password": "…", "roles": ["…"]}') };
        throw refuse('GET (the list) or POST (a new user)');
      }
      if (method === 'GET') return { op: 'getUser', name };
      if (method === 'POST' || method === 'PATCH') return { op: 'changeUser', name, body: objectBody(req.body, `${req.method} ${where}`, '{"password": "…"} or {"roles": ["…"]}') };
      if (method === 'DELETE') return { op: 'removeUser', name };
      throw refuse('GET, POST (a new password or roles) or DELETE');
    case '$tokens':
      if (name === undefined) {
        if (method === 'GET') return { op: 'listTokens', user: userParameter(req.url) };
        if (method === 'POST') return { op: 'createToken', body: objectBody(req.body, 'POST /rest/$tokens', '{"userName": "…", "name": "…", "privileges": ["…"], "expires": "2027-01-01"}') };
        throw refuse('GET (the list) or POST (a new token)');
      }
      if (method === 'DELETE') return { op: 'revokeToken', id: name };
      throw refuse('DELETE (a revocation)');
    default: {
      const never: never = resource;
      return never;
    }
  }
}

function objectBody(body: unknown, what: string, example: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new DatasetError('INVALID_BODY', `${what} takes a JSON object, like ${example}`);
  return body as Record<string, unknown>;
}

/** ?user=<name> of GET /rest/$tokens: one user's tokens. */
function userParameter(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  return new URLSearchParams(url.slice(q + 1)).get('user') ?? undefined;
}
