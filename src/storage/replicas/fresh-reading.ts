// A value read after the call that asks for it began, shared by every caller waiting at once: the
// WAL position of the primary (what a replica must have replayed before it may answer a read), or
// the position a replica has replayed. A reading under way when a caller comes began too early for
// it (a commit that caller saw may have come after): that caller waits for the next, which every
// caller coming meanwhile shares. Under N concurrent reads the primary answers about two such
// questions per round trip, not N.

export class FreshReading<T> {
  #running: Promise<T> | undefined;
  #next: Promise<T> | undefined;

  constructor(readonly read: () => Promise<T>) {}

  /** A value read entirely after this call. */
  get(): Promise<T> {
    if (this.#running === undefined) return this.#start();
    this.#next ??= this.#running.then(
      () => this.#afterRunning(),
      () => this.#afterRunning(),
    );
    return this.#next;
  }

  #afterRunning(): Promise<T> {
    this.#next = undefined;
    return this.#start();
  }

  #start(): Promise<T> {
    const running = this.read().finally(() => {
      if (this.#running === running) this.#running = undefined;
    });
    this.#running = running;
    return running;
  }
}
