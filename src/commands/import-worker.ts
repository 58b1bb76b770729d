// The worker thread of a bulk import (import-threads.ts starts it): reads the file, parses it and
// checks and converts each row with the core's RowPreparer (the same code the command's thread
// would run, on a model loaded from the same model.json), and posts the prepared batches, while
// the command's thread inserts the ones before. A few batches ahead at most: the command's thread
// asks for each next one ('more'), so that memory stays flat whatever the file's size.

import { parentPort, workerData } from 'node:worker_threads';
import { RowPreparer } from '../datastore/writes/import-writes.js';
import { loadModelFile } from '../model/load-model.js';
import { dialectNamed } from '../sql/dialects.js';
import { UsageError } from './common.js';
import { BatchPreparer, beginRecords, RecordBatches } from './import-prepare.js';
import { openInput, recordsOf } from './import-read.js';
import type { FromWorker, ToWorker, WorkerConfig, WorkerInput } from './import-threads.js';

const input = workerData as WorkerInput;
const port = parentPort!;
let config: WorkerConfig | undefined;
let credits = input.ahead;
let wake: (() => void) | undefined;
port.on('message', (m: ToWorker) => {
  if (m.type === 'config') config = m.config;
  else credits++;
  const w = wake;
  wake = undefined;
  w?.();
});

const post = (message: FromWorker) => port.postMessage(message);

async function run(): Promise<void> {
  const model = (await loadModelFile(input.modelFile)).dataClassesByName.get(input.dataClass);
  if (!model) throw new Error(`the model read again has no dataclass ${input.dataClass}`);
  const file = openInput(input.file);
  const source = recordsOf(file, input.format, input.batchSize * 2);
  let begun;
  try {
    begun = await beginRecords(source, input.format, model, input.name);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    post({ type: 'usage', message: e.message });
    return;
  }
  const { columns, first } = begun;
  // (the project is open by then: the command's thread waits for it before asking for the columns)
  while (!config) await new Promise<void>((resolve) => (wake = resolve));
  post({ type: 'columns', names: columns.map((c) => c.name), types: columns.map((c) => c.attr.type) });
  const preparer = new BatchPreparer(model, columns, new RowPreparer(model, columns.map((c) => c.attr), dialectNamed(config.dialect), config.maxTextLength));
  const batches = new RecordBatches(source, input.batchSize, first);
  for (;;) {
    while (credits <= 0) await new Promise<void>((resolve) => (wake = resolve));
    const { batch, broken } = await batches.take();
    credits--;
    post({ type: 'batch', batch: batch && preparer.prepare(batch, file.bytesRead), broken });
    if (!batch) return;
  }
}

run().then(() => port.close(), (e: Error) => post({ type: 'failed', message: e.stack ?? e.message }));
