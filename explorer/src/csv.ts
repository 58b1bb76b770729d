// CSV as the server's export writes it and its `import` command reads it (RFC 4180: a header row,
// fields split on commas, quoted ones with their quotes doubled): the records of a file, and a
// record as the entity a REST save takes — each column an attribute of the dataclass, its text
// read as the attribute's type (an empty field is null; dates as the export writes them, ISO 8601).

import type { Json, JsonObject } from './api';
import { isEditable, type AttributeInfo, type DataClassInfo } from './catalog';
import { isoToSimpleDate } from './values';

/** The records of a CSV text (a byte-order mark and a last line ending are no record). */
export function parseCsv(input: string): string[][] {
  const text = input.startsWith('\uFEFF') ? input.slice(1) : input;
  const records: string[][] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let at = 0;
  while (at < text.length) {
    const c = text[at];
    if (quoted) {
      if (c === '"') {
        if (text[at + 1] === '"') {
          field += '"';
          at++;
        } else quoted = false;
      } else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      fields.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[at + 1] === '\n') at++;
      fields.push(field);
      records.push(fields);
      fields = [];
      field = '';
    } else field += c;
    at++;
  }
  if (quoted) throw new Error('the file ends inside a quoted field');
  if (field !== '' || fields.length > 0) {
    fields.push(field);
    records.push(fields);
  }
  return records;
}

const INTEGER = new Set(['byte', 'word', 'short', 'long', 'long64', 'integer']);
const NUMBER = new Set([...INTEGER, 'number', 'float']);

/** A field's text as the value a save takes for `a`; throws an Error naming the column. */
export function csvValue(a: AttributeInfo, text: string): Json {
  if (text === '') return null;
  if (NUMBER.has(a.type) || a.type === 'duration') {
    const n = Number(text);
    if (!Number.isFinite(n)) throw new Error(`${a.name}: "${text}" is not a number`);
    return n;
  }
  if (a.type === 'bool') {
    if (text === 'true' || text === '1') return true;
    if (text === 'false' || text === '0') return false;
    throw new Error(`${a.name}: "${text}" is not true or false`);
  }
  if (a.type === 'date' && a.simpleDate) return isoToSimpleDate(text);
  if (a.type === 'object') {
    try {
      return JSON.parse(text) as Json;
    } catch {
      throw new Error(`${a.name}: not JSON`);
    }
  }
  return text;
}

export interface CsvImport {
  /** the entities to create, one per record */
  readonly entities: JsonObject[];
  /** header names that are no attribute this import can give (read-only, unknown) */
  readonly skipped: string[];
}

/**
 * The entities a CSV file describes for `dc`: its header names attributes (storage ones, and N→1
 * relations given by key); the key column too, unless `newKeys` (the server then gives new keys).
 */
export function entitiesOfCsv(dc: DataClassInfo, text: string, newKeys: boolean): CsvImport {
  const [header, ...rows] = parseCsv(text);
  if (!header) throw new Error('the file is empty');
  const key = dc.key[0]?.name;
  const columns = header.map((name) => {
    const a = dc.attributes.find((x) => x.name === name);
    if (!a) return undefined;
    if (a.name === key) return newKeys ? undefined : a;
    return a.kind === 'storage' && isEditable(dc, a) ? a : a.kind === 'relatedEntity' ? a : undefined;
  });
  const skipped = header.filter((_, i) => columns[i] === undefined && !(header[i] === key && newKeys));
  const entities = rows.filter((r) => !(r.length === 1 && r[0] === '')).map((record, line) => {
    const out: JsonObject = {};
    columns.forEach((a, i) => {
      if (!a) return;
      const cell = record[i] ?? '';
      try {
        out[a.name] = a.kind === 'relatedEntity' ? (cell === '' ? null : { __KEY: cell }) : csvValue(a, cell);
      } catch (e) {
        throw new Error(`line ${line + 2}: ${(e as Error).message}`);
      }
    });
    return out;
  });
  return { entities, skipped };
}
