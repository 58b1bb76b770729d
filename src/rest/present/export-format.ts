// The text of an export ($format=csv or ndjson, issue 18): which columns it holds (values the
// session may read, resolved by the projection every read uses), each value as text (CSV per RFC
// 4180, one JSON object a line for NDJSON), and the Readable that writes it a chunk of rows at a
// time, reading the next chunk only when the client has taken the last (backpressure), and no
// more once the client is gone. See docs/decisions.md, "Export over HTTP (issue 18)".

import { AsyncResource } from 'node:async_hooks';
import { Readable } from 'node:stream';
import { PLAIN, readableBy } from '../../datastore/index.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type { AliasAttribute, DataClassModel, StorageAttribute } from '../../model/types.js';
import type { RowColumnSpec } from '../../query/plan.js';
import type { Dialect } from '../../sql/dialect.js';
import type { Shape } from '../plan/action.js';
import { projectionFor } from './present.js';
import type { Scope } from '../scope/scope.js';

export type ExportFormat = 'csv' | 'ndjson';

/** The answer's headers: its type, and a download named after the dataclass. */
export function exportHeaders(format: ExportFormat, dc: DataClassModel): Record<string, string> {
  return {
    'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
    // (a dataclass's name is an identifier: nothing in it needs escaping inside the quotes)
    'content-disposition': `attachment; filename="${dc.name}.${format}"`,
  };
}

/** One column: its name, what the statement selects for it, and its value as an export writes it. */
export interface ExportColumn {
  readonly name: string;
  readonly spec: RowColumnSpec;
  /** the value of the column in a row, as exported: null, a string, a number, a boolean, or an object (written as JSON) */
  readonly value: (raw: unknown) => unknown;
}

/**
 * The columns of an export of `dc`: without $attributes, every storage attribute the session may
 * read but pictures and blobs (bytes, not values); with it, the attributes it names in its order —
 * storage attributes and aliases to one value. A relation, a picture or blob, a calculated
 * attribute or an alias to several values is refused, named; so is an attribute the session may
 * not read (a read leaves it out without a word: an export's header would then lie).
 */
export function exportColumns(scope: Scope, dc: DataClassModel, shape: Shape, dialect: Dialect): ExportColumn[] {
  const named = shape.attributes?.filter((a) => a !== '*');
  // resolved by the projection of every read: unknown names answered alike, unreadable ones left out
  const projection = projectionFor(dc, { attributes: named && named.length > 0 ? named : undefined, asArray: false }, scope);
  if (!named || named.length === 0) {
    const columns: ExportColumn[] = [];
    for (const a of projection.attributes) {
      if (a.kind === 'value' && a.attr.kind === 'storage' && a.attr.type !== 'image' && a.attr.type !== 'blob') columns.push(columnOf(a.attr, a.attr, dialect));
    }
    return columns;
  }
  const projected = new Map(projection.attributes.map((a) => [a.attr.name, a]));
  const columns: ExportColumn[] = [];
  const seen = new Set<string>();
  for (const path of named) {
    const name = path.split('.')[0];
    if (seen.has(name)) continue;
    seen.add(name);
    const a = projected.get(name);
    const attr = dc.attributesByName.get(name);
    if (!a || !attr) {
      const denied = attr ? scope.visible.denied?.(attr) : undefined;
      throw denied ?? new DatasetError('UNKNOWN_ATTRIBUTE', `${dc.name}.${name} cannot be exported`);
    }
    const refuse = (why: string) => new DatasetError('INVALID_OPTION', `$attributes: '${path}' ${why}; an export holds one value per column (a relation's key or a related value: name an alias, or the foreign key's attribute)`);
    if (a.kind !== 'value') throw refuse(a.kind === 'list' ? 'is an alias to several values' : 'is a relation');
    if (path !== name) throw refuse(`goes inside '${name}'`);
    if (a.attr.kind === 'calculated') throw refuse('is a calculated attribute (computed in code for each entity: not exported)');
    if (a.attr.kind === 'alias') {
      // an alias reads through its steps: each must be readable (the projection checks the alias
      // alone, so Employee.employerRevenues showed a Company.revenues its session may not read)
      const readable = readableBy(scope.access.grants);
      const hidden = a.attr.steps.find((step) => !readable(step));
      if (hidden) throw readable.denied?.(hidden) ?? new DatasetError('UNKNOWN_ATTRIBUTE', `${dc.name}.${name} cannot be exported`);
    }
    const target = a.attr.kind === 'alias' ? a.attr.steps[a.attr.steps.length - 1] : a.attr;
    if (target.kind !== 'storage') throw refuse('is no value');
    if (target.type === 'image' || target.type === 'blob') throw refuse(`is ${target.type === 'image' ? 'a picture' : 'a blob'} (its bytes are read at /rest/${dc.name}({key})/${name})`);
    columns.push(columnOf(a.attr, target, dialect));
  }
  return columns;
}

