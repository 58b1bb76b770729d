// Requests over the whole REST surface, for the fuzz suite (test/faults/surface-fuzz.test.ts, short) and
// bench/fuzz.ts (long): fast-check arbitraries of methods, paths (dataclasses, keys, relations,
// attribute lists, entity sets, $catalog, $info, $upload, $directory, $openapi, $singleton, junk),
// every $-option of src/rest/request/options.ts with good and bad values, bodies (entities with __KEY and
// __STAMP, values of the right and the wrong type, arrays, deep nesting, big strings, bytes that
// are no JSON), headers, function calls and uploads — valid, nearly valid and junk mixed — and the
// check every answer must pass: no 5xx but a function's own failure (or the storage's deliberate
// 503/507), a typed __ERROR on every refusal.
//
// Some parts of a request are only known while the server runs (entity set ids, upload ids, a
// session's cookie): the generator writes a placeholder ({{SET}}, {{UPLOAD_IMG}}, {{UPLOAD_BIN}},
// {{COOKIE}}) that materialize() replaces with one the run has seen (learn() collects them from
// answers), or a made-up one. The concrete request is what a failure reports.

import { readFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import fc from 'fast-check';
import { coreOf, type DatastoreWithClasses } from '../../src/datastore/datastore.js';

// ---- the demo's model, read from its model.json -----------------------------------------------

interface ModelAttribute {
  readonly name: string;
  readonly type?: string;
  readonly kind?: string;
  readonly path?: string;
}

interface ModelDataClass {
  readonly name: string;
  readonly attributes: readonly ModelAttribute[];
}

const MODEL = JSON.parse(readFileSync(new URL('../../demo/model.json', import.meta.url), 'utf8')) as { dataClasses: ModelDataClass[] };
const DATACLASSES = new Map(MODEL.dataClasses.map((dc) => [dc.name, dc]));
const DATACLASS_NAMES = MODEL.dataClasses.map((dc) => dc.name);
const ALL_ATTRIBUTES = [...new Set(MODEL.dataClasses.flatMap((dc) => dc.attributes.map((a) => a.name)))];

/** Keys that exist in a freshly seeded demo (Employee's uuids are read from the server: see FuzzContext). */
export interface FuzzContext {
  /** some Employee keys (uuids) */
  readonly employeeKeys: readonly string[];
}

/** A request to send: method, URL (path and query string, placeholders not yet replaced), headers, body. */
export interface FuzzRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** the body as sent (text or bytes), or none */
  readonly body?: string | Buffer;
}

// ---- building blocks ------------------------------------------------------------------------

/** encodeURIComponent / encodeURI, a lone surrogate written as the bytes it would be (junk: a server must refuse it well). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const encodeComponent = (s: string) => encodeURIComponent(s.replace(LONE_SURROGATE, '\uFFFD')).replace(/%EF%BF%BD/g, '%ED%A0%80');
const encodeUri = (s: string) => encodeURI(s.replace(LONE_SURROGATE, '\uFFFD')).replace(/%EF%BF%BD/g, '%ED%A0%80');

const pick = <T extends unknown[]>(...values: T): fc.Arbitrary<T[number]> => fc.constantFrom(...values);

/** Percent-encoding junk and odd characters, for paths and values. */
const junkText = fc.oneof(
  pick('%', '%zz', '%0', '%00', '%C0%AF', '%FF%FE', '%E2%82', '%2F', '%25', '%5B', '%5D', '%28', '%29', '..', '//', '\\', '~', '💥', 'é', '%F0%9F%92%A5', '$', '{}', '()', '[]', '"', "'", '`', ';', '|', '<script>', '\u0000', '\t', ' ', '+'),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
);

/** Text as it may appear in a URL: encoded, partly encoded, or raw (what is not legal in a URL is encoded). */
function inUrl(text: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(text, fc.nat(9)).map(([t, how]) => {
    if (how < 5) return encodeComponent(t);
    if (how < 8) return encodeUri(t).replace(/#/g, '%23').replace(/&/g, '%26');
    // raw but legal: only what a request line can hold (no space, no control characters)
    return t.replace(/[^\x21-\x7e]/g, (c) => encodeComponent(c)).replace(/[#&?]/g, (c) => encodeComponent(c));
  });
}

const uuidLike = pick('00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-4fff-8fff-ffffffffffff', 'not-a-uuid', '0123456789ABCDEF0123456789ABCDEF', '{00000000-0000-0000-0000-000000000000}');

/** Keys of a dataclass as written inside (…) or […]: valid ones, near misses, junk. */
function keyText(dataClass: string, ctx: FuzzContext): fc.Arbitrary<string> {
  const valid = dataClass === 'Employee' && ctx.employeeKeys.length > 0
    ? fc.oneof(pick(...ctx.employeeKeys), pick(...ctx.employeeKeys).map((k) => k.toUpperCase()), pick(...ctx.employeeKeys).map((k) => k.replace(/-/g, '')))
    : fc.integer({ min: 1, max: 45 }).map(String);
  return fc.oneof(
    { weight: 6, arbitrary: valid },
    { weight: 1, arbitrary: valid.map((k) => `"${k}"`) },
    { weight: 1, arbitrary: valid.map((k) => `'${k}'`) },
    { weight: 2, arbitrary: pick('0', '-1', '99999', '1.5', '1e3', 'abc', '9223372036854775808', '18446744073709551616', '0x10', ' 1', '1 ', 'null', 'true', '""', "''", '"', 'NaN', 'Infinity', '-0', '1,2') },
    { weight: 1, arbitrary: uuidLike },
    { weight: 1, arbitrary: junkText.map((t) => encodeComponent(t)) },
  );
}

/** Attribute names of a dataclass (and of others, and unknown ones). */
function attributeName(dataClass: string | undefined): fc.Arbitrary<string> {
  const own = DATACLASSES.get(dataClass ?? '')?.attributes.map((a) => a.name) ?? [];
  return fc.oneof(
    { weight: own.length > 0 ? 6 : 0, arbitrary: own.length > 0 ? pick(...own) : pick('ID') },
    { weight: 2, arbitrary: pick(...ALL_ATTRIBUTES) },
    { weight: 1, arbitrary: pick('nope', '__KEY', '__STAMP', '__proto__', 'constructor', 'toString', 'hasOwnProperty', '*', 'ID.ID', 'Id') },
  );
}

/** Attribute paths: `a`, `a.b`, `a.*`, relation chains (colleagues.colleagues…: bounded). */
function attributePath(dataClass: string | undefined): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 5, arbitrary: attributeName(dataClass) },
    { weight: 3, arbitrary: fc.array(attributeName(undefined), { minLength: 2, maxLength: 3 }).map((a) => a.join('.')) },
    { weight: 2, arbitrary: pick('employer.name', 'employer.city.name', 'employer.*', 'staff.lastName', 'staff.*', 'city.companies.name', 'manager.manager.lastName', 'reports.lastName', 'colleagues.lastName', 'colleagues.colleagues.lastName', 'companies.staff.firstName', 'workers.lastName', 'extra.address.city', 'skills.languages', 'skills[].name', 'extra.tags[].name', 'photo', 'resume', 'fullName', 'employerName', 'staffNames') },
    { weight: 1, arbitrary: pick('a.b.c.d.e.f.g.h.i', '', '.', 'a..b', '1abc', 'name desc', 'a b') },
  );
}

