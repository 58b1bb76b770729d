// 4D's delete controls on 1→N relations (issue 38, "Relations keep their promises"): model.json's
// `deleteRule` — leave (the default), cascade, refuse — read and checked by the model, and kept
// by the core on every drop path (an entity's drop(), a selection's, a window of one, inside a
// transaction), with the cascaded drops running their events and their own rules, recorded by
// change tracking, cycles ending, and a refused drop dropping nothing. On the engine the run
// names (testDatabase: test/run.ts runs this file on SQLite and on PostgreSQL).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { coreOf, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import type { Change, ChangeBatch } from '../../src/datastore/live/change-feed.js';
import type { Entity } from '../../src/datastore/entities/entity.js';
import { DatasetError } from '../../src/errors/dataset-error.js';
import { buildModel, ModelError } from '../../src/model/load-model.js';
import type { RelatedEntitiesAttribute } from '../../src/model/types.js';
import { openProject } from '../../src/project/open.js';
import { TEST_ENGINE, tempDir, testDatabase } from '../support/helpers.js';
import { chapterEvents, clearChapterEvents, LIBRARY_MODEL, writeLibraryProject } from '../support/library-project.js';

const relation = (model: ReturnType<typeof buildModel>, dc: string, name: string) => model.dataClassesByName.get(dc)!.attributesByName.get(name) as RelatedEntitiesAttribute;

describe('deleteRule in the model', () => {
  it('reads leave, cascade and refuse on a 1→N relation, leave when none is given', () => {
    const m = buildModel(LIBRARY_MODEL);
    assert.equal(relation(m, 'Author', 'books').deleteRule, 'cascade');
    assert.equal(relation(m, 'Author', 'letters').deleteRule, 'leave');
    assert.equal(relation(m, 'Book', 'loans').deleteRule, 'refuse');
    assert.equal(relation(m, 'Category', 'children').deleteRule, 'cascade');
  });

  it("builds docs/relations.md's example model, with the rules it shows", () => {
    const page = readFileSync(new URL('../../docs/relations.md', import.meta.url), 'utf8');
    const m = buildModel(JSON.parse(/```json\n([\s\S]*?)```/.exec(page)![1]));
    assert.equal(relation(m, 'Author', 'books').deleteRule, 'cascade');
    assert.equal(relation(m, 'Book', 'loans').deleteRule, 'refuse');
  });

  it('refuses a rule it does not know, naming where and suggesting the nearest', () => {
    const model = structuredClone(LIBRARY_MODEL);
    (model.dataClasses[0].attributes[2] as Record<string, unknown>).deleteRule = 'cascad';
    assert.throws(() => buildModel(model), (e: unknown) => e instanceof ModelError
      && /\$\.dataClasses\[0\]\.attributes\[2\]\.deleteRule: must be one of leave, cascade, refuse \(what dropping a Author does to its Book entities\); got "cascad", did you mean 'cascade'\?/.test(e.message));
  });

  it('refuses a deleteRule on an N→1 relation (the rule belongs to the 1→N side)', () => {
    const model = structuredClone(LIBRARY_MODEL);
    (model.dataClasses[2].attributes[2] as Record<string, unknown>).deleteRule = 'cascade';
    assert.throws(() => buildModel(model), /\$\.dataClasses\[2\]\.attributes\[2\]\.deleteRule: unknown property 'deleteRule'/);
  });
});

