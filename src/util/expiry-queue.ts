// What expires first, found without looking at the rest: a binary min-heap of ids by expiry time,
// with each id's place in it, so that adding, moving (a use starts a lifetime again) and removing
// an id cost O(log n), and taking the expired ones O(log n) each. Lifetimes differ per entry
// (an entity set's $timeout), so an insertion-order Map would not do.

export class ExpiryQueue {
  readonly #ids: string[] = [];
  readonly #at: number[] = [];
  readonly #place = new Map<string, number>();

  get size(): number {
    return this.#ids.length;
  }

  /** Puts `id` (anew, or moved) to expire at `at`. */
  set(id: string, at: number): void {
    const i = this.#place.get(id);
    if (i === undefined) {
      this.#ids.push(id);
      this.#at.push(at);
      this.#place.set(id, this.#ids.length - 1);
      this.#up(this.#ids.length - 1);
      return;
    }
    const before = this.#at[i];
    this.#at[i] = at;
    if (at < before) this.#up(i);
    else this.#down(i);
  }

  delete(id: string): boolean {
    const i = this.#place.get(id);
    if (i === undefined) return false;
    const last = this.#ids.length - 1;
    this.#swap(i, last);
    this.#ids.pop();
    this.#at.pop();
    this.#place.delete(id);
    if (i < last) {
      this.#up(i);
      this.#down(i);
    }
    return true;
  }

  /** Removes and gives the ids whose time is `now` or before, soonest first. */
  *expired(now: number): Generator<string> {
    while (this.#ids.length > 0 && this.#at[0] <= now) {
      const id = this.#ids[0];
      this.delete(id);
      yield id;
    }
  }

  #up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.#at[parent] <= this.#at[i]) return;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(i: number): void {
    const n = this.#ids.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < n && this.#at[l] < this.#at[least]) least = l;
      if (r < n && this.#at[r] < this.#at[least]) least = r;
      if (least === i) return;
      this.#swap(i, least);
      i = least;
    }
  }

  #swap(a: number, b: number): void {
    if (a === b) return;
    [this.#ids[a], this.#ids[b]] = [this.#ids[b], this.#ids[a]];
    [this.#at[a], this.#at[b]] = [this.#at[b], this.#at[a]];
    this.#place.set(this.#ids[a], a);
    this.#place.set(this.#ids[b], b);
  }
}
