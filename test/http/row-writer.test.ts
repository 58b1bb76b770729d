// The row writer (rest/present/row-writer.ts) against the entity serializer: an answer whose projection
// its rows are enough for is written from them without entities, and must be what the entity path
// writes, byte for byte, on both engines: every storage type, keys of uuid type, edge values
// (nulls, dates before 1970 and in year 99, date-only values, objects, booleans, pictures),
// relations to dropped entities, aliases to values and to a relation, and dates written by raw SQL
// that are not real dates (rolled over or refused as the entity path does). The entity path is
// forced by adding a list (an alias through a 1→N relation) to $attributes, then removed from its
// answer. A dataclass with a user entity class always takes the entity path (its constructor
// runs for every entity read).

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { openDemo, tempDir, testDatabase, TEST_ENGINE, type DemoFixture } from '../support/helpers.js';
import { rowWriterFor } from '../../src/rest/present/row-writer.js';
import { resolveProjection } from '../../src/datastore/reads/projection.js';
import { coreOf, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { isExposed } from '../../src/model/types.js';
import { openProject } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';

type Json = Record<string, any>;

const MODEL = {
  name: 'Rows',
  dataClasses: [
    {
      name: 'Owner',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
        { name: 'since', type: 'date' },
        // named as the hidden columns' ids once were: their values, not the entity's stamps
        { name: 'timestamp', type: 'date' },
        { name: 'stamp', type: 'string' },
        { name: 'things', kind: 'relatedEntities', type: 'ThingSelection', path: 'owner' },
      ],
    },
    {
      name: 'Thing',
      attributes: [
        { name: 'ID', type: 'uuid', identifying: true, autogenerate: true },
        { name: 'label', type: 'string' },
        { name: 'flag', type: 'bool' },
        { name: 'tiny', type: 'byte' },
        { name: 'small', type: 'word' },
        { name: 'count', type: 'long' },
        { name: 'big', type: 'long64' },
        { name: 'price', type: 'number' },
        { name: 'day', type: 'date', dateOnly: true },
        { name: 'at', type: 'date' },
        { name: 'span', type: 'duration' },
        { name: 'data', type: 'object' },
        { name: 'stamp', type: 'long' },
        { name: 'ownerID', type: 'long' },
        { name: 'owner', kind: 'relatedEntity', type: 'Owner', foreignKey: 'ownerID' },
        { name: 'parent', kind: 'relatedEntity', type: 'Thing', foreignKey: 'parentID' },
        { name: 'children', kind: 'relatedEntities', type: 'ThingSelection', path: 'parent' },
        { name: 'ownerName', kind: 'alias', path: 'owner.name' },
        { name: 'ownerSince', kind: 'alias', path: 'owner.since' },
        { name: 'parentOwner', kind: 'alias', path: 'parent.owner' },
        { name: 'childLabels', kind: 'alias', path: 'children.label' },
      ],
    },
  ],
};

const ROW_ONLY = ['ID', 'label', 'flag', 'tiny', 'small', 'count', 'big', 'price', 'day', 'at', 'span', 'data', 'stamp', 'ownerID', 'owner', 'parent', 'children', 'ownerName', 'ownerSince', 'parentOwner'];

/** Dates as they may sit in a SQLite file written by other means: not what isoDate writes, or no real date. */
const RAW_DATES = [
  { day: '2021-02-29', at: '2020-02-30T00:00:00.000Z' },
  { day: '2020-04-31', at: '2020-01-01T24:00:00.000Z' },
  { day: '2020-4-3', at: '2020-01-01T12:00:00Z' },
  { day: '2020-02-29', at: '2020-01-01T23:59:59.999Z' },
];

function withoutAttribute(e: Json, name: string): Json {
  const { [name]: _dropped, ...rest } = e;
  return rest;
}

