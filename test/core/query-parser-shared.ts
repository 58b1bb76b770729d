// What the files of the query parser (query-parser-grammar.test.ts, query-parser-edges.test.ts)
// share: builders of the AST without offsets, and the assertions of a parsed condition and of a
// refusal.

import assert from 'node:assert/strict';
import { DatasetError } from '../../src/errors/dataset-error.js';
import type { ErrorName } from '../../src/errors/registry.js';
import type { Comparator } from '../../src/query/ast.js';
import { parseQuery } from '../../src/query/parser.js';

// ---- builders: the AST without offsets --------------------------------------------------------

export type Step = { name: string; element?: string | null; classIndex?: number };
export type Path = { kind: 'path'; steps: Step[]; text: string } | { kind: 'pathParam'; index: number };
export type Value =
  | { kind: 'literal'; value: string | number | boolean | null; quoted: boolean }
  | { kind: 'param'; index: number }
  | { kind: 'list'; items: Value[] };
export type Node =
  | { kind: 'compare'; path: Path; op: Comparator; value: Value }
  | { kind: 'and'; items: { node: Node; except: boolean }[] }
  | { kind: 'or'; items: Node[] }
  | { kind: 'not'; operand: Node };
export type Order = { path: Path; descending: boolean };
/** an and-item marked EXCEPT */
export type Except = { except: Node };

/** A dotted path of plain names; anything fancier is given as explicit steps. */
export const path = (text: string, steps?: Step[]): Path => ({ kind: 'path', steps: steps ?? text.split('.').map((name) => ({ name })), text });
export const pathParam = (index: number): Path => ({ kind: 'pathParam', index });
/** unquoted literal: text, number, true/false/null as the parser types them */
export const lit = (value: string | number | boolean | null): Value => ({ kind: 'literal', value, quoted: false });
/** quoted text */
export const q = (value: string): Value => ({ kind: 'literal', value, quoted: true });
export const param = (index: number): Value => ({ kind: 'param', index });
export const list = (...items: Value[]): Value => ({ kind: 'list', items });
export const toValue = (v: Value | string | number | boolean | null): Value => (v !== null && typeof v === 'object' ? v : lit(v));
export const cmp = (p: string | Path, op: Comparator, v: Value | string | number | boolean | null): Node => ({
  kind: 'compare',
  path: typeof p === 'string' ? path(p) : p,
  op,
  value: toValue(v),
});
export const except = (node: Node): Except => ({ except: node });
export const and = (...items: (Node | Except)[]): Node => ({
  kind: 'and',
  items: items.map((i) => ('except' in i && !('kind' in i) ? { node: i.except, except: true } : { node: i as Node, except: false })),
});
export const or = (...items: Node[]): Node => ({ kind: 'or', items });
export const not = (operand: Node): Node => ({ kind: 'not', operand });
export const asc = (p: string | Path): Order => ({ path: typeof p === 'string' ? path(p) : p, descending: false });
export const desc = (p: string | Path): Order => ({ path: typeof p === 'string' ? path(p) : p, descending: true });

/** A deep copy without the `at` offsets. */
export function strip<T>(x: T): T {
  if (Array.isArray(x)) return x.map(strip) as T;
  if (x !== null && typeof x === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) if (k !== 'at') out[k] = strip(v);
    return out as T;
  }
  return x;
}

export function assertWhere(text: string, expected: Node | null): void {
  const parsed = parseQuery(text);
  assert.equal(parsed.text, text);
  assert.deepEqual(strip(parsed.where), expected);
  assert.deepEqual(parsed.orderBy, []);
}

export function assertQueryError(fn: () => unknown, code: ErrorName, ...mentions: string[]): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof DatasetError, `expected a DatasetError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    for (const m of mentions) assert.ok(e.message.includes(m), `message ${JSON.stringify(e.message)} should mention ${JSON.stringify(m)}`);
    return true;
  });
}
