// Export over HTTP (issue 18): $format=csv and ndjson (or Accept: text/csv) answer every entity a
// collection read, a relation or a stored set selects, streamed a chunk at a time — the same
// values as the JSON read, RFC 4180 quoting, the session's permissions, refusals before the first
// byte as __ERROR JSON; and over a real socket, 20,000 rows with the heap bounded, a client that
// stops reading stops the reads, one that goes away ends the export, and the server stays healthy.
// (test:quick leaves this file out: streams of 20,000 rows over real sockets.)

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createProject } from '../../bench/fixture.js';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { openProject } from '../../src/project/open.js';
import { ExportStream, exportStats } from '../../src/rest/present/export-format.js';
import { buildServer } from '../../src/http/server.js';
import { DEMO_DIR, openDemo, tempDir, testDatabase, TEST_ENGINE, type DemoFixture } from '../support/helpers.js';

type Json = Record<string, any>;

/** RFC 4180's records: fields split on commas, quoted ones with their doubled quotes, CRLF between records. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let fields: string[] = [];
  let at = 0;
  while (at < text.length) {
    let field = '';
    if (text[at] === '"') {
      at++;
      for (;;) {
        const quote = text.indexOf('"', at);
        assert.ok(quote >= 0, 'a quoted field is closed');
        field += text.slice(at, quote);
        at = quote + 1;
        if (text[at] !== '"') break;
        field += '"';
        at++;
      }
    } else {
      const end = text.slice(at).search(/,|\r\n/);
      field = end < 0 ? text.slice(at) : text.slice(at, at + end);
      at = end < 0 ? text.length : at + end;
    }
    fields.push(field);
    if (text[at] === ',') at++;
    else {
      assert.ok(at === text.length || text.startsWith('\r\n', at), `a record ends with CRLF (at ${at})`);
      records.push(fields);
      fields = [];
      at += 2;
    }
  }
  return records;
}

/** The text a CSV export writes for a value of the JSON read (its date alone, 4D's d!m!yyyy, as ISO 8601). */
function csvOfJson(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  const day = typeof v === 'string' ? /^(\d{1,2})!(\d{1,2})!(\d{4})$/.exec(v) : null;
  if (day) return `${day[3]}-${day[2].padStart(2, '0')}-${day[1].padStart(2, '0')}`;
  return String(v);
}

const errCode = (body: Json): number | undefined => body.__ERROR?.[0]?.errCode;

