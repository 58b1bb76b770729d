// What a session is, as stored, and what a request changed of it: the state a Session holds for
// one request (its id, user, privileges, storage, idle timeout, expiry), the parts of it a
// request changed (written back part by part, datastore/sessions/store.ts), and the storage
// object's stored text.

import { DatasetError } from '../../errors/dataset-error.js';

/** The state of a session, as stored. */
export interface State {
  id: string;
  userName: string;
  privileges: readonly string[];
  storage: Record<string, unknown>;
  idleMs: number;
  expires: number;
}

/**
 * What a request changed of its session, part by part: a stored session is written back only in
 * the parts its request changed, so that two requests of one session at once (a logout and a
 * storage write, say) do not undo each other's work.
 */
export interface Changes {
  readonly state: State;
  /** a new row (a guest that now keeps something, or a new token) rather than an update */
  readonly insert: boolean;
  /** the user name or the privileges */
  readonly who: boolean;
  readonly storage: boolean;
  readonly idle: boolean;
  /** it logged out: the entity locks it holds go (datastore/sessions/locks.ts) */
  readonly loggedOut: boolean;
  /** the id it had before a login gave it a new one (what its locks were held by, when it logged out as another user) */
  readonly previousId: string | undefined;
  /** the one-time passcodes made by this request (createOTP), kept once the session is stored */
  readonly otps: readonly Passcode[];
}

/** A one-time passcode to keep: its hash and when it expires (ms). */
export interface Passcode {
  readonly hash: string;
  readonly expires: number;
}

/** The storage object as JSON: refused, naming the cause, when server code put in it what JSON cannot hold (a BigInt, a cycle). */
export function storageText(storage: Record<string, unknown>): string {
  try {
    return JSON.stringify(storage);
  } catch (e) {
    throw new DatasetError('FUNCTION_FAILED', `session().storage holds a value JSON cannot hold (${(e as Error).message}): the session's changes were not stored`);
  }
}
