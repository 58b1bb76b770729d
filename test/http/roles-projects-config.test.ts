// Projects whose roles or classes are unusual (issue 13; split from roles-projects.test.ts): a
// broken roles.json refusing the start (fail closed, exit 2 from the command), --roles none /
// roles: false opening everything, $directory on a DataStore class defining none of its hooks,
// and entity tags where user code decides what is shown (restrict(), a calculated attribute).
// (test:quick leaves this file out: projects opened as the command opens them.)

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openProject, ProjectError } from '../../src/project/open.js';
import { startCommand, testDatabase } from '../support/helpers.js';
import { client, noteKey, project, rolesJson, serve, texts, type Served } from './roles-projects-shared.js';

describe('a broken roles.json: the server refuses to start', () => {
  const refused = async (roles: string, pattern: RegExp) => {
    const tmp = project(roles);
    try {
      const file = join(tmp.dir, 'roles.json');
      await assert.rejects(openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'data.sqlite')) }), (e: Error) => {
        assert.ok(e instanceof ProjectError, String(e));
        assert.ok(e.message.startsWith(`${file}:`), e.message);
        assert.match(e.message.slice(file.length), pattern);
        return true;
      });
    } finally {
      tmp.remove();
    }
  };

  it('names the file, line:column and the problem for a syntax error', async () => {
    const text = rolesJson().replace('"roles": [', '"roles": [,');
    const lines = text.split('\n');
    const line = lines.findIndex((l) => l.includes('"roles": [,')) + 1;
    const column = lines[line - 1].indexOf(',') + 1;
    await refused(text, new RegExp(`^:${line}:${column}: invalid JSON: value expected$`));
  });

  it('names an unknown dataclass with a did-you-mean', async () => {
    const text = rolesJson({}, [{ applyTo: 'Notes', type: 'dataclass', read: ['reader'] }]);
    const line = text.split('\n').findIndex((l) => l.includes('"Notes"')) + 1;
    await refused(text, new RegExp(`^:${line}:\\d+: unknown dataclass 'Notes', did you mean 'Note'\\?`));
  });

  it('names an unknown privilege', async () => {
    const text = rolesJson({}, [{ applyTo: 'Note', type: 'dataclass', read: ['readers'] }]);
    const line = text.split('\n').findIndex((l) => l.includes('"readers"')) + 1;
    await refused(text, new RegExp(`^:${line}:\\d+: unknown privilege 'readers', did you mean 'reader'\\?`));
  });

  it('makes the command exit with code 2, printing file:line:col and the problem', { timeout: 60_000 }, async () => {
    const tmp = project(rolesJson({}, [{ applyTo: 'Notes', type: 'dataclass', read: ['reader'] }]));
    try {
      const started = startCommand(['--project', tmp.dir, '--port', '0', '--db', join(tmp.dir, 'data.sqlite')], { alone: true });
      await assert.rejects(started, (e: Error) => {
        assert.match(e.message, /the server exited with 2: /);
        const file = join(tmp.dir, 'roles.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        assert.match(e.message, new RegExp(`dataset-rest: ${file}:\\d+:\\d+: unknown dataclass 'Notes', did you mean 'Note'\\?`));
        return true;
      });
    } finally {
      tmp.remove();
    }
  });
});

describe('roles: false (--roles none) on a project with a roles.json: everything open', () => {
  let s: Served;
  before(async () => {
    s = await serve(rolesJson({ forceLogin: true }), { roles: false });
  });
  after(() => s.close());

  it('lets a guest read, call, write and see $info', async () => {
    const guest = client(s.app);
    const info = await guest('/rest/$info');
    assert.equal(info.status, 200, JSON.stringify(info.body));
    const owners = await guest('/rest/Owner');
    assert.equal(owners.status, 200);
    assert.equal(owners.body.__COUNT, 2);
    const created = await guest('/rest/Owner?$method=update', 'POST', { name: 'cy' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal((await guest('/rest/$catalog/allNotes', 'POST', [])).status, 200);
    // restrict() is the project's code, not roles.json's: it still filters by user name
    const notes = await guest('/rest/Note');
    assert.equal(notes.status, 200);
    assert.equal(notes.body.__COUNT, 0);
    await guest('/rest/$catalog/authentify', 'POST', ['bob']);
    assert.deepEqual(texts((await guest('/rest/Note')).body), ['bob other', 'bob secret', 'bob third']);
    const drop = await guest(`/rest/Note(${await noteKey(s.ds, 'bob other')})?$method=delete`, 'POST');
    assert.equal(drop.status, 200, JSON.stringify(drop.body));
  });

  it('does not even read a broken roles.json', async () => {
    const tmp = project('{ "privileges": [, }');
    try {
      const ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'data.sqlite')), roles: false });
      assert.equal(await ds.Note.all().length, 5);
      await ds.close();
    } finally {
      tmp.remove();
    }
  });
});