describe('export over HTTP: CSV and NDJSON', () => {
  let demo: DemoFixture;
  let app: FastifyInstance;
  before(async () => {
    demo = await openDemo();
    app = demo.app;
  });
  after(() => demo.close());

  const get = (url: string, headers: Record<string, string> = {}) => app.inject({ url, headers });

  it('answers a filtered, ordered selection as CSV with a header row: the values of its JSON read, row for row', async () => {
    const query = `$filter="salary > :1"&$params='[40000]'&$orderby="lastName desc, firstName"`;
    const res = await get(`/rest/Employee?${query}&$format=csv`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(res.headers['content-disposition'], 'attachment; filename="Employee.csv"');
    const [header, ...rows] = parseCsv(res.body);
    // the storage attributes, pictures and blobs left out; relations by their foreign keys
    // (quoted: a file starting with the letters ID is taken by Excel for a SYLK file and refused)
    assert.ok(res.body.startsWith('"ID",employeeNumber,'), res.body.slice(0, 40));
    assert.deepEqual(header, ['ID', 'employeeNumber', 'firstName', 'lastName', 'salary', 'level', 'extension', 'badge', 'birthDate', 'hiredAt', 'dailyHours', 'isManager', 'notes', 'skills', 'employerID', 'managerID']);
    const json = (await demo.request(`/rest/Employee?${query}&$top=10000&$attributes=${header.join(',')}`)).body;
    assert.ok(json.__COUNT > 10, 'enough rows to compare');
    assert.equal(rows.length, json.__COUNT);
    rows.forEach((row, i) => assert.deepEqual(row, header.map((name) => csvOfJson(json.__ENTITIES[i][name])), `row ${i}`));
  });

  it('quotes fields holding commas, quotes or line breaks (RFC 4180); null is empty, booleans true/false, objects JSON', async () => {
    const name = 'Smith, "Jones" & Co\r\nsecond line\nthird';
    const saved = await demo.request('/rest/Company?$method=update', 'POST', { name, companyCode: 'EXP-1', active: true, revenues: null, extra: { note: 'a, "b"' } });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const res = await get(`/rest/Company?$filter="ID = :1"&$params='[${saved.body.ID}]'&$attributes=ID,name,revenues,active,extra,founded&$format=csv`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.body, `"ID",name,revenues,active,extra,founded\r\n${saved.body.ID},"Smith, ""Jones"" & Co\r\nsecond line\nthird",,true,"{""note"":""a, \\""b\\""""}",\r\n`);
    assert.deepEqual(parseCsv(res.body)[1], [String(saved.body.ID), name, '', 'true', JSON.stringify({ note: 'a, "b"' }), '']);
    // the columns in the order $attributes names them, an alias to one value among them
    const aliased = await get(`/rest/Company?$filter="ID = :1"&$params='[${saved.body.ID}]'&$attributes=name,cityName,ID&$format=csv`);
    assert.equal(aliased.body.split('\r\n')[0], 'name,cityName,ID');
  });

  it('exports a stored set in its order, its $skip and $top, and the entities of a relation', async () => {
    const made = await demo.request('/rest/Employee?$method=entityset&$filter="salary > 30000"&$orderby="salary desc"&$top=1');
    const uri: string = made.body.__ENTITYSET;
    assert.ok(uri);
    const json = (await demo.request(`${uri}?$top=10000&$attributes=ID,salary`)).body;
    const csv = parseCsv((await get(`${uri}?$format=csv&$attributes=ID,salary`)).body);
    assert.deepEqual(csv.slice(1).map((r) => r[0]), json.__ENTITIES.map((e: Json) => e.ID));
    const page = (await demo.request(`${uri}?$skip=3&$top=4&$attributes=ID`)).body;
    assert.deepEqual(parseCsv((await get(`${uri}?$skip=3&$top=4&$format=csv&$attributes=ID`)).body).slice(1).map((r) => r[0]), page.__ENTITIES.map((e: Json) => e.ID));
    // a set filtered and sorted as a page of it would be
    const sorted = (await demo.request(`${uri}?$filter="level < 5"&$orderby="lastName"&$top=10000&$attributes=ID`)).body;
    assert.deepEqual(parseCsv((await get(`${uri}?$filter="level < 5"&$orderby="lastName"&$format=csv&$attributes=ID`)).body).slice(1).map((r) => r[0]), sorted.__ENTITIES.map((e: Json) => e.ID));
    // a relation's entities
    const staff = (await demo.request('/rest/Company(1)/staff?$top=10000&$attributes=ID')).body;
    const staffCsv = parseCsv((await get('/rest/Company(1)/staff?$format=csv&$attributes=ID')).body);
    assert.deepEqual(staffCsv.slice(1).map((r) => r[0]).sort(), staff.__ENTITIES.map((e: Json) => e.ID).sort());
  });

  it('exports every entity without $top (no page limit); $top past a page and $skip apply when given', async () => {
    const count = (await demo.request('/rest/Employee?$top=1')).body.__COUNT;
    assert.ok(count > 100, 'more than a default page');
    assert.equal(parseCsv((await get('/rest/Employee?$format=csv&$attributes=ID')).body).length, count + 1);
    assert.equal((await get('/rest/Employee?$format=csv&$top=20000&$attributes=ID')).statusCode, 200);
    assert.equal((await get('/rest/Employee?$top=20000')).statusCode, 400, 'a JSON page keeps its limit');
    const page = (await demo.request('/rest/Company?$skip=5&$top=3&$attributes=ID,name')).body;
    const csv = parseCsv((await get('/rest/Company?$skip=5&$top=3&$attributes=ID,name&$format=csv')).body);
    assert.deepEqual(csv.slice(1), page.__ENTITIES.map((e: Json) => [String(e.ID), e.name]));
    assert.equal((await get('/rest/Company?$top=0&$format=csv&$attributes=ID')).body, '"ID"\r\n');
    assert.equal((await get('/rest/Company?$filter="ID < 0"&$format=ndjson')).body, '');
  });

  it('refuses what it cannot export before the first byte, as the usual __ERROR JSON', async () => {
    const cases: [string, number, number, RegExp?][] = [
      ['/rest/Company?$format=csv&$filter="name =="', 400, 7017],
      ['/rest/Company?$format=csv&$filter="nmae = 1"', 400, 7017, /did you mean 'name'/],
      ['/rest/Company?$format=csv&$attributes=nmae', 404, 1500],
      ['/rest/Company?$format=csv&$attributes=name,staff', 400, 7007, /'staff' is a relation/],
      ['/rest/Company?$format=csv&$attributes=city.name', 400, 7007, /'city.name' is a relation/],
      ['/rest/Company?$format=csv&$attributes=logo', 400, 7007, /'logo' is a picture/],
      ['/rest/Employee?$format=csv&$attributes=fullName', 400, 7007, /calculated/],
      ['/rest/Company?$format=csv&$expand=city', 400, 7007, /\$expand/],
      ['/rest/Company?$format=ndjson&$method=entityset', 400, 7007, /answered in JSON only/],
      ['/rest/Company/$entityset/X?$format=ndjson&$method=subentityset', 400, 7007, /\$method=subentityset goes without it/],
      ['/rest/Company(1)?$format=csv', 400, 7007, /this request is answered in JSON only/],
      ['/rest/Company?$format=cvs', 400, 7007, /did you mean 'csv'/],
      ['/rest/Company/$entityset/NOSUCHSET?$format=csv', 404, 1802],
    ];
    for (const [url, status, code, message] of cases) {
      const res = await get(url);
      assert.equal(res.statusCode, status, `${url}: ${res.body}`);
      assert.match(String(res.headers['content-type']), /^application\/json/, url);
      assert.equal(errCode(res.json()), code, url);
      if (message) assert.match(res.json().__ERROR[0].message, message, url);
    }
  });

  it('answers NDJSON (one JSON object a line, typed values), and CSV to Accept: text/csv', async () => {
    const res = await get('/rest/Company?$format=ndjson&$orderby="name"');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/x-ndjson; charset=utf-8');
    assert.equal(res.headers['content-disposition'], 'attachment; filename="Company.ndjson"');
    assert.ok(res.body.endsWith('\n'));
    const lines = res.body.slice(0, -1).split('\n').map((l) => JSON.parse(l) as Json);
    const csv = parseCsv((await get('/rest/Company?$format=csv&$orderby="name"')).body);
    assert.equal(lines.length, csv.length - 1);
    assert.deepEqual(Object.keys(lines[0]), csv[0]);
    lines.forEach((line, i) => assert.deepEqual(csv[0].map((name) => csvOfJson(line[name])), csv[i + 1]));
    assert.equal(typeof lines[0].ID, 'number');
    assert.equal(typeof lines[0].active, 'boolean');
    assert.match(lines[0].founded, /^\d{4}-\d\d-\d\d$/);
    // Accept: text/csv without $format; JSON ranked first, or a request that is no collection, answers JSON
    const accepted = await get('/rest/Company?$top=2', { accept: 'text/csv' });
    assert.equal(accepted.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(parseCsv(accepted.body).length, 3);
    assert.equal((await get('/rest/Company?$top=2', { accept: 'application/x-ndjson' })).headers['content-type'], 'application/x-ndjson; charset=utf-8');
    assert.match(String((await get('/rest/Company?$top=2', { accept: 'application/json, text/csv' })).headers['content-type']), /^application\/json/);
    assert.match(String((await get('/rest/Company?$top=2', { accept: 'text/csv;q=0.5, application/json' })).headers['content-type']), /^application\/json/);
    assert.match(String((await get('/rest/Company(1)', { accept: 'text/csv' })).headers['content-type']), /^application\/json/);
    // compressed as any text, by Accept-Encoding
    const gzipped = await get('/rest/Company?$format=csv&$orderby="name"', { 'accept-encoding': 'gzip' });
    assert.equal(gzipped.headers['content-encoding'], 'gzip');
    assert.deepEqual(parseCsv(gunzipSync(gzipped.rawPayload).toString('utf8')), csv);
    // HEAD: the headers of GET, no body
    const head = await app.inject({ method: 'HEAD', url: '/rest/Company?$format=csv' });
    assert.equal(head.statusCode, 200);
    assert.equal(head.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(head.body, '');
  });
});

describe('export over HTTP: permissions', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo({ roles: join(DEMO_DIR, 'roles.json') });
  });
  after(() => demo.close());

  it('exports only the columns the session may read: a guest has no salary, bob (Payroll) has it', async () => {
    const guest = await demo.app.inject({ url: '/rest/Employee?$format=csv&$top=3' });
    assert.equal(guest.statusCode, 200, guest.body);
    const header = parseCsv(guest.body)[0];
    assert.ok(!header.includes('salary'), header.join(','));
    assert.ok(header.includes('lastName'));
    const ndjson = await demo.app.inject({ url: '/rest/Employee?$format=ndjson&$top=3' });
    assert.ok(!('salary' in JSON.parse(ndjson.body.split('\n')[0])));
    // named, it is refused (an export's header would otherwise leave it out without a word); so is a filter on it
    const named = await demo.app.inject({ url: '/rest/Employee?$format=csv&$attributes=lastName,salary' });
    assert.equal(named.statusCode, 401, named.body);
    assert.equal(errCode(named.json()), 7040);
    assert.equal((await demo.app.inject({ url: '/rest/Employee?$format=csv&$filter="salary > 1"' })).statusCode, 401);
    // a dataclass the session may not read: as its JSON read answers
    const audit = await demo.app.inject({ url: '/rest/AuditLog?$format=csv' });
    assert.ok(audit.statusCode >= 400);
    assert.equal(audit.statusCode, (await demo.app.inject({ url: '/rest/AuditLog' })).statusCode);
    assert.match(String(audit.headers['content-type']), /^application\/json/);

    const login = await demo.app.inject({ method: 'POST', url: '/rest/$catalog/authentify', payload: [{ userName: 'bob', password: 'bob123' }] });
    assert.equal(login.json().result.success, true, login.body);
    const cookie = String(login.headers['set-cookie']).split(';')[0];
    const bob = await demo.app.inject({ url: '/rest/Employee?$format=csv&$top=3&$orderby="lastName"', headers: { cookie } });
    assert.equal(bob.statusCode, 200);
    assert.ok(parseCsv(bob.body)[0].includes('salary'));
    const json = await demo.app.inject({ url: '/rest/Employee?$top=3&$orderby="lastName"&$attributes=salary', headers: { cookie } });
    assert.deepEqual(parseCsv((await demo.app.inject({ url: '/rest/Employee?$format=csv&$top=3&$orderby="lastName"&$attributes=salary', headers: { cookie } })).body).slice(1).map((r) => Number(r[0])), json.json().__ENTITIES.map((e: Json) => e.salary));
  });
});

