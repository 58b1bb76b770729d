// Every relative link of README.md and docs/*.md leads somewhere: the file exists, and an
// `#anchor` names a heading of it (GitHub's anchors: the heading in lower case, punctuation
// dropped, spaces as `-`, a repeated heading numbered `-1`, `-2` …).

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, it } from 'node:test';
import { documents, readDocument, ROOT } from '../support/doc-blocks.js';

/**
 * Pages another branch of issue 38 adds (the relations' delete rules): linked already, checked
 * once they exist. Empty this set when they are merged.
 */
const WRITTEN_ELSEWHERE = new Set<string>([]);

/** The text outside fenced blocks and inline code, line by line (blanked lines keep the numbers). */
function prose(text: string): string[] {
  let fence = false;
  return text.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fence = !fence;
      return '';
    }
    return fence ? '' : line.replace(/`[^`]*`/g, '``');
  });
}

/** GitHub's anchor of a heading's text. */
export function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fence = false;
  for (const line of readDocument(file).split('\n')) {
    if (/^\s*```/.test(line)) fence = !fence;
    const m = fence ? null : /^#{1,6} (.*)$/.exec(line);
    if (!m) continue;
    const base = anchorOf(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

describe('the links of the README and docs/', () => {
  it("reads GitHub's anchors from headings", () => {
    assert.equal(anchorOf("The package: `npm install`, `npx dataset-rest`, `import 'dataset-rest'`"), 'the-package-npm-install-npx-dataset-rest-import-dataset-rest');
    assert.equal(anchorOf('Live feeds: `$method=watch`'), 'live-feeds-methodwatch');
    assert.equal(anchorOf("Clients: wakanda-client, and 4D's legacy login"), 'clients-wakanda-client-and-4ds-legacy-login');
  });

  it('every relative link names a file that exists, and a heading of it when it has an #anchor', () => {
    const broken: string[] = [];
    let count = 0;
    for (const file of documents()) {
      prose(readDocument(file)).forEach((line, i) => {
        for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
          const target = m[1];
          if (/^[a-z][a-z+.-]*:/i.test(target)) continue;
          count++;
          const [path, anchor] = target.split('#', 2) as [string, string | undefined];
          const resolved = path === '' ? file : normalize(join(dirname(file), decodeURI(path)));
          if (WRITTEN_ELSEWHERE.has(resolved) && !existsSync(join(ROOT, resolved))) continue;
          if (!existsSync(join(ROOT, resolved))) broken.push(`${file}:${i + 1}: ${target} (no ${resolved})`);
          else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) broken.push(`${file}:${i + 1}: ${target} (no heading #${anchor} in ${resolved})`);
        }
      });
    }
    assert.deepEqual(broken, []);
    assert.ok(count >= 40, `${count} relative links`);
  });

  it('every page of docs/ is linked from the README, or from a page the README links', () => {
    const readme = readDocument('README.md');
    const pages = documents().filter((f) => f.startsWith('docs/'));
    const fromReadme = pages.filter((p) => readme.includes(`](${p})`) || readme.includes(`](${p}#`));
    const linked = (p: string) => fromReadme.some((q) => q === p || readDocument(q).includes(`](${p.slice('docs/'.length)})`) || readDocument(q).includes(`](${p.slice('docs/'.length)}#`));
    assert.deepEqual(pages.filter((p) => !linked(p)), []);
  });
});
