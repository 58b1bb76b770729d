// The settings of a project's auth.json (project/auth-file.ts reads it): built-in users, API
// tokens, single sign-on. Here, below every layer that uses them.

import type { OidcProviderConfig } from './oidc.js';

/** The built-in users' settings. */
export interface UsersSettings {
  /** the shortest password taken (0: any, even empty — never the default) */
  readonly minPasswordLength: number;
  /** past `failures` wrong passwords in a row for one (folded) user name, its logins are refused for `minutes` */
  readonly lockout: { readonly failures: number; readonly minutes: number };
}

export interface TokensSettings {
  /** the longest life a token may be given, in days (0: no bound) */
  readonly maxDays: number;
}

export interface AuthConfig {
  /** built-in users, when on */
  readonly users?: UsersSettings;
  readonly tokens: TokensSettings;
  readonly oidc: readonly OidcProviderConfig[];
}

export const DEFAULT_USERS: UsersSettings = { minPasswordLength: 8, lockout: { failures: 10, minutes: 15 } };
export const DEFAULT_TOKENS: TokensSettings = { maxDays: 0 };
/** A project without auth.json: no built-in users, no single sign-on. */
export const NO_AUTH: AuthConfig = { tokens: DEFAULT_TOKENS, oidc: [] };

