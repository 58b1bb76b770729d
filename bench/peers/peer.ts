// What the suite knows of a peer: how to ask it each read, and how to read its answers' keys.

/** the page size of every page read */
export const PAGE = 100;

/** The reads the suite compares; every route is a path (with its query) under the peer's url. */
export interface PeerRoutes {
  /** Item n (its key) */
  byKey(key: number): string;
  /** the page of PAGE items whose name begins with `prefix`, in key order, with the total count when the peer can give it */
  filtered(prefix: string): string;
  /** the same page with each item's category inline; absent when the peer cannot in one request */
  expanded?(prefix: string): string;
  /** PAGE items in key order from offset `skip` */
  deepPage(skip: number): string;
  /** PAGE items by price descending from offset `skip` */
  sortedPage(skip: number): string;
}

export type ReadName = keyof PeerRoutes;

export interface Peer {
  name: string;
  version: string;
  /** the Node.js version it runs on, e.g. v22.23.3 */
  nodeVersion: string;
  /** its origin, e.g. http://127.0.0.1:41234 (routes are paths under it) */
  url: string;
  pid: number;
  routes: PeerRoutes;
  /** the (lower-case) response header that holds the total count of a filtered page, if any */
  countHeader?: string;
  /** how it answers each read, and what it cannot do */
  notes: Partial<Record<ReadName, string>>;
  /** parses an answer into the item keys it holds, in order (for checks) */
  keysOf(body: string): number[];
  stop(): Promise<void>;
}

/**
 * The range [from, to) of the texts that begin with `prefix` under SQLite's BINARY collation (and
 * JavaScript's string order): `to` is the prefix with its last character's code point plus one.
 */
export function prefixRange(prefix: string): [string, string] {
  if (prefix.length === 0) throw new Error('prefixRange: an empty prefix');
  const chars = [...prefix];
  const last = chars.pop() as string;
  return [prefix, chars.join('') + String.fromCodePoint((last.codePointAt(0) as number) + 1)];
}

function keyOf(value: unknown): number {
  const id = (value as { id?: unknown } | null)?.id;
  const key = Number(id);
  if (id === undefined || id === null || !Number.isInteger(key)) throw new Error(`keysOf: an item without an integer id: ${JSON.stringify(value).slice(0, 200)}`);
  return key;
}

/**
 * The keys (`id`) of a JSON answer: an array of items, one item, or a GraphQL answer whose data holds
 * one array of items (Platformatic's `item` query).
 */
export function jsonKeys(body: string): number[] {
  const value = JSON.parse(body) as unknown;
  if (Array.isArray(value)) return value.map(keyOf);
  if (value !== null && typeof value === 'object' && 'data' in value) {
    const data = (value as { data: Record<string, unknown> | null; errors?: unknown }).data;
    if (data === null) throw new Error(`keysOf: a GraphQL error: ${JSON.stringify((value as { errors?: unknown }).errors).slice(0, 300)}`);
    const list = Object.values(data).find(Array.isArray);
    if (!list) throw new Error('keysOf: a GraphQL answer without a list of items');
    return list.map(keyOf);
  }
  return [keyOf(value)];
}
