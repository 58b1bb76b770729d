// Whole answers kept while the global stamp stands still (rest/scope/answer-cache, issue 39): a
// read asked again is answered from memory — the same bytes and headers, no statement run, a 304
// for a tag still current without the database — until anything is written: through REST,
// through the core, or by another instance (seen within ANSWER_CACHE_STALENESS_MS). Callers who
// see different things never share an answer; answers user code decides are never kept; the
// memory is bounded. The statements are counted on the storage (the watch's own read of the
// stamp, made on a timer whatever the requests, left out).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { coreOf, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { ANSWER_CACHE_STALENESS_MS } from '../../src/config/limits.js';
import { GLOBAL_STAMP_TABLE } from '../../src/storage/system-tables/tables.js';
import { AnswerCache } from '../../src/rest/scope/answer-cache/answer-cache.js';
import { stampWatchOf } from '../../src/rest/scope/answer-cache/stamp-watch.js';
import { addUser, logIn, openUsersProject, type UsersProject, type UsersServer } from '../support/users-project.js';
import { TEST_ENGINE } from '../support/helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Counts the statements a datastore's storage runs from now on (its reads, its snapshots), the stamp watch's read of the stamp aside. */
function statements(ds: DatastoreWithClasses): { readonly count: number; stop(): void } {
  const storage = coreOf(ds).storage as unknown as Record<string, unknown> & { dialect: { schema: { globalStamp(t: string): { read: string; watch: string } }; sql: { quote(n: string): string } } };
  const stampSql = storage.dialect.schema.globalStamp(storage.dialect.sql.quote(GLOBAL_STAMP_TABLE));
  const watchRead = stampSql.read;
  const watchStamp = stampSql.watch;
  const execute = storage.execute as (...a: unknown[]) => unknown;
  const snapshot = storage.snapshot as (...a: unknown[]) => unknown;
  const counter = { count: 0, stop: () => { delete storage.execute; delete storage.snapshot; } };
  storage.execute = (sql: unknown, ...rest: unknown[]) => {
    if (sql !== watchRead && sql !== watchStamp) counter.count++;
    return execute.call(storage, sql, ...rest);
  };
  storage.snapshot = (...a: unknown[]) => {
    counter.count++;
    return snapshot.apply(storage, a);
  };
  return counter;
}

/** A new note saved through the core. */
async function newNote(ds: DatastoreWithClasses, values: Record<string, string>) {
  const e = ds.Note.new();
  for (const [name, value] of Object.entries(values)) e.set(name, value);
  await e.save();
  return e;
}

type Raw = { status: number; body: string; headers: Record<string, unknown> };

async function get(app: FastifyInstance, url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET'): Promise<Raw> {
  const res = await app.inject({ method, url, headers });
  return { status: res.statusCode, body: res.body, headers: res.headers as Record<string, unknown> };
}

/** The headers that must be the same on a kept answer as on a fresh one (a request's id, a date, a new guest's cookie differ). */
function sameHeaders(h: Record<string, unknown>): Record<string, unknown> {
  const { 'x-request-id': _id, date: _date, 'set-cookie': _cookie, ...rest } = h;
  return rest;
}

/** Runs `fn`, resolving to what it gave and the statements the storage ran meanwhile. */
async function counted<T>(ds: DatastoreWithClasses, fn: () => Promise<T>): Promise<{ value: T; statements: number }> {
  const c = statements(ds);
  try {
    const value = await fn();
    return { value, statements: c.count };
  } finally {
    c.stop();
  }
}

/**
 * A read that should be answered from memory, with the statements it ran: the stamp read just
 * before (a loaded machine may delay the watch's timer past the staleness bound, and a kept
 * answer is then read again — rightly), tried a few times until none ran.
 */
async function fromMemory(s: UsersServer, url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET'): Promise<{ value: Raw; statements: number }> {
  let last: { value: Raw; statements: number } | undefined;
  for (let i = 0; i < 5; i++) {
    await stampWatchOf(coreOf(s.ds).storage).check();
    last = await counted(s.ds, () => get(s.app, url, headers, method));
    if (last.statements === 0) break;
  }
  return last!;
}

/** Reads `url` until an answer of it is kept (the watch trusted, the answer read since): the next one is from memory. */
async function warm(s: UsersServer, url: string, headers: Record<string, string> = {}): Promise<Raw> {
  await stampWatchOf(coreOf(s.ds).storage).check();
  await get(s.app, url, headers);
  return get(s.app, url, headers);
}

