// dataset-rest import: fills a dataclass from a CSV (header row), NDJSON or JSON-array file, or
// stdin, through the datastore core, a batch of rows per transaction. Without user code to run
// (--no-events, or a dataclass without events, entity class or calculated set functions) the rows
// go through the core's bulk insert (datastore/import-writes.ts: a save's checks, multi-row
// statements); otherwise each is an entity saved with save(), its events running. A bad row is
// reported with its line (or array index) and the reason, and the others are imported; --atomic
// makes the file all-or-nothing. Exit code 0: every row imported; 1: some refused (or the file
// broke off); 2: nothing done (bad flags, an unknown dataclass or column, no such file).
// See docs/decisions.md, "Import and export from the command line".

import { coreOf, type DatastoreWithClasses } from '../datastore/datastore.js';
import type { DataClass } from '../datastore/dataclass.js';
import type { DataClassCore } from '../datastore/dataclass-core.js';
import { BulkInserter, type BulkRow } from '../datastore/import-writes.js';
import { isDatasetError } from '../errors/dataset-error.js';
import type { DataClassModel } from '../model/types.js';
import { dataClassNamed, dataCommand, io, oneOf, openForCommand, parseFlags, positiveInt, runCommand, say, seconds, UsageError, type ProjectFlags } from './common.js';
import { progressFor } from './import-progress.js';
import { formatOf, IMPORT_FORMATS, Input, openInput, recordsOf, type ImportFormat, type SourceRecord } from './import-read.js';
import { fromCsv, fromJson, resolveColumns, storageColumns, type ImportColumn } from './import-values.js';

const DEFAULT_BATCH_SIZE = 1000;

interface ImportFlags extends ProjectFlags {
  format?: ImportFormat;
  batchSize: number;
  events: boolean;
  atomic?: boolean;
  progressEvery: number;
}

function command() {
  return dataCommand('import', 'Imports a CSV (with a header row), NDJSON or JSON-array file into a dataclass, as its owner (no permissions apply).')
    .argument('<dataclass>', 'the dataclass to fill')
    .argument('<file>', "the file to read; '-' reads stdin")
    .option('--format <format>', 'csv, json or ndjson (default: from the file name)', oneOf(IMPORT_FORMATS))
    .option('--batch-size <n>', 'rows per transaction', positiveInt, DEFAULT_BATCH_SIZE)
    .option('--no-events', "run no user code: no entity events, no entity class constructor (rows are inserted in bulk)")
    .option('--atomic', 'all or nothing: one transaction for the whole file, stopped by the first bad row')
    .option('--progress-every <seconds>', 'without a terminal: seconds between two progress lines', seconds, 5)
    .addHelpText('after', `
Columns (CSV header, JSON properties) name storage attributes, or N→1 relations (their value is
the related entity's key, as {"__KEY": k} in JSON too). An empty CSV field is null; booleans are
true/false/1/0; objects are JSON text. Dates, numbers and uuids are read as a REST write reads them.
Exit code: 0 every row imported, 1 some refused, 2 nothing done (bad usage).`);
}

/** Where a row stopped an --atomic import. */
class AtomicStop extends Error {
  constructor(readonly at: string, readonly reason: string) {
    super(`${at}: ${reason}`);
  }
}

type Refuse = (at: string, reason: string) => void;

/** Writes a batch of records; resolves to the rows written. */
interface BatchWriter {
  write(records: readonly SourceRecord[], refuse: Refuse): Promise<number>;
}

export async function main(args: readonly string[]): Promise<number> {
  const program = command();
  const code = parseFlags(program, args);
  if (code !== undefined) return code;
  const flags = program.opts<ImportFlags>();
  const [dataClassName, file] = program.processedArgs as [string, string];
  return runCommand(async (opened) => {
    const format = formatOf(file, flags.format);
    const input = openInput(file);
    const ds = await openForCommand(flags);
    opened(ds);
    return importFile(ds, dataClassNamed(ds, dataClassName), input, format, flags, file === '-' ? 'stdin' : file);
  });
}

