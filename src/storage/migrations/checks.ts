// The data a schema change must not break, read before anything is changed: nulls under a new
// notNull, duplicates under a new unique, values a narrower type cannot hold. Each finding names
// the first offending entities by key (a few) and how many there are in all, so that they can be
// found and fixed.

import { SCHEMA_BATCH_ROWS } from '../../config/limits.js';
import type { StorageAttribute } from '../../model/types.js';
import type { Storage } from '../adapter.js';
import { count } from './snapshot.js';
import type { Misfit } from './type-changes.js';

/** entities named in a refusal, at most */
const SHOWN = 5;

function entity(a: StorageAttribute, key: unknown): string {
  return `${a.dataClass.name}(${typeof key === 'string' ? JSON.stringify(key) : String(key)})`;
}

function shown(v: unknown): string {
  const text = typeof v === 'string' ? JSON.stringify(v) : String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Why `a` cannot become notNull (column `column` of the table as it is now), or undefined. */
export async function nullsIn(s: Storage, a: StorageAttribute, column: string | null): Promise<string | undefined> {
  const q = s.dialect.sql.quote;
  const t = q(a.dataClass.table);
  const k = q(a.dataClass.key.column);
  // (a column not there yet holds null in every row)
  const where = column === null ? '' : ` WHERE ${q(column)} IS NULL`;
  const total = Number((await s.get(`SELECT COUNT(*) AS n FROM ${t}${where}`))?.n ?? 0);
  if (total === 0) return undefined;
  const keys = await s.column(`SELECT ${k} FROM ${t}${where} ORDER BY ${k} LIMIT ${SHOWN}`);
  return `${a.dataClass.name}.${a.name}: cannot become notNull, ${count(total)} entit${total === 1 ? 'y holds' : 'ies hold'} null (${keys.map((x) => entity(a, x)).join(', ')}${total > keys.length ? ', …' : ''}): give them a value first, then add notNull`;
}

/** Why `a` cannot become unique, or undefined. */
export async function duplicatesIn(s: Storage, a: StorageAttribute): Promise<string | undefined> {
  const q = s.dialect.sql.quote;
  const t = q(a.dataClass.table);
  const c = q(a.column);
  const k = q(a.dataClass.key.column);
  const dup = await s.get(`SELECT ${c} AS v, COUNT(*) AS n FROM ${t} WHERE ${c} IS NOT NULL GROUP BY ${c} HAVING COUNT(*) > 1 ORDER BY MIN(${k}) LIMIT 1`);
  if (!dup) return undefined;
  const shared = `${c} IN (SELECT ${c} FROM ${t} WHERE ${c} IS NOT NULL GROUP BY ${c} HAVING COUNT(*) > 1)`;
  const total = Number((await s.get(`SELECT COUNT(*) AS n FROM ${t} WHERE ${shared}`))?.n ?? 0);
  const rows = await s.all(`SELECT ${k} AS k, ${c} AS v FROM ${t} WHERE ${shared} ORDER BY ${k} LIMIT ${SHOWN}`);
  return `${a.dataClass.name}.${a.name}: cannot become unique, the value ${shown(dup.v)} is held by ${String(dup.n)} entities; ${count(total)} entities in all share a value with another (${rows.map((r) => `${entity(a, r.k)} ${shown(r.v)}`).join(', ')}${total > rows.length ? ', …' : ''})`;
}

/** Why the values of `column` do not all fit the new type of `a` (the first that does not, and how many), or undefined. */
export async function misfitsIn(s: Storage, a: StorageAttribute, column: string, misfit: Misfit, change: string): Promise<string | undefined> {
  const q = s.dialect.sql.quote;
  const t = q(a.dataClass.table);
  const c = q(column);
  const k = q(a.dataClass.key.column);
  let first: { k: unknown; v: unknown } | undefined;
  let total = 0;
  if (misfit.kind === 'text') {
    // read in key order, a batch at a time: the test is JavaScript's, as a save's would be
    let after: unknown = null;
    for (;;) {
      const from = after === null ? '' : ` AND ${k} > ${s.dialect.sql.placeholder(1)}`;
      const rows = await s.all(`SELECT ${k} AS k, ${c} AS v FROM ${t} WHERE ${c} IS NOT NULL${from} ORDER BY ${k} LIMIT ${SCHEMA_BATCH_ROWS}`, after === null ? [] : [after]);
      for (const r of rows) {
        if (misfit.test(String(r.v))) continue;
        first ??= { k: r.k, v: r.v };
        total++;
      }
      if (rows.length < SCHEMA_BATCH_ROWS) break;
      after = rows[rows.length - 1].k;
    }
  } else {
    const where = misfit.kind === 'midnight'
      ? s.dialect.schema.notMidnight(c)
      : `(${c} < ${misfit.min} OR ${c} > ${misfit.max}${misfit.whole ? ` OR ${c} <> ROUND(${c})` : ''})`;
    const row = await s.get(`SELECT ${k} AS k, ${c} AS v FROM ${t} WHERE ${c} IS NOT NULL AND ${where} ORDER BY ${k} LIMIT 1`);
    if (row) {
      first = { k: row.k, v: s.dialect.types.decode(a.type === 'date' ? 'date' : 'number', row.v, false) };
      total = Number((await s.get(`SELECT COUNT(*) AS n FROM ${t} WHERE ${c} IS NOT NULL AND ${where}`))?.n ?? 0);
    }
  }
  if (!first) return undefined;
  const v = first.v instanceof Date ? first.v.toISOString() : first.v;
  return `${a.dataClass.name}.${a.name}: ${change} refused, the value ${shown(v)} of ${entity(a, first.k)} does not fit (${misfit.why})${total > 1 ? `, nor do ${count(total - 1)} other value${total === 2 ? '' : 's'}` : ''}: change or clear ${total === 1 ? 'it' : 'them'} first, or keep the type`;
}

/** How many values (not null) a column holds: what a type change converts. */
export async function valuesIn(s: Storage, table: string, column: string): Promise<number> {
  const q = s.dialect.sql.quote;
  return Number((await s.get(`SELECT COUNT(${q(column)}) AS n FROM ${q(table)}`))?.n ?? 0);
}
