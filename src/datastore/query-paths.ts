// The last __queryPath of each caller, for GET /rest/$querypath: kept in a table of the database,
// so every server instance over it answers the same.

import type { StorageAdapter } from '../storage/adapter.js';
import { QUERY_PATH_TABLE } from '../storage/schema.js';

export class QueryPathStore {
  constructor(private readonly storage: StorageAdapter) {}

  /** Keeps the last query path of a caller (a session, or a client address until sessions exist). */
  async record(caller: string, path: unknown): Promise<void> {
    const d = this.storage.dialect;
    const q = d.quote;
    await this.storage.run(
      `INSERT INTO ${q(QUERY_PATH_TABLE)} (${q('caller')}, ${q('path')}, ${q('at')}) VALUES (${d.placeholder(1)}, ${d.placeholder(2)}, ${d.placeholder(3)})`
      + ` ON CONFLICT (${q('caller')}) DO UPDATE SET ${q('path')} = excluded.${q('path')}, ${q('at')} = excluded.${q('at')}`,
      [caller, JSON.stringify(path), Date.now()],
    );
  }

  /** The last query path recorded for a caller, if any. */
  async last(caller: string): Promise<unknown> {
    const d = this.storage.dialect;
    const q = d.quote;
    const row = await this.storage.get(`SELECT ${q('path')} AS p FROM ${q(QUERY_PATH_TABLE)} WHERE ${q('caller')} = ${d.placeholder(1)}`, [caller]);
    return row ? JSON.parse(row.p as string) : undefined;
  }
}
