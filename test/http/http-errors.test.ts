// HTTP scenarios for failures: every error answers with the right status and an __ERROR list whose
// first item has the expected errCode and a message naming the culprit (with a did-you-mean where
// a close name exists), and no request of the sweep at the end makes the server answer 500.
// 4D's own codes (1500 unknown attribute, 1542 entity not found) are checked as numbers; the
// server's own codes are looked up in its error registry by name.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_PAGE_SIZE } from '../../src/config/limits.js';
import { ERRORS, type ErrorName } from '../../src/errors/registry.js';
import { openDemo, type DemoFixture } from '../support/helpers.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

interface ErrorCase {
  readonly url: string;
  readonly method?: Method;
  readonly status: number;
  /** 4D's number, or the name of one of the server's own codes */
  readonly errCode: number | ErrorName;
  /** texts the first message must contain (the culprit) */
  readonly mentions: readonly string[];
  /** the name a "did you mean" must propose */
  readonly suggests?: string;
  /** set when the server does not behave as expected yet */
  readonly bug?: string;
}

const UNKNOWN_ATTRIBUTE = 1500;
const ENTITY_NOT_FOUND = 1542;

function code(c: number | ErrorName): number {
  return typeof c === 'number' ? c : ERRORS[c].errCode;
}

/** The shape every error answer has: {__ERROR: [{message, componentSignature, errCode}, …]}, an item about one attribute naming it in attributeName. */
function assertErrorBody(body: unknown, where: string): { message: string; componentSignature: string; errCode: number }[] {
  assert.ok(body !== null && typeof body === 'object' && !Array.isArray(body), `${where}: a JSON object, got ${JSON.stringify(body)}`);
  const list = (body as Record<string, unknown>).__ERROR;
  assert.ok(Array.isArray(list) && list.length > 0, `${where}: __ERROR is a non-empty array, got ${JSON.stringify(body)}`);
  for (const item of list) {
    assert.deepEqual(Object.keys(item).filter((k) => k !== 'attributeName').sort(), ['componentSignature', 'errCode', 'message'], `${where}: error item keys`);
    if ('attributeName' in item) assert.ok(typeof item.attributeName === 'string' && item.message.includes(item.attributeName), `${where}: attributeName is one the message names`);
    assert.equal(typeof item.message, 'string');
    assert.ok(item.message.length > 0);
    assert.equal(typeof item.componentSignature, 'string');
    assert.ok(Number.isInteger(item.errCode));
  }
  return list;
}

