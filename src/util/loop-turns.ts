// Long work shared with the rest of the server: a big write (a batch of thousands of entities, a
// filtered delete of a million) is a loop of awaits that, on SQLite's synchronous driver, never
// reach the event loop, so every other request would wait for its end. It calls turns.pass()
// between its steps; once `sliceMs` of work has run since the last turn, pass() gives the loop a
// turn (setImmediate: pending I/O, other requests' callbacks run first), so no step of it holds
// the loop much past `sliceMs`. A transaction stays open across the turns, with its async context.
//
// fairTurn() is a turn of its own among all who ask for one: one of them goes on a turn, however
// many are waiting (rest/present/answer-stream.ts: 45 answers each making a 20 ms slice in the same turn
// would hold every other request 900 ms at each of its steps).

import { setImmediate as nextTurn } from 'node:timers/promises';

export class LoopTurns {
  #since = performance.now();

  constructor(readonly sliceMs: number) {}

  /** A turn of the event loop if this slice of work is spent, else nothing (a clock read). */
  async pass(): Promise<void> {
    if (performance.now() - this.#since < this.sliceMs) return;
    await nextTurn();
    this.#since = performance.now();
  }
}

/** Who waits for a fair turn, in the order they asked. */
const waiting: (() => void)[] = [];
let turning = false;

/** Resolves on a turn of the event loop of its own: one waiter goes on each turn (setImmediate), in the order they came. */
export function fairTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (turning) return;
    turning = true;
    setImmediate(oneTurn);
  });
}

function oneTurn(): void {
  waiting.shift()?.();
  if (waiting.length > 0) setImmediate(oneTurn);
  else turning = false;
}
