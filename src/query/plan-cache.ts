// What a query costs to understand, kept per query shape (issue 39): the parse of a query text
// (parser.ts), and the attribute paths its criteria name resolved for one dataclass and one
// visibility (resolve.ts), and a computation's value path (path.ts). None of these depends on the
// values a query is given (:1, :2 … are slots in the parse tree, typed and bound per request), on
// the data, or on other instances: they are functions of the text, of the model — which is loaded
// once per process and never changes while it runs (no reload: a changed model.json is a restart)
// — and of a visibility (one object per grants, grants being immutable: rest/scope/scope.ts,
// access/guard.ts). A visibility made for one request (a narrowed scope) is a new object: it misses,
// it never borrows another's paths. Row filters (restrict(), per session) are not part of any of
// this: they are compiled into each statement (sql/compiler/builder.ts), never cached here.
//
// Only what succeeded is kept: a query that fails is parsed (or resolved) again and fails the same
// way, with its own error and message, every time.

/**
 * How many query texts are kept parsed, per process. A shape is a few KB at most (a parse tree of
 * a query text bounded by MAX_QUERY_LENGTH, and its resolved paths); a client sends a handful of
 * shapes (its screens' filters), a server with many clients some hundreds. 1,000 keeps every
 * shape of such a server and at most a few MB; a client that sends a new text each time (values
 * written into the text instead of :n) only cycles the oldest ones out.
 */
export const PLAN_CACHE_ENTRIES = 1000;

/**
 * The longest query text kept (in characters): with PLAN_CACHE_ENTRIES, what bounds the cache in
 * bytes too (a parse tree is some times its text; 1,000 × 1 KB texts stay within some MB). Longer
 * texts (a generated list of values) are rarely sent twice: they are parsed every time.
 */
export const PLAN_TEXT_LENGTH = 1024;

/** How many (dataclass, visibility) variants one parsed path or value path keeps: the privilege sets a server's users have, usually a few. */
export const PLAN_VARIANTS = 16;

/** What the caches did since the process started (or since resetPlanStats): tests read it, never timing. */
export const planStats = { parses: 0, parseHits: 0, pathResolutions: 0, pathHits: 0, valuePaths: 0, valuePathHits: 0 };

export function resetPlanStats(): void {
  for (const k of Object.keys(planStats) as (keyof typeof planStats)[]) planStats[k] = 0;
}

/** A map of at most `capacity` entries, the least recently used one dropped first. */
export class LruCache<K, V> {
  readonly #entries = new Map<K, V>();

  constructor(readonly capacity: number) {}

  get(key: K): V | undefined {
    const v = this.#entries.get(key);
    if (v !== undefined) {
      // (most recently used last: Map keeps insertion order)
      this.#entries.delete(key);
      this.#entries.set(key, v);
    }
    return v;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.capacity) this.#entries.delete(this.#entries.keys().next().value as K);
  }

  get size(): number {
    return this.#entries.size;
  }

  clear(): void {
    this.#entries.clear();
  }
}

/**
 * Values kept per an object (a parse tree's node, a dataclass) and two identities (a dataclass and
 * a visibility): at most PLAN_VARIANTS per object, the oldest dropped first; gone with the object.
 */
export class VariantMemo<O extends object, A extends object, B extends object, V> {
  readonly #byOwner = new WeakMap<O, { a: A; b: B; v: V }[]>();

  get(owner: O, a: A, b: B): V | undefined {
    const list = this.#byOwner.get(owner);
    if (!list) return undefined;
    for (const e of list) if (e.a === a && e.b === b) return e.v;
    return undefined;
  }

  set(owner: O, a: A, b: B, v: V): void {
    let list = this.#byOwner.get(owner);
    if (!list) this.#byOwner.set(owner, (list = []));
    list.push({ a, b, v });
    if (list.length > PLAN_VARIANTS) list.shift();
  }

  variants(owner: O): number {
    return this.#byOwner.get(owner)?.length ?? 0;
  }
}