const attributeList = (dataClass: string | undefined) => fc.array(attributePath(dataClass), { minLength: 1, maxLength: 4 }).map((a) => a.join(','));

// ---- the query language ($filter, $savedfilter, $orderby) -------------------------------------

const comparator = pick('=', '==', '===', 'IS', '#', '!=', '!==', 'IS NOT', '<', '>', '<=', '>=', 'IN', '%', 'begin', '=~', '<>', 'LIKE');
const queryValue = fc.oneof(
  pick('1', '0', '-3.5', '1e308', '1e999', 'true', 'false', 'null', "'smith'", '"O\'Brien"', "'O\\'Brien'", 'smi@', '@son', "'a@b'", '2024-05-01', '2024-05-01T10:00:00Z', "'2024-13-45'", '[1, 2, 3]', "['a', 'b']", '[]', ':1', ':2', ':128', ':129', ':0', "'é'", 'Acme Inc', "'", '"'),
  fc.integer().map(String),
  fc.string({ maxLength: 10 }).map((s) => `'${s.replace(/['\\]/g, '')}'`),
);

function queryText(dataClass: string | undefined): fc.Arbitrary<string> {
  const { node } = fc.letrec<{ node: string }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.tuple(attributePath(dataClass), comparator, queryValue).map(([p, c, v]) => `${p} ${c} ${v}`),
      fc.tuple(pick(':1', ':2'), comparator, queryValue).map(([p, c, v]) => `${p} ${c} ${v}`),
      fc.tuple(tie('node'), pick('and', 'AND', '&', '&&', 'or', '|', '||', 'except', 'xor'), tie('node')).map(([a, op, b]) => `${a} ${op} ${b}`),
      tie('node').map((n) => `not(${n})`),
      tie('node').map((n) => `(${n})`),
    ),
  }));
  return fc.oneof(
    { weight: 8, arbitrary: fc.tuple(node, fc.option(fc.tuple(attributePath(dataClass), pick('', ' asc', ' desc', ' DESC')).map(([p, d]) => ` order by ${p}${d}`), { nil: '' })).map(([n, o]) => n + o) },
    { weight: 1, arbitrary: pick('', ' ', 'order by lastName', '(((((((((((((((((((((((((((((((((ID=1)))))))))))))))))))))))))))))))))', 'not(not(not(ID=1)))', 'ID = 1 and', 'and ID = 1', 'ID in [', "name = 'unterminated", 'ID = :1 and ID = :999', 'colleagues.colleagues.colleagues.lastName = a') },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 1, arbitrary: fc.array(pick('ID = 1', 'lastName = a@'), { minLength: 50, maxLength: 300 }).map((a) => a.join(' or ')) },
  );
}

const orderBy = (dataClass: string | undefined) =>
  fc.oneof(
    { weight: 5, arbitrary: fc.array(fc.tuple(attributePath(dataClass), pick('', ' asc', ' desc', ' DESC', ' up', ' sideways')), { minLength: 1, maxLength: 3 }).map((a) => a.map(([p, d]) => p + d).join(', ')) },
    { weight: 1, arbitrary: fc.oneof(junkText, pick('', ',', 'lastName,', 'a'.repeat(300))) },
  );

// ---- JSON values ----------------------------------------------------------------------------

/** Any JSON value, small; with the shapes REST reads (entity and selection parameters, upload ids). */
const jsonValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  any: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    pick(null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, '', '2024-05-01', '2024-05-01T10:00:00.000Z', '00:00:00', 'x', '\u0000', '💥', '__proto__', '{{SET}}'),
    fc.integer(),
    fc.double({ noNaN: true }),
    fc.string({ maxLength: 20 }),
    fc.record({ __DATACLASS: pick('Employee', 'Company', 'City', 'User', 'Nope', 42), __ENTITY: pick(true, 'yes'), __KEY: fc.oneof(fc.integer({ min: -1, max: 45 }), fc.string({ maxLength: 5 })) }, { requiredKeys: ['__ENTITY'] }),
    fc.record({ __DATASET: pick('{{SET}}', '0123456789ABCDEF0123456789ABCDEF', 'nope'), __ENTITIES: pick(true, 1) }),
    fc.record({ ID: pick('{{UPLOAD_IMG}}', '{{UPLOAD_BIN}}', 'D507BC03E613487E9B4C2F6A0512FE50', 'nope', 1) }),
    fc.array(tie('any'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), pick('__proto__', 'constructor', '__KEY', '__STAMP', 'prototype')), tie('any'), { maxKeys: 3 }),
  ),
})).any;

/** Objects nested `depth` levels deep (around the limits: 100 for an object attribute, 116 for a body, 1000 for SQLite's JSON). */
const deep = (depth: number, array: boolean): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = array ? [v] : { a: v };
  return v;
};
const deepValue = fc.tuple(pick(5, 99, 100, 101, 115, 116, 117, 999, 1001), fc.boolean()).map(([d, a]) => deep(d, a));
/** The same as JSON text, deeper still (a body nested past any stack). */
const deepText = fc.tuple(pick(116, 117, 1001, 5000, 100_000), fc.boolean()).map(([d, a]) => (a ? `${'['.repeat(d)}1${']'.repeat(d)}` : `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`));

/** A value for an attribute: of its type, of another type, or junk. */
function attributeValue(attr: ModelAttribute, ctx: FuzzContext): fc.Arbitrary<unknown> {
  const wrong = fc.oneof(jsonValue, pick('abc', [], {}, -1, 'true', '2024-02-30'));
  let right: fc.Arbitrary<unknown>;
  switch (attr.kind === undefined || attr.kind === 'storage' ? attr.type : attr.kind) {
    case 'string':
      right = fc.oneof(fc.string({ maxLength: 30 }), pick('Smith', 'smith', 'SMİTH', 'é', '', ' ', 'a'.repeat(5000)));
      break;
    case 'long': case 'long64': case 'byte': case 'word': case 'integer':
      right = fc.oneof(fc.integer({ min: -200, max: 70000 }), pick(2 ** 31, -(2 ** 31) - 1, 2 ** 53, 255, 256, 32767, 32768, -129, 1.5, '12'));
      break;
    case 'number': case 'duration':
      right = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), pick(0, 1e308, -0, '12.5', 5000));
      break;
    case 'bool':
      right = pick(true, false, 0, 1, 'true', 'false', 'yes', null);
      break;
    case 'date':
      right = pick('2024-05-01', '2024-05-01T10:00:00Z', '2024-05-01T10:00:00.000+02:00', '0000-00-00', '2024-13-01', '1/2/2024', '', 0, 1714557600000, '9999-12-31', '-000001-01-01', '5!4!2020');
      break;
    case 'uuid':
      right = fc.oneof(fc.uuid(), uuidLike);
      break;
    case 'image':
      right = pick(null, { ID: '{{UPLOAD_IMG}}' }, { ID: '{{UPLOAD_BIN}}' }, { ID: 'D507BC03E613487E9B4C2F6A0512FE50' }, { ID: 5 }, 'data:image/png;base64,iVBORw0KGgo=', { __deferred: { uri: '/rest/Company(1)/logo' } });
      break;
    case 'blob':
      right = pick(null, { ID: '{{UPLOAD_BIN}}' }, { ID: '{{UPLOAD_IMG}}' }, { ID: 'nope' }, 'AAAA');
      break;
    case 'object':
      right = fc.oneof(jsonValue, deepValue, pick({ address: { city: 'Paris' }, tags: [{ name: 'a' }, 'b', 1] }, { languages: ['fr', 'en'] }, { __proto__: { polluted: true } }, JSON.parse('{"__proto__": {"polluted": true}}')));
      break;
    case 'relatedEntity':
      right = fc.oneof(fc.integer({ min: -1, max: 45 }).map((k) => ({ __KEY: k })), fc.integer({ min: -1, max: 45 }), ctx.employeeKeys.length > 0 ? pick(...ctx.employeeKeys).map((k) => ({ __KEY: k })) : pick(null), pick(null, { __KEY: null }, { __deferred: { __KEY: '1' } }, { ID: 1 }));
      break;
    default:
      right = jsonValue; // relatedEntities, alias, calculated: not writable, or not so simply
  }
  return fc.oneof({ weight: 3, arbitrary: right }, { weight: 1, arbitrary: wrong });
}

