// Limits on values a client or user code writes, and on what a query may ask of the engine
// (issue 19): the longest text (--max-text-length) on every write path, the folded column kept
// to a prefix with queries past it still exact, object nesting refused on every write path, and
// queries too deep or too wide for the engine answered 400, never 500.
// (test:quick leaves this file out: limits: values and bodies at their bounds.)

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_OBJECT_DEPTH } from '../../src/config/limits.js';
import { coreOf } from '../../src/datastore/datastore.js';
import { BulkInserter } from '../../src/datastore/writes/import-writes.js';
import { codePointLength, fold, FOLD_PREFIX_LENGTH, storedFold } from '../../src/util/fold.js';
import { statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { reclaimSpace } from '../../src/datastore/files/reclaim-space.js';
import { sqliteStorage } from '../../src/storage/open.js';
import Database from 'better-sqlite3';
import { type DemoFixture, tempDir, openDemo, openDemoProject, TEST_ENGINE, testDatabase } from '../support/helpers.js';

const MAX = 2_000;

describe('the longest text (--max-text-length)', () => {
  let demo: DemoFixture;
  const post = (url: string, body: unknown) => demo.request(url, 'POST', body);
  const refused = (res: { status: number; body: any }, what: string) => {
    assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`);
    assert.equal(res.body.__ERROR[0].errCode, 7013, what);
    assert.match(res.body.__ERROR[0].message, /Company\.name \(string\).*2,001 characters.*2,000 \(--max-text-length\)/, what);
  };

  before(async () => {
    demo = await openDemo({ maxTextLength: MAX });
  });
  after(() => demo.close());

  it('takes a text of exactly the limit, and refuses one character more on create, update and batch (400, 7013, naming the attribute and the limit)', async () => {
    const ok = await post('/rest/Company?$method=update', { name: 'x'.repeat(MAX), companyCode: 'LEN-1' });
    assert.equal(ok.status, 200, JSON.stringify(ok.body).slice(0, 300));
    refused(await post('/rest/Company?$method=update', { name: 'y'.repeat(MAX + 1), companyCode: 'LEN-2' }), 'create');
    refused(await post('/rest/Company?$method=update', { __KEY: ok.body.__KEY, __STAMP: ok.body.__STAMP, name: 'z'.repeat(MAX + 1) }), 'update');
    const batch = await post('/rest/Company?$method=update&$atomic=true', [{ name: 'Fine', companyCode: 'LEN-3' }, { name: 'w'.repeat(MAX + 1), companyCode: 'LEN-4' }]);
    assert.ok(batch.status === 400 || batch.body.__ERROR || batch.body.__ENTITIES?.some((e: any) => e.__ERROR), JSON.stringify(batch.body).slice(0, 300));
    assert.match(JSON.stringify(batch.body), /2,000 \(--max-text-length\)/);
    assert.equal((await demo.request('/rest/Company?$filter="companyCode begin LEN-"&$top=0')).body.__COUNT, 1, 'only the first create was saved');
  });

  it('refuses a unique or key text past 2,000 bytes of UTF-8 (its index holds it whole: PostgreSQL answered 500 past about 2,700)', async () => {
    const random = (n: number) => randomBytes(n).toString('base64').slice(0, n);
    const ok = await post('/rest/Company?$method=update', { name: 'Unique', companyCode: random(2000) });
    assert.equal(ok.status, 200, JSON.stringify(ok.body).slice(0, 300));
    // (texts under this suite's 2,000-character limit, over 2,000 bytes)
    for (const code of ['é'.repeat(1001), '😀'.repeat(501), 'ab€'.repeat(500)]) {
      const res = await post('/rest/Company?$method=update', { name: 'Unique', companyCode: code });
      assert.equal(res.status, 400, JSON.stringify(res.body).slice(0, 300));
      assert.equal(res.body.__ERROR[0].errCode, 7013);
      assert.match(res.body.__ERROR[0].message, /Company\.companyCode \(string\).*unique attribute's text is indexed whole.*at most 2,000/);
    }
    // an indexed attribute (not unique) takes long texts: its index holds the folded prefix only
    const long = await post('/rest/Company?$method=update', { name: random(MAX), companyCode: 'LONG-NAME' });
    assert.equal(long.status, 200, JSON.stringify(long.body).slice(0, 300));
  });

  it('refuses a long text from a function saving an entity parameter, from user code, and from an import', async () => {
    const hired = await post('/rest/$catalog/hire', [{ __DATACLASS: 'Employee', __ENTITY: true, firstName: 'Ada', lastName: 'L'.repeat(MAX + 1), salary: 1 }]);
    assert.equal(hired.status, 400, JSON.stringify(hired.body).slice(0, 300));
    assert.match(hired.body.__ERROR[0].message, /Employee\.lastName.*--max-text-length/);

    const e = demo.ds.Company.new();
    assert.throws(() => e.set('name', 'n'.repeat(MAX + 1)), /Company\.name \(string\).*--max-text-length/);

    const core = coreOf(demo.ds);
    const dc = core.classOf(demo.ds.Company.model);
    const inserter = new BulkInserter(dc, [demo.ds.Company.model.storage.find((a) => a.name === 'name')!], core.root);
    const rows = inserter.preparer.rows();
    assert.throws(() => inserter.preparer.prepare(['i'.repeat(MAX + 1)], rows), /Company\.name \(string\).*--max-text-length/);
    assert.doesNotThrow(() => inserter.preparer.prepare(['i'.repeat(MAX)], rows));
  });
});

describe('the folded column keeps a prefix, and queries past it stay exact', () => {
  let demo: DemoFixture;
  const post = (url: string, body: unknown) => demo.request(url, 'POST', body);
  const P = FOLD_PREFIX_LENGTH;
  // four names sharing their first P folded characters, differing after them
  const head = 'É'.repeat(P);
  const names = { a: `${head}a`, b: `${head}B`, c: `${head}c tail`, exact: 'é'.repeat(P) };
  const keys: Record<string, string> = {};
  const count = async (filter: string, params?: unknown[]) => {
    const res = await demo.request(`/rest/Company?$filter=${encodeURIComponent(filter)}${params ? `&$params=${encodeURIComponent(JSON.stringify(params))}` : ''}&$top=0`);
    assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    return res.body.__COUNT as number;
  };

  before(async () => {
    demo = await openDemo();
    for (const [k, name] of Object.entries(names)) {
      const res = await post('/rest/Company?$method=update', { name, companyCode: `FOLD-${k}` });
      assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
      keys[k] = res.body.__KEY;
    }
  });
  after(() => demo.close());

  it('folds only the start of a text: at most FOLD_PREFIX_LENGTH code points, the start of the whole fold', () => {
    // U+FDFA folds to 18 letters: the whole fold of 1,000 of them is 18,000 long
    const wide = '\ufdfa'.repeat(1000);
    assert.equal(storedFold(wide), fold(wide).slice(0, P));
    assert.equal(codePointLength(storedFold('😀'.repeat(P + 3))), P);
    assert.equal(storedFold('😀'.repeat(P + 3)), '😀'.repeat(P));
    // marks fold to nothing: the prefix fills from what follows them
    assert.equal(storedFold(`${'\u0301'.repeat(10_000)}Abc`), 'abc');
    assert.equal(storedFold('Short É'), 'short e');
  });

  it('stores the cut fold in the column (bounded on disk, whatever the text)', async () => {
    const { storage } = coreOf(demo.ds);
    const row = await storage.get(`SELECT "name__fold" AS f FROM "${demo.ds.Company.model.table}" WHERE "companyCode" = ?`.replace('?', storage.dialect.sql.placeholder(1)), ['FOLD-c']);
    assert.equal(codePointLength(String(row?.f)), P);
  });

  it('compares past the prefix exactly: =, #, <, >, begin, contains, wildcards, IN and a :attribute lookup', async () => {
    const q = (op: string, value: string) => count(`name ${op} :1 and companyCode begin FOLD-`, [value]);
    assert.equal(await q('=', names.a), 1);
    assert.equal(await q('=', `${head}A`), 1, 'case ignored past the prefix');
    assert.equal(await q('=', `${head}`), 1, 'the prefix alone: only the text exactly that long, not the longer ones');
    assert.equal(await q('=', names.exact), 1, 'a text exactly as long as the prefix');
    assert.equal(await q('#', names.a), 3);
    assert.equal(await q('<', names.b), 2, 'a, and the one of exactly the prefix');
    assert.equal(await q('<=', names.b), 3);
    assert.equal(await q('>', names.b), 1);
    assert.equal(await q('>=', `${head}b`), 2);
    assert.equal(await q('begin', `${head}C T`), 1);
    assert.equal(await q('begin', head), 4);
    assert.equal(await q('%', 'c tail'), 1, 'contains, past the prefix');
    assert.equal(await q('=', `${head}@tail`), 1, 'a wildcard pattern past the prefix');
    assert.equal(await q('#', `${head}@tail`), 3);
    assert.equal(await count('name in :1 and companyCode begin FOLD-', [[names.a, names.b, 'nobody']]), 2);
    const lookup = await demo.request(`/rest/Company:name(${encodeURIComponent(`${head}C TAIL`)})`);
    assert.equal(lookup.status, 200, JSON.stringify(lookup.body).slice(0, 200));
    assert.equal(lookup.body.__KEY, keys.c);
  });
});

describe('the database gives the space of swept rows back (incremental vacuum)', () => {
  it('shrinks an SQLite file once the uploads it held expired and were swept; nothing to do on PostgreSQL', async () => {
    const tmp = tempDir();
    const file = join(tmp.dir, 'space.sqlite');
    const ds = await openDemoProject({ db: await testDatabase(file), roles: false });
    try {
      const core = coreOf(ds);
      if (TEST_ENGINE === 'postgres') {
        assert.equal(await reclaimSpace(core.storage), 0);
        return;
      }
      assert.equal(core.storage.dialect.schema.reclaimSpace !== null, true);
      const onDisk = () => statSync(file).size + (statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0);
      await core.storage.get('PRAGMA wal_checkpoint(TRUNCATE)');
      const before = statSync(file).size;
      // 20 MB of files nobody claims, expired at once
      for (let i = 0; i < 20; i++) await core.files.store(randomBytes(1024 * 1024), { expiresIn: 1, mime: 'application/octet-stream' });
      await core.storage.get('PRAGMA wal_checkpoint(TRUNCATE)');
      const full = statSync(file).size;
      assert.ok(full > before + 19 * 1024 * 1024, `the files are in the file: ${full} bytes`);
      assert.equal(await core.files.sweep(Date.now() + 10_000), 20);
      // the sweep gave the pages back: the file (with its WAL, once copied in) is back near its size before
      await core.storage.get('PRAGMA wal_checkpoint(TRUNCATE)');
      const after = statSync(file).size;
      assert.ok(after < before + 2 * 1024 * 1024, `shrunk from ${full} to ${after} bytes (${before} before the files)`);
      assert.ok(onDisk() < full);
    } finally {
      await ds.close();
      tmp.remove();
    }
  });
});

describe('an SQLite file made before incremental vacuum', () => {
  it('is converted at start-up by one VACUUM when small (a larger one is left as it is)', { skip: TEST_ENGINE !== 'sqlite' }, async () => {
    const tmp = tempDir();
    try {
      const file = join(tmp.dir, 'old.sqlite');
      const old = new Database(file);
      old.exec('CREATE TABLE t (x TEXT)');
      assert.equal(old.pragma('auto_vacuum', { simple: true }), 0);
      old.close();
      const storage = sqliteStorage(file);
      assert.deepEqual(await storage.get('PRAGMA auto_vacuum'), { auto_vacuum: 2 });
      await storage.close();
    } finally {
      tmp.remove();
    }
  });
});

/** An object nested `levels` deep: {a: {a: … 1}}. */
function nested(levels: number): unknown {
  let o: unknown = 1;
  for (let i = 0; i < levels; i++) o = { a: o };
  return o;
}

describe('object attributes nested too deep are refused on every write path', () => {
  let demo: DemoFixture;
  const post = (url: string, body: unknown) => demo.request(url, 'POST', body);
  const tooDeep = (res: { status: number; body: any }, what: string) => {
    assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body).slice(0, 300)}`);
    assert.equal(res.body.__ERROR[0].errCode, 7013, what);
    assert.match(res.body.__ERROR[0].message, new RegExp(`nest deeper than ${MAX_OBJECT_DEPTH} levels`), what);
  };

  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('takes 100 levels, and refuses 101 on create, update, batch, a function saving an entity, user code and an import', async () => {
    const ok = await post('/rest/Company?$method=update', { name: 'Deep', companyCode: 'DEEP-1', extra: nested(MAX_OBJECT_DEPTH) });
    assert.equal(ok.status, 200, JSON.stringify(ok.body).slice(0, 300));
    tooDeep(await post('/rest/Company?$method=update', { name: 'Deep', companyCode: 'DEEP-2', extra: nested(MAX_OBJECT_DEPTH + 1) }), 'create');
    tooDeep(await post('/rest/Company?$method=update', { __KEY: ok.body.__KEY, __STAMP: ok.body.__STAMP, extra: nested(MAX_OBJECT_DEPTH + 1) }), 'update');
    const batch = await post('/rest/Company?$method=update&$atomic=true', [{ name: 'Deep', companyCode: 'DEEP-3' }, { name: 'Deep', companyCode: 'DEEP-4', extra: nested(MAX_OBJECT_DEPTH + 1) }]);
    assert.ok(batch.status < 500, JSON.stringify(batch.body).slice(0, 300));
    assert.match(JSON.stringify(batch.body), /nest deeper than 100 levels/);
    const hired = await post('/rest/$catalog/hire', [{ __DATACLASS: 'Employee', __ENTITY: true, firstName: 'D', lastName: 'Deep', skills: nested(MAX_OBJECT_DEPTH + 1) }]);
    tooDeep(hired, 'function');
    assert.throws(() => demo.ds.Company.new().set('extra', nested(MAX_OBJECT_DEPTH + 1)), /nest deeper than 100 levels/);
    const core = coreOf(demo.ds);
    const extra = demo.ds.Company.model.storage.find((a) => a.name === 'extra')!;
    const inserter = new BulkInserter(core.classOf(demo.ds.Company.model), [extra], core.root);
    assert.throws(() => inserter.preparer.prepare([nested(MAX_OBJECT_DEPTH + 1)], inserter.preparer.rows()), /nest deeper than 100 levels/);
    assert.equal((await demo.request('/rest/Company?$filter="companyCode begin DEEP-"&$top=0')).body.__COUNT, 1);
  });

  it('checks an object changed in place after it was set again when it is saved (2,000 levels would break every later query on SQLite)', async () => {
    const e = demo.ds.Company.new();
    e.set('name', 'In place');
    e.set('companyCode', 'DEEP-5');
    e.set('extra', { a: 1 });
    (e.get('extra') as { a: unknown }).a = nested(2000);
    await assert.rejects(e.save(), /nest deeper than 100 levels/);
    const query = await demo.request('/rest/Company?$filter="extra.a.a = 1"&$top=1');
    assert.equal(query.status, 200, JSON.stringify(query.body).slice(0, 300));
  });
});

