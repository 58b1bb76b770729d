// Property-based tests of the query parser (fast-check): random and mutated text never crashes it
// (an AST or a DatasetError, nothing else), and queries generated from the grammar of reference
// notes §4 parse to the tree they were built from and print back to text that parses the same.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MAX_QUERY_PARAMS } from '../../src/config/limits.js';
import { DatasetError } from '../../src/errors/dataset-error.js';
import type { Comparator, OrderItem, ParsedQuery, PathRef, QueryNode, ValueRef } from '../../src/query/ast.js';
import { parseQuery } from '../../src/query/parser.js';

const TIMEOUT = { timeout: 60_000 };
// a failing property shows the assertion's message, not only "Property failed"
fc.configureGlobal({ includeErrorInReport: true });

// ---- helpers --------------------------------------------------------------------------------

/** A deep copy without the `at` offsets (and, with dropPathText, without paths' source text). */
function strip<T>(x: T, dropPathText = false): T {
  if (Array.isArray(x)) return x.map((i) => strip(i, dropPathText)) as T;
  if (x !== null && typeof x === 'object') {
    const out: Record<string, unknown> = {};
    const isPath = (x as { kind?: unknown }).kind === 'path';
    for (const [k, v] of Object.entries(x)) if (k !== 'at' && !(dropPathText && isPath && k === 'text')) out[k] = strip(v, dropPathText);
    return out as T;
  }
  return x;
}

/** parseQuery, where the only accepted failure is a DatasetError of the query's own codes. */
function parseOrDatasetError(text: string): ParsedQuery | DatasetError {
  try {
    return parseQuery(text);
  } catch (e) {
    if (!(e instanceof DatasetError)) throw new Error(`parseQuery(${JSON.stringify(text)}) threw a ${(e as Error)?.constructor?.name}: ${String(e)}`, { cause: e });
    assert.ok(e.code === 'INVALID_FILTER' || e.code === 'LIMIT_EXCEEDED', `unexpected code ${e.code}: ${e.message}`);
    assert.ok(e.message.length > 0);
    return e;
  }
}

const NODE_KINDS = new Set(['compare', 'and', 'or', 'not']);

function assertWellFormed(parsed: ParsedQuery, text: string): void {
  assert.equal(typeof parsed, 'object');
  assert.equal(parsed.text, text);
  assert.ok(Array.isArray(parsed.orderBy));
  if (parsed.where === null) assert.ok(parsed.orderBy.length > 0, 'a query without criteria has an order by');
  else assert.ok(NODE_KINDS.has(parsed.where.kind), `where.kind ${parsed.where.kind}`);
}

// ---- a printer: AST → query text (canonical spelling) -----------------------------------------

function printPath(p: PathRef): string {
  if (p.kind === 'pathParam') return `:${p.index}`;
  return p.steps
    .map((s) => `${s.name}${s.element === undefined ? '' : `[${s.element ?? ''}]`}${s.classIndex === undefined ? '' : `{${s.classIndex}}`}`)
    .join('.');
}

function printNumber(n: number): string {
  if (Object.is(n, -0)) return '-0';
  if (n === Infinity) return '1e999';
  if (n === -Infinity) return '-1e999';
  return String(n);
}

function printValue(v: ValueRef): string {
  switch (v.kind) {
    case 'param':
      return `:${v.index}`;
    case 'list':
      return `[${v.items.map(printValue).join(', ')}]`;
    case 'literal':
      if (v.quoted) return `'${String(v.value).replace(/[\\']/g, (c) => `\\${c}`)}'`;
      if (typeof v.value === 'number') return printNumber(v.value);
      // unquoted text is printed as it was read: it holds nothing that ends an unquoted value
      return String(v.value);
  }
}

