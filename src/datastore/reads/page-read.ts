// A page of a selection with the selection's length and the global stamp, as one state of the
// data, in one statement: the count and the stamp are columns of the page's SELECT (a statement
// sees one snapshot on every engine), so a page needs no transaction around three statements.
// The count is kept (count-cache.ts) with the data version the statement saw, and while later
// statements see that version the page is read without counting again; when the version moved,
// the page is read again with its count. The version is taken with the storage's rollbacks so far
// (read before the statement): a rollback takes back writes a version may have seen, and SQLite's
// total_changes() does not go back with them. A page with no rows has no row to carry them: its count
// and stamp come from a statement of their own, true of the data an instant later — in which the
// page must still be empty, else it is read again.

import { DATA_VERSION_COLUMN, GLOBAL_STAMP_COLUMN } from '../../sql/compiler/selects.js';
import { compileCount, compileCountWithVersion, compileSelect } from '../../sql/compiler/statements.js';
import type { ColumnSpec } from '../../query/plan.js';
import { accessOf, classOf, pageSpec, sourceOf, windowed, type EntitySelection } from '../selections/selection.js';
import { countRows, measured, takeRead, type AnswerBudget } from './answer-size.js';

export interface PageRows {
  /** the page's rows: arrays of the values of the columns asked for, in their order (the statement's own columns follow them) */
  readonly rows: readonly (readonly unknown[])[];
  /** the selection's length */
  readonly count: number;
  readonly globalStamp: number;
}

const META: readonly ColumnSpec[] = [{ kind: 'globalStamp' }, { kind: 'dataVersion' }];
const META_AND_TOTAL: readonly ColumnSpec[] = [...META, { kind: 'total' }];

/** A page's columns and the statement's own after them, one list per columns list and kind (the compiler keeps a list's text by it: sql/compiler/selects.ts). */
const withMeta = new WeakMap<readonly ColumnSpec[], { meta: readonly ColumnSpec[]; total: readonly ColumnSpec[] }>();

function metaColumns(columns: readonly ColumnSpec[]): { meta: readonly ColumnSpec[]; total: readonly ColumnSpec[] } {
  let lists = withMeta.get(columns);
  if (!lists) withMeta.set(columns, (lists = { meta: [...columns, ...META], total: [...columns, ...META_AND_TOTAL] }));
  return lists;
}

/** Positions [start, start + n) of `s`, reading `columns`, with the length of `s` and the global stamp. */
export async function readPageRows(s: EntitySelection, start: number, n: number, columns: readonly ColumnSpec[]): Promise<PageRows> {
  const dc = classOf(s);
  const access = accessOf(s);
  const reader = access.reader;
  const counts = dc.core.counts;
  const counting = compileCount(reader.dialect, dc.model, sourceOf(s).where, access.restrict);
  const key = counts.keyOf(counting.sql, counting.params);
  const kept = key === undefined ? undefined : counts.likely(key);
  const at = columns.length;
  // (before each statement: a rollback while it runs makes its version one that is never seen again)
  const versionOf = (rollbacks: number, read: unknown): string => `${rollbacks}/${String(read)}`;
  if (kept) {
    const rollbacks = dc.core.storage.rollbacks;
    const page = compileSelect(reader.dialect, pageSpec(s, start, n, metaColumns(columns).meta), access.restrict);
    const rows = await reader.arrays(page.sql, page.params);
    if (rows.length > 0) {
      const version = versionOf(rollbacks, rows[0][at + 1]);
      counts.seen(version);
      if (version === kept.version) return { rows, count: windowed(s, kept.count), globalStamp: Number(rows[0][at]) };
    }
  }
  let empty: PageRows | undefined;
  for (let attempt = 0; attempt < EMPTY_PAGE_READS; attempt++) {
    let rollbacks = dc.core.storage.rollbacks;
    const page = compileSelect(reader.dialect, pageSpec(s, start, n, metaColumns(columns).total), access.restrict);
    const rows = await reader.arrays(page.sql, page.params);
    if (rows.length > 0) {
      const total = Number(rows[0][at + 2]);
      if (key !== undefined) counts.set(key, versionOf(rollbacks, rows[0][at + 1]), total);
      return { rows, count: windowed(s, total), globalStamp: Number(rows[0][at]) };
    }
    rollbacks = dc.core.storage.rollbacks;
    const { sql, params } = compileCountWithVersion(reader.dialect, dc.model, sourceOf(s).where, access.restrict);
    const row = await reader.get(sql, params);
    const total = Number(row?.n ?? 0);
    if (key !== undefined) counts.set(key, versionOf(rollbacks, row?.[DATA_VERSION_COLUMN]), total);
    empty = { rows: [], count: windowed(s, total), globalStamp: Number(row?.[GLOBAL_STAMP_COLUMN] ?? 0) };
    // The count's state is later than the page's: where the page is empty in it too, the answer
    // (no rows, that count, that stamp) is true of that one state. Where it is not — rows came in
    // between the two statements — the stamp would name a state whose rows the answer lacks (a
    // client revalidating would keep the empty page): read again.
    if (empty.count <= start || n === 0) return empty;
  }
  // (writers that fast on this very selection: the last reading, its stamp possibly newer than its rows)
  return empty as PageRows;
}

/** How many times an empty page is read again when rows came in between it and its count. */
const EMPTY_PAGE_READS = 3;

/**
 * Takes from `budget` the bytes of the values of positions [start, start + n) of `s`, measured in
 * SQL before the page is read, when the page could be big (answer-size.ts: more rows than a
 * default page, with texts or objects); past the answer's limit, LIMIT_EXCEEDED and nothing read.
 * Whether it was measured: a page that was not is counted as it is read (countPage).
 */
export async function measurePage(s: EntitySelection, start: number, n: number, columns: readonly ColumnSpec[], budget: AnswerBudget): Promise<boolean> {
  if (!measured(n, columns)) return false;
  await takeRead(budget, accessOf(s), pageSpec(s, start, n, columns), pageWhat(s, n));
  return true;
}

/** Takes from `budget` the values of a page read without being measured first (answer-size.ts countRows). */
export function countPage(s: EntitySelection, rows: readonly (readonly unknown[])[], budget: AnswerBudget): void {
  countRows(budget, rows, pageWhat(s, rows.length));
}

const pageWhat = (s: EntitySelection, n: number): string => `a page of up to ${n} ${classOf(s).model.name} entities`;
