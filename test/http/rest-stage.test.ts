// The request stage (src/rest/plan/request.ts): what a request is decided once, as a typed action,
// reading only the options its kind's rule lists; and the scope a request runs with (src/rest/
// scope.ts): a caller who sees less gets less, everywhere, since nothing in rest/ reaches for a
// global notion of what is visible.

import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { AttributeModel } from '../../src/model/types.js';
import type { Action } from '../../src/rest/plan/action.js';
import { OPTION_RULES } from '../../src/rest/plan/option-rules.js';
import { OPTIONS, type OptionName } from '../../src/rest/request/constants.js';
import { planRequest } from '../../src/rest/plan/request.js';
import { run } from '../../src/rest/run/run.js';
import { narrowed, scopeFor, servicesFor, type Scope } from '../../src/rest/scope/scope.js';
import { serverSettings } from '../../src/config/settings.js';
import { DatasetError } from '../../src/errors/dataset-error.js';
import { coreOf } from '../../src/datastore/datastore.js';
import { openDemo, type DemoFixture } from '../support/helpers.js';

// One demo for the file: its suites read it and never change it (planning, scopes, snapshots; a
// storage method a test wraps is put back in its finally).
let shared: Promise<DemoFixture> | undefined;
const sharedDemo = (): Promise<DemoFixture> => (shared ??= openDemo());
after(async () => {
  await (await shared)?.close();
});

