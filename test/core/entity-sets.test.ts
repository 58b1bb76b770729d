// Entity sets: the store (packed keys, lifetimes on an injected clock from an expiry queue, a bound
// on memory counting every set) and the REST side ($method=entityset, reading pages, release,
// $info, a set reached by the session that made it only).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { join } from 'node:path';
import { SET_RECORD_BYTES } from '../../src/config/limits.js';
import { MemoryEntitySetStore, type StoredSet } from '../../src/datastore/sets/entity-set-store.js';
import { newSetId } from '../../src/datastore/sets/entity-sets.js';
import { ExpiryQueue } from '../../src/util/expiry-queue.js';
import { DEMO_DIR, openDemo, type DemoFixture } from '../support/helpers.js';

const set = (id: string, size: number, refreshed: number, timeoutMs = 1000): StoredSet =>
  ({ id, dataClass: 'X', keys: Float64Array.from({ length: size }, (_, i) => i + 1), sorted: false, timeoutMs, refreshed });

describe('the in-memory entity set store', () => {
  it('keeps integer keys in 8 bytes a member', () => {
    const s = set(newSetId(), 1000, 0);
    assert.ok(s.keys instanceof Float64Array);
    assert.equal((s.keys as Float64Array).byteLength / s.keys.length, 8);
    assert.match(newSetId(), /^[0-9A-F]{32}$/);
  });

  it('forgets a set once its lifetime has passed without use, and every use starts it again', async () => {
    let now = 0;
    const store = new MemoryEntitySetStore({ now: () => now });
    await store.put(set('A', 3, now, 1000));
    now = 900;
    assert.ok(await store.get('A')); // used: lives until 1900
    now = 1800;
    assert.ok(await store.get('A'));
    now = 2801;
    assert.equal(await store.get('A'), undefined);
    assert.deepEqual(await store.list(), []);
  });

  it('drops the least recently used sets first when their memory goes past the bound', async () => {
    // three 4-member sets of integer keys take 3 × (16 + record) bytes: two fit
    const store = new MemoryEntitySetStore({ maxBytes: 2 * (16 + SET_RECORD_BYTES), now: () => 0, sweepEveryMs: 0 });
    await store.put(set('A', 4, 0, 1e9));
    await store.put(set('B', 4, 0, 1e9));
    await store.get('A'); // A is now more recent than B
    await store.put(set('C', 4, 0, 1e9));
    assert.deepEqual((await store.list()).map((s) => s.id).sort(), ['A', 'C']);
    assert.equal(await store.release('B'), false);
    assert.equal(await store.release('A'), true);
  });

  it('keeps members packed and accounts their bytes: 4 an integer key, 8 another number, 16 a uuid, UTF-8 and 4 other text', async () => {
    const store = new MemoryEntitySetStore({ sweepEveryMs: 0 });
    const uuids = Array.from({ length: 1000 }, (_, i) => i.toString(16).toUpperCase().padStart(32, 'A'));
    const texts = ['é', 'abc', '', 'Zürich 東京'];
    const cases: [string, Float64Array | string[], number][] = [
      ['int', Float64Array.from({ length: 1000 }, (_, i) => i * 7 - 3000), 4000],
      ['float', Float64Array.from([1.5, 2, -0.25]), 24],
      ['uuid', uuids, 16_000],
      ['text', texts, Buffer.byteLength(texts.join('')) + 4 * texts.length],
    ];
    for (const [id, keys, bytes] of cases) {
      const before = store.bytes;
      assert.equal(await store.put({ id, dataClass: 'X', keys, sorted: false, timeoutMs: 1e9, refreshed: 0 }), true);
      assert.equal(store.bytes - before, bytes + SET_RECORD_BYTES, id);
      const back = await store.get(id);
      assert.deepEqual(back?.keys instanceof Float64Array ? Array.from(back.keys) : back?.keys, keys instanceof Float64Array ? Array.from(keys) : keys, id);
      const page = await store.slice(id, 1, 3);
      assert.deepEqual(page?.keys instanceof Float64Array ? Array.from(page.keys) : page?.keys, Array.from(keys as ArrayLike<unknown>).slice(1, 3), id);
    }
    for (const [id] of cases) await store.release(id);
    assert.equal(store.bytes, 0);
  });

  it('counts every set toward the memory bound, empty ones too (each its record)', async () => {
    const store = new MemoryEntitySetStore({ maxBytes: 3 * SET_RECORD_BYTES, now: () => 0, sweepEveryMs: 0 });
    for (const id of ['A', 'B', 'C', 'D']) await store.put(set(id, 0, 0, 1e9));
    assert.deepEqual((await store.list()).map((s) => s.id), ['B', 'C', 'D'], 'the oldest empty set went for the fourth');
    assert.equal(store.bytes, 3 * SET_RECORD_BYTES);
  });

  it('refuses a set larger than the memory bound alone: 400, LIMIT_EXCEEDED naming --max-set-memory, keeping the others', async () => {
    const store = new MemoryEntitySetStore({ maxBytes: 100 * 4 + SET_RECORD_BYTES, now: () => 0, sweepEveryMs: 0 });
    await store.put(set('A', 100, 0, 1e9));
    await assert.rejects(store.put(set('B', 101, 0, 1e9)), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'LIMIT_EXCEEDED');
      assert.match(e.message, /--max-set-memory/);
      assert.match(e.message, /101 members/);
      return true;
    });
    assert.deepEqual((await store.list()).map((s) => s.id), ['A']);
  });

  it('expires sets from its queue, each with its own lifetime, a use moving it back; owned() counts live sets only', async () => {
    let now = 0;
    const store = new MemoryEntitySetStore({ now: () => now, sweepEveryMs: 0 });
    for (const [id, timeout] of [['A', 1000], ['B', 500], ['C', 2000]] as const) await store.put({ ...set(id, 2, 0, timeout), owner: 'S' });
    assert.equal(await store.owned('S'), 3);
    now = 600;
    assert.equal(await store.get('B'), undefined);
    assert.ok(await store.get('A')); // now lives until 1600
    now = 1500;
    assert.deepEqual((await store.list()).map((s) => s.id).sort(), ['A', 'C']);
    now = 1700;
    assert.deepEqual((await store.list('S')).map((s) => s.id), ['C']);
    assert.equal(await store.owned('S'), 1);
    now = 2000;
    assert.equal(await store.owned('S'), 0);
    assert.equal(store.bytes, 0);
  });

  it('keeps a set for the session that made it: another reads, pages, releases or replaces it as if it did not exist', async () => {
    const store = new MemoryEntitySetStore({ now: () => 0, sweepEveryMs: 0 });
    await store.put({ ...set('A', 3, 0, 1e9), owner: 'S1' });
    assert.equal(await store.get('A', 'S2'), undefined);
    assert.equal(await store.slice('A', 0, 2, 'S2'), undefined);
    assert.equal(await store.release('A', 'S2'), false);
    assert.equal(await store.put({ ...set('A', 1, 0, 1e9), owner: 'S2' }), false, 'its id is not another\'s to take');
    assert.equal((await store.get('A', 'S1'))?.keys.length, 3);
    assert.ok(await store.get('A'), 'a reader of every set (an administrator) reaches it');
    assert.deepEqual(await store.list('S2'), []);
    assert.equal(await store.release('A', 'S1'), true);
  });
});

