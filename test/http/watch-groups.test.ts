// Watch streams in groups (rest/run/watch/watch-groups.ts), against what a review found: a
// group keeps its selection's keys only where an entity can enter it by a change of its own (not
// through a relation, nor under a restrict()); the keys it keeps stay within their bounds, also
// when groups read them at once; one client's filter that cannot be matched resets only its own
// streams; guests whose restrict() differs never share a group. On the engine the run names.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { buildServer } from '../../src/http/server.js';
import { openProject } from '../../src/project/open.js';
import { WatchHub } from '../../src/rest/run/watch/watch-groups.js';
import { tempDir, TEST_ENGINE, testDatabase } from '../support/helpers.js';
import { openStream } from '../support/sse-client.js';
import { writeLiveProject } from '../support/live-project.js';

const MODEL = {
  name: 'Review',
  dataClasses: [
    { name: 'Category', attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'name', type: 'string' }] },
    {
      name: 'Item', trackChanges: true, attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'name', type: 'string' }, { name: 'price', type: 'number' },
        { name: 'category', kind: 'relatedEntity', type: 'Category', foreignKey: 'categoryID' },
      ],
    },
    { name: 'Owned', trackChanges: true, attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'owner', type: 'string' }, { name: 'secret', type: 'string' }] },
  ],
};
const ROLES = {
  privileges: [], roles: [],
  permissions: { allowed: [{ applyTo: 'ds', type: 'datastore', read: ['guest'], create: ['guest'], update: ['guest'], drop: ['guest'], execute: ['guest'] }] },
  restrictedByDefault: false, forceLogin: false,
};

// the server's hub and the groups it makes, caught as they join
let hub: WatchHub | undefined;
const groups: any[] = [];
const realJoin = WatchHub.prototype.join;
WatchHub.prototype.join = async function (this: WatchHub, ...args: Parameters<WatchHub['join']>) {
  const r = await realJoin.apply(this, args);
  hub = r.group.hub;
  if (!groups.includes(r.group)) groups.push(r.group);
  return r;
};

const q = (filter: string, params?: unknown[]) => `$filter=${encodeURIComponent(`"${filter}"`)}${params ? `&$params=${encodeURIComponent(`'${JSON.stringify(params)}'`)}` : ''}`;

/** A project over MODEL on its own server; `restricted`: Owned has a restrict() by session().id (a guest's cart, say). */
function project(restricted: boolean) {
  const tmp = tempDir();
  const p = { ds: undefined as unknown as DatastoreWithClasses, app: undefined as unknown as FastifyInstance, base: '' };
  before(async () => {
    writeLiveProject(tmp.dir, MODEL, ROLES, {
      ...(restricted ? { Owned: `import { DataClass, session } from 'dataset-rest';
export default class Owned extends DataClass {
  restrict() {
    return this.query('owner = :1', session().id);
  }
}
` } : {}),
      DataStore: `import { Datastore, exposed, session } from 'dataset-rest';
export default class DataStore extends Datastore {
  @exposed
  whoami() {
    return session().id;
  }
}
`,
    });
    const db = await testDatabase(join(tmp.dir, restricted ? 'restricted.sqlite' : 'data.sqlite'));
    p.ds = await openProject(tmp.dir, { db });
    p.app = await buildServer(p.ds, { logLevel: 'silent' });
    p.base = await p.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    // (fetch's abort of a stream leaves undici's socket open: the close would wait for it)
    p.app?.server.closeAllConnections();
    await p.app?.close();
    await p.ds?.close();
    tmp.remove();
  });
  return p;
}

/** A new Item with these values, saved. */
async function created(ds: DatastoreWithClasses, values: Record<string, unknown>) {
  const e = ds.dataClass('Item')!.new();
  for (const [k, v] of Object.entries(values)) e.set(k, v);
  await e.save();
  return e;
}

