// docs/errors.md stays in step with the error registry (src/errors/registry.ts): same entries,
// same errCode, HTTP status, componentSignature and summary; errCodes are unique.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { DatasetError } from '../../src/errors/dataset-error.js';
import { ERRORS, type ErrorName, type ErrorSpec } from '../../src/errors/registry.js';

const DOC = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

interface DocRow {
  name: string;
  errCode: number;
  status: number;
  signature: string;
  summary: string;
  line: number;
}

const stripCode = (cell: string): string => cell.replace(/^`(.*)`$/, '$1');

/** The rows of the table whose header starts with `| Name | errCode |`. */
function docRows(text: string): DocRow[] {
  const lines = text.split('\n');
  const header = lines.findIndex((l) => /^\|\s*Name\s*\|\s*errCode\s*\|/.test(l));
  assert.ok(header >= 0, 'docs/errors.md has a table with a "| Name | errCode |" header');
  assert.deepEqual(cells(lines[header]), ['Name', 'errCode', 'HTTP status', 'componentSignature', 'Summary']);
  assert.match(lines[header + 1], /^\|(\s*-+\s*\|){5}\s*$/, 'the header is followed by a separator row');
  const rows: DocRow[] = [];
  for (let i = header + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    const c = cells(lines[i]);
    assert.equal(c.length, 5, `line ${i + 1} has 5 cells: ${lines[i]}`);
    rows.push({
      name: stripCode(c[0]), errCode: Number(c[1]), status: Number(c[2]), signature: stripCode(c[3]), summary: c[4].replaceAll('\\|', '|'), line: i + 1,
    });
  }
  return rows;
}

function cells(line: string): string[] {
  return line.trim().replace(/^\|/, '').replace(/(?<!\\)\|$/, '').split(/(?<!\\)\|/).map((c) => c.trim());
}

const rows = docRows(DOC);
const registry = Object.entries(ERRORS) as [ErrorName, ErrorSpec][];

describe('docs/errors.md', () => {
  it('lists every registry entry exactly once, and nothing else', () => {
    const names = rows.map((r) => r.name);
    assert.equal(new Set(names).size, names.length, `duplicate rows: ${names.filter((n, i) => names.indexOf(n) !== i).join(', ')}`);
    assert.deepEqual([...names].sort(), registry.map(([name]) => name).sort());
  });

  it('lists the entries in registry order', () => {
    assert.deepEqual(rows.map((r) => r.name), registry.map(([name]) => name));
  });

  for (const [name, spec] of registry) {
    it(`documents ${name} with errCode ${spec.errCode}, status ${spec.status}, signature ${spec.signature} and its summary`, () => {
      const row = rows.find((r) => r.name === name);
      assert.ok(row, `${name} is missing from docs/errors.md`);
      assert.deepEqual(
        { errCode: row.errCode, status: row.status, signature: row.signature, summary: row.summary },
        { errCode: spec.errCode, status: spec.status, signature: spec.signature, summary: spec.summary },
        `docs/errors.md line ${row.line}`,
      );
    });
  }

  it('shows an __ERROR answer of the shape DatasetError.toWire() produces', () => {
    const block = /```json\n([\s\S]*?)```/.exec(DOC);
    assert.ok(block, 'a ```json example');
    const example = JSON.parse(block[1]) as { __ERROR: { message: string; componentSignature: string; errCode: number }[] };
    assert.equal(example.__ERROR.length, 1);
    const [item] = example.__ERROR;
    const wire = new DatasetError('ENTITY_NOT_FOUND', item.message).toWire();
    assert.deepEqual(example.__ERROR, wire);
    assert.deepEqual(Object.keys(item), ['message', 'componentSignature', 'errCode']);
  });
});

