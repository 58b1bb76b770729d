// The reading side of an import, the same in the command's thread and in the worker thread of a
// bulk import (import-worker.ts): the file's columns told from its beginning (a CSV's header, or
// every storage attribute for JSON, the first object's properties checked as a header is), then
// its records taken a batch at a time and, for the bulk path, each batch's rows checked and
// converted by the core's RowPreparer into flat arrays, with the refusals met on the way.

import type { PreparedRows, RowPreparer } from '../datastore/writes/import-writes.js';
import { isDatasetError } from '../errors/dataset-error.js';
import type { DataClassModel } from '../model/types.js';
import { UsageError } from './common.js';
import type { ImportFormat, RecordSource, SourceRecord } from './import-read.js';
import { jsonIndex, recordValues, resolveColumns, storageColumns, type ImportColumn } from './import-values.js';

/** A row refused before the insert: its place among the batch's records, where it is in the file, why. */
export type Refusal = readonly [index: number, at: string, reason: string];

/** A batch of records read and prepared for the bulk insert. */
export interface PreparedBatch {
  /** records read (rows prepared and refused) */
  readonly records: number;
  readonly rows: PreparedRows;
  /** for each row prepared: where it is in the file, and its place among the batch's records (for the insert's refusals) */
  readonly ats: string[];
  readonly where: number[];
  /** the records refused while preparing, in the order of the file */
  readonly refusals: Refusal[];
  /** bytes of the file read so far */
  readonly bytesRead: number;
}

/** The records of a file, a batch at a time; `broken`: why reading stopped before the end (the records before it taken). */
export interface Batch<T> {
  readonly batch: T | undefined;
  readonly broken?: string;
}

/**
 * The columns of the file (`name`: the file, for messages) and the records read to tell them (a
 * JSON file's first object, which belongs to the first batch); a UsageError for a file that cannot
 * be read, an empty CSV, a header naming what cannot be imported, or a first object with such a
 * property.
 */
export async function beginRecords(source: RecordSource, format: ImportFormat, model: DataClassModel, name: string): Promise<{ columns: ImportColumn[]; first: SourceRecord[] }> {
  let first: SourceRecord[] | null;
  try {
    first = await source.take(1);
  } catch (e) {
    throw new UsageError(`${name}: ${(e as Error).message}`);
  }
  if (format === 'csv') {
    if (!first) throw new UsageError(`${name} is empty: a CSV file begins with a header row naming the columns`);
    return { columns: resolveColumns(model, (first[0].fields ?? []).map((f) => f ?? ''), `${name}, header`), first: [] };
  }
  const columns = storageColumns(model);
  if (!first) return { columns, first: [] };
  const record = first[0];
  // the first object's properties are checked as a header is: a wrong name stops everything
  if (record.object) recordValues(model, columns, jsonIndex(model, columns), record, (_at, reason) => {
    throw new UsageError(`${name}, ${record.at}: ${reason}`);
  });
  return { columns, first };
}

/** Takes the records of `source` `size` at a time, the records read to begin first; a read error ends them (broken). */
export class RecordBatches {
  #pending: SourceRecord[];
  #done = false;

  constructor(readonly source: RecordSource, readonly size: number, first: SourceRecord[]) {
    this.#pending = first;
  }

  /** The next batch (undefined once every record was taken), and why reading broke off, if it did. */
  async take(): Promise<Batch<SourceRecord[]>> {
    if (this.#done) return { batch: undefined };
    let batch = this.#pending;
    this.#pending = [];
    let broken: string | undefined;
    let more: SourceRecord[] | null = null;
    try {
      more = await this.source.take(this.size - batch.length);
    } catch (e) {
      broken = (e as Error).message;
    }
    if (more) batch = batch.length === 0 ? more : [...batch, ...more];
    if (!more) this.#done = true;
    return { batch: batch.length > 0 ? batch : undefined, broken };
  }
}

/** Prepares batches of records for the bulk insert: each row checked and converted, or refused with its reason. */
export class BatchPreparer {
  readonly #byName: Map<string, number>;
  /** the values of the row being prepared (RowPreparer.prepare() copies them out) */
  readonly #given: unknown[];

  constructor(readonly model: DataClassModel, readonly columns: readonly ImportColumn[], readonly preparer: RowPreparer) {
    this.#byName = jsonIndex(model, columns);
    this.#given = new Array<unknown>(columns.length);
  }

  prepare(records: readonly SourceRecord[], bytesRead: number): PreparedBatch {
    const rows = this.preparer.rows();
    const refusals: Refusal[] = [];
    const ats: string[] = [];
    const where: number[] = [];
    let i = 0;
    const refuse = (at: string, reason: string) => void refusals.push([i, at, reason]);
    for (; i < records.length; i++) {
      const record = records[i];
      const given = recordValues(this.model, this.columns, this.#byName, record, refuse, this.#given);
      if (!given) continue;
      try {
        this.preparer.prepare(given, rows);
        ats.push(record.at);
        where.push(i);
      } catch (e) {
        if (!isDatasetError(e)) throw e;
        refusals.push([i, record.at, e.message]);
      }
    }
    return { records: records.length, rows, ats, where, refusals, bytesRead };
  }
}