describe(`watch streams in groups: what a group keeps (${TEST_ENGINE})`, () => {
  const p = project(false);
  const newItem = (values: Record<string, unknown>) => created(p.ds, values);

  it('sends remove for every change it does not show when an entity can enter the filter unseen (through a relation)', async () => {
    const cats = p.ds.dataClass('Category')!;
    const a = cats.new();
    a.set('name', 'cold a');
    await a.save();
    const b = cats.new();
    b.set('name', 'cold b');
    await b.save();
    const x = await newItem({ name: 'x', price: 1, category: a });
    const y = await newItem({ name: 'y', price: 1, category: a });
    const s = await openStream(p.base, `/rest/Item?${q("category.name = 'hot'")}&$method=watch`);
    try {
      await s.until(1);
      // a Category write: x and y are now in the filter (a read of the URL shows them), no Item event
      a.set('name', 'hot');
      await a.save();
      const read = (await (await fetch(`${p.base}/rest/Item?${q("category.name = 'hot'")}`)).json()) as { __ENTITIES: { __KEY: string }[] };
      assert.deepEqual(read.__ENTITIES.map((e) => e.__KEY).sort(), [String(x.getKey()), String(y.getKey())].sort(), 'the client holds x and y');
      // x leaves the filter, y is dropped; then a sentinel the stream shows
      x.set('category', b);
      await x.save();
      await y.drop();
      const z = await newItem({ name: 'z', price: 1, category: a });
      const events = await s.until(2);
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(s.events.slice(1).map((e) => [e.event, e.data.__KEY]), [
        ['remove', String(x.getKey())],
        ['remove', String(y.getKey())],
        ['entity', String(z.getKey())],
      ], `the client keeps x and a dropped y: ${JSON.stringify(events)}`);
    } finally {
      await s.close();
    }
  });

  it("keeps no more keys than the server's bound: past it, a group lets its own go", async () => {
    const marker = `grow-${Date.now()}`;
    const s = await openStream(p.base, `/rest/Item?${q('name = :1', [marker])}&$method=watch`);
    try {
      await s.until(1);
      const g = groups.at(-1);
      assert.equal(g.members?.size, 0, 'members kept (none yet)');
      // as though the other groups held all the server keeps
      const was = hub!.membersKept;
      hub!.membersKept = 500_000;
      for (let i = 0; i < 5; i++) await newItem({ name: marker, price: i });
      await s.until(6);
      const kept = hub!.membersKept;
      hub!.membersKept = was + (kept - 500_000);
      assert.ok(kept <= 500_000, `membersKept ${kept} > MAX_MEMBERS_IN_ALL (the group holds ${g.members?.size})`);
    } finally {
      await s.close();
    }
  });

  it('shares the room left between groups that read their keys at once', async () => {
    const marker = `race-${Date.now()}`;
    for (let i = 0; i < 6; i++) await newItem({ name: marker, price: i });
    const s1 = await openStream(p.base, `/rest/Item?${q('name = :1 and price < 3', [marker])}&$method=watch`);
    const s2 = await openStream(p.base, `/rest/Item?${q('name = :1 and price >= 3', [marker])}&$method=watch`);
    try {
      await Promise.all([s1.until(1), s2.until(1)]);
      const [g1, g2] = groups.slice(-2);
      // (as each joined: forget what they read)
      for (const g of [g1, g2]) {
        hub!.membersKept -= g.members.size;
        g.members = undefined;
      }
      const was = hub!.membersKept;
      hub!.membersKept = 500_000 - 3;
      await Promise.all([g1.readMembers(), g2.readMembers()]);
      const kept = hub!.membersKept;
      hub!.membersKept = was + (kept - (500_000 - 3));
      assert.ok(kept <= 500_000, `membersKept ${kept} > MAX_MEMBERS_IN_ALL: each read took the same room`);
    } finally {
      await Promise.all([s1.close(), s2.close()]);
    }
  });

});

describe(`watch streams in groups: whom a group is for, and what one client's filter costs the others (${TEST_ENGINE})`, () => {
  const p = project(true);
  const newItem = (values: Record<string, unknown>) => created(p.ds, values);

  it("resets only the streams of a filter that cannot be matched (long IN lists past the engine's parameters), not the others'", async () => {
    const victim = await openStream(p.base, '/rest/Item?$method=watch', { 'x-forwarded-for': '10.0.0.1' });
    // about 7,000 values each: a statement with them all passes the engine's parameters (SQLite 32,766; PostgreSQL 65,535)
    const n = TEST_ENGINE === 'postgres' ? 10 : 5;
    const attackers = await Promise.all(Array.from({ length: n }, (_, i) => openStream(p.base, `/rest/Item?$filter=${encodeURIComponent('"ID in :1"')}&$params='[[${i + 100000},${Array(7000).fill(1).join(',')}]]'&$method=watch`)));
    try {
      for (const a of attackers) assert.equal(a.res.status, 200, 'each is admitted alone');
      await Promise.all([victim.until(1), ...attackers.map((a) => a.until(1))]);
      const e = await newItem({ name: 'anyone', price: 1 });
      const events = await victim.until(2);
      assert.deepEqual([events[1].event, events[1].data.__KEY], ['entity', String(e.getKey())], `the victim: ${JSON.stringify(events[1])}`);
    } finally {
      await Promise.all([victim.close(), ...attackers.map((a) => a.close())]);
    }
  });

  it("never tells a guest another guest's rows that restrict() (by session().id) hides from it", async () => {
    const guest = async () => {
      const res = await fetch(`${p.base}/rest/$catalog/whoami`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]' });
      const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
      const again = await fetch(`${p.base}/rest/$catalog/whoami`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: '[]' });
      return { cookie, id: ((await again.json()) as { result: string }).result };
    };
    const ann = await guest();
    const bob = await guest();
    assert.notEqual(ann.id, bob.id);
    const sa = await openStream(p.base, '/rest/Owned?$method=watch', { cookie: ann.cookie });
    const sb = await openStream(p.base, '/rest/Owned?$method=watch', { cookie: bob.cookie });
    try {
      await Promise.all([sa.until(1), sb.until(1)]);
      const row = p.ds.dataClass('Owned')!.new();
      row.set('owner', ann.id);
      row.set('secret', "ann's");
      await row.save();
      await sa.until(2);
      assert.equal(sa.events[1].data.secret, "ann's", 'ann is told her row');
      await new Promise((r) => setTimeout(r, 300));
      const leaked = sb.events.filter((e) => e.event === 'entity');
      assert.deepEqual(leaked, [], `bob is told ann's row: ${JSON.stringify(leaked)}`);
    } finally {
      await Promise.all([sa.close(), sb.close()]);
    }
  });
});
