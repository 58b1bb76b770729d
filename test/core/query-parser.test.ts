// parseQuery and parseOrderList: the ORDA query grammar (reference notes §4) read into the AST of
// src/query/ast.ts. Tables of query text → exact tree (offsets stripped where they do not matter),
// and of malformed text → DatasetError naming the query, the offset and what was expected.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_IN_LIST, MAX_QUERY_DEPTH, MAX_QUERY_LENGTH, MAX_QUERY_PARAMS } from '../../src/config/limits.js';
import { DatasetError } from '../../src/errors/dataset-error.js';
import type { ErrorName } from '../../src/errors/registry.js';
import type { Comparator } from '../../src/query/ast.js';
import { parseOrderList, parseQuery } from '../../src/query/parser.js';

// ---- builders: the AST without offsets --------------------------------------------------------

type Step = { name: string; element?: string | null; classIndex?: number };
type Path = { kind: 'path'; steps: Step[]; text: string } | { kind: 'pathParam'; index: number };
type Value =
  | { kind: 'literal'; value: string | number | boolean | null; quoted: boolean }
  | { kind: 'param'; index: number }
  | { kind: 'list'; items: Value[] };
type Node =
  | { kind: 'compare'; path: Path; op: Comparator; value: Value }
  | { kind: 'and'; items: { node: Node; except: boolean }[] }
  | { kind: 'or'; items: Node[] }
  | { kind: 'not'; operand: Node };
type Order = { path: Path; descending: boolean };
/** an and-item marked EXCEPT */
type Except = { except: Node };

/** A dotted path of plain names; anything fancier is given as explicit steps. */
const path = (text: string, steps?: Step[]): Path => ({ kind: 'path', steps: steps ?? text.split('.').map((name) => ({ name })), text });
const pathParam = (index: number): Path => ({ kind: 'pathParam', index });
/** unquoted literal: text, number, true/false/null as the parser types them */
const lit = (value: string | number | boolean | null): Value => ({ kind: 'literal', value, quoted: false });
/** quoted text */
const q = (value: string): Value => ({ kind: 'literal', value, quoted: true });
const param = (index: number): Value => ({ kind: 'param', index });
const list = (...items: Value[]): Value => ({ kind: 'list', items });
const toValue = (v: Value | string | number | boolean | null): Value => (v !== null && typeof v === 'object' ? v : lit(v));
const cmp = (p: string | Path, op: Comparator, v: Value | string | number | boolean | null): Node => ({
  kind: 'compare',
  path: typeof p === 'string' ? path(p) : p,
  op,
  value: toValue(v),
});
const except = (node: Node): Except => ({ except: node });
const and = (...items: (Node | Except)[]): Node => ({
  kind: 'and',
  items: items.map((i) => ('except' in i && !('kind' in i) ? { node: i.except, except: true } : { node: i as Node, except: false })),
});
const or = (...items: Node[]): Node => ({ kind: 'or', items });
const not = (operand: Node): Node => ({ kind: 'not', operand });
const asc = (p: string | Path): Order => ({ path: typeof p === 'string' ? path(p) : p, descending: false });
const desc = (p: string | Path): Order => ({ path: typeof p === 'string' ? path(p) : p, descending: true });

/** A deep copy without the `at` offsets. */
function strip<T>(x: T): T {
  if (Array.isArray(x)) return x.map(strip) as T;
  if (x !== null && typeof x === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) if (k !== 'at') out[k] = strip(v);
    return out as T;
  }
  return x;
}

function assertWhere(text: string, expected: Node | null): void {
  const parsed = parseQuery(text);
  assert.equal(parsed.text, text);
  assert.deepEqual(strip(parsed.where), expected);
  assert.deepEqual(parsed.orderBy, []);
}

