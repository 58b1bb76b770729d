// Entity sets: the store (compact keys, lifetimes on an injected clock, a bound on members) and
// the REST side ($method=entityset, reading pages, release, $info).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MemoryEntitySetStore, type StoredSet } from '../src/datastore/entity-set-store.js';
import { newSetId } from '../src/datastore/entity-sets.js';
import { openDemo, type DemoFixture } from './helpers.js';

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

  it('drops the least recently used sets first when the members go past the bound', async () => {
    const store = new MemoryEntitySetStore({ maxMembers: 10, now: () => 0 });
    await store.put(set('A', 4, 0, 1e9));
    await store.put(set('B', 4, 0, 1e9));
    await store.get('A'); // A is now more recent than B
    await store.put(set('C', 4, 0, 1e9));
    assert.deepEqual((await store.list()).map((s) => s.id).sort(), ['A', 'C']);
    assert.equal(await store.release('B'), false);
    assert.equal(await store.release('A'), true);
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