/** An entity as a write body gives it: __KEY, __STAMP and some attributes. */
function entityObject(dataClass: string, ctx: FuzzContext): fc.Arbitrary<Record<string, unknown>> {
  const attrs = DATACLASSES.get(dataClass)?.attributes ?? DATACLASSES.get('Company')!.attributes;
  const values = fc.subarray([...attrs], { maxLength: Math.min(6, attrs.length) }).chain((chosen) => (chosen.length === 0 ? fc.constant([] as [string, unknown][]) : fc.tuple(...chosen.map((a) => attributeValue(a, ctx).map((v) => [a.name, v] as [string, unknown])))));
  const key = fc.option(fc.oneof(dataClass === 'Employee' && ctx.employeeKeys.length > 0 ? pick(...ctx.employeeKeys) : fc.integer({ min: 1, max: 45 }), pick(0, -1, 'abc', null, 1.5, {}, [])), { freq: 2 });
  const stamp = fc.option(fc.oneof(fc.integer({ min: 0, max: 5 }), pick(-1, 'x', null, 1e20, 1.5)), { freq: 2 });
  return fc.tuple(key, stamp, values, fc.option(fc.dictionary(pick('nope', '__proto__', '__ENTITY', '__TIMESTAMP', '__entityModel', 'secret', 'ID'), jsonValue, { maxKeys: 2 }))).map(([k, s, v, extra]) => {
    const out: Record<string, unknown> = {};
    if (k !== null) out.__KEY = k;
    if (s !== null) out.__STAMP = s;
    for (const [name, value] of v) out[name] = value;
    if (extra) for (const [name, value] of Object.entries(extra)) Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
    return out;
  });
}

// ---- $-options --------------------------------------------------------------------------------

const count = pick('0', '1', '2', '5', '100', '10000', '10001', '-1', '1.5', 'abc', '', '1e20', '0x10', ' 3', '99999999999999999999', '9007199254740993');
const boolText = pick('true', 'false', 'TRUE', '1', '0', 'yes', '', 'null');
const quoted = (a: fc.Arbitrary<string>) => fc.tuple(a, pick('', '"', "'", '"', '')).map(([t, q]) => (q === '' ? t : `${q}${t}${q}`));

/** One `$option=value` (name and value, not yet URL-encoded). */
function option(dataClass: string | undefined): fc.Arbitrary<[string, string | undefined]> {
  const o = (name: string, value: fc.Arbitrary<string>): fc.Arbitrary<[string, string | undefined]> => value.map((v) => [name, v]);
  return fc.oneof(
    o('$top', count), o('$limit', count), o('$skip', count),
    { weight: 4, arbitrary: o('$filter', quoted(queryText(dataClass))) },
    { weight: 2, arbitrary: o('$params', fc.oneof(fc.array(jsonValue, { maxLength: 4 }).map((a) => JSON.stringify(a)), fc.array(jsonValue, { maxLength: 3 }).map((a) => `'${JSON.stringify(a)}'`), pick('', '[', '{}', '1', 'oops', '[1,]', JSON.stringify(Array.from({ length: 130 }, (_, i) => i))))) },
    { weight: 2, arbitrary: o('$orderby', quoted(orderBy(dataClass))) },
    { weight: 2, arbitrary: o('$attributes', fc.oneof(attributeList(dataClass), pick('', ',', 'colleagues.colleagues.*', 'staff.colleagues.*', 'reports.reports.reports.*'))) },
    o('$expand', fc.oneof(attributeList(dataClass), pick('', 'photo', 'logo', 'resume', 'staff', 'employer'))),
    o('$asArray', boolText),
    { weight: 3, arbitrary: o('$method', pick('update', 'delete', 'entityset', 'release', 'subentityset', 'validate', 'UPDATE', '', 'nope', 'update ')) },
    o('$queryplan', boolText), o('$querypath', boolText),
    o('$compute', pick('count', 'sum', 'average', 'min', 'max', '$all', 'all', 'COUNT', '', 'avg')),
    o('$distinct', boolText),
    o('$timeout', pick('0', '1', '10', '2592000', '2592001', '-1', 'abc', '')),
    o('$savedfilter', quoted(queryText(dataClass))), o('$savedorderby', quoted(orderBy(dataClass))),
    o('$logicOperator', pick('AND', 'OR', 'EXCEPT', 'INTERSECT', 'and', 'XOR', '')), o('$operator', pick('AND', 'OR', 'nope')),
    o('$otherCollection', pick('{{SET}}', '{{SET}}', '0123456789ABCDEF0123456789ABCDEF', 'nope', '')),
    o('$subOrderby', orderBy(dataClass)),
    o('$atomic', boolText), o('$atOnce', boolText), o('$atonce', boolText), o('$refresh', boolText),
    o('$rawPict', pick('true', 'false', 'image/png', 'image/jpeg', 'image/svg+xml', 'text/html', 'yes', '')),
    o('$binary', boolText),
    o('$imageformat', pick('best', 'png', 'jpeg', 'jpg', 'gif', 'tiff', 'tif', 'webp', 'svg', '', 'PNG')),
    o('$version', pick('1', 'x', '', '99999999999999999999')),
    o('$lock', pick('true', 'false', 'yes', '')),
    o('$clean', boolText),
    o('$emMethod', pick('totalRevenues', 'raise', 'nope', '1x', '__proto__', '')),
    { weight: 2, arbitrary: o('$format', pick('json', 'looker', 'csv', 'ndjson', 'CSV', 'xml', '')) },
    // unknown, near misses, not ours
    o('$nope', pick('1')), o('$TOP', pick('1')), o('$', pick('1')), o('top', pick('1')), o('_', pick('123')), o('format', pick('yaml', 'json')),
    fc.constantFrom<[string, string | undefined]>(['$top', undefined], ['$filter', undefined], ['', ''], ['$', undefined], ['=', '=']),
  );
}

