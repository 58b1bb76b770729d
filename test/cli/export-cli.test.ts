// dataset-rest export (issue 18): the entities of a dataclass as CSV, NDJSON or a JSON array, to
// stdout or a file — filtered with the query grammar, ordered, the columns chosen; a CSV it writes
// imports back into a new database as the same entities (keys, relations, every type); refusals
// before any output (exit 2); 100,000 rows written with the heap bounded (memory, not time).

import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, describe, it } from 'node:test';
import { main as exportMain } from '../../src/commands/export.js';
import { main as importMain } from '../../src/commands/import.js';
import { fileIn, openShop, run, type Shop } from '../support/cli-data.js';
import { testDatabase } from '../support/helpers.js';

const PRODUCTS = [
  'name,code,price,qty,active,added,seen,info,ref,category',
  'Café Crème,C1,2.5,10,true,2024-02-29,2024-03-01T10:20:30.123Z,"{""a"":1,""b"":[true,null,""x,y""]}",6f1c0b5e-1c2d-4e3f-8a9b-0c1d2e3f4a5b,1',
  '"Comma, Quote ""Q""",C2,-1e3,0,false,1999-12-31,,{},,2',
  '"Two',
  'Lines",C3,,,,,,,,',
  'Ünïcödé ☃,C4,0.1,-7,true,0001-01-01,1970-01-01T00:00:00.000Z,"[1,2]",,3',
  '',
].join('\n');

