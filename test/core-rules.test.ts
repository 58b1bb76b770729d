// The datastore is the only door to data: the rules of a save hold for code as they do for REST
// (a related entity must exist, a file must fit its attribute), and user classes — which extend
// the core's classes — reach no storage, file store or internal machinery.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { Datastore, type DatastoreWithClasses } from '../src/datastore/datastore.js';
import { DatasetError } from '../src/errors/dataset-error.js';
import { buildModel } from '../src/model/load-model.js';
import { sqliteStorage } from '../src/storage/open.js';
import { tempDir } from './helpers.js';

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
    ds = await Datastore.open(MODEL, sqliteStorage(join(tmp.dir, 'rules.sqlite')));
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
    ds = await Datastore.open(MODEL, sqliteStorage(join(tmp.dir, 'reach.sqlite')));
  });
  after(async () => {
    await ds.close();
    tmp.remove();
  });

  it('has no storage, file store or entity-set store on the datastore a DataStore class extends', () => {
    for (const name of ['storage', 'files', 'entitySets', 'onEventError', 'functionTimeoutMs', 'countWhere', 'storeNew', 'storeUpdate', 'storeDrop', 'recordQueryPath']) {
      assert.equal((ds as unknown as Record<string, unknown>)[name], undefined, name);
    }
  });

  it('keeps the machinery of dataclasses, selections and entities off the classes user code extends', () => {
    const dc = ds.Company as unknown as Record<string, unknown>;
    for (const name of ['readEntities', 'selectionWhere', 'entityFromRow', 'entityColumns', 'relatedTo', 'useEntityClass', 'events', 'calculated']) assert.equal(dc[name], undefined, `DataClass.${name}`);
    const selection = ds.Company.all() as unknown as Record<string, unknown>;
    for (const name of ['source', 'queryAs', 'withOrder', 'page', 'spec', 'membersCondition']) assert.equal(selection[name], undefined, `EntitySelection.${name}`);
    const entity = ds.Company.new() as unknown as Record<string, unknown>;
    assert.equal(entity.relatedKey, undefined);
    assert.equal((ds.Company.new().constructor as unknown as Record<string, unknown>).create, undefined);
  });
});