/** Options a well-behaved client sends, with values that make sense for the dataclass. */
function plausibleOption(dataClass: string | undefined): fc.Arbitrary<[string, string | undefined]> {
  const attrs = DATACLASSES.get(dataClass ?? '')?.attributes ?? [];
  const stored = attrs.filter((a) => a.kind === undefined || a.kind === 'storage').map((a) => a.name);
  const names = stored.length > 0 ? stored : ['ID'];
  const any = attrs.length > 0 ? attrs.map((a) => a.name) : ['ID'];
  const simpleFilter = fc.tuple(pick(...names), pick('=', '>', '<', '#', '>=', '!='), pick('1', '100', "'a@'", 'null', 'true', '2020-01-01', ':1')).map(([a, c, v]) => `${a} ${c} ${v}`);
  return fc.oneof(
    pick('1', '2', '5', '20').map((v): [string, string] => ['$top', v]),
    pick('0', '1', '10', '300').map((v): [string, string] => ['$skip', v]),
    { weight: 3, arbitrary: simpleFilter.map((f): [string, string] => ['$filter', `"${f}"`]) },
    fc.tuple(pick(...names), pick('', ' desc', ' asc')).map(([a, d]): [string, string] => ['$orderby', `${a}${d}`]),
    fc.subarray(any, { minLength: 1, maxLength: Math.min(3, any.length) }).map((a): [string, string] => ['$attributes', a.join(',')]),
    pick('[1]', '["a@"]', '[100, "x"]').map((v): [string, string] => ['$params', v]),
    pick(...names).map((a): [string, string] => ['$expand', a]),
    pick('entityset', 'update', 'delete', 'validate').map((v): [string, string] => ['$method', v]),
    pick('count', 'sum', '$all', 'min').map((v): [string, string] => ['$compute', v]),
    pick('json', 'looker', 'csv', 'ndjson').map((v): [string, string] => ['$format', v]),
    pick('true').map((v): [string, string] => ['$distinct', v]),
    pick('true').map((v): [string, string] => ['$asArray', v]),
  );
}

/** The query string: options encoded one of the ways clients do (or not quite), or junk. */
function queryString(dataClass: string | undefined): fc.Arbitrary<string> {
  const anyOption = fc.oneof({ weight: 3, arbitrary: plausibleOption(dataClass) }, { weight: 2, arbitrary: option(dataClass) });
  const encoded = fc.tuple(anyOption, fc.nat(5)).map(([[name, value], how]) => {
    if (value === undefined) return name;
    // 0–2: encodeComponent; 3: spaces as +; 4: as encodeUri; 5: raw where legal
    const v = how <= 2 ? encodeComponent(value) : how === 3 ? encodeComponent(value).replace(/%20/g, '+') : how === 4 ? encodeUri(value).replace(/[#&]/g, encodeComponent) : value.replace(/[^\x21-\x7e]|[#&%]/g, (c) => encodeComponent(c));
    return `${name}=${v}`;
  });
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant('') },
    { weight: 5, arbitrary: encoded.map((p) => `?${p}`) },
    { weight: 4, arbitrary: fc.array(encoded, { minLength: 2, maxLength: 4 }).map((parts) => `?${parts.join('&')}`) },
    { weight: 1, arbitrary: fc.tuple(encoded, fc.boolean()).map(([p, amp]) => `?${p}&${p}${amp ? '&' : ''}`) },
    { weight: 1, arbitrary: inUrl(junkText).map((j) => `?${j}`) },
    { weight: 1, arbitrary: pick('?', '?&', '?&&', '?=', '?$', '?$top', '?$top=1&&$skip=1', '?%24top=2', '?$top=%', '?$filter=%zz', '?$top=1#frag') },
  );
}

// ---- paths ------------------------------------------------------------------------------------

const FUNCTION_NAMES = ['counts', 'topEarner', 'earningAtLeast', 'raiseSalaries', 'hire', 'payroll', 'hiredBetween', 'authentify', 'logout', 'secretReport', 'directoryLogin',
  'byCode', 'totalRevenues', 'raise', 'seniority', 'salaryBands', 'payrollSummary', 'teammates', 'bestPaid', 'inactiveCompanies', 'serverTime', 'companiesIn', 'describe', 'query', 'all', 'constructor', '__proto__', 'toString', 'nope'];
/** Functions that wait or compute for as long as they are told: called with small numbers only (functionCall). */
const SLOW_FUNCTIONS = ['pause', 'whoCalls', 'spin', 'renameSlowly'];

/** One segment after the resource: attribute names and lists, relations, entity sets, functions, calls, junk. */
function pathSegment(dataClass: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 5, arbitrary: attributeName(dataClass) },
    { weight: 4, arbitrary: pick(...(DATACLASSES.get(dataClass)?.attributes.map((a) => a.name) ?? ['ID'])) },
    { weight: 2, arbitrary: attributeList(dataClass).map((l) => l.replace(/ /g, '%20')) },
    { weight: 2, arbitrary: pick('$entityset/{{SET}}', '$entityset/{{SET}}', '$entityset/0123456789ABCDEF0123456789ABCDEF', '$entityset', '$entityset/', '$entityset/%2E%2E') },
    { weight: 2, arbitrary: pick(...FUNCTION_NAMES) },
    { weight: 1, arbitrary: fc.tuple(pick(...FUNCTION_NAMES), fc.array(fc.oneof(fc.integer().map(String), pick('"a,b"', "'x'", 'John', '', '%22unterminated', '(', ')', '%28', '2024-05-01', 'true')), { maxLength: 3 })).map(([f, args]) => `${f}(${args.join(',')})`) },
    { weight: 1, arbitrary: inUrl(junkText) },
  );
}

/** fn(key) built once per key: the arbitraries of a dataclass are made once, not for each value generated. */
function memo<A>(fn: (key: string) => A): (key: string) => A {
  const made = new Map<string, A>();
  return (key) => {
    let a = made.get(key);
    if (a === undefined) made.set(key, (a = fn(key)));
    return a;
  };
}

function dataClassPath(ctx: FuzzContext): fc.Arbitrary<{ path: string; dataClass: string }> {
  const selectorOf = memo((real: string) => fc.oneof(
    { weight: 5, arbitrary: fc.constant('') },
    { weight: 5, arbitrary: keyText(real, ctx).map((k) => `(${k})`) },
    { weight: 2, arbitrary: keyText(real, ctx).map((k) => `[${k}]`) },
    { weight: 1, arbitrary: fc.tuple(pick('companyCode', 'name', 'employeeNumber', 'lastName', 'nope', 'ID', ''), fc.oneof(pick('ACME001', 'Paris', '1', "'x'", '"y"', ''), fc.integer({ min: 0, max: 400 }).map(String))).map(([a, v]) => `:${a}(${v})`) },
    { weight: 1, arbitrary: pick('(', ')', '()', '[]', '(1', '[1', '(1]', '(1)(2)', '(1)x', '((1))', '%281%29', '%5B1%5D', ':', ':name', '(%22a%22)', "('a)") },
  ));
  const restOf = memo((real: string) => fc.oneof({ weight: 3, arbitrary: fc.constant([] as string[]) }, { weight: 2, arbitrary: fc.array(pathSegment(real), { minLength: 1, maxLength: 3 }) }));
  const name = fc.oneof({ weight: 10, arbitrary: pick(...DATACLASS_NAMES, 'Employee', 'Company', 'City', 'Employee', 'Company', 'City', 'Employee', 'Company', 'City') }, { weight: 1, arbitrary: pick('employee', 'EMPLOYEE', 'Nope', '__proto__', 'constructor', 'Employee%20', 'Emp%6Coyee', 'Employee%00', '1Employee', '$Employee', '') });
  return name.chain((dc) => {
    const real = DATACLASSES.has(dc) ? dc : 'Employee';
    return fc.tuple(selectorOf(real), restOf(real), pick('', '', '', '/')).map(([s, segs, slash]) => ({ path: `/rest/${dc}${s}${segs.map((x) => `/${x}`).join('')}${slash}`, dataClass: real }));
  });
}