function columnOf(attr: StorageAttribute | AliasAttribute, target: StorageAttribute, dialect: Dialect): ExportColumn {
  const spec: RowColumnSpec = attr.kind === 'alias' ? { kind: 'alias', attr } : { kind: 'storage', attr };
  const { type, dateOnly } = target;
  if (PLAIN.has(type)) return { name: attr.name, spec, value: (raw) => raw ?? null };
  return {
    name: attr.name,
    spec,
    value(raw) {
      if (raw === null || raw === undefined) return null;
      const v = dialect.types.decode(type, raw, dateOnly);
      if (v instanceof Date) {
        // ISO 8601: a date alone as YYYY-MM-DD (stored at midnight UTC), else with its time in UTC
        if (Number.isNaN(v.getTime())) return String(raw);
        return dateOnly ? v.toISOString().slice(0, 10) : v.toISOString();
      }
      return typeof v === 'bigint' ? Number(v) : v;
    },
  };
}

/** A CSV field (RFC 4180 §2): quoted when it holds a comma, a quote, CR or LF, its quotes doubled; null as nothing. */
export function csvField(v: unknown): string {
  let s: string;
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') s = v;
  else if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  else if (typeof v === 'boolean') return v ? 'true' : 'false';
  else s = JSON.stringify(v);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** RFC 4180's line break. */
const CRLF = '\r\n';

/**
 * The first line of a CSV export: the columns' names. A file that starts with the letters `ID`
 * (most exports: a key named ID comes first) is taken by Excel for a SYLK file and refused as
 * one ("SYLK: file format is not valid"); that first name is quoted, which every CSV reader
 * (`dataset-rest import` too) reads as the same name.
 */
export function csvHeader(columns: readonly ExportColumn[]): string {
  const names = columns.map((c) => csvField(c.name));
  if (names.length > 0 && names[0].startsWith('ID')) names[0] = `"${names[0]}"`;
  return names.join(',') + CRLF;
}

/** Rows as text: CSV lines, or one JSON object a line. */
export function rowsText(format: ExportFormat, columns: readonly ExportColumn[], rows: readonly (readonly unknown[])[]): string {
  let out = '';
  const n = columns.length;
  if (format === 'csv') {
    for (const row of rows) {
      let line = '';
      for (let i = 0; i < n; i++) line += (i === 0 ? '' : ',') + csvField(columns[i].value(row[i]));
      out += line + CRLF;
    }
    return out;
  }
  for (const row of rows) {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) {
      const v = columns[i].value(row[i]);
      o[columns[i].name] = typeof v === 'number' && !Number.isFinite(v) ? null : v;
    }
    out += JSON.stringify(o) + '\n';
  }
  return out;
}

/** Exports streaming now, and chunks of rows read after their first, in this process. */
let open = 0;
let chunks = 0;

/** How many exports are streaming now (a client gone ends its export at once), and how many chunks they read after their first (what a client that stops reading stops). */
export function exportStats(): { readonly open: number; readonly chunks: number } {
  return { open, chunks };
}

/**
 * The body of an export: `first` (the header and the first chunk, read before the answer's status
 * was decided), then what `more` gives, each call when the client has taken the last, until it
 * gives null. An error of `more` destroys the stream: the answer has started, so the client sees
 * a body cut short (no closing chunk), never an error in the text. A client gone destroys it too,
 * and `more` is not called again. `more` runs in the async context the stream was made in (the
 * request's caller).
 */
export class ExportStream extends Readable {
  #first: string | undefined;
  readonly #more: () => Promise<string | null>;
  #reading = false;
  #counted = true;

  constructor(first: string, more: () => Promise<string | null>) {
    super();
    this.#first = first;
    this.#more = AsyncResource.bind(more);
    open++;
  }

  override _read(): void {
    if (this.#first !== undefined) {
      const first = this.#first;
      this.#first = undefined;
      if (first !== '') {
        this.push(first);
        return;
      }
    }
    if (this.#reading) return;
    this.#reading = true;
    chunks++;
    this.#more().then((text) => {
      this.#reading = false;
      if (this.destroyed) return;
      this.push(text);
    }, (e: unknown) => this.destroy(e instanceof Error ? e : new Error(String(e))));
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.#counted) {
      this.#counted = false;
      open--;
    }
    callback(error);
  }
}