const CASES: readonly ErrorCase[] = [
  // ---- unknown dataclass ----
  { url: '/rest/Compny', status: 404, errCode: 'UNKNOWN_DATACLASS', mentions: ['"Compny"'], suggests: 'Company' },
  { url: '/rest/company(1)', status: 404, errCode: 'UNKNOWN_DATACLASS', mentions: ['"company"'], suggests: 'Company' },
  { url: '/rest/Employees?$top=1', status: 404, errCode: 'UNKNOWN_DATACLASS', mentions: ['"Employees"'], suggests: 'Employee' },
  { url: '/rest/AuditLog', status: 404, errCode: 'UNKNOWN_DATACLASS', mentions: ['"AuditLog"'] },
  { url: '/rest/AuditLog(1)', status: 404, errCode: 'UNKNOWN_DATACLASS', mentions: ['"AuditLog"'] },
  { url: '/rest/$catalog/Compny', status: 404, errCode: 'UNKNOWN_DATACLASS', mentions: ['"Compny"'], suggests: 'Company' },

  // ---- unknown attribute: trailing list, $attributes, $expand, $orderby, :attribute(value) ----
  { url: '/rest/Company/nam,city', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"nam"', 'Company'], suggests: 'name' },
  { url: '/rest/Company(1)/nme', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"nme"', 'Company'], suggests: 'name' },
  { url: '/rest/Company(1)/name,cityNme', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"cityNme"'], suggests: 'cityName' },
  { url: '/rest/Company?$attributes=nme', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"nme"', 'Company'], suggests: 'name' },
  { url: '/rest/Company(1)?$attributes=name,revenue', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"revenue"'], suggests: 'revenues' },
  { url: '/rest/Company?$attributes=city.nme', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"nme"', 'City'], suggests: 'name' },
  { url: '/rest/Employee?$attributes=employer.staff.lastNme', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"lastNme"', 'Employee'], suggests: 'lastName' },
  { url: '/rest/Company?$expand=staf', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"staf"', 'Company'], suggests: 'staff' },
  { url: '/rest/Company(1)?$expand=citty', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"citty"', 'Company'], suggests: 'city' },
  { url: '/rest/Company?$orderby=nmae', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"nmae"', 'Company'], suggests: 'name' },
  { url: '/rest/Employee?$orderby=employer.nme%20desc', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"nme"', 'Company'], suggests: 'name' },
  { url: '/rest/Company:compnyCode(C1000)', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"compnyCode"'], suggests: 'companyCode' },
  { url: '/rest/Employee/secret', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"secret"'] },
  { url: '/rest/Employee?$attributes=secret', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"secret"'] },
  { url: '/rest/Employee?$orderby=secret', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"secret"'] },
  { url: '/rest/Employee:secret(x)', status: 404, errCode: UNKNOWN_ATTRIBUTE, mentions: ['"secret"'] },

  // ---- unknown key / value ----
  { url: '/rest/Company(999)', status: 404, errCode: ENTITY_NOT_FOUND, mentions: ['"999"', 'Company'] },
  { url: '/rest/Company[999]/name', status: 404, errCode: ENTITY_NOT_FOUND, mentions: ['"999"', 'Company'] },
  { url: '/rest/Company(0)', status: 404, errCode: ENTITY_NOT_FOUND, mentions: ['"0"', 'Company'] },
  { url: '/rest/Employee(00000000000000000000000000000000)', status: 404, errCode: ENTITY_NOT_FOUND, mentions: ['00000000000000000000000000000000', 'Employee'] },
  { url: '/rest/Company(999)/staff?$expand=staff', status: 404, errCode: ENTITY_NOT_FOUND, mentions: ['"999"', 'Company'] },
  { url: '/rest/Company:companyCode(NOPE)', status: 404, errCode: ENTITY_NOT_FOUND, mentions: ['NOPE', 'Company'] },
  { url: '/rest/Employee:employeeNumber(1)', status: 404, errCode: ENTITY_NOT_FOUND, mentions: ['1', 'Employee'] },

  // ---- bad key for the key type ----
  { url: '/rest/Company(abc)', status: 400, errCode: 'INVALID_KEY', mentions: ['abc', 'Company'] },
  { url: '/rest/Company[1.5]', status: 400, errCode: 'INVALID_KEY', mentions: ['1.5', 'Company'] },
  { url: '/rest/Company(99999999999)', status: 400, errCode: 'INVALID_KEY', mentions: ['99999999999', 'Company'] },
  { url: '/rest/Employee(ZZZ)', status: 400, errCode: 'INVALID_KEY', mentions: ['ZZZ', 'Employee'] },
  { url: '/rest/Employee:employeeNumber(ten)', status: 400, errCode: 'INVALID_VALUE', mentions: ['ten', 'employeeNumber'] },

  // ---- malformed URLs ----
  { url: '/rest/Company(1', status: 400, errCode: 'MALFORMED_URL', mentions: ['Company(1'] },
  { url: '/rest/Company[1', status: 400, errCode: 'MALFORMED_URL', mentions: ['Company[1'] },
  { url: '/rest/Company[1)', status: 400, errCode: 'MALFORMED_URL', mentions: ['Company[1)'] },
  { url: '/rest/Company()', status: 400, errCode: 'MALFORMED_URL', mentions: ['Company()'] },
  { url: '/rest/Company:(C1000)', status: 400, errCode: 'MALFORMED_URL', mentions: ['Company:(C1000)'] },
  { url: '/rest/Company/name,,city', status: 400, errCode: 'MALFORMED_URL', mentions: ['name,,city'] },
  { url: '/rest/Company?$top=%ZZ', status: 400, errCode: 'MALFORMED_URL', mentions: ['%ZZ'] },
  { url: '/rest/Company?%ZZ=1', status: 400, errCode: 'MALFORMED_URL', mentions: ['%ZZ'] },
  { url: '/rest/Company?$attributes=name%E0%A4', status: 400, errCode: 'MALFORMED_URL', mentions: ['%E0%A4'] },
  {
    url: '/rest/Company(%ZZ)', status: 400, errCode: 'MALFORMED_URL', mentions: ['%ZZ'],
  },
  {
    url: '/rest/Company/na%ZZme', status: 400, errCode: 'MALFORMED_URL', mentions: ['%ZZ'],
  },

  // ---- $top / $limit / $skip ----
  { url: '/rest/Company?$top=abc', status: 400, errCode: 'INVALID_OPTION', mentions: ['$top', 'abc'] },
  { url: '/rest/Company?$top=-1', status: 400, errCode: 'INVALID_OPTION', mentions: ['$top', '-1'] },
  { url: '/rest/Company?$top=1.5', status: 400, errCode: 'INVALID_OPTION', mentions: ['$top', '1.5'] },
  { url: '/rest/Company?$top=', status: 400, errCode: 'INVALID_OPTION', mentions: ['$top'] },
  { url: '/rest/Company?$limit=ten', status: 400, errCode: 'INVALID_OPTION', mentions: ['$limit', 'ten'] },
  { url: '/rest/Company?$skip=x', status: 400, errCode: 'INVALID_OPTION', mentions: ['$skip', 'x'] },
  { url: '/rest/Company?$skip=-1', status: 400, errCode: 'INVALID_OPTION', mentions: ['$skip', '-1'] },
  { url: '/rest/Company?$skip=1e3', status: 400, errCode: 'INVALID_OPTION', mentions: ['$skip', '1e3'] },
  { url: '/rest/Company?$top=1&$top=2', status: 400, errCode: 'INVALID_OPTION', mentions: ['$top'] },
  { url: '/rest/Company?$top=1&$limit=2', status: 400, errCode: 'INVALID_OPTION', mentions: ['$top', '$limit'] },
  { url: `/rest/Company?$top=${MAX_PAGE_SIZE + 1}`, status: 400, errCode: 'LIMIT_EXCEEDED', mentions: ['$top', String(MAX_PAGE_SIZE)] },
  { url: `/rest/Employee?$limit=${MAX_PAGE_SIZE * 10}`, status: 400, errCode: 'LIMIT_EXCEEDED', mentions: ['$limit', String(MAX_PAGE_SIZE)] },

  // ---- other option values ----
  { url: '/rest/Company?$asArray=maybe', status: 400, errCode: 'INVALID_OPTION', mentions: ['$asArray', 'maybe'] },
  { url: '/rest/Company?$orderby=name%20sideways', status: 400, errCode: 'INVALID_ORDER_BY', mentions: ['name sideways'] },
  { url: '/rest/Company?$orderby=staff', status: 400, errCode: 'INVALID_ORDER_BY', mentions: ['staff'] },
  { url: '/rest/Company?$attributes=name.x', status: 400, errCode: 'NOT_A_RELATION', mentions: ['name'] },
  { url: '/rest/Company?$method=bogus', status: 400, errCode: 'INVALID_OPTION', mentions: ['bogus', '$method'] },

  // ---- unknown and unsupported options ----
  { url: '/rest/Company?$tpo=3', status: 400, errCode: 'UNKNOWN_OPTION', mentions: ['$tpo'], suggests: '$top' },
  { url: '/rest/Company?$orderBy=name', status: 400, errCode: 'UNKNOWN_OPTION', mentions: ['$orderBy'], suggests: '$orderby' },
  { url: '/rest/Company?$expnd=staff', status: 400, errCode: 'UNKNOWN_OPTION', mentions: ['$expnd'], suggests: '$expand' },
  { url: '/rest/Company(1)?$atributes=name', status: 400, errCode: 'UNKNOWN_OPTION', mentions: ['$atributes'], suggests: '$attributes' },
  { url: '/rest/$catalog?$skp=1', status: 400, errCode: 'UNKNOWN_OPTION', mentions: ['$skp'], suggests: '$skip' },
  { url: '/rest/Company(1)?$lock=maybe', status: 400, errCode: 'INVALID_OPTION', mentions: ['$lock is true', "'maybe'"] },
  { url: '/rest/Company?$lock=true', status: 400, errCode: 'INVALID_OPTION', mentions: ['$lock locks or unlocks one entity'] },
  { url: '/rest/Company/name?$compute=sum', status: 400, errCode: 'INVALID_OPTION', mentions: ['sum needs a number attribute', "'name' is string"] },
  { url: '/rest/Company/name?$compute=summ', status: 400, errCode: 'INVALID_OPTION', mentions: ["'summ' is not a $compute keyword", "did you mean 'sum'"] },
  { url: '/rest/Company/name,revenues?$compute=sum', status: 400, errCode: 'INVALID_OPTION', mentions: ['exactly one attribute'] },
  { url: '/rest/Company?$filter=%22nmae%3DAcme%22', status: 400, errCode: 'INVALID_FILTER', mentions: ['nmae', "did you mean 'name'"] },
  { url: '/rest/Company?$filter="ID>"&$top=2', status: 400, errCode: 'INVALID_FILTER', mentions: ['"ID>"', 'offset 3', 'expected a value'] },
  { url: '/rest/Company?$filter="ID>:1"', status: 400, errCode: 'INVALID_FILTER', mentions: [':1', 'no parameters were given'] },
  { url: '/rest/Company?$filter="ID>:1"&$params=5', status: 400, errCode: 'INVALID_OPTION', mentions: ['$params must be a JSON array'] },

  // ---- HTTP methods ----
  { url: '/rest/Company', method: 'POST', status: 405, errCode: 'METHOD_NOT_ALLOWED', mentions: ['POST', '$method'] },
  // (with a body, a POST to an entity updates it, as wakanda-client's media delete() does)
  { url: '/rest/Company(1)', method: 'POST', status: 400, errCode: 'INVALID_BODY', mentions: ['without $method updates that entity', 'one JSON object'] },
  { url: '/rest/Company', method: 'PUT', status: 405, errCode: 'METHOD_NOT_ALLOWED', mentions: ['PUT'] },
  { url: '/rest/Company(1)', method: 'DELETE', status: 405, errCode: 'METHOD_NOT_ALLOWED', mentions: ['DELETE'] },
  { url: '/rest/Company(1)', method: 'PATCH', status: 405, errCode: 'METHOD_NOT_ALLOWED', mentions: ['PATCH'] },
  { url: '/rest/Company?$method=update', status: 405, errCode: 'METHOD_NOT_ALLOWED', mentions: ['update', 'POST'] },
  { url: '/rest/$catalog', method: 'POST', status: 405, errCode: 'METHOD_NOT_ALLOWED', mentions: ['POST'] },

  // ---- outside the REST API ----
  { url: '/', status: 404, errCode: 'UNKNOWN_RESOURCE', mentions: ['/rest'] },
  { url: '/foo', status: 404, errCode: 'UNKNOWN_RESOURCE', mentions: ['/foo'] },
  { url: '/api/Company', status: 404, errCode: 'UNKNOWN_RESOURCE', mentions: ['/api/Company'] },
  { url: '/foo', method: 'POST', status: 404, errCode: 'UNKNOWN_RESOURCE', mentions: ['/foo'] },
  { url: '/rest', status: 404, errCode: 'UNKNOWN_RESOURCE', mentions: ['$catalog'] },
  { url: '/rest/$nothing', status: 404, errCode: 'UNKNOWN_RESOURCE', mentions: ['$nothing'] },
];

// one demo for the file: an error answer changes nothing, and a method the API lacks is refused whatever the data
let demo: DemoFixture;
before(async () => {
  demo = await openDemo();
});
after(() => demo.close());

describe('HTTP errors', () => {

  for (const c of CASES) {
    const method = c.method ?? 'GET';
    const title = `${method} ${c.url} → ${c.status}, errCode ${code(c.errCode)}${typeof c.errCode === 'string' ? ` (${c.errCode})` : ''}, naming ${c.mentions.join(' and ')}${c.suggests ? `, suggesting '${c.suggests}'` : ''}`;
    it(title, c.bug ? { skip: `BUG: ${c.bug}` } : {}, async () => {
      const res = await demo.request(c.url, method);
      assert.equal(res.status, c.status, `status of ${method} ${c.url}: ${JSON.stringify(res.body)}`);
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const [first] = assertErrorBody(res.body, c.url);
      assert.equal(first.errCode, code(c.errCode), first.message);
      for (const m of c.mentions) assert.ok(first.message.includes(m), `message names ${m}: ${first.message}`);
      if (c.suggests) assert.ok(first.message.includes(`did you mean '${c.suggests}'`), `did-you-mean '${c.suggests}': ${first.message}`);
    });
  }

  it("uses 4D's component signature dbmg with 4D's own codes (1500, 1542)", async () => {
    for (const url of ['/rest/Company/nme', '/rest/Company(999)']) {
      const res = await demo.request(url);
      assert.equal(assertErrorBody(res.body, url)[0].componentSignature, 'dbmg');
    }
  });

  it('words an unknown key like 4D: Cannot find entity with "<key>" key in the "<dataclass>" dataclass', async () => {
    const res = await demo.request('/rest/Company(999)');
    assert.equal(res.body.__ERROR[0].message.startsWith('Cannot find entity with "999" key in the "Company" dataclass'), true, res.body.__ERROR[0].message);
  });

  it('words an unknown attribute like 4D: The "<name>" attribute cannot be found in the "<dataclass>" dataclass', async () => {
    const res = await demo.request('/rest/Company?$attributes=nme');
    assert.ok(res.body.__ERROR[0].message.startsWith('The "nme" attribute cannot be found in the "Company" dataclass'), res.body.__ERROR[0].message);
  });

  it('does not suggest a non-exposed attribute or dataclass', async () => {
    const attr = await demo.request('/rest/Employee?$attributes=secrets');
    assert.equal(attr.status, 404);
    assert.doesNotMatch(attr.body.__ERROR[0].message, /'secret'/);
    const dc = await demo.request('/rest/AuditLogs');
    assert.equal(dc.status, 404);
    assert.doesNotMatch(dc.body.__ERROR[0].message, /'AuditLog'/);
  });

  it('answers 404 (1542) when following a related entity that is not set', async () => {
    const noEmployer = await demo.request('/rest/Employee:employeeNumber(10028)/ID,employerID');
    assert.equal(noEmployer.status, 200);
    assert.equal(noEmployer.body.employerID, null);
    const res = await demo.request(`/rest/Employee(${noEmployer.body.__KEY})/employer`);
    assert.equal(res.status, 404);
    const [first] = assertErrorBody(res.body, 'employer of 10028');
    assert.equal(first.errCode, ENTITY_NOT_FOUND);
    assert.ok(first.message.includes('employer'), first.message);
  });

  it('accepts $top at the page limit exactly', async () => {
    const res = await demo.request(`/rest/Company?$top=${MAX_PAGE_SIZE}&$attributes=ID`);
    assert.equal(res.status, 200);
    assert.equal(res.body.__SENT, 40);
  });

  it('ignores query parameters that are not $-options (cache busters)', async () => {
    const res = await demo.request('/rest/Company?_=1700000000&$top=1');
    assert.equal(res.status, 200);
    assert.equal(res.body.__SENT, 1);
  });

  describe('never a 500', () => {
    const hostile = [
      '/rest/Company(1)(2)', '/rest/Company((1))', '/rest/Company("1)', '/rest/Company(\'1)', '/rest/Company(1)/staff/foo', '/rest/Company(1)/logo/x/y',
      '/rest/Company(1)/a/b/c/d/e/f/g/h', '/rest/Company/$entityset/ABC', '/rest/Company?$method=entityset',
      '/rest/Company(1)/city/name?$expand=city', '/rest/Employee(%00)', '/rest/Employee("")', "/rest/Employee('')",
      '/rest/Company:extra(x)', '/rest/Company:staff(1)', '/rest/Company:founded(yesterday)', '/rest/Company:active(maybe)',
      '/rest/Company?$attributes=.', '/rest/Company?$attributes=*.*', '/rest/Company?$attributes=staff.*.name',
      '/rest/Company?$expand=', '/rest/Company?$attributes=', '/rest/Company?$orderby=', '/rest/Company?$orderby=name,,ID',
      '/rest/Company?$orderby=logo', '/rest/Company?$orderby=extra', '/rest/Employee?$orderby=fullName',
      '/rest/Company?$skip=99999999999999999999', '/rest/Company?$top=9999999999999999999999',
      `/rest/Company?$attributes=${'city.companies.'.repeat(10)}name`, `/rest/${'A'.repeat(20000)}`,
      `/rest/Company?$attributes=${Array.from({ length: 500 }, () => 'name').join(',')}`,
      '/rest/Company(1)?$asArray=true&$expand=staff', '/rest/Company?$expand=staff.employer.staff.employer',
      '/rest/$catalog/$all/x', '/rest/$catalog/%24all', '/rest/%24catalog', '/rest/Company%281%29', '/rest/Company%5B1%5D',
      '/rest//Company', '/rest/Company//name', '/rest/Company(1)?$top=1', '/rest/Company(1)?$skip=1',
      '/rest/Company(-1)', '/rest/Company(+1)', '/rest/Company(1e2)', '/rest/Company(0x10)', '/rest/Company(%20)',
      '/rest/Company:companyCode(a%2Fb)', '/rest/Company("a/b")', '/rest/Company?$asArray', '/rest/Company?$',
      '/rest/Company?=1', '/rest/Company?$top=1&&&$skip=1', '/rest/Company?$expand=name',
    ];
    for (const url of hostile) {
      it(`GET ${url.length > 80 ? `${url.slice(0, 77)}…` : url} answers without a server error`, async () => {
        const res = await demo.request(url);
        assert.ok(res.status < 500 || res.status === 501, `${url} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
        if (res.status >= 400) assertErrorBody(res.body, url);
      });
    }

    it('answers JSON error bodies for bodies it cannot read', async () => {
      const bad = await demo.app.inject({ method: 'POST', url: '/rest/Company', payload: '{bad', headers: { 'content-type': 'application/json' } });
      assert.equal(bad.statusCode, 400);
      assertErrorBody(JSON.parse(bad.body), 'bad JSON body');
      const text = await demo.app.inject({ method: 'POST', url: '/rest/Company', payload: 'hello', headers: { 'content-type': 'text/plain' } });
      assert.ok(text.statusCode >= 400 && text.statusCode < 500, String(text.statusCode));
      assertErrorBody(JSON.parse(text.body), 'text body');
    });
  });
});

describe('found by the surface fuzz (test/faults/surface-fuzz.test.ts)', () => {
  it('answers a $method a resource does not take (release, entityset, subentityset) with 400 naming where it applies, not 501', async () => {
    for (const url of ['/rest/City?$method=release', '/rest/City(1)/companies?$method=release', '/rest/City(1)?$method=release', '/rest/City(1)/name?$method=entityset']) {
      const res = await demo.request(url);
      assert.equal(res.status, 400, `${url} → ${res.status} ${JSON.stringify(res.body)}`);
      const [first] = assertErrorBody(res.body, url);
      assert.ok([code('INVALID_OPTION'), code('MALFORMED_URL')].includes(first.errCode), `${url}: ${first.errCode}`);
      assert.match(first.message, /\$method=\w+/, url);
    }
  });

  it('answers a body it cannot read in the __ERROR shape on the routes outside /rest too (OPTIONS *, /health)', async () => {
    for (const url of ['/health', '/healthz', '/ready?x=1']) {
      const res = await demo.app.inject({ method: 'OPTIONS', url, payload: '\uFEFF{}' });
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
      assert.equal(assertErrorBody(JSON.parse(res.body), url)[0].errCode, code('INVALID_BODY'));
    }
  });
});

describe('verbs the REST API does not have', () => {
  it('answers a method no route takes (TRACE) on a REST resource with 405 and __ERROR naming the method (OPTIONS answers Allow: http-conventions.test.ts)', async () => {
    const res = await demo.app.inject({ method: 'TRACE', url: '/rest/$catalog' });
    assert.equal(res.statusCode, 405);
    const body = JSON.parse(res.body);
    assert.match(body.__ERROR[0].message, /TRACE is not a method of the REST API/);
    assert.match(String(res.headers.allow), /GET/);
  });

  it('answers such a method on a URL that names nothing as a GET would (404, 400), never a 405 without Allow', async () => {
    for (const [url, status] of [['/rest/Nope', 404], ['/rest/Company(zz', 400], ['/rest/Company', 405], ['/rest/Company(1)', 405]] as const) {
      const res = await demo.app.inject({ method: 'TRACE', url });
      assert.equal(res.statusCode, status, url);
      assert.equal(res.statusCode === 405, res.headers.allow !== undefined, `${url}: Allow ${res.headers.allow}`);
      assert.equal(res.statusCode, (await demo.app.inject({ url })).statusCode === 200 ? 405 : status, url);
    }
  });
});

describe('the body and page limits, as options', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo({ maxPageSize: 5, maxBodyBytes: 2048 });
  });
  after(() => demo.close());

  it('refuses a $top past --max-page-size, naming the limit and how to read more; a page of it, an export past it and the document follow it', async () => {
    const past = await demo.app.inject({ url: '/rest/Company?$top=6' });
    assert.equal(past.statusCode, 400);
    const error = past.json().__ERROR[0];
    assert.equal(error.errCode, ERRORS.LIMIT_EXCEEDED.errCode);
    assert.match(error.message, /\$top=6 is more than the 5 entities .*\$skip.*\$format=csv/);
    assert.equal((await demo.app.inject({ url: '/rest/Company?$top=5' })).json().__ENTITIES.length, 5);
    const csv = await demo.app.inject({ url: '/rest/Company?$top=7&$format=csv&$attributes=ID' });
    assert.equal(csv.statusCode, 200);
    assert.equal(csv.body.trim().split('\r\n').length, 8);
    const doc = (await demo.app.inject({ url: '/rest/$openapi' })).json();
    assert.equal(doc.components.parameters.top.schema.maximum, 5);
    assert.deepEqual(doc.components.parameters.format.schema.enum, ['json', 'looker', 'csv', 'ndjson']);
  });

  it('refuses a JSON body past --max-body-size with 413, naming the size, and stores nothing', async () => {
    const name = `big-${'x'.repeat(3000)}`;
    const res = await demo.app.inject({ method: 'POST', url: '/rest/Company?$method=update', payload: { name } });
    assert.equal(res.statusCode, 413);
    assert.equal(res.json().__ERROR[0].errCode, ERRORS.BODY_TOO_LARGE.errCode);
    assert.match(res.json().__ERROR[0].message, /2048 bytes/);
    const found = await demo.app.inject({ url: `/rest/Company?$filter="name begin 'big-'"` });
    assert.equal(found.json().__COUNT, 0);
    assert.equal((await demo.app.inject({ method: 'POST', url: '/rest/Company?$method=update', payload: { name: 'small enough' } })).statusCode, 200);
  });
});
