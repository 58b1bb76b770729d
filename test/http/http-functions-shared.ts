// What the files of function calls over HTTP (http-functions-*.test.ts) share: the checkout (for
// a project's node_modules/dataset-rest link) and one demo for the suites whose calls change no
// stored data.

import { fileURLToPath } from 'node:url';
import { after } from 'node:test';
import { openDemo, type DemoFixture } from '../support/helpers.js';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));

/**
 * One demo for the suites of a file whose calls change no stored data (the time limit, declared
 * parameter types, the checks before a call, the demo's calls in the URL form), opened by the first
 * that asks and closed after the file's tests; each suite that writes opens its own.
 */
export function unchangedDemoOfFile(): () => Promise<DemoFixture> {
  let unchanged: Promise<DemoFixture> | undefined;
  after(async () => {
    await (await unchanged)?.close();
  });
  return () => (unchanged ??= openDemo());
}
