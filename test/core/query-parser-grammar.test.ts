// parseQuery and parseOrderList: the ORDA query grammar (reference notes §4) read into the AST of
// src/query/ast.ts — comparators, logical operators, values, attribute paths, order by. Tables of
// query text → exact tree (offsets stripped where they do not matter). Malformed text, odd values
// and limits are query-parser-edges.test.ts; what they share, query-parser-shared.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_QUERY_PARAMS } from '../../src/config/limits.js';
import type { Comparator } from '../../src/query/ast.js';
import { parseOrderList, parseQuery } from '../../src/query/parser.js';
import { type Path, type Value, type Node, type Order, path, pathParam, lit, q, param, list, cmp, except, and, or, not, asc, desc, strip, assertWhere, assertQueryError } from './query-parser-shared.js';

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
