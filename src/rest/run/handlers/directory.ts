// /rest/$directory/…, 4D's legacy login (planned in plan-directory.ts): answered through the hooks
// of the DataStore class (datastore/directory.ts), run as the caller like a function (its session,
// its time limit, roles.json's promote), and always callable: they are how a guest logs in.

import { DatasetError } from '../../../errors/dataset-error.js';
import type { DirectoryHook, DirectoryHooks, DirectoryUser } from '../../../datastore/index.js';
import { invoke } from '../../../functions/call.js';
import { forgivenWhenBusy } from './functions.js';
import type { Action } from '../../plan/action.js';
import { json, type RestResponse } from '../../present/response.js';
import type { Scope } from '../../scope/scope.js';

export async function directory(scope: Scope, action: Extract<Action, { kind: 'directory' }>): Promise<RestResponse> {
  const r = action.request;
  switch (r.name) {
    case 'login':
      return login(scope, r.userName, r.password, r.idleMinutes);
    case 'logout':
      scope.session.clearPrivileges();
      return json({ result: true });
    case 'currentUser':
      return json({ result: await currentUser(scope) });
    case 'currentUserBelongsTo':
      return json({ result: await belongsTo(scope, r.group) });
    default: {
      const never: never = r;
      return never;
    }
  }
}

/**
 * A login: refused while the address or the user name has failed too often (the count authentify
 * keeps), then directoryLogin judges the credentials. A refusal answers 401 with {"result": false}
 * beside the __ERROR, so that 4D's clients (reading result) and wakanda-client (reading the status)
 * both see it.
 */
async function login(scope: Scope, userName: string, password: string, idleMinutes: number | undefined): Promise<RestResponse> {
  if (hook(scope, 'directoryLogin') === undefined) {
    throw new DatasetError('NO_DIRECTORY', "$directory/login: this datastore has no legacy login (its DataStore class defines no directoryLogin): log in with POST /rest/$catalog/authentify, or define directoryLogin(userName, password)");
  }
  const client = scope.request.caller;
  await scope.services.logins.attempt(client, userName);
  const ok = await forgivenWhenBusy(scope, client, userName, () => callHook(scope, 'directoryLogin', [userName, password]));
  if (typeof ok !== 'boolean') throw new DatasetError('FUNCTION_FAILED', `directoryLogin of the DataStore class must answer true or false; it answered ${JSON.stringify(ok)?.slice(0, 60) ?? 'nothing'}`);
  if (!ok) {
    const refused = new DatasetError('LOGIN_FAILED', `$directory/login: the user name '${userName.slice(0, 100)}' and this password were refused`);
    return json({ result: false, __ERROR: refused.toWire() }, refused.status);
  }
  await scope.services.logins.succeeded(client, userName);
  if (idleMinutes !== undefined) scope.session.idleTimeout = idleMinutes;
  return json({ result: true });
}

async function currentUser(scope: Scope): Promise<DirectoryUser | null> {
  if (hook(scope, 'directoryUser') === undefined) {
    const name = scope.session.userName;
    return name === '' ? null : { ID: name, userName: name, fullName: name };
  }
  const user = await callHook(scope, 'directoryUser', []);
  if (user === null || user === undefined) return null;
  const u = user as Partial<DirectoryUser>;
  if (typeof u !== 'object' || (typeof u.ID !== 'string' && typeof u.ID !== 'number') || typeof u.userName !== 'string') {
    throw new DatasetError('FUNCTION_FAILED', `directoryUser of the DataStore class must answer {ID, userName, fullName} or null; it answered ${JSON.stringify(user)?.slice(0, 80)}`);
  }
  return { ID: u.ID, userName: u.userName, fullName: typeof u.fullName === 'string' ? u.fullName : u.userName };
}

async function belongsTo(scope: Scope, group: string): Promise<boolean> {
  if (hook(scope, 'directoryBelongsTo') === undefined) return !scope.session.isGuest() && scope.session.hasPrivilege(group);
  const answer = await callHook(scope, 'directoryBelongsTo', [group]);
  if (typeof answer !== 'boolean') throw new DatasetError('FUNCTION_FAILED', `directoryBelongsTo of the DataStore class must answer true or false; it answered ${JSON.stringify(answer)?.slice(0, 60) ?? 'nothing'}`);
  return answer;
}

function hook(scope: Scope, name: DirectoryHook): ((...args: unknown[]) => unknown) | undefined {
  const fn = (scope.ds as DirectoryHooks)[name];
  return typeof fn === 'function' ? (fn as (...args: unknown[]) => unknown) : undefined;
}

/** Runs a hook as the caller, with what roles.json promotes for "ds.<hook>", under the function time limit. */
function callHook(scope: Scope, name: DirectoryHook, args: unknown[]): Promise<unknown> {
  const fn = hook(scope, name) as (...args: unknown[]) => unknown;
  return invoke({
    name: `${name} of the DataStore class`,
    run: (a) => fn.apply(scope.ds, a),
    args,
    timeoutMs: scope.functionTimeoutMs,
    request: scope.request,
    socketFd: scope.socketFd,
    caller: { access: scope.access, session: scope.session },
    promote: scope.core.policy.promotes(`ds.${name}`),
  });
}
