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
import { main } from '../src/commands/import.js';
import { openProject } from '../src/project.js';
import { fileIn, openShop, run, type Shop } from './cli-data.js';
import { BIN, DEMO_DIR, tempDir, testDatabase } from './helpers.js';

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
    const lines = ran.stderr.trim().split('\n');
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
    const ds = await openProject(DEMO_DIR, { db, roles: false, poolSize: 2 });
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
