// Conversions between outside values (URL text, JSON) and attribute values of the core:
// integers, numbers, strings, uuids (32 uppercase hex, as 4D writes them), booleans, dates.

import { randomUUID } from 'node:crypto';
import { MAX_OBJECT_DEPTH, MAX_UNIQUE_TEXT_BYTES } from '../config/limits.js';
import { DatasetError } from '../errors/dataset-error.js';
import type { StorageAttribute } from './types.js';

const INTEGER_RANGES: Record<string, [number, number]> = {
  byte: [-128, 127],
  word: [-32768, 32767],
  long: [-2147483648, 2147483647],
  long64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};
const UUID = /^[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}$/;

/** Has it no lone surrogate (half of a UTF-16 pair, which UTF-8 — what either database stores — cannot write)? */
const wellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * Why a JSON value cannot be stored faithfully, or undefined: a text (or a property name) with a
 * lone surrogate — SQLite would keep replacement characters, PostgreSQL would refuse every later
 * query on the object — or objects nested deeper than MAX_OBJECT_DEPTH.
 */
function jsonFault(value: unknown, depth = 0): string | undefined {
  if (typeof value === 'string') return wellFormed(value) ? undefined : `the text ${describe(value)} holds a lone surrogate (half of a UTF-16 pair), which cannot be stored`;
  if (typeof value !== 'object' || value === null || value instanceof Date || ArrayBuffer.isView(value)) return undefined;
  if (depth >= MAX_OBJECT_DEPTH) return `objects and arrays nest deeper than ${MAX_OBJECT_DEPTH} levels`;
  if (Array.isArray(value)) {
    // by index: no key to check, and no string made for each
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const fault = typeof item === 'object' || typeof item === 'string' ? jsonFault(item, depth + 1) : undefined;
      if (fault) return fault;
    }
    return undefined;
  }
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    const fault = jsonFault(k, depth + 1) ?? jsonFault((value as Record<string, unknown>)[k], depth + 1);
    if (fault) return fault;
  }
  return undefined;
}

/**
 * Refuses an object attribute's value that cannot be stored faithfully as it is now (INVALID_VALUE):
 * checked again when it is written, as the object set (and checked by coerceValue) may have been
 * changed in place since — nested deeper than the engines' JSON functions can then read, say.
 */
export function requireStorableObject(attr: StorageAttribute, value: unknown): void {
  if (attr.type !== 'object' || value === null || value === undefined) return;
  const fault = jsonFault(value);
  if (fault) refuse(attr, value, fault);
}

/** A number, or the whole number a text writes (digits with an optional minus); NaN otherwise. */
function wholeNumber(v: unknown): number {
  return typeof v === 'number' ? v : typeof v === 'string' && /^\s*-?\d+\s*$/.test(v) ? Number(v) : NaN;
}

/** A new uuid in 4D's form: 32 uppercase hexadecimal digits, no dashes. */
export function newUuid(): string {
  return randomUUID().replaceAll('-', '').toUpperCase();
}

/**
 * The key value for a primary key given as text (from a URL) or as JSON; undefined when it
 * cannot be one (the caller decides whether that is "not found" or an error).
 */
export function keyFromInput(attr: StorageAttribute, input: unknown): string | number | undefined {
  switch (attr.type) {
    case 'byte':
    case 'word':
    case 'long':
    case 'long64': {
      const n = wholeNumber(input);
      const [min, max] = INTEGER_RANGES[attr.type];
      return Number.isInteger(n) && n >= min && n <= max ? n : undefined;
    }
    case 'number': {
      const n = typeof input === 'number' ? input : typeof input === 'string' && input.trim() !== '' ? Number(input) : NaN;
      return Number.isFinite(n) ? n : undefined;
    }
    case 'uuid':
      return typeof input === 'string' && UUID.test(input) ? input.replaceAll('-', '').toUpperCase() : undefined;
    case 'string':
      return typeof input === 'string' ? input : typeof input === 'number' ? String(input) : undefined;
    default:
      return undefined;
  }
}

/** Like keyFromInput, but a value that cannot be a key is an INVALID_KEY error naming the dataclass. */
export function requireKey(attr: StorageAttribute, input: unknown): string | number {
  const key = keyFromInput(attr, input);
  if (key === undefined) {
    throw new DatasetError('INVALID_KEY', `${JSON.stringify(input)} is not a valid key for ${attr.dataClass.name}: its key '${attr.name}' is of type ${attr.type}`);
  }
  return key;
}

/**
 * The attribute value for a scalar given as URL text (the `:attribute(value)` lookup): text is
 * converted to the attribute's type, as 4D does for query values.
 */
export function valueFromText(attr: StorageAttribute, text: string): unknown {
  if (attr.type === 'bool' && (text === 'true' || text === 'false')) return text === 'true';
  if (attr.type !== 'bool' && attr.type !== 'object' && attr.type !== 'image' && attr.type !== 'blob') return coerceValue(attr, text);
  throw new DatasetError('INVALID_VALUE', `'${text}' is not a valid ${attr.type} value for ${attr.dataClass.name}.${attr.name}`, [], { attributeName: attr.name });
}

/** The refusal of a value an attribute cannot take (a function of its own: a closure made at every conversion costs an import of a million rows a seventh of its time). */
function refuse(attr: StorageAttribute, value: unknown, why: string): never {
  throw new DatasetError('INVALID_VALUE', `${attr.dataClass.name}.${attr.name} (${attr.type}) cannot take ${describe(value)}: ${why}`, [], { attributeName: attr.name });
}

