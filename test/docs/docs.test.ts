// The documents that list things the code defines keep up with it: docs/command-line.md's table
// of flags, docs/limits.md's table of limits.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { commandLine } from '../../src/process/cli-options.js';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const flags = commandLine().options.map((o) => o.long as string);

describe('the documents list what the code defines', () => {
  it("docs/command-line.md's table of flags has a row for every flag of the command", () => {
    const page = read('docs/command-line.md');
    const missing = flags.filter((flag) => !new RegExp(`^\\| \`${flag}( [^\`]*)?\` \\|`, 'm').test(page));
    assert.deepEqual(missing, [], 'flags without a row in docs/command-line.md, "Flags"');
  });

  it('docs/limits.md names every flag that sets a limit (sizes, counts, time)', () => {
    const limits = read('docs/limits.md');
    const limitFlags = flags.filter((f) => /^--max-|timeout/.test(f));
    assert.ok(limitFlags.length >= 8, limitFlags.join(' '));
    assert.deepEqual(limitFlags.filter((flag) => !limits.includes(`\`${flag}`)), []);
  });
});
