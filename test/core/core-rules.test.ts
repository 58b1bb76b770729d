// The datastore is the only door to data: the rules of a save hold for code as they do for REST
// (a related entity must exist, a file must fit its attribute), and user classes — which extend
// the core's classes — reach no storage, file store or internal machinery.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { Access } from '../../src/datastore/access/access.js';
import { coreOf, Datastore, type Core, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import type { EntitySelection } from '../../src/datastore/selections/selection.js';
import { deleteEntity, updateEntity } from '../../src/datastore/writes/writes.js';
import type { StorageAttribute } from '../../src/model/types.js';
import { directPath } from '../../src/query/plan.js';
import { DatasetError } from '../../src/errors/dataset-error.js';
import { buildModel } from '../../src/model/load-model.js';
import { tempDir, testStorage } from '../support/helpers.js';

const MODEL = buildModel({
  name: 'Rules',
  dataClasses: [
    {
      name: 'Company',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
        { name: 'logo', type: 'image' },
        { name: 'contract', type: 'blob' },
        { name: 'staff', kind: 'relatedEntities', type: 'EmployeeSelection', path: 'employer' },
      ],
    },
    {
      name: 'Employee',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
        { name: 'employer', kind: 'relatedEntity', type: 'Company' },
      ],
    },
  ],
});

const code = (name: string) => (e: unknown) => e instanceof DatasetError && e.code === name;

describe('the rules of a save, for code as for REST', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let png: Buffer;
  before(async () => {
    ds = await Datastore.open(MODEL, await testStorage(join(tmp.dir, 'rules.sqlite')));
    png = await sharp({ create: { width: 2, height: 2, channels: 3, background: '#f00' } }).png().toBuffer();
    const acme = ds.Company.new();
    acme.set('name', 'Acme');
    await acme.save();
  });
  after(async () => {
    await ds.close();
    tmp.remove();
  });

  it('refuses a foreign key that names no entity, set through the relation or the key itself (1542)', async () => {
    const e = ds.Employee.new();
    e.set('name', 'Dangling');
    e.set('employerID', 999999);
    await assert.rejects(e.save(), (err: DatasetError) => code('ENTITY_NOT_FOUND')(err) && /Employee\.employer: Cannot find entity with "999999" key in the "Company" dataclass/.test(err.message));
    assert.equal(await ds.Employee.query('name = Dangling').length, 0);
    await assert.rejects(e.validate(), code('ENTITY_NOT_FOUND'));
    e.set('employerID', 1);
    await e.save();
    assert.equal((await e.related('employer') as { getKey(): unknown }).getKey(), 1);
  });

  it('refuses a file that is no image in an image attribute (7025); takes an image there, and any file a code stored in a blob', async () => {
    const company = (await ds.Company.get(1))!;
    company.set('logo', await ds.storeFile(Buffer.from('plain text, not a picture')));
    await assert.rejects(company.save(), (err: DatasetError) => code('UPLOAD_WRONG_KIND')(err) && /Company\.logo is an image attribute: it takes an image, and the bytes of file \d+ are none/.test(err.message));
    // a type given by the caller does not make bytes an image
    company.set('logo', await ds.storeFile(Buffer.from('plain text, not a picture'), 'image/png'));
    await assert.rejects(company.save(), code('UPLOAD_WRONG_KIND'));
    company.set('logo', await ds.storeFile(png));
    company.set('contract', await ds.storeFile(png));
    await company.save();
    assert.equal((await ds.Company.get(1))?.getStamp(), 2);
  });

  it('drops every entity of a selection in one transaction', async () => {
    for (const name of ['A', 'B', 'C']) {
      const e = ds.Employee.new();
      e.set('name', name);
      await e.save();
    }
    await ds.Employee.query('name in :1', ['A', 'B']).drop();
    assert.deepEqual((await ds.Employee.query('name in :1', ['A', 'B', 'C']).toArray()).map((e) => e.get('name')), ['C']);
  });
});