describe('dataset-rest export', () => {
  let shop: Shop;
  before(async () => {
    shop = await openShop((file) => testDatabase(file));
    const ran = await run(importMain, ['--project', shop.dir, '--db', shop.db, 'Product', fileIn(shop.dir, 'products.csv', PRODUCTS)]);
    assert.equal(ran.code, 0, ran.stderr);
  });
  after(() => shop.close());

  const args = (...rest: string[]) => ['--project', shop.dir, '--db', shop.db, ...rest];
  const entities = async (s: Shop) => ((await s.get('/rest/Product?$orderby=ID')).__ENTITIES as Record<string, unknown>[]).map(({ __TIMESTAMP, ...e }) => (void __TIMESTAMP, e));

  it('writes a CSV that imports back into a new database as the same entities', async () => {
    const file = join(shop.dir, 'out.csv');
    const ran = await run(exportMain, args('Product', '--output', file));
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stderr, /export: 4 Product entities written to .*out\.csv/);
    const text = readFileSync(file, 'utf8');
    // (a file starting with ID is taken by Excel for SYLK: that first name is quoted)
    assert.equal(text.split('\r\n')[0], '"ID",name,code,price,qty,active,added,seen,info,ref,categoryID');
    const copy = await openShop((f) => testDatabase(f), 'copy');
    try {
      const back = await run(importMain, ['--project', copy.dir, '--db', copy.db, 'Product', file]);
      assert.equal(back.code, 0, back.stderr);
      assert.deepEqual(await entities(copy), await entities(shop));
      // the keys came from the file: a new entity gets the next one, on either engine
      const created = await copy.post('/rest/Product?$method=update', { name: 'after the import', code: 'NEW' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal(created.body.__KEY, '5');
    } finally {
      await copy.close();
    }
  });

  it('exports what a query selects, in an order, with the columns named, as NDJSON or a JSON array', async () => {
    const nd = await run(exportMain, args('Product', '--filter', 'price < :1 and category.name != :2', '--params', '[5, "food"]', '--orderby', 'price desc', '--attributes', 'code,price,categoryID', '--format', 'ndjson'));
    assert.equal(nd.code, 0, nd.stderr);
    assert.deepEqual(nd.stdout.trim().split('\n').map((l) => JSON.parse(l)), [{ code: 'C1', price: 2.5, categoryID: 1 }, { code: 'C2', price: -1000, categoryID: 2 }]);
    const json = await run(exportMain, args('Product', '--filter', 'name = "cafe@" or name = "two@"', '--attributes', 'name,info', '--format', 'json'));
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), [{ name: 'Café Crème', info: { a: 1, b: [true, null, 'x,y'] } }, { name: 'Two\nLines', info: null }]);
    const none = await run(exportMain, args('Product', '--filter', 'qty > 1000', '--format', 'json'));
    assert.deepEqual(JSON.parse(none.stdout), []);
    const csv = await run(exportMain, args('Product', '--filter', 'code = C4', '--attributes', 'name,added,seen'));
    assert.equal(csv.stdout, 'name,added,seen\r\nÜnïcödé ☃,0001-01-01,1970-01-01T00:00:00.000Z\r\n');
  });

  it('refuses a bad query, attribute, dataclass or flag before writing anything (exit 2)', async () => {
    const cases: [string[], RegExp][] = [
      [['Product', '--filter', 'nope = 1'], /The "nope" attribute cannot be found in the "Product" dataclass/],
      [['Product', '--filter', 'name = '], /query/],
      [['Product', '--attributes', 'name,colour'], /colour/],
      [['Product', '--orderby', 'colour'], /colour/],
      [['Prodct'], /there is no dataclass 'Prodct' in the model, did you mean 'Product'\?/],
      [['Product', '--format', 'xml'], /one of csv, ndjson, json/],
      [['Product', '--params', '{"a":1}'], /--params: a JSON array/],
    ];
    for (const [rest, message] of cases) {
      const ran = await run(exportMain, args(...rest));
      assert.equal(ran.code, 2, `${rest.join(' ')}: ${ran.stderr}`);
      assert.equal(ran.stdout, '');
      assert.match(ran.stderr, /^dataset-rest: /);
      assert.match(ran.stderr, message);
    }
  });

  it('refuses a database that is not there (a mistyped --db: no file made, nothing seeded) and an output it cannot open, exit 2; a write that fails on the way exits 1, said', async () => {
    const missing = join(shop.dir, 'typo.sqlite');
    const typo = await run(exportMain, ['--project', shop.dir, '--db', missing, 'Product']);
    assert.equal(typo.code, 2, typo.stderr);
    assert.match(typo.stderr, /^dataset-rest: there is no database at .*typo\.sqlite: name the project's database with --db/);
    assert.equal(typo.stdout, '');
    assert.ok(!existsSync(missing));
    const nowhere = join(shop.dir, 'no-such-folder', 'out.csv');
    const unopened = await run(exportMain, args('Product', '--output', nowhere));
    assert.equal(unopened.code, 2, unopened.stderr);
    assert.match(unopened.stderr, /^dataset-rest: export: from the .*\ndataset-rest: --output: cannot write .*out\.csv: ENOENT/);
    if (existsSync('/dev/full')) {
      // (it waited forever for a stream already closed by its error: node ended it with exit 13, silent)
      const full = await run(exportMain, args('Product', '--output', '/dev/full'));
      assert.equal(full.code, 1, full.stderr);
      assert.match(full.stderr, /cannot write \/dev\/full: ENOSPC/);
    }
  });

  it('says on stderr what it changed in the schema when model.json changed since the last start, the data on stdout untouched', async () => {
    const other = await openShop(testDatabase, 'changed');
    try {
      await other.ds.close();
      const modelFile = join(other.dir, 'model.json');
      const model = JSON.parse(readFileSync(modelFile, 'utf8'));
      model.dataClasses.find((dc: { name: string }) => dc.name === 'Category').attributes.push({ name: 'motto', type: 'string' });
      writeFileSync(modelFile, JSON.stringify(model));
      const ran = await run(exportMain, ['--project', other.dir, '--db', other.db, 'Category', '--format', 'ndjson']);
      assert.equal(ran.code, 0, ran.stderr);
      assert.match(ran.stderr, /^schema: Category: add attribute motto/m);
      assert.equal(ran.stdout.trim().split('\n').length, 3);
      assert.doesNotMatch(ran.stdout, /schema:/);
    } finally {
      await other.close().catch(() => undefined);
    }
  });

  it('exports 100,000 entities with the heap bounded (streamed a chunk at a time)', async () => {
    const rows = 100_000;
    let csv = 'name,code,price,qty,info\n';
    for (let n = 0; n < rows; n++) csv += `item ${n},M${n},${n / 10},${n},"{""n"":${n},""text"":""${'x'.repeat(40)}""}"\n`;
    const imported = await run(importMain, args('--no-events', 'Product', fileIn(shop.dir, 'many.csv', csv)));
    assert.equal(imported.code, 0, imported.stderr);
    csv = '';
    const file = join(shop.dir, 'many-out.ndjson');
    // what the export keeps alive (the heap after a full collection), sampled as it runs: garbage
    // made along the way, whose amount depends on the engine's driver and the collector's moods, is not counted
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    gc();
    const baseline = process.memoryUsage().heapUsed;
    let peak = baseline;
    const sampler = setInterval(() => {
      gc();
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }, 40);
    try {
      const ran = await run(exportMain, args('Product', '--filter', 'code = M@', '--output', file));
      assert.equal(ran.code, 0, ran.stderr);
    } finally {
      clearInterval(sampler);
    }
    const text = readFileSync(file, 'utf8');
    assert.equal(text.split('\n').length - 1, rows);
    const grew = (peak - baseline) / 1e6;
    console.log(`# export of ${rows} rows: the live heap grew by ${grew.toFixed(1)} MB at most`);
    // the file is ~20 MB of text, and the rows as values would take several times that
    assert.ok(grew < 16, `the heap grew by ${grew.toFixed(1)} MB while exporting ${(text.length / 1e6).toFixed(1)} MB`);
  });
});