describe(`delete rules on the drop paths (${TEST_ENGINE})`, () => {
  const tmp = tempDir('dataset-rest-delete-rules-');
  let ds: DatastoreWithClasses;
  before(async () => {
    writeLibraryProject(tmp.dir);
    ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'library.sqlite')), roles: false });
  });
  after(async () => {
    await ds?.close();
    tmp.remove();
  });
  beforeEach(() => clearChapterEvents());

  const make = async (cls: string, values: Record<string, unknown>): Promise<Entity> => {
    const e = ds.dataClass(cls)!.new();
    for (const [k, v] of Object.entries(values)) e.set(k, v);
    await e.save();
    return e;
  };
  /** An author with `books` books of `chapters` chapters each. */
  const authorWith = async (name: string, books = 2, chapters = 2) => {
    const author = await make('Author', { name });
    const made: { book: Entity; chapters: Entity[] }[] = [];
    for (let b = 0; b < books; b++) {
      const book = await make('Book', { title: `${name} ${b}`, author });
      const cs: Entity[] = [];
      for (let c = 0; c < chapters; c++) cs.push(await make('Chapter', { title: `${name} ${b}.${c}`, book }));
      made.push({ book, chapters: cs });
    }
    return { author, books: made };
  };
  const exists = async (cls: string, key: unknown) => (await ds.dataClass(cls)!.get(key)) !== null;
  const count = (cls: string, filter: string, ...params: unknown[]) => ds.dataClass(cls)!.query(filter, ...params).length;
  const refusal = (dc: string, key: unknown, where: string) => (e: unknown) => {
    assert.ok(e instanceof DatasetError, String(e));
    assert.equal(e.code, 'DROP_REFUSED_BY_RELATION');
    assert.equal(e.status, 409);
    assert.match(e.message, new RegExp(`^Cannot drop ${dc}\\(${String(key)}\\): it still has \\w+ entities in ${where.replace('.', '\\.')}, whose deleteRule is "refuse"`));
    assert.equal(e.items[0].attributeName, where.split('.')[1]);
    return true;
  };

  it('leaves the related entities of a leave relation (the default): they stay, their relation reads null', async () => {
    const author = await make('Author', { name: 'Leaves' });
    const letter = await make('Letter', { text: 'dear', author });
    await author.drop();
    const kept = await ds.Letter.get(letter.getKey());
    assert.ok(kept, 'the letter stays');
    assert.equal(await kept.related('author'), null);
  });

  it("drops a cascade relation's entities with their entity, two levels down, and runs the cascaded entities' drop events", async () => {
    const { author, books } = await authorWith('Cascade');
    const other = await authorWith('Other', 1, 1);
    await author.drop();
    assert.equal(await exists('Author', author.getKey()), false);
    for (const { book, chapters } of books) {
      assert.equal(await exists('Book', book.getKey()), false, 'the books go with their author');
      for (const c of chapters) assert.equal(await exists('Chapter', c.getKey()), false, 'and the chapters with their book');
    }
    assert.equal(await exists('Book', other.books[0].book.getKey()), true, "another author's books stay");
    assert.equal(await exists('Chapter', other.books[0].chapters[0].getKey()), true);
    const titles = books.flatMap((b) => b.chapters.map((c) => String(c.get('title'))));
    for (const t of titles) {
      for (const kind of ['validateDrop', 'dropping', 'afterDrop']) assert.ok(chapterEvents().includes(kind === 'afterDrop' ? `${kind}:${t}:success` : `${kind}:${t}`), `${kind} of ${t}: ${JSON.stringify(chapterEvents())}`);
    }
  });

  it("records the cascaded drops of a tracked dataclass in __DeletedRecords, as any drop's", async () => {
    const { author, books } = await authorWith('Tracked', 3, 0);
    const mark = await ds.getGlobalStamp();
    await author.drop();
    const recorded = (await ds.dataClass('__DeletedRecords')!.query('__Stamp > :1 and __TableName = :2', mark, 'Book').toArray()).map((e) => e.get('__PrimaryKey'));
    assert.deepEqual(recorded.sort(), books.map((b) => String(b.book.getKey())).sort());
  });

  it("tells the change feed (live feeds, webhooks) of each cascaded drop of a tracked dataclass, and of none of a refused drop", async () => {
    const told: Change[] = [];
    let wake: (() => void) | undefined;
    const sub = await coreOf(ds).changes.subscribe(ds.dataClass('Book')!.model, (batch: ChangeBatch) => {
      told.push(...batch.changes);
      wake?.();
    });
    try {
      const lent = await authorWith('Fed lent', 1, 0);
      await make('Loan', { borrower: 'Cy', book: lent.books[0].book });
      const { author, books } = await authorWith('Fed', 2, 0);
      await coreOf(ds).changes.settle();
      told.length = 0;
      await assert.rejects(lent.author.drop(), /Book\.loans/);
      await author.drop();
      const until = Date.now() + 5000;
      while (told.filter((c) => c.dropped).length < 2 && Date.now() < until) await new Promise<void>((resolve) => { wake = resolve; setTimeout(resolve, 100); });
      await coreOf(ds).changes.settle();
      assert.deepEqual(told.filter((c) => c.dropped).map((c) => c.key).sort(), books.map((b) => b.book.getKey()).sort(), JSON.stringify(told));
    } finally {
      sub.close();
    }
  });

  it('refuses the drop of an entity while a refuse relation has related entities, naming it, and drops nothing', async () => {
    const { books } = await authorWith('Lent', 1, 1);
    const book = books[0].book;
    await make('Loan', { borrower: 'Ann', book });
    await assert.rejects(book.drop(), refusal('Book', book.getKey(), 'Book.loans'));
    assert.equal(await exists('Book', book.getKey()), true);
    assert.equal(await exists('Chapter', books[0].chapters[0].getKey()), true, 'its cascade did not run');
  });

  it('refuses a cascade that reaches a refused entity: the whole drop is rolled back, the author, its books and their chapters all stay', async () => {
    const { author, books } = await authorWith('Partly lent', 3, 2);
    await make('Loan', { borrower: 'Bo', book: books[2].book });
    await assert.rejects(author.drop(), refusal('Book', books[2].book.getKey(), 'Book.loans'));
    assert.equal(await exists('Author', author.getKey()), true);
    for (const { book, chapters } of books) {
      assert.equal(await exists('Book', book.getKey()), true);
      for (const c of chapters) assert.equal(await exists('Chapter', c.getKey()), true);
    }
    assert.ok(!chapterEvents().some((e) => e.startsWith('afterDrop:') && e.endsWith(':success')), JSON.stringify(chapterEvents()));
  });

  it('lets an event of a cascaded entity stop the whole drop, as it stops its own', async () => {
    const { author, books } = await authorWith('Kept chapter', 2, 1);
    const kept = await make('Chapter', { title: 'keep', book: books[1].book });
    await assert.rejects(author.drop(), (e: unknown) => e instanceof DatasetError && e.items[0].errCode === 900 && /the chapter "keep" is kept/.test(e.message));
    assert.equal(await exists('Author', author.getKey()), true);
    assert.equal(await exists('Book', books[0].book.getKey()), true);
    assert.equal(await exists('Chapter', books[0].chapters[0].getKey()), true, 'a chapter dropped before the refusal is back');
    assert.equal(await exists('Chapter', kept.getKey()), true);
    assert.ok(!chapterEvents().some((e) => e.endsWith(':success')), 'no afterDrop reports a success');
  });

  it("refuses a selection's drop when any of its entities has related entities through a refuse relation, and drops none of them", async () => {
    const empty = await make('Publisher', { name: 'Sel empty' });
    const busy = await make('Publisher', { name: 'Sel busy' });
    await make('Book', { title: 'published', publisher: busy });
    await assert.rejects(ds.Publisher.query('name begin :1', 'Sel').drop(), refusal('Publisher', busy.getKey(), 'Publisher.titles'));
    assert.equal(await exists('Publisher', empty.getKey()), true);
    assert.equal(await exists('Publisher', busy.getKey()), true);
    await ds.Publisher.query('name = :1', 'Sel empty').drop();
    assert.equal(await exists('Publisher', empty.getKey()), false, 'one without related entities is dropped');
  });

  it("cascades from a selection's drop and from a window of one (a slice: its keys), as from an entity's", async () => {
    const a = await authorWith('Sel A', 2, 1);
    const b = await authorWith('Sel B', 1, 1);
    const c = await authorWith('Win C', 1, 2);
    await ds.Author.query('name begin :1', 'Sel ').drop();
    for (const x of [a, b]) for (const { book, chapters } of x.books) {
      assert.equal(await exists('Book', book.getKey()), false);
      for (const ch of chapters) assert.equal(await exists('Chapter', ch.getKey()), false);
    }
    await ds.Author.query('name = :1', 'Win C').slice(0, 1).drop();
    assert.equal(await exists('Author', c.author.getKey()), false);
    assert.equal(await exists('Book', c.books[0].book.getKey()), false);
    assert.equal(await count('Chapter', 'title begin :1', 'Win C'), 0);
  });

  it('rolls the cascaded drops back with the transaction they ran in', async () => {
    const { author, books } = await authorWith('Rolled back', 1, 2);
    await assert.rejects(ds.transaction(async () => {
      await author.drop();
      assert.equal(await exists('Chapter', books[0].chapters[0].getKey()), false, 'gone inside the transaction');
      throw new Error('changed my mind');
    }), /changed my mind/);
    assert.equal(await exists('Author', author.getKey()), true);
    assert.equal(await exists('Book', books[0].book.getKey()), true);
    assert.equal(await exists('Chapter', books[0].chapters[1].getKey()), true);
  });

  it('ends a cascade over a cycle in the data (a category that is its own grandparent) and over a deep tree', async () => {
    const a = await make('Category', { name: 'cycle a' });
    const b = await make('Category', { name: 'cycle b', parent: a });
    const c = await make('Category', { name: 'cycle c', parent: b });
    a.set('parent', c);
    await a.save();
    await b.drop();
    assert.equal(await count('Category', 'name begin :1', 'cycle'), 0, 'b, then c its child, then a its child: the cascade ends where the rows are gone');
    let parent = await make('Category', { name: 'deep 0' });
    const root = parent;
    for (let i = 1; i <= 30; i++) parent = await make('Category', { name: `deep ${i}`, parent });
    await make('Category', { name: 'deep sibling', parent: root });
    await root.drop();
    assert.equal(await count('Category', 'name begin :1', 'deep'), 0);
  });

  it('refuses a big cascade with one statement per refuse relation, before any of it is deleted; then drops it a chunk at a time', async () => {
    const author = await make('Author', { name: 'Prolific' });
    const n = 1_200;
    let last!: Entity;
    await ds.transaction(async () => {
      for (let i = 0; i < n; i++) last = await make('Book', { title: `prolific ${i}`, author });
    });
    const loan = await make('Loan', { borrower: 'Di', book: last });
    // every statement the drop runs, as the core sends it
    const storage = coreOf(ds).storage as unknown as Record<string, (sql: string, params?: readonly unknown[]) => Promise<unknown>>;
    const sent: string[] = [];
    const methods = ['run', 'get', 'all', 'arrays', 'column'] as const;
    for (const m of methods) {
      const original = storage[m].bind(storage);
      storage[m] = (sql, params) => (sent.push(sql), original(sql, params));
    }
    try {
      await assert.rejects(author.drop(), refusal('Book', last.getKey(), 'Book.loans'));
    } finally {
      for (const m of methods) delete storage[m];
    }
    assert.equal(sent.filter((sql) => /FROM\s+"Loan"/.test(sql)).length, 1, 'the loans are asked once for the 1,200 books');
    assert.deepEqual(sent.filter((sql) => /DELETE\s+FROM\s+"Book"/.test(sql)), [], 'no book was deleted');
    assert.equal(await count('Book', 'title begin :1', 'prolific'), n);
    await loan.drop();
    const mark = await ds.getGlobalStamp();
    await author.drop();
    assert.equal(await count('Book', 'title begin :1', 'prolific'), 0);
    assert.equal(await ds.dataClass('__DeletedRecords')!.query('__Stamp > :1 and __TableName = :2', mark, 'Book').length, n);
  });
});
