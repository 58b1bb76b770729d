// Shared singletons (reference §2.11, issue 14): classes of classes/ extending Singleton, one
// instance made when the project opens; their @exposed functions at /rest/$singleton/{Class}/{fn}
// (POST, or GET for @onHttpGet ones), answered as other function calls; roles.json's singleton
// and singletonMethod permissions; the mistakes a URL or a class can make.

import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { createSingleton, Singleton, singletonsOf } from '../../src/functions/singletons.js';
import { openProject } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { openDemo, tempDir, testDatabase, type DemoFixture } from '../support/helpers.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

describe('the demo\'s Tools singleton over REST', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('calls an exposed function with POST and answers {"result": …}', async () => {
    const before = Date.now();
    const res = await demo.request('/rest/$singleton/Tools/serverTime', 'POST', []);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body), ['result']);
    assert.ok(Date.parse(res.body.result.now) >= before - 1000);
    assert.equal(typeof res.body.result.timeZone, 'string');
  });

  it('calls an @onHttpGet function with GET too, and a POST without a body', async () => {
    assert.equal((await demo.request('/rest/$singleton/Tools/serverTime')).status, 200);
    assert.equal((await demo.request('/rest/$singleton/Tools/serverTime', 'POST')).status, 200);
  });

  it('refuses GET for a function without @onHttpGet (405), before running it', async () => {
    const res = await demo.request('/rest/$singleton/Tools/companiesIn?$params=\'["France"]\'');
    assert.equal(res.status, 405);
    assert.equal(res.body.__ERROR[0].errCode, 7010);
    assert.match(res.body.__ERROR[0].message, /GET cannot call companiesIn of the Tools singleton/);
  });

  it('answers a selection result as a collection, paged and projected by the answer\'s options', async () => {
    const expected = await demo.ds.Company.query('city.country = :1', 'France').length;
    assert.ok(expected > 1);
    const res = await demo.request('/rest/$singleton/Tools/companiesIn?$top=1&$attributes=name', 'POST', ['France']);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.__entityModel, 'Company');
    assert.equal(res.body.__COUNT, expected);
    assert.equal(res.body.__SENT, 1);
    assert.deepEqual(Object.keys(res.body.__ENTITIES[0]).filter((k) => !k.startsWith('__')), ['name']);
    const stored = await demo.request('/rest/$singleton/Tools/companiesIn?$method=entityset', 'POST', ['France']);
    assert.match(stored.body.__ENTITYSET, /^\/rest\/Company\/\$entityset\/[0-9A-F]{32}$/);
  });

  it('checks the parameter types the function declares (400 naming the parameter)', async () => {
    const res = await demo.request('/rest/$singleton/Tools/companiesIn', 'POST', [42]);
    assert.equal(res.status, 400);
    assert.equal(res.body.__ERROR[0].errCode, 7021);
    assert.match(res.body.__ERROR[0].message, /parameter #1 \(country\) of companiesIn of the Tools singleton is a text/);
  });

  it('refuses what is not exposed (-10729) and an unknown singleton (7060), suggesting the close names', async () => {
    const hidden = await demo.request('/rest/$singleton/Tools/describe', 'POST', []);
    assert.equal(hidden.status, 404);
    assert.equal(hidden.body.__ERROR[0].errCode, -10729);
    const typo = await demo.request('/rest/$singleton/Tools/serverTim', 'POST', []);
    assert.match(typo.body.__ERROR[0].message, /serverTim.*did you mean 'serverTime'/);
    const unknown = await demo.request('/rest/$singleton/Toolz/serverTime', 'POST', []);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.__ERROR[0].errCode, 7060);
    assert.match(unknown.body.__ERROR[0].message, /'Toolz' is no shared singleton class.*did you mean 'Tools'/);
  });

  it('refuses a malformed $singleton URL, a body that is no array and options that read no selection, naming the mistake', async () => {
    const cases: [string, unknown, number, number, RegExp][] = [
      ['/rest/$singleton', [], 400, 7004, /\/rest\/\$singleton\/\{SingletonClass\}\/\{function\}/],
      ['/rest/$singleton/Tools', [], 400, 7004, /\$singleton\/Tools/],
      ['/rest/$singleton/Tools/serverTime/now', [], 400, 7004, /\$singleton\/Tools\/serverTime\/now/],
      ['/rest/$singleton/Tools/serverTime()', [], 400, 7004, /'serverTime\(\)' is not a function name \(written without parentheses\)/],
      ['/rest/$singleton/Tools/companiesIn', { country: 'France' }, 400, 7014, /a JSON array of its parameters/],
      ['/rest/$singleton/Tools/companiesIn?$filter="name=a*"', ['France'], 400, 7007, /runs on no selection: \$filter and \$orderby do not apply/],
    ];
    for (const [url, body, status, errCode, message] of cases) {
      const res = await demo.request(url, 'POST', body);
      assert.equal(res.status, status, `${url}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.__ERROR[0].errCode, errCode, url);
      assert.match(res.body.__ERROR[0].message, message, url);
    }
  });

  it('gives the singleton the datastore as this.ds, and refuses user code a second instance', () => {
    const tools = singletonsOf(demo.ds).get('Tools') as unknown as { ds: unknown; describe(): string; constructor: new () => unknown };
    assert.equal(tools.ds, demo.ds);
    assert.match(tools.describe(), /^Tools singleton of /);
    assert.throws(() => new tools.constructor(), /Tools is a shared singleton: the server makes its one instance/);
    // and while the server makes one singleton, its constructor cannot make another
    class Other extends Singleton {}
    assert.throws(() => createSingleton(demo.ds, 'Maker', class Maker extends Singleton {
      constructor() {
        super();
        new Other();
      }
    }), /Other is a shared singleton/);
  });

  it('calls singleton functions by GET (an @onHttpGet one) or POST only: PUT, PATCH and DELETE are refused naming the method', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const res = await demo.request('/rest/$singleton/Tools/serverTime', method, []);
      assert.equal(res.status, 405, `${method}: ${JSON.stringify(res.body)}`);
      assert.match(res.body.__ERROR[0].message, new RegExp(`^${method} cannot call serverTime`));
    }
  });
});

/** A project with a Counter singleton and a roles.json; dataset-rest installed as a link to this repository. */
function project(roles: unknown): { dir: string; remove(): void } {
  const tmp = tempDir('dataset-rest-singletons-');
  writeFileSync(join(tmp.dir, 'model.json'), JSON.stringify({
    name: 'Counting',
    dataClasses: [
      { name: 'Secret', collectionName: 'SecretSelection', attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'text', type: 'string' }] },
    ],
  }));
  for (const d of ['classes', 'node_modules']) mkdirSync(join(tmp.dir, d));
  symlinkSync(REPO, join(tmp.dir, 'node_modules', 'dataset-rest'), 'dir');
  writeFileSync(join(tmp.dir, 'classes', 'DataStore.ts'), `import { Datastore, exposed, session } from 'dataset-rest';
export default class DataStore extends Datastore {
  @exposed
  authentify(privileges: string[]) {
    session().setPrivileges(privileges);
    return session().getPrivileges();
  }
}
`);
  writeFileSync(join(tmp.dir, 'classes', 'Counter.ts'), `import { exposed, Singleton } from 'dataset-rest';
export default class Counter extends Singleton {
  #calls = 0;
  readonly made = this.ds.name;
  @exposed next() { return ++this.#calls; }
  @exposed reset() { this.#calls = 0; return this.#calls; }
  // reads Secret: only with the privilege promote gives it
  @exposed secrets() { return this.ds.dataClass('Secret')!.all().length; }
}
`);
  writeFileSync(join(tmp.dir, 'classes', 'Silent.ts'), `import { Singleton } from 'dataset-rest';
export default class Silent extends Singleton { hidden() { return 1; } }
`);
  writeFileSync(join(tmp.dir, 'roles.json'), JSON.stringify(roles));
  return tmp;
}

describe('a project\'s singletons under roles.json', () => {
  let app: FastifyInstance;
  let close: () => Promise<void>;
  const ROLES = {
    privileges: [{ privilege: 'ops', includes: [] }, { privilege: 'boss', includes: [] }, { privilege: 'vault', includes: [] }],
    permissions: {
      allowed: [
        { applyTo: 'ds', type: 'datastore', read: ['guest'], execute: ['guest'] },
        { applyTo: 'Secret', type: 'dataclass', read: ['vault'] },
        { applyTo: 'Counter', type: 'singleton', execute: ['ops'] },
        { applyTo: 'Counter.reset', type: 'singletonMethod', execute: ['boss'] },
        { applyTo: 'Counter.secrets', type: 'singletonMethod', promote: ['vault'] },
      ],
    },
    restrictedByDefault: false,
    forceLogin: false,
  };
  before(async () => {
    const tmp = project(ROLES);
    const ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'data.sqlite')) });
    app = await buildServer(ds, { logLevel: 'silent' });
    close = async () => {
      await app.close();
      await ds.close();
      tmp.remove();
    };
  });
  after(() => close());

  /** A session holding these privileges (none: a guest): its request function. */
  async function session(privileges: string[]): Promise<(url: string, method?: 'GET' | 'POST') => Promise<{ status: number; body: any }>> {
    let cookie = '';
    if (privileges.length > 0) {
      const res = await app.inject({ method: 'POST', url: '/rest/$catalog/authentify', payload: [privileges] });
      cookie = String(res.headers['set-cookie']).split(';')[0];
    }
    return async (url, method = 'POST') => {
      const res = await app.inject({ method, url, headers: cookie ? { cookie } : {}, ...(method === 'POST' ? { payload: [] } : {}) });
      return { status: res.statusCode, body: JSON.parse(res.body) };
    };
  }

  it('lets only the privileges of the singleton\'s execute run its functions: 401 for a guest, 403 for another session (1561)', async () => {
    const guest = await session([]);
    const refused = await guest('/rest/$singleton/Counter/next');
    assert.equal(refused.status, 401);
    assert.equal(refused.body.__ERROR[0].errCode, 1561);
    assert.match(refused.body.__ERROR[0].message, /function next of the singleton Counter/);
    const boss = await session(['boss']);
    assert.equal((await boss('/rest/$singleton/Counter/next')).status, 403);
    const ops = await session(['ops']);
    const first = await ops('/rest/$singleton/Counter/next');
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal((await ops('/rest/$singleton/Counter/next')).body.result, first.body.result + 1, 'one instance answers every call');
  });

  it('lets a singletonMethod permission override its singleton\'s for that function', async () => {
    const ops = await session(['ops']);
    assert.equal((await ops('/rest/$singleton/Counter/reset')).status, 403);
    const boss = await session(['boss']);
    const res = await boss('/rest/$singleton/Counter/reset');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.result, 0);
  });

  it('runs a function with the privileges its promote adds, and the caller\'s own read stays refused', async () => {
    const ops = await session(['ops']);
    const res = await ops('/rest/$singleton/Counter/secrets');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.result, 0);
    assert.equal((await ops('/rest/Secret', 'GET')).status, 403);
  });

  it('lists in the catalog only the singletons with an exposed function', async () => {
    const guest = await session([]);
    const res = await guest('/rest/$catalog', 'GET');
    assert.deepEqual(res.body.singletons, [{
      name: 'Counter',
      methods: ['next', 'reset', 'secrets'].map((name) => ({ name, allowedOnHTTPGET: false, exposed: true })),
    }]);
  });
});