describe('queries too deep or too wide for the engine answer 4xx with an __ERROR, never 5xx', () => {
  let demo: DemoFixture;
  const q = (filter: string) => `/rest/Company?$filter=${encodeURIComponent(filter)}&$top=1`;

  before(async () => {
    demo = await openDemo();
    // elements of every kind: scalars, nulls, arrays, objects with and without x
    const made = await demo.request('/rest/Company?$method=update', 'POST', {
      name: 'Odd tags', companyCode: 'ODD-1', extra: { tags: [1, 'a', null, true, [1, [2]], { x: { y: 1 } }, { x: [1, 2] }, { x: 'b' }], rating: 'high', sector: { x: 1 } },
    });
    assert.equal(made.status, 200, JSON.stringify(made.body).slice(0, 300));
  });
  after(() => demo.close());

  const orChain = Array.from({ length: 700 }, (_, i) => `ID=${i}`).join(' or ');
  const andChain = Array.from({ length: 700 }, (_, i) => `ID#${i}`).join(' and ');
  const cases: [string, string][] = [
    ...['extra.tags[].x = 1', 'extra.tags[].x = "b"', 'extra.tags[].x.y = 1', 'extra.tags[].x > 0', 'extra.tags[].x begin b', 'extra.tags[].x % b', 'extra.tags[].x = null',
      'extra.tags[].x # 1', 'extra.tags[].x in [1, "b"]', 'extra.tags[] = 1', 'extra.tags[] = a', 'extra.tags[] = true', 'extra.tags[].x = 2020-01-01', 'extra.tags[a].x = 1 and extra.tags[a].x = b',
      'extra.rating > 1', 'extra.sector.x = 1', 'extra.sector[].x = 1', 'extra.tags.x = 1', 'extra.tags[].x[].y = 1', 'not(extra.tags[].x = 1)', 'extra.tags[].x.y.z.w.v.u = 1',
    ].map((f) => [f, q(f)] as [string, string]),
    [`an OR chain of 700 terms (${orChain.length} characters)`, q(orChain)],
    [`an AND chain of 700 terms`, q(andChain)],
    ['31 parentheses', q(`${'('.repeat(31)}ID=1${')'.repeat(31)}`)],
    ['32 parentheses', q(`${'('.repeat(32)}ID=1${')'.repeat(32)}`)],
    ['33 parentheses', q(`${'('.repeat(33)}ID=1${')'.repeat(33)}`)],
    ['16 NOTs', q(`${'not('.repeat(16)}ID=1${')'.repeat(16)}`)],
    ['40 NOTs', q(`${'not('.repeat(40)}ID=1${')'.repeat(40)}`)],
    ['ORs nested 30 deep', q(`${Array.from({ length: 30 }, (_, i) => `(ID=${i} or `).join('')}ID=1${')'.repeat(30)}`)],
    ['300 1→N criteria', q(Array.from({ length: 300 }, (_, i) => `staff.lastName = a${i}`).join(' or '))],
    ['an IN of 10,000 values in the text', q(`ID in [${Array.from({ length: 10_001 }, (_, i) => i).join(',')}]`)],
    ['an IN of 10,000 values through $params', `${q('ID in :1')}&$params=${encodeURIComponent(JSON.stringify([Array.from({ length: 10_000 }, (_, i) => i)]))}`],
    ['a path of 8 steps', q('staff.employer.staff.employer.staff.employer.staff.lastName = a')],
    ['a path of 9 steps', q('staff.employer.staff.employer.staff.employer.staff.employer.name = a')],
    ['a path of 40 steps', q(`${Array.from({ length: 20 }, () => 'staff.employer').join('.')}.name = a`)],
    ['an object path of 40 steps', q(`extra.${Array.from({ length: 40 }, () => 'a').join('.')} = 1`)],
    ['$orderby of 70 terms', `/rest/Company?$orderby=${encodeURIComponent(Array.from({ length: 70 }, () => 'name').join(','))}&$top=1`],
    ['$attributes 9 levels deep', `/rest/Company?$attributes=${encodeURIComponent(`${Array.from({ length: 5 }, () => 'staff.employer').join('.')}.name`)}&$top=1`],
    ['a text comparison past the fold prefix', `${q('name = :1')}&$params=${encodeURIComponent(JSON.stringify(['É'.repeat(FOLD_PREFIX_LENGTH + 10)]))}`],
    ['a wildcard pattern of 4,000 characters', q(`name = "${'@a'.repeat(2000)}"`)],
  ];
  for (const [what, url] of cases) {
    it(`answers ${what} below 500`, async () => {
      const res = await demo.request(url);
      assert.ok(res.status < 500, `${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      if (res.status >= 400) {
        assert.equal(typeof res.body.__ERROR?.[0]?.errCode, 'number', JSON.stringify(res.body).slice(0, 300));
        assert.equal(typeof res.body.__ERROR[0].message, 'string');
      }
    });
  }

  it('refuses a collection inside a collection with 400 (7017), not 501', async () => {
    const res = await demo.request(q('extra.tags[].x[].y = 1'));
    assert.equal(res.status, 400);
    assert.equal(res.body.__ERROR[0].errCode, 7017);
    assert.match(res.body.__ERROR[0].message, /collection inside a collection/);
  });

  it('refuses more than 10,000 IN values in one query, from the API too, before the engine sees them (its parameter limits gave 500 and 503)', async () => {
    const many = Array.from({ length: 40_000 }, (_, i) => i);
    for (const [filter, values] of [['ID in :1', many], ['name in :1', many.map(String)], ['extra.rating in :1', many]] as const) {
      await assert.rejects(async () => demo.ds.Company.query(filter, values).length, (e: Error & { code?: string }) => e.code === 'LIMIT_EXCEEDED' && /more than 10,000 values/.test(e.message));
    }
    const half = Array.from({ length: 6_000 }, (_, i) => i);
    await assert.rejects(async () => demo.ds.Company.query('ID in :1 or ID in :2', half, half).length, /more than 10,000 values together/);
    assert.equal(await demo.ds.Company.query('ID in :1', half.slice(0, 10_000)).length > 0, true);
  });
});