describe('the request stage', () => {
  let demo: DemoFixture;
  let scope: Scope;
  before(async () => {
    demo = await sharedDemo();
    scope = scopeFor(servicesFor(demo.ds, serverSettings({ functionTimeoutMs: 30_000, maxUploadBytes: 1024 })), { method: 'GET', url: '', caller: 'test', headers: {} }, coreOf(demo.ds).sessions.guest());
  });

  const plan = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Action =>
    planRequest({ method, url, headers, body, origin: 'http://test' }, scope);

  it('decides the kind of a request from its URL, verb and $method', () => {
    const kinds: [string, string, string, unknown?][] = [
      ['GET', '/rest/$catalog', 'catalog'],
      ['GET', '/rest/$catalog/Company', 'catalogDataClass'],
      ['POST', '/rest/$catalog/counts', 'callFunction', []],
      ['POST', '/rest/$singleton/Tools/serverTime', 'callFunction', []],
      ['GET', '/rest/$singleton/Tools/serverTime', 'callFunction'],
      ['GET', '/rest/$info', 'info'],
      ['GET', '/rest/$querypath', 'queryPath'],
      ['GET', '/rest/Employee', 'readCollection'],
      ['GET', '/rest/Employee?$method=entityset', 'createSet'],
      ['GET', '/rest/Company(1)', 'readEntity'],
      ['GET', '/rest/Company(1)/staff', 'readCollection'],
      ['GET', '/rest/Company(1)/staff?$method=subentityset', 'createSet'],
      ['GET', '/rest/Employee(X)/employer', 'readRelation'],
      ['GET', '/rest/Company(1)/logo', 'readFile'],
      ['GET', '/rest/Employee/$entityset/ABC', 'readSet'],
      ['GET', '/rest/Employee/$entityset/ABC?$method=release', 'release'],
      ['POST', '/rest/$entityset/$release', 'releaseSets', ['ABC']],
      ['POST', '/rest/Company?$method=update', 'update', { name: 'X' }],
      ['POST', '/rest/Company?$method=validate', 'validate', { name: 'X' }],
      ['POST', '/rest/Company(1)?$method=delete', 'delete'],
      ['POST', '/rest/Company?$method=delete&$filter="name=x"', 'delete'],
      ['POST', '/rest/Company/$entityset/ABC?$method=delete', 'deleteSet'],
      ['GET', '/rest/Employee/salary?$compute=sum', 'compute'],
      ['GET', '/rest/Employee/lastName?$distinct=true', 'distinct'],
      ['GET', '/rest/Company/byCode?$params=["ACME"]', 'callFunction'],
      ['POST', '/rest/$upload?$rawPict=true', 'upload'],
    ];
    for (const [method, url, kind, body] of kinds) assert.equal(plan(method, url, body).kind, kind, `${method} ${url}`);
  });

  it('reads $filter and $orderby once, parsed: a query with "order by" inside a value is no second order', () => {
    const action = plan('GET', '/rest/Employee?$filter="lastName = \'order by\'"&$orderby=lastName') as Extract<Action, { kind: 'readCollection' }>;
    assert.equal(action.narrowing.filter?.orderBy.length, 0);
    assert.equal(action.narrowing.orderBy?.length, 1);
    assert.throws(() => plan('GET', '/rest/Employee?$filter="salary > 1 order by salary"&$orderby=lastName'), (e: DatasetError) => e.code === 'INVALID_OPTION' && /given twice/.test(e.message));
  });

  it('refuses an order in $filter and in $orderby on a page or a new set of a dataclass, and lets $orderby win on a set, a computation and a function\'s selection', () => {
    const twice = '$filter="salary > 1 order by salary"&$orderby=lastName';
    for (const url of [`/rest/Employee?${twice}`, `/rest/Employee?${twice}&$method=entityset`]) {
      assert.throws(() => plan('GET', url), (e: DatasetError) => e.code === 'INVALID_OPTION' && /given twice/.test(e.message), url);
    }
    const wins: [string, Action['kind']][] = [
      [`/rest/Employee/$entityset/ABC?${twice}`, 'readSet'],
      [`/rest/Employee/salary?${twice}&$compute=sum`, 'compute'],
      [`/rest/Employee/lastName?${twice}&$distinct=true`, 'distinct'],
    ];
    for (const [url, kind] of wins) {
      const action = plan('GET', url) as Extract<Action, { kind: 'readSet' | 'compute' | 'distinct' }>;
      assert.equal(action.kind, kind, url);
      assert.equal(action.narrowing.filter?.orderBy.length, 1, url);
      assert.deepEqual(action.narrowing.orderBy?.map((o) => o.path.kind === 'path' && o.path.text), ['lastName'], url);
    }
  });

  it('lets a kind act on the options of its rule only: others are ignored, or refused where they would mislead', () => {
    const entity = plan('GET', '/rest/Company(1)?$timeout=5&$compute=sum&$attributes=name') as Extract<Action, { kind: 'readEntity' }>;
    assert.deepEqual(entity.shape, { attributes: ['name'], expand: undefined, asArray: false });
    assert.throws(() => plan('GET', '/rest/Company(1)?$top=2'), (e: DatasetError) => e.code === 'INVALID_OPTION' && /not to a single entity/.test(e.message));
    assert.throws(() => plan('POST', '/rest/$upload?$binary=true&$top=1'), (e: DatasetError) => e.code === 'INVALID_OPTION' && /\$top does not apply/.test(e.message));
    // $format=looker: read by the pages of collections and sets, refused by every other kind before any data is read
    const page = plan('GET', '/rest/Company?$format=looker') as Extract<Action, { kind: 'readCollection' }>;
    assert.equal(page.shape.format, 'looker');
    for (const [method, url] of [['GET', '/rest/Company(1)?$format=looker'], ['GET', '/rest/$info?$format=looker'], ['POST', '/rest/$catalog/counts?$format=looker']]) {
      assert.throws(() => plan(method, url, []), (e: DatasetError) => e.code === 'INVALID_OPTION' && /answered in JSON only/.test(e.message), url);
    }
    assert.equal(plan('GET', '/rest/Company(1)?$format=json').kind, 'readEntity');
    const update = plan('POST', '/rest/Company?$method=update&$atomic=true&$top=3', [{ name: 'X' }]) as Extract<Action, { kind: 'update' }>;
    assert.equal(update.atomic, true);
    assert.equal(update.single, false);
  });

  it('refuses an upload announced past the limit before its body is read', () => {
    assert.throws(() => plan('POST', '/rest/$upload?$binary=true', undefined, { 'content-length': '2048' }), (e: DatasetError) => e.code === 'BODY_TOO_LARGE');
  });
});

