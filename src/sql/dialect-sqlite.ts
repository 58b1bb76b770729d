// SQLite dialect: dynamic typing, so dates are ISO text (which sorts in time order), booleans are
// 0/1 and objects are JSON text.

import type { StorageAttribute, StorageType } from '../model/types.js';
import { isoDate, trimmed, type Conversion, type Dialect, type TypeOf } from './dialect.js';

const TYPES: Record<StorageType, string> = {
  bool: 'INTEGER', byte: 'INTEGER', word: 'INTEGER', long: 'INTEGER', long64: 'INTEGER', duration: 'INTEGER',
  number: 'REAL', string: 'TEXT', uuid: 'TEXT', date: 'TEXT', object: 'TEXT',
  // image and blob columns hold a reference to the stored file (see storage/schema.ts)
  image: 'INTEGER', blob: 'INTEGER',
};

/** json_type()'s names of the two classes of JSON values (Dialect.json.scalar) */
const NUMBER_TYPES = "('integer', 'real', 'true', 'false')";
const TEXT_TYPES = "('text', 'object', 'array')";

/** a function each connection defines (storage/sqlite.ts), answering a number no other connection of the process answers */
export const CONNECTION_FUNCTION = 'dataset_connection';
/** the SQL function the driver registers to stop a statement past the query time limit (Dialect.concurrency.progressCheck) */
export const PROGRESS_FUNCTION = 'dataset_progress';
/** the text fold (util/fold.ts), registered by the driver */
export const FOLD_FUNCTION = 'dataset_fold';
/** LIKE … ESCAPE '\' over texts of any length (util/like.ts), registered by the driver */
export const LIKE_FUNCTION = 'dataset_like';

