// auth.json's "oidc" section: the OpenID Connect providers a session may sign in with (single
// sign-on, issue 37; the flow is http/oidc/). Read and checked at the start, so that a typo stops
// the server with the file, the JSON path and what is wrong, not the first user's sign-in.
//   "oidc": [{"name": "corp", "issuer": "https://login.corp.example", "clientId": "dataset",
//             "clientSecretEnv": "CORP_OIDC_SECRET", "scopes": ["openid", "profile", "email"],
//             "userNameClaim": "preferred_username",
//             "roles": {"claim": "groups", "map": {"hr": ["Payroll"]}, "default": ["Editor"]},
//             "redirectUri": "https://data.corp.example/rest/$oidc/corp/callback"}]
// Role names are not checked against roles.json here (this layer knows no policy): a session
// given a role roles.json does not define holds nothing by it, as Session.setPrivileges does.

/** How long a started sign-in waits for the provider's callback. */
export const OIDC_STATE_TTL_MS = 10 * 60_000;
/** Sign-ins waiting for their callback at once, every instance together: past it, new ones are refused (429) until some finish or expire. */
export const MAX_PENDING_SIGN_INS = 10_000;
/** ... and from one client address (so that one client cannot take them all). */
export const MAX_PENDING_SIGN_INS_PER_ADDRESS = 30;
/** How long a request to a provider (discovery, token, userinfo) may take, in seconds. */
export const OIDC_REQUEST_TIMEOUT_S = 10;

export interface OidcRoleMapping {
  /** the claim whose values (a string or an array of strings) are looked up in `map` */
  readonly claim: string;
  /** claim value → role names of roles.json */
  readonly map: Readonly<Record<string, readonly string[]>>;
  /** roles every user signed in by this provider gets */
  readonly default: readonly string[];
}

export interface OidcProviderConfig {
  /** URL-safe, unique: /rest/$oidc/<name>/login */
  readonly name: string;
  /** the issuer identifier; its metadata is at <issuer>/.well-known/openid-configuration */
  readonly issuer: string;
  readonly clientId: string;
  /** the client secret (given, or read from the environment at the start); none: a public client, PKCE alone */
  readonly clientSecret?: string;
  /** asked for at the sign-in; "openid" among them */
  readonly scopes: readonly string[];
  /** the claim the session's userName is taken from; undefined: preferred_username, else email, else sub */
  readonly userNameClaim?: string;
  readonly roles: OidcRoleMapping;
  /** our callback's absolute URL as the provider must call it (behind a proxy); undefined: made from the request's scheme and Host */
  readonly redirectUri?: string;
}

const PROVIDER_KEYS = ['name', 'issuer', 'clientId', 'clientSecret', 'clientSecretEnv', 'scopes', 'userNameClaim', 'roles', 'redirectUri'];
const ROLES_KEYS = ['claim', 'map', 'default'];
const DEFAULT_SCOPES = ['openid', 'profile', 'email'];
const DEFAULT_ROLE_CLAIM = 'groups';
/** a provider's name appears in URLs: letters, digits, - and _ */
const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** a scope token (RFC 6749 §3.3): printable ASCII but space, " and \ */
const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]+$/;
/** hosts an issuer may be reached on over plain http: this machine only (development, tests) */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Whether the issuer is on this machine, the one case where plain http is taken (and openid-client is told so). */
export function isLoopbackUrl(url: string): boolean {
  return LOOPBACK.has(new URL(url).hostname);
}

/** What is wrong with the section, where (project/auth-file.ts reports it as the file's error). */
export class OidcConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OidcConfigError';
  }
}

/** ", did you mean 'x'?" or "" for an unknown key (util/suggest.ts's didYouMean, passed in: config/ sits below util/). */
export type Suggest = (name: string, candidates: readonly string[]) => string;

/**
 * The providers of auth.json's "oidc" section (`at` names it in messages, e.g. "…/auth.json:
 * $.oidc"); an OidcConfigError says what is wrong.
 */
export function readOidcSection(value: unknown, at: string, env: NodeJS.ProcessEnv, suggest: Suggest = () => ''): OidcProviderConfig[] {
  const fail: Fail = (path, what) => {
    throw new OidcConfigError(`${at}${path} ${what}`);
  };
  fail.suggest = suggest;
  if (!Array.isArray(value)) return fail('', 'must be an array of providers ({"name", "issuer", "clientId", …})');
  const providers = value.map((item, i) => provider(item, `[${i}]`, env, fail));
  const seen = new Map<string, number>();
  providers.forEach((p, i) => {
    const before = seen.get(p.name.toLowerCase());
    if (before !== undefined) fail(`[${i}].name`, `is ${JSON.stringify(p.name)}, the name of the provider at [${before}] too (names are compared ignoring case): each provider needs a name of its own`);
    seen.set(p.name.toLowerCase(), i);
  });
  return providers;
}

/** Throws the section's error at a path; and suggests the closest key. */
interface Fail {
  (path: string, what: string): never;
  suggest: Suggest;
}

