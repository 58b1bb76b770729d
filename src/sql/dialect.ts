// The Dialect contract: everything that differs between SQL engines lives behind it, in groups by
// job: the text of statements (sql), JSON columns (json), column types and values (types), the
// schema sync's and the service's own tables (schema), and how transactions meet (concurrency).
// The compiler, the schema sync and the core ask it questions; they never compare dialect names.

import type { StorageAttribute, StorageType } from '../model/types.js';

export interface Dialect {
  /** for logs and messages only */
  readonly name: string;
  /** How the text of a statement is written: names, bound values, paging, order, text matching and sums. */
  readonly sql: SqlText;
  /** Reading JSON columns (object attributes) in SQL. */
  readonly json: JsonSql;
  /** Column types, and values between JavaScript and the columns. */
  readonly types: ColumnTypes;
  /** The schema sync's and the service's own tables' statements, and the file's upkeep. */
  readonly schema: SchemaSql;
  /** How statements and transactions of several requests (and instances) meet: locks, time limits, conflicts, what a reader can tell changed. */
  readonly concurrency: Concurrency;
}

/** How the text of a statement is written: names, bound values, paging, order, text matching and sums. */
export interface SqlText {
  quote(identifier: string): string;
  /** the placeholder for the n-th (1-based) bound parameter */
  placeholder(n: number): string;
  /**
   * LIMIT/OFFSET clause (with its leading space) from the placeholders of the bound limit and
   * offset, or '' when neither applies. Bound, so that every page shares one prepared statement.
   */
  paging(limit: string | null, offset: string | null): string;
  /** what follows a sort term (and an index's column, so that the index serves the sort) so that nulls come first going up and last going down (SQLite's order) */
  nullsOrder(descending: boolean): string;
  /** SQL applying the text fold (util/fold.ts) to an expression: for values computed in queries */
  fold(expr: string): string;
  /**
   * SQL matching `text` (folded first when `folded`) with the LIKE pattern at the placeholder
   * `pattern` (`\` escapes), where the text has no bound on its length (a whole text's fold
   * computed by the query, a JSON value): the engine's LIKE where a statement past its time limit
   * stops it, else a match that checks the limit as it goes (SQLite's LIKE runs on the event
   * loop, for the text's length times the pattern's, uninterrupted).
   */
  unboundedLike(text: string, pattern: string, folded: boolean): string;
  /** the value bound for unboundedLike's `pattern`, from the LIKE pattern */
  unboundedPattern(pattern: string): unknown;
  /** the operand of SUM and AVG: where the engine's float sums fail past the largest double, a type that does not (SQLite gives infinity) */
  sumOperand(expr: string): string;
  /** SQL testing that `expr` is one of the keys bound (as keyListParam's value) at `placeholder` */
  inKeyList(expr: string, placeholder: string): string;
  /** the bound value of a key list (an entity set's members): one parameter, however many keys */
  keyListParam(keys: ArrayLike<unknown>): unknown;
  /** the value bound for a boolean compared with a JSON value: 1 or 0, the 'number' class that reads true and false so */
  bindBoolean(value: boolean): unknown;
  /**
   * SQL of the bytes a stored value (a text or a JSON column) takes, null for null: what the
   * engine keeps of its size, not the value (an answer's size is checked before its rows are read)
   */
  storedBytes(expr: string): string;
}

/** Reading JSON columns (object attributes) in SQL. */
export interface JsonSql {
  /** SQL reading a property path of a JSON column as a number, null when it holds anything else (sums of object properties ignore other types, as 4D's do) */
  number(column: string, path: string): string;
  /**
   * SQL reading a JSON value of one class, null when it holds one of the other class, JSON null
   * or nothing: 'number' (numbers; true and false as 1 and 0) or 'text' (strings; objects and
   * arrays as their JSON text). The compiler orders the classes as SQLite orders types (null,
   * numbers, text), so that both engines compare and sort JSON values alike.
   */
  scalar(value: JsonRef, cls: JsonClass): string;
  /** the bound value that names a property path (a JsonRef's `path`) */
  path(parts: readonly string[]): unknown;
  /** a FROM item listing the elements of the JSON array at `path` in `column`, as rows of `alias` */
  elements(column: string, path: string, alias: string): string;
}