const systemPath = fc.oneof(
  pick('/rest/$catalog', '/rest/$catalog/', '/rest/$catalog/$all', '/rest/$catalog/Employee', '/rest/$catalog/Company', '/rest/$catalog/Nope', '/rest/$catalog/User', '/rest/$catalog/a/b',
    '/rest/$info', '/rest/$info/x', '/rest/$openapi', '/rest/$openapi?format=yaml', '/rest/$querypath', '/rest/$upload', '/rest/$upload/', '/rest/$entityset/$release', '/rest/$entityset/{{SET}}', '/rest/$entityset',
    '/rest/$directory/login', '/rest/$directory/logout', '/rest/$directory/currentUser', '/rest/$directory/currentUserBelongsTo', '/rest/$directory/nope', '/rest/$directory',
    '/rest/$singleton/Tools/serverTime', '/rest/$singleton/Tools/companiesIn', '/rest/$singleton/Tools/describe', '/rest/$singleton/Tools/nope', '/rest/$singleton/Nope/x', '/rest/$singleton', '/rest/$singleton/Tools', '/rest/$singleton/Tools/serverTime()', '/rest/$singleton/Tools/a/b',
    '/rest/$nothing', '/rest/$', '/rest', '/rest/', '/rest//', '/rest?$top=1', '/REST/Employee', '/rest/%24catalog', '/rest/%2524catalog', '/', '/health', '/healthz', '/metrics', '/$api', '/rest/../health', '/nope'),
  pick(...FUNCTION_NAMES).map((f) => `/rest/$catalog/${f}`),
);

// ---- headers ----------------------------------------------------------------------------------

const header = fc.oneof(
  fc.tuple(fc.constant('content-type'), pick('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream', 'image/png', 'application/json; charset=latin1', 'application/*', ';', 'x')),
  fc.tuple(fc.constant('if-match'), pick('*', '"1"', '"2-abc"', 'W/"1"', '"', 'junk', '"1", "2"', '"99999999999999999999"', '""')),
  fc.tuple(fc.constant('if-none-match'), pick('*', '"1"', 'W/"g1-x"', 'W/"g99999-x"', 'junk', '"', '""', '"1-x", W/"2"')),
  fc.tuple(fc.constant('accept'), pick('application/json', 'text/csv', 'application/x-ndjson', '*/*', 'text/html', 'image/*', 'junk', 'text/csv;q=0')),
  fc.tuple(fc.constant('accept-encoding'), pick('gzip', 'br', 'deflate', 'identity', 'gzip, br', '*', '*;q=0', 'identity;q=0', 'junk', 'br;q=1.5')),
  fc.tuple(fc.constant('x-request-id'), pick('abc', '', 'x'.repeat(300), '../../etc', '<script>', 'id with spaces', '💥'.replace(/[^\x20-\x7e]/g, '?'), '\t')),
  fc.tuple(fc.constant('origin'), pick('http://localhost:80', 'http://localhost', 'http://evil.example', 'null', 'junk')),
  fc.tuple(fc.constant('range'), pick('bytes=0-10', 'bytes=-5', 'bytes=100000000-', 'bytes=5-1', 'bytes=0-1,3-4', 'junk', 'bytes=', 'items=0-1')),
  fc.tuple(fc.constant('cookie'), pick('{{COOKIE}}', '{{COOKIE}}', '4DSID_Demo=00000000000000000000000000000000', '4DSID_Demo=', 'a=b; 4DSID_Demo=zz', '===', ';;;')),
  fc.tuple(fc.constant('expect'), pick('100-continue', 'junk')),
  fc.tuple(fc.constant('x-demo-tag'), pick('a', '')),
  fc.tuple(fc.constant('host'), pick('localhost', '127.0.0.1:8080', 'evil.example', '[::1]')),
);
const headers = fc.oneof({ weight: 3, arbitrary: fc.constant({} as Record<string, string>) }, { weight: 2, arbitrary: fc.array(header, { minLength: 1, maxLength: 3 }).map((pairs) => Object.fromEntries(pairs) as Record<string, string>) });

// ---- bodies -----------------------------------------------------------------------------------

/** A body for a request about `dataClass`. */
function body(dataClass: string, ctx: FuzzContext): fc.Arbitrary<string | Buffer | undefined> {
  const json = (a: fc.Arbitrary<unknown>) => a.map((v) => JSON.stringify(v));
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 6, arbitrary: json(entityObject(dataClass, ctx)) },
    { weight: 2, arbitrary: json(fc.array(entityObject(dataClass, ctx), { maxLength: 5 })) },
    { weight: 2, arbitrary: json(jsonValue) },
    { weight: 2, arbitrary: json(fc.array(jsonValue, { maxLength: 4 })) },
    { weight: 1, arbitrary: json(deepValue) },
    { weight: 1, arbitrary: deepText },
    { weight: 1, arbitrary: fc.tuple(pick(10_000, 100_000, 1_000_000), pick('name', 'lastName', 'notes', 'country')).map(([n, a]) => JSON.stringify({ [a]: 'x'.repeat(n) })) },
    { weight: 1, arbitrary: json(pick(['{{SET}}'], ['{{SET}}', 'nope'], [], 'x')) },
    { weight: 1, arbitrary: pick('', ' ', '{', '[1,', '{"a":}', 'null', 'nul', '\u0000', '\uFEFF{}', '{"__proto__": {"x": 1}}', '{"a": 1, "a": 2}', '1e999', '"\\ud800"', '[' + '1,'.repeat(5000) + '1]') },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
  );
}

// ---- function calls and uploads --------------------------------------------------------------

