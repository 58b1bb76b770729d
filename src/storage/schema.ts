// Brings the database in line with the model: creates tables, columns and indexes, renames what
// model.json says was renamed, converts values whose type changed, never drops data. The schema
// last applied is kept in the database itself (__dataset_meta), so that the changes are known:
// they are planned (migrations/plan.ts: steps, each a line for the operator) and checked against
// the data as the steps before them left it, in one transaction under the schema lock, committed
// only when nothing was refused (a dry run: never). Instances starting
// together take turns: the second reads what the first recorded and finds nothing to do.

import type { Model } from '../model/types.js';
import { FOLD_VERSION } from '../util/fold.js';
import type { Storage } from './adapter.js';
import { planSchema, type SchemaPlan, type SchemaStep } from './migrations/plan.js';
import { lockSchema, readMeta, writeMeta } from './system-tables/meta.js';
import { createSystemTables } from './system-tables/tables.js';

/** Hidden columns every dataclass table has (defined in sql/, which the compiler reads them from). */
export { STAMP_COLUMN, TIMESTAMP_COLUMN } from '../sql/hidden-columns.js';
/** Internal tables (system-tables/tables.ts). */
export { BLOB_CHUNK_TABLE, BLOB_TABLE, GLOBAL_STAMP_TABLE, META_TABLE, QUERY_PATH_TABLE } from './system-tables/tables.js';
export type { SchemaPlan, SchemaStep } from './migrations/plan.js';

/**
 * Schema sync is run again from the start this many times when another instance holds the
 * database (SQLITE_BUSY past busy_timeout, a PostgreSQL serialization failure).
 */
const SYNC_RETRIES = 5;

export class SchemaError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`the database cannot be brought in line with the model:\n  - ${problems.join('\n  - ')}`);
    this.name = 'SchemaError';
  }
}

/** Thrown to roll a dry run's transaction back, carrying its plan out. */
class DryRun extends Error {
  constructor(readonly plan: SchemaPlan) {
    super('dry run');
  }
}

export interface SyncOptions {
  /** told each step as it is applied (its line), in order: what start-up logs */
  readonly onStep?: (step: SchemaStep) => void;
}

/**
 * Applies the plan (steps and the record) in one transaction; resolves to the steps applied
 * (none when the database was in line already). A plan with problems is refused whole: SchemaError.
 */
export async function syncSchema(storage: Storage, model: Model, options: SyncOptions = {}): Promise<readonly SchemaStep[]> {
  return storage.transaction(async () => {
    const { plan, recorded, foldVersion } = await planUnderLock(storage, model);
    // (the plan's statements ran as it was made: a refusal rolls them back)
    if (plan.problems.length > 0) throw new SchemaError(plan.problems);
    if (foldVersion !== String(FOLD_VERSION)) await writeMeta(storage, 'foldVersion', String(FOLD_VERSION));
    const json = JSON.stringify(plan.after);
    if (recorded !== json) await writeMeta(storage, 'schema', json);
    // (told once applied, in order: a retried transaction tells nothing twice)
    return plan.steps;
  }, { retries: SYNC_RETRIES }).then((steps) => {
    for (const step of steps) options.onStep?.(step);
    return steps;
  });
}

/**
 * The plan without applying it (a dry run): made as syncSchema makes it, in a transaction under
 * the schema lock, then rolled back (it takes as long as the change itself: the checks read the
 * data as the steps before them leave it). Its problems are in it, not thrown.
 */
export async function dryRunSchema(storage: Storage, model: Model): Promise<SchemaPlan> {
  return storage.transaction(async () => {
    throw new DryRun((await planUnderLock(storage, model)).plan);
  }, { retries: SYNC_RETRIES }).then(
    () => { throw new Error('a dry run must roll back'); },
    (e: unknown) => {
      if (e instanceof DryRun) return e.plan;
      throw e;
    },
  );
}

/** Takes the schema lock (until the transaction ends), makes the internal tables, and plans. */
async function planUnderLock(storage: Storage, model: Model): Promise<{ plan: SchemaPlan; recorded: string | undefined; foldVersion: string | undefined }> {
  // instances starting together: one at a time, each reading what the one before recorded
  await lockSchema(storage);
  await createSystemTables(storage);
  const recorded = await readMeta(storage, 'schema');
  const foldVersion = await readMeta(storage, 'foldVersion');
  return { plan: await planSchema(storage, model, recorded, foldVersion), recorded, foldVersion };
}
