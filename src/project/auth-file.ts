// A project's auth.json (issue 37): how people log in besides the project's own authentify.
// Beside model.json and roles.json, read at every start (by the server and by the commands):
//   {"users": {"minPasswordLength": 10, "lockout": {"failures": 10, "minutes": 15}},
//    "tokens": {"maxDays": 365},
//    "oidc": [{"name": "corp", "issuer": "https://login.example", "clientId": "…", "clientSecretEnv": "CORP_OIDC_SECRET", …}]}
// `"users": true` (or an object) turns the built-in users on (datastore/users/); "tokens" bounds
// the API tokens they may hold; "oidc" lists the OpenID Connect providers a session may sign in
// with (config/oidc.ts reads that part). Everything is checked here, at the start.

import { readFileSync } from 'node:fs';
import { DEFAULT_TOKENS, DEFAULT_USERS, type AuthConfig, type TokensSettings, type UsersSettings } from '../config/auth.js';
import { OidcConfigError, readOidcSection, type OidcProviderConfig } from '../config/oidc.js';
import { didYouMean } from '../util/suggest.js';

export const AUTH_FILE = 'auth.json';

export class AuthFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthFileError';
  }
}

const KEYS = ['users', 'tokens', 'oidc'];
const USERS_KEYS = ['minPasswordLength', 'lockout'];
const LOCKOUT_KEYS = ['failures', 'minutes'];
const TOKENS_KEYS = ['maxDays'];

/** The settings of an auth.json; an AuthFileError says what is wrong and where. */
export function readAuthFile(file: string, env: NodeJS.ProcessEnv = process.env): AuthConfig {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new AuthFileError(`${file} cannot be read as JSON: ${(e as Error).message}`);
  }
  return authConfig(parsed, file, env);
}

/** The settings of auth.json's text as parsed (`file` names it in messages). */
export function authConfig(parsed: unknown, file: string, env: NodeJS.ProcessEnv = process.env): AuthConfig {
  const fail = (at: string, what: string): never => {
    throw new AuthFileError(`${file}: ${at} ${what}`);
  };
  const root = objectAt(parsed, '$', KEYS, fail);
  return {
    ...(root.users === undefined || root.users === false ? {} : { users: usersSettings(root.users, fail) }),
    tokens: root.tokens === undefined ? DEFAULT_TOKENS : tokensSettings(root.tokens, fail),
    oidc: root.oidc === undefined ? [] : oidcSection(root.oidc, file, env),
  };
}

/** The "oidc" section (config/oidc.ts checks it), its mistakes reported as the file's. */
function oidcSection(value: unknown, file: string, env: NodeJS.ProcessEnv): OidcProviderConfig[] {
  try {
    return readOidcSection(value, `${file}: $.oidc`, env, didYouMean);
  } catch (e) {
    if (e instanceof OidcConfigError) throw new AuthFileError(e.message);
    throw e;
  }
}

function usersSettings(value: unknown, fail: (at: string, what: string) => never): UsersSettings {
  if (value === true) return DEFAULT_USERS;
  const o = objectAt(value, '$.users', USERS_KEYS, fail, 'must be true, false or an object');
  const lockout = o.lockout === undefined ? DEFAULT_USERS.lockout : objectAt(o.lockout, '$.users.lockout', LOCKOUT_KEYS, fail);
  return {
    minPasswordLength: o.minPasswordLength === undefined ? DEFAULT_USERS.minPasswordLength : whole(o.minPasswordLength, '$.users.minPasswordLength', 0, 1024, fail),
    lockout: {
      failures: lockout.failures === undefined ? DEFAULT_USERS.lockout.failures : whole(lockout.failures, '$.users.lockout.failures', 1, 1_000_000, fail),
      minutes: lockout.minutes === undefined ? DEFAULT_USERS.lockout.minutes : whole(lockout.minutes, '$.users.lockout.minutes', 1, 525_600, fail),
    },
  };
}

function tokensSettings(value: unknown, fail: (at: string, what: string) => never): TokensSettings {
  const o = objectAt(value, '$.tokens', TOKENS_KEYS, fail);
  return { maxDays: o.maxDays === undefined ? DEFAULT_TOKENS.maxDays : whole(o.maxDays, '$.tokens.maxDays', 0, 36_500, fail) };
}

/** An object of known keys (an unknown one is refused, with the closest known named). */
function objectAt(value: unknown, at: string, keys: readonly string[], fail: (at: string, what: string) => never, what = 'must be an object'): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(at, what);
  for (const k of Object.keys(value)) if (!keys.includes(k)) fail(`${at}.${k}`, `is not a setting${didYouMean(k, keys)}: the settings are ${keys.join(', ')}`);
  return value as Record<string, unknown>;
}

function whole(value: unknown, at: string, min: number, max: number, fail: (at: string, what: string) => never): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) return fail(at, `must be a whole number from ${min} to ${max}`);
  return value;
}
