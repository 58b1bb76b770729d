// The bytes one answer may hold (--max-answer-size): a page of 10,000 entities holding a long text
// each, or an inline level of a relation reaching as many, would be read whole into memory (rows
// are read at once: SQLite's all(), PostgreSQL's whole result) and could take gigabytes before a
// byte is sent. So a read that could be big is measured first, in SQL: one statement summing the
// sizes the engine keeps of its texts and objects (octet_length: no value is read), over the very
// rows the read would select. A read of at most UNMEASURED_ROWS rows (a default page) is not
// measured — the statement would cost an ordinary page a quarter more — but counted as it is read:
// its texts and objects (countRows), before any text is made of them. Values user code computes
// (calculated attributes) are counted as they are computed. The levels of an answer share one
// budget, as they share InlineBudget's; an entity sent under several parents counts each time.
// Past the limit: 400 LIMIT_EXCEEDED, before the rows are read (or, counted, before they are
// sent), naming the limit, the option, the size so far and how to read less. What an answer
// counts is also reserved in the server's answers in flight (`reserve`: rest/scope/answer-flight.ts),
// which may refuse it (503) when other answers hold that budget.

import { DEFAULT_MAX_ANSWER_BYTES, KEYS_PER_QUERY, UNMEASURED_ROWS } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { DataClassModel, StorageAttribute } from '../../model/types.js';
import { directPath, type ColumnSpec, type SelectSpec } from '../../query/plan.js';
import { compileSelectSize, variableWidth } from '../../sql/compiler/sizes.js';
import type { Access } from '../access/access.js';

export class AnswerBudget {
  #used = 0;
  /** `reserve`: told of the bytes each take counts, once they are within the limit (it may refuse them by throwing) */
  constructor(readonly limit = DEFAULT_MAX_ANSWER_BYTES, readonly reserve?: (bytes: number) => void) {}

  /** The bytes measured so far. */
  get used(): number {
    return this.#used;
  }

  /** Counts `bytes` more, read for `what` (a path, a page): past the limit, LIMIT_EXCEEDED. */
  take(bytes: number, what: string): void {
    this.#used += bytes;
    if (this.#used <= this.limit) {
      this.reserve?.(bytes);
      return;
    }
    throw new DatasetError('LIMIT_EXCEEDED', `the answer would hold at least ${sizeText(this.#used)} of values (${what}), more than the ${sizeText(this.limit)} one answer may hold (--max-answer-size): ask for fewer entities ($top, and $skip for the next ones), fewer attributes ($attributes) or fewer related entities, or export them ($format=ndjson or $format=csv, sent as they are read)`);
  }
}

/** Whether a read of `rows` rows of `columns` is measured first: more rows than a default page, some of them values of no fixed width. */
export function measured(rows: number, columns: readonly ColumnSpec[]): boolean {
  return rows > UNMEASURED_ROWS && columns.some(variableWidth);
}

/**
 * The characters of the texts and objects in rows read without being measured first (arrays of
 * column values, or records): a string by its length, an object (PostgreSQL's parsed JSON) by its
 * JSON's. Other values are of fixed width.
 */
export function rowChars(row: readonly unknown[] | Readonly<Record<string, unknown>>): number {
  let n = 0;
  for (const v of Array.isArray(row) ? row : Object.values(row)) {
    if (typeof v === 'string') n += v.length;
    else if (typeof v === 'object' && v !== null && !(v instanceof Date)) n += objectChars(v);
  }
  return n;
}

function objectChars(v: object): number {
  if (Buffer.isBuffer(v)) return v.length;
  try {
    return JSON.stringify(v)?.length ?? 0;
  } catch {
    return 0; // (one that cannot be written fails where it is written)
  }
}

/** The characters a value user code computed will be sent as (a calculated attribute's): a text's length, an object's JSON. */
export function valueChars(v: unknown): number {
  if (typeof v === 'string') return v.length;
  return typeof v === 'object' && v !== null && !(v instanceof Date) ? objectChars(v) : 0;
}

/** Takes from `budget` the characters of the values of `rows`, read for `what` without being measured first (each row counted `weight(row)` times). */
export function countRows<R extends readonly unknown[] | Readonly<Record<string, unknown>>>(budget: AnswerBudget, rows: readonly R[], what: string, weight?: (row: R) => number): void {
  let n = 0;
  for (const row of rows) n += rowChars(row) * (weight ? weight(row) : 1);
  if (n > 0) budget.take(n, what);
}

/** How often the rows of each value of `by` are sent (by the value's text), for a level read for several parents. */
export interface Weighting {
  readonly by: StorageAttribute;
  readonly weight: (value: string) => number;
}

/**
 * Takes from `budget` the bytes the values of the rows `spec` selects hold (each row counted as
 * often as `weighting` says), measured in SQL before they are read.
 */
export async function takeRead(budget: AnswerBudget, access: Access, spec: SelectSpec, what: string, weighting?: Weighting): Promise<void> {
  let bytes = 0;
  for (const row of await sizeRows(access, spec, weighting?.by)) bytes += Number(row.n) * (weighting ? weighting.weight(String(row.g)) : 1);
  budget.take(bytes, what);
}

/** The bytes of the values of the rows `spec` selects, together (one row comes back). */
export async function sizeOf(access: Access, spec: SelectSpec): Promise<number> {
  const [row] = await sizeRows(access, spec, undefined);
  return Number(row?.n ?? 0);
}

/**
 * The bytes of the values of each row `spec` selects, by the text of its key (an export cuts its
 * chunks by them: export-read.ts).
 */
export async function sizesByKey(access: Access, spec: SelectSpec): Promise<Map<string, number>> {
  return new Map((await sizeRows(access, spec, spec.dataClass.key, true)).map((row) => [String(row.g), Number(row.n)]));
}

/** The size statement's rows (`n`, and `g` when grouped by `by`), over the variable-width columns of `spec` only (and `by`'s, once). */
function sizeRows(access: Access, spec: SelectSpec, by: StorageAttribute | undefined, unique = false): Promise<Record<string, unknown>[]> {
  const columns: ColumnSpec[] = spec.columns.filter((c) => variableWidth(c) && !(by && c.kind === 'storage' && c.attr === by));
  if (by) columns.push({ kind: 'storage', attr: by });
  const { sql, params } = compileSelectSize(access.reader.dialect, { ...spec, columns }, access.restrict, by, unique);
  return access.reader.all(sql, params);
}

/** takeRead for the rows of `dc` whose `attr` is among `values` (KEYS_PER_QUERY a statement, as they are read). */
export async function takeReadWhereIn(budget: AnswerBudget, access: Access, dc: DataClassModel, attr: StorageAttribute, values: readonly unknown[], columns: readonly ColumnSpec[], what: string, weighting?: Weighting): Promise<void> {
  for (let at = 0; at < values.length; at += KEYS_PER_QUERY) {
    const where = { kind: 'in' as const, path: directPath(attr), values: values.slice(at, at + KEYS_PER_QUERY) };
    await takeRead(budget, access, { dataClass: dc, columns, where, order: [] }, what, weighting);
  }
}

/** A size in bytes as people read it: 5 MB, 1.5 GB, 300 KB. */
export function sizeText(bytes: number): string {
  const units: [number, string][] = [[1024 ** 3, 'GB'], [1024 ** 2, 'MB'], [1024, 'KB']];
  for (const [unit, name] of units) {
    if (bytes >= unit) return `${Number((bytes / unit).toFixed(1))} ${name}`;
  }
  return `${bytes} bytes`;
}
