// The progress of an import on stderr: on a terminal, cli-progress's bar (rows, rows a second,
// and, when the file's size is known, the share read and an ETA from the bytes read); elsewhere
// (a log, a CI job) a plain line every few seconds, which a file or a pipe keeps readable.

import cliProgress from 'cli-progress';

/** Where an import stands. */
export interface ImportCounts {
  readonly imported: number;
  readonly refused: number;
  /** bytes of the file read so far */
  readonly bytes: number;
}

export interface Progress {
  /** called after each batch */
  update(counts: ImportCounts): void;
  stop(): void;
}

export interface ProgressOptions {
  /** stderr is a terminal: a bar, redrawn in place */
  readonly tty: boolean;
  /** where to write (stderr) */
  readonly stream: NodeJS.WritableStream;
  /** the file's size in bytes, when known (not for stdin) */
  readonly size: number | undefined;
  /** without a terminal: at least this long between two lines */
  readonly everyMs: number;
}

const rate = (rows: number, ms: number): number => (ms > 0 ? Math.round(rows / (ms / 1000)) : 0);
const number = (n: number): string => n.toLocaleString('en');

export function progressFor(options: ProgressOptions): Progress {
  const started = performance.now();
  if (!options.tty) {
    let last = started;
    return {
      update(c) {
        const now = performance.now();
        if (now - last < options.everyMs) return;
        last = now;
        const share = options.size ? `, ${Math.floor((100 * c.bytes) / options.size)}% of the file` : '';
        options.stream.write(`dataset-rest import: ${number(c.imported)} imported, ${number(c.refused)} refused, ${number(rate(c.imported + c.refused, now - started))} rows/s${share}\n`);
      },
      stop() {},
    };
  }
  const sized = options.size !== undefined && options.size > 0;
  const bar = new cliProgress.SingleBar({
    stream: options.stream,
    format: sized
      ? '{bar} {percentage}% | {imported} imported, {refused} refused | {speed} rows/s | ETA {eta_formatted}'
      : '{imported} imported, {refused} refused | {speed} rows/s | {duration_formatted}',
    hideCursor: true,
    etaBuffer: 20,
    fps: 5,
  }, cliProgress.Presets.shades_classic);
  // (bytes are what the bar and its ETA measure: the rows a file holds are not known before the end)
  let stopped = false;
  bar.start(sized ? options.size as number : 1, 0, { imported: 0, refused: 0, speed: 0 });
  return {
    update(c) {
      bar.update(sized ? c.bytes : 0, { imported: number(c.imported), refused: number(c.refused), speed: number(rate(c.imported + c.refused, performance.now() - started)) });
    },
    stop() {
      if (stopped) return;
      stopped = true;
      bar.stop();
    },
  };
}
