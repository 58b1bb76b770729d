// Review of issue 38's delete rules: races between a drop and a concurrent save of a related
// entity, and a deep self-relation cascade.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { openProject } from '../../src/project/open.js';
import { TEST_ENGINE, tempDir, testDatabase } from '../support/helpers.js';
import { makeEntity, writeLibraryProject } from '../support/library-project.js';

describe(`delete rules under concurrency (${TEST_ENGINE})`, () => {
  const tmp = tempDir('dataset-rest-delete-rules-review-');
  let ds: DatastoreWithClasses;
  before(async () => {
    writeLibraryProject(tmp.dir);
    ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'library.sqlite')), roles: false, poolSize: 4 } as never);
  });
  after(async () => {
    await ds?.close();
    tmp.remove();
  });
  const make = (cls: string, values: Record<string, unknown>) => makeEntity(ds, cls, values);

  it('a refuse relation: a child saved in a transaction open while its parent is dropped leaves no dangling child', async () => {
    const author = await make('Author', { name: 'Racer' });
    const book = await make('Book', { title: 'race refuse', author });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let saved!: () => void;
    const savedP = new Promise<void>((r) => (saved = r));
    const t2 = ds.transaction(async () => {
      await make('Loan', { borrower: 'Concurrent', book });
      saved();
      await gate;
    });
    await savedP;
    const t1 = book.drop().then(() => 'dropped', (e: Error) => `refused: ${e.message}`);
    await new Promise((r) => setTimeout(r, 300));
    release();
    await t2;
    const outcome = await t1;
    const loans = ds.dataClass('Loan')!.query('borrower = :1', 'Concurrent');
    const bookThere = (await ds.dataClass('Book')!.get(book.getKey())) !== null;
    assert.ok(bookThere || (await loans.length) === 0, `${outcome}; the book is gone but its loan stays, pointing at nothing`);
  });

  it('a cascade relation: a child saved in a transaction open while its parent is dropped leaves no dangling child', async () => {
    const author = await make('Author', { name: 'Racer 2' });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let saved!: () => void;
    const savedP = new Promise<void>((r) => (saved = r));
    const t2 = ds.transaction(async () => {
      await make('Book', { title: 'race cascade', author });
      saved();
      await gate;
    });
    await savedP;
    const t1 = author.drop().then(() => 'dropped', (e: Error) => `refused: ${e.message}`);
    await new Promise((r) => setTimeout(r, 300));
    release();
    await t2;
    const outcome = await t1;
    const authorThere = (await ds.dataClass('Author')!.get(author.getKey())) !== null;
    const books = await ds.dataClass('Book')!.query('title = :1', 'race cascade').length;
    assert.ok(authorThere || books === 0, `${outcome}; the author is gone but its book stays, pointing at nothing`);
  });

  it('a drop cascading into a tracked dataclass and a tracked save of a related entity do not deadlock', async () => {
    const author = await make('Author', { name: 'Racer 3' });
    await make('Book', { title: 'race deadlock', author }); // the cascade has a tracked book to drop
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let saved!: () => void;
    const savedP = new Promise<void>((r) => (saved = r));
    const t2 = ds.transaction(async () => {
      await make('Book', { title: 'race deadlock first' }); // holds the tracked stamp
      saved();
      await gate;
      await make('Book', { title: 'race deadlock', author });
    }).then(() => 'saved', (e: Error) => `save failed: ${e.message}`);
    await savedP;
    const t1 = author.drop().then(() => 'dropped', (e: Error) => `drop failed: ${e.message}`);
    await new Promise((r) => setTimeout(r, 300));
    release();
    const [save, drop] = await Promise.all([t2, t1]);
    assert.ok(!/deadlock|conflict/i.test(save + drop), `${save}; ${drop}`);
    const authorThere = (await ds.dataClass('Author')!.get(author.getKey())) !== null;
    const books = await ds.dataClass('Book')!.query('title = :1', 'race deadlock').length;
    assert.ok(authorThere || books === 0, `${save}; ${drop}: the author is gone but its book stays`);
  });

  it('a deep self-relation chain (3,000 levels) cascades in bounded time', async () => {
    let parent = await make('Category', { name: 'chain 0' });
    const root = parent;
    await ds.transaction(async () => {
      for (let i = 1; i < 3000; i++) parent = await make('Category', { name: `chain ${i}`, parent });
    });
    const t0 = Date.now();
    const heap0 = process.memoryUsage().heapUsed;
    await root.drop();
    console.log(`chain of 3000: ${Date.now() - t0} ms, heap +${Math.round((process.memoryUsage().heapUsed - heap0) / 1e6)} MB`);
    assert.equal(await ds.dataClass('Category')!.query('name begin :1', 'chain').length, 0);
  });
});
