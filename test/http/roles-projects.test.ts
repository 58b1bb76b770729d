// Sessions and permissions on small throw-away projects (issue 13): row-level security through a
// dataclass class's restrict() (reads, relations, queries through them, $compute, functions,
// updates and drops), force-login mode, a broken roles.json refusing the start (fail closed, exit
// 2 from the command), and --roles none / roles: false opening everything.

import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { openProject, ProjectError } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { startCommand, tempDir, testDatabase } from '../support/helpers.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

const MODEL = {
  name: 'Notes',
  dataClasses: [
    {
      name: 'Owner',
      collectionName: 'OwnerSelection',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
        { name: 'notes', kind: 'relatedEntities', type: 'NoteSelection', path: 'owner' },
      ],
    },
    {
      name: 'Note',
      collectionName: 'NoteSelection',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'text', type: 'string' },
        { name: 'ownerName', type: 'string' },
        { name: 'owner', kind: 'relatedEntity', type: 'Owner', foreignKey: 'ownerID' },
        { name: 'writtenBy', kind: 'calculated', type: 'string' },
      ],
    },
  ],
};

const CLASSES = {
  'DataStore.ts': `import { Datastore, exposed, session } from 'dataset-rest';
export default class DataStore extends Datastore {
  @exposed
  authentify(name: string) {
    session().setPrivileges({ roles: ['User'], userName: name });
    return { userName: session().userName, privileges: session().getPrivileges() };
  }
  // what the session keeps, read by the calculated writtenBy
  @exposed
  callMe(name: string) {
    session().storage.me = name;
  }
  @exposed
  allNotes() {
    return this.dataClass('Note')!.all();
  }
}
`,
  // by user name only: a guest's is '' (no note has it), and it works without a roles.json too
  // an event is user code too: it runs as the REST caller whose save started it
  'NoteEntity.ts': `import { Entity, exposed, session } from 'dataset-rest';
export default class NoteEntity extends Entity {
  // saves this entity: with roles.json's promote, a session that may only read runs it
  @exposed
  async shout() {
    this.set('text', String(this.get('text')).toUpperCase());
    await this.save();
    return this.get('text');
  }
  saving() {
    if (this.get('ownerName') === null) this.set('ownerName', session().userName);
  }
  // a calculated attribute's code is user code too: a read runs it as the REST caller
  get writtenBy() {
    return this.get('ownerName') === session().userName ? String(session().storage.me ?? 'me') : String(this.get('ownerName'));
  }
}
`,
  'Note.ts': `import { DataClass, session } from 'dataset-rest';
export default class Note extends DataClass {
  restrict() {
    return this.query('ownerName = :1', session().userName);
  }
}
`,
};

const SEED = `import type { DatastoreWithClasses } from 'dataset-rest';
export default async function seed(ds: DatastoreWithClasses): Promise<void> {
  for (const [name, texts] of [['ann', ['ann one', 'ann two']], ['bob', ['bob secret', 'bob other', 'bob third']]] as const) {
    const owner = ds.Owner.new();
    owner.set('name', name);
    await owner.save();
    for (const text of texts) {
      const note = ds.Note.new();
      note.set('text', text);
      note.set('ownerName', name);
      note.set('owner', owner);
      await note.save();
    }
  }
}
`;

/** A roles.json: the User role holds `reader`, which reads and writes everything. */
function rolesJson(extra: Record<string, unknown> = {}, allowed: unknown[] = []): string {
  return JSON.stringify({
    privileges: [{ privilege: 'reader', includes: [] }],
    roles: [{ role: 'User', privileges: ['reader'] }],
    permissions: {
      allowed: [
        { applyTo: 'ds', type: 'datastore', read: ['reader'], create: ['reader'], update: ['reader'], drop: ['reader'], execute: ['guest'] },
        ...allowed,
      ],
    },
    ...extra,
  }, null, 2);
}

/** A project folder with the model, classes, seed and (unless null) this roles.json; dataset-rest installed as a link to this repository. */
function project(roles: string | null): { dir: string; remove(): void } {
  const tmp = tempDir('dataset-rest-roles-');
  writeFileSync(join(tmp.dir, 'model.json'), JSON.stringify(MODEL, null, 2));
  for (const d of ['classes', 'node_modules']) mkdirSync(join(tmp.dir, d));
  symlinkSync(REPO, join(tmp.dir, 'node_modules', 'dataset-rest'), 'dir');
  for (const [name, text] of Object.entries(CLASSES)) writeFileSync(join(tmp.dir, 'classes', name), text);
  writeFileSync(join(tmp.dir, 'seed.ts'), SEED);
  if (roles !== null) writeFileSync(join(tmp.dir, 'roles.json'), roles);
  return tmp;
}