describe('export over HTTP: an alias to a value the session may not read', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  before(async () => {
    const key = { name: 'ID', type: 'long', identifying: true, autoincrement: true };
    writeFileSync(join(tmp.dir, 'model.json'), JSON.stringify({ name: 'A', dataClasses: [
      { name: 'Company', attributes: [key, { name: 'name', type: 'string' }, { name: 'revenues', type: 'number' }, { name: 'staff', kind: 'relatedEntities', type: 'EmployeeSelection', path: 'employer' }] },
      { name: 'Employee', attributes: [key, { name: 'name', type: 'string' }, { name: 'employer', kind: 'relatedEntity', type: 'Company' }, { name: 'employerName', kind: 'alias', path: 'employer.name' }, { name: 'employerRevenues', kind: 'alias', path: 'employer.revenues' }] },
    ] }));
    writeFileSync(join(tmp.dir, 'roles.json'), JSON.stringify({
      privileges: [{ privilege: 'finance', includes: [] }], roles: [],
      permissions: { allowed: [
        { applyTo: 'ds', type: 'datastore', read: ['guest'], create: ['guest'], update: ['guest'], drop: ['guest'], execute: ['guest'] },
        { applyTo: 'Company.revenues', type: 'attribute', read: ['finance'], create: ['finance'], update: ['finance'] },
      ] },
      restrictedByDefault: false, forceLogin: false,
    }));
    ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'a.sqlite')), roles: join(tmp.dir, 'roles.json'), poolSize: 2 });
    const company = ds.dataClass('Company')!.new();
    company.set('name', 'Acme');
    company.set('revenues', 123456);
    await company.save();
    const employee = ds.dataClass('Employee')!.new();
    employee.set('name', 'Ann');
    employee.set('employer', company);
    await employee.save();
    app = await buildServer(ds, { logLevel: 'silent' });
  });
  after(async () => {
    await app.close();
    await ds.close();
    tmp.remove();
  });

  it('refuses it (7040), as a filter or sort on it is refused: the alias reads through its steps', async () => {
    const res = await app.inject({ url: '/rest/Employee?$format=csv&$attributes=name,employerRevenues' });
    assert.equal(res.statusCode, 401, res.body);
    assert.equal(errCode(res.json()), 7040);
    assert.match(res.json().__ERROR[0].message, /Company\.revenues/);
    assert.equal((await app.inject({ url: '/rest/Employee?$format=ndjson&$attributes=employerRevenues' })).statusCode, 401);
    // an alias to a value it may read is exported
    const ok = await app.inject({ url: '/rest/Employee?$format=csv&$attributes=name,employerName' });
    assert.equal(ok.body, 'name,employerName\r\nAnn,Acme\r\n');
  });

  it('leaves it out of JSON reads too, as it leaves out the attribute it names', async () => {
    const page = (await app.inject({ url: '/rest/Employee' })).json();
    assert.equal(page.__ENTITIES[0].name, 'Ann');
    assert.ok(!('employerRevenues' in page.__ENTITIES[0]), JSON.stringify(page.__ENTITIES[0]));
    assert.equal(page.__ENTITIES[0].employerName, 'Acme');
    const key = page.__ENTITIES[0].__KEY;
    for (const url of [`/rest/Employee(${key})`, `/rest/Employee(${key})/employerRevenues`, `/rest/Employee(${key})?$attributes=employerRevenues`, '/rest/Employee?$attributes=name,employerRevenues', '/rest/Company(1)/revenues']) {
      const res = await app.inject({ url });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      assert.ok(!res.body.includes('123456') && !res.body.includes('Revenues"') && !res.body.includes('revenues"'), `${url}: ${res.body}`);
    }
  });
});