describe('the expiry queue', () => {
  it('gives the expired ids soonest first, after any number of moves and removals', () => {
    const q = new ExpiryQueue();
    const at = new Map<string, number>();
    let seed = 7;
    const rand = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let i = 0; i < 2000; i++) {
      const id = `s${Math.floor(rand() * 500)}`;
      if (rand() < 0.2) {
        assert.equal(q.delete(id), at.delete(id));
      } else {
        const t = Math.floor(rand() * 10_000);
        q.set(id, t);
        at.set(id, t);
      }
    }
    assert.equal(q.size, at.size);
    const out = [...q.expired(5000)];
    const times = out.map((id) => at.get(id) as number);
    assert.deepEqual(times, [...times].sort((a, b) => a - b));
    assert.deepEqual(new Set(out), new Set([...at].filter(([, t]) => t <= 5000).map(([id]) => id)));
    assert.equal(q.size, at.size - out.length);
  });
});

describe('entity sets over HTTP', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('makes sets for more requests at once than the pool has connections, each holding one snapshot at most (no request waits for a second one)', async () => {
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 12 }, () => demo.request('/rest/Employee?$method=entityset&$top=1')));
    assert.deepEqual(answers.map((a) => a.status), answers.map(() => 200), JSON.stringify(answers.find((a) => a.status !== 200)?.body));
    assert.ok(Date.now() - started < 8000, `${Date.now() - started} ms`);
    for (const a of answers) await demo.request(`${a.body.__ENTITYSET}?$method=release`);
  });

  it('stores the whole selection with $method=entityset, answering its first page with __ENTITYSET first', async () => {
    const { status, body } = await demo.request('/rest/Employee?$filter=%22salary%20%3E%2050000%22&$orderby=salary%20desc&$method=entityset&$top=5&$attributes=salary');
    assert.equal(status, 200);
    assert.equal(Object.keys(body)[0], '__ENTITYSET');
    assert.match(body.__ENTITYSET, /^\/rest\/Employee\/\$entityset\/[0-9A-F]{32}$/);
    const count = await demo.ds.Employee.query('salary > 50000').length;
    assert.equal(body.__COUNT, count);
    assert.equal(body.__SENT, 5);
    // $skip and $top applied to the answer only: later pages come from the stored set, in its order
    const page2 = await demo.request(`${body.__ENTITYSET}?$skip=5&$top=5&$attributes=salary`);
    assert.equal(page2.body.__COUNT, count);
    assert.equal(page2.body.__FIRST, 5);
    const salaries = [...body.__ENTITIES, ...page2.body.__ENTITIES].map((e: { salary: number }) => e.salary);
    assert.deepEqual(salaries, [...salaries].sort((a, b) => b - a));
  });

  it('serves many set requests at once, more than the database connections, without one waiting for a connection it cannot get', async () => {
    const made = await demo.request('/rest/City?$method=entityset&$top=1');
    const started = Date.now();
    const answers = await Promise.all([
      ...Array.from({ length: 15 }, () => demo.request(`${made.body.__ENTITYSET}?$top=1`)),
      ...Array.from({ length: 15 }, () => demo.request('/rest/City?$method=entityset&$top=1')),
    ]);
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [200], JSON.stringify(answers.find((a) => a.status !== 200)?.body));
    assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
  });

  it('shows current values and reads a dropped member as {"__STAMP": 0}, still counted', async () => {
    const created = await demo.request('/rest/City?$method=entityset&$orderby=ID');
    const first = created.body.__ENTITIES[0];
    const city = await demo.ds.City.get(Number(first.__KEY));
    city!.set('name', 'Renamed');
    await city!.save();
    const victim = await demo.ds.City.get(Number(created.body.__ENTITIES[1].__KEY));
    await victim!.drop();
    const again = await demo.request(created.body.__ENTITYSET);
    assert.equal(again.body.__COUNT, created.body.__COUNT);
    assert.equal(again.body.__ENTITIES[0].name, 'Renamed');
    assert.deepEqual(again.body.__ENTITIES[1], { __STAMP: 0 });
  });

  it('stores a relation followed from an entity, and a copy of a set', async () => {
    const staff = await demo.request('/rest/Company(1)/staff?$expand=staff&$method=entityset');
    assert.match(staff.body.__ENTITYSET, /^\/rest\/Employee\/\$entityset\//);
    const copy = await demo.request(`${staff.body.__ENTITYSET}?$method=entityset`);
    assert.notEqual(copy.body.__ENTITYSET, staff.body.__ENTITYSET);
    assert.equal(copy.body.__COUNT, staff.body.__COUNT);
  });

  it('lists the sets in $info, and releases them (GET ?$method=release and POST /rest/$entityset/$release)', async () => {
    const a = (await demo.request('/rest/City?$method=entityset&$timeout=600')).body.__ENTITYSET as string;
    const b = (await demo.request('/rest/Company?$method=entityset')).body.__ENTITYSET as string;
    const idOf = (uri: string) => uri.split('/').pop() as string;
    const infoBody = (await demo.request('/rest/$info')).body;
    const entry = infoBody.entitySet.find((e: { id: string }) => e.id === idOf(a));
    assert.equal(entry.dataClass, 'City');
    assert.equal(entry.sorted, false);
    assert.equal(Date.parse(entry.expires) - Date.parse(entry.refreshed), 600_000);
    assert.equal(infoBody.entitySetCount, infoBody.entitySet.length);
    // a mistake in the request keeps the set
    assert.equal((await demo.request(`${a}?$method=release&$attributes=nope`)).body.__ERROR[0].errCode, 1500);
    assert.equal((await demo.request(a)).status, 200);
    assert.deepEqual((await demo.request(`${a}?$method=release`)).body, { ok: true });
    const gone = await demo.request(a);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.__ERROR[0].errCode, 1802);
    assert.match(gone.body.__ERROR[0].message, /EntitySet ".*" cannot be found/);
    assert.equal((await demo.request(`${a}?$method=release`)).body.__ERROR[0].errCode, 1802);
    assert.deepEqual((await demo.request('/rest/$entityset/$release', 'POST', [idOf(b)])).body, { ok: true });
    assert.equal((await demo.request('/rest/$entityset/$release', 'POST', [idOf(b)])).status, 404);
  });

  it('refuses a set of another dataclass, a bad $timeout, and $method=entityset on one entity', async () => {
    const city = (await demo.request('/rest/City?$method=entityset')).body.__ENTITYSET as string;
    assert.equal((await demo.request(city.replace('/City/', '/Company/'))).status, 404);
    assert.equal((await demo.request('/rest/City?$method=entityset&$timeout=0')).status, 400);
    assert.equal((await demo.request('/rest/City(1)?$method=entityset')).status, 400);
  });

  it('filters and sorts a set in SQL, keeping the set order without $orderby, storing the result only with $method=entityset', async () => {
    const created = (await demo.request('/rest/Employee?$orderby=salary%20desc&$method=entityset&$top=0')).body;
    const filtered = await demo.request(`${created.__ENTITYSET}?$filter=%22salary%20%3E%2080000%22&$attributes=salary&$top=1000`);
    assert.equal(filtered.status, 200);
    assert.equal(filtered.body.__ENTITYSET, undefined);
    const salaries = filtered.body.__ENTITIES.map((e: { salary: number }) => e.salary);
    assert.equal(filtered.body.__COUNT, await demo.ds.Employee.query('salary > 80000').length);
    assert.deepEqual(salaries, [...salaries].sort((a, b) => b - a)); // the set's order
    const resorted = await demo.request(`${created.__ENTITYSET}?$filter=%22salary%20%3E%2080000%22&$orderby=salary&$attributes=salary&$top=1000&$method=entityset`);
    assert.match(resorted.body.__ENTITYSET, /\$entityset\/[0-9A-F]{32}$/);
    const up = resorted.body.__ENTITIES.map((e: { salary: number }) => e.salary);
    assert.deepEqual(up, [...salaries].sort((a, b) => a - b));
  });

  it('sorts a page of a set by $orderby when $filter gives an order too', async () => {
    const created = (await demo.request('/rest/Employee?$method=entityset&$top=0')).body;
    const page = await demo.request(`${created.__ENTITYSET}?$filter=${encodeURIComponent('"salary > 80000 order by salary desc"')}&$orderby=salary&$attributes=salary&$top=1000`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    const salaries = page.body.__ENTITIES.map((e: { salary: number }) => e.salary);
    assert.ok(salaries.length > 1);
    assert.deepEqual(salaries, [...salaries].sort((a, b) => a - b));
  });

  it('combines two sets with AND, OR, EXCEPT (any case, $operator too) and answers INTERSECT with true or false', async () => {
    const a = (await demo.request('/rest/City?$filter=%22ID%20%3C%3D%2010%22&$method=entityset&$top=0')).body.__ENTITYSET as string;
    const b = (await demo.request('/rest/City?$filter=%22ID%20%3E%3D%208%20and%20ID%20%3C%3D%2015%22&$method=entityset&$top=0')).body.__ENTITYSET as string;
    const c = (await demo.request('/rest/City?$filter=%22ID%20%3E%2018%22&$method=entityset&$top=0')).body.__ENTITYSET as string;
    const id = (uri: string) => uri.split('/').pop();
    const keys = async (url: string) => (await demo.request(url)).body.__ENTITIES.map((e: { __KEY: string }) => Number(e.__KEY));
    const ka: number[] = await keys(a);
    const kb: number[] = await keys(b);
    assert.deepEqual(await keys(`${a}?$logicOperator=AND&$otherCollection=${id(b)}`), ka.filter((k) => kb.includes(k)));
    assert.deepEqual(await keys(`${a}?$logicOperator=or&$otherCollection=${id(b)}`), [...ka, ...kb.filter((k) => !ka.includes(k))]);
    assert.deepEqual(await keys(`${a}?$operator=except&$otherCollection=${id(b)}`), ka.filter((k) => !kb.includes(k)));
    assert.ok(ka.filter((k) => kb.includes(k)).length > 0);
    assert.equal((await demo.request(`${a}?$logicOperator=INTERSECT&$otherCollection=${id(b)}`)).body, true);
    assert.equal((await demo.request(`${a}?$logicOperator=intersect&$otherCollection=${id(c)}`)).body, false);
    const stored = await demo.request(`${a}?$logicOperator=AND&$otherCollection=${id(b)}&$method=entityset`);
    assert.equal((await demo.request(stored.body.__ENTITYSET)).body.__COUNT, 3);
    const company = (await demo.request('/rest/Company?$method=entityset&$top=0')).body.__ENTITYSET as string;
    assert.match((await demo.request(`${a}?$logicOperator=AND&$otherCollection=${id(company)}`)).body.__ERROR[0].message, /one dataclass/);
    assert.equal((await demo.request(`${a}?$logicOperator=AND&$otherCollection=FFFF`)).body.__ERROR[0].errCode, 1802);
    assert.match((await demo.request(`${a}?$logicOperator=XOR&$otherCollection=${id(b)}`)).body.__ERROR[0].message, /not a \$logicOperator/);
  });

  it('rebuilds a released set under the same id from $savedfilter/$savedorderby, for 10 minutes', async () => {
    const q = '$filter=%22salary%20%3E%2090000%22&$savedfilter=%22salary%20%3E%2090000%22&$orderby=salary&$savedorderby=salary';
    const created = (await demo.request(`/rest/Employee?${q}&$method=entityset&$top=0`)).body;
    const uri = created.__ENTITYSET as string;
    await demo.request(`${uri}?$method=release`);
    assert.equal((await demo.request(uri)).status, 404); // without the saved options: gone
    const rebuilt = await demo.request(`${uri}?$savedfilter=%22salary%20%3E%2090000%22&$savedorderby=salary&$attributes=salary`);
    assert.equal(rebuilt.status, 200);
    assert.equal(rebuilt.body.__ENTITYSET, uri);
    assert.equal(rebuilt.body.__COUNT, created.__COUNT);
    const entry = (await demo.request('/rest/$info')).body.entitySet.find((e: { id: string }) => uri.endsWith(e.id));
    assert.equal(Date.parse(entry.expires) - Date.parse(entry.refreshed), 600_000);
    assert.equal(entry.sorted, true);
  });

  it('stores the related entities with $method=subentityset, sorted by $subOrderby', async () => {
    const { body } = await demo.request('/rest/Company(3)/staff?$expand=staff&$method=subentityset&$subOrderby=salary%20DESC&$attributes=salary');
    assert.match(body.__ENTITYSET, /^\/rest\/Employee\/\$entityset\/[0-9A-F]{32}$/);
    const salaries = body.__ENTITIES.map((e: { salary: number }) => e.salary);
    assert.deepEqual(salaries, [...salaries].sort((a, b) => b - a));
    assert.equal(body.__COUNT, (await demo.request('/rest/Company(3)/staff?$expand=staff')).body.__COUNT);
    assert.equal((await demo.request('/rest/Employee?$method=subentityset')).status, 400);
  });

  it('computes on a set, cleans dropped members into a new set, and deletes a set\'s entities', async () => {
    const uri = (await demo.request('/rest/Employee?$filter=%22employer.ID%20%3D%205%22&$method=entityset&$top=0')).body.__ENTITYSET as string;
    const id = uri.split('/').pop();
    const expected = await demo.ds.Employee.query('employer.ID = 5').sum('salary');
    assert.equal((await demo.request(`/rest/Employee/salary/$entityset/${id}?$compute=sum`)).body, expected);
    // on the members as the request defines them: filtered here
    const rich = await demo.ds.Employee.query('employer.ID = 5 and salary > 60000').length;
    assert.equal((await demo.request(`/rest/Employee/salary/$entityset/${id}?$compute=count&$filter=%22salary%20%3E%2060000%22`)).body, rich);
    // a huge $timeout is refused (so that $info can always date the sets)
    assert.equal((await demo.request('/rest/City?$method=entityset&$timeout=99999999999999')).status, 400);
    const members = (await demo.request(uri)).body;
    const victim = await demo.ds.Employee.get(members.__ENTITIES[0].__KEY);
    await victim!.drop();
    assert.equal((await demo.request(`${uri}?$clean=true`)).status, 400);
    const cleaned = (await demo.request(`${uri}?$clean=true&$method=entityset`)).body;
    assert.equal(cleaned.__COUNT, members.__COUNT - 1);
    assert.deepEqual((await demo.request(`${uri}?$method=delete`, 'POST')).body, { ok: true });
    assert.equal(await demo.ds.Employee.query('employer.ID = 5').length, 0);
  });
});