type Verb = 'GET' | 'POST';
type Answer = { status: number; body: any };

/** A client of an app that keeps its session cookie, as a browser would. */
function client(app: FastifyInstance) {
  let cookie: string | undefined;
  return async (url: string, method: Verb = 'GET', body?: unknown): Promise<Answer> => {
    const res = await app.inject({ method, url, headers: cookie ? { cookie } : {}, ...(body === undefined ? {} : { payload: body as object }) });
    const set = ([] as string[]).concat((res.headers['set-cookie'] as string | string[] | undefined) ?? []).find((c) => c.startsWith('4DSID_'));
    if (set) cookie = set.split(';')[0];
    let parsed: unknown = res.body;
    try {
      parsed = JSON.parse(res.body);
    } catch {
      // not JSON
    }
    return { status: res.statusCode, body: parsed };
  };
}

interface Served {
  ds: DatastoreWithClasses;
  app: FastifyInstance;
  close(): Promise<void>;
}

async function serve(roles: string | null, options: { roles?: false } = {}): Promise<Served> {
  const tmp = project(roles);
  const ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'data.sqlite')), ...options });
  const app = await buildServer(ds, { logLevel: 'silent' });
  return {
    ds, app,
    async close() {
      await app.close();
      await ds.close();
      tmp.remove();
    },
  };
}

const texts = (body: any): string[] => (body.__ENTITIES as { text: string }[]).map((e) => e.text).sort();
const noteKey = async (ds: DatastoreWithClasses, text: string): Promise<unknown> => (await ds.Note.query('text = :1', text).first())!.getKey();

