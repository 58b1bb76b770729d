import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Datastore, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import type { Entity } from '../../src/datastore/entities/entity.js';
import { DatasetError } from '../../src/errors/dataset-error.js';
import { buildModel } from '../../src/model/load-model.js';
import { tempDir, openDemoProject, testDatabase, testStorage } from '../support/helpers.js';

const MODEL = {
  name: 'Core',
  dataClasses: [
    {
      name: 'Dept',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string', unique: true },
        { name: 'members', kind: 'relatedEntities', type: 'PersonSelection', path: 'dept' },
      ],
    },
    {
      name: 'Person',
      attributes: [
        { name: 'ID', type: 'uuid', identifying: true, autogenerate: true },
        { name: 'name', type: 'string' },
        { name: 'age', type: 'long' },
        { name: 'born', type: 'date', dateOnly: true },
        { name: 'seen', type: 'date' },
        { name: 'active', type: 'bool' },
        { name: 'info', type: 'object' },
        { name: 'dept', kind: 'relatedEntity', type: 'Dept', foreignKey: 'deptID' },
        { name: 'deptName', kind: 'alias', path: 'dept.name' },
      ],
    },
  ],
};

async function openCore(file: string): Promise<DatastoreWithClasses> {
  return Datastore.open(buildModel(MODEL), await testStorage(file));
}