describe('the row writer writes what the entity serializer writes', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  const get = async (url: string) => {
    const r = await app.inject({ url });
    return { status: r.statusCode, text: r.body, body: JSON.parse(r.body) as Json };
  };
  /** the same read both ways: the row path, then the entity path (with childLabels, removed again) */
  const bothWays = async (url: (attributes: string) => string) => {
    const rows = await get(url(ROW_ONLY.join(',')));
    const entities = await get(url([...ROW_ONLY, 'childLabels'].join(',')));
    return { rows, entities };
  };

  before(async () => {
    writeFileSync(join(tmp.dir, 'model.json'), JSON.stringify(MODEL));
    ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'rows.sqlite')) });
    app = await buildServer(ds, { logLevel: 'silent' });
    const d = ds as unknown as Record<string, any>;
    const owners = [];
    for (const [name, since] of [['Ann', new Date(Date.UTC(1969, 6, 20, 20, 17))], ['Gone', new Date(Date.UTC(2020, 0, 1))], [null, null]] as const) {
      const o = d.Owner.new();
      o.set('name', name);
      o.set('since', since);
      o.set('timestamp', new Date(Date.UTC(2001, 1, 3, 4, 5, 6)));
      o.set('stamp', `v-${String(name)}`);
      await o.save();
      owners.push(o);
    }
    const values = [
      { label: 'plain', flag: true, tiny: 127, small: 32767, count: -2147483648, big: 2 ** 53 - 1, price: 0.1, day: new Date(Date.UTC(2024, 1, 29)), at: new Date(Date.UTC(2024, 1, 29, 23, 59, 59, 999)), span: 3_600_000, data: { a: [1, { b: 'x"y' }], 'é': null } },
      { label: 'old', flag: false, tiny: 0, small: 0, count: 0, big: -(2 ** 53 - 1), price: -0.5, day: new Date('0099-03-04T00:00:00.000Z'), at: new Date(Date.UTC(1901, 0, 1)), span: 0, data: [] },
      { label: 'nulls', flag: null, tiny: null, small: null, count: null, big: null, price: null, day: null, at: null, span: null, data: null },
      { label: 'ünï\n"quoted"', flag: true, tiny: -128, small: -32768, count: 1, big: 0, price: 1e21, day: new Date(Date.UTC(1969, 11, 31)), at: new Date(0), span: 1, data: { nested: { deep: [true, null, 'ü\n'] } } },
    ];
    const things = [];
    for (const [i, v] of values.entries()) {
      const t = d.Thing.new();
      for (const [k, x] of Object.entries(v)) t.set(k, x);
      t.set('owner', owners[i % 3]);
      t.set('stamp', 1000 + i);
      if (things.length > 0) t.set('parent', things[0]);
      await t.save();
      things.push(t);
    }
    // an owner dropped under its things: their owner reads null, as 4D reads it
    const storage = coreOf(ds).storage;
    await storage.run(`DELETE FROM "Owner" WHERE "ID" = ${Number(owners[1].getKey())}`);
    if (TEST_ENGINE === 'sqlite') {
      for (const raw of RAW_DATES) {
        const t = d.Thing.new();
        t.set('label', `raw ${raw.day}`);
        await t.save();
        await storage.run(`UPDATE "Thing" SET "day" = '${raw.day}', "at" = '${raw.at}' WHERE "ID" = '${String(t.getKey())}'`);
      }
    }
  });
  after(async () => {
    await app.close();
    await ds.close();
    tmp.remove();
  });

  it('takes the row path for these attributes and N→1 relations inline, the entity path with a list or a 1→N relation inline', () => {
    const core = coreOf(ds);
    const thing = core.classOf(core.model.dataClassesByName.get('Thing')!);
    const dialect = core.storage.dialect;
    assert.ok(rowWriterFor(resolveProjection(thing.model, { attributes: ROW_ONLY }, isExposed), thing, dialect));
    assert.ok(rowWriterFor(resolveProjection(thing.model, { attributes: ROW_ONLY, expand: ['owner', 'parentOwner'] }, isExposed), thing, dialect));
    assert.ok(rowWriterFor(resolveProjection(thing.model, { attributes: [...ROW_ONLY, 'parent.label', 'parent.owner.*'] }, isExposed), thing, dialect));
    assert.equal(rowWriterFor(resolveProjection(thing.model, { attributes: [...ROW_ONLY, 'childLabels'] }, isExposed), thing, dialect), undefined);
    // a whole Thing inline has its list too
    assert.equal(rowWriterFor(resolveProjection(thing.model, { attributes: ROW_ONLY, expand: ['parent'] }, isExposed), thing, dialect), undefined);
    assert.equal(rowWriterFor(resolveProjection(thing.model, { attributes: ROW_ONLY, expand: ['children'] }, isExposed), thing, dialect), undefined);
  });

  it('writes N→1 relations inline (through relations and aliases, to a dropped entity) the same both ways', async () => {
    for (const expand of ['owner', 'parent', 'parentOwner', 'owner,parent,parentOwner']) {
      const { rows, entities } = await bothWays((a) => `/rest/Thing?$attributes=${a}&$expand=${expand}&$orderby=label&$top=100`);
      assert.equal(rows.status, 200, rows.text);
      const expected = { ...entities.body, __ENTITIES: entities.body.__ENTITIES.map((e: Json) => withoutAttribute(e, 'childLabels')) };
      assert.equal(rows.text, JSON.stringify(expected), `$expand=${expand}`);
    }
    // and inside the inline entity, its own relations and attributes as asked
    const nested = await bothWays((a) => `/rest/Thing?$attributes=${a},parent.label,parent.owner.*,parent.children&$orderby=label&$top=100`);
    assert.equal(nested.rows.text, JSON.stringify({ ...nested.entities.body, __ENTITIES: nested.entities.body.__ENTITIES.map((e: Json) => withoutAttribute(e, 'childLabels')) }));
    const byLabel = new Map<string, Json>(nested.rows.body.__ENTITIES.map((e: Json) => [e.label, e]));
    assert.equal(byLabel.get('old')?.parent.owner.name, 'Ann', 'two N→1 steps inline');
    // attributes of an inline entity named stamp and timestamp: their values, not its hidden ones
    const owner = byLabel.get('old')?.parent.owner;
    assert.deepEqual([owner?.timestamp, owner?.stamp, owner?.__STAMP], ['2001-02-03T04:05:06.000Z', 'v-Ann', 1]);
    const gone = await get('/rest/Thing?$attributes=label,owner.*&$orderby=label&$top=100');
    assert.equal(new Map<string, Json>(gone.body.__ENTITIES.map((e: Json) => [e.label, e])).get('old')?.owner, null, 'an inline relation to a dropped entity reads null');
  });

  it('writes a page the same both ways, every type and edge value', async () => {
    const { rows, entities } = await bothWays((a) => `/rest/Thing?$attributes=${a}&$orderby=label&$top=100`);
    assert.equal(rows.status, 200, rows.text);
    assert.equal(entities.status, 200, entities.text);
    assert.equal(rows.body.__ENTITIES.length, TEST_ENGINE === 'sqlite' ? 8 : 4);
    const expected = { ...entities.body, __ENTITIES: entities.body.__ENTITIES.map((e: Json) => withoutAttribute(e, 'childLabels')) };
    assert.equal(rows.text, JSON.stringify(expected));
    // what the edge cases came out as
    const byLabel = new Map<string, Json>(rows.body.__ENTITIES.map((e: Json) => [e.label, e]));
    assert.equal(byLabel.get('old')?.day, '4!3!99');
    assert.equal(byLabel.get('old')?.owner, null, 'a relation to a dropped entity reads null');
    assert.equal(byLabel.get('plain')?.owner.__deferred.__KEY, '1');
    assert.equal(byLabel.get('plain')?.stamp, 1000, 'an attribute named stamp sends its value, not __STAMP');
    assert.equal(byLabel.get('plain')?.__STAMP, 1);
  });

  it('writes one entity by key the same both ways', async () => {
    const page = (await get('/rest/Thing?$attributes=ID&$top=100')).body;
    for (const { __KEY } of page.__ENTITIES) {
      const { rows, entities } = await bothWays((a) => `/rest/Thing(${encodeURIComponent(__KEY)})?$attributes=${a}`);
      assert.equal(rows.status, entities.status, `${__KEY}: ${rows.text} / ${entities.text}`);
      assert.equal(rows.text, rows.status === 200 ? JSON.stringify(withoutAttribute(entities.body, 'childLabels')) : entities.text);
    }
  });

  it('sends dates written by raw SQL as the entity path does: rolled over, or refused as it refuses them', { skip: TEST_ENGINE !== 'sqlite' && 'SQLite stores dates as text' }, async () => {
    const day = await get(`/rest/Thing?$filter=${encodeURIComponent('"label = \'raw 2021-02-29\'"')}&$attributes=day`);
    assert.equal(day.body.__ENTITIES[0].day, '1!3!2021', 'February 29th of a common year is March 1st, as new Date() reads it');
    const valid = await get(`/rest/Thing?$filter=${encodeURIComponent('"label = \'raw 2020-02-29\'"')}&$attributes=day,at`);
    assert.deepEqual([valid.body.__ENTITIES[0].day, valid.body.__ENTITIES[0].at], ['29!2!2020', '2020-01-01T23:59:59.999Z']);
  });

  it('answers a key with no entity 1542 on the row path too', async () => {
    const r = await get('/rest/Owner(999999)?$attributes=name');
    assert.equal(r.status, 404);
    assert.equal(r.body.__ERROR[0].errCode, 1542);
  });
});