describe(`whole answers kept while the data stands still (${TEST_ENGINE})`, () => {
  let p: UsersProject;
  let s: UsersServer;
  let keeper: string;
  let editor: string;

  before(async () => {
    p = await openUsersProject();
    s = p.a;
    for (const [text, secret] of [['one', 's1'], ['two', 's2'], ['three', 's3']]) await newNote(s.ds, { text, secret });
    await addUser(s, 'kim', 'password-kim', ['Keeper']);
    await addUser(s, 'eve', 'password-eve', ['Editor']);
    keeper = await logIn(s, 'kim', 'password-kim');
    editor = await logIn(s, 'eve', 'password-eve');
  });
  after(() => p.close());

  it('answers a page and an entity asked again from memory: the same bytes and headers as a fresh read, no statement', async () => {
    for (const url of ['/rest/Note?$orderby=ID&$top=2', '/rest/Note(1)', '/rest/Note?$filter="text begin :1"&$params=["t"]&$attributes=text', '/rest/Note/text?$compute=count']) {
      await warm(s, url);
      const kept = await fromMemory(s, url);
      assert.equal(kept.statements, 0, `${url}: from memory`);
      const fresh = await counted(s.ds, () => get(s.app, url, { 'cache-control': 'no-cache' }));
      assert.ok(fresh.statements > 0, `${url}: Cache-Control: no-cache reads it again`);
      assert.equal(kept.value.status, 200, kept.value.body);
      assert.equal(kept.value.body, fresh.value.body, url);
      assert.deepEqual(sameHeaders(kept.value.headers), sameHeaders(fresh.value.headers), url);
    }
  });

  it('answers a HEAD with the kept answer\'s headers', async () => {
    const url = '/rest/Note?$orderby=ID';
    const full = await warm(s, url);
    const head = await fromMemory(s, url, {}, 'HEAD');
    assert.equal(head.statements, 0);
    assert.equal(head.value.status, 200);
    assert.equal(head.value.body, '');
    assert.deepEqual(sameHeaders(head.value.headers), sameHeaders(full.headers));
  });

  it('answers If-None-Match with a tag still current 304 without a statement, for an entity and a page', async () => {
    for (const url of ['/rest/Note(2)', '/rest/Note?$orderby=ID']) {
      const first = await warm(s, url);
      const tag = String(first.headers.etag);
      assert.ok(tag.length > 2, `${url} carries a tag`);
      const again = await fromMemory(s, url, { 'if-none-match': tag });
      assert.equal(again.value.status, 304, url);
      assert.equal(again.value.headers.etag, tag);
      assert.equal(again.statements, 0, `${url}: the 304 touched the database`);
      // (a weak comparison: the client's W/ form of a strong tag names it too)
      const weak = await fromMemory(s, url, { 'if-none-match': tag.startsWith('W/') ? tag : `W/${tag}` });
      assert.equal(weak.value.status, 304);
      assert.equal(weak.statements, 0);
    }
  });

  it('reads fresh after a write through REST: the new value, a new tag, no 304 for the old one', async () => {
    const url = '/rest/Note(3)';
    const before = await warm(s, url);
    const updated = await s.app.inject({ method: 'POST', url: '/rest/Note(3)', payload: { text: 'three, again', __STAMP: JSON.parse(before.body).__STAMP }, headers: { cookie: editor } });
    assert.equal(updated.statusCode, 200, updated.body);
    const after = await get(s.app, url, { 'if-none-match': String(before.headers.etag) });
    assert.equal(after.status, 200);
    assert.equal(JSON.parse(after.body).text, 'three, again');
    assert.notEqual(after.headers.etag, before.headers.etag);
  });

  it('reads fresh after a write through the core, and after a drop', async () => {
    const url = '/rest/Note?$orderby=ID&$attributes=text';
    await warm(s, url);
    const note = (await s.ds.Note.get(1))!;
    note.set('text', 'one, by the core');
    await note.save();
    assert.equal(JSON.parse((await get(s.app, url)).body).__ENTITIES[0].text, 'one, by the core');
    await warm(s, url);
    const extra = await newNote(s.ds, { text: 'extra' });
    assert.equal(JSON.parse((await get(s.app, url)).body).__COUNT, 4);
    await warm(s, url);
    await extra.drop();
    assert.equal(JSON.parse((await get(s.app, url)).body).__COUNT, 3);
  });

  it('never gives one caller the answer another caller sees: privileges, attribute permissions, user names', async () => {
    const url = '/rest/Note(2)?$attributes=text,secret';
    // the guest may not read secret (403 is no answer to keep), the keeper may
    const guest = await warm(s, '/rest/Note(2)');
    assert.equal(JSON.parse(guest.body).secret, undefined);
    assert.equal(JSON.parse((await get(s.app, url)).body).secret, undefined);
    const kim = await warm(s, url, { cookie: keeper });
    assert.equal(JSON.parse(kim.body).secret, 's2');
    assert.equal(JSON.parse((await get(s.app, '/rest/Note(2)', { cookie: keeper })).body).secret, 's2');
    assert.equal(JSON.parse((await get(s.app, '/rest/Note(2)')).body).secret, undefined, 'the guest does not get the keeper\'s answer');
    assert.equal(JSON.parse((await get(s.app, '/rest/Note(2)', { cookie: editor })).body).secret, undefined, 'nor the editor');
    assert.notEqual((await get(s.app, '/rest/Note(2)', { cookie: editor })).headers.etag, (await get(s.app, '/rest/Note(2)', { cookie: keeper })).headers.etag);
  });

  it('keeps no error, no entity set\'s page, no $querypath', async () => {
    for (const url of ['/rest/Note(999)', '/rest/Note?$filter="text = :1"&$params=["two"]&$querypath=true']) {
      await warm(s, url);
      assert.ok((await fromMemory(s, url)).statements > 0, `${url} is read again`);
    }
    const made = await s.app.inject({ url: '/rest/Note?$method=entityset', headers: { cookie: editor } });
    const set = String(JSON.parse(made.body).__ENTITYSET).split('/').pop();
    const page = `/rest/Note/$entityset/${set}?$top=2`;
    await warm(s, page, { cookie: editor });
    assert.ok((await fromMemory(s, page, { cookie: editor })).statements > 0, 'an entity set\'s page is read every time');
  });

  it('sees another instance\'s write within the staleness bound', async () => {
    const b = await p.second();
    const url = '/rest/Note?$orderby=ID&$attributes=text';
    const before = await warm(s, url);
    assert.equal((await fromMemory(s, url)).statements, 0);
    const note = (await b.ds.Note.get(2))!;
    note.set('text', 'two, by the other instance');
    await note.save();
    await sleep(ANSWER_CACHE_STALENESS_MS + 20);
    const after = await get(s.app, url, { 'if-none-match': String(before.headers.etag) });
    assert.equal(after.status, 200, 'the old tag is no longer current');
    assert.equal(JSON.parse(after.body).__ENTITIES[1].text, 'two, by the other instance');
    // and through REST on the other instance
    const updated = await b.app.inject({ method: 'POST', url: '/rest/Note(2)', payload: { text: 'two, through B', __STAMP: (await b.ds.Note.get(2))!.getStamp() }, headers: { cookie: await logIn(b, 'eve', 'password-eve') } });
    assert.equal(updated.statusCode, 200, updated.body);
    await sleep(ANSWER_CACHE_STALENESS_MS + 20);
    assert.equal(JSON.parse((await get(s.app, url)).body).__ENTITIES[1].text, 'two, through B');
  });
});

