// dataset-rest import: fills a dataclass from a CSV (header row), NDJSON or JSON-array file, or
// stdin, through the datastore core, a batch of rows per transaction. Without user code to run
// (--no-events, or a dataclass without events, entity class or calculated set functions) the rows
// go through the core's bulk insert (datastore/writes/import-writes.ts: a save's checks, multi-row
// statements) — for a file of some size, read, parsed and converted in a worker thread while this
// one inserts (import-threads.ts); otherwise each is an entity saved with save(), its events running. A bad row is
// reported with its line (or array index) and the reason, and the others are imported; --atomic
// makes the file all-or-nothing. Exit code 0: every row imported; 1: some refused (or the file
// broke off); 2: nothing done (bad flags, an unknown dataclass or column, no such file).
// See docs/decisions.md, "Import and export from the command line".

import { coreOf, type DatastoreWithClasses } from '../datastore/datastore.js';
import type { DataClass } from '../datastore/dataclass.js';
import type { DataClassCore } from '../datastore/dataclass-core.js';
import { join } from 'node:path';
import { BulkInserter, RowPreparer } from '../datastore/writes/import-writes.js';
import type { DataClassModel } from '../model/types.js';
import { nameOfDialect } from '../sql/dialects.js';
import { databaseInWords, dataClassNamed, dataCommand, io, oneOf, openForCommand, parseFlags, positiveInt, projectDir, runCommand, say, seconds, UsageError, type ProjectFlags } from './common.js';
import { BatchPreparer, beginRecords, RecordBatches, type PreparedBatch, type Refusal } from './import-prepare.js';
import { progressFor } from './import-progress.js';
import { formatOf, IMPORT_FORMATS, inputSize, openInput, recordsOf, type ImportFormat, type SourceRecord } from './import-read.js';
import { tuning, WorkerBatches } from './import-threads.js';
import { jsonIndex, recordValues, resolveColumns, storageColumns, type ImportColumn, type Refuse } from './import-values.js';

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

/** Writes a batch; resolves to the rows written. */
interface BatchWriter {
  write(next: Next, refuse: Refuse): Promise<number>;
}

export async function main(args: readonly string[]): Promise<number> {
  const program = command();
  const code = parseFlags(program, args);
  if (code !== undefined) return code;
  const flags = program.opts<ImportFlags>();
  const [dataClassName, file] = program.processedArgs as [string, string];
  return runCommand(async (opened) => {
    const format = formatOf(file, flags.format);
    const size = inputSize(file); // (a missing file is refused before the project opens)
    const name = file === '-' ? 'stdin' : file;
    // a big file's worker starts while the project opens (it takes a few hundred milliseconds);
    // closed unasked if the import turns out to need this thread (events, bad usage)
    const worker = size !== undefined && size >= tuning.workerMinBytes
      ? WorkerBatches.start({ file, name, format, batchSize: flags.batchSize, modelFile: join(projectDir(flags), 'model.json'), dataClass: dataClassName })
      : undefined;
    try {
      say(`import: into ${databaseInWords(flags)}`);
      const ds = await openForCommand(flags);
      opened(ds);
      return await importFile(ds, dataClassNamed(ds, dataClassName), file, format, flags, name, worker);
    } finally {
      await worker?.close();
    }
  });
}

