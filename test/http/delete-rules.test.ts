// 4D's delete controls over REST (issue 38, "Relations keep their promises"; the core's side is
// core/delete-rules.test.ts): model.json's deleteRule on a 1→N relation kept by every way a
// client drops — $method=delete by key, by $filter, on an entity set, a class function that
// drops, a save that drops inside an $atomic batch — a cascade dropping the related entities, a
// refusal answered 409 with a registered __ERROR that names the dataclass, the entity and the
// relation attribute, and nothing dropped; the catalog and the OpenAPI document describe the
// rules. On the engine the run names (testDatabase).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import type { Entity } from '../../src/datastore/entities/entity.js';
import { ERRORS } from '../../src/errors/registry.js';
import { buildServer } from '../../src/http/server.js';
import { openProject } from '../../src/project/open.js';
import { injected, tempDir, TEST_ENGINE, testDatabase } from '../support/helpers.js';
import { writeLibraryProject } from '../support/library-project.js';

type Json = Record<string, any>;
const q = (s: string) => encodeURIComponent(s);

describe(`delete rules over REST (${TEST_ENGINE})`, () => {
  const tmp = tempDir('dataset-rest-delete-rules-http-');
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  const request = (url: string, method: 'GET' | 'POST' = 'GET', body?: unknown) => injected(app, url, method, body);
  before(async () => {
    writeLibraryProject(tmp.dir);
    ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'library.sqlite')) });
    app = await buildServer(ds, { logLevel: 'silent' });
  });
  after(async () => {
    await app?.close();
    await ds?.close();
    tmp.remove();
  });

  const make = async (cls: string, values: Record<string, unknown>): Promise<Entity> => {
    const e = ds.dataClass(cls)!.new();
    for (const [k, v] of Object.entries(values)) e.set(k, v);
    await e.save();
    return e;
  };
  /** An author with two books of two chapters each; `lent`: its second book is on loan. */
  const author = async (name: string, lent = false) => {
    const a = await make('Author', { name });
    const books: Entity[] = [];
    const chapters: Entity[] = [];
    for (let b = 0; b < 2; b++) {
      const book = await make('Book', { title: `${name} ${b}`, author: a });
      books.push(book);
      for (let c = 0; c < 2; c++) chapters.push(await make('Chapter', { title: `${name} ${b}.${c}`, book }));
    }
    if (lent) await make('Loan', { borrower: 'Ann', book: books[1] });
    return { author: a, books, chapters, lentBook: lent ? books[1] : undefined };
  };
  type Made = Awaited<ReturnType<typeof author>>;
  const status = async (url: string) => (await request(url)).status;
  /** Every entity of the author is (still) there, or none is. */
  const allThere = async (m: Made, there: boolean) => {
    const want = there ? 200 : 404;
    assert.equal(await status(`/rest/Author(${String(m.author.getKey())})`), want, `Author(${String(m.author.getKey())})`);
    for (const b of m.books) assert.equal(await status(`/rest/Book(${String(b.getKey())})`), want, `Book(${String(b.getKey())})`);
    for (const c of m.chapters) assert.equal(await status(`/rest/Chapter(${String(c.getKey())})`), want, `Chapter(${String(c.getKey())})`);
  };
  /** The answer of a drop a refuse relation stopped: 409, one registered __ERROR naming the dataclass, the entity and the relation attribute. */
  const refused = (res: { status: number; body: Json }, dc: string, key: unknown, attribute: string) => {
    assert.equal(res.status, 409, JSON.stringify(res.body));
    const [error, ...more] = res.body.__ERROR as Json[];
    assert.deepEqual(more, []);
    assert.equal(error.errCode, ERRORS.DROP_REFUSED_BY_RELATION.errCode);
    assert.equal(error.componentSignature, 'dsrs');
    assert.equal(error.attributeName, attribute);
    assert.match(error.message, new RegExp(`^Cannot drop ${dc}\\(${String(key)}\\): it still has \\w+ entities in ${dc}\\.${attribute}, whose deleteRule is "refuse"`));
  };

  it('$method=delete by key drops the related entities of a cascade relation, two levels down, and leaves a leave relation\'s', async () => {
    const m = await author('By key');
    const letter = await make('Letter', { text: 'dear', author: m.author });
    const res = await request(`/rest/Author(${String(m.author.getKey())})?$method=delete`, 'POST');
    assert.deepEqual([res.status, res.body], [200, { ok: true }]);
    await allThere(m, false);
    const kept = await request(`/rest/Letter(${String(letter.getKey())})`);
    assert.equal(kept.status, 200);
    assert.equal(kept.body.author, null, 'the letter stays, its author reads null');
  });

  it('$method=delete by key is refused with 409 while a refuse relation has related entities, and nothing is dropped', async () => {
    const m = await author('Refused by key', true);
    refused(await request(`/rest/Book(${String(m.lentBook!.getKey())})?$method=delete`, 'POST'), 'Book', m.lentBook!.getKey(), 'loans');
    await allThere(m, true);
    // through the cascade: the author's drop reaches the book on loan
    refused(await request(`/rest/Author(${String(m.author.getKey())})?$method=delete`, 'POST'), 'Book', m.lentBook!.getKey(), 'loans');
    await allThere(m, true);
  });

  it('$method=delete with a $filter cascades for every entity it drops, and is refused whole when one of them is refused', async () => {
    const a = await author('Filter one');
    const b = await author('Filter two');
    const res = await request(`/rest/Author?$filter=${q('name begin "Filter "')}&$method=delete`, 'POST');
    assert.deepEqual([res.status, res.body], [200, { ok: true }]);
    await allThere(a, false);
    await allThere(b, false);
    const c = await author('Refused filter one');
    const d = await author('Refused filter two', true);
    refused(await request(`/rest/Author?$filter=${q('name begin "Refused filter"')}&$method=delete`, 'POST'), 'Book', d.lentBook!.getKey(), 'loans');
    await allThere(c, true);
    await allThere(d, true);
  });

  it('refuses a $filter delete of publishers when one has titles, naming it, and drops none', async () => {
    const empty = await make('Publisher', { name: 'Pub empty' });
    const busy = await make('Publisher', { name: 'Pub busy' });
    await make('Book', { title: 'a title', publisher: busy });
    refused(await request(`/rest/Publisher?$filter=${q('name begin "Pub "')}&$method=delete`, 'POST'), 'Publisher', busy.getKey(), 'titles');
    assert.equal(await status(`/rest/Publisher(${String(empty.getKey())})`), 200);
    assert.equal(await status(`/rest/Publisher(${String(busy.getKey())})`), 200);
  });

  it('the delete of an entity set cascades for its members, and is refused whole when one of them is refused', async () => {
    // (a set is its session's: the session's cookie goes with the delete)
    let cookie = '';
    const setOf = async (prefix: string): Promise<string> => {
      const set = await injected(app, `/rest/Author?$filter=${q(`name begin "${prefix}"`)}&$method=entityset&$top=1`, 'GET', undefined, cookie ? { cookie } : {});
      assert.equal(set.status, 200, JSON.stringify(set.body));
      const given = set.headers['set-cookie'];
      if (given) cookie = (Array.isArray(given) ? given : [String(given)]).map((c) => c.split(';')[0]).join('; ');
      return String(set.body.__ENTITYSET).split('/').at(-1)!;
    };
    const dropSet = (id: string) => injected(app, `/rest/Author/$entityset/${id}?$method=delete`, 'POST', undefined, { cookie });
    const a = await author('Set one');
    const b = await author('Set two');
    const id = await setOf('Set ');
    const res = await dropSet(id);
    assert.deepEqual([res.status, res.body], [200, { ok: true }]);
    await allThere(a, false);
    await allThere(b, false);
    const c = await author('Lent set one');
    const d = await author('Lent set two', true);
    refused(await dropSet(await setOf('Lent set')), 'Book', d.lentBook!.getKey(), 'loans');
    await allThere(c, true);
    await allThere(d, true);
  });

  it('a class function that drops an entity or a selection cascades, and its refusal reaches the client as the same 409', async () => {
    const a = await author('Function one');
    const res = await request('/rest/Author/retire', 'POST', [a.author.getKey()]);
    assert.deepEqual([res.status, res.body], [200, { result: true }]);
    await allThere(a, false);
    const b = await author('Function two', true);
    refused(await request('/rest/Author/retire', 'POST', [b.author.getKey()]), 'Book', b.lentBook!.getKey(), 'loans');
    await allThere(b, true);
    const c = await author('Function sel one');
    const d = await author('Function sel two', true);
    refused(await request('/rest/Author/retireAll', 'POST', ['Function sel']), 'Book', d.lentBook!.getKey(), 'loans');
    await allThere(c, true);
    await allThere(d, true);
  });

  it('inside $atomic, a drop a save makes cascades; a refused one rolls the whole batch back: nothing dropped, nothing saved', async () => {
    const removals = async () => (await request('/rest/Removal?$top=1000')).body.__COUNT as number;
    const before = await removals();
    const a = await author('Atomic one');
    const b = await author('Atomic two', true);
    const res = await request('/rest/Removal?$method=update&$atomic=true', 'POST', [{ authorKey: a.author.getKey() }, { authorKey: b.author.getKey() }]);
    assert.equal(res.status, 409, JSON.stringify(res.body));
    const failed = (res.body.__ENTITIES as Json[]).find((e) => e.__ERROR);
    assert.ok(failed?.__ERROR.some((e: Json) => e.errCode === ERRORS.DROP_REFUSED_BY_RELATION.errCode && e.attributeName === 'loans' && /Book\.loans/.test(e.message)), JSON.stringify(res.body));
    await allThere(a, true);
    await allThere(b, true);
    assert.equal(await removals(), before, 'no Removal was saved');
    const c = await author('Atomic three');
    const ok = await request('/rest/Removal?$method=update&$atomic=true', 'POST', [{ authorKey: a.author.getKey() }, { authorKey: c.author.getKey() }]);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    await allThere(a, false);
    await allThere(c, false);
  });

  it('describes each rule in $catalog (deleteRule, when it is not the default leave) and in the OpenAPI document', async () => {
    const catalog = (await request('/rest/$catalog/Author')).body as Json;
    const attr = (name: string) => (catalog.attributes as Json[]).find((a) => a.name === name)!;
    assert.equal(attr('books').deleteRule, 'cascade');
    assert.equal('deleteRule' in attr('letters'), false, "leave, the default, keeps 4D's shape");
    const book = ((await request('/rest/$catalog/Book')).body as Json).attributes as Json[];
    assert.equal(book.find((a) => a.name === 'loans')!.deleteRule, 'refuse');
    const doc = (await request('/rest/$openapi')).body as Json;
    const props = doc.components.schemas.AuthorEntity.properties;
    assert.match(props.books.description, /deleteRule cascade: dropping this entity drops them too/);
    assert.doesNotMatch(props.letters.description, /deleteRule/);
    assert.match(doc.components.schemas.BookEntity.properties.loans.description, /deleteRule refuse: this entity cannot be dropped while it has any, 409/);
  });
});

