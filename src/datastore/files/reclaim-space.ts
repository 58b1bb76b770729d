// Gives the space of removed rows (expired uploads, entity sets, sessions, dropped entities) back
// to the file system after the sweeps, a bounded step at a time, where the engine does not do it
// itself (SQLite: its file would otherwise keep its largest size forever).

import { setImmediate as nextTurn } from 'node:timers/promises';
import { RECLAIM_PAGES_PER_STEP, RECLAIM_STEPS_PER_SWEEP } from '../../config/limits.js';
import type { Storage } from '../../storage/adapter.js';

/** Free pages of the file now (0 where the engine reclaims space itself). */
export async function freePages(storage: Storage): Promise<number> {
  const reclaim = storage.dialect.schema.reclaimSpace;
  if (!reclaim) return 0;
  const row = await storage.get(reclaim.freePages);
  return Number(row ? Object.values(row)[0] : 0);
}

/**
 * Gives free pages back, RECLAIM_PAGES_PER_STEP at a time with other requests served between two
 * steps, at most RECLAIM_STEPS_PER_SWEEP steps (the rest after the next sweep); then copies the
 * WAL into the file, which shrinks with it. Resolves to the pages given back.
 */
export async function reclaimSpace(storage: Storage): Promise<number> {
  const reclaim = storage.dialect.schema.reclaimSpace;
  if (!reclaim) return 0;
  let given = 0;
  for (let step = 0; step < RECLAIM_STEPS_PER_SWEEP; step++) {
    const pages = Math.min(await freePages(storage), RECLAIM_PAGES_PER_STEP);
    if (pages === 0) break;
    // the statement gives back one page each time it is run (a driver steps it once)
    for (let page = 0; page < pages; page++) await storage.run(reclaim.step(pages));
    given += pages;
    await nextTurn();
  }
  if (given > 0) await storage.get(reclaim.checkpoint);
  return given;
}