async function importFile(ds: DatastoreWithClasses, dataClass: DataClass, input: Input, format: ImportFormat, flags: ImportFlags, name: string): Promise<number> {
  const core = coreOf(ds);
  const dcCore = core.classOf(dataClass.model);
  const model = dataClass.model;
  // saves one by one only when user code must run: the bulk path leaves the same rows otherwise
  const bulk = !flags.events || !(dcCore.writesRunUserCode || dcCore.constructsOnRead);
  const source = recordsOf(input, format, flags.batchSize * 2);
  const started = performance.now();
  let first: SourceRecord[] | null;
  try {
    first = await source.take(1);
  } catch (e) {
    throw new UsageError(`${name}: ${(e as Error).message}`);
  }
  let batch: SourceRecord[] = [];
  let columns: ImportColumn[];
  if (format === 'csv') {
    if (!first) throw new UsageError(`${name} is empty: a CSV file begins with a header row naming the columns`);
    columns = resolveColumns(model, (first[0].fields ?? []).map((f) => f ?? ''), `${name}, header`);
  } else {
    columns = storageColumns(model);
    if (first) {
      // the first object's properties are checked as a header is: a wrong name stops everything
      if (first[0].object) values(model, columns, jsonIndex(model, columns), first[0], (_at, reason) => {
        throw new UsageError(`${name}, ${first[0].at}: ${reason}`);
      });
      batch = first;
    }
  }
  const writer: BatchWriter = bulk ? bulkWriter(dcCore, columns, model) : entityWriter(ds, dataClass, columns, model);
  const progress = progressFor({ tty: io.stderr.isTTY === true, stream: io.stderr, size: input.size, everyMs: flags.progressEvery * 1000 });
  let imported = 0;
  let refused = 0;
  let broken: string | undefined;
  const refuse: Refuse = (at, reason) => {
    if (flags.atomic) throw new AtomicStop(at, reason);
    refused++;
    say(`import: ${at}: ${reason}`);
  };
  const run = async () => {
    for (;;) {
      let more: SourceRecord[] | null = null;
      try {
        more = await source.take(flags.batchSize - batch.length);
      } catch (e) {
        broken = (e as Error).message;
      }
      if (more) batch = batch.length === 0 ? more : [...batch, ...more];
      if (batch.length > 0) imported += await writer.write(batch, refuse);
      batch = [];
      progress.update({ imported, refused, bytes: input.bytesRead });
      if (!more) break;
    }
    if (broken !== undefined && flags.atomic) throw new AtomicStop('the file', broken);
  };
  try {
    if (flags.atomic) await ds.transaction(run);
    else await run();
  } catch (e) {
    if (!(e instanceof AtomicStop)) throw e;
    progress.stop();
    say(`import: ${e.at}: ${e.reason}`);
    io.stdout.write(`nothing imported into ${model.name} (--atomic): ${e.at} was refused\n`);
    return 1;
  } finally {
    progress.stop();
  }
  if (broken !== undefined) say(`import: ${name}: ${broken} (reading stopped there)`);
  const ms = performance.now() - started;
  const perSecond = ms > 0 ? Math.round(imported / (ms / 1000)) : 0;
  io.stdout.write(`imported ${imported.toLocaleString('en')} ${model.name} entities, refused ${refused.toLocaleString('en')}, in ${(ms / 1000).toFixed(2)} s (${perSecond.toLocaleString('en')} rows/s)\n`);
  return refused > 0 || broken !== undefined ? 1 : 0;
}

/** JSON properties by name: each storage column's, and each N→1 relation's (its foreign key's column). */
function jsonIndex(model: DataClassModel, columns: readonly ImportColumn[]): Map<string, number> {
  const index = new Map(columns.map((c, i) => [c.name, i]));
  for (const a of model.attributes) {
    if (a.kind === 'relatedEntity' && index.has(a.foreignKey.name)) index.set(a.name, index.get(a.foreignKey.name) as number);
  }
  return index;
}