describe('restrict(): row-level security judged by the caller\'s session', () => {
  let s: Served;
  let ann: ReturnType<typeof client>;
  let bobNote: unknown;
  let bobOwner: unknown;
  let annOwner: unknown;
  before(async () => {
    s = await serve(rolesJson());
    ann = client(s.app);
    const login = await ann('/rest/$catalog/authentify', 'POST', ['ann']);
    assert.equal(login.status, 200, JSON.stringify(login.body));
    bobNote = await noteKey(s.ds, 'bob secret');
    bobOwner = (await s.ds.Owner.query('name = :1', 'bob').first())!.getKey();
    annOwner = (await s.ds.Owner.query('name = :1', 'ann').first())!.getKey();
  });
  after(() => s.close());

  it('lists only the caller\'s notes, and counts only them', async () => {
    const res = await ann('/rest/Note');
    assert.equal(res.status, 200);
    assert.deepEqual(texts(res.body), ['ann one', 'ann two']);
    assert.equal(res.body.__COUNT, 2);
    assert.equal(await s.ds.Note.all().length, 5); // the server itself sees them all
  });

  it('answers 404 for another owner\'s note by key', async () => {
    const res = await ann(`/rest/Note(${bobNote})`);
    assert.equal(res.status, 404);
    assert.equal(res.body.__ERROR[0].errCode, 1542);
  });

  it('filters the notes reached through a relation: path, $expand and $attributes', async () => {
    const path = await ann(`/rest/Owner(${bobOwner})/notes`);
    assert.equal(path.status, 200);
    assert.deepEqual(path.body.__ENTITIES, []);
    const own = await ann(`/rest/Owner(${annOwner})/notes`);
    assert.deepEqual(texts(own.body), ['ann one', 'ann two']);
    for (const option of ['$expand=notes', '$attributes=name,notes.*']) {
      const res = await ann(`/rest/Owner?${option}`);
      assert.equal(res.status, 200, option);
      const seen = (res.body.__ENTITIES as { notes: any }[]).flatMap((o) => o.notes.__ENTITIES.map((n: { text: string }) => n.text)).sort();
      assert.deepEqual(seen, ['ann one', 'ann two'], option);
    }
  });

  it('counts only the caller\'s notes in a 1→N relation read with $asArray=true', async () => {
    const res = await ann('/rest/Owner?$asArray=true&$orderby=name');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.map((o: any) => [o.name, o.notes]), [['ann', { __COUNT: 2 }], ['bob', { __COUNT: 0 }]]);
  });

  it('does not find an owner by a hidden note through the relation', async () => {
    const hidden = await ann('/rest/Owner?$filter="notes.text = \'bob secret\'"');
    assert.equal(hidden.status, 200);
    assert.equal(hidden.body.__COUNT, 0);
    const visible = await ann('/rest/Owner?$filter="notes.text = \'ann one\'"');
    assert.deepEqual((visible.body.__ENTITIES as { name: string }[]).map((o) => o.name), ['ann']);
  });

  it('counts only the caller\'s notes with $compute', async () => {
    const res = await ann('/rest/Note/text?$compute=count');
    assert.equal(res.status, 200);
    assert.equal(res.body, 2);
    const all = await ann('/rest/Note/ID?$compute=$all');
    assert.equal(all.body.ID.count, 2);
  });

  it('runs a calculated attribute\'s code as the caller of the read: session() is hers', async () => {
    const res = await ann('/rest/Note?$attributes=text,writtenBy');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual([...new Set(res.body.__ENTITIES.map((e: { writtenBy: string }) => e.writtenBy))], ['me']);
  });

  it('judges a function\'s ORDA calls by its caller: allNotes() answers only hers', async () => {
    const res = await ann('/rest/$catalog/allNotes', 'POST', []);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(texts(res.body), ['ann one', 'ann two']);
    assert.equal(res.body.__COUNT, 2);
  });

  it('refuses to update or delete another owner\'s note (404) and changes nothing', async () => {
    const stamp = (await s.ds.Note.get(bobNote as number))!.getStamp();
    const update = await ann('/rest/Note?$method=update', 'POST', { __KEY: bobNote, __STAMP: stamp, text: 'hacked' });
    assert.equal(update.status, 404, JSON.stringify(update.body));
    const del = await ann(`/rest/Note(${bobNote})?$method=delete`, 'POST');
    assert.equal(del.status, 404, JSON.stringify(del.body));
    const note = await s.ds.Note.get(bobNote as number);
    assert.equal(note?.get('text'), 'bob secret');
    assert.equal(await s.ds.Note.all().length, 5);
  });

  it('answers another session\'s entity set 1802, as if it did not exist (a set is its maker\'s)', async () => {
    const bob = client(s.app);
    await bob('/rest/$catalog/authentify', 'POST', ['bob']);
    const set = (await bob('/rest/Note?$method=entityset')).body.__ENTITYSET as string;
    assert.equal((await bob(set)).body.__COUNT, 3);
    for (const asked of [set.replace('/Note/', '/Note/ID/') + '?$compute=count', set]) {
      const res = await ann(asked);
      assert.equal(res.status, 404, JSON.stringify(res.body));
      assert.equal(res.body.__ERROR[0].errCode, 1802);
    }
    assert.equal((await bob(set)).body.__COUNT, 3);
  });

  it('shows a guest no note at all, and bob only his', async () => {
    const guest = client(s.app);
    const none = await guest('/rest/Note');
    assert.equal(none.status, 401); // the datastore is read by `reader` only
    const bob = client(s.app);
    await bob('/rest/$catalog/authentify', 'POST', ['bob']);
    assert.deepEqual(texts((await bob('/rest/Note')).body), ['bob other', 'bob secret', 'bob third']);
  });
  it('runs an entity event of a REST save as its caller: the note is given its author\'s name, and only she sees it', async () => {
    const made = await ann('/rest/Note?$method=update', 'POST', { text: 'ann three' });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    try {
      assert.equal(made.body.ownerName, 'ann');
      assert.equal((await ann('/rest/Note')).body.__COUNT, 3);
      const bob = client(s.app);
      await bob('/rest/$catalog/authentify', 'POST', ['bob']);
      assert.equal((await bob(`/rest/Note(${String(made.body.__KEY)})`)).status, 404);
    } finally {
      await (await s.ds.Note.get(made.body.__KEY))?.drop();
    }
  });
});