describe('datastore core', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let depts: Entity[];

  before(async () => {
    ds = await openCore(join(tmp.dir, 'core.sqlite'));
    depts = [];
    for (const name of ['Sales', 'Research', 'Support']) {
      const d = ds.Dept.new();
      d.set('name', name);
      await d.save();
      depts.push(d);
    }
    for (let i = 0; i < 25; i++) {
      const p = ds.Person.new();
      p.set('name', `P${String(i).padStart(2, '0')}`);
      p.set('age', 20 + (i % 7));
      p.set('dept', depts[i % 3]);
      await p.save();
    }
  });
  after(async () => {
    await ds.close();
    tmp.remove();
  });

  it('saves a new entity and reads every type back', async () => {
    const p = ds.Person.new();
    p.set('name', 'Zoé');
    p.set('age', 41);
    p.set('born', new Date('1985-03-09T00:00:00Z'));
    p.set('seen', new Date('2026-01-02T03:04:05.678Z'));
    p.set('active', true);
    p.set('info', { tags: ['a', 'b'], n: 1 });
    p.set('dept', depts[1]);
    assert.equal(p.isNew(), true);
    await p.save();
    assert.equal(p.isNew(), false);
    assert.match(String(p.getKey()), /^[0-9A-F]{32}$/);
    assert.equal(p.getStamp(), 1);
    const again = (await ds.Person.get(p.getKey())) as Entity & Record<string, unknown>;
    assert.ok(again);
    assert.equal(again.name, 'Zoé');
    assert.equal(again.age, 41);
    assert.deepEqual(again.born, new Date('1985-03-09T00:00:00Z'));
    assert.deepEqual(again.seen, new Date('2026-01-02T03:04:05.678Z'));
    assert.equal(again.active, true);
    assert.deepEqual(again.info, { tags: ['a', 'b'], n: 1 });
    const dept = (await again.dept) as Entity;
    assert.equal(dept.get('name'), 'Research');
  });

  it('get() answers null for an unknown key or a value that cannot be a key', async () => {
    assert.equal(await ds.Dept.get(999), null);
    assert.equal(await ds.Dept.get('abc'), null);
    assert.equal(await ds.Person.get('not-a-uuid'), null);
  });

  it('increases the stamp on every save and refuses a save from a stale copy with 1263, 1046, 1517', async () => {
    const a = (await ds.Dept.get(1)) as Entity;
    const b = (await ds.Dept.get(1)) as Entity;
    a.set('name', 'Sales & Marketing');
    await a.save();
    assert.equal(a.getStamp(), b.getStamp() + 1);
    b.set('name', 'Other');
    await assert.rejects(b.save(), (e: DatasetError) => {
      assert.deepEqual(e.toWire().map((w) => w.errCode), [1263, 1046, 1517]);
      return true;
    });
    assert.equal(((await ds.Dept.get(1)) as Entity).get('name'), 'Sales & Marketing');
  });

  it('a save with nothing touched does nothing', async () => {
    const d = (await ds.Dept.get(2)) as Entity;
    const stamp = d.getStamp();
    await d.save();
    assert.equal(((await ds.Dept.get(2)) as Entity).getStamp(), stamp);
  });

  it('reports a unique violation with the attribute name', async () => {
    const d = ds.Dept.new();
    d.set('name', 'Research');
    await assert.rejects(d.save(), (e: DatasetError) => e.code === 'VALUE_NOT_UNIQUE' && /'name'/.test(e.message));
  });

  it('counts, slices and orders selections in SQL', async () => {
    const all = ds.Person.all();
    const n = await all.length;
    assert.ok(n >= 25);
    const byName = all.orderBy('name desc');
    const first3 = await byName.slice(0, 3).toArray();
    assert.deepEqual(first3.map((e) => e.get('name')), ['Zoé', 'P24', 'P23']);
    assert.equal(await byName.slice(2, 5).length, 3);
    assert.equal(await byName.slice(n - 1).length, 1);
    assert.equal(await byName.slice(n + 5).length, 0);
    // a slice of a slice, then re-sorted: same members, new order
    const window = byName.slice(1, 6).slice(1, 3); // P23, P22
    assert.deepEqual((await window.orderBy('name').toArray()).map((e) => e.get('name')), ['P22', 'P23']);
    assert.equal((await all.orderBy('dept.name, name').first())?.get('name'), 'P01');
  });

  it('iterates a selection in chunks with for await', async () => {
    let count = 0;
    for await (const e of ds.Person.all()) {
      assert.ok(e.getKey());
      count++;
    }
    assert.equal(count, await ds.Person.all().length);
  });

  it('navigates both relation directions', async () => {
    const research = (await ds.Dept.get(2)) as Entity & Record<string, unknown>;
    const members = research.members as ReturnType<typeof ds.Person.all>;
    assert.equal(await members.length, 9); // 8 seeded + Zoé
    const member = (await members.first()) as Entity;
    assert.equal(((await member.related('dept')) as Entity).getKey(), 2);
  });

  it('refuses unknown attributes and sorting by relations with clear errors', () => {
    const p = ds.Person.new();
    assert.throws(() => p.set('nmae', 1), (e: DatasetError) => e.code === 'UNKNOWN_ATTRIBUTE');
    assert.throws(() => ds.Person.all().orderBy('nmae'), (e: DatasetError) => e.code === 'UNKNOWN_ATTRIBUTE' && /did you mean 'name'/.test(e.message));
    assert.throws(() => ds.Dept.all().orderBy('members'), (e: DatasetError) => e.code === 'INVALID_ORDER_BY');
  });

  it('rolls back every save of a failed transaction', async () => {
    const before = await ds.Dept.all().length;
    await assert.rejects(ds.transaction(async () => {
      const d = ds.Dept.new();
      d.set('name', 'Temporary');
      await d.save();
      throw new Error('abort');
    }), /abort/);
    assert.equal(await ds.Dept.all().length, before);
  });

  it('reads outside a transaction see only committed data, without waiting', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const before = await ds.Dept.all().length;
    const tx = ds.transaction(async () => {
      const d = ds.Dept.new();
      d.set('name', 'Pending');
      await d.save();
      await gate;
    });
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(await ds.Dept.all().length, before); // the open transaction is not visible
    release();
    await tx;
    assert.equal(await ds.Dept.all().length, before + 1);
  });

  it('increases the global stamp on saves and drops; a dropped entity is gone', async () => {
    const g0 = await ds.globalStamp();
    const d = ds.Dept.new();
    d.set('name', 'Short-lived');
    await d.save();
    assert.equal(await ds.globalStamp(), g0 + 1);
    await d.drop();
    assert.equal(await ds.globalStamp(), g0 + 2);
    assert.equal(await ds.Dept.get(d.getKey()), null);
    await assert.rejects(d.drop(), (e: DatasetError) => e.code === 'ENTITY_NOT_FOUND');
  });

  it('gives entities their former state back when the transaction that saved them rolls back', async () => {
    const d = (await ds.Dept.get(3)) as Entity;
    const stamp = d.getStamp();
    d.set('name', 'Support 2');
    const fresh = ds.Dept.new();
    fresh.set('name', 'Never');
    await assert.rejects(ds.transaction(async () => {
      await d.save();
      await fresh.save();
      throw new Error('abort');
    }), /abort/);
    assert.equal(d.getStamp(), stamp);
    assert.deepEqual(d.touchedAttributes(), ['name']);
    assert.equal(fresh.isNew(), true);
    assert.equal(fresh.getKey(), null);
    // both can still be saved afterwards
    await d.save();
    await fresh.save();
    assert.equal(((await ds.Dept.get(3)) as Entity).get('name'), 'Support 2');
    assert.equal(fresh.isNew(), false);
  });

  it('refuses to drop an entity someone saved since it was read (1263), and drops a fresh copy', async () => {
    const d = ds.Dept.new();
    d.set('name', 'To drop');
    await d.save();
    const a = (await ds.Dept.get(d.getKey())) as Entity;
    const b = (await ds.Dept.get(d.getKey())) as Entity;
    b.set('name', 'Renamed');
    await b.save();
    await assert.rejects(a.drop(), (e: DatasetError) => e.toWire()[0].errCode === 1263);
    await b.drop();
    assert.equal(await ds.Dept.get(d.getKey()), null);
  });

  it('converts and checks values in set(): dates from text, numbers in range, uuids, refusals name the attribute', () => {
    const p = ds.Person.new() as Entity & Record<string, unknown>;
    p.set('seen', '2020-01-02T03:04:05Z');
    assert.deepEqual(p.seen, new Date('2020-01-02T03:04:05Z'));
    p.set('born', '05!10!2013');
    assert.deepEqual(p.born, new Date('2013-10-05T00:00:00Z'));
    p.set('born', '2013-10-05T23:30:00Z'); // date-only: the time is dropped
    assert.deepEqual(p.born, new Date('2013-10-05T00:00:00Z'));
    p.set('age', '42');
    assert.equal(p.age, 42);
    for (const [name, value, why] of [
      ['age', 'lots', /Person\.age \(long\) cannot take "lots": expected a whole number/],
      ['age', 2 ** 40, /out of range/],
      ['active', 'yes', /expected true or false/],
      ['seen', 'someday', /expected a date/],
      ['name', 12, /expected text/],
    ] as const) {
      assert.throws(() => p.set(name, value), (e: DatasetError) => e.code === 'INVALID_VALUE' && why.test(e.message));
    }
  });

  it('refuses a relation to an entity that is not saved yet', () => {
    const p = ds.Person.new();
    assert.throws(() => p.set('dept', ds.Dept.new()), /not saved yet/);
  });

  it('keeps a value set while a save is under way touched for the next save', async () => {
    const p = ds.Person.new();
    p.set('name', 'Racer');
    const saving = p.save();
    p.set('age', 99);
    await saving;
    assert.deepEqual(p.touchedAttributes(), ['age']);
    await p.save();
    assert.equal(((await ds.Person.get(p.getKey())) as Entity).get('age'), 99);
  });

  it('reads scalar aliases with every entity, lists and alias relations on demand', async () => {
    const p = (await ds.Person.all().orderBy('name').first()) as Entity;
    assert.equal(p.get('deptName'), ((await p.related('dept')) as Entity).get('name'));
    assert.throws(() => p.get('dept'), /use await entity\.related/);
  });

  it('gives a new entity empty 1→N relations', async () => {
    const d = ds.Dept.new();
    assert.equal(await (d.related('members') as ReturnType<typeof ds.Person.all>).length, 0);
  });

  it('finds an entity by a storage attribute, in key order', async () => {
    const e = (await ds.Person.findBy('age', '20')) as Entity;
    assert.equal(e.get('age'), 20);
    assert.equal(await ds.Person.findBy('age', 1000), null);
    await assert.rejects(ds.Person.findBy('agee', 1), (err: DatasetError) => err.code === 'UNKNOWN_ATTRIBUTE');
  });
});

describe('a new database', () => {
  it('is seeded once when two instances start on it together, and not again at the next start', async () => {
    const tmp = tempDir();
    const db = await testDatabase(join(tmp.dir, 'race.sqlite'));
    try {
      const both = await Promise.all([openDemoProject({ db, poolSize: 4 }), openDemoProject({ db, poolSize: 4 })]);
      assert.deepEqual(await Promise.all(both.map((ds) => ds.City.all().length)), [20, 20]);
      await Promise.all(both.map((ds) => ds.close()));
      const again = await openDemoProject({ db, poolSize: 4 });
      assert.equal(await again.City.all().length, 20);
      await again.close();
    } finally {
      tmp.remove();
    }
  });
});
