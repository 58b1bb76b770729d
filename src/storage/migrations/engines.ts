// What differs between engines when a column changes type, kept here beside the planner rather
// than in the dialects (sql/): only the schema sync needs it. SQLite cannot change a column's type:
// where its declared type changes, the values go to a new column that takes the old one's place
// (ADD, UPDATE, DROP, RENAME: each one pass over the table); where it does not (every integer type
// is INTEGER there), only the values that change are rewritten. PostgreSQL changes the type in
// place (ALTER COLUMN … TYPE … USING), rewriting the table once.

import type { Dialect } from '../../sql/dialect.js';
import { JS_SPACES, type TypeOf } from './type-changes.js';

export interface Conversion {
  /** statements converting the column's values (known to fit) to the new type */
  readonly sql: readonly string[];
  /** the column is made anew: its indexes must be dropped before and made again after */
  readonly rewrites: boolean;
}

export interface SchemaEngine {
  convert(table: string, column: string, from: TypeOf, to: TypeOf): Conversion;
  /** SQL condition true for a stored date (column quoted) that has a time of day other than midnight UTC */
  notMidnight(column: string): string;
}

export function schemaEngine(d: Dialect): SchemaEngine {
  return d.name === 'postgres' ? postgres(d) : sqlite(d);
}

/** the text of a value with the spaces JavaScript trims cut from both ends (`trim` is the engine's function of (text, characters)) */
const trimmed = (trim: string, c: string) => `${trim}(${c}, '${JS_SPACES}')`;

function sqlite(d: Dialect): SchemaEngine {
  const q = d.sql.quote;
  /** the value in the new type, from the column's (quoted) `c`, or null when it stays as stored */
  const value = (c: string, from: TypeOf, to: TypeOf): string | null => {
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
  };
  return {
    convert(table, column, from, to) {
      const t = q(table);
      const c = q(column);
      const expr = value(c, from, to);
      if (d.types.columnType(from.type) === d.types.columnType(to.type)) {
        return { sql: expr === null ? [] : [`UPDATE ${t} SET ${c} = ${expr} WHERE ${c} IS NOT NULL`], rewrites: false };
      }
      const tmp = q(`${column}__converting`);
      return {
        sql: [
          `ALTER TABLE ${t} ADD COLUMN ${tmp} ${d.types.columnType(to.type)}`,
          `UPDATE ${t} SET ${tmp} = ${expr ?? c}`,
          `ALTER TABLE ${t} DROP COLUMN ${c}`,
          `ALTER TABLE ${t} RENAME COLUMN ${tmp} TO ${c}`,
        ],
        rewrites: true,
      };
    },
    notMidnight: (c) => `(length(${c}) > 10 AND substr(${c}, 11) <> 'T00:00:00.000Z')`,
  };
}

function postgres(d: Dialect): SchemaEngine {
  const q = d.sql.quote;
  const value = (c: string, from: TypeOf, to: TypeOf, type: string): string => {
    if (to.type === 'string' && from.type === 'date') {
      // the form isoDate() writes (dialect.ts), as SQLite stores it (the session's zone is UTC)
      return `to_char(${c} AT TIME ZONE 'UTC', '${from.dateOnly ? 'YYYY-MM-DD' : 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'}')`;
    }
    if (from.type === 'string') return `${trimmed('btrim', c)}::${type}`;
    return `${c}::${type}`;
  };
  return {
    convert(table, column, from, to) {
      // dates of both kinds are timestamptz, uuids and strings text: nothing to change
      if (d.types.columnType(from.type) === d.types.columnType(to.type)) return { sql: [], rewrites: false };
      const type = d.types.columnType(to.type);
      const bare = type.replace(/\s+COLLATE.*$/, '');
      const c = q(column);
      return { sql: [`ALTER TABLE ${q(table)} ALTER COLUMN ${c} TYPE ${type} USING ${value(c, from, to, bare)}`], rewrites: true };
    },
    // (the storage's sessions run in UTC: the day starts at midnight UTC)
    notMidnight: (c) => `(${c} <> date_trunc('day', ${c}))`,
  };
}