describe(`delete rules over REST, meeting permissions and row filters (${TEST_ENGINE})`, () => {
  const tmp = tempDir('dataset-rest-delete-rules-guarded-');
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  const request = (url: string, method: 'GET' | 'POST' = 'GET', body?: unknown) => injected(app, url, method, body);
  before(async () => {
    writeLibraryProject(tmp.dir, true);
    ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'library.sqlite')) });
    app = await buildServer(ds, { logLevel: 'silent' });
  });
  after(async () => {
    await app?.close();
    await ds?.close();
    tmp.remove();
  });
  // (made as the server: what the guest's restrict() hides is made too)
  const make = async (cls: string, values: Record<string, unknown>): Promise<Entity> => {
    const e = ds.dataClass(cls)!.new();
    for (const [k, v] of Object.entries(values)) e.set(k, v);
    await e.save();
    return e;
  };
  const there = async (cls: string, key: unknown) => (await ds.dataClass(cls)!.get(key)) !== null;

  it('refuses a cascade into entities the session may not drop (401 for a guest), and needs no such right when there are none', async () => {
    const a = await make('Author', { name: 'Guarded chapters' });
    const book = await make('Book', { title: 'with a chapter', author: a });
    const chapter = await make('Chapter', { title: 'one', book });
    const res = await request(`/rest/Author(${String(a.getKey())})?$method=delete`, 'POST');
    assert.equal(res.status, 401, JSON.stringify(res.body));
    assert.equal(res.body.__ERROR[0].errCode, ERRORS.NO_PERMISSION_DROP.errCode);
    for (const [cls, e] of [['Author', a], ['Book', book], ['Chapter', chapter]] as const) assert.equal(await there(cls, e.getKey()), true, cls);
    const b = await make('Author', { name: 'No chapters' });
    const bare = await make('Book', { title: 'without chapters', author: b });
    assert.deepEqual((await request(`/rest/Author(${String(b.getKey())})?$method=delete`, 'POST')).body, { ok: true });
    assert.equal(await there('Book', bare.getKey()), false);
  });

  it("counts, for a refuse rule, the related entities the session's row filter hides (and names only the entity dropped)", async () => {
    const book = await make('Book', { title: 'secretly lent' });
    await make('Loan', { borrower: 'secret', book });
    assert.equal((await request(`/rest/Book(${String(book.getKey())})/loans?$expand=loans`)).body.__COUNT, 0, 'the guest sees no loan');
    const res = await request(`/rest/Book(${String(book.getKey())})?$method=delete`, 'POST');
    assert.equal(res.status, 409, JSON.stringify(res.body));
    assert.deepEqual([res.body.__ERROR[0].errCode, res.body.__ERROR[0].attributeName], [ERRORS.DROP_REFUSED_BY_RELATION.errCode, 'loans']);
    assert.doesNotMatch(res.body.__ERROR[0].message, /secret/);
    assert.equal(await there('Book', book.getKey()), true);
  });

  it('refuses a cascade that would leave behind related entities the session cannot see, and drops nothing', async () => {
    const a = await make('Author', { name: 'Half hidden' });
    const shown = await make('Book', { title: 'shown', author: a });
    const hidden = await make('Book', { title: 'hidden one', author: a });
    const res = await request(`/rest/Author(${String(a.getKey())})?$method=delete`, 'POST');
    assert.equal(res.status, 409, JSON.stringify(res.body));
    const [error] = res.body.__ERROR;
    assert.deepEqual([error.errCode, error.attributeName], [ERRORS.DROP_REFUSED_BY_RELATION.errCode, 'books']);
    assert.match(error.message, /^Cannot drop Author\(\d+\): some of its Book entities in Author\.books \(deleteRule "cascade"\) are out of this session's reach/);
    for (const e of [shown, hidden]) assert.equal(await there('Book', e.getKey()), true);
    assert.equal(await there('Author', a.getKey()), true);
  });
});
