// The sign-ins waiting for their provider's callback, kept in the database (storage/system-tables/
// oidc.ts) so that any instance serves the callback: what the callback is checked against (the
// state, by its hash; the PKCE verifier; the nonce), where the browser goes afterwards, and the
// browser that started it. Bounded: at most MAX_PENDING_SIGN_INS at once, MAX_PENDING_SIGN_INS_PER_ADDRESS
// from one client address; each lives 10 minutes, and the expired ones are swept as new ones come.
//
// The browser binding: the login sets a cookie of its own (random, HttpOnly, SameSite=Lax, so
// that it comes back with the provider's top-level redirect), and the callback must bring the
// value whose hash the sign-in keeps. Without it, someone who started a sign-in as themselves
// could hand its callback URL to a victim, whose browser would then be signed in as them.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { MAX_PENDING_SIGN_INS, MAX_PENDING_SIGN_INS_PER_ADDRESS, OIDC_STATE_TTL_MS } from '../../config/oidc.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { Storage } from '../../storage/adapter.js';
import { countOidcStates, deleteExpiredOidcStates, insertOidcState, takeOidcState, type OidcStateRow } from '../../storage/system-tables/oidc.js';
import type { SignInChecks } from './provider-client.js';

/** A browser binding cookie's value: 32 hex digits (a value of another shape is replaced by a new one). */
const BINDING = /^[0-9a-f]{32}$/;
/** The longest state a callback may carry that is looked up (ours are 43 characters). */
const MAX_STATE = 256;

export interface NewSignIn {
  readonly provider: string;
  readonly redirectUri: string;
  readonly returnTo: string;
  /** the binding cookie's value */
  readonly binding: string;
  readonly address: string;
}

/** A sign-in taken back by its callback. */
export interface TakenSignIn extends SignInChecks {
  readonly redirectUri: string;
  readonly returnTo: string;
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The binding cookie's value to use: the one the browser brought when it is one of ours, else a new one. */
export function bindingValue(brought: string | undefined): string {
  return brought !== undefined && BINDING.test(brought) ? brought : randomBytes(16).toString('hex');
}

/** Keeps a new sign-in; resolves to its checks and its PKCE code challenge. 429 past the caps (nothing kept). */
export async function startSignIn(storage: Storage, now: number, sign: NewSignIn): Promise<{ checks: SignInChecks; codeChallenge: string }> {
  // (sweeping here keeps the table to the live sign-ins, whatever the rate: one indexed delete)
  await deleteExpiredOidcStates(storage, now);
  const { all, fromAddress } = await countOidcStates(storage, now, sign.address);
  // (counted, then kept: sign-ins started at the same instant may pass the caps by a few, never by more)
  if (fromAddress >= MAX_PENDING_SIGN_INS_PER_ADDRESS) throw new DatasetError('TOO_MANY_REQUESTS', `${fromAddress} sign-ins started from this address are waiting for their provider, the most it may have: finish one, or try again once they expire (10 minutes)`, { retryAfterS: 60 });
  if (all >= MAX_PENDING_SIGN_INS) throw new DatasetError('TOO_MANY_REQUESTS', `${all} sign-ins are waiting for their provider, the most the server keeps: try again in a minute`, { retryAfterS: 60 });
  const checks: SignInChecks = { state: random256(), nonce: random256(), verifier: random256() };
  const row: OidcStateRow = {
    stateHash: sha256(checks.state), provider: sign.provider, verifier: checks.verifier, nonce: checks.nonce,
    redirectUri: sign.redirectUri, returnTo: sign.returnTo, binding: sha256(sign.binding), address: sign.address, expires: now + OIDC_STATE_TTL_MS,
  };
  await insertOidcState(storage, row);
  // (RFC 7636 §4.2: S256, the verifier's SHA-256 in base64url)
  return { checks, codeChallenge: createHash('sha256').update(checks.verifier).digest('base64url') };
}

/** 256 random bits in base64url (43 characters): a state, a nonce, a PKCE verifier (RFC 7636 §4.1 asks 43 to 128 of these characters). */
function random256(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Takes the sign-in a callback's state names (once: a second callback finds nothing, on any
 * instance), checked to be live, this provider's and this browser's; else 400 OIDC_BAD_STATE.
 * A sign-in that fails a check is gone all the same: its state is spent.
 */
export async function takeSignIn(storage: Storage, now: number, provider: string, state: unknown, binding: string | undefined): Promise<TakenSignIn> {
  const bad = (why: string) => new DatasetError('OIDC_BAD_STATE', `this sign-in callback ${why}: sign in again`);
  if (typeof state !== 'string' || state === '') throw bad('carries no state (or more than one)');
  if (state.length > MAX_STATE) throw bad('carries a state no sign-in was given');
  const row = await takeOidcState(storage, sha256(state));
  if (row === undefined) throw bad('names no sign-in waiting for it (unknown, or its callback came already)');
  if (row.expires <= now) throw bad(`came too late: a sign-in waits ${OIDC_STATE_TTL_MS / 60_000} minutes for its callback`);
  if (row.provider !== provider) throw bad(`came to the provider "${provider}", but the sign-in was started with "${row.provider}"`);
  if (binding === undefined || !sameHash(row.binding, sha256(binding))) throw bad('came to another browser than the one that started the sign-in (or one that does not keep its cookies)');
  return { state, nonce: row.nonce, verifier: row.verifier, redirectUri: row.redirectUri, returnTo: row.returnTo };
}

function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}