/**
 * The value to store for a storage attribute, from what user code or a client gave: converted
 * where 4D converts (numeric text, ISO and dd!mm!yyyy dates, dashed uuids), checked against
 * the type's range, else an INVALID_VALUE error naming the attribute. `maxTextLength` (the
 * --max-text-length of a write; a query's values have none): the longest text a string takes.
 */
export function coerceValue(attr: StorageAttribute, value: unknown, maxTextLength = Infinity): unknown {
  if (value === null || value === undefined) return null;
  switch (attr.type) {
    case 'bool':
      return typeof value === 'boolean' ? value : refuse(attr, value, 'expected true or false');
    case 'byte':
    case 'word':
    case 'long':
    case 'long64': {
      const n = wholeNumber(value);
      if (!Number.isInteger(n)) return refuse(attr, value, 'expected a whole number');
      const [min, max] = INTEGER_RANGES[attr.type];
      return n >= min && n <= max ? n : refuse(attr, value, `out of range ${min} to ${max}`);
    }
    case 'number': {
      const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
      return Number.isFinite(n) ? n : refuse(attr, value, 'expected a number');
    }
    case 'duration': {
      // milliseconds, stored as a 64-bit integer on PostgreSQL: whole, and exact in a double; the
      // noise of float arithmetic (1.1 * 3600000 = 3960000.0000000005) is rounded away, a real
      // fraction of a millisecond refused
      const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
      if (!Number.isFinite(n)) return refuse(attr, value, 'expected a whole number of milliseconds');
      const whole = Math.round(n);
      if (Math.abs(n - whole) > 1e-6) return refuse(attr, value, 'expected a whole number of milliseconds');
      return Math.abs(whole) <= Number.MAX_SAFE_INTEGER ? whole : refuse(attr, value, `out of range ${Number.MIN_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER} milliseconds`);
    }
    case 'string': {
      if (typeof value !== 'string') return refuse(attr, value, 'expected text');
      if (value.length > maxTextLength) return refuse(attr, value, `a text of ${value.length.toLocaleString('en-US')} characters is longer than the limit, ${maxTextLength.toLocaleString('en-US')} (--max-text-length)`);
      // (on writes: a query's value, which has no maximum, only compares)
      if ((attr.unique || attr.identifying) && maxTextLength !== Infinity && value.length > MAX_UNIQUE_TEXT_BYTES / 3 && Buffer.byteLength(value) > MAX_UNIQUE_TEXT_BYTES) {
        return refuse(attr, value, `a ${attr.identifying ? 'key' : 'unique attribute'}'s text is indexed whole, and this one is ${Buffer.byteLength(value).toLocaleString('en-US')} bytes of UTF-8: at most ${MAX_UNIQUE_TEXT_BYTES.toLocaleString('en-US')}`);
      }
      return wellFormed(value) ? value : refuse(attr, value, 'it holds a lone surrogate (half of a UTF-16 pair), which cannot be stored');
    }
    case 'uuid':
      return typeof value === 'string' && UUID.test(value) ? value.replaceAll('-', '').toUpperCase() : refuse(attr, value, 'expected a uuid (32 hexadecimal digits)');
    case 'date': {
      const d = value instanceof Date ? value : typeof value === 'string' ? parseDate(value) : undefined;
      if (!d || Number.isNaN(d.getTime())) return refuse(attr, value, 'expected a date (YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ or dd!mm!yyyy)');
      // date-only attributes keep the day (time and zone dropped, spec "Value formats for input")
      return attr.dateOnly ? utcDay(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) : d;
    }
    case 'object': {
      if (typeof value !== 'object') return refuse(attr, value, 'expected a JSON object');
      const fault = jsonFault(value);
      return fault ? refuse(attr, value, fault) : value;
    }
    case 'image':
    case 'blob':
      return Number.isInteger(value) ? value : refuse(attr, value, 'expected a stored file');
    default: {
      const never: never = attr.type;
      return never;
    }
  }
}

export function parseDate(text: string): Date | undefined {
  const m = /^(\d{1,2})!(\d{1,2})!(\d{4})$/.exec(text);
  if (m) return realDay(+m[3], +m[2], +m[1]) ? utcDay(+m[3], +m[2] - 1, +m[1]) : undefined;
  const iso = /^(\d{4})-(\d{2})-(\d{2})([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.exec(text);
  return iso && realDay(+iso[1], +iso[2], +iso[3]) ? new Date(text) : undefined;
}

/** Midnight UTC of a day (Date.UTC would read the years 0 to 99 as 1900 to 1999). */
function utcDay(year: number, monthIndex: number, day: number): Date {
  const d = new Date(0);
  d.setUTCFullYear(year, monthIndex, day);
  return d;
}

/** Is it a day of the calendar (no 31 February, no month 0)? Date would roll it over silently. */
function realDay(year: number, month: number, day: number): boolean {
  const d = utcDay(year, month - 1, day);
  return d.getUTCFullYear() === year && d.getUTCMonth() === month - 1 && d.getUTCDate() === day;
}

function describe(v: unknown): string {
  const text = typeof v === 'string' ? JSON.stringify(v) : v instanceof Date ? 'an invalid date' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : String(v);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
