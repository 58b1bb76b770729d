import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Datastore, type DatastoreWithClasses } from '../src/datastore/datastore.js';
import type { Entity } from '../src/datastore/entity.js';
import { DatasetError } from '../src/errors/dataset-error.js';
import { buildModel } from '../src/model/load-model.js';
import { SqliteAdapter } from '../src/storage/sqlite.js';
import { tempDir } from './helpers.js';

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
  return Datastore.open(buildModel(MODEL), new SqliteAdapter(file));
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
});
