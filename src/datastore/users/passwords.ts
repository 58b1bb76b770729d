// Passwords of built-in users: Argon2id hashes (@node-rs/argon2, its defaults: 19 MiB, two passes,
// OWASP's first choice), what a password may be (auth.json's minimum length, a bound on its bytes,
// Argon2 hashing all it is given), and a hash of nothing anyone types, checked when a name is
// unknown: an answer takes as long whether the name exists or not.

import { hash, verify } from '@node-rs/argon2';
import { MAX_PASSWORD_BYTES, MAX_PASSWORD_CHECKS } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';

let decoy: Promise<string> | undefined;

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

let checking = 0;

/**
 * Whether the password is the hash's; undefined hash (an unknown user): checked against a decoy of
 * the same cost, false. Past MAX_PASSWORD_CHECKS in flight in this process, refused at once
 * (LOGINS_BUSY, 503): anyone may ask for a check, each holds 19 MiB and a thread of the pool that
 * file reads and compression share.
 */
export async function passwordMatches(stored: string | undefined, password: string): Promise<boolean> {
  if (checking >= MAX_PASSWORD_CHECKS) throw new DatasetError('LOGINS_BUSY', `${MAX_PASSWORD_CHECKS} password checks are running in this server process: try again in a moment`, [], { retryAfterS: 1 });
  checking++;
  try {
    const against = stored ?? (await (decoy ??= hash(`decoy:${Math.random()}`)));
    const ok = await verify(against, password).catch(() => false);
    return stored !== undefined && ok;
  } finally {
    checking--;
  }
}

/** Refuses a password that auth.json's minimum, or the bound on its size, does not take (WEAK_PASSWORD). */
export function checkPassword(password: unknown, minLength: number, what = 'the password'): string {
  if (typeof password !== 'string') throw new DatasetError('WEAK_PASSWORD', `${what} must be a text`);
  const length = [...password].length;
  if (length < minLength) throw new DatasetError('WEAK_PASSWORD', `${what} is ${length === 0 ? 'empty' : `${length} character${length === 1 ? '' : 's'} long`}: this project asks for at least ${minLength} (auth.json, users.minPasswordLength)`);
  if (Buffer.byteLength(password) > MAX_PASSWORD_BYTES) throw new DatasetError('WEAK_PASSWORD', `${what} is longer than ${MAX_PASSWORD_BYTES} bytes`);
  return password;
}
