// When sessions expire and what goes with them: a session's expiry is written again only once it
// has moved enough (not at every request), the sweep removes expired sessions with what they
// held that is void now (entity locks, query paths), old login-failure counts, expired passcodes and lockouts past, and $info
// shows an expiry to the second.

import { LOGIN_FAILURE_WINDOW_MS, SESSION_SWEEP_MS, SESSION_TOUCH_MS } from '../../config/limits.js';
import type { Storage } from '../../storage/adapter.js';
import { deleteVoidLocks } from '../../storage/system-tables/locks.js';
import { deleteVoidQueryPaths } from '../../storage/system-tables/query-paths.js';
import { deleteExpiredSessions, type SessionRow } from '../../storage/system-tables/sessions.js';
import { sweepUsersTables } from '../../storage/system-tables/users.js';

/** A session's expiry is written again once it has moved enough (a tenth of its idle timeout, SESSION_TOUCH_MS at most). */
export function dueForTouch(row: SessionRow, now: number): boolean {
  return now + row.idle - row.expires >= Math.min(SESSION_TOUCH_MS, row.idle / 10);
}

/** Removes expired sessions, the entity locks and query paths of sessions gone (void already) and old login-failure counts; resolves to how many sessions went. */
export async function sweepExpired(storage: Storage, now: number): Promise<number> {
  const gone = await deleteExpiredSessions(storage, now, now - 2 * LOGIN_FAILURE_WINDOW_MS);
  await deleteVoidLocks(storage, now);
  await deleteVoidQueryPaths(storage, now - SESSION_SWEEP_MS);
  // one-time passcodes expired, lockouts ended
  await sweepUsersTables(storage, now);
  return gone;
}

/** $info's date format: no milliseconds (a date past JavaScript's last one reads as that one). */
export function isoSeconds(ms: number): string {
  return new Date(Math.min(ms, 8.64e15)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
