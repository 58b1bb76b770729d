// The storage a datastore works through: the engine's adapter, with one check before every
// statement — a function called over REST that is past its time limit gets FUNCTION_TIMEOUT
// instead of a result, so its work stops — and its transactions carry the call's abort signal,
// so one still open at the time limit is rolled back then (functions/context.ts).

import { checkDeadline, currentCall } from '../functions/context.js';
import type { Row, StorageAdapter } from '../storage/adapter.js';

export function withDeadlines(s: StorageAdapter): StorageAdapter {
  return {
    dialect: s.dialect,
    async all(sql: string, params?: readonly unknown[]): Promise<Row[]> {
      checkDeadline();
      return s.all(sql, params);
    },
    async column(sql: string, params?: readonly unknown[]): Promise<unknown[]> {
      checkDeadline();
      return s.column(sql, params);
    },
    async get(sql: string, params?: readonly unknown[]): Promise<Row | undefined> {
      checkDeadline();
      return s.get(sql, params);
    },
    async run(sql: string, params?: readonly unknown[]): Promise<number> {
      checkDeadline();
      return s.run(sql, params);
    },
    async exec(sql: string): Promise<void> {
      checkDeadline();
      return s.exec(sql);
    },
    async transaction<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      checkDeadline();
      // a call's transaction is rolled back the moment the call passes its time limit
      return s.transaction(fn, signal ?? currentCall()?.signal);
    },
    onRollback: (undo) => s.onRollback(undo),
    afterCommit: (run) => s.afterCommit(run),
    columns: (table) => s.columns(table),
    close: () => s.close(),
  };
}
