// The last __queryPath of each caller, for GET /rest/$querypath: kept in a table of the database,
// so every server instance over it answers the same.

import type { Storage } from '../storage/adapter.js';
import { lastQueryPath, recordQueryPath } from '../storage/system-tables.js';

export class QueryPathStore {
  constructor(private readonly storage: Storage) {}

  /** Keeps the last query path of a caller (a session, or a client address until sessions exist). */
  record(caller: string, path: unknown): Promise<void> {
    return recordQueryPath(this.storage, caller, path, Date.now());
  }

  /** The last query path recorded for a caller, if any. */
  last(caller: string): Promise<unknown> {
    return lastQueryPath(this.storage, caller);
  }
}
