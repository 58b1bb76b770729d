// Keys of every identifying type through the URL forms, on a small project.

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { openProject } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { tempDir, testDatabase } from '../support/helpers.js';

describe('keys of every identifying type', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  const get = async (url: string) => {
    const res = await app.inject({ url });
    return { status: res.statusCode, body: JSON.parse(res.body) };
  };

  before(async () => {
    const dir = join(tmp.dir, 'keys');
    mkdirSync(dir);
    writeFileSync(join(dir, 'model.json'), JSON.stringify({
      name: 'Keys',
      dataClasses: [
        { name: 'Country', attributes: [{ name: 'code', type: 'string', identifying: true }, { name: 'name', type: 'string' }] },
        { name: 'Rate', attributes: [{ name: 'value', type: 'number', identifying: true }, { name: 'label', type: 'string' }] },
        { name: 'Big', attributes: [{ name: 'ID', type: 'long64', identifying: true, autoincrement: true }, { name: 'country', kind: 'relatedEntity', type: 'Country' }] },
      ],
    }));
    ds = await openProject(dir, { db: await testDatabase(join(tmp.dir, 'keys.sqlite')) });
    for (const [code, name] of [['FR', 'France'], ['007', 'Bond'], ['a/b (c)', 'Odd'], ['"q"', 'Quoted']]) {
      const c = ds.Country.new();
      c.set('code', code);
      c.set('name', name);
      await c.save();
    }
    const r = ds.Rate.new();
    r.set('value', 1.5);
    r.set('label', 'one and a half');
    await r.save();
    const b = ds.Big.new();
    b.set('country', await ds.Country.get('a/b (c)'));
    await b.save();
    app = await buildServer(ds, { logLevel: 'silent' });
  });
  after(async () => {
    await app.close();
    await ds.close();
    tmp.remove();
  });

  const found: [string, string, string][] = [
    ['a string key in parentheses', '/rest/Country(FR)', 'FR'],
    ['a string key in brackets', '/rest/Country[FR]', 'FR'],
    ['a double-quoted string key', '/rest/Country("FR")', 'FR'],
    ['a single-quoted string key', "/rest/Country('FR')", 'FR'],
    ['a string key that looks like a number, kept as text', '/rest/Country(007)', '007'],
    ['a string key with a slash, spaces and parentheses, encoded', `/rest/Country(${encodeURIComponent('a/b (c)').replace(/[()]/g, (c) => `%${c.charCodeAt(0).toString(16)}`)})`, 'a/b (c)'],
    ['a string key that is itself quoted', `/rest/Country(${encodeURIComponent('""q""')})`, '"q"'],
    ['a number key', '/rest/Rate(1.5)', '1.5'],
  ];
  for (const [what, url, key] of found) {
    it(`finds ${what}: ${url}`, async () => {
      const { status, body } = await get(url);
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.__KEY, key);
    });
  }

  it('writes a string key in a deferred URI so that following it finds the entity', async () => {
    const { body } = await get('/rest/Big(1)');
    assert.equal(body.country.__deferred.__KEY, 'a/b (c)');
    const followed = await get(body.country.__deferred.uri);
    assert.equal(followed.status, 200);
    assert.equal(followed.body.name, 'Odd');
  });

  it('answers 404 with 1542 for a string key no entity has, and 400 for a number key that is not a number', async () => {
    const missing = await get('/rest/Country(XX)');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.__ERROR[0].errCode, 1542);
    assert.match(missing.body.__ERROR[0].message, /"XX" key in the "Country" dataclass/);
    const bad = await get('/rest/Rate(abc)');
    assert.equal(bad.status, 400);
    assert.match(bad.body.__ERROR[0].message, /"abc" is not a valid key for Rate/);
  });
});