describe('forceLogin: a guest reads the catalog and logs in, nothing else unless granted to guest', () => {
  let s: Served;
  before(async () => {
    s = await serve(rolesJson({ forceLogin: true }, [{ applyTo: 'Owner', type: 'dataclass', read: ['guest'] }]));
  });
  after(() => s.close());

  it('lets a guest read the catalog and call authentify, refuses data and $info (401), allows what guest is granted', async () => {
    const guest = client(s.app);
    const catalog = await guest('/rest/$catalog');
    assert.equal(catalog.status, 200);
    assert.equal('singletons' in catalog.body, false, 'no singletons section in a project without one');
    const notes = await guest('/rest/Note');
    assert.equal(notes.status, 401);
    assert.ok([7040, 7043].includes(notes.body.__ERROR[0].errCode), JSON.stringify(notes.body));
    const info = await guest('/rest/$info');
    assert.equal(info.status, 401);
    assert.equal(info.body.__ERROR[0].errCode, 7043);
    const allNotes = await guest('/rest/$catalog/allNotes', 'POST', []);
    assert.equal(allNotes.status, 401, JSON.stringify(allNotes.body)); // ds execute names guest, but only authentify is open in force-login mode
    const owners = await guest('/rest/Owner');
    assert.equal(owners.status, 200, JSON.stringify(owners.body));
    assert.deepEqual((owners.body.__ENTITIES as { name: string }[]).map((o) => o.name).sort(), ['ann', 'bob']);
    const through = await guest('/rest/Owner?$filter="notes.text = \'ann one\'"');
    assert.equal(through.status, 401); // no query through a dataclass it may not read
    assert.equal(through.body.__ERROR[0].errCode, 7040);
    const login = await guest('/rest/$catalog/authentify', 'POST', ['ann']);
    assert.equal(login.status, 200, JSON.stringify(login.body));
    const after = await guest('/rest/Note');
    assert.equal(after.status, 200);
    assert.deepEqual(texts(after.body), ['ann one', 'ann two']);
    assert.equal((await guest('/rest/$info')).status, 200);
  });

  it('leaves a relation to a dataclass the session may not read out of an $asArray answer, uncounted', async () => {
    const guest = client(s.app);
    const res = await guest('/rest/Owner?$asArray=true');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.length, 2);
    for (const o of res.body) assert.deepEqual(Object.keys(o).sort(), ['ID', '__KEY', '__STAMP', 'name']);
    const listed = await guest('/rest/Owner?$asArray=true&$attributes=name,notes');
    // named, it is left out as 4D leaves out what a session may not read
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    assert.deepEqual(listed.body.map((o: any) => Object.keys(o).sort()), [['__KEY', '__STAMP', 'name'], ['__KEY', '__STAMP', 'name']]);
  });

  it('refuses a guest the path of a relation to a dataclass it may not read (401), instead of answering the owner', async () => {
    const guest = client(s.app);
    for (const url of ['/rest/Owner(1)/notes', '/rest/Owner(1)/notes?$method=subentityset']) {
      const res = await guest(url);
      assert.equal(res.status, 401, `${url}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.__ERROR[0].errCode, 7040, url);
    }
  });
});

describe('promote: the privileges a function is given reach its this', () => {
  let s: Served;
  before(async () => {
    s = await serve(JSON.stringify({
      privileges: [{ privilege: 'reader', includes: [] }, { privilege: 'writer', includes: [] }],
      roles: [{ role: 'User', privileges: ['reader'] }],
      permissions: {
        allowed: [
          { applyTo: 'ds', type: 'datastore', read: ['reader'], create: ['writer'], update: ['writer'], drop: ['writer'], execute: ['guest'] },
          { applyTo: 'Note.shout', type: 'method', promote: ['writer'] },
        ],
      },
    }));
  });
  after(() => s.close());

  it('lets a reader save a note through an entity function that promotes writer, and not by an update of its own (403)', async () => {
    const ann = client(s.app);
    assert.equal((await ann('/rest/$catalog/authentify', 'POST', ['ann'])).status, 200);
    const key = String(await noteKey(s.ds, 'ann one'));
    const note = await ann(`/rest/Note(${key})`);
    const update = await ann('/rest/Note?$method=update', 'POST', { __KEY: key, __STAMP: note.body.__STAMP, text: 'by hand' });
    assert.equal(update.status, 403, JSON.stringify(update.body));
    const shout = await ann(`/rest/Note(${key})/shout`, 'POST', []);
    assert.equal(shout.status, 200, JSON.stringify(shout.body));
    assert.equal(shout.body.result, 'ANN ONE');
    assert.equal((await s.ds.Note.get(key))!.get('text'), 'ANN ONE');
    const again = await ann('/rest/Note?$method=update', 'POST', { __KEY: key, __STAMP: (await ann(`/rest/Note(${key})`)).body.__STAMP, text: 'by hand' });
    assert.equal(again.status, 403, 'the promoted privilege left with the function');
  });
});

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
