// The whole-answer cache under races and odd requests (issue 39, found in review): another
// instance's write held open while this one reads, an export asked by Accept for a URL kept as JSON.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { coreOf, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { ANSWER_CACHE_STALENESS_MS } from '../../src/config/limits.js';
import { stampWatchOf } from '../../src/rest/scope/answer-cache/stamp-watch.js';
import { openUsersProject, type UsersProject, type UsersServer } from '../support/users-project.js';
import { TEST_ENGINE } from '../support/helpers.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function newNote(ds: DatastoreWithClasses, text: string) {
  const e = ds.Note.new();
  e.set('text', text);
  await e.save();
}

async function warm(s: UsersServer, url: string, headers: Record<string, string> = {}) {
  await stampWatchOf(coreOf(s.ds).storage).check();
  await s.app.inject({ url, headers });
  return s.app.inject({ url, headers });
}

describe(`review2: whole answers (${TEST_ENGINE})`, () => {
  let p: UsersProject;
  before(async () => {
    p = await openUsersProject();
    for (const text of ['one', 'two']) await newNote(p.a.ds, text);
  });
  after(() => p.close());

  it('answers Accept: text/csv with CSV even when the JSON page of the same URL is kept', async () => {
    const url = '/rest/Note?$orderby=ID&$attributes=text';
    const json = await warm(p.a, url);
    assert.match(String(json.headers['content-type']), /json/);
    await stampWatchOf(coreOf(p.a.ds).storage).check();
    const csv = await p.a.app.inject({ url, headers: { accept: 'text/csv' } });
    assert.equal(csv.statusCode, 200);
    assert.match(String(csv.headers['content-type']), /csv/, `got ${String(csv.headers['content-type'])}: ${csv.body.slice(0, 80)}`);
  });

  it('does not keep an answer read while another instance\'s write is uncommitted, past its commit', async () => {
    const b = await p.second();
    const a = p.a;
    const url = '/rest/Note(2)?$attributes=text';
    await warm(a, url);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const writing = coreOf(b.ds).storage.transaction(async () => {
      const n = (await b.ds.Note.get(2))!;
      n.set('text', 'two, by B');
      await n.save();
      await gate;
    });
    await sleep(ANSWER_CACHE_STALENESS_MS * 2);
    // A reads (B's write uncommitted: the old text) and keeps it
    await stampWatchOf(coreOf(a.ds).storage).check();
    assert.equal(JSON.parse((await a.app.inject({ url })).body).text, 'two');
    await a.app.inject({ url });
    release();
    await writing;
    await sleep(ANSWER_CACHE_STALENESS_MS * 2);
    await stampWatchOf(coreOf(a.ds).storage).check();
    assert.equal(JSON.parse((await a.app.inject({ url })).body).text, 'two, by B', 'a committed write of another instance is seen within the bound');
  });
});