/**
 * A record's values in the order of `columns` (undefined: not given, in a JSON object), or
 * undefined after refusing it (a field count that is not the header's, an unknown property, a
 * CSV text that cannot be its column's value).
 */
function values(model: DataClassModel, columns: readonly ImportColumn[], byName: Map<string, number> | undefined, record: SourceRecord, refuse: Refuse): unknown[] | undefined {
  if (record.error !== undefined) return void refuse(record.at, record.error);
  const out = new Array<unknown>(columns.length);
  try {
    if (record.fields) {
      if (record.fields.length !== columns.length) return void refuse(record.at, `${record.fields.length} fields where the header names ${columns.length}`);
      for (let i = 0; i < columns.length; i++) out[i] = fromCsv(columns[i], record.fields[i]);
      return out;
    }
    const object = record.object as Record<string, unknown>;
    for (const name in object) {
      const at = byName?.get(name);
      if (at === undefined) return void refuse(record.at, `'${name}' is not an attribute of ${model.name} that an import sets`);
      if (out[at] !== undefined) return void refuse(record.at, `'${name}' sets ${columns[at].name}, given another way too`);
      out[at] = fromJson(columns[at], object[name]);
    }
    return out;
  } catch (e) {
    if (!isDatasetError(e)) throw e;
    return void refuse(record.at, e.message);
  }
}

/** The bulk path: rows checked here (a bad one refused alone), then inserted together by the core in the batch's transaction. */
function bulkWriter(dcCore: DataClassCore, columns: readonly ImportColumn[], model: DataClassModel): BatchWriter {
  const inserter = new BulkInserter(dcCore, columns.map((c) => c.attr), dcCore.core.root);
  const byName = jsonIndex(model, columns);
  return {
    async write(records, refuse) {
      // refusals are said in the order of the file, whichever step found them
      const refusals: [number, string, string][] = [];
      const rows: BulkRow[] = [];
      const where: number[] = [];
      records.forEach((record, i) => {
        const given = values(model, columns, byName, record, (at, reason) => void refusals.push([i, at, reason]));
        if (!given) return;
        try {
          rows.push(inserter.prepare(given));
          where.push(i);
        } catch (e) {
          if (!isDatasetError(e)) throw e;
          refusals.push([i, record.at, e.message]);
        }
      });
      const refused = rows.length === 0 ? [] : await inserter.insert(rows);
      refused.forEach((e, i) => e && refusals.push([where[i], records[where[i]].at, e.message]));
      refusals.sort((a, b) => a[0] - b[0]);
      for (const [, at, reason] of refusals) refuse(at, reason);
      return rows.length - refused.filter((e) => e !== undefined).length;
    },
  };
}

/** The events path: an entity per row, saved by save() (its events, constructor and checks run), the batch in one transaction. */
function entityWriter(ds: DatastoreWithClasses, dataClass: DataClass, columns: readonly ImportColumn[], model: DataClassModel): BatchWriter {
  const byName = jsonIndex(model, columns);
  return {
    write(records, refuse) {
      return ds.transaction(async () => {
        let written = 0;
        for (const record of records) {
          const given = values(model, columns, byName, record, refuse);
          if (!given) continue;
          try {
            const entity = dataClass.new();
            for (let i = 0; i < columns.length; i++) if (given[i] !== undefined) entity.set(columns[i].attr.name, given[i]);
            await entity.save();
            written++;
          } catch (e) {
            if (e instanceof AtomicStop) throw e;
            // (an event's code may throw anything: the row is refused with what it said)
            refuse(record.at, e instanceof Error ? e.message : String(e));
          }
        }
        return written;
      });
    },
  };
}
