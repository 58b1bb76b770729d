// One OpenID Connect provider as the sign-in routes talk to it, through openid-client (panva's,
// certified): its metadata discovered once per process (again after a failure), the authorization
// URL, and the code exchanged for tokens — the ID token checked by openid-client (issuer,
// audience, signature, expiry, nonce; the state and the `iss` of the callback) — with the
// userinfo endpoint's claims added to the ID token's (a provider keeps profile claims there when
// the sign-in also issued an access token). Every failure becomes a DatasetError: 401 when the
// sign-in itself failed (refused, or an answer that cannot be trusted), 502 when the provider
// could not be used (unreachable, answering nonsense, refusing our client).

import * as oidc from 'openid-client';
import { isLoopbackUrl, OIDC_REQUEST_TIMEOUT_S, type OidcProviderConfig } from '../../config/oidc.js';
import { DatasetError } from '../../errors/dataset-error.js';

/** What a sign-in's callback is checked against (kept with its state). */
export interface SignInChecks {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
}

/** The provider's refusals that mean the user did not sign in, not that the provider failed. */
const USER_REFUSALS = new Set(['access_denied', 'login_required', 'consent_required', 'interaction_required', 'account_selection_required']);
/** openid-client's codes for an answer that arrived and was checked, and failed the checks: the sign-in is not to be trusted. */
const UNTRUSTED = new Set(['OAUTH_JWT_CLAIM_COMPARISON_FAILED', 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED', 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED', 'OAUTH_KEY_SELECTION_FAILED', 'OAUTH_INVALID_RESPONSE']);
/** Longest text of the provider's own shown in a message. */
const MAX_PROVIDER_TEXT = 200;

export class ProviderClient {
  #configuration: Promise<oidc.Configuration> | undefined;

  constructor(readonly provider: OidcProviderConfig) {}