describe('what user code can reach', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  before(async () => {
    ds = await Datastore.open(MODEL, await testStorage(join(tmp.dir, 'reach.sqlite')));
  });
  after(async () => {
    await ds.close();
    tmp.remove();
  });

  /** Every member an object shows, own or inherited (Object's own left out). */
  function members(o: object): string[] {
    const out = new Set<string>();
    for (let p: object | null = o; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) for (const k of Reflect.ownKeys(p)) out.add(String(k));
    return [...out].sort();
  }

  it('shows user code only the documented API of the datastore, dataclasses, selections and entities: no storage, file store or machinery', () => {
    // a new member here is a decision: public API (README, index.ts), or a door to close
    assert.deepEqual(members(ds), ['Company', 'Employee', 'close', 'constructor', 'dataClass', 'dataClasses', 'getGlobalStamp', 'globalStamp', 'model', 'name', 'setGlobalStamp', 'storeFile', 'transaction']);
    assert.deepEqual(members(ds.Company), ['all', 'constructor', 'defineCalculated', 'defineEvent', 'ds', 'findBy', 'get', 'getMany', 'model', 'name', 'new', 'query']);
    assert.deepEqual(members(ds.Company.all()), [
      'Symbol(Symbol.asyncIterator)', 'average', 'constructor', 'count', 'distinct', 'drop', 'first', 'getDataClass', 'keys', 'length', 'max', 'min', 'orderBy', 'query', 'slice', 'sum', 'toArray',
    ]);
    // (an entity shows its attributes too: ID, name, logo …)
    const attributes = MODEL.dataClassesByName.get('Company')!.attributes.map((a) => a.name);
    assert.deepEqual(members(ds.Company.new()).filter((m) => !attributes.includes(m)), [
      'constructor', 'drop', 'get', 'getDataClass', 'getKey', 'getStamp', 'getTimeStamp', 'isNew', 'list', 'lock', 'related', 'save', 'set', 'touchedAttributes', 'unlock', 'validate',
    ]);
    assert.deepEqual(Reflect.ownKeys(ds.Company.new().constructor).map(String).sort(), ['length', 'name', 'prototype']);
  });
});

describe('a caller whose access filters rows', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let core: Core;
  let access: Access;
  const keys: Record<string, unknown> = {};
  before(async () => {
    ds = await Datastore.open(MODEL, await testStorage(join(tmp.dir, 'restrict.sqlite')));
    core = coreOf(ds);
    const acme = ds.Company.new();
    acme.set('name', 'Acme');
    await acme.save();
    for (const name of ['Seen', 'Hidden', 'Also seen']) {
      const e = ds.Employee.new();
      e.set('name', name);
      e.set('employer', acme);
      await e.save();
      keys[name] = e.getKey();
    }
    // this caller may not reach the employee named Hidden
    const name = MODEL.dataClassesByName.get('Employee')!.attributesByName.get('name') as StorageAttribute;
    access = { ...core.root, restrict: (dc) => (dc.name === 'Employee' ? { kind: 'compare', path: directPath(name), op: '!=', value: 'Hidden' } : null) };
  });
  after(async () => {
    await ds.close();
    tmp.remove();
  });
  const employees = () => core.classOf(MODEL.dataClassesByName.get('Employee')!);
  const names = async (s: { toArray(): Promise<{ get(n: string): unknown }[]> }) => (await s.toArray()).map((e) => e.get('name')).sort();

  it('reads, counts, queries, follows relations and computes without the rows it may not reach', async () => {
    assert.equal(await employees().get(keys.Hidden, access), null);
    assert.ok(await employees().get(keys.Seen, access));
    const all = employees().selectWhere(null, access);
    assert.equal(await all.length, 2);
    assert.deepEqual(await names(all), ['Also seen', 'Seen']);
    assert.deepEqual(await names(all.query('name = :1', 'Hidden')), []);
    assert.equal(await all.count('ID'), 2);
    const acme = (await core.classOf(MODEL.dataClassesByName.get('Company')!).get(1, access))!;
    assert.deepEqual(await names(acme.related('staff') as EntitySelection), ['Also seen', 'Seen']);
    assert.equal((await employees().getMany([keys.Seen, keys.Hidden], access))[1], null);
  });

  it('neither changes nor drops the rows it may not reach (1542, as if they were not there)', async () => {
    const hidden = (await ds.Employee.get(keys.Hidden))!;
    await assert.rejects(updateEntity(employees(), keys.Hidden, hidden.getStamp(), new Map([[MODEL.dataClassesByName.get('Employee')!.attributesByName.get('name') as StorageAttribute, 'Changed']]), access), code('ENTITY_NOT_FOUND'));
    await assert.rejects(deleteEntity(core, MODEL.dataClassesByName.get('Employee')!, keys.Hidden, hidden.getStamp(), access), code('ENTITY_NOT_FOUND'));
    await employees().selectWhere(null, access).drop();
    assert.deepEqual(await names(ds.Employee.all()), ['Hidden']);
    assert.equal((await ds.Employee.get(keys.Hidden))?.get('name'), 'Hidden');
  });
});
