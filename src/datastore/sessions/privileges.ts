// Who a session is and what it may do: setPrivileges()'s argument in its one form, who a session
// is (user name and privileges, compared to tell a login or a logout), and its grants — its own
// privileges with those a running function promotes (`promote`), as the policy expands them.
// The session (datastore/sessions/session.ts) decides what a change of who it is means (a new
// token, a new id, a logout).

import type { Grants, Policy } from '../../permissions/policy.js';
import type { State } from './state.js';

/** What setPrivileges() takes: "a,b", ["a", "b"], or { privileges, roles, userName }. */
export type PrivilegeSettings = string | readonly string[] | { readonly privileges?: string | readonly string[]; readonly roles?: string | readonly string[]; readonly userName?: string };

/** No privilege promoted: what every session starts with. */
export const NOTHING_PROMOTED: readonly string[] = Object.freeze([]);

/** setPrivileges()'s argument in its one form. */
export function privilegeSettings(settings: PrivilegeSettings): { privileges: string[]; roles: string[]; userName?: string } {
  const list = (v: unknown): string[] => (typeof v === 'string' ? v.split(',').map((x) => x.trim()).filter(Boolean) : Array.isArray(v) ? v.map(String) : []);
  if (typeof settings === 'string' || Array.isArray(settings)) return { privileges: list(settings), roles: [] };
  const o = settings as { privileges?: unknown; roles?: unknown; userName?: unknown };
  return { privileges: list(o.privileges), roles: list(o.roles), userName: typeof o.userName === 'string' ? o.userName : undefined };
}

/** Who the session is: its user name, how it logged in and its privileges, as one string. */
export function who(state: State): string {
  return JSON.stringify([state.userName, state.login, state.privileges]);
}

/** What a session holding these privileges may do while these are promoted (no copy when none is). */
export function grantsOf(policy: Policy, privileges: readonly string[], promoted: readonly string[]): Grants {
  return policy.grantsFor(promoted.length === 0 ? privileges : [...privileges, ...promoted]);
}

/** Holds the privilege, promoted ones counting (case-insensitive; every session is a guest). */
export function holds(privileges: readonly string[], promoted: readonly string[], name: string): boolean {
  const wanted = String(name).toLowerCase();
  return wanted === 'guest' || [...privileges, ...promoted].some((p) => p.toLowerCase() === wanted);
}
