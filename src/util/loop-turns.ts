// Long work shared with the rest of the server: a big write (a batch of thousands of entities, a
// filtered delete of a million) is a loop of awaits that, on SQLite's synchronous driver, never
// reach the event loop, so every other request would wait for its end. It calls turns.pass()
// between its steps; once `sliceMs` of work has run since the last turn, pass() gives the loop a
// turn (setImmediate: pending I/O, other requests' callbacks run first), so no step of it holds
// the loop much past `sliceMs`. A transaction stays open across the turns, with its async context.

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
