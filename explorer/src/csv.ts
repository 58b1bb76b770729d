// CSV as the server's export writes it and its `import` command reads it (RFC 4180: a header row,
// fields split on commas, quoted ones with their quotes doubled): the records of a file, and a
// record as the entity a REST save takes — each column an attribute of the dataclass, its text
// read as the attribute's type (an empty field is null; dates as the export writes them, ISO 8601).

import type { Json, JsonObject } from './api';
import { isEditable, NUMBER_TYPES, type AttributeInfo, type DataClassInfo } from './catalog';
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


/** A field's text as the value a save takes for `a`; throws an Error naming the column. */
export function csvValue(a: AttributeInfo, text: string): Json {
  if (text === '') return null;
  if (NUMBER_TYPES.has(a.type) || a.type === 'duration') {
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
  /** each entity's line in the file, counting records (a blank line counts; a quoted line break does not) */
  readonly lines: number[];
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
  // (numbered before the blank records are left out, so that a line said is the file's)
  const kept = rows.map((record, i) => ({ record, line: i + 2 })).filter(({ record: r }) => !(r.length === 1 && r[0] === ''));
  const entities = kept.map(({ record, line }) => {
    const out: JsonObject = {};
    columns.forEach((a, i) => {
      if (!a) return;
      const cell = record[i] ?? '';
      try {
        out[a.name] = a.kind === 'relatedEntity' ? (cell === '' ? null : { __KEY: cell }) : csvValue(a, cell);
      } catch (e) {
        throw new Error(`line ${line}: ${(e as Error).message}`);
      }
    });
    return out;
  });
  return { entities, skipped, lines: kept.map((k) => k.line) };
}

/** What an import did: the entities saved, those refused (the first messages), and where it stopped, if it did. */
export interface ImportOutcome {
  readonly created: number;
  readonly refused: number;
  /** the first refusals, "line 7: …" */
  readonly messages: string[];
  /** a batch the server did not answer entity by entity (a 401, a 413, a 429, the network): nothing after it was sent */
  readonly stopped?: string;
}

/** refusals told at most (the count says the rest) */
const MESSAGES = 5;

/**
 * Sends `entities` in batches of `batch` (`send` answers each batch's `__ENTITIES`, in order, a
 * refused one with its `__ERROR`). A batch that fails as a whole stops the import, and the outcome
 * still counts what the batches before it saved: a person told only "error" would import the file
 * again, and those entities twice. `lines[i]`: entity i's line in the file.
 */
export async function importInBatches(
  entities: readonly JsonObject[],
  lines: readonly number[],
  batch: number,
  send: (entities: JsonObject[]) => Promise<readonly JsonObject[]>,
  describe: (error: unknown) => string,
): Promise<ImportOutcome> {
  let created = 0;
  let refused = 0;
  const messages: string[] = [];
  for (let i = 0; i < entities.length; i += batch) {
    let answers: readonly JsonObject[];
    try {
      answers = await send(entities.slice(i, i + batch));
    } catch (e) {
      return { created, refused, messages, stopped: `stopped at line ${lines[i]}, nothing sent from there: ${describe(e)}` };
    }
    answers.forEach((e, j) => {
      const items = e.__ERROR as { message: string }[] | undefined;
      if (items) {
        refused++;
        if (messages.length < MESSAGES) messages.push(`line ${lines[i + j]}: ${items.map((x) => x.message).join('; ')}`);
      } else created++;
    });
  }
  return { created, refused, messages };
}