describe('$directory on a datastore whose DataStore class defines none of its hooks', () => {
  let s: Served;
  before(async () => {
    s = await serve(rolesJson());
  });
  after(() => s.close());

  it('answers $directory/login with 501 (7051), and currentUser / currentUserBelongsTo from the session itself', async () => {
    const c = client(s.app);
    const login = await c('/rest/$directory/login', 'POST', ['ann', 'pw']);
    assert.equal(login.status, 501);
    assert.equal(login.body.__ERROR[0].errCode, 7051);
    assert.match(login.body.__ERROR[0].message, /authentify/);
    assert.deepEqual((await c('/rest/$directory/currentUser')).body, { result: null });
    assert.equal((await c('/rest/$catalog/authentify', 'POST', ['ann'])).status, 200);
    assert.deepEqual((await c('/rest/$directory/currentUser')).body, { result: { ID: 'ann', userName: 'ann', fullName: 'ann' } });
    assert.deepEqual((await c('/rest/$directory/currentUserBelongsTo', 'POST', ['reader'])).body, { result: true });
    assert.deepEqual((await c('/rest/$directory/currentUserBelongsTo', 'POST', ['writer'])).body, { result: false });
    assert.deepEqual((await c('/rest/$directory/logout')).body, { result: true });
    assert.deepEqual((await c('/rest/$directory/currentUser')).body, { result: null });
  });
});

describe('entity tags where user code decides what is shown (restrict(), a calculated attribute)', () => {
  let s: Served;
  before(async () => {
    s = await serve(rolesJson());
  });
  after(() => s.close());

  const read = (url: string, headers: Record<string, string>) => s.app.inject({ url, headers });

  it('gives a session whose storage changed a new tag: no stale 304 for a calculated value that reads it', async () => {
    const login = await s.app.inject({ method: 'POST', url: '/rest/$catalog/authentify', payload: ['ann'] });
    const cookie = String(([] as string[]).concat(login.headers['set-cookie'] as string[]).find((c) => c.startsWith('4DSID_'))).split(';')[0];
    const key = await noteKey(s.ds, 'ann one');
    const url = `/rest/Note(${key})?$attributes=text,writtenBy`;
    const first = await read(url, { cookie });
    assert.equal(first.json().writtenBy, 'me');
    assert.equal((await read(url, { cookie, 'if-none-match': first.headers.etag as string })).statusCode, 304, 'nothing changed: 304');
    const called = await s.app.inject({ method: 'POST', url: '/rest/$catalog/callMe', payload: ['myself'], headers: { cookie } });
    assert.equal(called.statusCode, 200, called.body);
    const again = await read(url, { cookie, 'if-none-match': first.headers.etag as string });
    assert.equal(again.statusCode, 200, 'the storage the calculated value reads changed');
    assert.equal(again.json().writtenBy, 'myself');
    assert.notEqual(again.headers.etag, first.headers.etag);
    const page = `/rest/Note?$attributes=text,writtenBy`;
    const tag = (await read(page, { cookie })).headers.etag as string;
    assert.equal((await read(page, { cookie, 'if-none-match': tag })).statusCode, 304);
    await s.app.inject({ method: 'POST', url: '/rest/$catalog/callMe', payload: ['I'], headers: { cookie } });
    assert.equal((await read(page, { cookie, 'if-none-match': tag })).statusCode, 200);
  });

  it('gives a guest without a kept session the same tag twice under a restrict(), so that it gets its 304', async () => {
    const open = await serve(rolesJson({}, [{ applyTo: 'Owner', type: 'dataclass', read: ['guest'] }]));
    try {
      const key = (await open.ds.Owner.query('name = :1', 'ann').first())!.getKey();
      const first = await open.app.inject({ url: `/rest/Owner(${key})?$attributes=name` });
      assert.equal(first.statusCode, 200, first.body);
      const second = await open.app.inject({ url: `/rest/Owner(${key})?$attributes=name`, headers: { 'if-none-match': first.headers.etag as string } });
      assert.equal(second.statusCode, 304);
    } finally {
      await open.close();
    }
  });
});
