// Who a signed-in user is to the datastore, read from the provider's claims (the ID token's,
// completed by the userinfo endpoint's): the session's userName and its roles (auth.json's
// "roles": the claim's values through "map", plus "default").

import type { OidcProviderConfig, OidcRoleMapping } from '../../config/oidc.js';

/** The claims tried in turn for the user name when the provider names none. */
const USER_NAME_CLAIMS = ['preferred_username', 'email', 'sub'];
/** A user name longer than this is no name a provider means (sessions keep it, $info shows it). */
const MAX_USER_NAME = 255;

/** The user name, or a sentence saying why there is none. */
export function userNameOf(claims: Record<string, unknown>, provider: OidcProviderConfig): { userName: string } | { missing: string } {
  const names = provider.userNameClaim === undefined ? USER_NAME_CLAIMS : [provider.userNameClaim];
  for (const name of names) {
    const value = claims[name];
    const text = typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';
    if (text !== '' && text.length <= MAX_USER_NAME) return { userName: text };
  }
  return { missing: `the provider gave no ${names.join(', nor ')} claim of up to ${MAX_USER_NAME} characters to name the user by` };
}

/** The roles of the claim's values (a string or an array of strings) through the map, then the default ones; each once. */
export function rolesOf(claims: Record<string, unknown>, mapping: OidcRoleMapping): string[] {
  const given = claims[mapping.claim];
  const values = typeof given === 'string' ? [given] : Array.isArray(given) ? given.filter((v): v is string => typeof v === 'string') : [];
  const roles = new Set<string>();
  // (the map has no prototype: a value such as "constructor" finds nothing)
  for (const value of values) for (const role of mapping.map[value] ?? []) roles.add(role);
  for (const role of mapping.default) roles.add(role);
  return [...roles];
}