/** Function calls: where (datastore, dataclass, entity, selection, set, singleton), which, with what. */
function functionCall(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const target = fc.oneof(
    pick('/rest/$catalog/', '/rest/Employee/', '/rest/Company/', '/rest/City/', '/rest/Company(1)/', '/rest/Company[2]/', '/rest/Company(99999)/', '/rest/$singleton/Tools/', '/rest/AuditLog/', '/rest/User/'),
    ctx.employeeKeys.length > 0 ? pick(...ctx.employeeKeys).map((k) => `/rest/Employee(${k})/`) : pick('/rest/Employee(1)/'),
  );
  const fast = fc.tuple(target, pick(...FUNCTION_NAMES), fc.option(fc.oneof(fc.array(jsonValue, { maxLength: 4 }), jsonValue), { freq: 4 }));
  // slow ones with small numbers: a function told to spin for an hour would only measure patience
  const slowArgs = fc.tuple(fc.oneof(fc.integer({ min: 0, max: 30 }), pick('x', null, -1)), fc.oneof(fc.string({ maxLength: 5 }), fc.integer({ min: 0, max: 30 })), fc.integer({ min: 0, max: 30 }), fc.boolean()).chain((a) => fc.nat(4).map((n) => a.slice(0, n)));
  const slow = fc.tuple(pick('/rest/$catalog/', '/rest/Employee/'), pick(...SLOW_FUNCTIONS), slowArgs);
  const call = fc.oneof({ weight: 8, arbitrary: fast }, { weight: 1, arbitrary: slow });
  return fc.tuple(call, pick('POST', 'POST', 'POST', 'GET', 'PUT'), fc.option(pick('?$filter=salary%3E1', '?$top=2', '?$params=[1]', '?$params=%5B%22ACME001%22%5D', '?$params=oops', '?$method=entityset', '?$attributes=nope', '?$timeout=1', '/$entityset/{{SET}}', '?$orderby=salary%20desc'), { freq: 2 }), headers).map(([[base, fn, args], method, more, h]) => {
    const url = `${base}${encodeComponent(fn)}${more ?? ''}`;
    const payload = method !== 'GET' && args !== null && args !== undefined ? JSON.stringify(args) : undefined;
    return { method, url, headers: payload !== undefined ? { 'content-type': 'application/json', ...h } : h, body: payload };
  });
}

/** A tiny valid PNG (1×1). */
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201b3a1c6f70000000049454e44ae426082', 'hex');

/** Uploads: to $upload and into an entity's picture or blob, of an image, any bytes, nothing. */
function upload(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const bytes = fc.oneof(pick(PNG, Buffer.alloc(0), Buffer.from('GIF89a'), Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), Buffer.concat([PNG.subarray(0, 20), Buffer.alloc(50, 7)])), fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)));
  const query = fc.array(pick('$rawPict=true', '$rawPict=image/png', '$binary=true', '$rawPict=yes', '$timeout=1', '$timeout=0', '$timeout=86401', '$top=1', '$bogus=1', 'x=1'), { maxLength: 3 }).map((a) => (a.length > 0 ? `?${a.join('&')}` : ''));
  const entity = fc.oneof(pick('/rest/Company(1)/logo', '/rest/Company(2)/logo', '/rest/Company(99999)/logo', '/rest/Company(1)/name', '/rest/City(1)/name', '/rest/Company/logo'), ctx.employeeKeys.length > 0 ? pick(...ctx.employeeKeys).chain((k) => pick(`/rest/Employee(${k})/photo`, `/rest/Employee(${k})/resume`)) : pick('/rest/Employee(1)/photo'));
  const where = fc.oneof({ weight: 3, arbitrary: pick('/rest/$upload', '/rest/$upload/') }, { weight: 2, arbitrary: entity });
  return fc.tuple(where, query, bytes, pick('POST', 'POST', 'POST', 'PUT', 'GET'), pick('application/octet-stream', 'image/png', 'application/json', 'multipart/form-data; boundary=x', '')).map(([w, q, b, method, type]) => ({
    method, url: `${w}${q}`, headers: type === '' ? {} as Record<string, string> : { 'content-type': type }, body: method === 'GET' ? undefined : b,
  }));
}

// ---- the whole surface ------------------------------------------------------------------------

const method = fc.oneof({ weight: 10, arbitrary: pick('GET', 'GET', 'GET', 'GET', 'GET', 'GET', 'POST', 'POST', 'POST', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') }, { weight: 1, arbitrary: pick('PROPFIND', 'TRACE', 'SEARCH', 'PURGE', 'LOCK', 'QUERY', 'CONNECT') });

/** Attribute values of the right type only (a plausible write). */
function rightValue(attr: ModelAttribute): fc.Arbitrary<unknown> | undefined {
  switch (attr.kind === undefined || attr.kind === 'storage' ? attr.type : attr.kind) {
    case 'string': return fc.string({ maxLength: 20 });
    case 'long': case 'long64': return fc.integer({ min: 0, max: 100_000 });
    case 'byte': return fc.integer({ min: 0, max: 100 });
    case 'word': return fc.integer({ min: 0, max: 30_000 });
    case 'number': case 'duration': return fc.integer({ min: 0, max: 200_000 });
    case 'bool': return fc.boolean();
    case 'date': return pick('2024-05-01', '1999-12-31', '2024-05-01T10:00:00Z');
    case 'object': return pick({ a: 1 }, { address: { city: 'Paris' } }, null);
    default: return undefined;
  }
}

/** Requests a well-behaved client sends: reads of pages, entities, attributes and relations with sensible options; saves of sensible values. */
function plausible(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const byClass = memo((dc: string) => {
    const attrs = DATACLASSES.get(dc)!.attributes;
    const key = dc === 'Employee' ? pick(...(ctx.employeeKeys.length > 0 ? ctx.employeeKeys : ['1'])) : fc.integer({ min: 1, max: dc === 'City' ? 20 : 40 }).map(String);
    const selector = fc.oneof(fc.constant(''), key.map((k) => `(${k})`));
    const segment = fc.option(pick(...attrs.map((a) => a.name)), { freq: 2, nil: undefined });
    const query = fc.array(plausibleOption(dc), { maxLength: 2 }).map((opts) => {
      const seen = new Set<string>();
      const parts = opts.filter(([n]) => !seen.has(n) && seen.add(n)).map(([n, v]) => `${n}=${encodeComponent(v ?? '')}`);
      return parts.length > 0 ? `?${parts.join('&')}` : '';
    });
    const read = fc.tuple(selector, segment, query, pick('GET', 'GET', 'GET', 'HEAD')).map(([s, seg, q, m]) => req(m, `/rest/${dc}${s}${seg ? `/${seg}` : ''}${q}`, {}, undefined));
    const writable = attrs.filter((a) => a.name !== 'ID' && rightValue(a) !== undefined);
    const values = fc.subarray(writable, { minLength: 1, maxLength: Math.min(3, writable.length) }).chain((chosen) => fc.tuple(...chosen.map((a) => rightValue(a)!.map((v) => [a.name, v] as const))));
    const write = fc.tuple(fc.option(key, { freq: 2, nil: undefined }), fc.integer({ min: 1, max: 3 }), values, pick('update', 'update', 'validate')).map(([k, stamp, v, m]) => {
      const entity: Record<string, unknown> = Object.fromEntries(v);
      if (k !== undefined) Object.assign(entity, { __KEY: dc === 'Employee' ? k : Number(k), __STAMP: stamp });
      return req('POST', `/rest/${dc}?$method=${m}`, { 'content-type': 'application/json' }, JSON.stringify(entity));
    });
    // entity sets: made, read, combined, released
    const filter = fc.tuple(pick(...attrs.filter((a) => a.type === 'long' || a.type === 'number').map((a) => a.name), 'ID'), pick('>', '<', '>=')).map(([a, c]) => encodeComponent(`"${a} ${c} ${5}"`));
    const makeSet = fc.tuple(fc.option(filter, { nil: undefined }), pick('', '&$top=1', '&$orderby=ID%20desc', '&$timeout=60')).map(([f, more]) => req('GET', `/rest/${dc}?$method=entityset${f ? `&$filter=${f}` : ''}${more}`, {}, undefined));
    const useSet = fc.tuple(pick('', '?$top=3', '?$skip=2&$top=2', '?$method=subentityset', '?$logicOperator=OR&$otherCollection={{SET}}', '?$logicOperator=EXCEPT&$otherCollection={{SET}}&$method=entityset', '?$method=release', '?$compute=$all', '?$orderby=ID%20desc&$method=entityset', '?$clean=true&$method=entityset', '?$format=csv', '?$savedfilter=%22ID%3E1%22'), fc.option(pick(...attrs.map((a) => a.name)), { freq: 4, nil: undefined })).map(([q, attr]) => req('GET', `/rest/${dc}${attr ? `/${attr}` : ''}/$entityset/{{SET}}${q}`, {}, undefined));
    return fc.oneof({ weight: 8, arbitrary: read }, { weight: 2, arbitrary: write }, { weight: 1, arbitrary: makeSet }, { weight: 2, arbitrary: useSet });
  });
  // uploads as a client makes them: a file, then an entity that takes it
  const store = pick(['$rawPict=true', PNG], ['$rawPict=image/png', PNG], ['$binary=true', Buffer.from('%PDF-1.4 a small file')], ['$binary=true', PNG]).map(([q, b]) => req('POST', `/rest/$upload?${q as string}`, { 'content-type': 'application/octet-stream' }, b as Buffer));
  const attach = fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 4 }), pick('{{UPLOAD_IMG}}', '{{UPLOAD_BIN}}')).map(([k, stamp, id]) => req('POST', '/rest/Company?$method=update', { 'content-type': 'application/json' }, JSON.stringify({ __KEY: k, __STAMP: stamp, logo: { ID: id } })));
  const read = fc.integer({ min: 1, max: 40 }).chain((k) => pick(`/rest/Company(${k})/logo`, `/rest/Company(${k})/logo?$imageformat=png`, `/rest/Company(${k})/logo?$imageformat=jpeg&$expand=logo`, `/rest/Company(${k})/logo?$binary=true`)).map((u) => req('GET', u, {}, undefined));
  // a login (its session's cookie is then sent back by later requests: {{COOKIE}}), a logout
  const login = fc.tuple(pick(['alice', 'alice123'], ['bob', 'bob123'], ['admin', 'admin123'], ['alice', 'wrong'], ['nobody', 'x']), fc.boolean()).map(([[user, password], legacy]) => (legacy
    ? req('POST', '/rest/$directory/login', { 'content-type': 'application/json', 'username-4d': user, 'password-4d': password }, undefined)
    : req('POST', '/rest/$catalog/authentify', { 'content-type': 'application/json' }, JSON.stringify([{ userName: user, password }]))));
  const asUser = fc.tuple(pick('/rest/$catalog/logout', '/rest/$info', '/rest/$directory/currentUser', '/rest/Employee?$top=2&$attributes=salary', '/rest/$openapi'), pick('POST', 'GET')).map(([u, m]) => req(m, u, { cookie: '{{COOKIE}}' }, m === 'POST' ? '[]' : undefined));
  return fc.oneof({ weight: 24, arbitrary: pick('Employee', 'Company', 'City').chain(byClass) }, { weight: 2, arbitrary: store }, { weight: 2, arbitrary: attach }, { weight: 2, arbitrary: read }, { weight: 1, arbitrary: login }, { weight: 1, arbitrary: asUser });
}

