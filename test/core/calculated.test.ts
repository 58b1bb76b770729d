// Calculated attributes with code registered on their dataclass: values in reads, set functions,
// query and orderBy functions in queries and sorts, and the errors when a function is missing.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Datastore, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import type { Entity } from '../../src/datastore/entities/entity.js';
import { DatasetError } from '../../src/errors/dataset-error.js';
import { buildModel } from '../../src/model/load-model.js';
import { buildServer } from '../../src/http/server.js';
import { tempDir, testStorage } from '../support/helpers.js';

const MODEL = buildModel({
  name: 'Calc',
  dataClasses: [
    {
      name: 'Company',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
        { name: 'staff', kind: 'relatedEntities', type: 'PersonSelection', path: 'employer' },
        { name: 'loud', kind: 'calculated', type: 'string' },
      ],
    },
    {
      name: 'Person',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'firstName', type: 'string' },
        { name: 'lastName', type: 'string' },
        { name: 'salary', type: 'number' },
        { name: 'employer', kind: 'relatedEntity', type: 'Company' },
        { name: 'fullName', kind: 'calculated', type: 'string' },
        { name: 'yearly', kind: 'calculated', type: 'number' },
        { name: 'nothing', kind: 'calculated', type: 'string' },
      ],
    },
  ],
});

describe('calculated attributes', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  const names = async (q: string, ...params: unknown[]) => (await ds.Person.query(q, ...params).orderBy('ID').toArray()).map((e) => e.get('firstName'));

  before(async () => {
    ds = await Datastore.open(MODEL, await testStorage(join(tmp.dir, 'calc.sqlite')));
    ds.Person.defineCalculated('fullName', {
      get: (e) => `${e.get('firstName')} ${e.get('lastName')}`,
      set: (e, value) => {
        const [first, ...rest] = String(value).split(' ');
        e.set('firstName', first);
        e.set('lastName', rest.join(' '));
      },
      query: ({ operator, value }) => {
        const [first, ...rest] = String(value).split(' ');
        if (operator === '==' && rest.length > 0) return { query: 'firstName = :1 and lastName = :2', parameters: [first, rest.join(' ')] };
        return { query: `lastName ${operator} :1 or firstName ${operator} :1`, parameters: [value] };
      },
      orderBy: ({ descending }) => (descending ? 'firstName desc, lastName desc' : 'firstName, lastName'),
    });
    // an async get, and a query function on a number
    ds.Person.defineCalculated('yearly', {
      get: async (e) => (e.get('salary') as number) * 12,
      query: ({ operator, value }) => `salary ${operator} ${Number(value) / 12}`,
      orderBy: ({ operator }) => `salary ${operator}`,
    });
    ds.Company.defineCalculated('loud', { get: (e) => String(e.get('name')).toUpperCase(), query: ({ operator, value }) => `name ${operator} :1 `.replace(':1', JSON.stringify(value)) });
    await ds.transaction(async () => {
      const acme = ds.Company.new();
      acme.set('name', 'Acme');
      await acme.save();
      for (const [first, last, salary] of [['Anna', 'Smith', 1000], ['Bob', 'Jones', 3000], ['Anna', 'Jones', 2000]] as const) {
        const p = ds.Person.new();
        p.set('firstName', first);
        p.set('lastName', last);
        p.set('salary', salary);
        p.set('employer', acme);
        await p.save();
      }
    });
    app = await buildServer(ds, { logLevel: 'silent' });
  });
  after(async () => {
    await app.close();
    await ds.close();
    tmp.remove();
  });

  it('reads a value from the get function, in code and over REST (async functions too)', async () => {
    const p = (await ds.Person.get(1)) as Entity;
    assert.equal(p.get('fullName'), 'Anna Smith');
    const res = JSON.parse((await app.inject({ url: '/rest/Person(1)' })).body);
    assert.equal(res.fullName, 'Anna Smith');
    assert.equal(res.yearly, 12000);
    assert.equal(res.nothing, null);
  });

  it('writes through the set function', async () => {
    const p = ds.Person.new();
    p.set('fullName', 'Zoé de la Fontaine');
    assert.equal(p.get('firstName'), 'Zoé');
    assert.equal(p.get('lastName'), 'de la Fontaine');
    assert.throws(() => p.set('nothing', 'x'), /without a set function/);
  });

  it('queries through the query function, whatever the operator', async () => {
    assert.deepEqual(await names('fullName = :1', 'anna jones'), ['Anna']);
    assert.deepEqual(await names('fullName = jones'), ['Bob', 'Anna']);
    assert.deepEqual(await names('yearly >= 24000'), ['Bob', 'Anna']);
    assert.deepEqual(await names('yearly < 24000 or fullName = bob'), ['Anna', 'Bob']);
  });

  it('queries a calculated attribute across a relation, both ways', async () => {
    assert.deepEqual(await names('employer.loud = acme'), ['Anna', 'Bob', 'Anna']);
    assert.equal(await ds.Company.query('staff.yearly > 30000').length, 1);
    assert.equal(await ds.Company.query('staff.yearly > 50000').length, 0);
  });

  it('sorts through the orderBy function, in $orderby and in order by', async () => {
    const sorted = (await ds.Person.all().orderBy('fullName desc').toArray()).map((e) => e.get('fullName'));
    assert.deepEqual(sorted, ['Bob Jones', 'Anna Smith', 'Anna Jones']);
    const byYearly = JSON.parse((await app.inject({ url: '/rest/Person?$orderby=yearly%20desc&$attributes=firstName' })).body);
    assert.deepEqual(byYearly.__ENTITIES.map((e: { firstName: string }) => e.firstName), ['Bob', 'Anna', 'Anna']);
    assert.deepEqual((await ds.Person.query('salary > 0 order by yearly').toArray()).map((e) => e.get('salary')), [1000, 2000, 3000]);
  });

  it('lists a calculated attribute with a set function as writable in the catalog', async () => {
    const catalog = JSON.parse((await app.inject({ url: '/rest/$catalog/Person' })).body);
    const attr = (name: string) => catalog.attributes.find((a: { name: string }) => a.name === name);
    assert.equal(attr('fullName').readOnly, undefined);
    assert.equal(attr('nothing').readOnly, true);
  });

  it('refuses to query or sort by a calculated attribute without the function, naming it', async () => {
    assert.throws(() => ds.Person.query('nothing = x'), (e: DatasetError) => e.code === 'INVALID_FILTER' && /Person\.nothing is a calculated attribute without a query function/.test(e.message));
    assert.throws(() => ds.Person.all().orderBy('nothing'), (e: DatasetError) => e.code === 'INVALID_ORDER_BY' && /has no orderBy function/.test(e.message));
    const res = await app.inject({ url: '/rest/Person?$filter=nothing%20%3D%20x' });
    assert.equal(res.statusCode, 400);
  });

  it('refuses a definition for an attribute that is not calculated', () => {
    assert.throws(() => ds.Person.defineCalculated('lastName', {}), /not a calculated attribute/);
  });
});