function printNode(n: QueryNode): string {
  const group = (child: QueryNode, needs: boolean) => (needs ? `(${printNode(child)})` : printNode(child));
  switch (n.kind) {
    case 'compare': {
      const text = `${printPath(n.path)} ${n.op} ${printValue(n.value)}`;
      // An unquoted value may end in a logical keyword when the parser read it before a character
      // that does not end a keyword for it (`(a = x and)`, `a = x order by|b = 1`): printed before a
      // space that word would end the value, before ')' it does not.
      const endsInKeyword = n.value.kind === 'literal' && !n.value.quoted && typeof n.value.value === 'string' && /\s(and|or|except|order\s+by)$/i.test(n.value.value);
      return endsInKeyword ? `(${text})` : text;
    }
    case 'not':
      return `not ${group(n.operand, n.operand.kind === 'and' || n.operand.kind === 'or')}`;
    case 'and':
      return n.items.map((i, k) => `${k === 0 ? '' : i.except ? ' except ' : ' and '}${group(i.node, i.node.kind === 'and' || i.node.kind === 'or')}`).join('');
    case 'or':
      return n.items.map((i) => group(i, i.kind === 'or')).join(' or ');
  }
}

function printOrder(items: readonly OrderItem[]): string {
  return items.map((i) => `${printPath(i.path)}${i.descending ? ' desc' : ''}`).join(', ');
}

function printQuery(q: ParsedQuery): string {
  const where = q.where ? printNode(q.where) : '';
  if (q.orderBy.length === 0) return where;
  return `${where}${where ? ' ' : ''}order by ${printOrder(q.orderBy)}`;
}

/** What print → parse must keep: the tree and the order, without offsets or paths' source text. */
function assertRoundTrip(parsed: ParsedQuery): void {
  const printed = printQuery(parsed);
  let again: ParsedQuery;
  try {
    again = parseQuery(printed);
  } catch (e) {
    assert.fail(`the printed query ${JSON.stringify(printed)} (from ${JSON.stringify(parsed.text)}) does not parse: ${String(e)}`);
  }
  assert.deepEqual(strip(again.where, true), strip(parsed.where, true), `printed as ${JSON.stringify(printed)}`);
  assert.deepEqual(strip(again.orderBy, true), strip(parsed.orderBy, true), `printed as ${JSON.stringify(printed)}`);
}

/** Offsets point into the text at what the node was read from. */
function assertOffsets(parsed: ParsedQuery): void {
  const text = parsed.text;
  /** `:n` at the offset, perhaps written with leading zeros (:05) */
  const placeholderAt = (index: number, at: number) => new RegExp(`:0*${index}(?![0-9])`, 'y').test(text.slice(at));
  const path = (p: PathRef) => {
    if (p.kind === 'path') assert.equal(text.slice(p.at, p.at + p.text.length), p.text, `path offset ${p.at}`);
    else assert.ok(placeholderAt(p.index, p.at), `path placeholder offset ${p.at}`);
  };
  const value = (v: ValueRef): void => {
    if (v.kind === 'param') assert.ok(placeholderAt(v.index, v.at), `placeholder offset ${v.at}`);
    else if (v.kind === 'list') {
      assert.equal(text[v.at], '[', `list offset ${v.at}`);
      v.items.forEach(value);
    } else if (v.quoted) assert.ok(text[v.at] === "'" || text[v.at] === '"', `quoted offset ${v.at}`);
    else if (typeof v.value === 'string') assert.ok(text.startsWith(v.value, v.at), `text offset ${v.at}`);
  };
  const node = (n: QueryNode): void => {
    if (n.kind === 'compare') {
      assert.equal(n.at, n.path.at);
      path(n.path);
      value(n.value);
    } else if (n.kind === 'not') {
      assert.equal(text.slice(n.at, n.at + 3).toLowerCase(), 'not');
      node(n.operand);
    } else if (n.kind === 'or') n.items.forEach(node);
    else n.items.forEach((i) => node(i.node));
  };
  if (parsed.where) node(parsed.where);
  for (const o of parsed.orderBy) path(o.path);
}

