// HTTP reads over the seeded demo project: $attributes trees (alias attributes too) and $expand.
// The other reads are the other http-read-*.test.ts; what they share is http-read-shared.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDemo, type DemoFixture } from '../support/helpers.js';
import { assertEntityHead, assertInlineSelection, demoReads, ENTITY_HEAD, sorted, type Json } from './http-read-shared.js';

describe('HTTP reads', () => {
  let demo: DemoFixture;
  const { names, employees, get, employee, keyOf, learn } = demoReads(() => demo);

  before(async () => {
    demo = await openDemo();
    await learn();
  });
  after(() => demo.close());

  describe('$attributes', () => {
    /** employee 10001: has an employer, manages others */
    let e1: Json;
    let employerKey: string;
    before(async () => {
      e1 = await employee(10001);
      employerKey = e1.employer.__deferred.__KEY;
    });

    for (const value of [undefined, '*']) {
      it(`gives all attributes, relations deferred, with $attributes ${value === undefined ? 'absent' : '=*'}`, async () => {
        const url = `/rest/Employee(${e1.__KEY})${value === undefined ? '' : `?$attributes=${value}`}`;
        const body = await get(url);
        assert.deepEqual(body, e1);
        assert.ok('__deferred' in body.employer);
        assert.ok('__deferred' in body.reports);
      });
    }

    it('gives the simple (deferred) form for $attributes=<relatedEntity>, and nothing else', async () => {
      const body = await get(`/rest/Employee(${e1.__KEY})?$attributes=employer`);
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, 'employer']));
      assert.deepEqual(body.employer, e1.employer);
    });

    it('inlines the whole related entity for $attributes=<relatedEntity>.*, without __entityModel', async () => {
      const body = await get(`/rest/Employee(${e1.__KEY})?$attributes=employer.*`);
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, 'employer']));
      const company = await get(`/rest/Company(${employerKey})`);
      const { __entityModel: _model, ...expected } = company;
      assert.deepEqual(body.employer, expected);
      assert.ok(!('__entityModel' in body.employer));
      assert.ok('__deferred' in body.employer.city, 'relations of the inline entity stay deferred');
      assert.ok('__deferred' in body.employer.staff);
    });

    it('inlines only the listed attributes for $attributes=<relatedEntity>.a,<relatedEntity>.b', async () => {
      const body = await get(`/rest/Employee(${e1.__KEY})?$attributes=employer.name,employer.companyCode`);
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, 'employer']));
      assert.deepEqual(sorted(Object.keys(body.employer)), sorted([...ENTITY_HEAD, 'name', 'companyCode']));
      assert.equal(body.employer.__KEY, employerKey);
      assertEntityHead(body.employer, 'inline employer');
      const company = await get(`/rest/Company(${employerKey})`);
      assert.equal(body.employer.name, company.name);
      assert.equal(body.employer.companyCode, company.companyCode);
      assert.equal(body.employer.__TIMESTAMP, company.__TIMESTAMP);
      assert.equal(body.employer.__STAMP, company.__STAMP);
    });

    it('mixes scalar attributes and relation paths: $attributes=lastName,employer.name', async () => {
      const body = await get(`/rest/Employee(${e1.__KEY})?$attributes=lastName,employer.name`);
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, 'lastName', 'employer']));
      assert.equal(body.lastName, e1.lastName);
      assert.deepEqual(sorted(Object.keys(body.employer)), sorted([...ENTITY_HEAD, 'name']));
    });

    it('gives null for a path through a missing related entity', async () => {
      const body = await get(`/rest/Employee(${keyOf(10028)})?$attributes=employer.name`);
      assert.equal(body.employer, null);
    });

    it('gives the deferred uri for $attributes=<relatedEntities> alone', async () => {
      const body = await get('/rest/Company(1)?$attributes=staff');
      assert.deepEqual(body.staff, { __deferred: { uri: '/rest/Company(1)/staff?$expand=staff' } });
    });

    it('inlines all related entities with all attributes for $attributes=<relatedEntities>.*', async () => {
      const body = await get('/rest/Company(2)?$attributes=staff.*');
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, 'staff']));
      assertInlineSelection(body.staff, 'Company(2).staff');
      assert.equal(body.staff.__ENTITYSET, '/rest/Company(2)/staff?$expand=staff');
      const expected = employees.filter((e) => e.employerID === 2).map((e) => e.__KEY);
      assert.equal(body.staff.__COUNT, expected.length);
      assert.deepEqual(sorted(body.staff.__ENTITIES.map((e: Json) => e.__KEY)), sorted(expected));
      for (const e of body.staff.__ENTITIES) {
        assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, ...names('Employee')]));
        assert.ok(!('__entityModel' in e));
      }
    });

    it('inlines related entities with only the listed attribute for $attributes=<relatedEntities>.a', async () => {
      const body = await get('/rest/Company(2)?$attributes=staff.lastName');
      assertInlineSelection(body.staff, 'Company(2).staff');
      assert.ok(body.staff.__ENTITIES.length > 0);
      for (const e of body.staff.__ENTITIES) {
        assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, 'lastName']));
        assertEntityHead(e, 'inline staff entity');
      }
    });

    it('follows chained paths: $attributes=employer.staff.lastName', async () => {
      const body = await get(`/rest/Employee(${e1.__KEY})?$attributes=employer.staff.lastName`);
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, 'employer']));
      assert.deepEqual(sorted(Object.keys(body.employer)), sorted([...ENTITY_HEAD, 'staff']));
      assert.equal(body.employer.__KEY, employerKey);
      const staff = body.employer.staff;
      assertInlineSelection(staff, 'employer.staff');
      assert.equal(staff.__ENTITYSET, `/rest/Company(${employerKey})/staff?$expand=staff`);
      const expected = employees.filter((e) => String(e.employerID) === employerKey).map((e) => e.__KEY);
      assert.equal(staff.__COUNT, expected.length);
      assert.ok(staff.__ENTITIES.some((e: Json) => e.__KEY === e1.__KEY), 'the employee is among its colleagues');
      for (const e of staff.__ENTITIES) assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, 'lastName']));
    });

    it('gives inline selections the datastore __GlobalStamp (collection request)', async () => {
      const body = await get('/rest/Company?$top=2&$attributes=staff.lastName');
      for (const c of body.__ENTITIES) assert.equal(c.staff.__GlobalStamp, body.__GlobalStamp);
    });

    it('gives inline selections the datastore __GlobalStamp (single-entity request)', async () => {
      const globalStamp = (await get('/rest/Company?$top=1')).__GlobalStamp;
      const body = await get('/rest/Company(2)?$attributes=staff.lastName');
      assert.equal(body.staff.__GlobalStamp, globalStamp);
      const chained = await get(`/rest/Employee(${e1.__KEY})?$attributes=employer.staff.lastName`);
      assert.equal(chained.employer.staff.__GlobalStamp, globalStamp);
    });

    describe('on a collection', () => {
      it('applies $attributes=employer (simple form) to every entity', async () => {
        const body = await get('/rest/Employee?$top=5&$attributes=employer');
        for (const e of body.__ENTITIES) {
          assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, 'employer']));
          const row = employees.find((x) => x.__KEY === e.__KEY) as Json;
          assert.deepEqual(e.employer, row.employerID === null ? null : { __deferred: { uri: `/rest/Company(${row.employerID})`, __KEY: String(row.employerID) } });
        }
      });

      it('applies $attributes=lastName,employer.name to every entity', async () => {
        const body = await get('/rest/Employee?$top=40&$attributes=lastName,employer.name');
        assert.equal(body.__SENT, 40);
        for (const e of body.__ENTITIES) {
          assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, 'lastName', 'employer']));
          const row = employees.find((x) => x.__KEY === e.__KEY) as Json;
          if (row.employerID === null) assert.equal(e.employer, null);
          else {
            assert.deepEqual(sorted(Object.keys(e.employer)), sorted([...ENTITY_HEAD, 'name']));
            assert.equal(e.employer.__KEY, String(row.employerID));
          }
        }
      });

      it('applies $attributes=employer.* to every entity', async () => {
        const body = await get('/rest/Employee?$top=5&$attributes=employer.*');
        for (const e of body.__ENTITIES) {
          if (e.employer === null) continue;
          assert.deepEqual(sorted(Object.keys(e.employer)), sorted([...ENTITY_HEAD, ...names('Company')]));
        }
      });

      it('applies $attributes=name,staff.lastName to every entity, with counts per company', async () => {
        const body = await get('/rest/Company?$top=4&$attributes=name,staff.lastName');
        for (const c of body.__ENTITIES) {
          assert.deepEqual(sorted(Object.keys(c)), sorted([...ENTITY_HEAD, 'name', 'staff']));
          assertInlineSelection(c.staff, `Company(${c.__KEY}).staff`);
          assert.equal(c.staff.__ENTITYSET, `/rest/Company(${c.__KEY})/staff?$expand=staff`);
          assert.equal(c.staff.__COUNT, employees.filter((e) => String(e.employerID) === c.__KEY).length);
          for (const e of c.staff.__ENTITIES) assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, 'lastName']));
        }
      });

      it('applies $attributes=staff.* and chained employer.staff.lastName', async () => {
        const companies = await get('/rest/Company?$top=2&$attributes=staff.*');
        for (const c of companies.__ENTITIES) {
          for (const e of c.staff.__ENTITIES) assert.deepEqual(sorted(Object.keys(e)), sorted([...ENTITY_HEAD, ...names('Employee')]));
        }
        const body = await get('/rest/Employee?$top=3&$attributes=employer.staff.lastName');
        for (const e of body.__ENTITIES) {
          if (e.employer === null) continue;
          assert.deepEqual(sorted(Object.keys(e.employer)), sorted([...ENTITY_HEAD, 'staff']));
          assertInlineSelection(e.employer.staff, 'employer.staff');
          assert.ok(e.employer.staff.__ENTITIES.some((x: Json) => x.__KEY === e.__KEY));
        }
      });

      it('combines a trailing attribute list with $attributes', async () => {
        const body = await get('/rest/Company/name?$top=2&$attributes=city.name');
        for (const c of body.__ENTITIES) {
          assert.deepEqual(sorted(Object.keys(c)), sorted([...ENTITY_HEAD, 'name', 'city']));
          assert.deepEqual(sorted(Object.keys(c.city)), sorted([...ENTITY_HEAD, 'name']));
        }
      });
    });
  });

  describe('$expand', () => {
    it('inlines the related entity with all its attributes for $expand=employer, keeping every other attribute', async () => {
      const e = await employee(10001);
      const body = await get(`/rest/Employee(${e.__KEY})?$expand=employer`);
      assert.deepEqual(sorted(Object.keys(body)), sorted(Object.keys(e)));
      for (const n of names('Employee')) if (n !== 'employer') assert.deepEqual(body[n], e[n], n);
      const { __entityModel: _model, ...company } = await get(e.employer.__deferred.uri);
      assert.deepEqual(body.employer, company);
      assert.deepEqual(Object.keys(body.employer).slice(0, 3), ENTITY_HEAD);
    });

    it('inlines the related entities as a selection for $expand=staff', async () => {
      const company = await get('/rest/Company(2)');
      const body = await get('/rest/Company(2)?$expand=staff');
      for (const n of names('Company')) if (n !== 'staff') assert.deepEqual(body[n], company[n], n);
      assertInlineSelection(body.staff, 'Company(2).staff');
      assert.equal(body.staff.__ENTITYSET, '/rest/Company(2)/staff?$expand=staff');
      const followed = await get('/rest/Company(2)/staff?$expand=staff');
      assert.equal(body.staff.__COUNT, followed.__COUNT);
      assert.deepEqual(body.staff.__ENTITIES, followed.__ENTITIES);
    });

    it('expands on every entity of a collection: $expand=employer', async () => {
      const body = await get('/rest/Employee?$top=30&$expand=employer');
      assert.equal(body.__SENT, 30);
      for (const e of body.__ENTITIES) {
        const row = employees.find((x) => x.__KEY === e.__KEY) as Json;
        if (row.employerID === null) {
          assert.equal(e.employer, null);
          continue;
        }
        assert.equal(e.employer.__KEY, String(row.employerID));
        assert.ok(!('__entityModel' in e.employer));
        assert.deepEqual(sorted(Object.keys(e.employer)), sorted([...ENTITY_HEAD, ...names('Company')]));
      }
    });

    it('expands on every entity of a collection: $expand=staff', async () => {
      const body = await get('/rest/Company?$top=3&$expand=staff');
      for (const c of body.__ENTITIES) {
        assertInlineSelection(c.staff, `Company(${c.__KEY}).staff`);
        assert.equal(c.staff.__GlobalStamp, body.__GlobalStamp);
        assert.equal(c.staff.__COUNT, employees.filter((e) => String(e.employerID) === c.__KEY).length);
      }
    });

    it('expands several relations at once: $expand=employer,manager', async () => {
      const worker = employees.find((x) => x.managerID !== null && x.employerID !== null) as Json;
      const body = await get(`/rest/Employee(${worker.__KEY})?$expand=employer,manager`);
      assert.equal(body.employer.__KEY, String(worker.employerID));
      assert.equal(body.manager.__KEY, worker.managerID);
      assert.ok(!('__deferred' in body.employer) && !('__deferred' in body.manager));
    });

    it('adds the expanded relation to an $attributes list', async () => {
      const body = await get('/rest/Company(1)?$attributes=name&$expand=staff');
      assert.deepEqual(sorted(Object.keys(body)), sorted(['__entityModel', ...ENTITY_HEAD, 'name', 'staff']));
      assertInlineSelection(body.staff, 'Company(1).staff');
    });
  });

});
