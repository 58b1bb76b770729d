// The records of an import file, read as a stream: CSV (csv-parse; the first record is the
// header), NDJSON (one JSON object a line) or one JSON array of objects (its elements cut out at
// the top level and parsed one at a time). Each record carries where it is in the file — its first
// line, or its index in the array — for the messages about it. Reading is pulled by the importer a
// batch at a time: the file is paused while the records read ahead exceed a bound, so memory stays
// flat whatever the file's size.

import { createReadStream, existsSync, statSync } from 'node:fs';
import { extname } from 'node:path';
import { createInterface } from 'node:readline';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { UsageError } from './common.js';

export const IMPORT_FORMATS = ['csv', 'json', 'ndjson'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** One record: where it is, and its fields (CSV: texts, null for an empty field), its object (JSON), or why it could not be read. */
export interface SourceRecord {
  /** "line 12", "index 3" */
  readonly at: string;
  readonly fields?: readonly (string | null)[];
  readonly object?: Record<string, unknown>;
  readonly error?: string;
}

/** The file to read: its stream (flowing once recordsOf() reads it), its size when known, and the bytes read so far. */
export class Input {
  /** bytes read so far (counted by recordsOf: a listener here would start the stream before anyone reads it) */
  bytesRead = 0;
  constructor(readonly stream: Readable, readonly size: number | undefined) {}
}

/** The size of `file` (undefined for stdin, '-'); a missing file or a folder is a UsageError. */
export function inputSize(file: string): number | undefined {
  if (file === '-') return undefined;
  if (!existsSync(file)) throw new UsageError(`${file}: no such file`);
  const stat = statSync(file);
  if (!stat.isFile()) throw new UsageError(`${file} is not a file`);
  return stat.size;
}

/** `file`, or stdin for '-'; a missing file or a folder is a UsageError. */
export function openInput(file: string): Input {
  const size = inputSize(file);
  const stream: Readable = file === '-' ? process.stdin : createReadStream(file, { highWaterMark: 1 << 20 });
  return new Input(stream, size);
}

/** The format --format names, else the one the file's extension says; a UsageError when neither tells. */
export function formatOf(file: string, given: ImportFormat | undefined): ImportFormat {
  if (given) return given;
  const ext = extname(file).slice(1).toLowerCase();
  if (ext === 'csv' || ext === 'json' || ext === 'ndjson') return ext;
  if (ext === 'jsonl') return 'ndjson';
  throw new UsageError(`${file === '-' ? 'stdin' : file}: cannot tell the format from the name: give --format csv, json or ndjson`);
}

/** Records read ahead, waiting for the importer; the file paused while there are `high` or more. */
class RecordQueue {
  #items: SourceRecord[] = [];
  #ended = false;
  #error: Error | undefined;
  #wake: (() => void) | undefined;

  constructor(readonly input: Readable, readonly high: number) {}

  push(record: SourceRecord): void {
    this.#items.push(record);
    if (this.#items.length >= this.high) this.input.pause();
    this.#signal();
  }

  end(): void {
    this.#ended = true;
    this.#signal();
  }

  fail(error: Error): void {
    this.#error ??= error;
    this.#signal();
  }

  #signal(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /** Up to `max` records (fewer only at the end), or null once every record was taken; a read error is thrown once the records before it are taken. */
  async take(max: number): Promise<SourceRecord[] | null> {
    while (this.#items.length < max && !this.#ended && !this.#error) {
      this.input.resume();
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
    if (this.#items.length === 0) {
      if (this.#error) throw this.#error;
      return null;
    }
    const out = this.#items.length <= max ? this.#items : this.#items.slice(0, max);
    this.#items = this.#items.length <= max ? [] : this.#items.slice(max);
    // read on while the caller writes what it took (the file's next chunk comes from a thread)
    if (this.#items.length < this.high && !this.#ended) this.input.resume();
    return out;
  }
}

/** A source of records, taken a batch at a time. */
export interface RecordSource {
  take(max: number): Promise<SourceRecord[] | null>;
}

/** The records of `input` in `format`; `readAhead`: records read before the importer takes them, at most (about). */
export function recordsOf(input: Input, format: ImportFormat, readAhead: number): RecordSource {
  const queue = new RecordQueue(input.stream, readAhead);
  input.stream.on('error', (e: Error) => queue.fail(e));
  input.stream.on('data', (chunk: Buffer) => (input.bytesRead += chunk.length));
  if (format === 'csv') readCsv(input.stream, queue);
  else if (format === 'ndjson') readNdjson(input.stream, queue);
  else readJsonArray(input.stream, queue);
  input.stream.pause();
  return queue;
}

/**
 * CSV: RFC 4180 (a BOM dropped, empty lines skipped; an empty unquoted or quoted field is null),
 * lines ending in LF or CRLF, read by CsvReader — several times faster than csv-parse, whose
 * parsing and garbage were a third of an import's time; a file whose lines end in a lone CR (old
 * Macs) goes through csv-parse, which tells the line ends apart.
 */
function readCsv(stream: Readable, queue: RecordQueue): void {
  const reader = new CsvReader(queue, () => stream.destroy());
  const decoder = new StringDecoder('utf8');
  let first = true;
  const onData = (chunk: Buffer) => {
    if (first) {
      first = false;
      if (loneCarriageReturn(chunk)) {
        stream.off('data', onData);
        stream.off('end', onEnd);
        return readCsvParse(stream, queue, chunk);
      }
    }
    reader.feed(decoder.write(chunk), false);
  };
  const onEnd = () => reader.feed(decoder.end(), true);
  stream.on('data', onData);
  stream.on('end', onEnd);
}

/** Does a CR not followed by LF come before the first LF (lines ending in CR alone)? */
function loneCarriageReturn(chunk: Buffer): boolean {
  const lf = chunk.indexOf(0x0a);
  for (let cr = chunk.indexOf(0x0d); cr >= 0 && (lf < 0 || cr < lf); cr = chunk.indexOf(0x0d, cr + 1)) {
    if (cr + 1 < chunk.length && chunk[cr + 1] !== 0x0a) return true;
  }
  return false;
}

/** RFC 4180 records from text fed a piece at a time; a record is pushed once its end is read. */
export class CsvReader {
  /** text not parsed yet: the beginning of a record whose end is still to come */
  #rest = '';
  /** the line #rest begins on */
  #line = 1;
  #started = false;
  #failed = false;

  constructor(readonly queue: Pick<RecordQueue, 'push' | 'end' | 'fail'>, readonly onFail: () => void) {}

  /** Parses `text` (after what came before); `last`: the end of the file. */
  feed(text: string, last: boolean): void {
    if (this.#failed) return;
    if (!this.#started && text.length > 0) {
      this.#started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const rest = this.#rest.length === 0 ? text : this.#rest + text;
    let at = 0;
    // the next quote at or after `at` (rest.length: none), looked for again only once passed
    let quote = -1;
    while (at < rest.length) {
      const lf = rest.indexOf('\n', at);
      if (lf < 0 && !last) break;
      const end = lf < 0 ? rest.length : lf;
      const lineEnd = end > at && rest.charCodeAt(end - 1) === 0x0d ? end - 1 : end;
      if (lineEnd === at) {
        // an empty line: skipped, and counted
        this.#line++;
        at = end + 1;
        continue;
      }
      if (quote < at) {
        quote = rest.indexOf('"', at);
        if (quote < 0) quote = rest.length;
      }
      if (quote >= lineEnd) {
        // no quote on the line: its fields are what the commas separate
        const fields: (string | null)[] = rest.slice(at, lineEnd).split(',');
        for (let i = 0; i < fields.length; i++) if (fields[i] === '') fields[i] = null;
        this.queue.push({ at: `line ${this.#line}`, fields });
        this.#line++;
        at = end + 1;
        continue;
      }
      const record = quotedRecord(rest, at, last);
      if (record === undefined) break; // its end is in text still to come
      if (typeof record === 'string') return this.#fail(`line ${this.#line}: ${record}`);
      this.queue.push({ at: `line ${this.#line}`, fields: record.fields });
      this.#line += linesIn(rest, at, record.next);
      at = record.next;
    }
    this.#rest = at >= rest.length ? '' : rest.slice(at);
    if (last) {
      if (this.#rest !== '') return this.#fail(`line ${this.#line}: a quoted field is not closed at the end of the file`);
      this.queue.end();
    }
  }

  #fail(message: string): void {
    this.#failed = true;
    this.queue.fail(new Error(message));
    this.onFail();
  }
}

/** Line ends in text[from, to): what a record spanning them moves the line count by. */
function linesIn(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = text.indexOf('\n', from); i >= 0 && i < to; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/**
 * The record that begins at text[start] and holds a quote: its fields and where the next record
 * begins; undefined if its end is not in `text` yet (and `last` is false); a string saying what
 * is wrong with it (a quote inside an unquoted field, something other than a comma or the line's
 * end after a closing quote, a quote not closed at the end of the file).
 */
function quotedRecord(text: string, start: number, last: boolean): { fields: (string | null)[]; next: number } | string | undefined {
  const fields: (string | null)[] = [];
  let i = start;
  for (;;) {
    let value: string;
    if (text.charCodeAt(i) === 0x22 /* " */) {
      value = '';
      let from = i + 1;
      for (;;) {
        const q = text.indexOf('"', from);
        if (q < 0) return last ? 'a quoted field is not closed at the end of the file' : undefined;
        if (q + 1 >= text.length && !last) return undefined; // a doubled quote, maybe
        if (text.charCodeAt(q + 1) === 0x22) {
          value += text.slice(from, q + 1);
          from = q + 2;
          continue;
        }
        value += text.slice(from, q);
        i = q + 1;
        break;
      }
    } else {
      let end = i;
      while (end < text.length) {
        const c = text.charCodeAt(end);
        if (c === 0x2c /* , */ || c === 0x0a || (c === 0x0d && text.charCodeAt(end + 1) === 0x0a)) break;
        if (c === 0x22) return `a quote inside a field that does not begin with one (quote the whole field, and double the quotes in it)`;
        end++;
      }
      if (end >= text.length && !last) return undefined;
      value = text.slice(i, end);
      i = end;
    }
    fields.push(value === '' ? null : value);
    if (i >= text.length) return last ? { fields, next: i } : undefined;
    const c = text.charCodeAt(i);
    if (c === 0x2c) {
      i++;
      continue;
    }
    if (c === 0x0a) return { fields, next: i + 1 };
    if (c === 0x0d) {
      if (i + 1 >= text.length) return last ? { fields, next: i + 1 } : undefined;
      if (text.charCodeAt(i + 1) === 0x0a) return { fields, next: i + 2 };
    }
    return `${JSON.stringify(text[i])} after a closing quote, where a comma or the end of the line was expected`;
  }
}

/** CSV through csv-parse (a BOM dropped, empty lines skipped); an empty unquoted or quoted field is null. `first`: the chunk read already. */
function readCsvParse(stream: Readable, queue: RecordQueue, first: Buffer): void {
  // (no `cast` nor `info` option: both build objects for every field or record, and made parsing
  // ten times slower; the line numbers come from the parser's counters as each record is pushed)
  const parser = parse({ bom: true, skip_empty_lines: true, relax_column_count: true });
  let lastLine = 0;
  let lastEmpty = 0;
  parser.on('data', (fields: string[]) => {
    const { lines, empty_lines: empty } = parser.info;
    const line = lastLine + 1 + (empty - lastEmpty);
    lastLine = lines;
    lastEmpty = empty;
    for (let i = 0; i < fields.length; i++) if (fields[i] === '') (fields as (string | null)[])[i] = null;
    queue.push({ at: `line ${line}`, fields });
  });
  parser.on('error', (e: Error & { lines?: number }) => queue.fail(new Error(`line ${e.lines ?? lastLine + 1}: ${e.message}`)));
  parser.on('end', () => queue.end());
  parser.write(first);
  stream.on('data', (chunk: Buffer) => parser.write(chunk));
  stream.on('end', () => parser.end());
}

/** NDJSON: each line not blank is one JSON object. */
function readNdjson(stream: Readable, queue: RecordQueue): void {
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let n = 0;
  lines.on('line', (text) => {
    n++;
    if (text.trim() === '') return;
    queue.push(objectRecord(`line ${n}`, text));
  });
  lines.on('close', () => queue.end());
}

/** A record from the JSON text of one object. */
function objectRecord(at: string, text: string): SourceRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { at, error: `not JSON: ${(e as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { at, error: `expected a JSON object, not ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}` };
  return { at, object: value as Record<string, unknown> };
}

/**
 * One JSON array: its elements cut out where a comma or the closing bracket ends them at the top
 * level (strings and nesting followed, so that a comma inside either does not count), each parsed
 * alone. Whatever is not inside the one top-level array is an error of the file.
 */
function readJsonArray(stream: Readable, queue: RecordQueue): void {
  const decoder = new StringDecoder('utf8');
  let state: 'before' | 'inside' | 'after' = 'before';
  let depth = 0;
  let inString = false;
  let escaped = false;
  let element = '';
  let index = 0;
  const fail = (why: string) => {
    queue.fail(new Error(`not a JSON array of objects: ${why}`));
    stream.destroy();
  };
  const finishElement = () => {
    if (element.trim() !== '') queue.push(objectRecord(`index ${index++}`, element));
    element = '';
  };
  const feed = (text: string) => {
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (state === 'before') {
        if (c === 0x5b /* [ */) {
          state = 'inside';
          from = i + 1;
        } else if (!isSpace(c) && c !== 0xfeff) return fail('the file does not begin with [');
        continue;
      }
      if (state === 'after') {
        if (!isSpace(c)) return fail('something follows the closing ]');
        continue;
      }
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c /* \ */) escaped = true;
        else if (c === 0x22 /* " */) inString = false;
        continue;
      }
      if (c === 0x22) inString = true;
      else if (c === 0x7b /* { */ || c === 0x5b) depth++;
      else if ((c === 0x7d /* } */ || c === 0x5d /* ] */) && depth > 0) depth--;
      else if (depth === 0 && (c === 0x2c /* , */ || c === 0x5d)) {
        element += text.slice(from, i);
        from = i + 1;
        finishElement();
        if (c === 0x5d) state = 'after';
      }
    }
    if (state === 'inside') element += text.slice(from);
  };
  stream.on('data', (chunk: Buffer) => feed(decoder.write(chunk)));
  stream.on('end', () => {
    feed(decoder.end());
    if (state === 'before') return fail('the file is empty');
    if (state === 'inside') return fail('the array is not closed (the file ends inside it)');
    queue.end();
  });
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
