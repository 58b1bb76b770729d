// Reading every member of a selection (or of a list of keys) for an export, a chunk of rows at a
// time, so that the memory an export takes does not grow with the number of rows: each chunk is
// one statement, read when the consumer asks for it. A selection in key order with an integer key
// is read by keyset pagination (`key > last` ORDER BY key LIMIT n: an index range, flat memory);
// one in another order reads its keys in that order first (one statement: 8 bytes a member for
// integer keys), then the rows of each chunk of keys. No snapshot is held between chunks (a slow
// client must not keep a connection): each row is read as it stands when its chunk is read; a row
// dropped meanwhile is left out, and no row is read twice. See docs/decisions.md, "Export over HTTP".

import type { ColumnSpec, Condition } from '../../query/plan.js';
import { directPath } from '../../query/plan.js';
import { INTEGER_TYPES } from '../../model/types.js';
import { variableWidth } from '../../sql/compiler/sizes.js';
import { compileSelect } from '../../sql/compiler/statements.js';
import { EXPORT_CHUNK_BYTES } from '../../config/limits.js';
import { sizeOf, sizesByKey } from './answer-size.js';
import type { Access } from '../access/access.js';
import type { DataClassCore } from '../dataclass-core.js';
import type { KeyList } from '../sets/entity-set-store.js';
import { requireDataClass } from '../access/guard.js';
import { accessOf, classOf, isOrdered, keysOf, narrow, pageSpec, sourceOf, type EntitySelection } from '../selections/selection.js';

/**
 * Rows a chunk of an export reads (one statement) at most; fewer when their texts and objects
 * hold more than EXPORT_CHUNK_BYTES (measured first, in SQL: a chunk of 1,000 rows of a million
 * characters each would be gigabytes at once), one at least.
 */
export const EXPORT_CHUNK_ROWS = 1000;

/** How many of `keys` (in their order) hold at most `bytes` of values together, by `sizes` (one at least; a key without a size: a row gone, nothing). */
function fitting(keys: readonly unknown[], sizes: ReadonlyMap<string, number>, bytes: number): number {
  let used = 0;
  for (let i = 0; i < keys.length; i++) {
    used += sizes.get(String(keys[i])) ?? 0;
    if (used > bytes) return Math.max(1, i);
  }
  return keys.length;
}

/** Which members: from position `skip`, at most `top` of them (undefined: all). */
export interface ExportWindow {
  readonly skip: number;
  readonly top?: number;
}

/** The rows of an export, a chunk at a time. */
export interface RowChunks {
  /** the next rows (arrays of the columns asked for, in their order; more columns may follow), or null once every row was read */
  next(): Promise<(readonly unknown[])[] | null>;
}

/** The rows of `columns` of every member of `s` in the window, in the order of `s`. */
export function selectionChunks(s: EntitySelection, columns: readonly ColumnSpec[], window: ExportWindow, chunk = EXPORT_CHUNK_ROWS): RowChunks {
  const dc = classOf(s);
  requireDataClass(accessOf(s), dc.model, 'read');
  const source = sourceOf(s);
  if (!isOrdered(s) && INTEGER_TYPES.has(dc.model.key.type) && source.offset === 0 && source.limit === null) return keysetChunks(s, columns, window, chunk);
  // another order (or a key whose order is its folded text): the keys in that order, then their rows
  let keys: Promise<RowChunks> | undefined;
  return {
    next() {
      keys ??= keysOf(windowOf(s, window)).then((list) => keyChunks(dc, list, columns, accessOf(s), chunk));
      return keys.then((k) => k.next());
    },
  };
}

/** `s` from position `skip`, `top` of them (its own window, if any, applied first). */
function windowOf(s: EntitySelection, window: ExportWindow): EntitySelection {
  const source = sourceOf(s);
  if (window.skip === 0 && window.top === undefined) return s;
  if (source.offset === 0 && source.limit === null) return classOf(s).selection({ ...source, offset: window.skip, limit: window.top ?? null }, accessOf(s));
  const left = source.limit === null ? null : Math.max(0, source.limit - window.skip);
  const limit = window.top === undefined ? left : left === null ? window.top : Math.min(left, window.top);
  return classOf(s).selection({ ...source, offset: source.offset + window.skip, limit }, accessOf(s));
}

