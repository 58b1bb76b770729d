// Session tokens and ids: the random token a cookie holds (128 bits, drawn from a pool so that a
// cookieless guest's token each request costs no system call), what the database keys a token by
// (its SHA-256: the database never holds a token), the forms a cookie may take (a stored
// session's token in upper case, a guest's never stored in lower case), and the id of a guest
// never stored, drawn one-way from its token.

import { createHash, randomBytes, randomUUID } from 'node:crypto';

/** Random bytes drawn 4 KB at a time: a token each request (every cookieless guest gets one) costs a slice, not a system call. */
let pool = Buffer.alloc(0);
let used = 0;

/** A new cookie token: 128 random bits, as 32 upper-case hex digits (4D's UUID look; a session never stored shows them in lower case). */
export function newToken(): string {
  if (used + 16 > pool.length) {
    pool = randomBytes(4096);
    used = 0;
  }
  used += 16;
  return pool.toString('hex', used - 16, used).toUpperCase();
}

/** What the database keys a token by. */
export function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * The id of a guest never stored whose client sends its cookie back: drawn from the token
 * (one-way, and not the hash the database keys the token by), so that every request of that
 * client is the same session, stored or not.
 */
export function keptGuestId(token: string): string {
  return createHash('sha256').update(`session id:${token}`).digest('hex').slice(0, 32).toUpperCase();
}

/** the cookie of a stored session (or of one to look up) */
export const TOKEN = /^[0-9A-F]{32}$/;
/** the cookie of a guest never stored */
export const GUEST_TOKEN = /^[0-9a-f]{32}$/;

/** A one-time passcode (createOTP): a UUID, as 4D's (122 random bits). */
export function newPasscode(): string {
  return randomUUID().toUpperCase();
}

/** A passcode's form: a UUID, either case. */
export const PASSCODE = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;
