// Model changes on a live database (issue 18): renames, type changes, new notNull and unique,
// names that come back, several instances at once, and the lines a start logs. On the engine the
// run names (test/run.ts runs this file on SQLite and on PostgreSQL: testDatabase).

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Datastore } from '../../src/datastore/datastore.js';
import { buildModel } from '../../src/model/load-model.js';
import { openProject } from '../../src/project/open.js';
import { SchemaError, syncSchema } from '../../src/storage/schema.js';
import { databaseTarget, openStorage } from '../../src/storage/open.js';
import { readMeta } from '../../src/storage/system-tables/meta.js';
import { tableColumns } from '../../src/storage/system-tables/tables.js';
import { TransactionManager } from '../../src/storage/transactions.js';
import { TEST_ENGINE, tempDir, testDatabase } from '../support/helpers.js';
import { ENGINES } from '../support/storage-engines.js';

type Attr = Record<string, unknown>;
const KEY = { name: 'ID', type: 'long', identifying: true, autoincrement: true };
const model = (attrs: Attr[], cls: Record<string, unknown> = {}) => buildModel({ name: 'S', dataClasses: [{ name: 'Thing', ...cls, attributes: [KEY, ...attrs] }] });

describe(`model changes on a live database (${TEST_ENGINE})`, () => {
  const tmp = tempDir();
  after(() => tmp.remove());
  let n = 0;
  /** a new database for one test, and how to open it with a model, or bring it in line (the steps' lines) */
  const database = async () => {
    const db = await testDatabase(join(tmp.dir, `db${++n}.sqlite`));
    const storage = () => openStorage(databaseTarget(db), { poolSize: 2 });
    return {
      open: async (m: ReturnType<typeof model>) => Datastore.open(m, await storage()),
      async sync(m: ReturnType<typeof model>): Promise<string[]> {
        const s = await storage();
        try {
          return (await syncSchema(s, m)).map((step) => step.description);
        } finally {
          await s.close();
        }
      },
      async columns(table = 'Thing'): Promise<string[]> {
        const s = await storage();
        try {
          return await tableColumns(s, table);
        } finally {
          await s.close();
        }
      },
    };
  };
  /** saves entities with these values, in order (keys 1, 2, …) */
  const fill = async (ds: Awaited<ReturnType<typeof Datastore.open>>, values: Record<string, unknown>[], cls = 'Thing') => {
    for (const v of values) {
      const e = ds.dataClass(cls)!.new();
      for (const [k, x] of Object.entries(v)) e.set(k, x);
      await e.save();
    }
  };
  const values = async (ds: Awaited<ReturnType<typeof Datastore.open>>, attr: string, cls = 'Thing') =>
    (await ds.dataClass(cls)!.all().orderBy('ID').toArray()).map((e) => e.get(attr));

  it('a renamed attribute carries its data (text, folded twin and index too), and the rename is harmless once applied', async () => {
    const db = await database();
    let ds = await db.open(model([{ name: 'title', type: 'string', indexed: true }, { name: 'n', type: 'long', unique: true }]));
    await fill(ds, [{ title: 'Émile', n: 1 }, { title: 'Zoé', n: 2 }]);
    await ds.close();
    const renamed = model([{ name: 'name', type: 'string', indexed: true, renamedFrom: 'title' }, { name: 'count', type: 'long', unique: true, renamedFrom: 'n' }]);
    assert.deepEqual(await db.sync(renamed), ['rename attribute Thing.title → Thing.name', 'rename attribute Thing.n → Thing.count']);
    ds = await db.open(renamed);
    assert.deepEqual(await values(ds, 'name'), ['Émile', 'Zoé']);
    assert.equal(await ds.Thing.query('name = emile').length, 1); // the folded twin came along
    assert.deepEqual(await values(ds, 'count'), [1, 2]);
    const dup = ds.Thing.new();
    dup.set('count', 2);
    await assert.rejects(dup.save()); // still unique
    await ds.close();
    // the model still says renamedFrom: nothing more to do
    assert.deepEqual(await db.sync(renamed), []);
    assert.ok(!(await db.columns()).includes('title'));
  });

  it('a renamed relation takes its implicit foreign key along (employer → company: employerID → companyID)', async () => {
    const db = await database();
    const rel = (name: string, renamedFrom?: string) => buildModel({ name: 'S', dataClasses: [
      { name: 'Company', attributes: [KEY, { name: 'name', type: 'string' }] },
      { name: 'Person', attributes: [KEY, { name, kind: 'relatedEntity', type: 'Company', ...(renamedFrom ? { renamedFrom } : {}) }] },
    ] });
    let ds = await db.open(rel('employer'));
    await fill(ds, [{ name: 'Acme' }], 'Company');
    const p = ds.dataClass('Person')!.new();
    p.set('employer', await ds.dataClass('Company')!.get(1));
    await p.save();
    await ds.close();
    assert.deepEqual(await db.sync(rel('company', 'employer')), ['rename attribute Person.employerID → Person.companyID']);
    ds = await db.open(rel('company', 'employer'));
    const company = await (await ds.dataClass('Person')!.get(1))!.related('company');
    assert.equal((company as { get(n: string): unknown } | null)?.get('name'), 'Acme');
    await ds.close();
  });

  it('undoing a rename takes the data back, rows written meanwhile included', async () => {
    const db = await database();
    let ds = await db.open(model([{ name: 'title', type: 'string' }]));
    await fill(ds, [{ title: 'before' }]);
    await ds.close();
    ds = await db.open(model([{ name: 'name', type: 'string', renamedFrom: 'title' }]));
    await fill(ds, [{ name: 'meanwhile' }]);
    await ds.close();
    assert.deepEqual(await db.sync(model([{ name: 'title', type: 'string', renamedFrom: 'name' }])), ['rename attribute Thing.name → Thing.title']);
    ds = await db.open(model([{ name: 'title', type: 'string' }]));
    assert.deepEqual(await values(ds, 'title'), ['before', 'meanwhile']);
    await ds.close();
  });

  it('a renamed dataclass carries its table: entities, stamps, keys that go on counting, indexes', async () => {
    const db = await database();
    const firm = buildModel({ name: 'S', dataClasses: [{ name: 'Firm', attributes: [KEY, { name: 'name', type: 'string', indexed: true }] }] });
    let ds = await db.open(firm);
    await fill(ds, [{ name: 'Acme' }, { name: 'Bolt' }], 'Firm');
    const e = await ds.dataClass('Firm')!.get(1);
    e!.set('name', 'ACME');
    await e!.save(); // stamp 2
    await ds.close();
    const company = buildModel({ name: 'S', dataClasses: [{ name: 'Company', renamedFrom: 'Firm', attributes: [KEY, { name: 'name', type: 'string', indexed: true }] }] });
    assert.deepEqual(await db.sync(company), ['rename dataclass Firm → Company']);
    ds = await db.open(company);
    assert.deepEqual(await values(ds, 'name', 'Company'), ['ACME', 'Bolt']);
    assert.equal((await ds.dataClass('Company')!.get(1))!.getStamp(), 2);
    assert.equal(await ds.dataClass('Company')!.query('name = acme').length, 1);
    await fill(ds, [{ name: 'Cog' }], 'Company');
    assert.equal((await ds.dataClass('Company')!.all().orderBy('ID desc').first())!.get('ID'), 3);
    await ds.close();
    assert.deepEqual(await db.sync(company), []);
    assert.deepEqual(await db.columns('Firm'), []);
  });

  it('validates renamedFrom in model.json: a name, not its own, not one the model still uses, not given twice', () => {
    assert.throws(() => model([{ name: 'a', type: 'long', renamedFrom: 'a' }]), /attributes\[1\]\.renamedFrom: 'a' is its own name/);
    assert.throws(() => model([{ name: 'a', type: 'long' }, { name: 'b', type: 'long', renamedFrom: 'a' }]), /attributes\[2\]\.renamedFrom: 'a' is still the name of an attribute of Thing in the model/);
    assert.throws(() => model([{ name: 'a', type: 'long', renamedFrom: 'x' }, { name: 'b', type: 'long', renamedFrom: 'x' }]), /'x' is already the renamedFrom of a/);
    assert.throws(() => model([{ name: 'a', type: 'long', renamedFrom: 'no good' }]), /renamedFrom: must be a name/);
    assert.throws(() => model([{ name: 'Title', type: 'string', renamedFrom: 'title' }]), /'title' differs from 'Title' only by case/);
    assert.throws(() => buildModel({ name: 'S', dataClasses: [{ name: 'A', attributes: [KEY] }, { name: 'B', renamedFrom: 'A', attributes: [KEY] }] }), /dataClasses\[1\]\.renamedFrom: 'A' is still the name of a dataclass/);
  });

  it('a dataclass renamed leaves its former name free: a new dataclass of that name gets tables and indexes of its own', async () => {
    const db = await database();
    const two = (names: [string, string?][]) => buildModel({ name: 'S', dataClasses: names.map(([name, renamedFrom]) => ({ name, ...(renamedFrom ? { renamedFrom } : {}), attributes: [KEY, { name: 'code', type: 'string', unique: true, indexed: true }] })) });
    let ds = await db.open(two([['Firm']]));
    await fill(ds, [{ code: 'A' }], 'Firm');
    await ds.close();
    assert.deepEqual(await db.sync(two([['Company', 'Firm']])), ['rename dataclass Firm → Company']);
    assert.deepEqual(await db.sync(two([['Company'], ['Firm']])), ['create dataclass Firm (2 storage attributes)']);
    ds = await db.open(two([['Company'], ['Firm']]));
    await fill(ds, [{ code: 'A' }], 'Firm'); // its own unique index, not the renamed one's
    const again = ds.dataClass('Firm')!.new();
    again.set('code', 'A');
    await assert.rejects(again.save());
    assert.equal(await ds.dataClass('Firm')!.query('code = a').length, 1);
    assert.equal(await ds.dataClass('Company')!.query('code = a').length, 1);
    await ds.close();
  });

  it('an index added or dropped is a line of its own', async () => {
    const db = await database();
    await (await db.open(model([{ name: 'v', type: 'long' }, { name: 's', type: 'string', indexed: true }]))).close();
    assert.deepEqual(await db.sync(model([{ name: 'v', type: 'long', indexed: true }, { name: 's', type: 'string' }])), ['Thing.v: index added', 'Thing.s: index dropped']);
  });

  it('refuses a renamedFrom that names nothing the database has or had, saying so', async () => {
    const db = await database();
    await (await db.open(model([{ name: 'a', type: 'long' }]))).close();
    await assert.rejects(db.sync(model([{ name: 'a', type: 'long' }, { name: 'b', type: 'long', renamedFrom: 'nope' }])),
      /Thing\.b: renamedFrom 'nope' names no attribute Thing has or had \(remove renamedFrom to add b as a new, empty attribute\)/);
    await assert.rejects(db.sync(buildModel({ name: 'S', dataClasses: [{ name: 'Thing', attributes: [KEY, { name: 'a', type: 'long' }] }, { name: 'Other', renamedFrom: 'Gone', attributes: [KEY] }] })),
      /Other: renamedFrom 'Gone' names no dataclass this database has or had/);
  });

  it('widening changes convert the values in place: byte → word → long → long64 → number', async () => {
    const db = await database();
    let ds = await db.open(model([{ name: 'v', type: 'byte', indexed: true }]));
    await fill(ds, [{ v: -128 }, { v: 127 }, { v: null }]);
    await ds.close();
    assert.deepEqual(await db.sync(model([{ name: 'v', type: 'word', indexed: true }])), ['Thing.v: byte → word, 2 values converted']);
    assert.deepEqual(await db.sync(model([{ name: 'v', type: 'long', indexed: true }])), ['Thing.v: word → long, 2 values converted']);
    assert.deepEqual(await db.sync(model([{ name: 'v', type: 'long64', indexed: true }])), ['Thing.v: long → long64, 2 values converted']);
    ds = await db.open(model([{ name: 'v', type: 'long64', indexed: true }]));
    await fill(ds, [{ v: 2 ** 40 }]);
    await ds.close();
    assert.deepEqual(await db.sync(model([{ name: 'v', type: 'number', indexed: true }])), ['Thing.v: long64 → number, 3 values converted']);
    ds = await db.open(model([{ name: 'v', type: 'number', indexed: true }]));
    await fill(ds, [{ v: 1.5 }]);
    assert.deepEqual(await values(ds, 'v'), [-128, 127, null, 2 ** 40, 1.5]);
    assert.deepEqual((await ds.Thing.query('v > 100').orderBy('v').toArray()).map((e) => e.get('v')), [127, 2 ** 40]);
    await ds.close();
  });

  it('anything → string: numbers, booleans, dates, uuids and objects written as text, folded and queryable', async () => {
    const db = await database();
    const attrs = (t: (name: string, type: string) => Attr) => [t('l', 'long'), t('num', 'number'), t('b', 'bool'), t('d', 'date'), t('day', 'date'), t('u', 'uuid'), t('o', 'object')];
    let ds = await db.open(model(attrs((name, type) => ({ name, type, ...(name === 'day' ? { dateOnly: true } : {}) }))));
    await fill(ds, [{ l: 42, num: 2.5, b: true, d: new Date('2024-01-02T03:04:05.678Z'), day: '2024-02-29', u: 'ABCDEF0123456789ABCDEF0123456789', o: { a: 1 } }, { num: 3, b: false }]);
    await ds.close();
    const text = model(attrs((name) => ({ name, type: 'string', indexed: name === 'l' })));
    const lines = await db.sync(text);
    assert.deepEqual(lines, [
      'Thing.l: long → string, 1 value converted, index added', 'Thing.num: number → string, 2 values converted', 'Thing.b: bool → string, 2 values converted',
      'Thing.d: date (with time) → string, 1 value converted', 'Thing.day: date (date only) → string, 1 value converted', 'Thing.u: uuid → string, 1 value converted',
      'Thing.o: object → string, 1 value converted',
    ]);
    ds = await db.open(text);
    const [first, second] = await ds.Thing.all().orderBy('ID').toArray();
    assert.deepEqual(['l', 'num', 'b', 'd', 'day', 'u', 'o'].map((a) => first.get(a)), ['42', '2.5', 'true', '2024-01-02T03:04:05.678Z', '2024-02-29', 'ABCDEF0123456789ABCDEF0123456789', '{"a":1}']);
    assert.deepEqual([second.get('num'), second.get('b')], ['3', 'false']);
    assert.equal(await ds.Thing.query('l = 42').length, 1);
    assert.equal(await ds.Thing.query('b = TRUE').length, 1); // folded: case aside
    await ds.close();
  });

  it('date only → date with time keeps each day, at midnight UTC', async () => {
    const db = await database();
    let ds = await db.open(model([{ name: 'd', type: 'date', dateOnly: true }]));
    await fill(ds, [{ d: '2024-03-01' }, { d: null }]);
    await ds.close();
    assert.deepEqual(await db.sync(model([{ name: 'd', type: 'date' }])), ['Thing.d: date (date only) → date (with time), 1 value converted']);
    ds = await db.open(model([{ name: 'd', type: 'date' }]));
    assert.deepEqual(await values(ds, 'd'), [new Date('2024-03-01T00:00:00.000Z'), null]);
    assert.equal(await ds.Thing.query('d = :1', new Date('2024-03-01T00:00:00Z')).length, 1);
    await ds.close();
  });

  it('narrowing is refused naming the first value that does not fit (its key and value), and applied when all fit', async () => {
    const db = await database();
    let ds = await db.open(model([{ name: 'big', type: 'long64' }, { name: 'x', type: 'number' }, { name: 's', type: 'string' }]));
    await fill(ds, [{ big: 5, x: 1, s: ' 12 ' }, { big: 3_000_000_000, x: 2.5, s: 'twelve' }, { big: -3_000_000_000, x: 3, s: '7' }]);
    await ds.close();
    const narrow = model([{ name: 'big', type: 'long' }, { name: 'x', type: 'long' }, { name: 's', type: 'long' }]);
    await assert.rejects(db.sync(narrow), (e: SchemaError) => {
      assert.ok(e instanceof SchemaError);
      assert.match(e.message, /Thing\.big: long64 → long refused, the value 3000000000 of Thing\(2\) does not fit \(long takes whole numbers from -2147483648 to 2147483647\), nor do 1 other value/);
      assert.match(e.message, /Thing\.x: number → long refused, the value 2\.5 of Thing\(2\) does not fit/);
      assert.match(e.message, /Thing\.s: string → long refused, the value "twelve" of Thing\(2\) does not fit/);
      return true;
    });
    // nothing was half-applied
    ds = await db.open(model([{ name: 'big', type: 'long64' }, { name: 'x', type: 'number' }, { name: 's', type: 'string' }]));
    assert.deepEqual(await values(ds, 's'), [' 12 ', 'twelve', '7']);
    const e = await ds.Thing.get(2);
    e!.set('big', 4);
    e!.set('x', 2);
    e!.set('s', '-4');
    await e!.save();
    await ds.Thing.get(3).then(async (t) => {
      t!.set('big', 6);
      await t!.save();
    });
    await ds.close();
    assert.deepEqual(await db.sync(narrow), ['Thing.big: long64 → long, 3 values converted', 'Thing.x: number → long, 3 values converted', 'Thing.s: string → long, 3 values converted']);
    ds = await db.open(narrow);
    assert.deepEqual(await values(ds, 's'), [12, -4, 7]);
    assert.deepEqual(await values(ds, 'x'), [1, 2, 3]);
    assert.equal(await ds.Thing.query('s < 0').length, 1);
    await ds.close();
  });

  it('checks a unique attribute again once its values are converted: texts that read as one number are refused, naming them', async () => {
    const db = await database();
    const ds = await db.open(model([{ name: 'code', type: 'string', unique: true }]));
    await fill(ds, [{ code: '1' }, { code: '01' }, { code: '2' }]);
    await ds.close();
    await assert.rejects(db.sync(model([{ name: 'code', type: 'long', unique: true }])), /Thing\.code: cannot become unique, the value 1 is held by 2 entities; 2 entities in all share a value with another \(Thing\(1\) 1, Thing\(2\) 1\)/);
    assert.deepEqual(await db.sync(model([{ name: 'code', type: 'string', unique: true }])), []); // all rolled back
  });

  it('date with time → date only: refused while a date has a time of day, applied once all are at midnight UTC', async () => {
    const db = await database();
    let ds = await db.open(model([{ name: 'd', type: 'date' }]));
    await fill(ds, [{ d: new Date('2024-01-01T00:00:00Z') }, { d: new Date('2024-01-02T12:00:00Z') }, { d: null }]);
    await ds.close();
    const dayOnly = model([{ name: 'd', type: 'date', dateOnly: true }]);
    await assert.rejects(db.sync(dayOnly), /Thing\.d: date \(with time\) → date \(date only\) refused, the value "2024-01-02T12:00:00\.000Z" of Thing\(2\) does not fit \(a date only has no time of day/);
    ds = await db.open(model([{ name: 'd', type: 'date' }]));
    const e = await ds.Thing.get(2);
    e!.set('d', new Date('2024-01-02T00:00:00Z'));
    await e!.save();
    await ds.close();
    assert.deepEqual(await db.sync(dayOnly), ['Thing.d: date (with time) → date (date only), 2 values converted']);
    ds = await db.open(dayOnly);
    assert.deepEqual(await values(ds, 'd'), [new Date('2024-01-01T00:00:00Z'), new Date('2024-01-02T00:00:00Z'), null]);
    assert.equal(await ds.Thing.query('d = :1', '2024-01-02').length, 1);
    await ds.close();
  });

  it('refuses a type change it cannot convert, saying what to do instead', async () => {
    const db = await database();
    await (await db.open(model([{ name: 'p', type: 'image' }]))).close();
    await assert.rejects(db.sync(model([{ name: 'p', type: 'string' }])), /Thing\.p: the type changed from image → string; .*add a new attribute of type string, copy the values into it/);
  });

  it('refuses a new notNull over nulls and a new unique over duplicates, naming the first keys and how many', async () => {
    const db = await database();
    let ds = await db.open(model([{ name: 'code', type: 'string' }, { name: 'n', type: 'long' }]));
    await fill(ds, [{ code: 'A', n: 1 }, { code: 'B' }, { code: 'A', n: 3 }, { code: 'B' }, { code: 'C' }]);
    await ds.close();
    await assert.rejects(db.sync(model([{ name: 'code', type: 'string', unique: true }, { name: 'n', type: 'long', notNull: true }])), (e: SchemaError) => {
      assert.match(e.message, /Thing\.code: cannot become unique, the value "A" is held by 2 entities; 4 entities in all share a value with another \(Thing\(1\) "A", Thing\(2\) "B", Thing\(3\) "A", Thing\(4\) "B"\)/);
      assert.match(e.message, /Thing\.n: cannot become notNull, 3 entities hold null \(Thing\(2\), Thing\(4\), Thing\(5\)\): give them a value first/);
      return true;
    });
    // a new notNull attribute on entities that exist would leave them null
    await assert.rejects(db.sync(model([{ name: 'code', type: 'string' }, { name: 'n', type: 'long' }, { name: 'm', type: 'long', notNull: true }])), /Thing\.m: cannot become notNull, 5 entities hold null/);
    ds = await db.open(model([{ name: 'code', type: 'string' }, { name: 'n', type: 'long' }]));
    await ds.Thing.query('n = null').drop();
    const third = await ds.Thing.get(3);
    third!.set('code', 'D');
    await third!.save();
    await ds.close();
    assert.deepEqual(await db.sync(model([{ name: 'code', type: 'string', unique: true }, { name: 'n', type: 'long', notNull: true }])), ['Thing.code: now unique', 'Thing.n: now notNull']);
  });

  it('an attribute that left the model keeps its data hidden; back with its type it has it again, with another type it starts empty and the old values are set aside', async () => {
    const db = await database();
    let ds = await db.open(model([{ name: 'note', type: 'string', indexed: true }]));
    await fill(ds, [{ note: 'kept' }]);
    await ds.close();
    assert.deepEqual(await db.sync(model([])), ['Thing.note: left the model, its column kept hidden with its 1 values']);
    assert.deepEqual(await db.sync(model([{ name: 'note', type: 'string', indexed: true }])), ['Thing.note: back in the model, with its 1 kept values, index added']);
    ds = await db.open(model([{ name: 'note', type: 'string', indexed: true }]));
    assert.deepEqual(await values(ds, 'note'), ['kept']);
    await ds.close();
    await db.sync(model([]));
    assert.deepEqual(await db.sync(model([{ name: 'note', type: 'long' }])), ['Thing.note: back as long, starting empty; the string values it kept set aside in the hidden column note__was_string']);
    ds = await db.open(model([{ name: 'note', type: 'long' }]));
    await fill(ds, [{ note: 7 }]);
    assert.deepEqual(await values(ds, 'note'), [null, 7]);
    await ds.close();
    assert.ok((await db.columns()).includes('note__was_string'));
  });

  it('suggests renamedFrom when an attribute leaves and one of its type appears (the closest name of several), and when a dataclass leaves as another is created', async () => {
    const db = await database();
    const ds = await db.open(model([{ name: 'title', type: 'string' }, { name: 'n', type: 'long' }]));
    await fill(ds, [{ title: 'kept', n: 1 }]);
    await ds.close();
    const hint = (gone: string, likely: string, more = '') => `; if ${likely}${more} is its new name, "renamedFrom": "${gone}" on the attribute ${likely} in model.json moves its values there — give it before this change is applied (migrate --dry-run shows the plan first)`;
    assert.deepEqual(await db.sync(model([{ name: 'name', type: 'string' }, { name: 'count', type: 'number' }, { name: 'titles', type: 'string' }])), [
      'Thing: add attribute name (string)',
      'Thing: add attribute count (number)',
      'Thing: add attribute titles (string)',
      `Thing.title: left the model, its column kept hidden with its 1 values${hint('title', 'titles', ' (or name)')}`,
      // a long left and a number appeared: another type, no suggestion
      'Thing.n: left the model, its column kept hidden with its 1 values',
    ]);
    const dcs = (...names: string[]) => buildModel({ name: 'S', dataClasses: names.map((name) => ({ name, attributes: [KEY] })) });
    const other = await database();
    await (await other.open(dcs('Firm'))).close();
    assert.deepEqual(await other.sync(dcs('Company')), [
      'create dataclass Company (1 storage attribute)',
      'dataclass Firm: left the model, its table kept with its data (hidden); if Company is its new name, "renamedFrom": "Firm" on the dataclass Company in model.json moves its data there — give it before this change is applied (migrate --dry-run shows the plan first)',
    ]);
  });

  it('a dataclass renamed to the name of one that left the model takes that name with its own data; the former one\'s table is set aside, still kept', async () => {
    const db = await database();
    const dcs = (...list: Record<string, unknown>[]) => buildModel({ name: 'S', dataClasses: list.map((d) => ({ attributes: [KEY, { name: 'v', type: 'string', indexed: true, unique: true }], ...d })) });
    let ds = await db.open(dcs({ name: 'Old' }, { name: 'Firm' }));
    await fill(ds, [{ v: 'old one' }], 'Old');
    await fill(ds, [{ v: 'firm one' }, { v: 'firm two' }], 'Firm');
    await ds.close();
    assert.deepEqual(await db.sync(dcs({ name: 'Firm' })), ['dataclass Old: left the model, its table kept with its data (hidden)']);
    const renamed = dcs({ name: 'Old', renamedFrom: 'Firm' });
    assert.deepEqual(await db.sync(renamed), ['rename dataclass Firm → Old; the table a former Old kept set aside as Old__was_1 (hidden, with its data)']);
    ds = await db.open(renamed);
    assert.deepEqual(await values(ds, 'v', 'Old'), ['firm one', 'firm two']);
    assert.equal(await ds.dataClass('Old')!.query('v = "FIRM TWO"').length, 1); // its indexes, under the name
    const dup = ds.dataClass('Old')!.new();
    dup.set('v', 'firm one');
    await assert.rejects(dup.save()); // still unique
    await ds.close();
    assert.deepEqual(await db.sync(renamed), []);
    assert.deepEqual(await db.columns('Old__was_1'), ['ID', 'v', 'v__fold', '__stamp', '__timestamp']);
    // renamedFrom naming nothing while the name is a former dataclass: it is back, with its data
    const back = await database();
    ds = await back.open(dcs({ name: 'Old' }));
    await fill(ds, [{ v: 'kept' }], 'Old');
    await ds.close();
    await back.sync(dcs({ name: 'Other' }));
    assert.deepEqual(await back.sync(dcs({ name: 'Old', renamedFrom: 'Never' })), ['dataclass Old: back in the model, with the data its table kept', 'dataclass Other: left the model, its table kept with its data (hidden)']);
  });

  it('an attribute renamed to the name of a former one takes the name, its values, index and unique; the line says where the former values went', async () => {
    const db = await database();
    let ds = await db.open(model([{ name: 'a', type: 'string', indexed: true }, { name: 'b', type: 'string', indexed: true, unique: true }]));
    await fill(ds, [{ a: 'Alpha', b: 'Beta' }]);
    await ds.close();
    await db.sync(model([{ name: 'a', type: 'string', indexed: true }]));
    const renamed = model([{ name: 'b', type: 'string', indexed: true, unique: true, renamedFrom: 'a' }]);
    assert.deepEqual(await db.sync(renamed), ['rename attribute Thing.a → Thing.b; the values a former b kept set aside in the hidden column b__was_string, now unique']);
    ds = await db.open(renamed);
    assert.deepEqual(await values(ds, 'b'), ['Alpha']);
    assert.equal(await ds.Thing.query('b = alpha').length, 1);
    await fill(ds, [{ b: 'Beta' }]);
    const dup = ds.Thing.new();
    dup.set('b', 'Beta');
    await assert.rejects(dup.save());
    await ds.close();
    assert.ok((await db.columns()).includes('b__was_string'));
  });

  it('text to numbers: the spaces JavaScript trims (no-break, tab, ideographic) are trimmed, not read as 0 nor refused by the engine; a decimal that underflows to 0 is refused, named', async () => {
    const db = await database();
    let ds = await db.open(model([{ name: 'n', type: 'string' }, { name: 'x', type: 'string' }]));
    await fill(ds, [{ n: '\u00a012', x: '\u3000 2.5\u2009' }, { n: '\t-7\n', x: '\ufeff1e3' }, { n: null, x: null }]);
    await ds.close();
    const numbers = model([{ name: 'n', type: 'long' }, { name: 'x', type: 'number' }]);
    assert.deepEqual(await db.sync(numbers), ['Thing.n: string → long, 2 values converted', 'Thing.x: string → number, 2 values converted']);
    ds = await db.open(numbers);
    assert.deepEqual(await values(ds, 'n'), [12, -7, null]);
    assert.deepEqual(await values(ds, 'x'), [2.5, 1000, null]);
    await ds.close();
    const tiny = await database();
    ds = await tiny.open(model([{ name: 'x', type: 'string' }]));
    await fill(ds, [{ x: '0.000' }, { x: '1e-400' }]);
    await ds.close();
    await assert.rejects(tiny.sync(model([{ name: 'x', type: 'number' }])), (e: SchemaError) => {
      assert.ok(e instanceof SchemaError);
      assert.match(e.message, /Thing\.x: string → number refused, the value "1e-400" of Thing\(2\) does not fit \(number takes decimal numbers \(like 12, -3\.5 or 1e6\) within its range\)/);
      return true;
    });
  });
});

describe(`two instances bringing one database in line at once (${TEST_ENGINE})`, () => {
  const engine = ENGINES.find((e) => e.name === (TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite (file, WAL)'))!;

  it('apply a change once: the second finds the first one\'s record and nothing to do', async () => {
    const db = await engine.open();
    try {
      const s = new TransactionManager(db.driver);
      await syncSchema(s, model([{ name: 'v', type: 'long' }]));
      await s.run('INSERT INTO "Thing" ("v") VALUES (1), (2)');
      const [a, b] = [db.another!({ lockWaitMs: 20 }), db.another!({ lockWaitMs: 20 })].map((d) => new TransactionManager(d));
      const wider = model([{ name: 'v', type: 'long64' }, { name: 'w', type: 'string' }]);
      const [one, two] = await Promise.all([syncSchema(a, wider), syncSchema(b, wider)]);
      assert.deepEqual([...one, ...two].map((step) => step.description), ['Thing.v: long → long64, 2 values converted', 'Thing: add attribute w (string)']);
      assert.ok(one.length === 0 || two.length === 0);
      assert.deepEqual((await s.all('SELECT "v", "w" FROM "Thing" ORDER BY "ID"')).map((r) => Number(r.v)), [1, 2]);
      assert.equal(JSON.parse((await readMeta(s, 'schema'))!).tables.Thing.columns.v.type, 'long64');
    } finally {
      await db.cleanup();
    }
  });
});

describe(`the lines a start logs (${TEST_ENGINE})`, () => {
  const tmp = tempDir();
  after(() => tmp.remove());

  it('openProject tells each schema change it made, one line each, and nothing when the database is in line', async () => {
    const project = join(tmp.dir, 'p');
    mkdirSync(project);
    const write = (attrs: Attr[]) => writeFileSync(join(project, 'model.json'), JSON.stringify({ name: 'P', dataClasses: [{ name: 'Thing', attributes: [KEY, ...attrs] }] }));
    const db = await testDatabase(join(tmp.dir, 'p.sqlite'));
    const start = async () => {
      const lines: string[] = [];
      const ds = await openProject(project, { db, roles: false, poolSize: 2, onSchemaChange: (line) => lines.push(line) });
      await ds.close();
      return lines;
    };
    write([{ name: 'a', type: 'long' }]);
    assert.deepEqual(await start(), ['create dataclass Thing (2 storage attributes)']);
    assert.deepEqual(await start(), []);
    write([{ name: 'a', type: 'long64' }, { name: 'b', type: 'string', indexed: true }]);
    assert.deepEqual(await start(), ['Thing.a: long → long64, 0 values converted', 'Thing: add attribute b (string)']);
  });
});