/** Any request over the REST surface. */
export function requestArbitrary(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const rest = memo((dataClass: string) => fc.tuple(method, queryString(dataClass), headers, body(dataClass, ctx)));
  const onDataClass = dataClassPath(ctx).chain(({ path, dataClass }) => rest(dataClass).map(([m, q, h, b]) => req(m, path + q, h, b)));
  const onSystem = fc.tuple(systemPath, method, queryString(undefined), headers, body('Company', ctx)).map(([p, m, q, h, b]) => req(m, p.includes('?') ? p : p + q, h, b));
  const junk = fc.tuple(method, inUrl(fc.array(junkText, { minLength: 1, maxLength: 4 }).map((a) => a.join('/'))), queryString(undefined), headers, body('City', ctx)).map(([m, p, q, h, b]) => req(m, `/rest/${p}${q}`, h, b));
  return fc.oneof(
    { weight: 10, arbitrary: plausible(ctx) },
    { weight: 12, arbitrary: onDataClass },
    { weight: 3, arbitrary: onSystem },
    { weight: 3, arbitrary: functionCall(ctx) },
    { weight: 2, arbitrary: upload(ctx) },
    { weight: 1, arbitrary: junk },
  );
}

function req(method: string, url: string, headers: Record<string, string>, body: string | Buffer | undefined): FuzzRequest {
  // GET and HEAD carry no body here (inject would send one; a real client rarely does)
  return { method, url, headers, body: method === 'GET' || method === 'HEAD' ? undefined : body };
}

// ---- what a run learns: set ids, upload ids, a session's cookie -----------------------------

export class Learned {
  readonly sets: string[] = [];
  readonly images: string[] = [];
  readonly binaries: string[] = [];
  readonly cookies: string[] = [];
  /** the cookies of sessions that logged in */
  readonly logins: string[] = [];
  #turn = 0;

  /** The request with its placeholders replaced by ids this run has seen (a made-up one when none). */
  materialize(r: FuzzRequest): FuzzRequest {
    const need = r.url.includes('{{') || (typeof r.body === 'string' && r.body.includes('{{')) || Object.values(r.headers).some((v) => v.includes('{{'));
    if (!need) return r;
    const fill = (text: string) => text.replace(/\{\{(SET|UPLOAD_IMG|UPLOAD_BIN|COOKIE)\}\}/g, (_, what: string) => {
      const turn = this.#turn++;
      const from = what === 'SET' ? this.sets : what === 'UPLOAD_IMG' ? this.images : what === 'UPLOAD_BIN' ? this.binaries : this.logins.length > 0 && turn % 2 === 0 ? this.logins : this.cookies;
      if (from.length === 0 || turn % 7 === 6) return what === 'COOKIE' ? '4DSID_Demo=0123456789abcdef0123456789abcdef' : 'FEEDFACE0123456789ABCDEF01234567';
      return from[from.length - 1 - (turn % Math.min(from.length, 4))];
    });
    return { method: r.method, url: fill(r.url), headers: Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, fill(v)])), body: typeof r.body === 'string' ? fill(r.body) : r.body };
  }

  /** Keeps the ids an answer gives (the latest few of each). */
  learn(r: FuzzRequest, answer: Answer): void {
    const keep = (list: string[], value: string) => {
      if (list.includes(value)) return;
      list.push(value);
      if (list.length > 16) list.shift();
    };
    const cookie = answer.headers['set-cookie'];
    const first = Array.isArray(cookie) ? cookie[0] : cookie;
    if (typeof first === 'string') keep(answer.status === 200 && /authentify|\$directory\/login/.test(r.url) && /"(success|result)":\s*true/.test(answer.text) ? this.logins : this.cookies, first.split(';', 1)[0]);
    if (answer.status !== 200 || answer.text.length > 200_000) return;
    const set = /"__ENTITYSET":\s*"[^"]*\/\$entityset\/([0-9A-F]{32})/.exec(answer.text);
    if (set) keep(this.sets, set[1]);
    if (r.url.startsWith('/rest/$upload')) {
      const id = /"ID":\s*"([0-9A-F]{32})"/.exec(answer.text);
      if (id) keep(r.url.includes('rawPict') ? this.images : this.binaries, id[1]);
    }
  }
}

