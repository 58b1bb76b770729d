// Conversions between outside values (URL text, JSON) and attribute values of the core:
// integers, numbers, strings, uuids (32 uppercase hex, as 4D writes them), booleans, dates.

import { randomUUID } from 'node:crypto';
import { DatasetError } from '../errors/dataset-error.js';
import type { StorageAttribute } from '../model/types.js';

const INTEGER_RANGES: Record<string, [number, number]> = {
  byte: [-128, 127],
  word: [-32768, 32767],
  long: [-2147483648, 2147483647],
  long64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};
const UUID = /^[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}$/;

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
      const n = typeof input === 'number' ? input : typeof input === 'string' && /^\s*-?\d+\s*$/.test(input) ? Number(input) : NaN;
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
  switch (attr.type) {
    case 'bool':
      if (text === 'true' || text === 'false') return text === 'true';
      break;
    case 'date': {
      const m = /^(\d{1,2})!(\d{1,2})!(\d{4})$/.exec(text);
      const d = m ? new Date(Date.UTC(+m[3], +m[2] - 1, +m[1])) : new Date(text);
      if (!Number.isNaN(d.getTime())) return d;
      break;
    }
    case 'duration': {
      const n = Number(text);
      if (text.trim() !== '' && Number.isFinite(n)) return n;
      break;
    }
    case 'object':
    case 'image':
    case 'blob':
      break;
    default: {
      const key = keyFromInput(attr, text);
      if (key !== undefined) return key;
    }
  }
  throw new DatasetError('INVALID_VALUE', `'${text}' is not a valid ${attr.type} value for ${attr.dataClass.name}.${attr.name}`);
}
