// The entity-set rule as a hostile client meets it (issue 35 moved it into the core,
// datastore/sets/session-sets.ts): another session's set is 1802, as if it did not exist, on every
// path that names a set — a page, $compute, release (one, or a list), $method=delete on the set,
// $logicOperator with it as the other collection, a selection parameter of a function, an export
// — and it is left as it was; $info lists it not. An administrator reads every set, and under a
// row filter (restrict()) a set shows her only the members she may see.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { client, rolesJson, serve, texts, type Served } from './roles-projects-shared.js';

const GONE = 1802;

function refused(res: { status: number; body: any }, what: string): void {
  assert.equal(res.status, 404, `${what}: ${JSON.stringify(res.body)}`);
  assert.equal(res.body.__ERROR[0].errCode, GONE, what);
}

describe('another session\'s entity set, as a hostile client asks for it', () => {
  let s: Served;
  let ann: ReturnType<typeof client>;
  let bob: ReturnType<typeof client>;
  let bobSet: string;
  let bobId: string;
  let annId: string;
  before(async () => {
    s = await serve(rolesJson());
    ann = client(s.app);
    bob = client(s.app);
    assert.equal((await ann('/rest/$catalog/authentify', 'POST', ['ann'])).status, 200);
    assert.equal((await bob('/rest/$catalog/authentify', 'POST', ['bob'])).status, 200);
    bobSet = (await bob('/rest/Note?$method=entityset')).body.__ENTITYSET as string;
    bobId = bobSet.split('/').pop() as string;
    annId = ((await ann('/rest/Note?$method=entityset')).body.__ENTITYSET as string).split('/').pop() as string;
  });
  after(() => s.close());

  it('is 1802 on every path that names it, and stays whole', async () => {
    refused(await ann(bobSet), 'a page');
    refused(await ann(`${bobSet}?$filter="ID > 0"&$orderby=text`), 'a page filtered and sorted');
    refused(await ann(`${bobSet}?$clean=true&$method=entityset`), 'cleaned, stored anew');
    refused(await ann(`${bobSet}?$savedfilter="ID > 0"`), 'a page with its saved filter (no rebuild of a live set)');
    refused(await ann(`/rest/Note/ID/$entityset/${bobId}?$compute=count`), '$compute');
    refused(await ann(`${bobSet}?$format=csv`), 'an export');
    refused(await ann(`${bobSet}?$method=entityset`), 'stored anew');
    refused(await ann(`/rest/Note/$entityset/${annId}?$logicOperator=OR&$otherCollection=${bobId}`), '$logicOperator OR, the other set');
    refused(await ann(`/rest/Note/$entityset/${annId}?$logicOperator=INTERSECT&$otherCollection=${bobId}`), '$logicOperator INTERSECT, the other set');
    refused(await ann(`/rest/Note/$entityset/${bobId}?$logicOperator=OR&$otherCollection=${annId}`), '$logicOperator, the first set');
    refused(await ann('/rest/$catalog/allNotes', 'POST', [{ __DATASET: bobId, __ENTITIES: true }]), 'a selection parameter');
    refused(await ann(`${bobSet}?$method=release`), 'release');
    refused(await ann('/rest/$entityset/$release', 'POST', [bobId]), 'release of a list');
    refused(await ann(`${bobSet}?$method=delete`, 'POST'), '$method=delete on the set');
    const info = await ann('/rest/$info');
    assert.ok(!(info.body.entitySet as { id: string }[]).some((e) => e.id === bobId), 'listed in another session\'s $info');
    // bob's set, and his notes, as they were
    const mine = await bob(bobSet);
    assert.equal(mine.status, 200, JSON.stringify(mine.body));
    assert.deepEqual(texts(mine.body), ['bob other', 'bob secret', 'bob third']);
    assert.equal(await s.ds.Note.all().length, 5);
  });
});

describe('an administrator reads every set, seeing of it only what restrict() lets her', () => {
  let s: Served;
  let ann: ReturnType<typeof client>;
  let bob: ReturnType<typeof client>;
  let bobId: string;
  before(async () => {
    // the User role holds the administrator privilege too: every session of it reads every set
    const roles = JSON.parse(rolesJson()) as { privileges: { privilege: string; includes: string[] }[]; roles: { role: string; privileges: string[] }[] };
    roles.privileges.push({ privilege: 'admin', includes: [] });
    roles.roles[0].privileges.push('admin');
    s = await serve(JSON.stringify(roles));
    ann = client(s.app);
    bob = client(s.app);
    assert.equal((await ann('/rest/$catalog/authentify', 'POST', ['ann'])).status, 200);
    assert.equal((await bob('/rest/$catalog/authentify', 'POST', ['bob'])).status, 200);
    bobId = ((await bob('/rest/Note?$method=entityset')).body.__ENTITYSET as string).split('/').pop() as string;
  });
  after(() => s.close());

  it('finds bob\'s set, and shows her none of his notes in it', async () => {
    const page = await ann(`/rest/Note/$entityset/${bobId}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.deepEqual(texts(page.body), []);
    assert.equal(page.body.__COUNT, 0);
    const count = await ann(`/rest/Note/ID/$entityset/${bobId}?$compute=count`);
    assert.equal(count.status, 200, JSON.stringify(count.body));
    assert.equal(count.body, 0);
    const csv = await ann(`/rest/Note/$entityset/${bobId}?$format=csv&$attributes=text`);
    assert.equal(csv.status, 200);
    assert.doesNotMatch(String(csv.body), /bob/);
    const info = await ann('/rest/$info');
    assert.ok((info.body.entitySet as { id: string }[]).some((e) => e.id === bobId), 'an administrator\'s $info lists every set');
  });
});
