// The permission matrix: every kind of REST action (one request each, and a request for each other
// door into a kind: a singleton's function call), driven by sessions holding each privilege of a
// test roles.json, allowed or refused as the roles say — 401 for a guest, 403 for a logged-in
// session. A new kind of action without a row here fails the suite, as does a kind the
// authorization step has no rule for.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { coreOf } from '../../src/datastore/datastore.js';
import type { ActionKind } from '../../src/rest/plan/action.js';
import { AUTHORIZATION } from '../../src/rest/plan/authorize.js';
import { OPTION_RULES } from '../../src/rest/plan/option-rules.js';
import { planRequest, readTarget } from '../../src/rest/plan/request.js';
import { scopeFor, servicesFor } from '../../src/rest/scope/scope.js';
import { serverSettings } from '../../src/config/settings.js';
import { openDemo, tempDir, type DemoFixture } from '../support/helpers.js';

const ROLES = {
  privileges: [
    { privilege: 'reader', includes: [] },
    { privilege: 'writer', includes: ['reader'] },
    { privilege: 'dropper', includes: ['reader'] },
    { privilege: 'caller', includes: [] },
    { privilege: 'accounts', includes: [] },
  ],
  roles: [
    { role: 'R', privileges: ['reader'] },
    { role: 'W', privileges: ['writer'] },
    { role: 'D', privileges: ['dropper'] },
    { role: 'C', privileges: ['caller'] },
  ],
  permissions: {
    allowed: [
      { applyTo: 'ds', type: 'datastore', read: ['reader'], create: ['writer'], update: ['writer'], drop: ['dropper'], execute: ['caller'] },
      { applyTo: 'User', type: 'dataclass', read: ['accounts'] },
      { applyTo: 'ds.authentify', type: 'method', promote: ['accounts'] },
      { applyTo: 'ds.directoryUser', type: 'method', promote: ['accounts'] },
    ],
  },
  restrictedByDefault: true,
  forceLogin: false,
};

/** A 1×1 PNG. */
const TINY_PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f8cfc0f01f0005000201a5f8d1a50000000049454e44ae426082', 'hex');

type Who = 'guest' | 'R' | 'W' | 'D' | 'C';
const EVERYONE: readonly Who[] = ['guest', 'R', 'W', 'D', 'C'];
const READERS: readonly Who[] = ['R', 'W', 'D'];

interface Row {
  /** who may: the others are refused */
  readonly allowed: readonly Who[];
  /** the request, built afresh for each session (an entity to delete, a set to release) */
  readonly request: () => Promise<{ method: 'GET' | 'POST'; url: string; body?: unknown; headers?: Record<string, string> }>;
  /** an error an allowed session meets past the permission check (a stream would never end under inject) */
  readonly allowedError?: number;
}

