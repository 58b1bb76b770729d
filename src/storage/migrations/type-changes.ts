// Which type changes the schema sync applies to stored values, and how it tells whether they fit.
// Widening changes (every value has a form in the new type) are applied as they are; narrowing
// ones only when every stored value fits, which is checked first; the rest are refused with what
// to do instead. The SQL of a conversion is the engine's (Dialect.schema.convertColumn).

import type { StorageType } from '../../model/types.js';
import type { TypeOf } from '../../sql/dialect.js';
import { typeLabel } from './snapshot.js';

export type { TypeOf };

/** How to find a stored value that does not fit the new type. */
export type Misfit =
  /** a number outside [min, max], or (whole) one with a fraction: found in SQL */
  | { readonly kind: 'range'; readonly min: number; readonly max: number; readonly whole: boolean; readonly why: string }
  /** a text that does not read as the new type: found by reading the values (test) */
  | { readonly kind: 'text'; readonly test: (text: string) => boolean; readonly why: string }
  /** a date with a time of day other than midnight (UTC): found in the engine's SQL */
  | { readonly kind: 'midnight'; readonly why: string };

export type TypeChange =
  | { readonly kind: 'same' }
  | { readonly kind: 'widen' }
  | { readonly kind: 'narrow'; readonly misfit: Misfit }
  | { readonly kind: 'refuse'; readonly why: string };

/** The integer types, narrowest first: each holds every value of those before it. */
const INTEGERS: readonly StorageType[] = ['byte', 'word', 'long', 'long64'];
const RANGES: Record<string, readonly [number, number]> = {
  byte: [-128, 127], word: [-32768, 32767], long: [-2147483648, 2147483647], long64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};
/** files are references to stored bytes: no text stands for them */
const FILES: ReadonlySet<StorageType> = new Set(['image', 'blob']);
/** what coerceValue (model/values.ts) takes as a whole number, and a number every engine's cast reads (a conversion trims JS_SPACES, sql/dialect.ts, first) */
const WHOLE_TEXT = /^\s*-?\d+\s*$/;
const NUMBER_TEXT = /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;
/** a decimal whose digits are not all zero but that reads as 0 (1e-400): PostgreSQL refuses it, SQLite would store 0 */
const underflows = (t: string) => Number(t) === 0 && /[1-9]/.test(t.replace(/[eE].*$/, ''));

export function typeChange(from: TypeOf, to: TypeOf): TypeChange {
  if (from.type === to.type && (from.type !== 'date' || Boolean(from.dateOnly) === Boolean(to.dateOnly))) return { kind: 'same' };
  const fi = INTEGERS.indexOf(from.type);
  const ti = INTEGERS.indexOf(to.type);
  if (fi >= 0 && ti >= 0) return ti > fi ? { kind: 'widen' } : { kind: 'narrow', misfit: range(to.type, false) };
  if (fi >= 0 && to.type === 'number') return { kind: 'widen' };
  if (from.type === 'number' && ti >= 0) return { kind: 'narrow', misfit: range(to.type, true) };
  if (to.type === 'string' && !FILES.has(from.type)) return { kind: 'widen' };
  if (from.type === 'date' && to.type === 'date') {
    return from.dateOnly ? { kind: 'widen' } : { kind: 'narrow', misfit: { kind: 'midnight', why: 'a date only has no time of day (only midnight UTC fits)' } };
  }
  if (from.type === 'string' && ti >= 0) {
    const [min, max] = RANGES[to.type];
    return { kind: 'narrow', misfit: { kind: 'text', test: (t) => WHOLE_TEXT.test(t) && Number(t) >= min && Number(t) <= max, why: `${to.type} takes whole numbers from ${min} to ${max}` } };
  }
  if (from.type === 'string' && to.type === 'number') {
    return { kind: 'narrow', misfit: { kind: 'text', test: (t) => NUMBER_TEXT.test(t) && Number.isFinite(Number(t)) && !underflows(t), why: 'number takes decimal numbers (like 12, -3.5 or 1e6) within its range' } };
  }
  return {
    kind: 'refuse',
    why: `${typeLabel(from)} values have no ${typeLabel(to)} form this server converts them to: add a new attribute of type ${to.type}, copy the values into it (a function, or export and import), then remove this one (or keep its type)`,
  };
}

function range(type: StorageType, fromNumber: boolean): Misfit {
  const [min, max] = RANGES[type];
  return { kind: 'range', min, max, whole: fromNumber, why: `${type} takes whole numbers from ${min} to ${max}` };
}
