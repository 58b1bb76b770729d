// $attributes trees, alias relations and exposure rules, end to end.

import sharp from 'sharp';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openProject } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { openDemo, tempDir, testDatabase, type DemoFixture } from '../support/helpers.js';

describe('$attributes trees on the demo', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('"*,city.*" sends every attribute and the city inline', async () => {
    const { status, body } = await demo.request('/rest/Company(1)?$attributes=*,city.*');
    assert.equal(status, 200);
    assert.equal(body.name, 'Acme Industries');
    assert.ok('revenues' in body && 'staff' in body);
    assert.equal(body.city.name, 'Paris');
    assert.ok('country' in body.city);
  });

  it('"city.*,city.companies.name" keeps both paths, in either order', async () => {
    for (const attrs of ['city.*,city.companies.name', 'city.companies.name,city.*']) {
      const { status, body } = await demo.request(`/rest/Company(1)?$attributes=${attrs}`);
      assert.equal(status, 200, attrs);
      assert.equal(body.city.name, 'Paris', attrs);
      assert.ok(Array.isArray(body.city.companies.__ENTITIES), attrs);
      assert.deepEqual(Object.keys(body.city.companies.__ENTITIES[0]).filter((k) => !k.startsWith('__')), ['name'], attrs);
    }
  });

  it('refuses $expand of an attribute that is not a relation, naming it', async () => {
    const { status, body } = await demo.request('/rest/Company(1)?$expand=name');
    assert.equal(status, 400);
    assert.match(body.__ERROR[0].message, /'name' is not a relation/);
  });

  it('pages an alias relation with more entities than one IN list holds, in SQL', async () => {
    const company = await demo.ds.Company.get(1);
    await demo.ds.transaction(async () => {
      for (let i = 0; i < 1200; i++) {
        const e = demo.ds.Employee.new();
        e.set('lastName', `Extra${i}`);
        e.set('employer', company);
        await e.save();
      }
    });
    const { status, body } = await demo.request('/rest/City(1)/workers?$expand=workers&$top=1');
    assert.equal(status, 200);
    assert.ok(body.__COUNT > 1200);
    assert.equal(body.__SENT, 1);
    const inline = await demo.request('/rest/City(1)?$attributes=workers.lastName');
    assert.equal(inline.status, 200);
    assert.equal(inline.body.workers.__COUNT, body.__COUNT);
    assert.equal(inline.body.workers.__SENT, 100);
  });
});

describe('aliases and exposure on a small project', () => {
  const tmp = tempDir();
  let app: Awaited<ReturnType<typeof buildServer>>;
  let close: () => Promise<void>;
  before(async () => {
    const dir = join(tmp.dir, 'p');
    mkdirSync(dir);
    writeFileSync(join(dir, 'model.json'), JSON.stringify({
      name: 'P',
      dataClasses: [
        { name: 'Co', exposed: false, attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'logo', type: 'image' }] },
        {
          name: 'Emp',
          attributes: [
            { name: 'ID', type: 'long', identifying: true, autoincrement: true },
            { name: 'employer', kind: 'relatedEntity', type: 'Co' },
            { name: 'manager', kind: 'relatedEntity', type: 'Emp' },
            { name: 'mgrEmployer', kind: 'alias', path: 'manager.employer' },
            { name: 'managerPic', kind: 'alias', path: 'manager.pic' },
            { name: 'pic', type: 'image' },
          ],
        },
      ],
    }));
    const ds = await openProject(dir, { db: await testDatabase(join(tmp.dir, 'p.sqlite')) });
    await ds.transaction(async () => {
      const co = ds.Co.new();
      await co.save();
      const boss = ds.Emp.new();
      boss.set('employer', co);
      // (an image attribute takes image bytes, whatever type a caller gives)
      boss.set('pic', await ds.storeFile(await sharp({ create: { width: 1, height: 1, channels: 3, background: '#000' } }).png().toBuffer()));
      await boss.save();
      const e = ds.Emp.new();
      e.set('manager', boss);
      await e.save();
    });
    app = await buildServer(ds, { logLevel: 'silent' });
    close = async () => {
      await app.close();
      await ds.close();
      tmp.remove();
    };
  });
  after(() => close());

  it('hides relations and aliases that lead to a dataclass that is not exposed', async () => {
    const entity = JSON.parse((await app.inject({ url: '/rest/Emp(2)' })).body);
    assert.ok(!('employer' in entity), 'employer');
    assert.ok(!('mgrEmployer' in entity), 'mgrEmployer');
    assert.ok('manager' in entity && 'employerID' in entity);
    const res = await app.inject({ url: '/rest/Emp(2)/mgrEmployer' });
    assert.equal(res.statusCode, 404);
    assert.equal(JSON.parse(res.body).__ERROR[0].errCode, 1500);
    const catalog = JSON.parse((await app.inject({ url: '/rest/$catalog/Emp' })).body);
    assert.deepEqual(catalog.attributes.map((a: { name: string }) => a.name), ['ID', 'manager', 'managerPic', 'pic', 'employerID', 'managerID']);
  });

  it('names the alias, not its target, in the URI of an alias to a picture', async () => {
    const entity = JSON.parse((await app.inject({ url: '/rest/Emp(2)' })).body);
    assert.match(entity.managerPic.__deferred.uri, /^\/rest\/Emp\(2\)\/managerPic\?\$imageformat=best&\$version=\d+&\$expand=managerPic$/);
    assert.equal(entity.managerPic.__deferred.image, true);
  });
});

describe('the related entities one answer may inline', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  /** The entities inlined below the page's own: every __ENTITIES list and related entity of the tree, repeats included. */
  const inlined = (value: unknown, top = true): number => {
    if (Array.isArray(value)) return value.reduce((n: number, v) => n + inlined(v, top), 0);
    if (value === null || typeof value !== 'object') return 0;
    const obj = value as Record<string, unknown>;
    let n = !top && '__KEY' in obj ? 1 : 0;
    for (const [k, v] of Object.entries(obj)) n += inlined(v, top && k === '__ENTITIES');
    return n;
  };

  it('refuses colleagues four levels deep (a 90-byte URL) with 400 before the deep levels are read, naming the path and how to read less', async () => {
    const started = Date.now();
    const res = await demo.request('/rest/Employee?$top=10000&$attributes=colleagues.colleagues.colleagues.colleagues.*');
    assert.equal(res.status, 400);
    assert.equal(res.body.__ERROR[0].errCode, 7009);
    assert.match(res.body.__ERROR[0].message, /more than the 100000 related entities one answer may hold \(\d+ more through colleagues\.colleagues(\.colleagues)*\): ask for fewer entities \(\$top\)/);
    assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
  });

  it('counts every entity the answer sends, repeats under several parents included: the limit to the entity passes, one below is refused', async () => {
    const url = '/rest/Employee?$top=5&$attributes=lastName,colleagues.lastName,colleagues.colleagues.lastName,employer.name';
    const whole = await demo.request(url);
    assert.equal(whole.status, 200);
    const n = inlined(whole.body);
    assert.ok(n > 20, `${n} entities inlined`);
    const exact = await demo.withServer({ maxInlinedEntities: n });
    const short = await demo.withServer({ maxInlinedEntities: n - 1 });
    try {
      assert.equal((await exact.request(url)).status, 200);
      const refused = await short.request(url);
      assert.equal(refused.status, 400);
      assert.match(refused.body.__ERROR[0].message, new RegExp(`more than the ${n - 1} related entities`));
    } finally {
      await exact.close();
      await short.close();
    }
  });
});
