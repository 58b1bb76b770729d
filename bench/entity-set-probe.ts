// A memory probe preloaded into the server by bench/entity-set-bench.ts
// (node --expose-gc --import tsx --import ./bench/entity-set-probe.ts bin/dataset-rest.mjs …).
// It does nothing until the process receives SIGUSR2; then it runs full garbage collections
// (when --expose-gc gave it gc()), waits for V8 to free the backing stores of dead ArrayBuffers
// (done after the collection, off the main thread) and writes process.memoryUsage() as JSON to
// the file named by DATASET_REST_BENCH_PROBE (written whole, then renamed: never read half-done).
// It never touches the server's own objects: it only reports what the process holds.

import { renameSync, writeFileSync } from 'node:fs';

const out = process.env.DATASET_REST_BENCH_PROBE;
let seq = 0;

if (out) {
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('SIGUSR2', () => {
    gc?.();
    setTimeout(() => {
      gc?.();
      setTimeout(() => {
        const m = process.memoryUsage();
        writeFileSync(`${out}.tmp`, JSON.stringify({ seq: ++seq, gc: gc !== undefined, ...m }));
        renameSync(`${out}.tmp`, out);
      }, 100);
    }, 150);
  });
}