/** In key order: each chunk the rows after the last key read (an index range, whatever the position). */
function keysetChunks(s: EntitySelection, columns: readonly ColumnSpec[], window: ExportWindow, chunk: number): RowChunks {
  const dc = classOf(s);
  const access = accessOf(s);
  const key = dc.model.key;
  const at = columns.length;
  const read: ColumnSpec[] = [...columns, { kind: 'storage', attr: key }];
  const sized = columns.some(variableWidth);
  let last: unknown;
  let sent = 0;
  let done = false;
  return {
    async next() {
      let want = Math.min(chunk, (window.top ?? Number.POSITIVE_INFINITY) - sent);
      if (done || want <= 0) return null;
      const after: Condition | undefined = last === undefined ? undefined : { kind: 'compare', path: directPath(key), op: '>', value: last };
      const from = after ? narrow(s, after) : s;
      const skip = last === undefined ? window.skip : 0;
      if (sized && await sizeOf(access, pageSpec(from, skip, want, read)) > EXPORT_CHUNK_BYTES) {
        // the rows' sizes (in key order: their keys sorted), and only as many rows as fit
        const sizes = await sizesByKey(access, pageSpec(from, skip, want, read));
        const keys = [...sizes.keys()].map(Number).sort((a, b) => a - b);
        const fit = fitting(keys, sizes, EXPORT_CHUNK_BYTES);
        if (fit < keys.length) want = fit;
      }
      const spec = pageSpec(from, skip, want, read);
      const { sql, params } = compileSelect(access.reader.dialect, spec, access.restrict);
      const rows = await access.reader.arrays(sql, params);
      if (rows.length < want) done = true;
      if (rows.length === 0) return null;
      last = Number(rows[rows.length - 1][at]);
      sent += rows.length;
      return rows;
    },
  };
}

/**
 * The rows of `columns` of the entities of `keys`, in the order of the keys, `chunk` keys a
 * statement; a key whose entity is gone (or hidden from the caller) is left out.
 */
export function keyChunks(dc: DataClassCore, keys: KeyList, columns: readonly ColumnSpec[], access: Access, chunk = EXPORT_CHUNK_ROWS): RowChunks {
  requireDataClass(access, dc.model, 'read');
  const at = columns.length;
  const read: ColumnSpec[] = [...columns, { kind: 'storage', attr: dc.model.key }];
  const integer = INTEGER_TYPES.has(dc.model.key.type);
  const sized = columns.some(variableWidth);
  let from = 0;
  return {
    async next() {
      while (from < keys.length) {
        let list = Array.from(keys.slice(from, from + chunk) as ArrayLike<unknown>);
        const where: Condition = { kind: 'in', path: directPath(dc.model.key), values: list };
        if (sized && await sizeOf(access, { dataClass: dc.model, columns: read, where, order: [] }) > EXPORT_CHUNK_BYTES) {
          // the rows' sizes, and only as many keys as their rows fit
          const sizes = await sizesByKey(access, { dataClass: dc.model, columns: read, where, order: [] });
          list = list.slice(0, fitting(list, sizes, EXPORT_CHUNK_BYTES));
        }
        from += list.length;
        const { rows } = await dc.valuesOfKeys(list, read, access);
        if (rows.length === 0) continue;
        // (a key list holds integer keys as numbers, others as text: a row's key read the same way)
        const byKey = new Map<unknown, readonly unknown[]>(rows.map((row) => [integer ? Number(row[at]) : String(row[at]), row]));
        const ordered: (readonly unknown[])[] = [];
        for (const k of list) {
          const row = byKey.get(k);
          if (row) ordered.push(row);
        }
        return ordered;
      }
      return null;
    },
  };
}