describe('entity set lifetimes over HTTP (an injected clock)', () => {
  let demo: DemoFixture;
  let now = 1_000_000;
  before(async () => {
    demo = await openDemo({ entitySets: new MemoryEntitySetStore({ now: () => now, sweepEveryMs: 0 }) });
  });
  after(() => demo.close());

  it('expires a set after $timeout seconds without use (default 7200), each use starting the clock again', async () => {
    const short = (await demo.request('/rest/City?$method=entityset&$timeout=60&$top=0')).body.__ENTITYSET as string;
    const long = (await demo.request('/rest/City?$method=entityset&$top=0')).body.__ENTITYSET as string;
    now += 59_000;
    assert.equal((await demo.request(short)).status, 200); // used: 60 s more
    now += 59_000;
    assert.equal((await demo.request(short)).status, 200);
    now += 61_000;
    const gone = await demo.request(short);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.__ERROR[0].errCode, 1802);
    assert.equal((await demo.request(long)).status, 200);
    now += 7_200_001;
    assert.equal((await demo.request(long)).status, 404);
  });
});


describe('entity sets over HTTP belong to the session that made them (a project with roles.json)', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo({ roles: join(DEMO_DIR, 'roles.json') });
  });
  after(() => demo.close());

  const cookieOf = (headers: Record<string, unknown>): string => {
    const raw = headers['set-cookie'];
    const line = (Array.isArray(raw) ? raw.map(String) : [String(raw)]).find((l) => l.startsWith('4DSID_'));
    assert.ok(line, 'the set\'s maker is given a session cookie');
    return line.split(';')[0];
  };

  it('answers another session 1802 for every use of a set it did not make, and leaves the set to its maker', async () => {
    const made = await demo.request('/rest/Company?$method=entityset&$top=1');
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const mine = { cookie: cookieOf(made.headers) };
    const uri = made.body.__ENTITYSET as string;
    const id = uri.split('/').pop() as string;
    // another session: a guest of its own (no cookie), then one that keeps its cookie
    const other = await demo.request('/rest/Company?$method=entityset&$top=0');
    const theirs = { cookie: cookieOf(other.headers) };
    const theirId = (other.body.__ENTITYSET as string).split('/').pop() as string;
    const refused = [
      await demo.request(uri, 'GET', undefined, theirs),
      await demo.request(`${uri}?$top=1&$skip=1`, 'GET'),
      await demo.request(`${uri}?$filter="ID > 0"`, 'GET', undefined, theirs),
      await demo.request(`/rest/Company/$entityset/${theirId}?$logicOperator=AND&$otherCollection=${id}`, 'GET', undefined, theirs),
      await demo.request(`${uri}?$savedfilter=%22ID%20%3E%200%22`, 'GET', undefined, theirs),
      await demo.request(`${uri}?$method=release`, 'GET', undefined, theirs),
      await demo.request('/rest/$entityset/$release', 'POST', [id], theirs),
    ];
    // ($method=delete needs the drop permission first: a guest is refused that, 401, before any set is looked for)
    for (const [i, r] of refused.entries()) {
      assert.equal(r.status, 404, `use ${i}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.__ERROR[0].errCode, 1802);
    }
    const theirInfo = (await demo.request('/rest/$info', 'GET', undefined, theirs)).body;
    assert.ok(!theirInfo.entitySet.some((e: { id: string }) => e.id === id), 'another session\'s $info does not list it');
    // the maker still has it whole (the rebuild did not take its id), lists it and releases it
    const back = await demo.request(`${uri}?$top=100`, 'GET', undefined, mine);
    assert.equal(back.status, 200);
    assert.equal(back.body.__COUNT, made.body.__COUNT);
    assert.ok((await demo.request('/rest/$info', 'GET', undefined, mine)).body.entitySet.some((e: { id: string }) => e.id === id));
    assert.deepEqual((await demo.request(`${uri}?$method=release`, 'GET', undefined, mine)).body, { ok: true });
    await demo.request(`/rest/Company/$entityset/${theirId}?$method=release`, 'GET', undefined, theirs);
  });

  it('answers 404 1802 for an $otherCollection that is unknown, released or another session\'s, in every read that combines sets (the probe: never 200 as if it were empty)', async () => {
    const make = async (headers: Record<string, string>) => {
      const made = await demo.request('/rest/Company?$method=entityset&$top=0', 'GET', undefined, headers);
      return { uri: made.body.__ENTITYSET as string, cookie: headers.cookie ?? cookieOf(made.headers) };
    };
    const mine = await make({});
    const me = { cookie: mine.cookie };
    const released = await make(me);
    assert.deepEqual((await demo.request(`${released.uri}?$method=release`, 'GET', undefined, me)).body, { ok: true });
    const theirs = await make({});
    const idOf = (uri: string) => uri.split('/').pop() as string;
    const operands = { unknown: 'ABCDEF0123456789ABCDEF0123456789', released: idOf(released.uri), "another session's": idOf(theirs.uri) };
    for (const [what, other] of Object.entries(operands)) {
      for (const op of ['AND', 'OR', 'EXCEPT', 'INTERSECT']) {
        const logic = `$logicOperator=${op}&$otherCollection=${other}`;
        for (const url of [`${mine.uri}?${logic}`, `${mine.uri}?${logic}&$method=entityset`, `${mine.uri}?${logic}&$top=0`, `/rest/Company/name/$entityset/${idOf(mine.uri)}?${logic}&$distinct=true`, `/rest/Company/ID/$entityset/${idOf(mine.uri)}?${logic}&$compute=sum`]) {
          const res = await demo.request(url, 'GET', undefined, me);
          assert.equal(res.status, 404, `${what}, ${url}: ${JSON.stringify(res.body)}`);
          assert.equal(res.body.__ERROR[0].errCode, 1802, url);
          assert.match(res.body.__ERROR[0].message, new RegExp(other), 'the message names the set');
        }
      }
      // as a direct read of that set answers
      assert.equal((await demo.request(`/rest/Company/$entityset/${other}`, 'GET', undefined, me)).body.__ERROR[0].errCode, 1802);
    }
    // the other session still reads its own set whole
    assert.equal((await demo.request(theirs.uri, 'GET', undefined, { cookie: theirs.cookie })).status, 200);
  });

  it('refuses $logicOperator with $otherCollection where no stored set is read (the dataclass, a relation, a function): 400 naming the set form, never the collection alone', async () => {
    const made = await demo.request('/rest/Company?$method=entityset&$top=1');
    const me = { cookie: cookieOf(made.headers) };
    const id = (made.body.__ENTITYSET as string).split('/').pop() as string;
    const key = made.body.__ENTITIES[0].__KEY;
    for (const other of [id, 'ABCDEF0123456789ABCDEF0123456789']) {
      const logic = `$logicOperator=OR&$otherCollection=${other}`;
      for (const [url, method] of [
        [`/rest/Company?${logic}`, 'GET'], [`/rest/Company?${logic}&$method=entityset`, 'GET'], [`/rest/Company/ID?${logic}&$compute=count`, 'GET'],
        [`/rest/Company/name?${logic}&$distinct=true`, 'GET'], [`/rest/Company(${key})/staff?${logic}`, 'GET'], [`/rest/Company/totalRevenues/$entityset/${id}?${logic}`, 'POST'],
        [`/rest/$catalog/counts?${logic}`, 'GET'],
      ] as const) {
        const res = await demo.request(url, method, method === 'POST' ? [] : undefined, me);
        assert.equal(res.status, 400, `${url}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.__ERROR[0].errCode, 7007, url);
        assert.match(res.body.__ERROR[0].message, /combine one stored entity set with another: \/rest\/[\w{}]+\/\$entityset\/\{id\}\?\$logicOperator=OR/, url);
      }
    }
  });
});