// ---- the check every answer must pass -------------------------------------------------------

/** An answer as the runner got it: status, headers, the body's bytes. */
export interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | number | undefined>>;
  readonly raw: Buffer;
  /** the body as text (decompressed when it came compressed) */
  readonly text: string;
}

/** The body's bytes decompressed as Content-Encoding says. */
export function decoded(raw: Buffer, encoding: unknown): Buffer {
  if (raw.length === 0) return raw;
  if (encoding === 'gzip') return gunzipSync(raw);
  if (encoding === 'br') return brotliDecompressSync(raw);
  if (encoding === 'deflate') return inflateSync(raw);
  return raw;
}

/** A 5xx that is a function's own failure, or the storage's deliberate refusal: allowed. */
export const ALLOWED_5XX = new Set([7019, 7020, 7022, 7031, 7064, 7065]);

/**
 * A violation of the rules every answer follows, or undefined: no 5xx but the allowed ones; every
 * refusal (4xx/5xx) with a body is JSON holding a typed __ERROR (a HEAD's has none); a 2xx labelled
 * JSON parses. `known` may excuse a violation: it returns the reason (a reported issue) or undefined.
 */
export function violation(r: FuzzRequest, a: Answer): string | undefined {
  const type = String(a.headers['content-type'] ?? '');
  if (a.status >= 400) {
    if (r.method === 'HEAD') return undefined; // (check() asks again with GET for a 5xx)
    if (a.raw.length === 0) return `${a.status} without a body`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(a.text);
    } catch {
      return `${a.status} whose body is not JSON (${type}): ${a.text.slice(0, 200)}`;
    }
    let items = (parsed as { __ERROR?: unknown })?.__ERROR;
    // $method=validate refuses with one element per failing input, each with its __ERROR (the
    // batch shape, documented: README, "REST endpoints"): each must be typed
    const entities = (parsed as { __ENTITIES?: unknown })?.__ENTITIES;
    if (items === undefined && Array.isArray(entities) && entities.length > 0 && a.status < 500) {
      for (const e of entities as { __ERROR?: unknown }[]) {
        const wrong = untyped(e?.__ERROR);
        if (wrong) return `${a.status}, an element of __ENTITIES ${wrong}: ${a.text.slice(0, 200)}`;
      }
      items = (entities[0] as { __ERROR: unknown }).__ERROR;
    }
    const wrong = untyped(items);
    if (wrong) return `${a.status} ${wrong}: ${a.text.slice(0, 200)}`;
    const code = (items as { errCode: number }[])[0].errCode;
    if (a.status >= 500 && !ALLOWED_5XX.has(code)) return `${a.status} (errCode ${code}): ${a.text.slice(0, 300)}`;
    return undefined;
  }
  if (a.status >= 200 && a.status < 300 && r.method !== 'HEAD' && /^application\/json/i.test(type) && a.raw.length > 0) {
    try {
      JSON.parse(a.text);
    } catch {
      return `${a.status} labelled JSON whose body does not parse: ${a.text.slice(0, 200)}`;
    }
  }
  return undefined;
}

/** What is wrong with an __ERROR value (undefined: an array of typed items). */
function untyped(items: unknown): string | undefined {
  if (!Array.isArray(items) || items.length === 0) return 'without an __ERROR array';
  for (const item of items as Record<string, unknown>[]) {
    if (typeof item?.message !== 'string' || typeof item.errCode !== 'number' || typeof item.componentSignature !== 'string') return `with an untyped __ERROR item ${JSON.stringify(item).slice(0, 200)}`;
  }
  return undefined;
}

/**
 * violation(), and for a HEAD answered 5xx (no body to read its errCode from) the same request as
 * a GET, whose __ERROR tells whether that 5xx is allowed.
 */
export async function check(app: Injectable, r: FuzzRequest, a: Answer): Promise<string | undefined> {
  if (r.method === 'HEAD' && a.status >= 500) {
    const get = { ...r, method: 'GET' };
    const g = await inject(app, get);
    if (g.status !== a.status) {
      // a function's time limit is a matter of timing (a loaded machine): the HEAD's 504 may not
      // come again. Asked again, a HEAD that now answers as the GET did was that.
      if (a.status === 504 && (await inject(app, r)).status === g.status) return violation(get, g);
      return `HEAD answers ${a.status}, GET ${g.status}: ${g.text.slice(0, 200)}`;
    }
    const wrong = violation(get, g);
    return wrong ? `HEAD ${a.status}; as GET: ${wrong}` : undefined;
  }
  return violation(r, a);
}

/** The request as a line a person can replay (curl), with its body. */
export function describe(r: FuzzRequest): string {
  const h = Object.entries(r.headers).map(([k, v]) => ` -H ${JSON.stringify(`${k}: ${v}`)}`).join('');
  const b = r.body === undefined ? '' : typeof r.body === 'string' ? ` --data-binary ${JSON.stringify(r.body.length > 400 ? `${r.body.slice(0, 400)}…(${r.body.length} chars)` : r.body)}` : ` --data-binary <hex ${r.body.toString('hex').slice(0, 400)}>`;
  return `curl -g -X ${r.method} ${JSON.stringify(`http://127.0.0.1${r.url}`)}${h}${b}`;
}

// ---- running a request in process (app.inject) ------------------------------------------------

export interface Injectable {
  inject(options: { method: string; url: string; headers: Record<string, string>; payload?: string | Buffer }): Promise<{ statusCode: number; headers: Record<string, string | string[] | number | undefined>; rawPayload: Buffer }>;
}

/** Sends the request in process; resolves to the answer (the body decompressed). */
export async function inject(app: Injectable, r: FuzzRequest): Promise<Answer> {
  const res = await app.inject({ method: r.method, url: r.url, headers: { ...r.headers }, ...(r.body === undefined ? {} : { payload: r.body }) });
  let text: string;
  try {
    text = decoded(res.rawPayload, res.headers['content-encoding']).toString('utf8');
  } catch (e) {
    text = `<a body that does not decompress as ${String(res.headers['content-encoding'])}: ${(e as Error).message}>`;
  }
  return { status: res.statusCode, headers: res.headers, raw: res.rawPayload, text };
}

// ---- the database afterwards --------------------------------------------------------------------

/** What is wrong with the database after a run (SQLite's integrity check; every dataclass's count read), or an empty list. */
export async function integrityProblems(ds: DatastoreWithClasses): Promise<string[]> {
  const problems: string[] = [];
  const storage = coreOf(ds).storage;
  if (storage.dialect.name === 'sqlite') {
    const rows = await storage.all('PRAGMA integrity_check');
    const result = rows.map((row) => Object.values(row)[0]).join('; ');
    if (result !== 'ok') problems.push(`PRAGMA integrity_check: ${result}`);
  }
  for (const dc of ds.dataClasses()) {
    try {
      const n = await dc.all().length;
      if (!Number.isInteger(n) || n < 0) problems.push(`${dc.name}: a count of ${n}`);
    } catch (e) {
      problems.push(`${dc.name}: its count fails: ${(e as Error).message}`);
    }
  }
  return problems;
}