const quote = (id: string): string => `"${id.replaceAll('"', '""')}"`;

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  sql: {
    quote,
    placeholder: () => '?',
    paging(limit, offset) {
      if (limit === null) return offset === null ? '' : ` LIMIT -1 OFFSET ${offset}`;
      return offset === null ? ` LIMIT ${limit}` : ` LIMIT ${limit} OFFSET ${offset}`;
    },
    // dataset_fold and dataset_like are registered on every connection by storage/sqlite.ts
    fold: (expr) => `${FOLD_FUNCTION}(${expr})`,
    // (CAST: a number matched as SQLite's LIKE reads it, as text; the fold made by the same call: a
    // long text crosses from SQLite to JavaScript once)
    unboundedLike: (text, pattern, folded) => `${LIKE_FUNCTION}(CAST(${text} AS TEXT), ${pattern}${folded ? ', 1' : ''})`,
    unboundedPattern: (pattern) => pattern,
    sumOperand: (expr) => expr,
    inKeyList: (expr, placeholder) => `${expr} IN (SELECT value FROM json_each(${placeholder}))`,
    keyListParam: (keys) => JSON.stringify(Array.from(keys)),
    // SQLite has no boolean type, and binding one throws: json_extract() reads true as 1
    bindBoolean: (value) => (value ? 1 : 0),
    // SQLite's own order
    nullsOrder: () => '',
    // (SQLite's octet_length reads no overflow page)
    storedBytes: (expr) => `octet_length(${expr})`,
  },
  json: {
    // a subquery names the column and the path once each: '?' placeholders bind one value per use.
    // Each read of a JSON value parses its whole text (a filter of hundreds of terms on one row of
    // a 1,000,000-character object took 18 s): the query time limit is checked before each (the
    // check, not deterministic, runs on each run of the subquery; its argument is the path).
    number: (column, path) => `(SELECT CASE WHEN json_type(c, p) IN ('integer', 'real') THEN json_extract(c, p) END FROM (SELECT ${column} AS c, ${path} AS p) WHERE ${PROGRESS_FUNCTION}(p))`,
    scalar(value, cls) {
      const types = cls === 'number' ? NUMBER_TYPES : TEXT_TYPES;
      if ('column' in value) return `(SELECT CASE WHEN json_type(c, p) IN ${types} THEN json_extract(c, p) END FROM (SELECT ${value.column} AS c, ${value.path} AS p) WHERE ${PROGRESS_FUNCTION}(p))`;
      const e = value.element;
      if (value.path === null) return `(CASE WHEN ${e}.type IN ${types} THEN ${e}.value END)`;
      // (an element that is no object or array has no properties: json_type would fail on its text)
      return `(SELECT CASE WHEN json_type(c, p) IN ${types} THEN json_extract(c, p) END FROM (SELECT CASE WHEN ${e}.type IN ('object', 'array') THEN ${e}.value END AS c, ${value.path} AS p) WHERE ${PROGRESS_FUNCTION}(p))`;
    },
    path: (parts) => `$${parts.map((p) => `."${p.replaceAll('"', '""')}"`).join('')}`,
    // only an array is a collection (json_each would walk an object's members, or a scalar as one row):
    // its elements are the rows with an integer key
    elements: (column, path, alias) => `(SELECT value, type FROM json_each(${column}, ${path}) WHERE typeof(key) = 'integer') ${alias}`,
  },
  types: {
    columnType: (type) => TYPES[type],
    keyColumn(attr: StorageAttribute): string {
      // AUTOINCREMENT so that a deleted entity's key is never given to a new one, as in 4D.
      if (attr.autoincrement) return 'INTEGER PRIMARY KEY AUTOINCREMENT';
      return `${TYPES[attr.type]} PRIMARY KEY NOT NULL`;
    },
    bigint: 'INTEGER',
    bytes: 'BLOB',
    autoKey: 'INTEGER PRIMARY KEY AUTOINCREMENT',
    encode(type, value, dateOnly) {
      if (value === null || value === undefined) return null;
      switch (type) {
        case 'bool':
          return value ? 1 : 0;
        case 'date':
          return isoDate(value as Date, dateOnly);
        case 'object':
          return JSON.stringify(value);
        default:
          return value;
      }
    },
    storedDateText: canonicalDateText,
    decode(type, value) {
      if (value === null || value === undefined) return null;
      switch (type) {
        case 'bool':
          return value === 1 || value === true;
        case 'date':
          return new Date(value as string);
        case 'object':
          return JSON.parse(value as string);
        default:
          return value;
      }
    },
  },
  schema: {
    sqlFunctions: () => [],
    // the file is made with auto_vacuum = INCREMENTAL (storage/sqlite-space.ts); a PASSIVE checkpoint waits for no reader
    reclaimSpace: { freePages: 'PRAGMA freelist_count', step: (pages) => `PRAGMA incremental_vacuum(${Math.trunc(pages)})`, checkpoint: 'PRAGMA wal_checkpoint(PASSIVE)' },
    storeUncompressed: () => null,
    // one row: its UPDATE is taken under the write lock every writer holds anyway
    globalStamp: (t) => ({
      create: [
        `CREATE TABLE IF NOT EXISTS ${t} ("id" INTEGER PRIMARY KEY, "value" INTEGER NOT NULL)`,
        `INSERT INTO ${t} ("id", "value") VALUES (1, 0) ON CONFLICT ("id") DO NOTHING`,
      ],
      bump: `UPDATE ${t} SET "value" = "value" + 1 WHERE "id" = 1`,
      // (an UPDATE: a statement of its own, in-process and cheap)
      bumpExpression: null,
      bumpReturning: `UPDATE ${t} SET "value" = "value" + 1 WHERE "id" = 1 RETURNING "value" AS v`,
      ordered: [],
      settled: [],
      read: `SELECT "value" AS v FROM ${t} WHERE "id" = 1`,
      watch: `SELECT "value" AS v FROM ${t} WHERE "id" = 1`,
      set: `UPDATE ${t} SET "value" = ? WHERE "id" = 1`,
    }),
    tableColumns: 'SELECT name FROM pragma_table_info(?)',
    // the AUTOINCREMENT counter follows the largest key inserted
    keyCounterCatchUp: () => null,
    convertColumn,
    notMidnight: (c) => `(length(${c}) > 10 AND substr(${c}, 11) <> 'T00:00:00.000Z')`,
  },
  concurrency: {
    progressCheck: (row) => `${PROGRESS_FUNCTION}(${row})`,
    noStatementTimeout: null,
    // BEGIN IMMEDIATE, which opens the schema sync's transaction, holds the database's write lock:
    // another process starting meanwhile waits (busy_timeout), or retries, before it reads the schema.
    transactionLock: () => null,
    rowLock: () => '',
    keyShareLock: () => '',
    concurrentWriters: false,
    conflictRetries: 0,
    // data_version moves when another connection commits, total_changes() with every row this
    // connection writes; both are the connection's own, so its identity goes with them (a subquery:
    // worked out once per statement, not once per row)
    dataVersion: () => `(SELECT ${CONNECTION_FUNCTION}() || '.' || data_version || '.' || total_changes() FROM pragma_data_version)`,
  },
};