describe('the scope of a request', () => {
  let demo: DemoFixture;
  // a caller who does not see salaries, nor the Company dataclass
  const narrower = (a: AttributeModel) => a.name !== 'salary';
  let scope: Scope;
  before(async () => {
    demo = await sharedDemo();
    const base = scopeFor(servicesFor(demo.ds, serverSettings({ functionTimeoutMs: 30_000, maxUploadBytes: 1024 })), { method: 'GET', url: '', caller: 'test', headers: {} }, coreOf(demo.ds).sessions.guest());
    scope = narrowed(base, (dc) => dc.name !== 'City', narrower);
  });

  const ask = async (url: string, method = 'GET', body?: unknown): Promise<unknown> => {
    const response = await run(planRequest({ method, url, headers: {}, body, origin: 'http://test' }, scope), scope, undefined as unknown as IncomingMessage);
    // (a value, text made once, or text made a slice at a time: all of it, parsed)
    if (response.kind === 'json') return response.body;
    if (response.kind === 'jsonText') return JSON.parse(response.text);
    assert.equal(response.kind, 'jsonSlices');
    let text = response.first;
    for (let slice = response.slices.next(); slice !== null; slice = response.slices.next()) text += slice;
    return JSON.parse(text);
  };
  const fails = (url: string, code: string) => assert.rejects(ask(url), (e: DatasetError) => e.code === code);

  it('shows only what the caller sees: entities, the catalog, pages', async () => {
    const page = (await ask('/rest/Employee?$top=1')) as { __ENTITIES: Record<string, unknown>[] };
    assert.ok(!('salary' in page.__ENTITIES[0]) && 'lastName' in page.__ENTITIES[0]);
    const catalog = (await ask('/rest/$catalog/Employee')) as { attributes: { name: string }[] };
    assert.ok(!catalog.attributes.some((a) => a.name === 'salary'));
  });

  it('resolves every name the client gives as the caller sees the model', async () => {
    await fails('/rest/Employee?$filter="salary > 1"', 'INVALID_FILTER');
    await fails('/rest/Employee?$orderby=salary', 'UNKNOWN_ATTRIBUTE');
    await fails('/rest/Employee?$attributes=salary', 'UNKNOWN_ATTRIBUTE');
    await fails('/rest/Employee/salary?$compute=sum', 'UNKNOWN_ATTRIBUTE');
    await fails('/rest/City', 'UNKNOWN_DATACLASS');
    // nor through a relation or an alias to it
    await fails('/rest/Company(1)?$expand=city', 'UNKNOWN_ATTRIBUTE');
    await fails('/rest/Company?$filter="city.name > a"', 'INVALID_FILTER');
    await fails('/rest/Company?$filter="cityName > a"', 'INVALID_FILTER');
    const company = (await ask('/rest/Company(1)')) as Record<string, unknown>;
    assert.ok(!('city' in company) && !('cityName' in company) && 'staff' in company);
    const catalog = (await ask('/rest/$catalog')) as { dataClasses: { name: string }[] };
    assert.ok(!catalog.dataClasses.some((d) => d.name === 'City'));
  });

  it('refuses a body naming what the caller does not see', async () => {
    // (one object: its __ERROR at the top level, as an update of one object answers it)
    const answer = (await ask('/rest/Employee?$method=validate', 'POST', { salary: 5 })) as { __ERROR: { errCode: number }[] };
    assert.equal(answer.__ERROR[0].errCode, 1500);
  });
});

describe('OPTIONS and OPTION_RULES', () => {
  it('names every implemented option in the rule of at least one kind', () => {
    const used = new Set(Object.values(OPTION_RULES).flatMap((rule) => rule.uses));
    const implemented = (Object.keys(OPTIONS) as OptionName[]).filter((o) => OPTIONS[o]);
    assert.deepEqual(implemented.filter((o) => !used.has(o)), []);
  });
});

