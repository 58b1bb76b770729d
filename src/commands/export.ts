// dataset-rest export: writes the entities of a dataclass — all of them, or those a query selects,
// in an order — as CSV, NDJSON or one JSON array, to stdout or a file, as the database's owner (no
// permissions apply). It is the HTTP export's reading and writing (datastore/reads/export-read.ts: a
// chunk of rows per statement, keyset reads in key order; rest/present/export-format.ts: the columns and
// their text), each chunk read when the output has taken the last: memory stays flat whatever the
// number of entities. A CSV it writes is what `dataset-rest import` reads back.

import { once } from 'node:events';
import { createWriteStream, existsSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { coreOf } from '../datastore/datastore.js';
import { selectionChunks } from '../datastore/reads/export-read.js';
import { isDatasetError } from '../errors/dataset-error.js';
import { EVERY_ATTRIBUTE } from '../model/types.js';
import { csvHeader, exportColumns, rowsText, type ExportColumn } from '../rest/present/export-format.js';
import type { Scope } from '../rest/scope/scope.js';
import { databaseTarget } from '../storage/open.js';
import { databaseInWords, databaseOf, dataClassNamed, dataCommand, io, oneOf, openForCommand, parseFlags, projectDir, runCommand, say, UsageError, type ProjectFlags } from './common.js';

const FORMATS = ['csv', 'ndjson', 'json'] as const;
type Format = (typeof FORMATS)[number];

interface ExportFlags extends ProjectFlags {
  filter?: string;
  params?: string;
  orderby?: string;
  attributes?: string;
  format?: Format;
  output?: string;
}

function command() {
  return dataCommand('export', 'Writes the entities of a dataclass as CSV, NDJSON or a JSON array, as its owner (no permissions apply).')
    .argument('<dataclass>', 'the dataclass to export')
    .option('--filter <query>', 'only the entities this query selects (the grammar of $filter and ds.X.query(): salary > 50000 and employer.name = acme@)')
    .option('--params <json>', 'the values of the query\'s placeholders :1, :2 … as a JSON array')
    .option('--orderby <order>', 'the order (as $orderby: "lastName desc, firstName"); default: by key')
    .option('--attributes <list>', 'the columns, comma-separated, in this order (default: every storage attribute but pictures and blobs; relations as their foreign keys)')
    .option('--format <format>', 'csv, ndjson or json (default: from --output\'s name, else csv)', oneOf(FORMATS))
    .option('--output <file>', 'the file to write (default: stdout)');
}

export async function main(args: readonly string[]): Promise<number> {
  const program = command();
  const code = parseFlags(program, args);
  if (code !== undefined) return code;
  const flags = program.opts<ExportFlags>();
  const [dataClassName] = program.processedArgs as [string];
  return runCommand(async (opened) => {
    const format = flags.format ?? formatOfName(flags.output);
    const params = paramsOf(flags.params);
    requireDatabase(flags);
    say(`export: from ${databaseInWords(flags)}`);
    const ds = await openForCommand(flags);
    opened(ds);
    const dataClass = dataClassNamed(ds, dataClassName);
    const dialect = coreOf(ds).storage.dialect;
    let columns: ExportColumn[];
    let selection = dataClass.all();
    try {
      // the owner sees every attribute: the columns are resolved as the HTTP export resolves them for a session that may read all
      const owner = { visible: EVERY_ATTRIBUTE } as unknown as Scope;
      columns = exportColumns(owner, dataClass.model, { attributes: flags.attributes?.split(',').map((a) => a.trim()), asArray: false }, dialect);
      if (flags.filter !== undefined) selection = selection.query(flags.filter, ...params);
      if (flags.orderby !== undefined) selection = selection.orderBy(flags.orderby);
    } catch (e) {
      if (isDatasetError(e)) throw new UsageError(e.message);
      throw e;
    }
    const chunks = selectionChunks(selection, columns.map((c) => c.spec), { skip: 0 });
    // the first chunk before the output is opened: a query the database refuses leaves no file behind
    let rows = await firstChunk(() => chunks.next());
    const out: Writable = flags.output === undefined ? io.stdout : await openOutput(flags.output);
    const started = performance.now();
    let count = 0;
    let gone: Error | undefined;
    out.on('error', (e: Error) => (gone = e));
    const write = async (text: string) => {
      if (gone || text === '') return;
      if (out.write(text)) return;
      // (a stream that failed already says so no more: waiting for it would wait forever)
      if (out.destroyed) {
        gone ??= (out as Writable & { errored?: Error | null }).errored ?? new Error('the output was closed');
        return;
      }
      // (the next chunk is read once the output has taken this one, or failed)
      await new Promise<void>((resolve) => {
        const done = () => {
          out.off('drain', done);
          out.off('error', done);
          resolve();
        };
        out.on('drain', done);
        out.on('error', done);
      });
    };
    try {
      if (format === 'csv') await write(csvHeader(columns));
      if (format === 'json') await write('[');
      while (rows !== null && !gone) {
        const text = rowsText(format === 'csv' ? 'csv' : 'ndjson', columns, rows);
        // a JSON array: the NDJSON lines (JSON.stringify leaves no raw line break inside one) joined by commas
        await write(format === 'json' ? `${count === 0 ? '\n' : ',\n'}${text.slice(0, -1).replaceAll('\n', ',\n')}` : text);
        count += rows.length;
        rows = await chunks.next();
      }
      if (format === 'json') await write(count === 0 ? ']\n' : '\n]\n');
    } catch (e) {
      say(`export: stopped after ${count} entities: ${(e as Error).message}${flags.output ? ` (${flags.output} is incomplete)` : ''}`);
      await close(out);
      return 1;
    }
    await close(out);
    if (gone) {
      // a reader that went away (`| head`) is not a failure of the export; another write error is
      if ((gone as NodeJS.ErrnoException).code === 'EPIPE') return 0;
      say(`export: cannot write ${flags.output ?? 'stdout'}: ${gone.message}`);
      return 1;
    }
    if (flags.output !== undefined) {
      const ms = performance.now() - started;
      say(`export: ${count.toLocaleString('en')} ${dataClass.model.name} entities written to ${flags.output} in ${(ms / 1000).toFixed(2)} s`);
    }
    return 0;
  });
}

/**
 * An export reads a database, it never makes one: a SQLite file that is not there (a mistyped
 * --db) would otherwise be created, seeded by the project, and exported as if it were the data.
 */
function requireDatabase(flags: ProjectFlags): void {
  const db = databaseOf(flags);
  let target;
  try {
    target = databaseTarget(db ?? join(resolve(projectDir(flags)), 'data', 'data.sqlite'));
  } catch {
    return; // (a URL it cannot use: said when the project is opened)
  }
  if (target.engine === 'sqlite' && target.file !== ':memory:' && !existsSync(target.file)) {
    throw new UsageError(`there is no database at ${resolve(target.file)}: name the project's database with --db (a server's start creates a new one)`);
  }
}

/** The output file, open: one that cannot be made (no such folder, no right to write) is refused before anything is written. */
async function openOutput(file: string): Promise<Writable> {
  const out = createWriteStream(file);
  try {
    await once(out, 'open');
  } catch (e) {
    throw new UsageError(`--output: cannot write ${file}: ${(e as Error).message}`);
  }
  return out;
}

/** The first chunk: a refusal there (a query naming an unknown attribute) is bad usage, said before any output. */
async function firstChunk<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (isDatasetError(e)) throw new UsageError(e.message);
    throw e;
  }
}

function formatOfName(output: string | undefined): Format {
  const ext = output === undefined ? '' : extname(output).slice(1).toLowerCase();
  if (ext === 'ndjson' || ext === 'jsonl') return 'ndjson';
  return ext === 'json' ? 'json' : 'csv';
}

function paramsOf(text: string | undefined): unknown[] {
  if (text === undefined) return [];
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--params: not JSON (${(e as Error).message})`);
  }
  if (!Array.isArray(value)) throw new UsageError('--params: a JSON array of the values of :1, :2 …');
  return value;
}

/** Ends the output (stdout is flushed, never closed) and waits until what was written is out. */
async function close(out: Writable): Promise<void> {
  if (out === io.stdout) {
    // (stdout that failed — a full disk, a reader gone — emits no drain: nothing to wait for)
    if (out.destroyed) return;
    await new Promise<void>((resolve) => {
      if (out.write('')) return resolve();
      out.once('drain', resolve);
      out.once('error', () => resolve());
    });
    return;
  }
  out.end();
  // (finished() answers at once for a stream already closed by an error: once('close') waited forever)
  await finished(out).catch(() => undefined);
}
