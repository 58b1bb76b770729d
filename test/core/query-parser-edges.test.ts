// parseQuery at its edges: malformed text → DatasetError naming the query, the offset and what
// was expected; unquoted values that begin with a comparator character or hold a quote; the
// limits (length, depth, IN lists, placeholders); values that look like numbers. The grammar
// itself is query-parser-grammar.test.ts; what they share, query-parser-shared.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_IN_LIST, MAX_QUERY_DEPTH, MAX_QUERY_LENGTH, MAX_QUERY_PARAMS } from '../../src/config/limits.js';
import { DatasetError } from '../../src/errors/dataset-error.js';
import { parseQuery } from '../../src/query/parser.js';
import { q, param, cmp, and, list, lit, strip, assertWhere, assertQueryError, type Node } from './query-parser-shared.js';

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

  // 4D's REST page shows $filter="lastName=O'Reilly": a quote inside an unquoted value belongs to
  // the value; only a value that begins with a quote is quoted text.
  const quotes: [string, string, Node][] = [
    // [name, query, what it reads]
    ["4D's own example, O'Reilly without spaces", "lastName=O'Reilly", cmp('lastName', '=', "O'Reilly")],
    ["an unquoted O'Brien after spaces", "lastName = O'Brien", cmp('lastName', '=', "O'Brien")],
    ['a quote at the end of an unquoted value', "name = smith'", cmp('name', '=', "smith'")],
    ['a double quote inside an unquoted value', 'size = 5" screen', cmp('size', '=', '5" screen')],
    ['a quoted word after unquoted words', "name = Acme 'Industries'", cmp('name', '=', "Acme 'Industries'")],
    ['both quotes', `name = it's "x"`, cmp('name', '=', `it's "x"`)],
    ['a backslash, kept as written outside quotes', "name = a\\b'c", cmp('name', '=', "a\\b'c")],
    ['a quote inside an unquoted IN item', "x in [Acme, O'Reilly]", cmp('x', 'IN', list(lit('Acme'), lit("O'Reilly")))],
    ['a quote inside an unquoted value before AND', "a = O'Brien and b = 1", and(cmp('a', '=', "O'Brien"), cmp('b', '=', 1))],
  ];
  for (const [name, text, where] of quotes) {
    it(`reads ${name}: ${JSON.stringify(text)}`, () => assertWhere(text, where));
  }

  it('still reads a value that begins with a quote as quoted text, and refuses what follows its closing quote', () => {
    assertWhere("lastName='Smith'", cmp('lastName', '=', q('Smith')));
    assert.throws(() => parseQuery("lastName='O'Reilly'"), (e: unknown) => e instanceof DatasetError && /at offset 12/.test(e.message));
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
