// parseRestPath: the REST URL grammar after /rest, and keyInUri, the way we write keys back into URIs.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_PATH_SEGMENTS } from '../../src/config/limits.js';
import { DatasetError } from '../../src/errors/dataset-error.js';
import type { ErrorName } from '../../src/errors/registry.js';
import { keyInUri, parseRestPath, type Route } from '../../src/rest/request/url.js';

const all = { kind: 'all' } as const;
const dataClass = (name: string, selector: object = all, path: object[] = []): Route =>
  ({ kind: 'dataClass', dataClass: name, selector, path }) as Route;
const key = (k: string) => ({ kind: 'key', key: k });
const names = (...n: string[]) => ({ kind: 'names', names: n });
const call = (name: string, ...args: object[]) => ({ kind: 'call', name, args });
const plain = (text: string) => ({ text, quoted: false });
const quoted = (text: string) => ({ text, quoted: true });

function assertDatasetError(fn: () => unknown, code: ErrorName, mentions: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof DatasetError, `expected a DatasetError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    assert.ok(e.message.includes(mentions), `message ${JSON.stringify(e.message)} should name ${JSON.stringify(mentions)}`);
    return true;
  });
}

describe('parseRestPath: dataclass routes', () => {
  const cases: [string, string, Route][] = [
    ['a dataclass', '/Company', dataClass('Company')],
    ['a key in parentheses', '/Company(1)', dataClass('Company', key('1'))],
    ['a key in brackets', '/Company[1]', dataClass('Company', key('1'))],
    ['a double-quoted key with a slash inside', '/Company("A/B")', dataClass('Company', key('A/B'))],
    ['a single-quoted key', "/Company('A B')", dataClass('Company', key('A B'))],
    ['a percent-encoded quoted key with an encoded slash', '/Company(%22A%2FB%22)', dataClass('Company', key('A/B'))],
    ['a percent-encoded key with an encoded slash', '/Company(A%2FB)', dataClass('Company', key('A/B'))],
    ['a percent-encoded non-ASCII key', '/Company(Z%C3%BCrich)', dataClass('Company', key('Zürich'))],
    ['a quoted key with brackets inside', '/Company("A(1)")', dataClass('Company', key('A(1)'))],
    ['an attribute selector', '/Company:companyCode(Acme001)', dataClass('Company', { kind: 'attribute', attribute: 'companyCode', value: 'Acme001' })],
    ['a quoted attribute selector', '/Company:companyCode("Acme 001")', dataClass('Company', { kind: 'attribute', attribute: 'companyCode', value: 'Acme 001' })],
    ['an encoded attribute selector value', '/Company:name(Acme%20%26%20Co)', dataClass('Company', { kind: 'attribute', attribute: 'name', value: 'Acme & Co' })],
    ['a relation after a key', '/Company(1)/staff', dataClass('Company', key('1'), [names('staff')])],
    ['a relation after a quoted key with a slash', '/Company("A/B")/staff', dataClass('Company', key('A/B'), [names('staff')])],
    ['an attribute list', '/Employee/firstName,lastName', dataClass('Employee', all, [names('firstName', 'lastName')])],
    ['an attribute list with spaces and paths', '/Employee/firstName,%20employer.name', dataClass('Employee', all, [names('firstName', 'employer.name')])],
    ['a * attribute path', '/Employee/employer.*', dataClass('Employee', all, [names('employer.*')])],
    ['a relation then an attribute list', '/Company(1)/staff/firstName,lastName', dataClass('Company', key('1'), [names('staff'), names('firstName', 'lastName')])],
    ['a trailing slash', '/Company/', dataClass('Company')],
    ['double slashes', '//Company(1)//staff//', dataClass('Company', key('1'), [names('staff')])],
    ['a path without a leading slash', 'Company', dataClass('Company')],
    ['an entity set', '/Company/$entityset/ABC-123', dataClass('Company', all, [{ kind: 'entitySet', id: 'ABC-123' }])],
    ['an entity set without an id', '/Company/$entityset', dataClass('Company', all, [{ kind: 'entitySet', id: '' }])],
    ['an entity set then attributes', '/Company/$entityset/E1/name,ID', dataClass('Company', all, [{ kind: 'entitySet', id: 'E1' }, names('name', 'ID')])],
    ['a call with parameters in the URL', '/Employee/addEmployee(John,Smith)', dataClass('Employee', all, [call('addEmployee', plain('John'), plain('Smith'))])],
    ['a call without parameters', '/Employee/list()', dataClass('Employee', all, [call('list')])],
    ['a call after a key', '/Employee(1)/raise(10)', dataClass('Employee', key('1'), [call('raise', plain('10'))])],
    ['a call with quoted parameters holding commas, quotes, slashes and brackets', `/Employee/f("a,b",'c"d',"e/f","g)h")`,
      dataClass('Employee', all, [call('f', quoted('a,b'), quoted('c"d'), quoted('e/f'), quoted('g)h'))])],
    ['a call with encoded quotes, an encoded comma and spaces', '/Employee/f(%22a,b%22,%27c%27,x%2Cy,%20z%20)',
      dataClass('Employee', all, [call('f', quoted('a,b'), quoted('c'), plain('x,y'), plain('z'))])],
    ['a call whose parentheses are encoded too', '/Employee/f%28a%29', dataClass('Employee', all, [call('f', plain('a'))])],
    // issue 14 (F3): a segment is read once as written, each parameter decoded once
    ['a fully encoded call: its %2C is a character, as with written parentheses', '/Company/byCode%28C1000%2CC1001%29',
      dataClass('Company', all, [call('byCode', plain('C1000,C1001'))])],
    ['a fully encoded call holding an encoded %28 (decoded once)', '/Company/byCode%28C%2528%29', dataClass('Company', all, [call('byCode', plain('C%28'))])],
    ['a fully encoded call holding a %', '/Company/byCode%28100%25%29', dataClass('Company', all, [call('byCode', plain('100%'))])],
    ['a fully encoded call with written commas and encoded quotes', '/Company/f%28a,%22b%2Cc%22,%27d%29%27%29',
      dataClass('Company', all, [call('f', plain('a'), quoted('b,c'), quoted('d)'))])],
    ['a call with written parentheses: %28 %29 are characters', '/Company/f(a%29,%28b)', dataClass('Company', all, [call('f', plain('a)'), plain('(b'))])],
    ['a call with an encoded %25 (decoded once)', '/Company/f(a%2529)', dataClass('Company', all, [call('f', plain('a%29'))])],
    ['what encodeURIComponent sends', `/Company/${encodeURIComponent('byCode(a,b%)')}`, dataClass('Company', all, [call('byCode', plain('a,b%'))])],
    // issue 14 (F4): spaces around a parameter, written or encoded, are not part of it
    ['a call with %20 before and after quoted parameters', '/Company/f(%20%22C1000%22%20,%20\'x\'%20)', dataClass('Company', all, [call('f', quoted('C1000'), quoted('x'))])],
    ['a call with %20 after a comma', '/Company/f(C1000,%20C1001,%2012)', dataClass('Company', all, [call('f', plain('C1000'), plain('C1001'), plain('12'))])],
    ['a call keeping the spaces inside quotes and between words', '/Company/f(%22%20a%20%22,a%20b)', dataClass('Company', all, [call('f', quoted(' a '), plain('a b'))])],
    ['a call of spaces only', '/Company/f(%20)', dataClass('Company', all, [call('f')])],
    // issue 14 (F5): a parenthesis inside quotes is a character
    ['a call with parentheses in quotes', '/Company/f("a)(b",%22(%22)', dataClass('Company', all, [call('f', quoted('a)(b'), quoted('('))])],
    ['a call with a quoted parameter after a comma holding a slash and parentheses', '/Company/f(a, "b/c)",%20%27(d%27,%22e/f%22)',
      dataClass('Company', all, [call('f', plain('a'), quoted('b/c)'), quoted('(d'), quoted('e/f'))])],
    ['a call whose apostrophe is a character, not a quote', "/Company/f(a,O'Brien)", dataClass('Company', all, [call('f', plain('a'), plain("O'Brien"))])],
    ['a call on an entity set', '/Employee/f(1)/$entityset/E1', dataClass('Employee', all, [call('f', plain('1')), { kind: 'entitySet', id: 'E1' }])],
  ];
  for (const [what, path, route] of cases) {
    it(`parses ${what}: ${path}`, () => {
      assert.deepEqual(parseRestPath(path), route);
    });
  }

  it(`accepts ${MAX_PATH_SEGMENTS} segments after the dataclass`, () => {
    const route = parseRestPath(`/Company/${Array(MAX_PATH_SEGMENTS).fill('a').join('/')}`);
    assert.equal(route.kind === 'dataClass' && route.path.length, MAX_PATH_SEGMENTS);
  });
});

describe('parseRestPath: $catalog routes', () => {
  const cases: [string, Route][] = [
    ['/$catalog', { kind: 'catalog' }],
    ['/$catalog/', { kind: 'catalog' }],
    ['/$catalog/$all', { kind: 'catalogAll' }],
    ['/$catalog/Company', { kind: 'catalogItem', name: 'Company' }],
    ['/$singleton/Tools/serverTime', { kind: 'singleton', className: 'Tools', fn: 'serverTime' }],
    ['/$singleton/Tools/serverTime/', { kind: 'singleton', className: 'Tools', fn: 'serverTime' }],
  ];
  for (const [path, route] of cases) {
    it(`parses ${path}`, () => {
      assert.deepEqual(parseRestPath(path), route);
    });
  }
});

describe('parseRestPath: errors name the offending text', () => {
  const cases: [string, string, ErrorName, string][] = [
    // what, path, code, text the message names
    ['an unclosed parenthesis', '/Company(1', 'MALFORMED_URL', '/Company(1'],
    ['an unclosed bracket', '/Company[1/staff', 'MALFORMED_URL', '/Company[1/staff'],
    ['an unclosed quote', '/Company("A)', 'MALFORMED_URL', '/Company("A)'],
    ['mismatched brackets', '/Company(1]', 'MALFORMED_URL', 'Company(1]'],
    ['text after the key', '/Company(1)x', 'MALFORMED_URL', 'Company(1)x'],
    ['bad percent-encoding in a key', '/Company(%E0%A4%A)', 'MALFORMED_URL', '%E0%A4%A'],
    ['bad percent-encoding in the dataclass name', '/Comp%ZZany', 'MALFORMED_URL', 'Comp%ZZany'],
    ['bad percent-encoding in a segment', '/Company/sta%ff', 'MALFORMED_URL', 'sta%ff'],
    ['an unknown $ resource', '/$foo', 'UNKNOWN_RESOURCE', '$foo'],
    ['an unknown $ resource with more segments', '/$foo/bar', 'UNKNOWN_RESOURCE', '$foo'],
    ['nothing after /rest', '/', 'UNKNOWN_RESOURCE', '$catalog'],
    ['an empty key in parentheses', '/Company()', 'MALFORMED_URL', 'Company()'],
    ['an empty key in brackets', '/Company[]', 'MALFORMED_URL', 'Company[]'],
    ['an attribute selector without a value', '/Company:companyCode', 'MALFORMED_URL', 'Company:companyCode'],
    ['an attribute selector without an attribute', '/Company:(x)', 'MALFORMED_URL', 'Company:(x)'],
    ['an invalid dataclass name', '/Com-pany', 'MALFORMED_URL', 'Com-pany'],
    ['an invalid attribute name in a list', '/Employee/firstName,last-name', 'MALFORMED_URL', 'last-name'],
    ['an empty name in a list', '/Employee/firstName,', 'MALFORMED_URL', 'firstName,'],
    ['too many $catalog segments', '/$catalog/Company/ID', 'MALFORMED_URL', 'Company/ID'],
    ['an empty parameter in a call', '/Employee/f(a,,b)', 'MALFORMED_URL', 'parameter #2 is empty'],
    ['a trailing comma in a call', '/Employee/f(a,)', 'MALFORMED_URL', 'parameter #2 is empty'],
    ['an unclosed encoded quote in a call', '/Employee/f(%22a)', 'MALFORMED_URL', 'the quote of parameter #1 is not closed'],
    ['text after a quoted parameter', '/Employee/f("a"b)', 'MALFORMED_URL', "unexpected 'b' after the quoted parameter #1"],
    ['a closing parenthesis too many (issue 14)', '/Company/byCode(C1000))', 'MALFORMED_URL', "'byCode(C1000))': unexpected ')' at offset 12 in parameter #1"],
    ['two calls in one segment (issue 14)', '/Dept/echo(a)(b)', 'MALFORMED_URL', "'echo(a)(b)': unexpected ')' at offset 6"],
    ['an encoded closing parenthesis too many (issue 14)', '/Dept/echo%28a%29%29', 'MALFORMED_URL', "unexpected '%29' at offset 8"],
    ['a parenthesis in an unquoted parameter (issue 14)', '/Dept/echo(a,b(c))', 'MALFORMED_URL', "unexpected '(' at offset 8 in parameter #2"],
    ['an empty parameter after %20 (issue 14)', '/Dept/echo(a,%20)', 'MALFORMED_URL', 'parameter #2 is empty'],
    ['bad percent-encoding in a parameter', '/Dept/echo(a%ZZ)', 'MALFORMED_URL', 'a%ZZ'],
    ['an unclosed quote after a comma in a call (issue 14)', '/Employee/f(a,"b/c)', 'MALFORMED_URL', 'the quote of parameter #2 is not closed'],
    ['an opening parenthesis too many in a call (issue 14)', '/Employee/f((a)', 'MALFORMED_URL', "unexpected '(' at offset 2"],
    ['an unbalanced key still', '/Company(1/name', 'MALFORMED_URL', 'unbalanced bracket'],
    ['text after a call', '/Employee/f(a)b', 'MALFORMED_URL', 'is no attribute list nor a function call'],
    ['a call in an attribute list', '/Employee/name,f(a)', 'MALFORMED_URL', 'is no attribute list nor a function call'],
    ['a $singleton without its function', '/$singleton/Tools', 'MALFORMED_URL', '/rest/$singleton/{SingletonClass}/{function}'],
    ['a $singleton with a segment too many', '/$singleton/Tools/now/x', 'MALFORMED_URL', 'Tools/now/x'],
    ['a $singleton function written with parentheses', '/$singleton/Tools/now()', 'MALFORMED_URL', 'without parentheses'],
    ['a $singleton class that is no name', '/$singleton/To-ols/now', 'MALFORMED_URL', 'To-ols'],
    ['too many segments', `/Company/${Array(MAX_PATH_SEGMENTS + 1).fill('a').join('/')}`, 'LIMIT_EXCEEDED', String(MAX_PATH_SEGMENTS)],
  ];
  for (const [what, path, code, mentions] of cases) {
    it(`rejects ${what} (${path}) with ${code}`, () => {
      assertDatasetError(() => parseRestPath(path), code, mentions);
    });
  }

  it('rejects an extra closing bracket after a key (/Company(1)))', () => {
    assertDatasetError(() => parseRestPath('/Company(1))'), 'MALFORMED_URL', 'Company(1))');
    assertDatasetError(() => parseRestPath('/Company(1)(2)'), 'MALFORMED_URL', 'Company(1)(2)');
  });

  it('reads an apostrophe inside an unquoted key or value as a character', () => {
    assert.deepEqual(
      parseRestPath("/Employee:lastName(O'Brien)"),
      dataClass('Employee', { kind: 'attribute', attribute: 'lastName', value: "O'Brien" }),
    );
  });

  it('answers a 404 status for an unknown resource and 400 for a malformed URL', () => {
    for (const [path, status] of [['/$foo', 404], ['/Company(1', 400]] as const) {
      assert.throws(() => parseRestPath(path), (e: unknown) => e instanceof DatasetError && e.status === status);
    }
  });
});

describe('keyInUri', () => {
  const encodings: [unknown, string][] = [
    [1, '1'],
    [42, '42'],
    ['Acme001', 'Acme001'],
    ['A/B', 'A%2FB'],
    ['a b', 'a%20b'],
    ["O'Brien", 'O%27Brien'],
    ['(x)', '%28x%29'],
    ['Zürich', 'Z%C3%BCrich'],
    ['a!*', 'a%21%2A'],
  ];
  for (const [k, uri] of encodings) {
    it(`writes ${JSON.stringify(k)} as ${uri}`, () => {
      assert.equal(keyInUri(k), uri);
    });
  }

  const roundTrip: unknown[] = [1, 123456789, 'Acme001', 'A/B', 'a b', "O'Brien", '(x)', '[y]', 'a,b', '100%', 'Zürich', 'x?y#z', 'a"b', 'a+b', '550e8400-e29b-41d4-a716-446655440000'];
  for (const k of roundTrip) {
    it(`round-trips ${JSON.stringify(k)} through Company(…), Company[…] and Company(…)/staff`, () => {
      assert.deepEqual(parseRestPath(`/Company(${keyInUri(k)})`), dataClass('Company', key(String(k))));
      assert.deepEqual(parseRestPath(`/Company[${keyInUri(k)}]`), dataClass('Company', key(String(k))));
      assert.deepEqual(parseRestPath(`/Company(${keyInUri(k)})/staff`), dataClass('Company', key(String(k)), [names('staff')]));
    });
  }

  it('round-trips a key that starts and ends with a quote', () => {
    for (const k of ['"x"', "'y'"]) assert.deepEqual(parseRestPath(`/Company(${keyInUri(k)})`), dataClass('Company', key(k)));
  });
});

describe('parseRestPath: fully encoded paths', () => {
  it('reads Company%281%29 and Company%5B1%5D (encodeURI-style clients) as Company(1)', () => {
    for (const path of ['/Company%281%29', '/Company%5B1%5D', '/Company%5b1%5d']) {
      assert.deepEqual(parseRestPath(path), { kind: 'dataClass', dataClass: 'Company', selector: { kind: 'key', key: '1' }, path: [] });
    }
    assert.deepEqual(parseRestPath('/Company%3AcompanyCode%28C1000%29').kind, 'dataClass');
  });
});
