// A read snapshot's connection on a replica: its statements read the global stamp the primary
// showed before the snapshot began (statements.ts); a lost connection leaves the replica out.

import { DatasetError } from '../../errors/dataset-error.js';
import type { Connection, ExecuteOptions, QueryResult } from '../driver.js';
import type { Replica } from './replica.js';
import { withPrimaryStamp } from './statements.js';

/** the replica cannot serve now (its connection failed, or none came free) */
export const isUnavailable = (e: unknown): boolean => e instanceof DatasetError && e.code === 'STORAGE_UNAVAILABLE';

/** A snapshot's connection on a replica: its statements read the stamp the primary showed before it began. */
export class ReplicaConnection implements Connection {
  constructor(
    readonly inner: Connection,
    readonly replica: Replica,
    readonly stamp: number,
    /** its snapshot already begun (and fixed) by the router: the manager's begin() is then nothing */
    private begun = false,
  ) {}

  execute(sql: string, params: readonly unknown[] = [], options?: ExecuteOptions): Promise<QueryResult> {
    const s = withPrimaryStamp(sql, params, this.stamp);
    return this.inner.execute(s.sql, s.params, options).catch((e: unknown) => {
      if (isUnavailable(e)) this.replica.markDown(e);
      throw e;
    });
  }

  begin(mode: 'write' | 'snapshot'): Promise<void> {
    if (this.begun && mode === 'snapshot') {
      this.begun = false;
      return Promise.resolve();
    }
    return this.inner.begin(mode);
  }

  commit(): Promise<void> {
    return this.inner.commit();
  }

  rollback(): Promise<void> {
    return this.inner.rollback();
  }

  savepoint(name: string): Promise<void> {
    return this.inner.savepoint(name);
  }

  rollbackTo(name: string): Promise<void> {
    return this.inner.rollbackTo(name);
  }

  releaseSavepoint(name: string): Promise<void> {
    return this.inner.releaseSavepoint(name);
  }

  cancel(): Promise<void> {
    return this.inner.cancel();
  }
}