/** Column types, and values between JavaScript and the columns. */
export interface ColumnTypes {
  /** column type in CREATE TABLE / ADD COLUMN */
  columnType(type: StorageType): string;
  /** full column definition of an identifying attribute (type, primary key, generation) */
  keyColumn(attr: StorageAttribute): string;
  /** integer column type able to hold 64-bit values (stamps, times, blob references) */
  readonly bigint: string;
  /** type of a binary column */
  readonly bytes: string;
  /** clause creating an auto-generated integer primary key for internal tables */
  readonly autoKey: string;
  /** turns a JavaScript attribute value into the value bound for the column */
  encode(type: StorageType, value: unknown, dateOnly: boolean): unknown;
  /** turns a column value read from the engine into the JavaScript attribute value */
  decode(type: StorageType, value: unknown, dateOnly: boolean): unknown;
  /**
   * A date column's value when it is already the text isoDate() writes for a valid date
   * (YYYY-MM-DD, or Date.toISOString()'s form), else undefined: answers written from rows send it
   * without a Date round trip. Only where dates are stored as text.
   */
  storedDateText?(value: unknown, dateOnly: boolean): string | undefined;
}

/** The schema sync's and the service's own tables' statements, and the file's upkeep. */
export interface SchemaSql {
  /** statements creating the SQL functions this dialect's SQL calls (fold), run by the schema sync; none where the driver registers them */
  sqlFunctions(): readonly string[];
  /**
   * SQL storing a binary column as it is, uncompressed (its values are compressed already, as
   * images, or do not compress much for the time it costs, as entity-set members); null where the
   * engine never compresses. `table` and `column` are names, not quoted.
   */
  storeUncompressed(table: string, column: string): string | null;
  /** a query of the columns (as `name`, in order) of the table its one parameter names; no rows when there is none */
  readonly tableColumns: string;
  /** the statements on the global stamp (the datastore's modification counter), `name` quoted */
  globalStamp(name: string): GlobalStampSql;
  /**
   * Giving the pages of removed rows back to the file system, a bounded step at a time: the
   * statement reading how many pages are free, the one giving back up to `pages` of them, and the
   * one copying the WAL into the file (which the file shrinks with); null where the engine
   * reclaims space itself (PostgreSQL's autovacuum).
   */
  readonly reclaimSpace: { readonly freePages: string; step(pages: number): string; readonly checkpoint: string } | null;
  /**
   * After rows were inserted with keys of their own into the autoincrement key `column` of `table`
   * (names, not quoted): the statement moving the engine's key counter past the largest key, so
   * that the next entity it makes does not collide with an imported one; null where the engine
   * does so itself.
   */
  keyCounterCatchUp(table: string, column: string): { readonly sql: string; readonly params: unknown[] } | null;
  /** statements converting a column's values (known to fit) to a new type (storage/migrations/type-changes.ts says which changes are made) */
  convertColumn(table: string, column: string, from: TypeOf, to: TypeOf): Conversion;
  /** SQL condition true for a stored date (`column` quoted) that has a time of day other than midnight UTC */
  notMidnight(column: string): string;
}

/** How statements and transactions of several requests (and instances) meet: locks, time limits, conflicts, what a reader can tell changed. */
export interface Concurrency {
  /**
   * A condition that is always true on `row` (an expression of the subquery's row: a column, so
   * that the engine evaluates it for each row rather than once), put first in the WHERE of every
   * subquery nested in another (colleagues.colleagues.…: where a query's work multiplies): where
   * the engine cannot stop a statement from another thread, the driver's check of the query time
   * limit. null where the engine has its own statement timeout (PostgreSQL).
   */
  readonly progressCheck: ((row: string) => string) | null;
  /**
   * The statement lifting the query time limit for the rest of the transaction it runs in (the
   * schema sync converts whole tables, and may wait for another instance's); null where the limit
   * only covers the compiler's subqueries (progressCheck).
   */
  readonly noStatementTimeout: string | null;
  /**
   * SQL taking a lock named `name` (a constant of the service) until the transaction ends: the
   * schema sync, the seed and the entity-set bound run one instance at a time so; null where the
   * write transaction already excludes every other writer.
   */
  transactionLock(name: string): string | null;
  /**
   * What ends a SELECT to lock the rows it reads of the table aliased `alias` until the transaction
   * ends (an entity's pessimistic lock waits so for a save under way, and a save for it); '' where
   * the write transaction already excludes every other writer.
   */
  rowLock(alias: string): string;
  /**
   * What ends a SELECT to hold the rows it reads of the table aliased `alias` against a DELETE
   * (or a key change) until the transaction ends, as a foreign key's check does: a save naming a
   * relation's target so keeps it from being dropped meanwhile (a drop's delete controls then see
   * the saved entity: writes/delete-rules.ts); '' where the write transaction already excludes
   * every other writer.
   */
  keyShareLock(alias: string): string;
  /** Whether another transaction may write while this one does (PostgreSQL), or the write transaction excludes every other writer (SQLite). */
  readonly concurrentWriters: boolean;
  /**
   * How many times a write unit that runs no user code is run again when the engine stopped it
   * for a conflict with another transaction (a deadlock): none where a writer waits for the
   * other instead (SQLite: each try would block the process for the busy timeout).
   */
  readonly conflictRetries: number;
  /**
   * An expression whose value, read in two statements on this engine, is the same only if no data
   * the second could see changed in between (a commit by anyone, a write of the reading
   * transaction itself); `globalStamp`: the global stamp's name, quoted. What a page's cached
   * count is checked with (datastore/reads/page-read.ts). It may change when the data did not (a harmless
   * recount), never stay when it did.
   */
  dataVersion(globalStamp: string): string;
}