function assertQueryError(fn: () => unknown, code: ErrorName, ...mentions: string[]): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof DatasetError, `expected a DatasetError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    for (const m of mentions) assert.ok(e.message.includes(m), `message ${JSON.stringify(e.message)} should mention ${JSON.stringify(m)}`);
    return true;
  });
}

// ---- comparators -------------------------------------------------------------------------------

describe('parseQuery: comparators', () => {
  const cases: [string, string, Node][] = [
    ['= (wildcard equal)', 'name = Smith', cmp('name', '=', 'Smith')],
    ['== (wildcard equal)', 'name == Smith', cmp('name', '==', 'Smith')],
    ['=== (strict equal)', 'name === Smith', cmp('name', '===', 'Smith')],
    ['IS (strict equal)', 'name IS Smith', cmp('name', 'IS', 'Smith')],
    ['# (not equal)', 'name # Smith', cmp('name', '#', 'Smith')],
    ['!= (not equal)', 'name != Smith', cmp('name', '!=', 'Smith')],
    ['!== (strict not equal)', 'name !== Smith', cmp('name', '!==', 'Smith')],
    ['IS NOT (strict not equal)', 'name IS NOT Smith', cmp('name', 'IS NOT', 'Smith')],
    ['<', 'age < 30', cmp('age', '<', 30)],
    ['>', 'age > 30', cmp('age', '>', 30)],
    ['<=', 'age <= 30', cmp('age', '<=', 30)],
    ['>=', 'age >= 30', cmp('age', '>=', 30)],
    ['IN with a list', 'age IN [1, 2]', cmp('age', 'IN', list(lit(1), lit(2)))],
    ['% (contains keyword)', 'notes % urgent', cmp('notes', '%', 'urgent')],
    ['begin (REST)', 'lastName begin j', cmp('lastName', 'begin', 'j')],
    // keywords in any case
    ['is in lower case', 'name is Smith', cmp('name', 'IS', 'Smith')],
    ['Is in mixed case', 'name iS Smith', cmp('name', 'IS', 'Smith')],
    ['is not in lower case', 'name is not Smith', cmp('name', 'IS NOT', 'Smith')],
    ['IS NOT in mixed case with several spaces', 'name iS   nOt Smith', cmp('name', 'IS NOT', 'Smith')],
    ['in in lower case', 'age in [1]', cmp('age', 'IN', list(lit(1)))],
    ['In in mixed case', 'age In [1]', cmp('age', 'IN', list(lit(1)))],
    ['BEGIN in upper case', 'lastName BEGIN j', cmp('lastName', 'begin', 'j')],
    ['Begin in mixed case', 'lastName Begin j', cmp('lastName', 'begin', 'j')],
    // symbols without spaces: the longest symbol wins
    ['= without spaces', 'a=1', cmp('a', '=', 1)],
    ['== without spaces (not = then =)', 'a==1', cmp('a', '==', 1)],
    ['=== without spaces', 'a===1', cmp('a', '===', 1)],
    ['!= without spaces', 'a!=1', cmp('a', '!=', 1)],
    ['!== without spaces', 'a!==1', cmp('a', '!==', 1)],
    ['<= without spaces', 'a<=1', cmp('a', '<=', 1)],
    ['>= without spaces', 'a>=1', cmp('a', '>=', 1)],
    ['# without spaces', 'a#1', cmp('a', '#', 1)],
    ['IN directly followed by the bracket', 'a in[1]', cmp('a', 'IN', list(lit(1)))],
    ['IS directly followed by a quoted value', "a is'x'", cmp('a', 'IS', q('x'))],
    // a word starting with "not" after IS is a value, not IS NOT
    ['IS followed by a word that starts with "not"', 'a IS notable', cmp('a', 'IS', 'notable')],
    ['IS NOT before null', 'a IS NOT null', cmp('a', 'IS NOT', null)],
  ];
  for (const [name, text, expected] of cases) it(`reads ${name}: ${text}`, () => assertWhere(text, expected));
});

// ---- logical operators and precedence ------------------------------------------------------------

describe('parseQuery: logical operators', () => {
  const a = cmp('a', '=', 1);
  const b = cmp('b', '=', 2);
  const c = cmp('c', '=', 3);
  const d = cmp('d', '=', 4);
  const cases: [string, string, Node][] = [
    ['& as AND', 'a=1 & b=2', and(a, b)],
    ['&& as AND', 'a=1 && b=2', and(a, b)],
    ['& without spaces', 'a=1&b=2', and(a, b)],
    ['| as OR', 'a=1 | b=2', or(a, b)],
    ['|| as OR', 'a=1 || b=2', or(a, b)],
    ['|| without spaces', 'a=1||b=2', or(a, b)],
    ['and in lower case', 'a=1 and b=2', and(a, b)],
    ['AND in upper case', 'a=1 AND b=2', and(a, b)],
    ['And in mixed case', 'a=1 aNd b=2', and(a, b)],
    ['or in lower case', 'a=1 or b=2', or(a, b)],
    ['OR in upper case', 'a=1 OR b=2', or(a, b)],
    ['Or in mixed case', 'a=1 Or b=2', or(a, b)],
    ['except in lower case as AND NOT', 'a=1 except b=2', and(a, except(b))],
    ['EXCEPT in upper case', 'a=1 EXCEPT b=2', and(a, except(b))],
    ['Except in mixed case', 'a=1 ExCePt b=2', and(a, except(b))],
    ['a chain of ANDs as one n-ary node', 'a=1 and b=2 & c=3 && d=4', and(a, b, c, d)],
    ['a chain of ORs as one n-ary node', 'a=1 or b=2 | c=3 || d=4', or(a, b, c, d)],
    // precedence: OR < AND = EXCEPT < NOT < parentheses
    ['AND binding tighter than OR (OR first)', 'a=1 or b=2 and c=3', or(a, and(b, c))],
    ['AND binding tighter than OR (AND first)', 'a=1 and b=2 or c=3', or(and(a, b), c)],
    ['AND groups on both sides of an OR', 'a=1 & b=2 | c=3 & d=4', or(and(a, b), and(c, d))],
    ['EXCEPT and AND left to right at one level', 'a=1 EXCEPT b=2 AND c=3', and(a, except(b), c)],
    ['AND then EXCEPT at one level', 'a=1 AND b=2 EXCEPT c=3', and(a, b, except(c))],
    ['EXCEPT binding tighter than OR', 'a=1 or b=2 except c=3', or(a, and(b, except(c)))],
    ['parentheses overriding precedence', '(a=1 or b=2) and c=3', and(or(a, b), c)],
    ['parentheses on the right', 'a=1 and (b=2 or c=3)', and(a, or(b, c))],
    ['parentheses after EXCEPT', 'a=1 except (b=2 or c=3)', and(a, except(or(b, c)))],
    ['redundant parentheses adding no node', '((a=1))', a],
    ['parenthesised groups side by side', '(a=1 or b=2) and (c=3 or d=4)', and(or(a, b), or(c, d))],
    ['nested parentheses', '(a=1 and (b=2 or (c=3 and d=4)))', and(a, or(b, and(c, d)))],
    ['a parenthesised OR inside an OR kept as its own node', 'a=1 or (b=2 or c=3)', or(a, or(b, c))],
    ['spaces inside parentheses', '(  a=1  )', a],
    ['keywords directly before a parenthesis', 'a=1 and(b=2)or(c=3)', or(and(a, b), c)],
    // NOT
    ['NOT of a parenthesised group', 'NOT(a=1 or b=2)', not(or(a, b))],
    ['not in lower case with a space', 'not (a=1)', not(a)],
    ['NOT of a single criterion', 'not a=1', not(a)],
    ['NOT binding tighter than AND', 'not a=1 and b=2', and(not(a), b)],
    ['NOT binding tighter than OR', 'not a=1 or b=2', or(not(a), b)],
    ['NOT after AND', 'a=1 and not b=2', and(a, not(b))],
    ['NOT after EXCEPT', 'a=1 except not b=2', and(a, except(not(b)))],
    ['NOT NOT', 'not not a=1', not(not(a))],
    ['NOT inside NOT with parentheses', 'not(not (a=1))', not(not(a))],
    ['Not in mixed case', 'nOt(a=1)', not(a)],
    ['an attribute whose name starts with "not"', 'notes=1', cmp('notes', '=', 1)],
    ['an attribute whose name starts with "order"', 'orders=1', cmp('orders', '=', 1)],
  ];
  for (const [name, text, expected] of cases) it(`reads ${name}: ${text}`, () => assertWhere(text, expected));
});

// ---- values -----------------------------------------------------------------------------------

describe('parseQuery: values', () => {
  const cases: [string, string, Value][] = [
    // quoted text
    ['single-quoted text', "x = 'john'", q('john')],
    ['double-quoted text', 'x = "john"', q('john')],
    ['quoted text with spaces and logical keywords kept whole', "x = 'Smith and Wesson or not'", q('Smith and Wesson or not')],
    ['quoted text with operators and brackets inside', "x = 'a=1 & (b) | [c], :1'", q('a=1 & (b) | [c], :1')],
    ['an empty quoted text', "x = ''", q('')],
    ['a double quote inside single quotes', `x = 'say "hi"'`, q('say "hi"')],
    ['a single quote inside double quotes', `x = "O'Reilly"`, q("O'Reilly")],
    ['an escaped single quote', "x = 'it\\'s'", q("it's")],
    ['an escaped double quote', 'x = "say \\"hi\\""', q('say "hi"')],
    ['an escaped backslash', "x = 'a\\\\b'", q('a\\b')],
    ['a backslash before any other character (kept as that character)', "x = 'a\\nb'", q('anb')],
    ['quoted true, false and null as text', "x = 'true'", q('true')],
    ['quoted digits as text', "x = '42'", q('42')],
    ['a date as quoted text', "x = '2020-01-01'", q('2020-01-01')],
    ['non-ASCII quoted text', "x = 'Zürich 東京 🙂'", q('Zürich 東京 🙂')],
    // unquoted text
    ['unquoted text', 'x = john', lit('john')],
    ['unquoted text with inner spaces', 'x = Acme Industries', lit('Acme Industries')],
    ['unquoted text with several inner spaces kept as written', 'x = Acme   Industries', lit('Acme   Industries')],
    ['unquoted text with trailing spaces trimmed', 'x = Acme   ', lit('Acme')],
    ['unquoted text holding keywords inside words', 'x = Portland Oregon sandy', lit('Portland Oregon sandy')],
    ['unquoted text holding "not" and "in" as words', 'x = not in stock', lit('not in stock')],
    ['unquoted text holding comparator symbols', 'x = a=b', lit('a=b')],
    ['unquoted text holding comparator symbols after a space', 'x = a >= b', lit('a >= b')],
    ['an unquoted date as text', 'x = 2020-01-01', lit('2020-01-01')],
    ['unquoted TRUE (case-sensitive) as text', 'x = TRUE', lit('TRUE')],
    ['unquoted Null (case-sensitive) as text', 'x = Null', lit('Null')],
    ['unquoted text with a colon inside', 'x = 10:30', lit('10:30')],
    ['non-ASCII unquoted text', 'x = Zürich', lit('Zürich')],
    // wildcards stay as written
    ["a quoted trailing wildcard 'S@'", "x = 'S@'", q('S@')],
    ["a leading wildcard '@son'", "x = '@son'", q('@son')],
    ["a contains wildcard '@Smith@'", "x = '@Smith@'", q('@Smith@')],
    ['an unquoted wildcard @son', 'x = @son', lit('@son')],
    ['an unquoted trailing wildcard S@', 'x = S@', lit('S@')],
    // numbers
    ['an integer', 'x = 42', lit(42)],
    ['zero', 'x = 0', lit(0)],
    ['a negative integer', 'x = -7', lit(-7)],
    ['a decimal', 'x = 3.25', lit(3.25)],
    ['a decimal without a leading digit', 'x = .5', lit(0.5)],
    ['a negative decimal without a leading digit', 'x = -.5', lit(-0.5)],
    ['a number with an exponent', 'x = 1.5e3', lit(1500)],
    ['a number with a negative upper-case exponent', 'x = 25E-1', lit(2.5)],
    ['a number with a positive exponent sign', 'x = 1e+2', lit(100)],
    ['digits with inner spaces as text', 'x = 1 2', lit('1 2')],
    ['a plus sign as text (not a number)', 'x = +1', lit('+1')],
    ['hexadecimal as text', 'x = 0x10', lit('0x10')],
    // keywords
    ['true', 'x = true', lit(true)],
    ['false', 'x = false', lit(false)],
    ['null', 'x = null', lit(null)],
    // placeholders
    ['a placeholder', 'x = :1', param(1)],
    ['the highest placeholder', `x = :${MAX_QUERY_PARAMS}`, param(MAX_QUERY_PARAMS)],
    ['a placeholder without spaces', 'x=:12', param(12)],
    // IN lists
    ['an IN list of numbers', 'x IN [1, 2, 3]', list(lit(1), lit(2), lit(3))],
    ['an IN list of quoted texts', `x IN ['a', "b"]`, list(q('a'), q('b'))],
    ['an IN list of mixed values', "x in [1,'a',true,null,-2.5]", list(lit(1), q('a'), lit(true), lit(null), lit(-2.5))],
    ['an IN list with unquoted texts up to the commas', 'x in [Acme Industries, Reilly ,foo]', list(lit('Acme Industries'), lit('Reilly'), lit('foo'))],
    ['an IN list with an apostrophe inside a quoted item', `x in [Acme, "O'Reilly"]`, list(lit('Acme'), q("O'Reilly"))],
    ['an IN list with items that begin with comparator characters (not right after a comparator)', 'x in [=a, <b]', list(lit('=a'), lit('<b'))],
    ['an IN list with commas inside a quoted item', "x in ['a, b', 'c]']", list(q('a, b'), q('c]'))],
    ['an empty IN list', 'x IN []', list()],
    ['an empty IN list with a space', 'x IN [ ]', list()],
    ['an IN list of placeholders', 'x IN [:1, :2]', list(param(1), param(2))],
    ['IN with a placeholder for the whole list', 'x IN :3', param(3)],
    ['an IN list with wildcards', "x IN ['S@', '@son']", list(q('S@'), q('@son'))],
  ];
  for (const [name, text, value] of cases) {
    const op: Comparator = /^x in\b/i.test(text) ? 'IN' : '=';
    it(`reads ${name}: ${text}`, () => assertWhere(text, { kind: 'compare', path: path('x'), op, value }));
  }

  it('keeps unquoted text up to AND, OR, EXCEPT, &, |, ) and ORDER BY', () => {
    assertWhere('x = Acme Industries and y = 1', and(cmp('x', '=', 'Acme Industries'), cmp('y', '=', 1)));
    assertWhere('x = Acme Industries OR y = 1', or(cmp('x', '=', 'Acme Industries'), cmp('y', '=', 1)));
    assertWhere('x = Acme Industries except y = 1', and(cmp('x', '=', 'Acme Industries'), except(cmp('y', '=', 1))));
    assertWhere('x = Acme Industries & y = 1', and(cmp('x', '=', 'Acme Industries'), cmp('y', '=', 1)));
    assertWhere('x = Acme Industries|y = 1', or(cmp('x', '=', 'Acme Industries'), cmp('y', '=', 1)));
    assertWhere('(x = Acme Industries) and y = 1', and(cmp('x', '=', 'Acme Industries'), cmp('y', '=', 1)));
    assertWhere('x = Acme and(y = 1)', and(cmp('x', '=', 'Acme'), cmp('y', '=', 1)));
    assertWhere('x = 5&y=1', and(cmp('x', '=', 5), cmp('y', '=', 1)));
    const parsed = parseQuery('x = Acme Industries order by y');
    assert.deepEqual(strip(parsed.where), cmp('x', '=', 'Acme Industries'));
    assert.deepEqual(strip(parsed.orderBy), [asc('y')]);
  });

  it('records the offset of each value and of the criterion', () => {
    const parsed = parseQuery("name = 'x' and age in [1, :2]");
    assert.deepEqual(parsed.where, {
      kind: 'and',
      at: 0,
      items: [
        {
          node: { kind: 'compare', at: 0, op: '=', path: { kind: 'path', steps: [{ name: 'name' }], text: 'name', at: 0 }, value: { kind: 'literal', value: 'x', quoted: true, at: 7 } },
          except: false,
        },
        {
          node: {
            kind: 'compare',
            at: 15,
            op: 'IN',
            path: { kind: 'path', steps: [{ name: 'age' }], text: 'age', at: 15 },
            value: { kind: 'list', at: 22, items: [{ kind: 'literal', value: 1, quoted: false, at: 23 }, { kind: 'param', index: 2, at: 26 }] },
          },
          except: false,
        },
      ],
    });
  });
});

// ---- attribute paths -----------------------------------------------------------------------------

describe('parseQuery: attribute paths', () => {
  const cases: [string, string, Path][] = [
    ['a plain name', 'name = 1', path('name')],
    ['a name with underscores and digits', '_a1_b2 = 1', path('_a1_b2')],
    ['a relation path with dots', 'employer.name = 1', path('employer.name')],
    ['a three-step path', 'roles.actor.lastName = 1', path('roles.actor.lastName')],
    ['any element of a collection name[]', 'extraInfo.hobbies[].name = 1', path('extraInfo.hobbies[].name', [{ name: 'extraInfo' }, { name: 'hobbies', element: null }, { name: 'name' }])],
    ['a linked element name[a]', 'hobbies[a].level = 1', path('hobbies[a].level', [{ name: 'hobbies', element: 'a' }, { name: 'level' }])],
    ['a linked element letter lowercased name[B]', 'hobbies[B].level = 1', path('hobbies[B].level', [{ name: 'hobbies', element: 'b' }, { name: 'level' }])],
    ['a collection step last', 'tags[] = x', path('tags[]', [{ name: 'tags', element: null }])],
    ['a class index name{2}', 'roles.actor{2}.lastName = 1', path('roles.actor{2}.lastName', [{ name: 'roles' }, { name: 'actor', classIndex: 2 }, { name: 'lastName' }])],
    ['a many-digit class index', 'actor{12}.x = 1', path('actor{12}.x', [{ name: 'actor', classIndex: 12 }, { name: 'x' }])],
    ['a collection step with a class index', 'a[c]{3}.b = 1', path('a[c]{3}.b', [{ name: 'a', element: 'c', classIndex: 3 }, { name: 'b' }])],
    ['a placeholder as the attribute path', ':1 = 1234', pathParam(1)],
    ['a two-digit placeholder as the attribute path', ':17 = 1234', pathParam(17)],
  ];
  for (const [name, text, p] of cases) {
    it(`reads ${name}: ${text}`, () => {
      const where = strip(parseQuery(text).where) as Extract<Node, { kind: 'compare' }>;
      assert.equal(where.kind, 'compare');
      assert.deepEqual(where.path, p);
    });
  }

  it('reads placeholders for both paths and values', () => {
    assertWhere(":1 = 1234 and :2 = 'Smith'", and(cmp(pathParam(1), '=', 1234), cmp(pathParam(2), '=', q('Smith'))));
    assertWhere(':1 IN :2', cmp(pathParam(1), 'IN', param(2)));
  });

  it('keeps a keyword-named attribute when a comparator follows it', () => {
    assertWhere('in = 1', cmp('in', '=', 1));
    assertWhere('is = 1 and begin = 2', and(cmp('is', '=', 1), cmp('begin', '=', 2)));
    assertWhere('order = 1', cmp('order', '=', 1));
  });
});

// ---- order by --------------------------------------------------------------------------------

describe('parseQuery: order by', () => {
  const cases: [string, string, Node | null, Order[]][] = [
    ['an order by after a criterion', 'a=1 order by name', cmp('a', '=', 1), [asc('name')]],
    ['ORDER BY in upper case with DESC', 'a=1 ORDER BY name DESC', cmp('a', '=', 1), [desc('name')]],
    ['Order By in mixed case with Asc and Desc', 'a=1 Order bY x aSc, y DeSc', cmp('a', '=', 1), [asc('x'), desc('y')]],
    ['several items with relation paths', "a='x' order by campus.name desc, lastname, firstName asc", cmp('a', '=', q('x')), [desc('campus.name'), asc('lastname'), asc('firstName')]],
    ['items without spaces after commas', 'a=1 order by x,y desc,z', cmp('a', '=', 1), [asc('x'), desc('y'), asc('z')]],
    ['an order by after a complex where', '(a=1 or b=2) and not c=3 order by a', and(or(cmp('a', '=', 1), cmp('b', '=', 2)), not(cmp('c', '=', 3))), [asc('a')]],
    ['an order by right after a closing parenthesis', '(a=1)order by a', cmp('a', '=', 1), [asc('a')]],
    ['an order by with several spaces between the words', 'a=1 order \t by a', cmp('a', '=', 1), [asc('a')]],
    ['an order by on a placeholder path', 'a=1 order by :1 desc', cmp('a', '=', 1), [desc(pathParam(1))]],
    ['an order by on a collection path', 'a=1 order by tags[].name', cmp('a', '=', 1), [asc(path('tags[].name', [{ name: 'tags', element: null }, { name: 'name' }]))]],
    ['a query with only an order by', 'order by name desc', null, [desc('name')]],
    ['a query with only an order by and spaces around', '  ORDER BY a, b  ', null, [asc('a'), asc('b')]],
  ];
  for (const [name, text, where, orderBy] of cases) {
    it(`reads ${name}: ${text}`, () => {
      const parsed = parseQuery(text);
      assert.deepEqual(strip(parsed.where), where);
      assert.deepEqual(strip(parsed.orderBy), orderBy);
    });
  }

  it('records the offsets of order by paths', () => {
    assert.deepEqual(parseQuery('a=1 order by b desc').orderBy, [{ path: { kind: 'path', steps: [{ name: 'b' }], text: 'b', at: 13 }, descending: true }]);
  });
});

describe('parseOrderList', () => {
  const cases: [string, string, Order[]][] = [
    ['one attribute', 'lastName', [asc('lastName')]],
    ['a relation path and a direction', 'lastName desc, employer.name', [desc('lastName'), asc('employer.name')]],
    ['REST-style upper-case directions', 'salary DESC,lastName ASC,firstName ASC', [desc('salary'), asc('lastName'), asc('firstName')]],
    ['spaces around', '  a desc ,  b  ', [desc('a'), asc('b')]],
    ['a placeholder path', ':2 desc', [desc(pathParam(2))]],
    ['an attribute named like a direction prefix', 'ascent, descr desc', [asc('ascent'), desc('descr')]],
  ];
  for (const [name, text, expected] of cases) it(`reads ${name}: ${text}`, () => assert.deepEqual(strip(parseOrderList(text)), expected));

  const errors: [string, string, number, string][] = [
    ['an empty string', '', 0, 'an attribute name'],
    ['a trailing comma', 'a,', 2, 'an attribute name'],
    ['two attributes without a comma', 'a b', 2, 'a comma and another attribute'],
    ['an unknown direction', 'a descending', 2, 'a comma and another attribute'],
    ['a path ending in a dot', 'a.', 2, 'an attribute name after the dot'],
  ];
  for (const [name, text, offset, expected] of errors) {
    it(`rejects ${name}: ${JSON.stringify(text)}`, () =>
      assertQueryError(() => parseOrderList(text), 'INVALID_ORDER_BY', JSON.stringify(text), `at offset ${offset}`, `expected ${expected}`));
  }
});

// ---- errors ----------------------------------------------------------------------------------

describe('parseQuery: malformed queries', () => {
  const COMPARATOR_LIST = 'a comparator (=, ==, ===, IS, #, !=, !==, IS NOT, <, >, <=, >=, IN, %, begin)';
  const AFTER_CRITERION = 'AND, OR, EXCEPT, ORDER BY or the end of the query';
  const cases: [string, string, number, string, string][] = [
    // [name, query, offset, expected, found]
    ['an empty query', '', 0, 'a criterion', 'the end of the query'],
    ['a query of spaces', '   ', 3, 'a criterion', 'the end of the query'],
    ['a missing value at the end', 'a=', 2, 'a value', 'the end of the query'],
    ['a missing value before &', 'a= & b=1', 3, 'a value', "'& b=1'"],
    ['a missing value before )', '(a=)', 3, 'a value', "')'"],
    ['a missing comparator', 'a 1', 2, COMPARATOR_LIST, "'1'"],
    ['a missing comparator at the end', 'name', 4, COMPARATOR_LIST, 'the end of the query'],
    ['an unknown comparator', 'a ~ 1', 2, COMPARATOR_LIST, "'~ 1'"],
    ['a missing attribute', '= 1', 0, 'an attribute name', "'= 1'"],
    ['a missing criterion after AND', 'a=1 and', 7, 'an attribute name', 'the end of the query'],
    ['a missing criterion after OR', 'a=1 | ', 6, 'an attribute name', 'the end of the query'],
    ['two logical operators in a row', 'a=1 & | b=2', 6, 'an attribute name', "'| b=2'"],
    ['an unclosed single quote', "a='x", 2, "the closing ' of the text that starts here", "''x'"],
    ['an unclosed double quote', 'a = "x and b=1', 4, 'the closing " of the text that starts here', `'"x and b=1'`],
    ['a quote closed only by an escaped quote', "a='x\\'", 2, "the closing ' of the text that starts here", "''x\\''"],
    ['an unclosed parenthesis', '(a=1', 4, "')' to close the '(' at offset 0", 'the end of the query'],
    ['an unclosed inner parenthesis', '(a=1 or (b=2)', 13, "')' to close the '(' at offset 0", 'the end of the query'],
    ['an unclosed NOT parenthesis', 'not (a=1 and b=2', 16, "')' to close the '(' at offset 4", 'the end of the query'],
    ['a stray closing parenthesis', 'a=1)', 3, AFTER_CRITERION, "')'"],
    ['a stray closing parenthesis after a group', '(a=1))', 5, AFTER_CRITERION, "')'"],
    ['trailing garbage after a quoted value', "a='x' b", 6, AFTER_CRITERION, "'b'"],
    ['trailing garbage after a closing quote', "lastName='O'Reilly'", 12, AFTER_CRITERION, "'Reilly''"],
    ['an empty parenthesis', '()', 1, 'an attribute name', "')'"],
    ['a class index of zero', 'a{0}.b=1', 2, 'a class index of 1 or more in {…}', "'0}.b=1'"],
    ['an empty class index', 'a{}.b=1', 2, 'a class index of 1 or more in {…}', "'}.b=1'"],
    ['an unclosed class index', 'a{2.b=1', 3, "'}' to close the class index", "'.b=1'"],
    ['two letters in a collection step', 'a[ab].b=1', 3, "']' (a collection step is written name[] or name[a])", "'b].b=1'"],
    ['a digit in a collection step', 'a[1].b=1', 2, "']' (a collection step is written name[] or name[a])", "'1].b=1'"],
    ['a path ending in a dot', 'a. = 1', 2, 'an attribute name after the dot', "' = 1'"],
    ['a named placeholder as the attribute path', ':name = 1', 0, 'a numbered placeholder (:1, :2 …): named placeholders are not available through REST', "':name = 1'"],
    ['a named placeholder as the IN list', 'a IN :list', 5, 'a numbered placeholder (:1, :2 …): named placeholders are not available through REST', "':list'"],
    ['a bare colon as the attribute path', ': = 1', 0, 'a placeholder :1, :2 …', "': = 1'"],
    ['IN without a list', 'a IN 1', 5, "a list in brackets ([1, 2] or ['a', 'b']) or a :n placeholder after IN", "'1'"],
    ['IN at the end', 'a IN', 4, "a list in brackets ([1, 2] or ['a', 'b']) or a :n placeholder after IN", 'the end of the query'],
    ['an unclosed IN list', 'a IN [1, 2', 10, "',' or ']' in the IN list", 'the end of the query'],
    ['an IN list with an empty item', 'a IN [1,,2]', 8, 'a value', "',2]'"],
    ['an IN list with a trailing comma', 'a IN [1,]', 8, 'a value', "']'"],
    ['an IN list missing a comma', "a IN ['x' 'y']", 10, "',' or ']' in the IN list", `''y']'`],
    ['ORDER without BY', "a='x' order name", 6, AFTER_CRITERION, "'order name'"],
    ['ORDER BY without an attribute', 'a=1 order by', 12, 'an attribute name', 'the end of the query'],
    ['ORDER BY with a trailing comma', 'a=1 order by a,', 15, 'an attribute name', 'the end of the query'],
    ['a long rest of the query shortened in the message', "a='1' b=2 and c=3 and d=4", 6, AFTER_CRITERION, "'b=2 and c=3 …'"],
  ];
  for (const [name, text, offset, expected, found] of cases) {
    it(`rejects ${name}: ${JSON.stringify(text)} at offset ${offset}`, () =>
      assertQueryError(() => parseQuery(text), 'INVALID_FILTER', `the query ${JSON.stringify(text)}`, `at offset ${offset}:`, `expected ${expected}, found ${found}`));
  }

  const placeholders: [string, string, number][] = [
    ['placeholder :0 as a value', 'a = :0', 4],
    [`placeholder :${MAX_QUERY_PARAMS + 1} as a value`, `a = :${MAX_QUERY_PARAMS + 1}`, 4],
    ['placeholder :0 as the attribute path', ':0 = 1', 0],
    [`placeholder :${MAX_QUERY_PARAMS + 1} as the attribute path`, `:${MAX_QUERY_PARAMS + 1} = 1`, 0],
    ['placeholder :0 in an IN list', 'a in [1, :0]', 9],
    ['placeholder :0 as the IN list', 'a in :0', 5],
    ['a huge placeholder number', 'a = :99999999999999999999999', 4],
  ];
  for (const [name, text, offset] of placeholders) {
    it(`rejects ${name}: ${JSON.stringify(text)}`, () =>
      assertQueryError(() => parseQuery(text), 'INVALID_FILTER', JSON.stringify(text), `at offset ${offset}`, `placeholders are numbered from :1 to :${MAX_QUERY_PARAMS}`));
  }

  it('rejects a named placeholder as a value', () =>
    assertQueryError(() => parseQuery('lastName = :name'), 'INVALID_FILTER', '"lastName = :name"', 'at offset 11', 'named placeholders are not available through REST'));

  it('names a comma, not a criterion or AND/OR, as expected after an order by item', () => {
    assertQueryError(() => parseQuery('order by a b'), 'INVALID_FILTER', '"order by a b"', 'at offset 11', 'expected a comma');
    assertQueryError(() => parseQuery('x=1 order by a b'), 'INVALID_FILTER', '"x=1 order by a b"', 'at offset 15', 'expected a comma');
  });

  it('shortens a very long query quoted in the message', () => {
    const text = `a=1 ) ${'x'.repeat(300)}`;
    assertQueryError(() => parseQuery(text), 'INVALID_FILTER', `${JSON.stringify(text.slice(0, 197) + '...')}`, 'at offset 4');
  });
});

// ---- unquoted values that a quote or a comparator would misread -------------------------------

describe('parseQuery: unquoted values that begin with a comparator character or hold a quote', () => {
  const HINT = 'write the value quoted or as a :1 placeholder with $params';
  const leading: [string, string, number, string, string][] = [
    // [name, query, offset, comparator read, found]
    ["the issue's example: =~ read as = then the text \"~ 'x'\"", "firstName =~ 'x'", 11, '=', `'~ 'x''`],
    ['=> (a mistyped >=)', 'salary => 5', 8, '=', "'> 5'"],
    ['=< (a mistyped <=)', 'salary =< 5', 8, '=', "'< 5'"],
    ['<> (SQL not-equal)', 'salary <> 5', 8, '<', "'> 5'"],
    ['=! (a mistyped !=)', 'name =! smith', 6, '=', "'! smith'"],
    ['a doubled #', 'name ## smith', 6, '#', "'# smith'"],
    ['a doubled %', 'name %% smith', 6, '%', "'% smith'"],
    ['==== (one = too many)', 'name ==== smith', 8, '===', "'= smith'"],
    ['a comparator character after a space', 'name = <none>', 7, '=', "'<none>'"],
    ['a comparator character after begin', 'name begin =x', 11, 'begin', "'=x'"],
    ['a comparator character after IS NOT', 'name is not #x', 12, 'IS NOT', "'#x'"],
    ['a comparator character before AND', 'name = ~ and b = 1', 7, '=', "'~ and b = 1'"],
  ];
  for (const [name, text, offset, op, found] of leading) {
    it(`refuses ${name}: ${JSON.stringify(text)} at offset ${offset}`, () =>
      assertQueryError(() => parseQuery(text), 'INVALID_FILTER', `the query ${JSON.stringify(text)} at offset ${offset}: expected a value after ${op}, found ${found}`, 'cannot begin with = ! < > # % ~', HINT));
  }

  it("answers firstName =~ 'x' with errCode 7017 and the offset of the ~", () => {
    assert.throws(
      () => parseQuery("firstName =~ 'x'"),
      (e: unknown) => e instanceof DatasetError && e.toWire()[0].errCode === 7017 && /^cannot read the query "firstName =~ 'x'" at offset 11: expected a value after =, found '~ 'x''/.test(e.message),
    );
  });

  const quotes: [string, string, number, string, string][] = [
    // [name, query, offset of the quote, found, suggested quoted value]
    ["an unquoted O'Brien", "lastName = O'Brien", 12, `a single quote (') inside the unquoted value 'O'Brien'`, `"O'Brien"`],
    ["an unquoted O'Reilly without spaces", "x=O'Reilly", 3, `a single quote (') inside the unquoted value 'O'Reilly'`, `"O'Reilly"`],
    ['a quote at the end of an unquoted value', "name = smith'", 12, `a single quote (') inside the unquoted value 'smith''`, `"smith'"`],
    ['a double quote inside an unquoted value', 'size = 5" screen', 8, `a double quote (") inside the unquoted value '5" screen'`, `'5" screen'`],
    ['a quoted word after unquoted words', "name = Acme 'Industries'", 12, `a single quote (') inside the unquoted value 'Acme 'Industries''`, `"Acme 'Industries'"`],
    ['both quotes (the suggestion escapes them)', `name = it's "x"`, 9, `a single quote (') inside the unquoted value 'it's "x"'`, `"it's \\"x\\""`],
    ['a backslash too (the suggestion escapes it)', "name = a\\b'c", 10, `a single quote (') inside the unquoted value 'a\\b'c'`, `"a\\\\b'c"`],
    ['a quote inside an unquoted IN item', "x in [Acme, O'Reilly]", 13, `a single quote (') inside the unquoted value 'O'Reilly'`, `"O'Reilly"`],
    ['a quote inside an unquoted value before AND', "a = O'Brien and b = 1", 5, `a single quote (') inside the unquoted value 'O'Brien'`, `"O'Brien"`],
  ];
  for (const [name, text, offset, found, suggested] of quotes) {
    it(`refuses ${name}: ${JSON.stringify(text)} at the offset of the quote (${offset})`, () =>
      assertQueryError(
        () => parseQuery(text),
        'INVALID_FILTER',
        `the query ${JSON.stringify(text)} at offset ${offset}: expected a value, found ${found}`,
        `an unquoted value cannot hold a quote: write it quoted, ${suggested}, or pass it as a :1 placeholder with $params`,
      ));
  }

  it('suggests quoted text that reads back as the refused value', () => {
    for (const raw of ["O'Brien", '5" screen', `it's "x"`, "a\\b'c"]) {
      const text = `name = ${raw}`;
      let suggested = '';
      try {
        parseQuery(text);
      } catch (e) {
        suggested = /write it quoted, (.*), or pass it/.exec((e as Error).message)?.[1] ?? '';
      }
      assert.deepEqual(strip(parseQuery(`name = ${suggested}`).where), cmp('name', '=', q(raw)), `suggested ${suggested} for ${raw}`);
    }
  });

  it('does not repeat a long refused value in the suggestion', () => {
    const text = `name = ${'y'.repeat(50)}'`;
    assertQueryError(() => parseQuery(text), 'INVALID_FILTER', `at offset 57:`, `'${'y'.repeat(40)}…'`, 'write the value quoted, or pass it');
  });

  it('keeps reading the quoted and placeholder forms of the same values', () => {
    assertWhere(`lastName = "O'Brien"`, cmp('lastName', '=', q("O'Brien")));
    assertWhere("lastName = 'O\\'Brien'", cmp('lastName', '=', q("O'Brien")));
    assertWhere("firstName = '~x'", cmp('firstName', '=', q('~x')));
    assertWhere('firstName = :1', cmp('firstName', '=', param(1)));
    assertWhere('name = a=b and c = x<y', and(cmp('name', '=', 'a=b'), cmp('c', '=', 'x<y')));
    assertWhere('name = @son', cmp('name', '=', '@son'));
    assertWhere('salary >= -5', cmp('salary', '>=', -5));
  });
});

// ---- limits ----------------------------------------------------------------------------------

describe('parseQuery: limits', () => {
  const nested = (levels: number) => `${'('.repeat(levels)}a=1${')'.repeat(levels)}`;

  it(`reads a query of exactly MAX_QUERY_LENGTH (${MAX_QUERY_LENGTH}) characters`, () => {
    const text = `a='${'x'.repeat(MAX_QUERY_LENGTH - 4)}'`;
    assert.equal(text.length, MAX_QUERY_LENGTH);
    assert.equal((strip(parseQuery(text).where) as any).value.value.length, MAX_QUERY_LENGTH - 4);
  });

  it('rejects a query longer than MAX_QUERY_LENGTH with LIMIT_EXCEEDED', () => {
    const text = `a='${'x'.repeat(MAX_QUERY_LENGTH - 3)}'`;
    assertQueryError(() => parseQuery(text), 'LIMIT_EXCEEDED', String(MAX_QUERY_LENGTH + 1), String(MAX_QUERY_LENGTH));
  });

  it(`reads ${MAX_QUERY_DEPTH - 1} nested parentheses`, () => assertWhere(nested(MAX_QUERY_DEPTH - 1), cmp('a', '=', 1)));

  it(`reads exactly MAX_QUERY_DEPTH (${MAX_QUERY_DEPTH}) nested parentheses`, () =>
    assertWhere(nested(MAX_QUERY_DEPTH), cmp('a', '=', 1)));

  it('rejects parentheses nested deeper than MAX_QUERY_DEPTH with LIMIT_EXCEEDED', () =>
    assertQueryError(() => parseQuery(nested(MAX_QUERY_DEPTH + 1)), 'LIMIT_EXCEEDED', `deeper than ${MAX_QUERY_DEPTH} levels`, JSON.stringify(nested(MAX_QUERY_DEPTH + 1))));

  it('rejects NOTs nested deeper than MAX_QUERY_DEPTH with LIMIT_EXCEEDED', () =>
    assertQueryError(() => parseQuery(`${'not '.repeat(MAX_QUERY_DEPTH + 1)}a=1`), 'LIMIT_EXCEEDED', `deeper than ${MAX_QUERY_DEPTH} levels`));

  it('counts NOT and parentheses together towards MAX_QUERY_DEPTH', () =>
    assertQueryError(() => parseQuery(`${'not ('.repeat(MAX_QUERY_DEPTH)}a=1${')'.repeat(MAX_QUERY_DEPTH)}`), 'LIMIT_EXCEEDED', `deeper than ${MAX_QUERY_DEPTH} levels`));

  it('rejects thousands of opening parentheses with LIMIT_EXCEEDED, not a stack overflow', () =>
    assertQueryError(() => parseQuery('('.repeat(MAX_QUERY_LENGTH)), 'LIMIT_EXCEEDED', `deeper than ${MAX_QUERY_DEPTH} levels`));

  it('reads long flat AND and OR chains without a depth limit', () => {
    const parts = Array.from({ length: 500 }, (_, i) => `a${i}=${i}`);
    assert.equal((parseQuery(parts.join(' and ')).where as any).items.length, 500);
    assert.equal((parseQuery(parts.join(' | ')).where as any).items.length, 500);
  });

  it('reads the longest IN list that fits in a query', () => {
    const count = Math.min(MAX_IN_LIST, Math.floor((MAX_QUERY_LENGTH - 'a in []'.length + 1) / 2));
    const text = `a in [${Array.from({ length: count }, () => '1').join(',')}]`;
    assert.ok(text.length <= MAX_QUERY_LENGTH);
    assert.equal((parseQuery(text).where as any).value.items.length, count);
  });

  it('rejects an IN list above MAX_IN_LIST with LIMIT_EXCEEDED', () => {
    // with today's limits such a list is always longer than MAX_QUERY_LENGTH, so the length check fires first
    const text = `a in [${Array.from({ length: MAX_IN_LIST + 1 }, () => '1').join(',')}]`;
    assertQueryError(() => parseQuery(text), 'LIMIT_EXCEEDED');
  });
});

describe('parseQuery: values that look like numbers', () => {
  it('keeps an unquoted value with leading zeros as text (a postcode keeps its zeros)', () => {
    const q = parseQuery('zip = 01234');
    assert.equal(q.where?.kind, 'compare');
    const value = (q.where as Extract<NonNullable<typeof q.where>, { kind: 'compare' }>).value;
    assert.deepEqual({ ...value, at: 0 }, { kind: 'literal', value: '01234', quoted: false, at: 0 });
  });
  it('reads a number too large for a double as text, not Infinity', () => {
    const q = parseQuery('x = 1e999');
    const value = (q.where as Extract<NonNullable<typeof q.where>, { kind: 'compare' }>).value;
    assert.equal((value as { value: unknown }).value, '1e999');
  });
  it('refuses a logical keyword where a value should be', () => {
    assert.throws(() => parseQuery('a = and b = 1'), /at offset 4: expected a value/);
  });
});