describe(`whole answers where user code decides (${TEST_ENGINE})`, () => {
  let p: UsersProject;
  before(async () => {
    // a restrict() that reads what it likes (here the process's environment): its answers are never kept
    p = await openUsersProject(undefined, {
      'classes/Note.ts': `import { DataClass } from 'dataset-rest';
export default class Note extends DataClass {
  restrict() { return this.query('text begin :1', process.env.NOTE_FILTER ?? ''); }
}
`,
    });
    for (const text of ['apple', 'banana']) await newNote(p.a.ds, { text });
  });
  after(() => p.close());

  it('reads a page under restrict() every time: the same caller sees what restrict() lets through now', async () => {
    const url = '/rest/Note?$attributes=text';
    process.env.NOTE_FILTER = 'a';
    await warm(p.a, url);
    assert.deepEqual(JSON.parse((await get(p.a.app, url)).body).__ENTITIES.map((e: { text: string }) => e.text), ['apple']);
    process.env.NOTE_FILTER = 'b';
    const again = await counted(p.a.ds, () => get(p.a.app, url));
    assert.ok(again.statements > 0);
    assert.deepEqual(JSON.parse(again.value.body).__ENTITIES.map((e: { text: string }) => e.text), ['banana']);
    delete process.env.NOTE_FILTER;
  });
});

describe('the cache of answers in memory', () => {
  const witness = { generation: 0, trusted: () => true };

  it('keeps no more bytes than its budget, the least recently used going first, and no answer larger than an entry may be', () => {
    const cache = new AnswerCache(witness, 10_000, 4_000);
    const text = 'x'.repeat(1000);
    for (let i = 0; i < 20; i++) cache.set(`k${i}`, cache.generation, { status: 200, text, action: 'readEntity' });
    assert.ok(cache.bytes <= 10_000, `${cache.bytes} bytes kept`);
    assert.ok(cache.size >= 3 && cache.size < 20);
    assert.equal(cache.get('k0'), undefined, 'the oldest went');
    assert.equal(cache.get('k19')?.text, text);
    cache.set('big', cache.generation, { status: 200, text: 'y'.repeat(3000), action: 'readEntity' });
    assert.equal(cache.get('big'), undefined, 'larger than an entry: passes through');
  });

  it('drops every answer when the stamp moves, and keeps none read before it moved or while untrusted', () => {
    const w = { generation: 0, trusted: () => true };
    const cache = new AnswerCache(w, 100_000);
    const g = cache.generation;
    cache.set('a', g, { status: 200, text: '{}', action: 'readEntity' });
    assert.ok(cache.get('a'));
    w.generation = 1;
    assert.equal(cache.get('a'), undefined);
    cache.set('b', g, { status: 200, text: '{}', action: 'readEntity' });
    assert.equal(cache.get('b'), undefined, 'read before the move');
    w.trusted = () => false;
    assert.equal(cache.generation, -1);
    cache.set('c', cache.generation, { status: 200, text: '{}', action: 'readEntity' });
    w.trusted = () => true;
    assert.equal(cache.get('c'), undefined);
  });
});