/** GET over the socket: the response, its body not read yet. */
function open(base: URL, path: string): Promise<{ res: IncomingMessage; abort(): void }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, base), (res) => resolve({ res, abort: () => req.destroy() }));
    req.on('error', reject);
    req.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('export over HTTP: 100,000 rows, over a socket too', () => {
  const ROWS = 100_000;
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  let base: URL;
  before(async () => {
    const db = TEST_ENGINE === 'postgres' ? await testDatabase('') : undefined;
    const project = await createProject(tmp.dir, ROWS, 'sql', db);
    ds = await openProject(tmp.dir, { db: project.db, poolSize: 4 });
    app = await buildServer(ds, { logLevel: 'silent' });
    base = new URL(await app.listen({ port: 0, host: '127.0.0.1' }));
  });
  after(async () => {
    await app.close();
    await ds.close();
    tmp.remove();
  });

  it('streams every row, in key order and in another order, with the heap bounded', async () => {
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    let peak = heapBefore;
    const { res } = await open(base, '/rest/Item?$format=csv');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['transfer-encoding'], 'chunked', 'streamed, not sent whole');
    let lines = 0;
    let last = 0;
    let sorted = true;
    let rest = '';
    res.setEncoding('utf8');
    for await (const chunk of res) {
      const text = rest + (chunk as string);
      const parts = text.split('\r\n');
      rest = parts.pop() as string;
      for (const line of parts) {
        if (lines++ === 0) continue;
        const id = Number(line.slice(0, line.indexOf(',')));
        sorted &&= id === last + 1;
        last = id;
      }
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
    assert.equal(rest, '');
    assert.equal(lines, ROWS + 1);
    assert.ok(sorted, `keys 1 … ${ROWS} in order`);
    // loose: the whole body is ~5 MB (its rows as arrays would be several times that); bench/export-bench.ts measures a million rows
    assert.ok(peak - heapBefore < 64 * 1024 * 1024, `heap grew by ${Math.round((peak - heapBefore) / 1e6)} MB`);

    const other = await open(base, '/rest/Item?$format=ndjson&$orderby="name desc"&$skip=10&$top=25000');
    let n = 0;
    let previous: string | undefined;
    let inOrder = true;
    rest = '';
    other.res.setEncoding('utf8');
    for await (const chunk of other.res) {
      const parts = (rest + (chunk as string)).split('\n');
      rest = parts.pop() as string;
      for (const line of parts) {
        const { name } = JSON.parse(line) as { name: string };
        inOrder &&= previous === undefined || name.localeCompare(previous) <= 0;
        previous = name;
        n++;
      }
    }
    assert.equal(n, 25_000);
    assert.ok(inOrder);
  });

  it('reads the next chunk only when the client has taken the last (backpressure)', async () => {
    const before = exportStats().chunks;
    const res = await app.inject({ url: '/rest/Item?$format=ndjson', payloadAsStream: true });
    assert.equal(res.statusCode, 200);
    const body = res.stream();
    // the first chunk, then nothing taken: the export waits
    const first = await new Promise<Buffer>((resolve) => body.once('data', (chunk: Buffer) => {
      body.pause();
      resolve(chunk);
    }));
    await sleep(200);
    const waiting = exportStats().chunks - before;
    await sleep(200);
    assert.equal(exportStats().chunks - before, waiting, 'no chunk read while the client takes nothing');
    assert.ok(waiting <= 3, `${waiting} chunks read of ${ROWS / 1000} while the client reads nothing`);
    // taken, the rest comes
    let text = first.toString('utf8');
    body.setEncoding('utf8');
    for await (const chunk of body) text += chunk as string;
    assert.equal(text.split('\n').length - 1, ROWS);
  });

  it('over a real socket: stops reading while the client reads nothing, ends when it goes away, and the server stays healthy', async () => {
    const before = exportStats();
    const { res, abort } = await open(base, '/rest/Item?$format=ndjson');
    try {
      assert.equal(res.statusCode, 200);
      res.on('error', () => undefined);
      // the first bytes, then nothing read: the socket's buffers fill (their size is the kernel's:
      // several MB on loopback, so how many chunks that takes varies), and the export waits
      await new Promise<void>((resolve) => res.once('data', () => {
        res.pause();
        resolve();
      }));
      let waiting = exportStats().chunks - before.chunks;
      for (const end = Date.now() + 20_000; ;) {
        await sleep(300);
        const now = exportStats().chunks - before.chunks;
        if (now === waiting) break;
        assert.ok(Date.now() < end, `still reading chunks (${now}) 20 s after the client stopped reading`);
        waiting = now;
      }
      assert.ok(waiting <= ROWS / 1000, `${waiting} chunks read of ${ROWS / 1000}`);
      // (when the buffers held the whole body, the export has ended already: nothing is left open)
      const open_ = exportStats().open - before.open;
      assert.ok(open_ === 1 || (open_ === 0 && waiting >= ROWS / 1000 - 1), `${open_} exports open after ${waiting} chunks`);
    } finally {
      abort();
    }
    for (let i = 0; i < 100 && exportStats().open > before.open; i++) await sleep(10);
    assert.equal(exportStats().open, before.open, 'the export ended with its client');
    const after = exportStats().chunks;
    await sleep(100);
    assert.equal(exportStats().chunks, after, 'no chunk read after the client went away');
    // the server answers, and exports again
    const catalog = await fetch(new URL('/rest/$catalog', base));
    assert.equal(catalog.status, 200);
    const again = await fetch(new URL('/rest/Item?$format=csv&$top=5&$attributes=ID', base));
    assert.equal(await again.text(), '"ID"\r\n1\r\n2\r\n3\r\n4\r\n5\r\n');
  });
});

describe('export over HTTP: the stream', () => {
  it('ends with an error, not with a short body, when a chunk cannot be read after the first was sent', async () => {
    let calls = 0;
    const stream = new ExportStream('header\r\nfirst\r\n', async () => {
      if (++calls === 1) return 'second\r\n';
      throw new Error('the database went away');
    });
    let text = '';
    await assert.rejects(async () => {
      for await (const chunk of stream) text += String(chunk);
    }, /the database went away/);
    // (what was read before the error may or may not have gone out: the body is cut short either way)
    assert.ok('header\r\nfirst\r\nsecond\r\n'.startsWith(text) && text.startsWith('header\r\nfirst\r\n'), JSON.stringify(text));
    assert.equal(calls, 2);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(calls, 2, 'nothing read after the error');
    assert.ok(stream.destroyed);
  });
});
