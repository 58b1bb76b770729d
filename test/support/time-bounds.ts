// Time bounds in unit tests: asserted only with DATASET_REST_TIMED_BOUNDS=1. A shared machine (CI,
// or helpers running beside the suite) misses them with the server at fault in nothing, and speed is
// the benches' to judge; without the variable a missed bound is printed, so a log still shows it.

import assert from 'node:assert/strict';

/** Whether a missed time bound fails its test. */
export const TIMED_BOUNDS = process.env.DATASET_REST_TIMED_BOUNDS === '1';

/** A time bound: asserted with DATASET_REST_TIMED_BOUNDS=1, else printed (with `where`) when missed. */
export function withinBound(held: boolean, missed: string, where = 'time bound'): void {
  if (TIMED_BOUNDS) assert.ok(held, missed);
  else if (!held) console.log(`# ${where}: missed (not asserted without DATASET_REST_TIMED_BOUNDS=1): ${missed}`);
}
