// (placeholder until the single sign-on module lands: auth.json's "oidc" section)

export interface OidcProviderConfig {
  readonly name: string;
}

/** The providers of auth.json's "oidc" section (`at` names it in messages). */
export function readOidcSection(value: unknown, at: string, _env: NodeJS.ProcessEnv): OidcProviderConfig[] {
  if (!Array.isArray(value)) throw new Error(`${at} must be an array of providers`);
  if (value.length > 0) throw new Error(`${at}: single sign-on is not built yet`);
  return [];
}
