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

/** `file`, or stdin for '-'; a missing file or a folder is a UsageError. */
export function openInput(file: string): Input {
  let stream: Readable;
  let size: number | undefined;
  if (file === '-') stream = process.stdin;
  else {
    if (!existsSync(file)) throw new UsageError(`${file}: no such file`);
    const stat = statSync(file);
    if (!stat.isFile()) throw new UsageError(`${file} is not a file`);
    size = stat.size;
    stream = createReadStream(file, { highWaterMark: 1 << 20 });
  }
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

/** CSV: RFC 4180 through csv-parse (a BOM dropped, empty lines skipped); an empty unquoted or quoted field is null. */
function readCsv(stream: Readable, queue: RecordQueue): void {
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
