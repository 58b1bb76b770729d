// Sessions and permissions on small throw-away projects (issue 13): row-level security through a
// dataclass class's restrict() (reads, relations, queries through them, $compute, functions,
// updates and drops), force-login mode, and promote() reaching a function's this. The project
// and its server: roles-projects-shared.ts; a broken roles.json, --roles none and the rest:
// roles-projects-config.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client, noteKey, rolesJson, serve, texts, type Served } from './roles-projects-shared.js';

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