describe('error registry', () => {
  it('gives every entry a unique errCode', () => {
    const seen = new Map<number, ErrorName>();
    for (const [name, spec] of registry) {
      assert.ok(!seen.has(spec.errCode), `${name} and ${seen.get(spec.errCode)} share errCode ${spec.errCode}`);
      seen.set(spec.errCode, name);
    }
  });

  it("uses signature dbmg for 4D's own codes (below 7000) and dsrs for ours (7000 and up)", () => {
    for (const [name, spec] of registry) {
      assert.equal(spec.signature, spec.errCode >= 7000 ? 'dsrs' : 'dbmg', name);
    }
  });

  it('gives every entry an HTTP error status and a one-line summary', () => {
    for (const [name, spec] of registry) {
      assert.ok(Number.isInteger(spec.status) && spec.status >= 400 && spec.status <= 599, `${name}: status ${spec.status}`);
      assert.ok(spec.summary.trim() !== '' && !spec.summary.includes('\n'), `${name}: summary`);
    }
  });

  it('is the only place an errCode is written: no code in src/ is a number of its own', () => {
    const src = fileURLToPath(new URL('../../src', import.meta.url));
    const ours = new Set(registry.map(([, spec]) => spec.errCode));
    const found: string[] = [];
    for (const file of sourceFiles(src)) {
      if (file.endsWith(join('errors', 'registry.ts'))) continue;
      // comments may cite codes (4D's 1542); code may not
      const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
      code.split('\n').forEach((line, i) => {
        const codes = [...line.matchAll(/-?\b\d+\b/g)].map((m) => Number(m[0])).filter((n) => ours.has(n));
        if (codes.length > 0 || /(?<!\.)\berrCode\s*:\s*-?\d+\s*[,}]|ERRCODE\w*\s*=\s*-?\d/i.test(line)) found.push(`${file.slice(src.length + 1)}:${i + 1}: ${line.trim()}`);
      });
    }
    assert.deepEqual(found, [], 'take errCodes from ERRORS (src/errors/registry.ts), and register new ones there');
  });

  it('lets application code refuse with its own status and errCode (REFUSED), and refuses a name, status or code that is none', () => {
    const e = new DatasetError('REFUSED', 'no stock left for item 12', { status: 409, errCode: 20001, attributeName: 'qty' });
    assert.equal(e.status, 409);
    assert.equal(e.code, 'REFUSED');
    assert.deepEqual(e.toWire(), [{ message: 'no stock left for item 12', componentSignature: 'dsrs', errCode: 20001, attributeName: 'qty' }]);
    const plain = new DatasetError('REFUSED', 'no');
    assert.equal(plain.status, 400);
    assert.equal(plain.toWire()[0].errCode, ERRORS.REFUSED.errCode);
    assert.equal(new DatasetError('INVALID_PARAMETER', 'quantity must be positive').status, 400, 'any registered name, by its own status');
    assert.throws(() => new DatasetError('NOPE' as ErrorName, 'x'), /no registered error name/);
    assert.throws(() => new DatasetError('toString' as ErrorName, 'x'), /no registered error name/);
    assert.throws(() => new DatasetError('REFUSED', 'x', { status: 200 }), /no HTTP error status/);
    assert.throws(() => new DatasetError('REFUSED', 'x', { errCode: 1.5 }), /not a positive integer/);
  });

  it('sends a stack of errors innermost first, with the status of the first', () => {
    const e = new DatasetError('STAMP_CHANGED', 'stamp', [
      { name: 'RECORD_NOT_SAVED', message: 'record' },
      { name: 'ENTITY_NOT_SAVED', message: 'entity' },
    ]);
    assert.equal(e.code, 'STAMP_CHANGED');
    assert.equal(e.status, 409);
    assert.deepEqual(e.toWire(), [
      { message: 'stamp', componentSignature: 'dbmg', errCode: 1263 },
      { message: 'record', componentSignature: 'dbmg', errCode: 1046 },
      { message: 'entity', componentSignature: 'dbmg', errCode: 1517 },
    ]);
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}