/**
 * SQLite cannot change a column's type: where its declared type changes, the values go to a new
 * column that takes the old one's place (ADD, UPDATE, DROP, RENAME: each one pass over the table);
 * where it does not (every integer type is INTEGER here), only the values that change are rewritten.
 */
function convertColumn(table: string, column: string, from: TypeOf, to: TypeOf): Conversion {
  const t = quote(table);
  const c = quote(column);
  const expr = convertedValue(c, from, to);
  if (TYPES[from.type] === TYPES[to.type]) {
    return { sql: expr === null ? [] : [`UPDATE ${t} SET ${c} = ${expr} WHERE ${c} IS NOT NULL`], rewrites: false };
  }
  const tmp = quote(`${column}__converting`);
  return {
    sql: [
      `ALTER TABLE ${t} ADD COLUMN ${tmp} ${TYPES[to.type]}`,
      `UPDATE ${t} SET ${tmp} = ${expr ?? c}`,
      `ALTER TABLE ${t} DROP COLUMN ${c}`,
      `ALTER TABLE ${t} RENAME COLUMN ${tmp} TO ${c}`,
    ],
    rewrites: true,
  };
}

/** the value in the new type, from the column's (quoted) `c`, or null when it stays as stored */
function convertedValue(c: string, from: TypeOf, to: TypeOf): string | null {
  if (to.type === 'string') {
    if (from.type === 'bool') return `CASE WHEN ${c} IS NULL THEN NULL WHEN ${c} THEN 'true' ELSE 'false' END`;
    // a whole number stored as REAL reads 3.0 in SQL and 3 in JavaScript: written as the latter
    if (from.type === 'number') return `CASE WHEN ${c} = CAST(${c} AS INTEGER) AND abs(${c}) < 9007199254740992 THEN CAST(CAST(${c} AS INTEGER) AS TEXT) ELSE CAST(${c} AS TEXT) END`;
    if (from.type === 'date' || from.type === 'uuid' || from.type === 'object') return null; // stored as text already
    return `CAST(${c} AS TEXT)`;
  }
  if (to.type === 'number') return from.type === 'string' ? `CAST(${trimmed('trim', c)} AS REAL)` : `CAST(${c} AS REAL)`;
  if (to.type === 'date') return to.dateOnly ? `substr(${c}, 1, 10)` : `CASE WHEN length(${c}) = 10 THEN ${c} || 'T00:00:00.000Z' ELSE ${c} END`;
  // integers
  if (from.type === 'string') return `CAST(${trimmed('trim', c)} AS INTEGER)`;
  if (from.type === 'number') return `CAST(${c} AS INTEGER)`;
  return null;
}

/** Date.toISOString()'s form, or a date alone: the shapes isoDate() stores. */
const ISO_DATE_TEXT = /^\d{4}-\d\d-\d\d(?:T\d\d:\d\d:\d\d\.\d{3}Z)?$/;

/**
 * The stored text of a date when it is what isoDate() writes for a real date, else undefined. A
 * value written by other means (raw SQL, an import) may have the shape and not be a date
 * (2021-02-29, hour 24): new Date() would roll it over or refuse it, so it is not taken as it is.
 */
function canonicalDateText(value: unknown, dateOnly: boolean): string | undefined {
  if (typeof value !== 'string' || value.length !== (dateOnly ? 10 : 24) || !ISO_DATE_TEXT.test(value)) return undefined;
  const month = twoDigits(value, 5);
  const day = twoDigits(value, 8);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(twoDigits(value, 0) * 100 + twoDigits(value, 2), month)) return undefined;
  if (!dateOnly && (twoDigits(value, 11) > 23 || twoDigits(value, 14) > 59 || twoDigits(value, 17) > 59)) return undefined;
  return value;
}

/** The number two digits at `at` write (read by char codes: this runs for every date of every page written from rows). */
function twoDigits(text: string, at: number): number {
  return (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48;
}

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}