describe('the row writer on the demo', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('writes Company pages (pictures, date-only values, objects, relations) the same both ways', async () => {
    const attributes = 'ID,name,companyCode,revenues,active,logo,extra,founded,city,cityName,staff';
    const rows = await demo.request(`/rest/Company?$attributes=${attributes}&$top=1000`);
    const entities = await demo.request(`/rest/Company?$attributes=${attributes},staffNames&$top=1000`);
    const page = rows.body as Json;
    assert.ok(page.__ENTITIES.some((e: Json) => e.logo !== null), 'some companies have a logo');
    assert.equal(JSON.stringify(page.__ENTITIES), JSON.stringify((entities.body as Json).__ENTITIES.map((e: Json) => withoutAttribute(e, 'staffNames'))));
  });

  it('makes entities for a dataclass with a user entity class (its constructor runs for each entity read)', () => {
    const core = coreOf(demo.ds);
    const employee = core.classOf(core.model.dataClassesByName.get('Employee')!);
    assert.equal(employee.constructsOnRead, true);
    assert.equal(rowWriterFor(resolveProjection(employee.model, { attributes: ['lastName'] }, isExposed), employee, core.storage.dialect), undefined);
    // nor inline, through a relation of a dataclass that has none
    const city = core.classOf(core.model.dataClassesByName.get('City')!);
    assert.equal(rowWriterFor(resolveProjection(city.model, { attributes: ['name', 'workers.*'] }, isExposed), city, core.storage.dialect), undefined);
  });
});
