// How values read from the REST API are shown, and how a form's text becomes a value again.
// 4D sends a date-only attribute as "d!m!yyyy" (0!0!0 for none) and other dates as ISO texts.

import type { AttributeInfo } from './catalog';
import type { Json } from './api';

export interface Deferred {
  readonly uri: string;
  readonly __KEY?: string;
  readonly image?: boolean;
}

export function deferredOf(value: unknown): Deferred | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const d = (value as { __deferred?: Deferred }).__deferred;
  return d && typeof d.uri === 'string' ? d : undefined;
}

/** "26!5!1969" → "1969-05-26" (the form of an <input type=date>); "" for none */
export function simpleDateToIso(value: unknown): string {
  if (typeof value !== 'string') return '';
  const m = /^(\d{1,2})!(\d{1,2})!(\d{1,4})$/.exec(value);
  if (!m) return value;
  if (m[3] === '0') return '';
  return `${m[3].padStart(4, '0')}-${m[2].padStart(2, '0')}-${m[1].padStart(2, '0')}`;
}

/** "1969-05-26" → "26!5!1969" */
export function isoToSimpleDate(iso: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  if (!m) return iso;
  return `${Number(m[3])}!${Number(m[2])}!${Number(m[1])}`;
}

/** Intl.NumberFormat's bounds: integer digits written at most, fraction digits (20 in every engine; 100 in newer ones) */
const MAX_INTEGER = 21;
const MAX_FRACTION = 20;

/**
 * A number in a 4D number format (the catalog's `defaultFormat`, "$###,###.00"): `#` a digit, `0` a
 * digit always written, `,` thousands grouped, `.` the decimals (as many as the pattern has,
 * those written 0 always), anything before or after said as is; a second section after `;` is for
 * negative numbers ("###,##0.00;(###,##0.00)"). A pattern with no digit is no number format: undefined.
 */
export function formatNumber(value: number, pattern: string): string | undefined {
  const [positive, negative] = pattern.split(';');
  const section = value < 0 && negative !== undefined ? negative : positive;
  const m = /^([^#0,.]*)([#0,.]+)(.*)$/s.exec(section);
  if (!m || !/[#0]/.test(m[2])) return undefined;
  const [, prefix, digits, suffix] = m;
  const [whole, fraction = ''] = digits.split('.');
  // (capped at Intl's limits, which throw past them: a model's "0000…" must not stop the grid)
  const text = new Intl.NumberFormat('en-US', {
    useGrouping: whole.includes(','),
    minimumFractionDigits: Math.min(MAX_FRACTION, (fraction.match(/0/g) ?? []).length),
    maximumFractionDigits: Math.min(MAX_FRACTION, (fraction.match(/[#0]/g) ?? []).length),
    minimumIntegerDigits: Math.min(MAX_INTEGER, Math.max(1, (whole.match(/0/g) ?? []).length)),
  }).format(value < 0 && negative !== undefined ? -value : value);
  return `${value < 0 && negative === undefined ? '-' : ''}${prefix}${text.replace(/^-/, '')}${suffix}`;
}

/** A value as a person reads it in a grid cell or a form's read-only field: a number in its defaultFormat, if the model gives one. */
export function formatted(a: AttributeInfo | undefined, value: unknown): string {
  if (a?.defaultFormat && typeof value === 'number') {
    const text = formatNumber(value, a.defaultFormat.format);
    if (text !== undefined) return text;
  }
  return display(a, value);
}

/** A value as one line of text in a grid cell or a summary. */
export function display(a: AttributeInfo | undefined, value: unknown): string {
  if (value === null || value === undefined) return '';
  if (a?.type === 'date' && a.simpleDate) return simpleDateToIso(value);
  if (a?.type === 'duration' && typeof value === 'number') return duration(value);
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** milliseconds as h:mm:ss */
export function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 3600)}:${String(Math.floor(s / 60) % 60).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

/** The text a form field starts with for a value. */
export function toField(a: AttributeInfo, value: unknown): string {
  if (value === null || value === undefined) return '';
  switch (a.type) {
    case 'date':
      if (a.simpleDate) return simpleDateToIso(value);
      return typeof value === 'string' ? localDateTime(value) : '';
    case 'object':
      return JSON.stringify(value, null, 2);
    case 'duration':
      return typeof value === 'number' ? duration(value) : '';
    default:
      return String(value);
  }
}

/** An ISO date-time as an <input type=datetime-local> wants it: in the browser's time zone, as
 * fromField reads it back (the ISO text's own UTC digits would shift it by the zone's offset). */
function localDateTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** A form field's text as the value the API takes; throws an Error naming the problem. */
export function fromField(a: AttributeInfo, text: string): Json {
  const t = text.trim();
  switch (a.type) {
    case 'bool':
      return t === '' ? null : t === 'true';
    case 'byte': case 'word': case 'short': case 'long': case 'long64': case 'integer': case 'number': case 'float': {
      if (t === '') return null;
      const n = Number(t);
      if (!Number.isFinite(n)) throw new Error(`${a.name}: "${t}" is not a number`);
      if (a.type !== 'number' && a.type !== 'float' && !Number.isInteger(n)) throw new Error(`${a.name}: "${t}" is not a whole number`);
      return n;
    }
    case 'date':
      if (t === '') return null;
      if (a.simpleDate) return isoToSimpleDate(t);
      return new Date(t).toISOString();
    case 'duration': {
      if (t === '') return null;
      const m = /^(\d+):(\d{1,2})(?::(\d{1,2}))?$/.exec(t);
      if (!m) throw new Error(`${a.name}: write a duration as h:mm:ss`);
      return ((Number(m[1]) * 60 + Number(m[2])) * 60 + Number(m[3] ?? 0)) * 1000;
    }
    case 'object':
      if (t === '') return null;
      try {
        return JSON.parse(t) as Json;
      } catch (e) {
        throw new Error(`${a.name}: not JSON (${(e as Error).message})`);
      }
    default:
      return text;
  }
}
