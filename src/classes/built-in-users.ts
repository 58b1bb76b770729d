// The functions built-in users give a project (auth.json's "users"), installed on the datastore
// when its DataStore class does not define them itself (a project's own authentify wins, and so
// do its own logout, changePassword and $directory hooks): POST /rest/$catalog/authentify
// [{"userName", "password"}], logout, changePassword [{"currentPassword", "newPassword"}], and
// 4D's legacy $directory/login, currentUser and currentUserBelongsTo. They follow roles.json
// like the project's own functions (authentify is always callable; logout and changePassword
// need the datastore's `execute`, as any function).

import { session } from '../datastore/access/caller.js';
import { coreOf, Datastore } from '../datastore/datastore.js';
import type { BuiltInUsers, UserInfo } from '../datastore/users/built-in-users.js';
import { DatasetError } from '../errors/dataset-error.js';
import { exposed, params } from '../functions/exposure.js';

/** The login a built-in authentify answers: who the session is now. */
export interface LoginAnswer {
  readonly success: true;
  readonly userName: string;
  readonly privileges: string[];
}

function usersOf(ds: Datastore): BuiltInUsers {
  const users = coreOf(ds).users;
  if (!users) throw new DatasetError('USERS_NOT_ENABLED', 'this project has no built-in users: add {"users": true} to its auth.json');
  return users;
}

/** Gives the request's session the user's roles (a new cookie, a new id: Session.setPrivileges). */
function logIn(user: UserInfo): void {
  session().setPrivileges({ roles: [...user.roles], userName: user.userName });
}

const LOGIN_REFUSED = 'unknown user name or wrong password';

class BuiltInUserFunctions extends Datastore {
  /** Logs the session in as a built-in user; 401 LOGIN_FAILED otherwise (the same answer, in the same time, for an unknown name and a wrong password). */
  @exposed
  @params('credentials: object')
  async authentify(credentials: { userName?: unknown; password?: unknown }): Promise<LoginAnswer> {
    const { userName, password } = credentials;
    if (typeof userName !== 'string' || typeof password !== 'string') {
      throw new DatasetError('INVALID_PARAMETER', 'authentify takes [{"userName": "<name>", "password": "<text>"}]');
    }
    const user = await usersOf(this).verify(userName, password);
    if (!user) throw new DatasetError('LOGIN_FAILED', `authentify: ${LOGIN_REFUSED}`);
    logIn(user);
    return { success: true, userName: session().userName, privileges: session().getPrivileges() };
  }

  /** Logs the session out: a guest again, under a new cookie. */
  @exposed
  @params()
  logout(): boolean {
    return session().clearPrivileges();
  }

  /** Changes the logged-in user's password: the current one must be given (it counts toward the lockout as a login does); its other sessions end. */
  @exposed
  @params('passwords: object')
  async changePassword(passwords: { currentPassword?: unknown; newPassword?: unknown }): Promise<boolean> {
    const users = usersOf(this);
    const name = session().userName;
    if (name === '' || !(await users.get(name))) {
      throw new DatasetError('NO_PERMISSION_EXECUTE', 'changePassword changes the password of the built-in user the session is logged in as: log in first', { status: 401 });
    }
    if (typeof passwords.currentPassword !== 'string') throw new DatasetError('INVALID_PARAMETER', 'changePassword takes [{"currentPassword": "<text>", "newPassword": "<text>"}]');
    if (!(await users.verify(name, passwords.currentPassword))) throw new DatasetError('WRONG_PASSWORD', 'changePassword: the current password is wrong');
    // (the user's other sessions end: one of them may be why the password changes)
    await users.setPassword(name, passwords.newPassword, session().id);
    return true;
  }

  /** POST /rest/$directory/login (wakanda-client's directory.login). */
  async directoryLogin(userName: string, password: string): Promise<boolean> {
    const user = await usersOf(this).verify(userName, password);
    if (user) logIn(user);
    return user !== undefined;
  }

  /** GET /rest/$directory/currentUser: the built-in user, its name as its ID. */
  async directoryUser(): Promise<{ ID: string; userName: string; fullName: string } | null> {
    const user = session().userName === '' ? undefined : await usersOf(this).get(session().userName);
    return user ? { ID: user.userName, userName: user.userName, fullName: user.userName } : null;
  }

  /** POST /rest/$directory/currentUserBelongsTo ["Editor"]: the user has that role, or the session that privilege. */
  async directoryBelongsTo(group: string): Promise<boolean> {
    const user = session().userName === '' ? undefined : await usersOf(this).get(session().userName);
    if (!user) return false;
    const wanted = String(group).toLowerCase();
    return user.roles.some((r) => r.toLowerCase() === wanted) || session().getPrivileges().some((p) => p.toLowerCase() === wanted);
  }
}

const FUNCTIONS = ['authentify', 'logout', 'changePassword', 'directoryLogin', 'directoryUser', 'directoryBelongsTo'] as const;

/**
 * Puts the built-in functions the datastore does not have (its DataStore class's own win) on a
 * prototype in front of its own: the catalog, roles.json, OpenAPI and the REST planner then see
 * them as the project's functions.
 */
export function installBuiltInUserFunctions(ds: Datastore): void {
  const own = Object.getPrototypeOf(ds) as object;
  const layer = Object.create(own) as Record<string, unknown>;
  const source = BuiltInUserFunctions.prototype as unknown as Record<string, unknown>;
  let added = 0;
  for (const name of FUNCTIONS) {
    if (name in ds) continue;
    layer[name] = source[name];
    added++;
  }
  if (added > 0) Object.setPrototypeOf(ds, layer);
}
