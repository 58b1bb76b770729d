// Who a signed-in user is to the datastore, read from the provider's claims (the ID token's,
// completed by the userinfo endpoint's): the session's userName and its roles (auth.json's
// "roles": the claim's values through "map", plus "default").

import { MAX_USER_NAME } from '../../config/limits.js';
import type { OidcProviderConfig, OidcRoleMapping } from '../../config/oidc.js';
import { shownNameProblem } from '../../datastore/users/built-in-users.js';

/** The claims tried in turn for the user name when the provider names none. */
const USER_NAME_CLAIMS = ['preferred_username', 'email', 'sub'];

/**
 * The user name, or a sentence saying why there is none. A name is held to a built-in user's
 * rules (no control or invisible characters: a forged log line, a second "root" that looks the
 * same; MAX_USER_NAME characters), and an e-mail counts only when the provider says it verified it.
 * (How the session logged in is kept beside the name: a provider's "root" is never the built-in
 * root, whatever its name.)
 */
export function userNameOf(claims: Record<string, unknown>, provider: OidcProviderConfig): { userName: string } | { missing: string } {
  const names = provider.userNameClaim === undefined ? USER_NAME_CLAIMS : [provider.userNameClaim];
  for (const name of names) {
    const value = claims[name];
    if (name === 'email' && claims.email_verified !== true) continue;
    const text = typeof value === 'string' ? value.trim().normalize('NFC') : typeof value === 'number' ? String(value) : '';
    if (text !== '' && [...text].length <= MAX_USER_NAME && shownNameProblem(text, 'the name') === undefined) return { userName: text };
  }
  return { missing: `the provider gave no ${names.join(', nor ')} claim${names.includes('email') ? ' (an e-mail counts once verified)' : ''} of up to ${MAX_USER_NAME} characters, without control or invisible characters, to name the user by` };
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
