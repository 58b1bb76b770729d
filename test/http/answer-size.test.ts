// The bytes one answer may hold (--max-answer-size, issues 19 and 34): a page, a page of an entity
// set and the inline levels of related entities that could be big (aliases over 1→N relations
// too) are measured in SQL before their rows are read, and refused past the limit (400, 7009)
// with nothing read; smaller reads are counted as they are read, calculated values as they are
// computed, a function's result once made; an export is read in chunks of bounded bytes. On both
// engines (test/run.ts).
// (test:quick leaves this file out: limits under load: answers of many megabytes.)

import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { EXPORT_CHUNK_BYTES } from '../../src/config/limits.js';
import { openProject } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { TransactionManager } from '../../src/storage/transactions.js';
import { openDemo, tempDir, testDatabase } from '../support/helpers.js';

const DOCS = 200;
const FOLDERS = 4;
const TEXT = 100_000;
const MB = 1024 * 1024;
const NOTES = 20;
const REPO = fileURLToPath(new URL('../..', import.meta.url));
let echoes = 0;

type Reads = { arrays: (...a: unknown[]) => Promise<unknown[][]>; all: (...a: unknown[]) => Promise<Record<string, unknown>[]> };

/**
 * The characters of text in the rows each statement returns, while `fn` runs: what was read into
 * memory (every reader, snapshots included, reads through the prototype patched here).
 */
async function textRead<T>(fn: () => Promise<T>): Promise<{ result: T; total: number; largest: number }> {
  const proto = Object.getPrototypeOf(TransactionManager.prototype) as Reads;
  const { arrays, all } = proto;
  let total = 0;
  let largest = 0;
  const count = (rows: readonly unknown[]) => {
    let n = 0;
    for (const row of rows) for (const v of Object.values(row as object)) if (typeof v === 'string') n += v.length;
    total += n;
    largest = Math.max(largest, n);
    return rows;
  };
  proto.arrays = function (this: unknown, ...a: unknown[]) {
    return arrays.apply(this, a).then(count) as Promise<unknown[][]>;
  };
  proto.all = function (this: unknown, ...a: unknown[]) {
    return all.apply(this, a).then(count) as Promise<Record<string, unknown>[]>;
  };
  try {
    return { result: await fn(), total, largest };
  } finally {
    proto.arrays = arrays;
    proto.all = all;
  }
}