describe('the reads of one request', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await sharedDemo();
  });

  /** The reads `fn` makes through the storage, inside snapshots and outside them. */
  const readsOf = async (fn: () => Promise<void>): Promise<{ outside: number; inside: number; snapshots: number }> => {
    const { coreOf } = await import('../../src/datastore/datastore.js');
    const storage = coreOf(demo.ds).storage as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    const counts = { outside: 0, inside: 0, snapshots: 0 };
    const original = { snapshot: storage.snapshot, get: storage.get, all: storage.all, column: storage.column, arrays: storage.arrays };
    for (const m of ['get', 'all', 'column', 'arrays'] as const) storage[m] = function (this: unknown, ...a: unknown[]) { counts.outside++; return original[m].apply(this, a); };
    storage.snapshot = async function (this: unknown) {
      counts.snapshots++;
      const snap = (await original.snapshot.call(this)) as Record<string, (...a: unknown[]) => Promise<unknown>>;
      for (const m of ['get', 'all', 'column', 'arrays']) {
        const read = snap[m].bind(snap);
        snap[m] = (...a: unknown[]) => { counts.inside++; return read(...a); };
      }
      return snap;
    };
    try {
      await fn();
      return counts;
    } finally {
      Object.assign(storage, original);
    }
  };

  it('go through one snapshot when a request reads more than once: the count, the page, the global stamp and what the page inlines', async () => {
    const counts = await readsOf(async () => {
      const res = await demo.request('/rest/Company?$top=5&$expand=staff,city&$filter="name > a"');
      assert.equal(res.status, 200);
    });
    assert.equal(counts.snapshots, 1);
    assert.equal(counts.outside, 0, 'no read outside the snapshot');
    assert.ok(counts.inside >= 5, `count, page, stamp, staff (count, page) and city read in it: ${counts.inside}`);
  });

  it('go through one snapshot for a page of a stored set that takes more than one statement', async () => {
    const made = await demo.request('/rest/Employee?$method=entityset&$top=1');
    const set = String(made.body.__ENTITYSET);
    // Employee has an entity class (entities are made), and employer is inline: several statements
    const counts = await readsOf(async () => {
      const res = await demo.request(`${set}?$top=5&$expand=employer`);
      assert.equal(res.status, 200);
      assert.equal(res.body.__ENTITIES.length, 5);
    });
    assert.equal(counts.snapshots, 1);
    // (outside it only the set's members, which do not change, found by the set store)
    assert.ok(counts.outside <= 1, `reads outside the snapshot: ${counts.outside}`);
    assert.ok(counts.inside >= 3, `the members' rows, their employers and the global stamp read in it: ${counts.inside}`);
    // a page of a set of City, written from rows: one statement, no snapshot needed
    const cities = String((await demo.request('/rest/City?$method=entityset&$top=1')).body.__ENTITYSET);
    const plain = await readsOf(async () => {
      assert.equal((await demo.request(`${cities}?$top=5`)).status, 200);
    });
    assert.equal(plain.snapshots, 0);
    assert.ok(plain.outside <= 2, `the set's members and the page's one statement: ${plain.outside}`);
  });

  it('give their snapshot back when they fail: more failing reads than the pool holds, then a good one answers', async () => {
    const { coreOf } = await import('../../src/datastore/datastore.js');
    const { MAX_SNAPSHOT_CONNECTIONS } = await import('../../src/config/limits.js');
    const storage = coreOf(demo.ds).storage as unknown as { snapshot: () => Promise<{ release: () => Promise<void> }> };
    const original = storage.snapshot;
    const counts = { taken: 0, released: 0 };
    storage.snapshot = async function (this: unknown) {
      const snap = await original.call(this);
      counts.taken++;
      const release = snap.release.bind(snap);
      snap.release = () => { counts.released++; return release(); };
      return snap;
    };
    try {
      // the filter names no attribute: found out inside the snapshot, when the query is resolved
      const failing = Array.from({ length: MAX_SNAPSHOT_CONNECTIONS * 2 + 4 }, () => demo.request('/rest/Employee?$filter="nope = 1"'));
      for (const res of await Promise.all(failing)) assert.equal(res.status, 400);
      assert.equal(counts.taken, failing.length, 'each failed inside its snapshot');
      assert.equal(counts.released, counts.taken);
      const good = await Promise.race([demo.request('/rest/Employee?$top=1&$filter="salary > 0"'), new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no snapshot came back')), 5000).unref())]);
      assert.equal(good.status, 200);
    } finally {
      storage.snapshot = original;
    }
  });
});