function provider(value: unknown, path: string, env: NodeJS.ProcessEnv, fail: Fail): OidcProviderConfig {
  const o = objectOf(value, path, PROVIDER_KEYS, fail);
  const name = text(o.name, `${path}.name`, fail);
  if (!NAME.test(name)) fail(`${path}.name`, `is ${JSON.stringify(name)}: a provider's name is part of its URLs, so 1 to 64 letters, digits, - or _`);
  const issuer = issuerUrl(text(o.issuer, `${path}.issuer`, fail), `${path}.issuer`, fail);
  const clientId = text(o.clientId, `${path}.clientId`, fail);
  const clientSecret = secret(o, path, env, fail);
  const scopes = o.scopes === undefined ? DEFAULT_SCOPES : scopeList(o.scopes, `${path}.scopes`, fail);
  const userNameClaim = o.userNameClaim === undefined ? undefined : text(o.userNameClaim, `${path}.userNameClaim`, fail);
  const redirectUri = o.redirectUri === undefined ? undefined : callbackUrl(text(o.redirectUri, `${path}.redirectUri`, fail), name, `${path}.redirectUri`, fail);
  return {
    name, issuer, clientId, scopes, roles: roleMapping(o.roles, `${path}.roles`, fail),
    ...(clientSecret === undefined ? {} : { clientSecret }),
    ...(userNameClaim === undefined ? {} : { userNameClaim }),
    ...(redirectUri === undefined ? {} : { redirectUri }),
  };
}

/** The secret, given or from the environment (one of them, or neither for a public client). */
function secret(o: Record<string, unknown>, path: string, env: NodeJS.ProcessEnv, fail: Fail): string | undefined {
  if (o.clientSecret !== undefined && o.clientSecretEnv !== undefined) fail(`${path}`, 'gives both clientSecret and clientSecretEnv: give one (clientSecretEnv keeps the secret out of the file)');
  if (o.clientSecret !== undefined) return text(o.clientSecret, `${path}.clientSecret`, fail);
  if (o.clientSecretEnv === undefined) return undefined;
  const name = text(o.clientSecretEnv, `${path}.clientSecretEnv`, fail);
  if (!ENV_NAME.test(name)) fail(`${path}.clientSecretEnv`, `is ${JSON.stringify(name)}, which is no environment variable's name`);
  const given = env[name];
  if (given === undefined || given === '') fail(`${path}.clientSecretEnv`, `names the environment variable ${name}, which is not set (or empty): set it to the client secret`);
  return given;
}

function issuerUrl(value: string, path: string, fail: Fail): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(path, `is ${JSON.stringify(value)}, which is not an absolute URL`);
  }
  // (the issuer is what the ID token's iss must equal: kept as written, a trailing slash and all)
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') fail(path, `is ${JSON.stringify(value)}: an issuer has no query, fragment or credentials`);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) fail(path, `is ${JSON.stringify(value)}: an issuer is reached over https (plain http only on this machine: 127.0.0.1, localhost, [::1])`);
  return value;
}

/** Our callback as the provider calls it: absolute, ending with /$oidc/<name>/callback (a proxy may mount /rest elsewhere). */
function callbackUrl(value: string, name: string, path: string, fail: Fail): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail(path, `is ${JSON.stringify(value)}, which is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') fail(path, `is ${JSON.stringify(value)}: an http or https URL`);
  if (url.search !== '' || url.hash !== '') fail(path, `is ${JSON.stringify(value)}: the callback's URL has no query or fragment (the provider adds its own)`);
  const tail = `/$oidc/${name}/callback`;
  if (!url.pathname.endsWith(tail)) fail(path, `is ${JSON.stringify(value)}: it must end with ${tail}, the route the provider calls back`);
  return value;
}

function scopeList(value: unknown, path: string, fail: Fail): string[] {
  const scopes = textList(value, path, fail);
  for (const [i, s] of scopes.entries()) if (!SCOPE.test(s)) fail(`${path}[${i}]`, `is ${JSON.stringify(s)}, which is no scope (one word, no spaces or quotes)`);
  if (!scopes.includes('openid')) fail(path, 'must include "openid" (without it the provider signs nobody in: it issues no ID token)');
  if (new Set(scopes).size !== scopes.length) fail(path, 'names a scope twice');
  return scopes;
}

function roleMapping(value: unknown, path: string, fail: Fail): OidcRoleMapping {
  if (value === undefined) return { claim: DEFAULT_ROLE_CLAIM, map: {}, default: [] };
  const o = objectOf(value, path, ROLES_KEYS, fail);
  // (a null-prototype object: a claim value such as "__proto__" is a key like any other)
  const map = Object.create(null) as Record<string, readonly string[]>;
  if (o.map !== undefined) {
    const m = objectOf(o.map, `${path}.map`, undefined, fail);
    for (const [claimValue, roles] of Object.entries(m)) map[claimValue] = textList(roles, `${path}.map[${JSON.stringify(claimValue)}]`, fail);
  }
  return {
    claim: o.claim === undefined ? DEFAULT_ROLE_CLAIM : text(o.claim, `${path}.claim`, fail),
    map,
    default: o.default === undefined ? [] : textList(o.default, `${path}.default`, fail),
  };
}

/** An object; with `keys`, of those keys only (an unknown one is refused with the closest named). */
function objectOf(value: unknown, path: string, keys: readonly string[] | undefined, fail: Fail): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(path, 'must be an object');
  if (keys) for (const k of Object.keys(value)) if (!keys.includes(k)) fail(`${path}.${k}`, `is not a setting${fail.suggest(k, keys)}: the settings are ${keys.join(', ')}`);
  return value as Record<string, unknown>;
}

function text(value: unknown, path: string, fail: Fail): string {
  if (typeof value !== 'string' || value.trim() === '') return fail(path, 'must be a non-empty string');
  return value;
}

function textList(value: unknown, path: string, fail: Fail): string[] {
  if (!Array.isArray(value)) return fail(path, 'must be an array of strings');
  return value.map((v, i) => text(v, `${path}[${i}]`, fail));
}