// ---- a generator: the query grammar as arbitraries that carry both the text and the tree ----------

type Gen<T> = { text: string; ast: T };
type Ast<T> = T extends unknown ? StripAt<T> : never;
type StripAt<T> = T extends readonly (infer U)[] ? Ast<U>[] : T extends object ? { [K in keyof T as K extends 'at' ? never : K]: Ast<T[K]> } : T;

/** Every word the parser gives a meaning to somewhere: kept out of names and unquoted words. */
const KEYWORDS = /^(and|or|except|not|order|by|in|is|begin|asc|desc|true|false|null)(?![A-Za-z0-9_.])/i;
const NUMBER = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

const casing = (word: string): fc.Arbitrary<string> =>
  fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length }).map((up) => [...word].map((c, i) => (up[i] ? c.toUpperCase() : c.toLowerCase())).join(''));
/** whitespace that may be empty */
const ws0 = fc.constantFrom('', ' ', '  ', '\t', '\n', ' \r\n ');
/** whitespace that separates words */
const ws1 = fc.constantFrom(' ', '  ', '\t', '\n', ' \r\n ');

const nameArb = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,7}$/).filter((n) => !KEYWORDS.test(n));
const placeholderArb = fc.integer({ min: 1, max: MAX_QUERY_PARAMS });

const stepArb = fc
  .record({
    name: nameArb,
    element: fc.oneof({ arbitrary: fc.constant(undefined), weight: 4 }, fc.constant(null), fc.constantFrom(...'abcxyzABZ')),
    classIndex: fc.oneof({ arbitrary: fc.constant(undefined), weight: 4 }, fc.integer({ min: 1, max: 99 })),
  })
  .map(({ name, element, classIndex }) => {
    let text = name;
    const ast: { name: string; element?: string | null; classIndex?: number } = { name };
    if (element !== undefined) {
      text += `[${element ?? ''}]`;
      ast.element = element === null ? null : element.toLowerCase();
    }
    if (classIndex !== undefined) {
      text += `{${classIndex}}`;
      ast.classIndex = classIndex;
    }
    return { text, ast };
  });

const pathArb: fc.Arbitrary<Gen<Ast<PathRef>>> = fc.oneof(
  { arbitrary: fc.array(stepArb, { minLength: 1, maxLength: 3 }), weight: 6 },
  { arbitrary: placeholderArb, weight: 1 },
).map((x) => {
  if (typeof x === 'number') return { text: `:${x}`, ast: { kind: 'pathParam', index: x } };
  const text = x.map((s) => s.text).join('.');
  return { text, ast: { kind: 'path', steps: x.map((s) => s.ast), text } };
});

/** Characters of quoted texts: the awkward ones often, any code point (lone surrogates too) now and then. */
const quotedCharArb = fc.oneof(
  { arbitrary: fc.constantFrom("'", '"', '\\', ' ', '&', '|', '(', ')', '[', ']', ',', ':', '@', '=', 'a', 'Z', '1', '\t', '\n', '\u0000', 'é', '🙂', '\ud800'), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), weight: 1 },
);

