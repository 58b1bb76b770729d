// The paths of /rest/$users, /rest/$tokens and /rest/$roles (handlers/admin.ts), in the document of
// a session that may use them: an administrator's. $users and
// $tokens only with built-in users on.

import { ADMIN_PRIVILEGE } from '../../config/limits.js';
import { REST_PREFIX } from '../request/constants.js';
import type { Scope } from '../scope/scope.js';
import { OBJECT, type Schema } from './schemas.js';

type Operation = Record<string, unknown>;

const JSON_TYPE = 'application/json';
const ERROR = { $ref: '#/components/responses/Error' };
const STRINGS = { type: 'array', items: { type: 'string' } };
const DATE = { type: 'string', format: 'date-time' };
const USER: Schema = {
  type: 'object', required: ['userName', 'roles', 'created', 'passwordChanged'], additionalProperties: false,
  properties: { userName: { type: 'string' }, roles: STRINGS, created: DATE, passwordChanged: DATE },
};
const TOKEN: Schema = {
  type: 'object', required: ['id', 'name', 'userName', 'privileges', 'created', 'expires', 'lastUsed'],
  properties: { id: { type: 'string' }, name: { type: 'string' }, userName: { type: 'string' }, privileges: STRINGS, created: DATE, expires: { anyOf: [DATE, { type: 'null' }] }, lastUsed: { anyOf: [DATE, { type: 'null' }] } },
};

const answer = (description: string, schema: Schema): Schema => ({ description, content: { [JSON_TYPE]: { schema } } });
const body = (schema: Schema): Schema => ({ required: true, content: { [JSON_TYPE]: { schema } } });
const op = (operationId: string, summary: string, responses: Record<string, Schema>, more: Record<string, unknown> = {}): Operation => ({ operationId, tags: ['administration'], summary, ...more, responses: { ...responses, default: ERROR } });
const pathParam = (name: string, description: string): Schema => ({ name, in: 'path', required: true, description, schema: { type: 'string' } });

/** Adds the administration paths the session may use. */
export function adminPaths(scope: Scope, out: Record<string, Record<string, Operation>>): void {
  if (!scope.session.hasPrivilege(ADMIN_PRIVILEGE)) return;
  out[`${REST_PREFIX}/$roles`] = { get: op('getRoles', 'roles.json as a matrix: what a guest, each role and each privilege may do on each dataclass, attribute and function', { 200: answer('the matrix', OBJECT) }) };
  if (!scope.core.users) return;
  const userBody = { type: 'object', properties: { userName: { type: 'string' }, password: { type: 'string' }, roles: STRINGS }, required: ['userName', 'password'], additionalProperties: false };
  out[`${REST_PREFIX}/$users`] = {
    get: op('listUsers', 'The built-in users', { 200: answer('the users', { type: 'object', properties: { users: { type: 'array', items: USER } }, required: ['users'] }) }),
    post: op('addUser', 'Add a built-in user', { 201: answer('the user', USER) }, { requestBody: body(userBody) }),
  };
  const name = pathParam('name', 'the user name (compared without case or accents)');
  out[`${REST_PREFIX}/$users/{name}`] = {
    get: op('getUser', 'One built-in user', { 200: answer('the user', USER) }, { parameters: [name] }),
    post: op('changeUser', "Set a user's password and/or roles", { 200: answer('the user', USER) }, { parameters: [name], requestBody: body({ type: 'object', properties: { password: { type: 'string' }, roles: STRINGS }, additionalProperties: false }) }),
    delete: op('removeUser', 'Remove a user and its API tokens', { 200: answer('the user removed', { type: 'object', properties: { removed: USER }, required: ['removed'] }) }, { parameters: [name] }),
  };
  out[`${REST_PREFIX}/$tokens`] = {
    get: op('listTokens', 'The API tokens (never their secrets)', { 200: answer('the tokens', { type: 'object', properties: { tokens: { type: 'array', items: TOKEN } }, required: ['tokens'] }) }, {
      parameters: [{ name: 'user', in: 'query', required: false, schema: { type: 'string' }, description: "one user's tokens" }],
    }),
    post: op('createToken', 'Make an API token: its secret is in this answer only', { 201: answer('the token, with its secret', { ...TOKEN, properties: { ...(TOKEN.properties as object), token: { type: 'string', pattern: '^dsr_' } } }) }, {
      requestBody: body({ type: 'object', properties: { userName: { type: 'string' }, name: { type: 'string' }, privileges: STRINGS, expires: { anyOf: [{ type: 'string' }, { type: 'number' }] } }, required: ['userName'], additionalProperties: false }),
    }),
  };
  out[`${REST_PREFIX}/$tokens/{id}`] = { delete: op('revokeToken', 'Revoke a token, at once on every instance', { 200: answer('revoked', { type: 'object', properties: { revoked: { type: 'string' } }, required: ['revoked'] }) }, { parameters: [pathParam('id', "the token's id")] }) };
}