describe('the answer size limit (--max-answer-size)', () => {
  const tmp = tempDir();
  let ds: Awaited<ReturnType<typeof openProject>>;
  let capped: Awaited<ReturnType<typeof buildServer>>;
  let roomy: Awaited<ReturnType<typeof buildServer>>;
  const get = async (app: typeof capped, url: string) => {
    const res = await app.inject({ method: 'GET', url });
    return { status: res.statusCode, text: res.body, body: String(res.headers['content-type']).startsWith('application/json') ? JSON.parse(res.body) : undefined };
  };
  const refused = (res: { status: number; body: any; text: string }, what: RegExp) => {
    assert.equal(res.status, 400, res.text.slice(0, 300));
    assert.equal(res.body.__ERROR[0].errCode, 7009);
    const message: string = res.body.__ERROR[0].message;
    assert.match(message, /the answer would hold at least [\d.]+ MB of values/);
    assert.match(message, /more than the 5 MB one answer may hold \(--max-answer-size\)/);
    assert.match(message, /\$top.*\$attributes.*\$format=ndjson or \$format=csv/);
    assert.match(message, what);
  };

  before(async () => {
    const dir = join(tmp.dir, 'p');
    mkdirSync(dir);
    writeFileSync(join(dir, 'model.json'), JSON.stringify({
      name: 'P',
      dataClasses: [
        {
          name: 'Folder',
          attributes: [
            { name: 'ID', type: 'long', identifying: true, autoincrement: true },
            { name: 'name', type: 'string' },
            { name: 'docs', kind: 'relatedEntities', type: 'DocSelection', path: 'folder' },
            { name: 'bodies', kind: 'alias', path: 'docs.body' },
          ],
        },
        {
          name: 'Doc',
          attributes: [
            { name: 'ID', type: 'long', identifying: true, autoincrement: true },
            { name: 'title', type: 'string' },
            { name: 'body', type: 'string' },
            { name: 'size', type: 'long' },
            { name: 'folder', kind: 'relatedEntity', type: 'Folder' },
            { name: 'siblings', kind: 'alias', path: 'folder.docs' },
          ],
        },
        {
          name: 'Note',
          attributes: [
            { name: 'ID', type: 'long', identifying: true, autoincrement: true },
            { name: 'word', type: 'string' },
            { name: 'echo', kind: 'calculated', type: 'string' },
          ],
        },
      ],
    }));
    // a function whose result is as big as it is asked (GET /rest/Note/text?$params='[n]')
    for (const d of ['classes', 'node_modules']) mkdirSync(join(dir, d));
    symlinkSync(REPO, join(dir, 'node_modules', 'dataset-rest'), 'dir');
    writeFileSync(join(dir, 'classes', 'Note.ts'), `import { DataClass, exposed, onHttpGet } from 'dataset-rest';
export default class Note extends DataClass {
  @exposed @onHttpGet text(n: number) { return { text: 'x'.repeat(n) }; }
}
`);
    ds = await openProject(dir, { db: await testDatabase(join(tmp.dir, 'p.sqlite')) });
    await ds.transaction(async () => {
      const folders = [];
      for (let f = 0; f < FOLDERS; f++) {
        const folder = ds.Folder.new();
        folder.set('name', `folder ${f}`);
        await folder.save();
        folders.push(folder);
      }
      for (let i = 0; i < DOCS; i++) {
        const doc = ds.Doc.new();
        doc.set('title', `doc ${i}`);
        doc.set('body', String.fromCharCode(97 + (i % 26)).repeat(TEXT));
        doc.set('size', TEXT);
        doc.set('folder', folders[i % FOLDERS]);
        await doc.save();
      }
    });
    // each Note's echo: a 1 MB text its code makes
    ds.Note.defineCalculated('echo', {
      get: (e) => {
        echoes++;
        return String(e.get('word')).repeat(MB / 8);
      },
    });
    await ds.transaction(async () => {
      for (let i = 0; i < NOTES; i++) {
        const note = ds.Note.new();
        note.set('word', `word-${String(i).padStart(3, '0')}`);
        await note.save();
      }
    });
    capped = await buildServer(ds, { logLevel: 'silent', maxAnswerBytes: 5 * MB });
    roomy = await buildServer(ds, { logLevel: 'silent' });
  });
  after(async () => {
    await capped.close();
    await roomy.close();
    await ds.close();
    tmp.remove();
  });

  it('refuses a page of 200 entities holding 100 KB texts past a 5 MB limit (400, 7009, naming the limit, the option, the size and how to read less), having read none of the texts', async () => {
    const { result, total } = await textRead(() => get(capped, `/rest/Doc?$top=${DOCS}`));
    refused(result, /a page of up to 200 Doc entities/);
    assert.match(result.body.__ERROR[0].message, /at least 19\.\d MB/);
    assert.ok(total < 10_000, `${total} characters of text read`);
  });

  it('refuses the entity path too ($asArray, whose entities are made), and a page of 101 entities', async () => {
    refused(await get(capped, `/rest/Doc?$top=${DOCS}&$asArray=true`), /Doc entities/);
    refused(await get(capped, '/rest/Doc?$top=101'), /a page of up to 101 Doc entities/);
  });

  it('counts a page of at most 100 entities as it is read (not measured first): past the limit it is refused, before any text is made of it', async () => {
    // 60 texts of 100 KB: 5.7 MB; 40 of them fit (below)
    refused(await get(capped, '/rest/Doc?$top=60'), /a page of up to 60 Doc entities/);
    refused(await get(capped, '/rest/Doc?$top=60&$asArray=true'), /a page of up to 60 Doc entities/);
    refused(await get(capped, '/rest/Doc?$top=60&$method=entityset'), /Doc entities of an entity set/);
    const set = await get(roomy, '/rest/Doc?$method=entityset&$top=1');
    refused(await get(capped, `/rest/Doc/$entityset/${String(set.body.__ENTITYSET).split('/').pop()}?$top=60`), /a page of 60 Doc entities of an entity set/);
    assert.equal((await get(capped, '/rest/Doc?$top=60&$attributes=title')).status, 200);
  });

  it('measures the entities an alias over a 1→N relation reaches (every one of them is read) before reading them, inline or as a list of values', async () => {
    // 3 documents of 3 folders: their 150 siblings inline, 15 MB
    const { result, total } = await textRead(() => get(capped, '/rest/Doc?$top=3&$attributes=title,siblings.body'));
    refused(result, /entities through siblings/);
    // (the 3 documents' own texts are read with them, the 150 siblings' are not)
    assert.ok(total < 10 * TEXT, `${total} characters of text read`);
    const sent = await get(roomy, '/rest/Doc?$top=3&$attributes=title,siblings.body');
    assert.equal(sent.status, 200);
    assert.equal(sent.body.__ENTITIES[2].siblings.__ENTITIES.length, DOCS / FOLDERS);
    // the same documents as a list of values: 4 folders' 200 bodies, 19 MB
    const list = await textRead(() => get(capped, '/rest/Folder?$attributes=bodies'));
    refused(list.result, /entities through bodies/);
    assert.ok(list.total < 10_000, `${list.total} characters of text read`);
    assert.equal((await get(capped, '/rest/Folder?$attributes=name')).status, 200);
  });

  it('counts calculated values as their code makes them, and stops asking for more past the limit; counts a function\'s result', async () => {
    echoes = 0;
    refused(await get(capped, `/rest/Note?$attributes=word,echo&$top=${NOTES}`), /the calculated echo through echo/);
    assert.ok(echoes <= 6, `${echoes} values made of 20`);
    const four = await get(capped, '/rest/Note?$attributes=word,echo&$top=4');
    assert.equal(four.status, 200);
    assert.equal(four.body.__ENTITIES[3].echo.length, MB);
    refused(await get(capped, `/rest/Note/text?$params='[${6 * MB}]'`), /the result of/);
    const small = await get(capped, `/rest/Note/text?$params='[${MB}]'`);
    assert.equal(small.status, 200);
    assert.equal(small.body.result.text.length, MB);
  });

  it('answers the same page without the long texts ($attributes), a page of at most 100 entities that fits, and the whole page under the default limit', async () => {
    const titles = await get(capped, `/rest/Doc?$top=${DOCS}&$attributes=title,size`);
    assert.equal(titles.status, 200);
    assert.equal(titles.body.__ENTITIES.length, DOCS);
    const small = await get(capped, '/rest/Doc?$top=40');
    assert.equal(small.status, 200);
    assert.equal(small.body.__ENTITIES[39].body.length, TEXT);
    const whole = await get(roomy, `/rest/Doc?$top=${DOCS}`);
    assert.equal(whole.status, 200);
    assert.equal(whole.body.__ENTITIES.length, DOCS);
    assert.ok(whole.body.__ENTITIES.every((e: any) => e.body.length === TEXT));
  });

  it('counts the levels of related entities inlined: 4 folders with 50 documents of 100 KB each inline are refused, before the level is read; under the limit they are sent', async () => {
    const { result, total } = await textRead(() => get(capped, '/rest/Folder?$attributes=name,docs.body'));
    refused(result, /200 entities through docs/);
    assert.ok(total < 10_000, `${total} characters of text read`);
    const sent = await get(roomy, '/rest/Folder?$attributes=name,docs.body');
    assert.equal(sent.status, 200);
    assert.equal(sent.body.__ENTITIES.length, FOLDERS);
    assert.equal(sent.body.__ENTITIES[0].docs.__ENTITIES.length, DOCS / FOLDERS);
    // (the same level with $expand; one folder's 50 documents, a level of at most 100 entities, are not measured: 4.8 MB, sent)
    refused(await get(capped, '/rest/Folder?$expand=docs'), /through docs/);
    const one = await get(capped, '/rest/Folder(1)?$attributes=docs.*');
    assert.equal(one.status, 200);
    assert.equal(one.body.docs.__ENTITIES.length, DOCS / FOLDERS);
  });

  it('measures the page of an entity set ($method=entityset) the same way', async () => {
    refused(await get(capped, `/rest/Doc?$method=entityset&$top=${DOCS}`), /Doc entities of an entity set/);
    const titles = await get(capped, `/rest/Doc?$method=entityset&$top=${DOCS}&$attributes=title`);
    assert.equal(titles.status, 200);
    assert.equal(titles.body.__ENTITIES.length, DOCS);
  });

  it('exports every entity ($format=ndjson), reading chunks of at most 16 MB of values (not 1,000 rows of any size)', async () => {
    const { result, largest } = await textRead(() => get(capped, '/rest/Doc?$format=ndjson'));
    assert.equal(result.status, 200);
    const lines = result.text.trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(lines.length, DOCS);
    assert.ok(lines.every((l: any) => l.body.length === TEXT));
    assert.ok(largest <= EXPORT_CHUNK_BYTES + TEXT + 10_000, `a statement read ${largest} characters`);
    assert.ok(largest > 100 * TEXT, `chunks of ${largest} characters: as many rows as fit`);
  });
});

