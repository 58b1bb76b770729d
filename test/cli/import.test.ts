// dataset-rest import (issue 18): CSV (quoting, every type, empty fields), NDJSON and JSON arrays
// into a dataclass through the core; imported rows read back over REST exactly as rows created
// over REST (values, __STAMP, the global stamp, text search on folded strings); bad rows reported
// with their line (or index) and reason while the rest of their batch is imported; --atomic;
// columns refused before anything is imported; events run unless --no-events; progress lines
// without a terminal; stdin.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Readable } from 'node:stream';
import { parse as parseCsv } from 'csv-parse/sync';
import { main } from '../../src/commands/import.js';
import { Input, recordsOf, type SourceRecord } from '../../src/commands/import-read.js';
import { tuning } from '../../src/commands/import-threads.js';
import { storedDateText } from '../../src/datastore/writes/import-writes.js';
import type { StorageAttribute } from '../../src/model/types.js';
import { coerceValue } from '../../src/model/values.js';
import { postgresDialect } from '../../src/sql/dialect-postgres.js';
import { sqliteDialect } from '../../src/sql/dialect-sqlite.js';
import { fileIn, openShop, run, type Shop } from '../support/cli-data.js';
import { BIN, DEMO_DIR, tempDir, openDemoProject, testDatabase } from '../support/helpers.js';

const CSV = [
  'name,code,price,qty,active,added,seen,info,ref,category',
  'Café Crème,I1,2.5,10,true,2024-02-29,2024-03-01T10:20:30.000Z,"{""a"":1,""b"":[true,null]}",6f1c0b5e-1c2d-4e3f-8a9b-0c1d2e3f4a5b,1',
  '"Comma, Quote ""Q""",I2,-1e3,0,FALSE,1999-12-31,,{},,2',
  '"Two',
  'Lines",I3,,,,,,,,',
  '',
].join('\r\n');

/** The same rows, as a REST client creates them. */
const REST_ROWS = [
  { name: 'Café Crème', code: 'R1', price: 2.5, qty: 10, active: true, added: '2024-02-29', seen: '2024-03-01T10:20:30.000Z', info: { a: 1, b: [true, null] }, ref: '6f1c0b5e-1c2d-4e3f-8a9b-0c1d2e3f4a5b', category: { __KEY: 1 } },
  { name: 'Comma, Quote "Q"', code: 'R2', price: -1000, qty: 0, active: false, added: '1999-12-31', info: {}, category: { __KEY: 2 } },
  { name: 'Two\r\nLines', code: 'R3' },
];

/** An entity of a REST answer without what differs between two creations: key, time, code, uri. */
function comparable(e: Record<string, any>): Record<string, unknown> {
  const { __KEY, __TIMESTAMP, ID, code, ...rest } = e;
  void __KEY; void __TIMESTAMP; void ID; void code;
  return JSON.parse(JSON.stringify(rest, (k, v) => (k === 'uri' ? undefined : v)));
}

