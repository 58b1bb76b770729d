// Who may be stored: the caps on stored sessions. A new logged-in session past the cap on live
// ones is refused (try again later); a guest never is: room is made for it, past its client
// address's cap or the cap of all guests, by evicting the least recently used guests, counted in
// the database so that the caps hold across every instance.

import { DatasetError } from '../../errors/dataset-error.js';
import type { Storage } from '../../storage/adapter.js';
import { lockNamed } from '../../storage/system-tables/meta.js';
import { countGuestsFrom, countSessions, evictGuests, insertSession, sessionExists, type StoredSessionRow } from '../../storage/system-tables/sessions.js';

/** The caps on stored guests. */
export interface GuestCaps {
  /** stored guests at most, every address together */
  readonly maxGuests: number;
  /** stored guests from one client address at most (0: no cap of its own) */
  readonly maxGuestsPerAddress: number;
}

/** Refuses a new stored logged-in session when `maxSessions` are live already. */
export async function refusePastSessionCap(storage: Storage, maxSessions: number, now: number): Promise<void> {
  if ((await countSessions(storage, false, now)) >= maxSessions) {
    throw new DatasetError('TOO_MANY_REQUESTS', `the server holds its most sessions (${maxSessions}): try again later`, [], { retryAfterS: 60 });
  }
}

/**
 * Stores a guest's new row, making room for it first: past its address's cap, that address's
 * least recently used guests go; past the cap of all guests, the least recently used anywhere.
 * Resolves to the ids of the guests evicted (whose entity sets the caller releases; their locks
 * are void with their rows, and swept). One guest is admitted at a time, every instance together
 * (a named lock on PostgreSQL, SQLite's one writer): the counts see every other admission, and
 * the caps hold across instances. "Least recently used" is by the last use written with the
 * expiry (within SESSION_TOUCH_MS, or a tenth of the idle timeout).
 */
export function admitGuest(storage: Storage, row: StoredSessionRow, now: number, caps: GuestCaps): Promise<string[]> {
  return storage.transaction(async () => {
    await lockNamed(storage, 'guest sessions');
    // (stored meanwhile by another request of the same guest: the same row, no room to make)
    if (await sessionExists(storage, row.token)) return [];
    const gone: string[] = [];
    if (caps.maxGuestsPerAddress > 0) {
      const mine = await countGuestsFrom(storage, row.address, now);
      if (mine >= caps.maxGuestsPerAddress) gone.push(...(await evictGuests(storage, mine - caps.maxGuestsPerAddress + 1, now, row.address)));
    }
    const all = await countSessions(storage, true, now);
    if (all >= caps.maxGuests) gone.push(...(await evictGuests(storage, all - caps.maxGuests + 1, now)));
    await insertSession(storage, row);
    return gone;
  }, { retries: storage.dialect.concurrency.conflictRetries });
}