describe('the answer of a batch write', () => {
  it('has one budget of inlined entities for the whole batch, not one per entity: past it, refused saying what was saved, and the saves kept', async () => {
    const demo = await openDemo({ maxInlinedEntities: 3 });
    try {
      const companies = (await demo.request('/rest/Company?$top=2&$orderby=ID')).body.__ENTITIES as { __KEY: string; __STAMP: number; name: string }[];
      const staff = async (key: string) => (await demo.request(`/rest/Company(${key})/staff?$top=0`)).body.__COUNT as number;
      // (each company alone inlines its staff within the limit only if it has at most 3)
      const counts = await Promise.all(companies.map((c) => staff(c.__KEY)));
      assert.ok(counts[0] + counts[1] > 3, `staff ${counts}`);
      const renamed = companies.map((c) => ({ __KEY: c.__KEY, __STAMP: c.__STAMP, name: `${c.name} (renamed)` }));
      const refused = await demo.request('/rest/Company?$method=update&$attributes=name,staff.lastName', 'POST', renamed);
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.equal(refused.body.__ERROR[0].errCode, 7009);
      assert.match(refused.body.__ERROR[0].message, /^2 of the 2 entities were saved, but their answer cannot be sent/);
      for (const c of companies) assert.equal((await demo.request(`/rest/Company(${c.__KEY})`)).body.name, `${c.name} (renamed)`);
    } finally {
      await demo.close();
    }
  });
});
