// parseOptions: the $-options of the query string, their values and their errors.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_PAGE_SIZE } from '../../src/config/limits.js';
import { DatasetError } from '../../src/errors/dataset-error.js';
import type { ErrorName } from '../../src/errors/registry.js';
import { OPTIONS } from '../../src/rest/request/constants.js';
import { METHODS, parseOptions, type RestOptions } from '../../src/rest/request/options.js';

function assertDatasetError(query: string, code: ErrorName, mentions: string): void {
  assert.throws(() => parseOptions(query), (e: unknown) => {
    assert.ok(e instanceof DatasetError, `expected a DatasetError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    assert.ok(e.message.includes(mentions), `message ${JSON.stringify(e.message)} should name ${JSON.stringify(mentions)}`);
    return true;
  });
}

const defaults: RestOptions = {
  top: undefined, skip: 0, attributes: undefined, expand: undefined, asArray: false, orderby: undefined, method: undefined,
  filter: undefined, params: [], queryplan: false, querypath: false, atomic: false, refresh: false, compute: undefined, distinct: false, timeout: undefined, logic: undefined, savedFilter: undefined, savedOrderby: undefined, subOrderby: undefined, emMethod: undefined, clean: false,
  rawPict: false, binary: false, imageFormat: undefined, version: undefined, lock: undefined, format: 'json', given: new Set(),
};

describe('parseOptions: values', () => {
  const cases: [string, string, Partial<RestOptions>][] = [
    ['no query string', '', {}],
    ['$top', '$top=10', { top: 10 }],
    ['$top=0', '$top=0', { top: 0 }],
    ['$limit as $top', '$limit=5', { top: 5 }],
    [`$top at MAX_PAGE_SIZE (${MAX_PAGE_SIZE})`, `$top=${MAX_PAGE_SIZE}`, { top: MAX_PAGE_SIZE }],
    ['$skip', '$skip=20', { skip: 20 }],
    ['$top and $skip', '$top=10&$skip=30', { top: 10, skip: 30 }],
    ['a quoted number', '$top="7"', { top: 7 }],
    ['a number with + (space) around it', '$top=+5+', { top: 5 }],
    ['$attributes', '$attributes=firstName,lastName', { attributes: ['firstName', 'lastName'] }],
    ['double-quoted $attributes', '$attributes="a,b"', { attributes: ['a', 'b'] }],
    ['percent-encoded quotes', '$attributes=%22a,b%22', { attributes: ['a', 'b'] }],
    ['single-quoted $attributes with spaces', "$attributes='a, b'", { attributes: ['a', 'b'] }],
    ['$attributes with paths and *', '$attributes=employer.name,staff.*', { attributes: ['employer.name', 'staff.*'] }],
    ['$attributes with empty items', '$attributes=a,,b,', { attributes: ['a', 'b'] }],
    ['$expand', '$expand=employer,staff', { expand: ['employer', 'staff'] }],
    ['$rawPict and $timeout (an upload)', '$rawPict=true&$timeout=60', { rawPict: true, timeout: 60 }],
    ['$binary', '$binary=true', { binary: true }],
    ['$imageformat in any case, jpg for jpeg, with $version', '$imageformat=JPG&$version=12', { imageFormat: 'jpeg', version: '12' }],
    ['$imageformat=best', '$imageformat=best', { imageFormat: 'best' }],
    ['$format=looker', '$format=looker', { format: 'looker' }],
    ['$format in any case, quoted', '$format="Looker"', { format: 'looker' }],
    ['$format=json (the default)', '$format=json', { format: 'json' }],
    ['+ as a space', '$orderby=lastName+desc', { orderby: 'lastName desc' }],
    ['%20 as a space', '$orderby=lastName%20desc,firstName', { orderby: 'lastName desc,firstName' }],
    ['an encoded + as a plus', '$orderby=a%2Bb', { orderby: 'a+b' }],
    ['a quoted $orderby with + spaces', '$orderby="lastName+desc"', { orderby: 'lastName desc' }],
    ['a percent-encoded option name', '%24top=3', { top: 3 }],
    ['parameters without $ (ignored)', '_=1712345678&foo=bar&v=5', {}],
    ['parameters without $ between options', '$top=2&_=1&$skip=1', { top: 2, skip: 1 }],
    ['empty parts', '&&$top=2&', { top: 2 }],
    ['every option at once', '$top=1&$skip=2&$attributes=a&$expand=b&$asArray=true&$orderby=c&$method=entityset', {
      top: 1, skip: 2, attributes: ['a'], expand: ['b'], asArray: true, orderby: 'c', method: 'entityset',
    }],
  ];
  for (const [what, query, expected] of cases) {
    it(`reads ${what}: ?${query}`, () => {
      const { given: _given, ...parsed } = parseOptions(query);
      const { given: _none, ...base } = defaults;
      assert.deepEqual({ ...base, ...parsed }, { ...base, ...expected });
    });
  }

  for (const method of METHODS) {
    it(`accepts $method=${method}`, () => {
      assert.equal(parseOptions(`$method=${method}`).method, method);
    });
  }

  const asArray: [string, boolean][] = [
    ['$asArray=true', true], ['$asArray=1', true], ['$asArray', true], ['$asArray=', true], ['$asArray="true"', true],
    ['$asArray=false', false], ['$asArray=0', false], ['', false],
  ];
  for (const [query, value] of asArray) {
    it(`reads ?${query} as asArray ${value}`, () => {
      assert.equal(parseOptions(query).asArray, value);
    });
  }
});

describe('parseOptions: errors', () => {
  const cases: [string, string, ErrorName, string][] = [
    // what, query, code, text the message names
    ['a negative $top', '$top=-1', 'INVALID_OPTION', '-1'],
    ['a non-numeric $top', '$top=ten', 'INVALID_OPTION', 'ten'],
    ['a fractional $top', '$top=1.5', 'INVALID_OPTION', '1.5'],
    ['an exponent $top', '$top=1e3', 'INVALID_OPTION', '1e3'],
    ['an empty $top', '$top=', 'INVALID_OPTION', '$top'],
    ['a negative $limit', '$limit=-5', 'INVALID_OPTION', '$limit'],
    ['a negative $skip', '$skip=-1', 'INVALID_OPTION', '$skip'],
    ['a non-numeric $skip', '$skip=abc', 'INVALID_OPTION', 'abc'],
    [`$top above MAX_PAGE_SIZE (${MAX_PAGE_SIZE})`, `$top=${MAX_PAGE_SIZE + 1}`, 'LIMIT_EXCEEDED', String(MAX_PAGE_SIZE)],
    ['$limit above MAX_PAGE_SIZE', `$limit=${MAX_PAGE_SIZE * 10}`, 'LIMIT_EXCEEDED', '$limit'],
    ['an unknown option, with did-you-mean', '$tpo=10', 'UNKNOWN_OPTION', "'$tpo', did you mean '$top'?"],
    ['a miscased option, with did-you-mean', '$orderBy=name', 'UNKNOWN_OPTION', "did you mean '$orderby'?"],
    ['an unknown option far from every name', '$zzzzzzzz=1', 'UNKNOWN_OPTION', '$zzzzzzzz'],
    ['an unknown option even after an unsupported one', '$filter="x"&$tpo=1', 'UNKNOWN_OPTION', '$tpo'],
    ['a duplicate option', '$top=1&$top=2', 'INVALID_OPTION', '$top'],
    ['a duplicate option written twice the same', '$skip=1&$skip=1', 'INVALID_OPTION', '$skip'],
    ['$top with $limit', '$top=1&$limit=2', 'INVALID_OPTION', '$limit'],
    ['an unknown $method, with did-you-mean', '$method=delet', 'INVALID_OPTION', "did you mean 'delete'?"],
    ['an empty $method', '$method=', 'INVALID_OPTION', '$method'],
    ['a bad $asArray', '$asArray=yes', 'INVALID_OPTION', 'yes'],
    ['an empty $orderby', '$orderby=', 'INVALID_OPTION', '$orderby'],
    ['a quoted empty $orderby', '$orderby=""', 'INVALID_OPTION', '$orderby'],
    ['an empty $attributes', '$attributes=', 'INVALID_OPTION', '$attributes'],
    ['an $attributes item that is not a path', '$attributes=a,b-c', 'INVALID_OPTION', 'b-c'],
    ['an unclosed quote in $attributes', '$attributes="a,b', 'INVALID_OPTION', '"a'],
    ['an empty $expand', '$expand=""', 'INVALID_OPTION', '$expand'],
    ['an unknown $imageformat, with did-you-mean', '$imageformat=pgn', 'INVALID_OPTION', "$imageformat must be one of best, png, jpeg, gif, tiff; got 'pgn', did you mean 'png'?"],
    ['a bad $rawPict', '$rawPict=yes', 'INVALID_OPTION', '$rawPict'],
    ['an unknown $format, with did-you-mean', '$format=lookr', 'INVALID_OPTION', "$format must be json or looker; got 'lookr', did you mean 'looker'?"],
    ['an empty $format', '$format=', 'INVALID_OPTION', '$format must be json or looker'],
    ['bad percent-encoding in a value', '$top=%ZZ', 'MALFORMED_URL', '$top=%ZZ'],
    ['bad percent-encoding in a name', '$to%p=1', 'MALFORMED_URL', '$to%p=1'],
  ];
  for (const [what, query, code, mentions] of cases) {
    it(`rejects ${what} (?${query}) with ${code}`, () => {
      assertDatasetError(query, code, mentions);
    });
  }

  const unsupported = Object.entries(OPTIONS).filter(([, implemented]) => !implemented).map(([name]) => name);
  it('implements $lock (true or false, said)', () => {
    assert.ok(!unsupported.includes('$lock'));
    assert.equal(parseOptions('$lock=true').lock, true);
    assert.equal(parseOptions('$lock=false').lock, false);
    assert.equal(parseOptions('').lock, undefined);
  });
  for (const name of unsupported) {
    it(`answers OPTION_NOT_SUPPORTED (501) for ${name}`, () => {
      assertDatasetError(`${name}=x`, 'OPTION_NOT_SUPPORTED', name);
      assert.throws(() => parseOptions(`$top=1&${name}=x`), (e: unknown) => e instanceof DatasetError && e.status === 501);
    });
  }

  it('answers 400 for an invalid option and for LIMIT_EXCEEDED', () => {
    for (const query of ['$top=-1', `$top=${MAX_PAGE_SIZE + 1}`, '$tpo=1']) {
      assert.throws(() => parseOptions(query), (e: unknown) => e instanceof DatasetError && e.status === 400);
    }
  });
});
