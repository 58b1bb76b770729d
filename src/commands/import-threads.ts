// A bulk import's two threads: a worker (import-worker.ts) reads, parses, checks and converts the
// rows, and posts them as prepared batches (flat arrays, see PreparedRows), while the command's
// thread inserts them — so that parsing and converting, most of an import's time, no longer wait
// for the inserts nor the inserts for them. Used for a file of some size (WORKER_MIN_BYTES); stdin,
// small files, and the events path (whose entities are made in this thread) are read here.

import { Worker } from 'node:worker_threads';
import type { StorageType } from '../model/types.js';
import type { DialectName } from '../sql/dialects.js';
import { UsageError } from './common.js';
import type { Batch, PreparedBatch } from './import-prepare.js';
import type { ImportFormat } from './import-read.js';

/** What the worker is given. */
export interface WorkerInput {
  readonly file: string;
  /** the file as messages name it */
  readonly name: string;
  readonly format: ImportFormat;
  readonly batchSize: number;
  /** batches the worker may prepare before the command's thread takes them */
  readonly ahead: number;
  /** model.json, read again by the worker: it cannot share the command's model */
  readonly modelFile: string;
  readonly dataClass: string;
}

/** What the worker is told once the project is open (the worker starts meanwhile). */
export interface WorkerConfig {
  readonly dialect: DialectName;
  readonly maxTextLength: number;
}

/** What the command's thread posts: the configuration, once, then a request for each next batch. */
export type ToWorker = { readonly type: 'config'; readonly config: WorkerConfig } | { readonly type: 'more' };

/** What the worker posts: the file's columns first (or why it cannot be imported), then its batches, the last one undefined. */
export type FromWorker =
  | { readonly type: 'columns'; readonly names: string[]; readonly types: StorageType[] }
  | { readonly type: 'usage'; readonly message: string }
  | { readonly type: 'batch'; readonly batch: PreparedBatch | undefined; readonly broken?: string }
  | { readonly type: 'failed'; readonly message: string };

/** Files smaller than this are read in the command's thread: a worker takes a few hundred milliseconds to start. */
export const tuning = { workerMinBytes: 4 << 20 };

/** Batches prepared at most ahead of the inserts. */
const AHEAD = 3;

/** The prepared batches of a file, from a worker thread. */
export class WorkerBatches {
  readonly #worker: Worker | undefined;
  readonly #queue: FromWorker[] = [];
  #wake: (() => void) | undefined;
  #failure: Error | undefined;
  #closed = false;
  /** why the worker could not start or begin, when it could not */
  notStarted: string | undefined;

  private constructor(worker: Worker | undefined) {
    this.#worker = worker;
    worker?.on('message', (m: FromWorker) => this.#push(m));
    worker?.on('error', (e) => this.#fail(e));
    worker?.on('exit', () => this.#fail(new Error('the import worker stopped')));
  }

  /** Starts the worker on the file: it loads the model and reads the file's beginning while the project opens. */
  static start(input: Omit<WorkerInput, 'ahead'>): WorkerBatches {
    let worker: Worker | undefined;
    let why: string | undefined;
    try {
      worker = startWorker({ ...input, ahead: AHEAD });
    } catch (e) {
      // (then begin() gives nothing, and the file is read in the command's thread)
      why = (e as Error).message;
    }
    const batches = new WorkerBatches(worker);
    batches.notStarted = why;
    return batches;
  }

  /**
   * Gives the worker what the open project tells, and waits for the file's columns (names and
   * types), or for a UsageError it met (a bad header, an empty CSV…); undefined if the worker
   * could not start (the file is then read in this thread, nothing of it taken yet).
   */
  async begin(config: WorkerConfig): Promise<{ batches: WorkerBatches; names: string[]; types: StorageType[] } | undefined> {
    if (!this.#worker) return undefined;
    this.#post({ type: 'config', config });
    let first: FromWorker;
    try {
      first = await this.#next();
    } catch (e) {
      this.notStarted = (e as Error).message;
      await this.close();
      return undefined;
    }
    if (first.type === 'columns') return { batches: this, names: first.names, types: first.types };
    await this.close();
    if (first.type === 'usage') throw new UsageError(first.message);
    this.notStarted = first.type === 'failed' ? first.message.split('\n')[0] : `it posted ${first.type} first`;
    return undefined;
  }

  #post(m: ToWorker): void {
    this.#worker?.postMessage(m);
  }

  /** The next batch (undefined after the last), and why reading broke off if it did. */
  async take(): Promise<Batch<PreparedBatch>> {
    const m = await this.#next();
    if (m.type === 'failed') throw new Error(`the import worker failed: ${m.message}`);
    if (m.type !== 'batch') throw new Error(`the import worker posted ${m.type} among its batches`);
    if (m.batch) this.#post({ type: 'more' });
    return m;
  }

  /** Stops the worker (again: nothing). */
  async close(): Promise<void> {
    if (this.#closed || !this.#worker) return;
    this.#closed = true;
    this.#worker.removeAllListeners('exit');
    await this.#worker.terminate();
  }

  #push(m: FromWorker): void {
    this.#queue.push(m);
    this.#signal();
  }

  #fail(e: Error): void {
    this.#failure ??= e;
    this.#signal();
  }

  #signal(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async #next(): Promise<FromWorker> {
    for (;;) {
      const m = this.#queue.shift();
      if (m) return m;
      if (this.#failure) throw this.#failure;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}

/**
 * The worker, from its compiled JavaScript in the package, or from its TypeScript source in the
 * repository: through tsx, registered in the worker first (a worker does not inherit the loader
 * hooks of the thread that starts it).
 */
function startWorker(input: WorkerInput): Worker {
  const options = { workerData: input, stdout: false, stderr: false };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./import-worker.js', import.meta.url), options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const source = new URL('./import-worker.ts', import.meta.url).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`, { ...options, eval: true });
}
