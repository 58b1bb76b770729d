// Single sign-on's sign-ins waiting for the provider's callback (http/oidc/): one row a started
// sign-in, keyed by the SHA-256 of its `state` (the state itself travels only in the browser and
// the provider's redirects), so that the callback is served by whichever instance it reaches and
// works once: it is taken by a DELETE … RETURNING, which one request alone can win.

import type { Dialect } from '../../sql/dialect.js';
import type { Reader, Storage } from '../adapter.js';

/** The pending sign-ins (created with the other internal tables: tables.ts). */
export const OIDC_STATE_TABLE = '__dataset_oidc_states';

export interface OidcStateRow {
  /** the SHA-256 of the state (hex) */
  readonly stateHash: string;
  /** the provider's name (auth.json) */
  readonly provider: string;
  /** the PKCE code verifier, sent with the code to the token endpoint */
  readonly verifier: string;
  /** what the ID token's nonce must be */
  readonly nonce: string;
  /** the redirect_uri sent at the sign-in, which the code exchange must repeat */
  readonly redirectUri: string;
  /** where the browser goes once signed in (a same-origin path) */
  readonly returnTo: string;
  /** the SHA-256 of the browser binding cookie's value: the callback must come from the browser that started it */
  readonly binding: string;
  /** the client address that started it (the per-address cap counts by it) */
  readonly address: string;
  /** ms since the epoch */
  readonly expires: number;
}

const COLUMNS = ['stateHash', 'provider', 'verifier', 'nonce', 'redirectUri', 'returnTo', 'binding', 'address', 'expires'] as const;

/** The table and its indexes (the sweep reads by expiry, the per-address cap by address). */
export function oidcStateTableStatements(d: Dialect): string[] {
  const q = d.sql.quote;
  return [
    `CREATE TABLE IF NOT EXISTS ${q(OIDC_STATE_TABLE)} (${q('stateHash')} TEXT PRIMARY KEY, ${q('provider')} TEXT NOT NULL, ${q('verifier')} TEXT NOT NULL, ${q('nonce')} TEXT NOT NULL, ${q('redirectUri')} TEXT NOT NULL, ${q('returnTo')} TEXT NOT NULL, ${q('binding')} TEXT NOT NULL, ${q('address')} TEXT NOT NULL, ${q('expires')} ${d.types.bigint} NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS ${q(`${OIDC_STATE_TABLE}_expires`)} ON ${q(OIDC_STATE_TABLE)} (${q('expires')})`,
    `CREATE INDEX IF NOT EXISTS ${q(`${OIDC_STATE_TABLE}_address`)} ON ${q(OIDC_STATE_TABLE)} (${q('address')}, ${q('expires')})`,
  ];
}

export async function insertOidcState(s: Storage, row: OidcStateRow): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(`INSERT INTO ${q(OIDC_STATE_TABLE)} (${COLUMNS.map((c) => q(c)).join(', ')}) VALUES (${COLUMNS.map((_, i) => p(i + 1)).join(', ')})`, COLUMNS.map((c) => row[c]));
}

/** The live pending sign-ins, in all and from one address. */
export async function countOidcStates(r: Reader, now: number, address: string): Promise<{ all: number; fromAddress: number }> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  // (placeholders numbered in the order they appear: SQLite's are positional)
  const row = await r.get(
    `SELECT COUNT(*) AS n, COALESCE(SUM(CASE WHEN ${q('address')} = ${p(1)} THEN 1 ELSE 0 END), 0) AS mine FROM ${q(OIDC_STATE_TABLE)} WHERE ${q('expires')} > ${p(2)}`,
    [address, now],
  );
  return { all: Number(row?.n ?? 0), fromAddress: Number(row?.mine ?? 0) };
}

/** Takes a pending sign-in (removed whatever it holds, live or expired): undefined when no row has that hash — unknown, or taken already. */
export async function takeOidcState(s: Storage, stateHash: string): Promise<OidcStateRow | undefined> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const rows = await s.all(`DELETE FROM ${q(OIDC_STATE_TABLE)} WHERE ${q('stateHash')} = ${p(1)} RETURNING ${COLUMNS.map((c) => `${q(c)} AS ${q(c)}`).join(', ')}`, [stateHash]);
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    stateHash: String(row.stateHash), provider: String(row.provider), verifier: String(row.verifier), nonce: String(row.nonce), redirectUri: String(row.redirectUri),
    returnTo: String(row.returnTo), binding: String(row.binding), address: String(row.address), expires: Number(row.expires),
  };
}

/** Removes the sign-ins past their expiry; resolves to how many. */
export async function deleteExpiredOidcStates(s: Storage, now: number): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  return s.run(`DELETE FROM ${q(OIDC_STATE_TABLE)} WHERE ${q('expires')} <= ${p(1)}`, [now]);
}