export type JsonClass = 'number' | 'text';

/** A JSON value in a row: a property path of a JSON column, or an element of a JsonSql.elements() row (itself, or a path inside it). */
export type JsonRef =
  | { readonly column: string; readonly path: string }
  | { readonly element: string; readonly path: string | null };

export interface GlobalStampSql {
  /** creates it when missing, at 0 (run in the schema sync; a value already there stays) */
  readonly create: readonly string[];
  /** increases it by one (in every write transaction) */
  readonly bump: string;
  /**
   * What the caches of whole answers read to know whether another instance changed anything
   * (rest/scope/answer-cache/stamp-watch.ts), as `v`: the stamp where it moves only at a commit;
   * where a bump shows before its transaction commits (PostgreSQL's sequence), the stamp with what
   * changes again when that transaction ends (its snapshot), so that a change seen before its
   * commit is seen again at it.
   */
  readonly watch: string;
  /**
   * Where the increase is an expression a SELECT can hold (PostgreSQL's nextval): that
   * expression, so that a write asks its other questions (another session's lock) in the same
   * statement, at no round trip more; null where it is a statement of its own.
   */
  readonly bumpExpression: string | null;
  /** increases it by one and returns the new value, as `v`: the bump of a write that tracks changes, which stores it */
  readonly bumpReturning: string;
  /**
   * What a write that tracks changes runs before its bump, in its transaction, so that such writes
   * take their stamps in the order they commit (a sync asking `__GlobalStamp > :1` with the last
   * stamp it saw then misses none); none where writes commit in their stamps' order already
   * (SQLite: one writer at a time, the counter's row is the writer's).
   */
  readonly ordered: readonly string[];
  /**
   * What a read of the stamp that must name committed changes only runs before it, in one
   * transaction with it (ds.getGlobalStamp(): a sync resumes from it): it waits for the writes of
   * `ordered` under way; none where the read sees committed values only already.
   */
  readonly settled: readonly string[];
  /** reads it, as `v` */
  readonly read: string;
  /** sets it to its one bound value (ds.setGlobalStamp()), a whole number ≥ 0 */
  readonly set: string;
}

/** A column's type as the schema sync compares them: a date only is a date of its own. */
export interface TypeOf {
  readonly type: StorageType;
  readonly dateOnly?: boolean;
}

/** A column's change of type (SchemaSql.convertColumn). */
export interface Conversion {
  /** statements converting the column's values (known to fit) to the new type */
  readonly sql: readonly string[];
  /** the column is made anew: its indexes must be dropped before and made again after */
  readonly rewrites: boolean;
}

/**
 * Shared by dialects: the characters JavaScript's `\s` and trim() take as space (so the schema
 * sync's checks of a text that must read as a number, and a save, take them), which the engines'
 * TRIM and casts do not all skip: a conversion trims exactly these (without them, SQLite cast
 * "\u00a012" to 0 and PostgreSQL refused it mid-sync).
 */
export const JS_SPACES = '\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff';

/** Shared by dialects: the text of a value with JS_SPACES cut from both ends (`trim`: the engine's function of (text, characters)). */
export const trimmed = (trim: string, c: string): string => `${trim}(${c}, '${JS_SPACES}')`;

/** Shared by dialects: the ISO string of a date, or of a date without time (`YYYY-MM-DD`). */
export function isoDate(d: Date, dateOnly: boolean): string {
  const iso = d.toISOString();
  return dateOnly ? iso.slice(0, 10) : iso;
}