async function importFile(ds: DatastoreWithClasses, dataClass: DataClass, file: string, format: ImportFormat, flags: ImportFlags, name: string, worker: WorkerBatches | undefined): Promise<number> {
  const core = coreOf(ds);
  const dcCore = core.classOf(dataClass.model);
  const model = dataClass.model;
  // saves one by one only when user code must run: the bulk path leaves the same rows otherwise
  const bulk = !flags.events || !(dcCore.writesRunUserCode || dcCore.constructsOnRead);
  const started = performance.now();
  const size = inputSize(file);
  const threaded = bulk && worker ? await worker.begin({ dialect: nameOfDialect(core.storage.dialect), maxTextLength: core.maxTextLength }) : undefined;
  if (bulk && worker && !threaded) say(`import: no worker thread (${worker.notStarted ?? 'it did not start'}): the file is read in this thread`);
  let columns: ImportColumn[];
  let batches: Batches;
  if (threaded) {
    columns = format === 'csv' ? resolveColumns(model, threaded.names, `${name}, header`) : storageColumns(model);
    // (the worker read the same model.json: its columns are these)
    if (columns.some((c, i) => c.name !== threaded.names[i] || c.attr.type !== threaded.types[i]) || columns.length !== threaded.names.length) {
      throw new UsageError(`${name}: model.json changed while the import started`);
    }
    batches = { take: () => threaded.batches.take().then((b) => ({ ...b, prepared: b.batch })), close: () => threaded.batches.close() };
  } else {
    const here = openInput(file);
    const source = recordsOf(here, format, flags.batchSize * 2);
    const begun = await beginRecords(source, format, model, name);
    columns = begun.columns;
    const records = new RecordBatches(source, flags.batchSize, begun.first);
    const preparer = bulk ? new BatchPreparer(model, columns, new RowPreparer(model, columns.map((c) => c.attr), core.storage.dialect, core.maxTextLength)) : undefined;
    batches = {
      async take() {
        const { batch, broken } = await records.take();
        return { batch, broken, prepared: batch && preparer?.prepare(batch, here.bytesRead), bytes: here.bytesRead };
      },
      async close() {
        if (file !== '-') here.stream.destroy();
      },
    };
  }
  const writer: BatchWriter = bulk ? bulkWriter(dcCore, columns) : entityWriter(ds, dataClass, columns, model);
  const progress = progressFor({ tty: io.stderr.isTTY === true, stream: io.stderr, size, everyMs: flags.progressEvery * 1000 });
  let imported = 0;
  let refused = 0;
  let broken: string | undefined;
  let bytes = 0;
  const refuse: Refuse = (at, reason) => {
    if (flags.atomic) throw new AtomicStop(at, reason);
    refused++;
    say(`import: ${at}: ${reason}`);
  };
  const run = async () => {
    for (;;) {
      const next = await batches.take();
      broken ??= next.broken;
      if (!next.batch) break;
      imported += await writer.write(next, refuse);
      bytes = next.prepared?.bytesRead ?? next.bytes ?? bytes;
      progress.update({ imported, refused, bytes });
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
    await batches.close();
  }
  if (broken !== undefined) say(`import: ${name}: ${broken} (reading stopped there)`);
  const ms = performance.now() - started;
  const perSecond = ms > 0 ? Math.round(imported / (ms / 1000)) : 0;
  io.stdout.write(`imported ${imported.toLocaleString('en')} ${model.name} entities, refused ${refused.toLocaleString('en')}, in ${(ms / 1000).toFixed(2)} s (${perSecond.toLocaleString('en')} rows/s)\n`);
  return refused > 0 || broken !== undefined ? 1 : 0;
}

/** A batch to write: the records (read here) or the rows prepared (here or by the worker), and the bytes of the file read by then. */
interface Next {
  readonly batch: readonly SourceRecord[] | PreparedBatch | undefined;
  readonly prepared: PreparedBatch | undefined;
  readonly broken?: string;
  readonly bytes?: number;
}

/** Where the batches come from: the worker thread, or the file read here. */
interface Batches {
  take(): Promise<Next>;
  close(): Promise<void>;
}

/** The bulk path: rows checked before (a bad one refused alone), then inserted together by the core in the batch's transaction. */
function bulkWriter(dcCore: DataClassCore, columns: readonly ImportColumn[]): BatchWriter {
  const inserter = new BulkInserter(dcCore, columns.map((c) => c.attr), dcCore.core.root);
  return {
    async write(next, refuse) {
      const batch = next.prepared as PreparedBatch;
      // refusals are said in the order of the file, whichever step found them
      const refusals: Refusal[] = [...batch.refusals];
      const refused = batch.ats.length === 0 ? [] : await inserter.insert(batch.rows);
      refused.forEach((e, i) => e && refusals.push([batch.where[i], batch.ats[i], e.message]));
      refusals.sort((a, b) => a[0] - b[0]);
      for (const [, at, reason] of refusals) refuse(at, reason);
      return batch.ats.length - refused.filter((e) => e !== undefined).length;
    },
  };
}

/** The events path: an entity per row, saved by save() (its events, constructor and checks run), the batch in one transaction. */
function entityWriter(ds: DatastoreWithClasses, dataClass: DataClass, columns: readonly ImportColumn[], model: DataClassModel): BatchWriter {
  const byName = jsonIndex(model, columns);
  return {
    write(next, refuse) {
      return ds.transaction(async () => {
        let written = 0;
        for (const record of next.batch as readonly SourceRecord[]) {
          const given = recordValues(model, columns, byName, record, refuse);
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