  /** The provider's metadata and our client's (discovered at the first use; a failure is not kept: the next sign-in tries again). */
  configuration(): Promise<oidc.Configuration> {
    this.#configuration ??= this.#discover().catch((e: unknown) => {
      this.#configuration = undefined;
      throw unavailable(this.provider, 'its metadata (/.well-known/openid-configuration) cannot be read', e);
    });
    return this.#configuration;
  }

  /** The DatasetError of the `error` the provider's callback carries. */
  refusal(error: string, description: string | undefined): DatasetError {
    return providerRefusal(this.provider.name, error, description);
  }

  /** Where the browser is sent to sign in: the code flow with PKCE (S256), a state and a nonce. */
  authorizationUrl(configuration: oidc.Configuration, redirectUri: string, checks: SignInChecks, codeChallenge: string): URL {
    return oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: this.provider.scopes.join(' '),
      state: checks.state,
      nonce: checks.nonce,
      code_challenge: codeChallenge,
      code_challenge_method: 'S256',
    });
  }

  /** The claims of the user the callback signs in (`callbackUrl`: the redirect_uri with the callback's query); throws the DatasetError of a failure. */
  async signIn(configuration: oidc.Configuration, callbackUrl: URL, checks: SignInChecks): Promise<Record<string, unknown>> {
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, { pkceCodeVerifier: checks.verifier, expectedState: checks.state, expectedNonce: checks.nonce, idTokenExpected: true });
    } catch (e) {
      throw this.#failure(e, 'token');
    }
    const idClaims = tokens.claims();
    if (idClaims === undefined) throw new DatasetError('OIDC_SIGN_IN_FAILED', `the provider "${this.provider.name}" gave no ID token`);
    if (configuration.serverMetadata().userinfo_endpoint === undefined || !tokens.access_token) return { ...idClaims };
    let userInfo: Record<string, unknown>;
    try {
      userInfo = await oidc.fetchUserInfo(configuration, tokens.access_token, idClaims.sub);
    } catch (e) {
      throw this.#failure(e, 'userinfo');
    }
    // (the ID token's own claims win: signed, and checked above)
    return { ...userInfo, ...idClaims };
  }

  async #discover(): Promise<oidc.Configuration> {
    const { issuer, clientId, clientSecret } = this.provider;
    // a confidential client authenticates with HTTP Basic (the OpenID default); a public one sends its id alone
    const authentication = clientSecret === undefined ? oidc.None() : oidc.ClientSecretBasic(clientSecret);
    // (plain http is taken only for an issuer on this machine: config/oidc.ts refuses it elsewhere)
    // (openid-client marks it deprecated to be noticed: it is its documented switch for local development)
    const execute = isLoopbackUrl(issuer) && new URL(issuer).protocol === 'http:' ? [oidc.allowInsecureRequests] : [];
    return oidc.discovery(new URL(issuer), clientId, clientSecret === undefined ? undefined : { client_secret: clientSecret }, authentication, { execute, timeout: OIDC_REQUEST_TIMEOUT_S });
  }

  /** The DatasetError of a failed request to the token or the userinfo endpoint. */
  #failure(e: unknown, endpoint: 'token' | 'userinfo'): DatasetError {
    const name = this.provider.name;
    if (e instanceof oidc.AuthorizationResponseError) return providerRefusal(name, e.error, e.error_description);
    // (the code was expired, used or issued for another verifier: the user's sign-in failed)
    if (e instanceof oidc.ResponseBodyError && e.error === 'invalid_grant') return new DatasetError('OIDC_SIGN_IN_FAILED', `the provider "${name}" refused the sign-in's code (${providerText(e.error, e.error_description)}): sign in again`);
    if (e instanceof oidc.ResponseBodyError) return unavailable(this.provider, `its ${endpoint} endpoint refused us (${providerText(e.error, e.error_description)})`, e);
    if (e instanceof oidc.WWWAuthenticateChallengeError) {
      const said = e.cause[0]?.parameters.error ?? 'no reason given';
      // the token endpoint refusing is our client refused (its id or secret): the server's to fix; the userinfo endpoint refusing a token just issued, the sign-in's
      if (endpoint === 'token') return unavailable(this.provider, `its token endpoint refused our client (${clip(said)}): check clientId and the client secret`, e);
      return new DatasetError('OIDC_SIGN_IN_FAILED', `the provider "${name}" refused the sign-in's access token at its userinfo endpoint (${clip(said)}): sign in again`);
    }
    if (e instanceof oidc.ClientError && e.code !== undefined && UNTRUSTED.has(e.code)) {
      return new DatasetError('OIDC_SIGN_IN_FAILED', `the provider "${name}"'s answer failed its checks (${clip(e.message)}): the sign-in is not trusted`, { cause: e });
    }
    return unavailable(this.provider, `its ${endpoint} endpoint could not be reached or gave no usable answer`, e);
  }
}

function providerRefusal(provider: string, error: string, description: string | undefined): DatasetError {
  const said = providerText(error, description);
  if (USER_REFUSALS.has(error)) return new DatasetError('OIDC_SIGN_IN_FAILED', `the provider "${provider}" did not sign the user in (${said})`);
  return new DatasetError('OIDC_PROVIDER_UNAVAILABLE', `the provider "${provider}" could not serve the sign-in (${said})`);
}

/** 502: the provider cannot be used now; what failed goes to the server's log. */
function unavailable(provider: OidcProviderConfig, what: string, cause: unknown): DatasetError {
  return new DatasetError('OIDC_PROVIDER_UNAVAILABLE', `the sign-in provider "${provider.name}" (${provider.issuer}) cannot be used: ${what}; the cause is in the server log`, { cause });
}

/** The provider's error code and description, as it gave them, bounded and without control characters. */
function providerText(error: string, description: string | undefined): string {
  return description === undefined || description === '' ? clip(error) : `${clip(error)}: ${clip(description)}`;
}

function clip(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is taken out
  const plain = String(text).replace(/[\x00-\x1f\x7f]+/g, ' ');
  return plain.length > MAX_PROVIDER_TEXT ? `${plain.slice(0, MAX_PROVIDER_TEXT)}…` : plain;
}
