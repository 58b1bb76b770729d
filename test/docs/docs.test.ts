// The documents that list things the code defines keep up with it: docs/command-line.md's table
// of flags, docs/limits.md's table of limits.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { commandLine } from '../../src/process/cli-options.js';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const flags = commandLine().options.map((o) => o.long as string);

/** Whether an engines range (`>=18`, `^20.9.0 || >=22`, `18 - 22`, `*`) lets Node 20.19 in; a form it cannot read throws. */
function allowsNode20(range: string): boolean {
  const v = [20, 19, 0];
  const parts = (text: string) => text.replace(/^v/, '').split('.').map((n) => (n === 'x' || n === '*' ? 0 : Number(n)));
  const cmp = (a: number[], b: number[]) => {
    for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
    return 0;
  };
  return range.split('||').some((alternative) => {
    const t = alternative.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1');
    if (t === '' || t === '*' || t === 'x') return true;
    const hyphen = /^(\S+)\s+-\s+(\S+)$/.exec(t);
    if (hyphen) return cmp(v, parts(hyphen[1])) >= 0 && v[0] <= parts(hyphen[2])[0];
    return t.split(/\s+/).every((c) => {
      const m = /^(>=|<=|>|<|\^|~|=)?\s*(v?\d+(\.(\d+|x|\*))*)$/.exec(c);
      if (!m) throw new Error(`engines range '${range}': '${c}' is not read here`);
      const w = parts(m[2]);
      switch (m[1]) {
        case '>=': return cmp(v, w) >= 0;
        case '>': return cmp(v, w) > 0;
        case '<=': return cmp(v, w) <= 0;
        case '<': return cmp(v, w) < 0;
        case '^': return v[0] === w[0] && cmp(v, w) >= 0;
        case '~': return v[0] === w[0] && v[1] === (w[1] ?? v[1]) && cmp(v, w) >= 0;
        default: return m[2].split('.').length < 3 ? v[0] === w[0] : cmp(v, w) === 0;
      }
    });
  });
}

describe('the documents list what the code defines', () => {
  it("docs/command-line.md's table of flags has a row for every flag of the command", () => {
    const page = read('docs/command-line.md');
    const missing = flags.filter((flag) => !new RegExp(`^\\| \`${flag}( [^\`]*)?\` \\|`, 'm').test(page));
    assert.deepEqual(missing, [], 'flags without a row in docs/command-line.md, "Flags"');
  });

  it('docs/node-versions.md names every locked package that declares a Node newer than 20 (the install warnings on Node 20)', () => {
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string; engines?: { node?: string } | string[] }> };
    const page = read('docs/node-versions.md');
    const newer = Object.entries(lock.packages)
      .filter(([path, p]) => path !== '' && !Array.isArray(p.engines) && p.engines?.node !== undefined && !allowsNode20(p.engines.node))
      .map(([path, p]) => `${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${p.version}`);
    assert.ok(newer.length > 0 || page.includes('prints none'));
    assert.deepEqual(newer.filter((name) => !page.includes(`\`${name}\``)), [], 'packages to list in docs/node-versions.md, "Install warnings on Node 20"');
  });

  it('docs/limits.md names every flag that sets a limit (sizes, counts, time)', () => {
    const limits = read('docs/limits.md');
    const limitFlags = flags.filter((f) => /^--max-|timeout/.test(f));
    assert.ok(limitFlags.length >= 8, limitFlags.join(' '));
    assert.deepEqual(limitFlags.filter((flag) => !limits.includes(`\`${flag}`)), []);
  });
});