describe('dataset-rest import', () => {
  let shop: Shop;
  before(async () => {
    shop = await openShop((file) => testDatabase(file));
  });
  after(() => shop.close());

  const args = (...rest: string[]) => ['--project', shop.dir, '--db', shop.db, ...rest];
  const names = async (filter: string): Promise<string[]> => (await shop.get(`/rest/Product?$filter="${encodeURIComponent(filter)}"&$orderby=ID&$attributes=name`)).__ENTITIES.map((e: any) => e.name);

  it('imports a quoted CSV of every type as the rows a REST create makes: same values, __STAMP 1, the global stamp moved, found by text search', async () => {
    const stampBefore = await shop.ds.globalStamp();
    const file = fileIn(shop.dir, 'products.csv', CSV);
    const ran = await run(main, args('Product', file));
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /^imported 3 Product entities, refused 0, in [\d.]+ s \([\d,]+ rows\/s\)\n$/);
    assert.ok((await shop.ds.globalStamp()) > stampBefore, 'the global stamp moved');
    const created = await shop.post('/rest/Product?$method=update', REST_ROWS);
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const all = (await shop.get('/rest/Product?$orderby=ID')).__ENTITIES as Record<string, any>[];
    assert.equal(all.length, 6);
    const imported = all.filter((e) => e.code.startsWith('I'));
    const viaRest = all.filter((e) => e.code.startsWith('R'));
    assert.deepEqual(imported.map(comparable), viaRest.map(comparable));
    assert.deepEqual(imported.map((e) => e.__STAMP), [1, 1, 1]);
    assert.equal(imported[0].ref, '6F1C0B5E1C2D4E3F8A9B0C1D2E3F4A5B');
    // the folded form is stored: accents and case ignored, prefix searches
    assert.deepEqual(await names("name = 'cafe CREME'"), ['Café Crème', 'Café Crème']);
    assert.deepEqual(await names("name = 'comma@'"), ['Comma, Quote "Q"', 'Comma, Quote "Q"']);
    assert.deepEqual(await names('category.name = toys'), ['Comma, Quote "Q"', 'Comma, Quote "Q"']);
    // a saved imported entity moves on from stamp 1, as any other
    const e = await shop.ds.Product.query('code = I1').first();
    e!.set('qty', 11);
    await e!.save();
    assert.equal(e!.getStamp(), 2);
  });

  it('reports each bad row with its line and reason and imports the others of its batch (exit 1)', async () => {
    const file = fileIn(shop.dir, 'bad.csv', [
      'name,code,price,qty,active,category',
      'Good1,B1,1,1,true,1',
      'Bad price,B2,abc,1,true,1',
      ',B3,1,1,true,1',
      'Bad bool,B4,1,1,yes,1',
      'Dup,B1,1,1,true,1',
      'No category,B6,1,1,true,99',
      '"Multi',
      'line",B7,1,1,1,2',
      'Short,B8',
      'Too big,B9,1,70000000000,false,',
      'Good4,B10,2,2,0,',
      '',
    ].join('\n'));
    const ran = await run(main, args('--batch-size', '4', 'Product', file));
    assert.equal(ran.code, 1);
    assert.match(ran.stdout, /^imported 3 Product entities, refused 7,/);
    const [where, ...lines] = ran.stderr.trim().split('\n');
    assert.match(where, /^dataset-rest: import: into the (SQLite file .*data\.sqlite|PostgreSQL database postgres)/);
    assert.equal(lines.length, 7, ran.stderr);
    assert.match(lines[0], /^dataset-rest: import: line 3: Product\.price \(number\) cannot take "abc": expected a number$/);
    assert.match(lines[1], /^dataset-rest: import: line 4: Product\.name cannot be null/);
    assert.match(lines[2], /^dataset-rest: import: line 5: Product\.active \(bool\) cannot take "yes"/);
    assert.match(lines[3], /^dataset-rest: import: line 6: another Product entity already has this value for 'code'$/);
    assert.match(lines[4], /^dataset-rest: import: line 7: Product\.category: Cannot find entity with "99" key/);
    assert.match(lines[5], /^dataset-rest: import: line 10: 2 fields where the header names 6$/);
    assert.match(lines[6], /^dataset-rest: import: line 11: Product\.qty \(long\) cannot take "70000000000": out of range/);
    assert.deepEqual(await names('code = B@'), ['Good1', 'Multi\nline', 'Good4']);
  });

  it('--atomic keeps nothing when a row is refused, and names the row', async () => {
    const file = fileIn(shop.dir, 'atomic.csv', 'name,code\nA1,AT1\nA2,AT2\nA3,AT1\nA4,AT4\n');
    const ran = await run(main, args('--atomic', '--batch-size', '2', 'Product', file));
    assert.equal(ran.code, 1);
    assert.match(ran.stderr, /line 4: another Product entity already has this value for 'code'/);
    assert.match(ran.stdout, /nothing imported into Product \(--atomic\): line 4 was refused/);
    assert.deepEqual(await names('code = AT@'), []);
    const ok = await run(main, args('--atomic', 'Product', fileIn(shop.dir, 'atomic-ok.csv', 'name,code\nA1,AT1\nA2,AT2\n')));
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(await names('code = AT@'), ['A1', 'A2']);
  });

  it('imports NDJSON (relations as {"__KEY"} or a foreign key, numbers as text) and a JSON array, refusing bad lines and elements by number', async () => {
    const nd = fileIn(shop.dir, 'p.ndjson', [
      '{"name":"N1","code":"N1","category":{"__KEY":2},"info":{"x":[1,2]}}',
      '{"name":"N2","code":"N2","categoryID":3,"active":true}',
      '',
      'not json',
      '{"name":"N3","code":"N3","price":"12.5"}',
      '[1]',
      '{"name":"N5","nope":1}',
    ].join('\n'));
    const ran = await run(main, args('Product', nd));
    assert.equal(ran.code, 1);
    assert.match(ran.stderr, /line 4: not JSON/);
    assert.match(ran.stderr, /line 6: expected a JSON object, not an array/);
    assert.match(ran.stderr, /line 7: 'nope' is not an attribute of Product/);
    const got = (await shop.get('/rest/Product?$filter="code=N@"&$orderby=code&$attributes=name,price,info,category')).__ENTITIES;
    assert.deepEqual(got.map((e: any) => [e.name, e.price, e.info, e.category?.__deferred.__KEY ?? null]), [['N1', null, { x: [1, 2] }, '2'], ['N2', null, null, '3'], ['N3', 12.5, null, null]]);
    const json = fileIn(shop.dir, 'p.json', '[{"name":"J1","code":"J1","added":"3!4!2020"},\n {"name":"J2","code":"J2","qty":"x"}, {"name":"J3","code":"J3","category":1}]');
    const ranJson = await run(main, args('Product', json));
    assert.equal(ranJson.code, 1);
    assert.match(ranJson.stderr, /^dataset-rest: import: index 1: Product\.qty \(long\) cannot take "x"/m);
    assert.deepEqual((await shop.get('/rest/Product?$filter="code=J@"&$orderby=code&$attributes=added')).__ENTITIES.map((e: any) => e.added), ['3!4!2020', null]);
  });

  it('cuts a JSON array larger than a read into its elements, whatever brackets, commas, quotes and escapes its strings hold', async () => {
    const tricky = 'a,]}[{\\"x\\\\\\",\\u00e9';
    const elements = Array.from({ length: 40_000 }, (_, i) => `{"name":"${tricky}${i}","code":"JA${i}","info":{"list":[1,[2,{"k":"]"}]]}}`);
    const file = fileIn(shop.dir, 'big.json', `\ufeff[\n${elements.join(',\n')}\n]\n`);
    const ran = await run(main, args('--batch-size', '5000', 'Product', file));
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /^imported 40,000 Product entities, refused 0/);
    const last = await shop.get('/rest/Product?$filter="code=JA39999"&$attributes=name,info');
    assert.deepEqual([last.__ENTITIES[0].name, last.__ENTITIES[0].info], ['a,]}[{"x\\",é39999', { list: [1, [2, { k: ']' }]] }]);
  });

  it('refuses an unknown column, dataclass, file or flag before importing anything (exit 2)', async () => {
    const before = (await shop.get('/rest/Product?$top=0')).__COUNT;
    const cases: [string[], RegExp][] = [
      [['Product', fileIn(shop.dir, 'u.csv', 'nme,code\nX,Y\n')], /header: 'nme' is not an attribute of Product, did you mean 'name'\?/],
      [['Product', fileIn(shop.dir, 'twice.csv', 'name,categoryID,category\nX,1,1\n')], /'category' and 'categoryID' set the same attribute/],
      [['Product', fileIn(shop.dir, 'u.ndjson', '{"name":"X","colour":"red"}\n')], /index|line 1: 'colour' is not an attribute of Product/],
      [['Produkt', fileIn(shop.dir, 'ok.csv', 'name\nX\n')], /there is no dataclass 'Produkt' in the model, did you mean 'Product'\?/],
      [['Product', join(shop.dir, 'missing.csv')], /missing\.csv: no such file/],
      [['Product', fileIn(shop.dir, 'data.txt', 'name\nX\n')], /cannot tell the format from the name: give --format/],
      [['--batch-size', '0', 'Product', join(shop.dir, 'ok.csv')], /--batch-size <n>.*a whole number of 1 or more/],
      [['--format', 'xml', 'Product', join(shop.dir, 'ok.csv')], /--format <format>.*one of csv, json, ndjson/],
    ];
    for (const [rest, message] of cases) {
      const ran = await run(main, args(...rest));
      assert.equal(ran.code, 2, `${rest.join(' ')}: ${ran.stderr}`);
      assert.match(ran.stderr, /^dataset-rest: /);
      assert.match(ran.stderr, message);
    }
    assert.equal((await shop.get('/rest/Product?$top=0')).__COUNT, before);
  });

  it('takes the project and the database from DATASET_REST_PROJECT and DATASET_REST_DB when the flags are absent', async () => {
    const saved = { project: process.env.DATASET_REST_PROJECT, db: process.env.DATASET_REST_DB };
    process.env.DATASET_REST_PROJECT = shop.dir;
    process.env.DATASET_REST_DB = shop.db;
    try {
      const ran = await run(main, ['Product', fileIn(shop.dir, 'env.csv', 'name,code\nFrom env,E1\n')]);
      assert.equal(ran.code, 0, ran.stderr);
    } finally {
      for (const [name, value] of [['DATASET_REST_PROJECT', saved.project], ['DATASET_REST_DB', saved.db]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    assert.deepEqual(await names('code = E1'), ['From env']);
  });

  it('prints plain progress lines when stderr is not a terminal', async () => {
    const rows = Array.from({ length: 20 }, (_, i) => `P${i},PG${i}`).join('\n');
    const ran = await run(main, args('--batch-size', '5', '--progress-every', '0', 'Product', fileIn(shop.dir, 'progress.csv', `name,code\n${rows}\n`)));
    assert.equal(ran.code, 0, ran.stderr);
    const progress = ran.stderr.split('\n').filter((l) => l.startsWith('dataset-rest import: '));
    assert.ok(progress.length >= 3, ran.stderr);
    assert.match(progress[progress.length - 1], /^dataset-rest import: 20 imported, 0 refused, [\d,]+ rows\/s, 100% of the file$/);
  });

  it('reads stdin with -', async () => {
    const child = spawn(process.execPath, [BIN, 'import', ...args('--format', 'csv', 'Product', '-')], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stderr.on('data', (d) => (err += String(d)));
    child.stdin.end('name,code\nFrom stdin,S1\n');
    const code = await new Promise((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, err);
    assert.match(out, /imported 1 Product entities, refused 0/);
    assert.deepEqual(await names('code = S1'), ['From stdin']);
  });
});

describe('dataset-rest import: events', () => {
  it('runs the entity events and constructor, or none with --no-events', async () => {
    const tmp = tempDir();
    const db = await testDatabase(join(tmp.dir, 'demo.sqlite'));
    const ds = await openDemoProject({ db, roles: false, poolSize: 2 });
    try {
      const file = (tag: string) => fileIn(tmp.dir, `${tag}.csv`, `firstName,lastName,salary,employer\n${tag},  Padded  ,1000,1\n${tag},Negative,-5,1\n`);
      const withEvents = await run(main, ['--project', DEMO_DIR, '--db', db, 'Employee', file('Evented')]);
      assert.equal(withEvents.code, 1);
      assert.match(withEvents.stderr, /line 3: Employee\.salary cannot be negative/);
      const without = await run(main, ['--project', DEMO_DIR, '--db', db, '--no-events', 'Employee', file('Raw')]);
      assert.equal(without.code, 0, without.stderr);
      const read = async (tag: string) => (await ds.Employee.query('firstName = :1', tag).orderBy('salary desc').toArray()).map((e) => [e.get('lastName'), e.get('salary'), e.get('dailyHours')]);
      // touchedLastName trims, the constructor sets 8 hours a day, validateSaveSalary refuses a negative salary
      assert.deepEqual(await read('Evented'), [['Padded', 1000, 8 * 3_600_000]]);
      assert.deepEqual(await read('Raw'), [['  Padded  ', 1000, null], ['Negative', -5, null]]);
    } finally {
      await ds.close();
      tmp.remove();
    }
  });
});

describe('dataset-rest import: its own CSV reader and date conversion agree with csv-parse and the core', () => {
  /** The records recordsOf() reads from `chunks`, and why it stopped early (if it did). */
  async function readAll(chunks: Buffer[]): Promise<{ records: SourceRecord[]; broken?: string }> {
    const source = recordsOf(new Input(Readable.from(chunks), undefined), 'csv', 1_000_000);
    const records: SourceRecord[] = [];
    try {
      for (let batch = await source.take(100); batch; batch = await source.take(100)) records.push(...batch);
    } catch (e) {
      return { records, broken: (e as Error).message };
    }
    return { records };
  }

  /** A pseudo-random generator (the same cases at each run). */
  function random(seed: number): () => number {
    return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  }

  it('reads the records csv-parse reads, whatever quotes, commas, line ends, empty lines, BOM and chunk boundaries the file holds', async () => {
    const next = random(18);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)];
    const pieces = ['a', 'bc', ' ', ',', '"', '\n', '\r\n', '\r', 'é', '€', '😀', ''];
    for (let n = 0; n < 300; n++) {
      const eol = pick(['\n', '\r\n']);
      const lines: string[] = [];
      for (let r = 0; r < 1 + Math.floor(next() * 8); r++) {
        if (next() < 0.1) lines.push('');
        const fields: string[] = [];
        for (let f = 0; f < 1 + Math.floor(next() * 5); f++) {
          let v = '';
          for (let k = Math.floor(next() * 4); k > 0; k--) v += pick(pieces);
          fields.push(/[",\r\n]/.test(v) || next() < 0.2 ? `"${v.replaceAll('"', '""')}"` : v);
        }
        lines.push(fields.join(','));
      }
      const text = `${next() < 0.2 ? '\ufeff' : ''}${lines.join(eol)}${next() < 0.5 ? eol : ''}`;
      const bytes = Buffer.from(text);
      const chunks: Buffer[] = [];
      for (let at = 0; at < bytes.length;) {
        const size = 1 + Math.floor(next() * 12);
        chunks.push(bytes.subarray(at, at + size));
        at += size;
      }
      const expected = (parseCsv(bytes, { bom: true, skip_empty_lines: true, relax_column_count: true }) as string[][]).map((r) => r.map((f) => (f === '' ? null : f)));
      const got = await readAll(chunks);
      assert.equal(got.broken, undefined, JSON.stringify(text));
      assert.deepEqual(got.records.map((r) => r.fields), expected, JSON.stringify(text));
    }
  });

  it('numbers each record by its first line, empty lines and lines inside quotes counted', async () => {
    const got = await readAll([Buffer.from('h1,h2\r\n\r\na,"x\r\ny"\r\n"",b\r\n\r\n\r\nlast,"q""')]);
    assert.equal(got.broken, 'line 8: a quoted field is not closed at the end of the file');
    assert.deepEqual(got.records.map((r) => [r.at, r.fields]), [['line 1', ['h1', 'h2']], ['line 3', ['a', 'x\r\ny']], ['line 5', [null, 'b']]]);
  });

  it('stops at a stray quote as csv-parse does, the records before it read', async () => {
    for (const [text, message] of [
      ['a,b\nc,d"e\nf,g\n', /^line 2: a quote inside a field that does not begin with one/],
      ['a,b\n"c"d,e\n', /^line 2: "d" after a closing quote/],
      ['a,b\n"c\n', /^line 2: a quoted field is not closed/],
    ] as const) {
      const got = await readAll([Buffer.from(text)]);
      assert.match(got.broken ?? '', message);
      assert.deepEqual(got.records.map((r) => r.fields), [['a', 'b']]);
      assert.throws(() => parseCsv(text, { relax_column_count: true }));
    }
  });

  it('reads a file whose lines end in a lone CR through csv-parse', async () => {
    const got = await readAll([Buffer.from('a,b\r"c\rd",e\r')]);
    assert.deepEqual(got.records.map((r) => [r.at, r.fields]), [['line 1', ['a', 'b']], ['line 2', ['c\rd', 'e']]]);
  });

  it('stores a date given as an export writes it (a day, or an instant in UTC) as the core would store it, without making a Date', () => {
    const texts = ['2024-02-29', '2023-02-29', '2000-02-29', '1900-02-29', '0000-01-01', '0099-12-31', '9999-12-31', '2024-00-10', '2024-13-01', '2024-04-31', '2024-04-30', '2024-01-00',
      '2024-03-01T10:20:30.000Z', '2024-03-01T23:59:59.999Z', '2024-03-01T24:00:00.000Z', '2024-03-01T10:60:00.000Z', '2024-03-01T10:00:60.000Z', '2023-02-29T10:00:00.000Z',
      '1999-12-31T00:00:00.000Z', '2024-03-01T10:20:30Z', '2024-03-01T10:20:30.000+01:00', '3!4!2020', '2024-3-1', 'x024-03-01', '2024-03-01 10:20:30.000Z'];
    const next = random(7);
    for (let i = 0; i < 2000; i++) {
      const d = new Date(Math.floor(next() * 253402300799999));
      texts.push(d.toISOString(), d.toISOString().slice(0, 10));
    }
    for (const dateOnly of [false, true]) {
      const attr = { name: 'd', type: 'date', dateOnly, dataClass: { name: 'T' } } as unknown as StorageAttribute;
      for (const text of texts) {
        const fast = storedDateText(text, dateOnly);
        if (fast === undefined) continue;
        for (const dialect of [sqliteDialect, postgresDialect]) assert.equal(fast, dialect.types.encode('date', coerceValue(attr, text), dateOnly), `${text} (dateOnly ${dateOnly})`);
      }
      // every text the core refuses is left to it (storedDateText gives nothing)
      for (const text of texts) if (storedDateText(text, dateOnly) !== undefined) assert.doesNotThrow(() => coerceValue(attr, text));
    }
    assert.ok(texts.filter((t) => storedDateText(t, false) !== undefined).length > 4000, 'the usual shapes take the fast path');
  });
});

describe('dataset-rest import: in a worker thread', () => {
  let shop: Shop;
  const saved = tuning.workerMinBytes;
  before(async () => {
    shop = await openShop((file) => testDatabase(file), 'worker-shop');
    tuning.workerMinBytes = 0;
  });
  after(async () => {
    tuning.workerMinBytes = saved;
    await shop.close();
  });
  const args = (...rest: string[]) => ['--project', shop.dir, '--db', shop.db, ...rest];

  it('refuses the same rows with the same lines and reasons, and imports the others', async () => {
    const file = fileIn(shop.dir, 'bad.csv', [
      'name,code,price,qty,active,category,added',
      'Good1,W1,1,1,true,1,2024-02-29',
      'Bad price,W2,abc,1,true,1,',
      ',W3,1,1,true,1,',
      'Bad date,W4,1,1,true,1,2023-02-29',
      'Dup,W1,1,1,true,1,',
      'No category,W6,1,1,true,99,',
      '"Multi',
      'line",W7,1,1,1,2,1999-12-31T23:00:00.000Z',
      'Short,W8',
      'Good4,W10,2,2,0,,',
      '',
    ].join('\n'));
    const ran = await run(main, args('--batch-size', '3', 'Product', file));
    assert.equal(ran.code, 1);
    assert.match(ran.stdout, /^imported 3 Product entities, refused 6,/);
    const lines = ran.stderr.trim().split('\n').filter((l) => !l.startsWith('dataset-rest: import: into '));
    assert.equal(lines.length, 6, ran.stderr);
    assert.match(lines[0], /^dataset-rest: import: line 3: Product\.price \(number\) cannot take "abc": expected a number$/);
    assert.match(lines[1], /^dataset-rest: import: line 4: Product\.name cannot be null/);
    assert.match(lines[2], /^dataset-rest: import: line 5: Product\.added \(date\) cannot take "2023-02-29"/);
    assert.match(lines[3], /^dataset-rest: import: line 6: another Product entity already has this value for 'code'$/);
    assert.match(lines[4], /^dataset-rest: import: line 7: Product\.category: Cannot find entity with "99" key/);
    assert.match(lines[5], /^dataset-rest: import: line 10: 2 fields where the header names 7$/);
    const got = (await shop.get('/rest/Product?$filter="code=W@"&$orderby=ID&$attributes=name,added')).__ENTITIES;
    assert.deepEqual(got.map((e: any) => [e.name, e.added ?? null]), [['Good1', '29!2!2024'], ['Multi\nline', '31!12!1999'], ['Good4', null]]);
  });

  it('refuses a bad header or first object before importing anything (exit 2), and keeps --atomic', async () => {
    for (const [file, message] of [
      [fileIn(shop.dir, 'u.csv', 'nme,code\nX,Y\n'), /header: 'nme' is not an attribute of Product, did you mean 'name'\?/],
      [fileIn(shop.dir, 'u.ndjson', '{"name":"X","colour":"red"}\n'), /line 1: 'colour' is not an attribute of Product/],
      [fileIn(shop.dir, 'empty.csv', ''), /is empty: a CSV file begins with a header row/],
    ] as const) {
      const ran = await run(main, args('Product', file));
      assert.equal(ran.code, 2, ran.stderr);
      assert.match(ran.stderr, message);
    }
    const ran = await run(main, args('--atomic', '--batch-size', '2', 'Product', fileIn(shop.dir, 'atomic.ndjson', '{"name":"A1","code":"WA1"}\n{"name":"A2","code":"WA2"}\n{"name":"A3","code":"WA1"}\n')));
    assert.equal(ran.code, 1);
    assert.match(ran.stdout, /nothing imported into Product \(--atomic\): line 3 was refused/);
    assert.deepEqual((await shop.get('/rest/Product?$filter="code=WA@"')).__ENTITIES, []);
  });
});
