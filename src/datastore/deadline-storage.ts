// The storage a datastore works through: the engine's adapter, with one check before every
// statement — a function called over REST that is past its time limit gets FUNCTION_TIMEOUT
// instead of a result, so its work stops — and its transactions carry the call's abort signal,
// so one still open at the time limit is rolled back then (functions/context.ts).

import { currentCall, deadlinePassed } from '../functions/context.js';
import type { Row, StorageAdapter } from '../storage/adapter.js';

export function withDeadlines(s: StorageAdapter): StorageAdapter {
  // no async frame of its own: reads by key are the hottest path, and every frame costs
  const guard = <T>(run: () => Promise<T>): Promise<T> => {
    const passed = deadlinePassed();
    return passed ? Promise.reject(passed) : run();
  };
  return {
    dialect: s.dialect,
    all: (sql: string, params?: readonly unknown[]): Promise<Row[]> => guard(() => s.all(sql, params)),
    column: (sql: string, params?: readonly unknown[]): Promise<unknown[]> => guard(() => s.column(sql, params)),
    get: (sql: string, params?: readonly unknown[]): Promise<Row | undefined> => guard(() => s.get(sql, params)),
    run: (sql: string, params?: readonly unknown[]): Promise<number> => guard(() => s.run(sql, params)),
    exec: (sql: string): Promise<void> => guard(() => s.exec(sql)),
    // a call's transaction is rolled back the moment the call passes its time limit
    transaction: <T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> => guard(() => s.transaction(fn, signal ?? currentCall()?.signal)),
    onRollback: (undo) => s.onRollback(undo),
    afterCommit: (run) => s.afterCommit(run),
    columns: (table) => s.columns(table),
    close: () => s.close(),
  };
}
