// /rest/$users, /rest/$tokens and /rest/$roles (planned in plan-admin.ts; only an administrator
// gets here: plan/authorize.ts): the built-in users and their API tokens managed through the
// core's stores (datastore/users/), which check every value, and roles.json as a matrix. A new
// token's secret is in the answer that makes it, and never again.

import { DatasetError } from '../../../errors/dataset-error.js';
import type { Action } from '../../plan/action.js';
import { json, type RestResponse } from '../../present/response.js';
import type { Scope } from '../../scope/scope.js';
import { rolesMatrix } from './roles-matrix.js';

export async function admin(scope: Scope, action: Extract<Action, { kind: 'admin' }>): Promise<RestResponse> {
  const r = action.request;
  if (r.op === 'roles') return json(rolesMatrix(scope.ds, scope.core.policy));
  const { users, tokens } = scope.core;
  if (!users || !tokens) throw new DatasetError('USERS_NOT_ENABLED', 'this project has no built-in users: add {"users": true} to its auth.json');
  switch (r.op) {
    case 'listUsers':
      return json({ users: await users.list() });
    case 'getUser': {
      const user = await users.get(r.name);
      if (!user) throw new DatasetError('USER_NOT_FOUND', `there is no user '${r.name.slice(0, 100)}'`);
      return json(user);
    }
    case 'addUser':
      known(r.body, ['userName', 'password', 'roles'], 'a new user');
      return json(await users.add(r.body.userName, r.body.password, r.body.roles), 201);
    case 'changeUser': {
      known(r.body, ['password', 'roles'], 'a change of a user');
      if (r.body.password === undefined && r.body.roles === undefined) throw new DatasetError('INVALID_BODY', `POST /rest/$users/${r.name}: give {"password": "…"}, {"roles": ["…"]} or both`);
      // (both checked before either is written; the user's sessions end: what they hold changed)
      return json(await users.change(r.name, { password: r.body.password, roles: r.body.roles }));
    }
    case 'removeUser':
      return json({ removed: await users.remove(r.name) });
    case 'listTokens':
      return json({ tokens: await tokens.list(r.user) });
    case 'createToken': {
      known(r.body, ['userName', 'name', 'privileges', 'expires'], 'a new token');
      const made = await tokens.create({ userName: r.body.userName, name: r.body.name, privileges: r.body.privileges, expires: r.body.expires });
      return json({ ...made.info, token: made.token }, 201);
    }
    case 'revokeToken':
      await tokens.revoke(r.id);
      return json({ revoked: r.id });
    default: {
      const never: never = r;
      return never;
    }
  }
}

/** A body holding only these keys (a misspelt one would be ignored silently otherwise). */
function known(body: Record<string, unknown>, keys: readonly string[], what: string): void {
  const extra = Object.keys(body).filter((k) => !keys.includes(k));
  if (extra.length > 0) throw new DatasetError('INVALID_BODY', `${what} takes ${keys.join(', ')}; ${extra.map((k) => `'${k.slice(0, 50)}'`).join(', ')} ${extra.length === 1 ? 'is' : 'are'} not among them`);
}
