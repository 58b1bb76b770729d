// The row writer (rest/row-writer.ts) against the entity serializer: an answer whose projection
// its rows are enough for is written from them without entities, and must be what the entity path
// writes, byte for byte, for every type of the demo and edge values (nulls, dates before 1970 and
// in year 99, date-only values, objects, booleans, files, a relation to a dropped entity), on both
// engines. The entity path is forced by adding a calculated attribute or a list to $attributes,
// then removed from its answer.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDemo, type DemoFixture } from './helpers.js';
import { rowWriterFor } from '../src/rest/row-writer.js';
import { resolveProjection } from '../src/datastore/projection.js';
import { coreOf } from '../src/datastore/datastore.js';
import { isExposed } from '../src/model/types.js';

type Json = Record<string, any>;

/** Per dataclass: the attributes a row is enough for (N→1 relations after a look-up), and one that makes the answer take the entity path (a calculated value, a list through a 1→N relation). */
const CASES = [
  { dc: 'Employee', rowOnly: ['ID', 'employeeNumber', 'firstName', 'lastName', 'salary', 'level', 'extension', 'badge', 'birthDate', 'hiredAt', 'dailyHours', 'isManager', 'photo', 'resume', 'notes', 'skills', 'employerID', 'employer', 'manager', 'reports', 'employerName', 'employerCity', 'colleagues'], relation: 'fullName', expand: 'employer' },
  { dc: 'Company', rowOnly: ['ID', 'name', 'companyCode', 'revenues', 'active', 'logo', 'extra', 'founded', 'city', 'cityName', 'staff'], relation: 'staffNames', expand: 'city' },
];

function withoutRelation(list: Json[], relation: string): Json[] {
  return list.map((e) => {
    const { [relation]: _dropped, ...rest } = e;
    return rest;
  });
}

describe('the row writer writes what the entity serializer writes', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
    const ds = demo.ds as unknown as Record<string, any>;
    // edge values beside the seeded ones
    const edge = [
      { name: 'Edge Nulls', companyCode: 'EDGE-N', revenues: null, active: null, extra: null, founded: null },
      { name: 'Edge Old', companyCode: 'EDGE-O', revenues: -0.5, active: false, extra: { a: [1, { b: 'x"y' }], 'é': null }, founded: new Date(Date.UTC(1969, 11, 31)) },
      { name: 'Edge Year 99', companyCode: 'EDGE-99', revenues: 1e21, active: true, extra: [], founded: new Date('0099-03-04T00:00:00.000Z') },
    ];
    for (const values of edge) {
      const c = ds.Company.new();
      for (const [k, v] of Object.entries(values)) c.set(k, v);
      await c.save();
    }
    const first = await ds.Employee.all().first();
    first.set('hiredAt', new Date(Date.UTC(1901, 0, 1, 23, 59, 59, 999)));
    first.set('birthDate', null);
    first.set('skills', { nested: { deep: [true, null, 'ü\n'] } });
    await first.save();
    // a company dropped under its employees: their employer reads null, as 4D reads it
    const gone = ds.Company.new();
    gone.set('name', 'Edge Gone');
    gone.set('companyCode', 'EDGE-G');
    await gone.save();
    const orphan = (await ds.Employee.all().toArray())[3];
    orphan.set('employer', gone);
    await orphan.save();
    await coreOf(demo.ds).storage.run(`DELETE FROM "Company" WHERE "ID" = ${Number(gone.getKey())}`);
  });
  after(() => demo.close());

  it('takes the row path for these projections, and the entity path with a calculated value, a list or an inline relation', () => {
    const core = coreOf(demo.ds);
    const dialect = core.storage.dialect;
    for (const c of CASES) {
      const model = core.model.dataClassesByName.get(c.dc)!;
      assert.ok(rowWriterFor(resolveProjection(model, { attributes: c.rowOnly }, isExposed), dialect), `${c.dc}: a row writer for ${c.rowOnly.join(',')}`);
      assert.equal(rowWriterFor(resolveProjection(model, { attributes: [...c.rowOnly, c.relation] }, isExposed), dialect), undefined, `${c.dc}: no row writer with ${c.relation}`);
      assert.equal(rowWriterFor(resolveProjection(model, { attributes: c.rowOnly, expand: [c.expand] }, isExposed), dialect), undefined, `${c.dc}: no row writer with ${c.expand} expanded`);
    }
    const company = core.model.dataClassesByName.get('Company')!;
    assert.equal(rowWriterFor(resolveProjection(company, { attributes: ['name', 'staff.lastName'] }, isExposed), dialect), undefined, 'no row writer with an inline selection');
  });

  for (const c of CASES) {
    it(`writes every ${c.dc} of a page the same both ways`, async () => {
      const rows = await demo.request(`/rest/${c.dc}?$attributes=${c.rowOnly.join(',')}&$top=1000&$orderby=ID`);
      const entities = await demo.request(`/rest/${c.dc}?$attributes=${[...c.rowOnly, c.relation].join(',')}&$top=1000&$orderby=ID`);
      assert.equal(rows.status, 200, JSON.stringify(rows.body));
      assert.equal(entities.status, 200, JSON.stringify(entities.body));
      const [a, b] = [rows.body as Json, entities.body as Json];
      assert.ok(a.__ENTITIES.length > 20, `${c.dc}: a page of many entities`);
      if (c.dc === 'Employee') assert.ok(a.__ENTITIES.some((e: Json) => e.employer === null && e.employerID !== null), 'an employee whose employer was dropped reads employer null');
      assert.deepEqual(a.__ENTITIES, withoutRelation(b.__ENTITIES, c.relation));
      assert.deepEqual({ ...a, __ENTITIES: undefined }, { ...b, __ENTITIES: undefined });
      // and the same text, key order included
      assert.equal(JSON.stringify(a.__ENTITIES), JSON.stringify(withoutRelation(b.__ENTITIES, c.relation)));
    });

    it(`writes one ${c.dc} read by key the same both ways`, async () => {
      const page = (await demo.request(`/rest/${c.dc}?$attributes=ID&$top=1000`)).body as Json;
      for (const e of page.__ENTITIES.slice(0, 5).concat(page.__ENTITIES.slice(-3))) {
        const key = encodeURIComponent(e.__KEY);
        const rows = await demo.request(`/rest/${c.dc}(${key})?$attributes=${c.rowOnly.join(',')}`);
        const entities = await demo.request(`/rest/${c.dc}(${key})?$attributes=${[...c.rowOnly, c.relation].join(',')}`);
        assert.equal(rows.status, 200, JSON.stringify(rows.body));
        assert.equal(JSON.stringify(rows.body), JSON.stringify(withoutRelation([entities.body as Json], c.relation)[0]));
      }
    });
  }

  it('answers a key with no entity 1542 on the row path too', async () => {
    const r = await demo.request('/rest/Company(999999)?$attributes=name');
    assert.equal(r.status, 404);
    assert.equal((r.body as Json).__ERROR[0].errCode, 1542);
  });
});