const quotedArb: fc.Arbitrary<Gen<Ast<ValueRef>>> = fc
  .record({ value: fc.string({ unit: quotedCharArb, maxLength: 12 }), quote: fc.constantFrom("'", '"'), escapeOthers: fc.boolean() })
  .map(({ value, quote, escapeOthers }) => {
    // the backslash and the quote in use must be escaped; any other character may be
    const body = [...value].map((c) => (c === '\\' || c === quote || (escapeOthers && /[A-Za-z"']/.test(c)) ? `\\${c}` : c)).join('');
    return { text: `${quote}${body}${quote}`, ast: { kind: 'literal', value, quoted: true } };
  });

/**
 * Unquoted text: words (never keywords) with inner whitespace; nothing that ends the value early,
 * no quote (one first would begin a quoted text), no comparator character first (refused right after a
 * comparator).
 */
function unquotedArb(inList: boolean): fc.Arbitrary<Gen<Ast<ValueRef>>> {
  const chars = `abcXYZéü019@-./_#=!<>%~*$?\\(${inList ? '' : ',]'}`;
  const word = fc.string({ unit: fc.constantFrom(...chars), minLength: 1, maxLength: 6 }).filter((w) => !KEYWORDS.test(w));
  return fc
    .tuple(word, fc.array(fc.tuple(fc.constantFrom(' ', '  ', '\t'), word), { maxLength: 3 }))
    .map(([first, rest]) => first + rest.map(([s, w]) => s + w).join(''))
    .filter((t) => !/^[=!<>#%~:]/.test(t) && !NUMBER.test(t))
    .map((t) => ({ text: t, ast: { kind: 'literal', value: t, quoted: false } }));
}

const numberArb: fc.Arbitrary<Gen<Ast<ValueRef>>> = fc
  .tuple(fc.oneof(fc.integer({ min: -1e6, max: 1e6 }), fc.double({ noNaN: true, noDefaultInfinity: true })), fc.constantFrom('plain', 'exponent', 'zeros'))
  .map(([n, style]) => {
    let text = printNumber(n);
    if (style === 'exponent') text = Object.is(n, -0) ? '-0e0' : n.toExponential();
    // leading zeros keep a value text (a postcode), so that a text attribute keeps them
    else if (style === 'zeros' && /^\d+$/.test(text)) return { text: `00${text}`, ast: { kind: 'literal', value: `00${text}`, quoted: false } };
    return { text, ast: { kind: 'literal', value: n, quoted: false } };
  });

const keywordValueArb: fc.Arbitrary<Gen<Ast<ValueRef>>> = fc.constantFrom(true, false, null).map((v) => ({ text: String(v), ast: { kind: 'literal', value: v, quoted: false } }));
const paramArb: fc.Arbitrary<Gen<Ast<ValueRef>>> = placeholderArb.map((index) => ({ text: `:${index}`, ast: { kind: 'param', index } }));

const valueArb = (inList: boolean) => fc.oneof(quotedArb, unquotedArb(inList), numberArb, keywordValueArb, paramArb);

const listArb: fc.Arbitrary<Gen<Ast<ValueRef>>> = fc.oneof(
  { arbitrary: paramArb, weight: 1 },
  {
    arbitrary: fc.tuple(fc.array(fc.tuple(ws0, valueArb(true), ws0), { maxLength: 5 }), ws0).map(([items, inner]) => ({
      text: items.length === 0 ? `[${inner}]` : `[${items.map(([a, v, b]) => a + v.text + b).join(',')}]`,
      ast: { kind: 'list' as const, items: items.map(([, v]) => v.ast) },
    })),
    weight: 4,
  },
);

const SYMBOL_OPS: Comparator[] = ['=', '==', '===', '#', '!=', '!==', '<', '>', '<=', '>=', '%'];
const comparatorArb: fc.Arbitrary<{ op: Comparator; text: string; keyword: boolean }> = fc.oneof(
  { arbitrary: fc.constantFrom(...SYMBOL_OPS).map((op) => ({ op, text: op as string, keyword: false })), weight: 4 },
  { arbitrary: casing('is').map((text) => ({ op: 'IS' as Comparator, text, keyword: true })), weight: 1 },
  { arbitrary: fc.tuple(casing('is'), ws1, casing('not')).map(([a, s, b]) => ({ op: 'IS NOT' as Comparator, text: a + s + b, keyword: true })), weight: 1 },
  { arbitrary: casing('begin').map((text) => ({ op: 'begin' as Comparator, text, keyword: true })), weight: 1 },
  { arbitrary: casing('in').map((text) => ({ op: 'IN' as Comparator, text, keyword: true })), weight: 2 },
);

type NodeGen = Gen<Ast<QueryNode>>;

const compareArb: fc.Arbitrary<NodeGen> = fc
  .tuple(pathArb, comparatorArb, ws0, ws0, valueArb(false), listArb, ws1, ws1)
  .map(([path, cmp, s1, s2, value, inList, k1, k2]) => {
    const v = cmp.op === 'IN' ? inList : value;
    const text = cmp.keyword ? `${path.text}${k1}${cmp.text}${k2}${v.text}` : `${path.text}${s1}${cmp.text}${s2}${v.text}`;
    return { text, ast: { kind: 'compare', path: path.ast, op: cmp.op, value: v.ast } };
  });

/** A logical operator between two operands: keywords need whitespace around them, symbols do not. */
const joinArb = (symbols: string[], word: string) =>
  fc.oneof(fc.tuple(ws0, fc.constantFrom(...symbols), ws0).map(([a, s, b]) => a + s + b), fc.tuple(ws1, casing(word), ws1).map(([a, s, b]) => a + s + b));

const parenthesise = (g: NodeGen, needs: boolean, s1 = '', s2 = '') => (needs ? `(${s1}${g.text}${s2})` : g.text);

const nodeArb: fc.Memo<NodeGen> = fc.memo((n) => {
  if (n <= 1) return compareArb;
  const sub = nodeArb(n - 1);
  const andArb = fc
    .tuple(sub, fc.array(fc.tuple(fc.oneof(joinArb(['&', '&&'], 'and').map((t) => ({ t, except: false })), fc.tuple(ws1, casing('except'), ws1).map(([a, s, b]) => ({ t: a + s + b, except: true }))), sub), { minLength: 1, maxLength: 3 }))
    .map(([first, rest]): NodeGen => {
      const wrap = (g: NodeGen) => parenthesise(g, g.ast.kind === 'and' || g.ast.kind === 'or');
      return {
        text: wrap(first) + rest.map(([op, g]) => op.t + wrap(g)).join(''),
        ast: { kind: 'and', items: [{ node: first.ast, except: false }, ...rest.map(([op, g]) => ({ node: g.ast, except: op.except }))] },
      };
    });
  const orArb = fc.tuple(sub, fc.array(fc.tuple(joinArb(['|', '||'], 'or'), sub), { minLength: 1, maxLength: 3 })).map(([first, rest]): NodeGen => {
    const wrap = (g: NodeGen) => parenthesise(g, g.ast.kind === 'or');
    return { text: wrap(first) + rest.map(([op, g]) => op + wrap(g)).join(''), ast: { kind: 'or', items: [first.ast, ...rest.map(([, g]) => g.ast)] } };
  });
  const notArb = fc.tuple(casing('not'), ws1, ws0, sub, fc.boolean()).map(([word, s1, s0, g, paren]): NodeGen => {
    const needs = paren || g.ast.kind === 'and' || g.ast.kind === 'or';
    return { text: needs ? `${word}${s0}(${g.text})` : `${word}${s1}${g.text}`, ast: { kind: 'not', operand: g.ast } };
  });
  const groupArb = fc.tuple(ws0, sub, ws0).map(([a, g, b]): NodeGen => ({ text: parenthesise(g, true, a, b), ast: g.ast }));
  return fc.oneof({ arbitrary: compareArb, weight: 3 }, andArb, orArb, notArb, groupArb);
});

const orderItemArb = fc.tuple(pathArb, fc.option(fc.tuple(ws1, fc.oneof(casing('asc'), casing('desc'))), { nil: undefined })).map(([p, dir]) => ({
  text: p.text + (dir ? dir[0] + dir[1] : ''),
  ast: { path: p.ast, descending: dir !== undefined && dir[1].toLowerCase() === 'desc' },
}));

const orderByArb = (minLength: number) =>
  fc
    .tuple(casing('order'), ws1, casing('by'), ws1, fc.array(fc.tuple(orderItemArb, ws0, ws0), { minLength, maxLength: 3 }))
    .map(([o, s1, b, s2, items]) => ({
      text: items.length === 0 ? '' : `${o}${s1}${b}${s2}${items.map(([i, a, c], k) => (k === 0 ? '' : `${a},${c}`) + i.text).join('')}`,
      ast: items.map(([i]) => i.ast),
    }));

type QueryGen = { text: string; where: Ast<QueryNode> | null; orderBy: Ast<OrderItem>[] };

const queryArb: fc.Arbitrary<QueryGen> = fc.oneof(
  {
    arbitrary: fc.tuple(ws0, nodeArb(4), orderByArb(0), ws1, ws0).map(([lead, where, order, sep, trail]) => ({
      text: lead + where.text + (order.text ? sep + order.text : '') + trail,
      where: where.ast,
      orderBy: order.ast,
    })),
    weight: 9,
  },
  { arbitrary: fc.tuple(ws0, orderByArb(1), ws0).map(([lead, order, trail]) => ({ text: lead + order.text + trail, where: null, orderBy: order.ast })), weight: 1 },
);

// ---- (a) random text -------------------------------------------------------------------------

const TOKENS = [
  'a', 'name', 'employer.name', 'x_1', 'h[]', 'h[a]', 'r{2}', '{0}', '{', '}', '[', ']', '(', ')', ',', '.',
  '=', '==', '===', '!=', '!==', '#', '<', '>', '<=', '>=', '%', '!', 'IS', 'is not', 'IN', 'in', 'begin',
  'and', 'AND', 'or', 'OR', 'except', 'not', 'NOT', '&', '&&', '|', '||', 'order by', 'ORDER', 'by', 'asc', 'desc',
  "'", '"', '\\', "'x'", '"y z"', ':', ':1', ':0', ':128', ':129', ':name', '1', '-2.5e3', '.5', '1e999', 'true', 'null', '@',
  ' ', '  ', '\t', '\n', '\r', '\u0000', '\u001f', '\u007f', '\u00a0', '\u2028', '\ufeff', 'é', '東', '🙂', '\ud800', '\udfff',
];

describe('query fuzz: random text', () => {
  it('returns a well-formed parse or throws a DatasetError for any unicode string', TIMEOUT, () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 120 }), (text) => {
        const r = parseOrDatasetError(text);
        if (!(r instanceof DatasetError)) assertWellFormed(r, text);
      }),
      { numRuns: 1000 },
    );
  });

  it('returns a well-formed parse or throws a DatasetError for strings of query characters', TIMEOUT, () => {
    const unit = fc.constantFrom(...`aZ_09 .,:'"\\()[]{}=!<>#%&|@-+eE\t\n\u0000é🙂`);
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 80 }), (text) => {
        const r = parseOrDatasetError(text);
        if (!(r instanceof DatasetError)) {
          assertWellFormed(r, text);
          assertOffsets(r);
          assertRoundTrip(r);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('returns a well-formed parse or throws a DatasetError for sequences of query tokens', TIMEOUT, () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...TOKENS), fc.constantFrom('', ' ')), { maxLength: 30 }), (tokens) => {
        const text = tokens.map(([t, s]) => t + s).join('');
        const r = parseOrDatasetError(text);
        if (!(r instanceof DatasetError)) {
          assertWellFormed(r, text);
          assertOffsets(r);
          assertRoundTrip(r);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('answers long and deeply nested junk quickly', TIMEOUT, () => {
    fc.assert(
      fc.property(fc.constantFrom('(', 'not ', '( not(', '[', "'", 'a=', ' ', 'a = b ', 'a=1 and '), fc.integer({ min: 1, max: 3000 }), (unit, count) => {
        const text = unit.repeat(count);
        const started = performance.now();
        parseOrDatasetError(text);
        assert.ok(performance.now() - started < 2000, `${JSON.stringify(unit)} × ${count} took too long`);
      }),
      { numRuns: 300 },
    );
  });
});

// ---- (b) generated queries -------------------------------------------------------------------

describe('query fuzz: generated queries', () => {
  it('parses every generated query to the tree it was generated from', TIMEOUT, () => {
    fc.assert(
      fc.property(queryArb, (g) => {
        const parsed = parseQuery(g.text);
        assert.equal(parsed.text, g.text);
        assert.deepEqual(strip(parsed.where), g.where);
        assert.deepEqual(strip(parsed.orderBy), g.orderBy);
        assertOffsets(parsed);
      }),
      { numRuns: 1000 },
    );
  });

  it('prints every parsed query back to text that parses to the same tree', TIMEOUT, () => {
    fc.assert(
      fc.property(queryArb, (g) => assertRoundTrip(parseQuery(g.text))),
      { numRuns: 1000 },
    );
  });

  it('reads a generated unquoted value with a quote put inside it (not first) as text holding that quote', TIMEOUT, () => {
    fc.assert(
      fc.property(pathArb, unquotedArb(false), fc.nat(), fc.constantFrom("'", '"'), (path, value, at, quote) => {
        const text = value.text;
        const i = 1 + (at % text.length);
        const written = `${text.slice(0, i)}${quote}${text.slice(i)}`;
        const query = `${path.text} = ${written}`;
        const r = parseOrDatasetError(query);
        assert.ok(!(r instanceof DatasetError), `${JSON.stringify(query)}: ${r instanceof DatasetError ? r.message : ''}`);
        const where = r.where as { kind: string; value?: { kind: string; value: unknown; quoted: boolean } };
        assert.equal(where.kind, 'compare', JSON.stringify(query));
        assert.deepEqual([where.value?.value, where.value?.quoted], [written, false], JSON.stringify(query));
      }),
      { numRuns: 500 },
    );
  });

  it('prints the canonical text to itself', TIMEOUT, () => {
    fc.assert(
      fc.property(queryArb, (g) => {
        const printed = printQuery(parseQuery(g.text));
        assert.equal(printQuery(parseQuery(printed)), printed);
      }),
      { numRuns: 500 },
    );
  });
});

// ---- (c) mutated queries ---------------------------------------------------------------------

type Mutation = { kind: 'delete' | 'insert' | 'swap' | 'replace'; at: number; char: string };
const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('delete', 'insert', 'swap', 'replace'),
  at: fc.nat(),
  char: fc.constantFrom(...`()[]{}'"\\,.:=!<>#%&| \t@-1a_Zé🙂\u0000`, 'and ', ' or ', 'not ', ':0', ':129', ' order by '),
});

function mutate(text: string, m: Mutation): string {
  if (text.length === 0) return m.kind === 'insert' ? m.char : text;
  const i = m.at % text.length;
  switch (m.kind) {
    case 'delete':
      return text.slice(0, i) + text.slice(i + 1);
    case 'insert':
      return text.slice(0, i) + m.char + text.slice(i);
    case 'replace':
      return text.slice(0, i) + m.char + text.slice(i + 1);
    case 'swap':
      return i + 1 < text.length ? text.slice(0, i) + text[i + 1] + text[i] + text.slice(i + 2) : text;
  }
}

describe('query fuzz: mutated queries', () => {
  it('returns a well-formed parse (that prints back to the same tree) or throws a DatasetError', TIMEOUT, () => {
    fc.assert(
      fc.property(queryArb, fc.array(mutationArb, { minLength: 1, maxLength: 3 }), (g, mutations) => {
        const text = mutations.reduce(mutate, g.text);
        const r = parseOrDatasetError(text);
        if (!(r instanceof DatasetError)) {
          assertWellFormed(r, text);
          assertOffsets(r);
          assertRoundTrip(r);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
