// The last __queryPath of each session, for GET /rest/$querypath: kept in a table of the database
// under the session's id, so every server instance over it answers the same. Only a session its
// client keeps records one (a stored session, or a guest whose cookie came back, which recording
// then stores): a request without a session cookie has no later request to read it, and keying
// it by the client's address shared it among every cookie-less guest behind that address. A
// session's path goes with it (the session sweep removes paths whose session is gone).

import type { Storage } from '../../storage/adapter.js';
import { lastQueryPath, recordQueryPath } from '../../storage/system-tables/query-paths.js';
import { sessionInternals, type Session } from './session.js';

export class QueryPathStore {
  /** `now`: the sessions' clock (the sweep judges a path's age by it) */
  constructor(private readonly storage: Storage, private readonly now: () => number = Date.now) {}

  /** Keeps the last query path of a session its client keeps (the session is then stored, a guest too); nothing for one new with this request. */
  async record(session: Session, path: unknown): Promise<void> {
    if (!kept(session)) {
      // (the answer gives a guest never stored its cookie: sent back, the same guest records its path)
      sessionInternals.wantCookie(session);
      return;
    }
    sessionInternals.keep(session);
    await recordQueryPath(this.storage, sessionInternals.id(session), path, this.now());
  }

  /** The last query path recorded for a session, if any. */
  last(session: Session): Promise<unknown> {
    return kept(session) ? lastQueryPath(this.storage, sessionInternals.id(session)) : Promise.resolve(undefined);
  }
}

/** The client keeps the session: it is stored, or its cookie came back (a session new with this request, or with a new token, has none yet). */
function kept(session: Session): boolean {
  return sessionInternals.stored(session) || !sessionInternals.newToken(session);
}