describe('the permission matrix: every kind of action × every privilege', () => {
  let demo: DemoFixture;
  let tmp: { dir: string; remove(): void };
  const cookies = new Map<Who, string>();
  let cityKey: unknown;
  let companyWithLogo: unknown;

  /** A stored set of cities, made by the server (any session may name it). */
  const citySet = async () => (await coreOf(demo.ds).sets.create(demo.ds.City.all())).id;
  /** A city only this row's request will delete. */
  const freshCity = async () => {
    const c = demo.ds.City.new();
    c.set('name', `Doomed ${Math.random()}`);
    await c.save();
    return c.getKey();
  };

  const ROWS: Record<ActionKind, Row> = {
    catalog: { allowed: EVERYONE, request: async () => ({ method: 'GET', url: '/rest/$catalog' }) },
    catalogDataClass: { allowed: EVERYONE, request: async () => ({ method: 'GET', url: '/rest/$catalog/City' }) },
    info: { allowed: EVERYONE, request: async () => ({ method: 'GET', url: '/rest/$info' }) },
    openapi: { allowed: EVERYONE, request: async () => ({ method: 'GET', url: '/rest/$openapi' }) },
    queryPath: { allowed: EVERYONE, request: async () => ({ method: 'GET', url: '/rest/$querypath' }) },
    readCollection: { allowed: READERS, request: async () => ({ method: 'GET', url: '/rest/City?$top=2' }) },
    readEntity: { allowed: READERS, request: async () => ({ method: 'GET', url: `/rest/City(${String(cityKey)})` }) },
    readRelation: { allowed: READERS, request: async () => ({ method: 'GET', url: `/rest/Company(${String(companyWithLogo)})/city` }) },
    readFile: { allowed: READERS, request: async () => ({ method: 'GET', url: `/rest/Company(${String(companyWithLogo)})/logo` }) },
    createSet: { allowed: READERS, request: async () => ({ method: 'GET', url: '/rest/City?$method=entityset&$top=1' }) },
    readSet: { allowed: READERS, request: async () => ({ method: 'GET', url: `/rest/City/$entityset/${await citySet()}?$top=1` }) },
    release: { allowed: READERS, request: async () => ({ method: 'GET', url: `/rest/City/$entityset/${await citySet()}?$method=release` }) },
    releaseSets: { allowed: EVERYONE, request: async () => ({ method: 'POST', url: '/rest/$entityset/$release', body: [await citySet()] }) },
    update: { allowed: ['W'], request: async () => ({ method: 'POST', url: '/rest/City?$method=update', body: { name: 'Newtown' } }) },
    validate: { allowed: ['W'], request: async () => ({ method: 'POST', url: '/rest/City?$method=validate', body: { name: 'Newtown' } }) },
    delete: { allowed: ['D'], request: async () => ({ method: 'POST', url: `/rest/City(${String(await freshCity())})?$method=delete` }) },
    deleteSet: {
      allowed: ['D'],
      request: async () => {
        const id = (await coreOf(demo.ds).sets.create(demo.ds.City.query('ID = :1', await freshCity()))).id;
        return { method: 'POST', url: `/rest/City/$entityset/${id}?$method=delete` };
      },
    },
    compute: { allowed: READERS, request: async () => ({ method: 'GET', url: '/rest/City/population?$compute=sum' }) },
    distinct: { allowed: READERS, request: async () => ({ method: 'GET', url: '/rest/City/country?$distinct=true' }) },
    callFunction: { allowed: ['C'], request: async () => ({ method: 'POST', url: '/rest/$catalog/pause', body: [1] }) },
    // a picture into one company's logo: an update
    storeFile: {
      allowed: ['W'],
      request: async () => ({ method: 'POST', url: `/rest/Company(${String(companyWithLogo)})/logo?$rawPict=image/png`, body: TINY_PNG, headers: { 'content-type': 'application/octet-stream' } }),
    },
    // who the session is: every session may ask (the demo's hook reads User through promote)
    directory: { allowed: EVERYONE, request: async () => ({ method: 'GET', url: '/rest/$directory/currentUser' }) },
    // roles.json as a matrix (users and tokens too): only a session holding the admin privilege, which this roles.json has not
    admin: { allowed: [], request: async () => ({ method: 'GET', url: '/rest/$roles' }) },
    // a session's pessimistic lock on an entity: it takes the right to update
    // (City tracks no changes: a reader gets past the permission to the refusal of an untracked dataclass, 7007)
    watch: { allowed: READERS, allowedError: 7007, request: async () => ({ method: 'GET', url: '/rest/City?$method=watch' }) },
    lock: { allowed: ['W'], request: async () => ({ method: 'GET', url: `/rest/City(${String(cityKey)})/?$lock=true` }) },
    upload: { allowed: ['W'], request: async () => ({ method: 'POST', url: '/rest/$upload?$binary=true', body: Buffer.from('some bytes'), headers: { 'content-type': 'application/octet-stream' } }) },
  };

  /** Other doors into a kind, each with its own row: [kind, what, row]. */
  const MORE_ROWS: [ActionKind, string, Row][] = [
    // a shared singleton's function: the datastore's execute (no singleton entry)
    ['callFunction', 'a singleton function', { allowed: ['C'], request: async () => ({ method: 'POST', url: '/rest/$singleton/Tools/serverTime', body: [] }) }],
  ];
  const allRows = (): [ActionKind, Row][] => [...(Object.entries(ROWS) as [ActionKind, Row][]), ...MORE_ROWS.map(([kind, , row]): [ActionKind, Row] => [kind, row])];

  before(async () => {
    tmp = tempDir();
    const roles = join(tmp.dir, 'roles.json');
    writeFileSync(roles, JSON.stringify(ROLES));
    demo = await openDemo({ roles });
    cityKey = (await demo.ds.City.all().first())?.getKey();
    companyWithLogo = (await demo.ds.Company.query('logo != null').first())?.getKey();
    // a user per role (the demo's authentify reads them)
    const { hash } = await import('@node-rs/argon2');
    const passwordHash = await hash('pw');
    for (const role of ['R', 'W', 'D', 'C'] as const) {
      const u = demo.ds.User.new();
      u.set('userName', `user-${role}`);
      u.set('passwordHash', passwordHash);
      u.set('roles', role);
      await u.save();
      const res = await demo.request('/rest/$catalog/authentify', 'POST', [{ userName: `user-${role}`, password: 'pw' }]);
      assert.equal(res.body.result?.success, true, JSON.stringify(res.body));
      const cookie = String(res.headers['set-cookie']).split(';')[0];
      cookies.set(role, cookie);
    }
  });
  after(async () => {
    await demo.close();
    tmp.remove();
  });

  it('has a row for every kind of action the planner makes, and the authorization step a rule for each', () => {
    assert.deepEqual(Object.keys(ROWS).sort(), Object.keys(OPTION_RULES).sort());
    assert.deepEqual(Object.keys(AUTHORIZATION).sort(), Object.keys(OPTION_RULES).sort());
  });

  it("plans each row's request as the kind it stands for", async () => {
    const core = coreOf(demo.ds);
    const session = core.sessions.guest();
    session.setPrivileges(['writer', 'dropper', 'caller']);
    const scope = scopeFor(servicesFor(demo.ds, serverSettings({ functionTimeoutMs: 30_000, maxUploadBytes: 1 << 20 })), { method: 'GET', url: '', caller: 'test', headers: {} }, session);
    for (const [kind, row] of allRows()) {
      const req = await row.request();
      const action = planRequest({ method: req.method, url: req.url, headers: req.headers ?? {}, body: req.body, origin: 'http://localhost' }, scope, readTarget(req.method, req.url));
      assert.equal(action.kind, kind, req.url);
    }
  });

  for (const who of EVERYONE) {
    it(`allows and refuses each kind of action as roles.json says for ${who === 'guest' ? 'a guest' : `a session of role ${who}`}`, async () => {
      for (const [kind, row] of allRows()) {
        const req = await row.request();
        const headers = { ...(req.headers ?? {}), ...(who === 'guest' ? {} : { cookie: cookies.get(who) as string }) };
        const res = await demo.request(req.url, req.method, req.body, headers);
        const where = `${kind} (${req.method} ${req.url}) as ${who}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
        if (row.allowed.includes(who)) {
          if (row.allowedError !== undefined) assert.equal(res.body.__ERROR?.[0]?.errCode, row.allowedError, where);
          else assert.ok(res.status < 400, where);
        } else {
          assert.equal(res.status, who === 'guest' ? 401 : 403, where);
          // (a refused entity of a batch carries its error inside __ENTITIES)
          const errors: { errCode: number }[] = res.body.__ERROR ?? res.body.__ENTITIES?.[0]?.__ERROR ?? [];
          assert.ok(errors.some((e) => [7040, 7041, 1558, 7042, 1561, 7083].includes(e.errCode)), where);
        }
      }
    });
  }

  it('lets every session call authentify, whatever roles.json says', async () => {
    const res = await demo.request('/rest/$catalog/authentify', 'POST', [{ userName: 'nobody', password: 'x' }]);
    assert.equal(res.status, 200);
    assert.equal(res.body.result.success, false);
  });
});
