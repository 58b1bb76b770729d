// Entity events (reference §6.5) declared by a user entity class: constructor, touched,
// validateSave, saving, afterSave, validateDrop, dropping, afterDrop, at attribute and entity
// level, in 4D's order; error objects stopping saves and drops as DBEV errors (mild or serious);
// throwing events; and the demo's events, through the core and through REST.

import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import type { Entity } from '../../src/datastore/entities/entity.js';
import type { EntityEvent } from '../../src/datastore/entities/events.js';
import { ERRORS } from '../../src/errors/registry.js';
import { DatasetError } from '../../src/errors/dataset-error.js';
import { openProject } from '../../src/project/open.js';
import { openDemo, tempDir, testDatabase } from '../support/helpers.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

const MODEL = {
  name: 'Events',
  dataClasses: [
    {
      name: 'Company',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
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
      ],
    },
  ],
};

/** Every event records itself in globalThis.__events and answers what globalThis.__eventConfig says for it. */
const PERSON_ENTITY = `
import { Entity, type EntityEvent } from 'dataset-rest';
const g = globalThis as any;
function rec(entity: Entity, key: string, event?: EntityEvent): unknown {
  g.__events.push(key);
  if (event) g.__eventArgs.push({ key, event, entity });
  const r = g.__eventConfig[key];
  if (r === 'throw') throw new Error('event failed: ' + key);
  return typeof r === 'function' ? r(entity, event) : r;
}
export default class PersonEntity extends Entity {
  constructor() {
    super();
    rec(this, 'constructor');
    if (this.isNew()) this.set('salary', 100);
  }
  touched(e: EntityEvent) { return rec(this, 'touched', e); }
  touchedSalary(e: EntityEvent) { return rec(this, 'touched:salary', e); }
  touchedEmployer(e: EntityEvent) { return rec(this, 'touched:employer', e); }
  validateSaveLastName(e: EntityEvent) { return rec(this, 'validateSave:lastName', e); }
  validateSaveSalary(e: EntityEvent) { return rec(this, 'validateSave:salary', e); }
  async validateSave(e: EntityEvent) { await new Promise((r) => setTimeout(r, 1)); return rec(this, 'validateSave', e); }
  savingLastName(e: EntityEvent) { return rec(this, 'saving:lastName', e); }
  savingSalary(e: EntityEvent) { return rec(this, 'saving:salary', e); }
  saving(e: EntityEvent) { return rec(this, 'saving', e); }
  afterSave(e: EntityEvent) { return rec(this, 'afterSave', e); }
  validateDropSalary(e: EntityEvent) { return rec(this, 'validateDrop:salary', e); }
  validateDrop(e: EntityEvent) { return rec(this, 'validateDrop', e); }
  droppingSalary(e: EntityEvent) { return rec(this, 'dropping:salary', e); }
  async dropping(e: EntityEvent) { return rec(this, 'dropping', e); }
  afterDrop(e: EntityEvent) { return rec(this, 'afterDrop', e); }
}
`;

interface Globals {
  __events: string[];
  __eventArgs: { key: string; event: EntityEvent; entity: Entity }[];
  __eventConfig: Record<string, unknown>;
}
const g = globalThis as unknown as Globals;

function reset(config: Record<string, unknown> = {}): void {
  g.__events = [];
  g.__eventArgs = [];
  g.__eventConfig = config;
}
reset();

const argsOf = (key: string) => g.__eventArgs.filter((a) => a.key === key).map((a) => a.event);

describe('entity events', () => {
  let tmp: ReturnType<typeof tempDir>;
  let ds: DatastoreWithClasses;
  const reported: { kind: string; attributeName?: string; error: unknown }[] = [];

  before(async () => {
    tmp = tempDir('dataset-rest-events-');
    writeFileSync(join(tmp.dir, 'model.json'), JSON.stringify(MODEL));
    mkdirSync(join(tmp.dir, 'classes'));
    mkdirSync(join(tmp.dir, 'node_modules'));
    symlinkSync(REPO, join(tmp.dir, 'node_modules', 'dataset-rest'), 'dir');
    writeFileSync(join(tmp.dir, 'classes', 'PersonEntity.ts'), PERSON_ENTITY);
    ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'data.sqlite')), onEventError: (info) => void reported.push(info) });
  });
  after(async () => {
    await ds.close();
    tmp.remove();
  });
  beforeEach(() => {
    reset();
    reported.length = 0;
  });

  /** A saved person (its creation's events are forgotten). */
  async function saved(lastName = 'Saved'): Promise<Entity> {
    const p = ds.Person.new();
    p.set('lastName', lastName);
    await p.save();
    reset();
    return p;
  }
  const count = () => ds.Person.all().length;

  describe('constructor and touched', () => {
    it('runs the constructor for new entities, with touched events for its values, and the caller\'s values win', async () => {
      const p = ds.Person.new();
      assert.deepEqual(g.__events, ['constructor', 'touched:salary', 'touched']);
      assert.equal(p.get('salary'), 100);
      assert.deepEqual(argsOf('touched:salary'), [{ kind: 'touched', attributeName: 'salary', dataClassName: 'Person' }]);
      assert.deepEqual(argsOf('touched'), [{ kind: 'touched', attributeName: 'salary', dataClassName: 'Person' }], 'entity level names the attribute too');
      p.set('salary', 500);
      await p.save();
      assert.equal((await ds.Person.get(p.getKey()))?.get('salary'), 500);
    });

    it('ignores what the constructor sets on entities read from the database, and runs no touched event for them', async () => {
      const p = ds.Person.new();
      p.set('salary', 7);
      await p.save();
      reset();
      const read = await ds.Person.get(p.getKey());
      assert.deepEqual(g.__events, ['constructor']);
      assert.equal(read?.get('salary'), 7);
      assert.deepEqual(read?.touchedAttributes(), []);
      assert.equal(read?.isNew(), false);
    });

    it('runs touched at attribute level, then entity level, for each set; a relation is touched by its name', async () => {
      const p = await saved();
      p.set('firstName', 'Ann');
      p.set('salary', 1);
      const acme = ds.Company.new();
      acme.set('name', 'Acme');
      await acme.save();
      p.set('employer', acme);
      assert.deepEqual(g.__events, ['touched', 'touched:salary', 'touched', 'touched:employer', 'touched']);
    });

    it('runs no touched event for values set inside a touched event, and reports a failing one without stopping the set', async () => {
      const p = await saved();
      reset({ 'touched:salary': (e: Entity) => e.set('firstName', 'Changed'), touched: 'throw' });
      p.set('salary', 9);
      assert.deepEqual(g.__events, ['touched:salary', 'touched']);
      assert.equal(p.get('salary'), 9);
      assert.equal(p.get('firstName'), 'Changed');
      assert.equal(reported.length, 1);
      assert.equal(reported[0].kind, 'touched');
      assert.match(String(reported[0].error), /event failed: touched/);
    });
  });

  describe('save', () => {
    it('runs validateSave, saving (attribute level first, in model order) and afterSave around the write of a new entity', async () => {
      const p = ds.Person.new();
      p.set('lastName', 'New');
      reset();
      await p.save();
      assert.deepEqual(g.__events, [
        'validateSave:lastName', 'validateSave:salary', 'validateSave',
        'saving:lastName', 'saving:salary', 'saving',
        'afterSave',
      ]);
      assert.deepEqual(argsOf('validateSave:salary'), [{ kind: 'validateSave', attributeName: 'salary', dataClassName: 'Person' }]);
      assert.deepEqual(argsOf('saving'), [{ kind: 'saving', dataClassName: 'Person' }]);
      const [afterSave] = argsOf('afterSave');
      assert.equal(afterSave.saveStatus, 'success');
      assert.deepEqual([...(afterSave.savedAttributes ?? [])].sort(), ['lastName', 'salary']);
      assert.ok(g.__eventArgs.every((a) => a.entity === p), 'events run with this = the entity');
    });

    it('runs afterSave only once an enclosing transaction commits, and not at all when it rolls back', async () => {
      const p = ds.Person.new();
      p.set('lastName', 'InTx');
      reset();
      await ds.transaction(async () => {
        await p.save();
        assert.ok(!g.__events.includes('afterSave'), 'not before the commit');
      });
      assert.equal(g.__events[g.__events.length - 1], 'afterSave');
      const q = ds.Person.new();
      q.set('lastName', 'RolledBack');
      reset();
      await assert.rejects(ds.transaction(async () => {
        await q.save();
        throw new Error('abort');
      }));
      assert.ok(!g.__events.includes('afterSave'));
    });

    it('runs attribute-level events only for touched attributes', async () => {
      const p = await saved();
      p.set('salary', 42);
      reset();
      await p.save();
      assert.deepEqual(g.__events, ['validateSave:salary', 'validateSave', 'saving:salary', 'saving', 'afterSave']);
      assert.deepEqual(argsOf('afterSave')[0].savedAttributes, ['salary']);
    });

    it('runs no event (and no afterSave) when nothing was touched', async () => {
      const p = await saved();
      await p.save();
      const read = await ds.Person.get(p.getKey());
      reset();
      await read?.save();
      assert.deepEqual(g.__events, []);
    });

    it('lets the saving events change values that are then saved', async () => {
      const p = ds.Person.new();
      p.set('lastName', 'Before');
      reset({ saving: (e: Entity) => e.set('firstName', 'SetWhileSaving') });
      await p.save();
      assert.equal((await ds.Person.get(p.getKey()))?.get('firstName'), 'SetWhileSaving');
    });

    it('stops the save at an error object from an attribute-level validateSave: a mild DBEV error, nothing written', async () => {
      const before = await count();
      const p = ds.Person.new();
      p.set('lastName', 'Refused');
      reset({ 'validateSave:salary': { errCode: 42, message: 'salary too low', extraDescription: { min: 1000 } } });
      await assert.rejects(p.save(), (e: unknown) => {
        assert.ok(e instanceof DatasetError);
        assert.deepEqual(e.toWire(), [{ message: 'salary too low', componentSignature: 'DBEV', errCode: 42, extraDescription: { min: 1000 }, attributeName: 'salary' }]);
        assert.deepEqual(e.validation, { event: 'validateSave', serious: false, status: 'validation failed', statusText: 'Mild Validation Error' });
        return true;
      });
      assert.deepEqual(g.__events, ['validateSave:lastName', 'validateSave:salary'], 'the first error stops the remaining events');
      assert.equal(await count(), before);
      assert.ok(p.isNew());
      // fixed, it saves
      reset();
      await p.save();
      assert.equal(await count(), before + 1);
    });

    it('checks the values it was given before any event runs: a relation to a missing entity is 1542, and no event sees it', async () => {
      const p = ds.Person.new();
      p.set('lastName', 'Orphan');
      p.set('employerID', 424242);
      reset({ validateSave: { errCode: 42, message: 'never reached' } });
      await assert.rejects(p.save(), (e: DatasetError) => e.code === 'ENTITY_NOT_FOUND' && /Person\.employer: Cannot find entity with "424242" key in the "Company" dataclass/.test(e.message));
      assert.deepEqual(g.__events, []);
      assert.ok(p.isNew());
    });

    it('marks a validateSave error with seriousError as a serious validation error', async () => {
      const p = await saved();
      p.set('lastName', 'Changed');
      reset({ validateSave: { errCode: 43, message: 'no', seriousError: true } });
      await assert.rejects(p.save(), (e: unknown) => {
        assert.ok(e instanceof DatasetError);
        assert.equal(e.toWire()[0].componentSignature, 'DBEV');
        assert.equal(e.toWire()[0].errCode, 43);
        assert.deepEqual(e.validation, { event: 'validateSave', serious: true, status: 'serious validation error', statusText: 'Serious Validation Error' });
        return true;
      });
      assert.equal((await ds.Person.get(p.getKey()))?.get('lastName'), 'Saved');
    });

    it('treats a saving error as serious and rolls back what the saving events did', async () => {
      const companies = await ds.Company.all().length;
      const p = await saved();
      p.set('salary', 5);
      p.set('lastName', 'X');
      reset({
        'saving:salary': async () => {
          const c = ds.Company.new();
          c.set('name', 'Side effect');
          await c.save();
        },
        saving: { errCode: 44, message: 'cannot save now', seriousError: false },
      });
      await assert.rejects(p.save(), (e: unknown) => {
        assert.ok(e instanceof DatasetError);
        assert.deepEqual(e.toWire(), [{ message: 'cannot save now', componentSignature: 'DBEV', errCode: 44 }]);
        assert.equal(e.validation?.serious, true);
        assert.equal(e.validation?.statusText, 'Serious Validation Error');
        return true;
      });
      assert.deepEqual(g.__events, ['validateSave:lastName', 'validateSave:salary', 'validateSave', 'saving:lastName', 'saving:salary', 'saving'], 'no afterSave');
      assert.equal(await ds.Company.all().length, companies, 'the company saved by saving:salary was rolled back');
      assert.equal((await ds.Person.get(p.getKey()))?.get('salary'), 100);
    });

    it('reports an event that throws (or rejects) as a serious DBEV error, never a crash', async () => {
      const p = ds.Person.new();
      reset({ validateSave: 'throw' }); // validateSave is async: the throw is a rejection
      await assert.rejects(p.save(), (e: unknown) => {
        assert.ok(e instanceof DatasetError);
        const [wire] = e.toWire();
        assert.equal(wire.componentSignature, 'DBEV');
        assert.equal(wire.errCode, ERRORS.EVENT_FAILED.errCode);
        assert.match(wire.message, /The validateSave event of Person failed/);
        assert.doesNotMatch(wire.message, /event failed: validateSave/, 'the cause is logged, not sent');
        assert.equal(e.validation?.serious, true);
        return true;
      });
      assert.equal(reported.length, 1);
      assert.match(String(reported[0].error), /event failed: validateSave/);
      reset({ 'saving:salary': 'throw' });
      await assert.rejects(p.save(), (e: unknown) => e instanceof DatasetError && /The saving event of Person\.salary failed/.test(e.message));
    });

    it('passes the application\'s own refusal (DatasetError REFUSED, its status and errCode) through as it is, reporting nothing', async () => {
      const p = ds.Person.new();
      reset({ 'validateSave:salary': () => { throw new DatasetError('REFUSED', 'no hiring on Sundays', { status: 409, errCode: 30001 }); } });
      await assert.rejects(p.save(), (e: unknown) => {
        assert.ok(e instanceof DatasetError);
        assert.equal(e.status, 409);
        assert.deepEqual(e.toWire(), [{ message: 'no hiring on Sundays', componentSignature: 'dsrs', errCode: 30001 }]);
        return true;
      });
      assert.equal(reported.length, 0, 'a refusal is no failure to log');
      assert.equal(p.isNew(), true, 'nothing saved');
    });

    it('ignores (and reports) an afterSave error: the save stands', async () => {
      const before = await count();
      const p = ds.Person.new();
      reset({ afterSave: 'throw' });
      await p.save();
      assert.equal(await count(), before + 1);
      assert.equal(reported.length, 1);
      assert.equal(reported[0].kind, 'afterSave');
    });

    it('runs afterSave with saveStatus "failed" when the write fails; event errors come before stamp errors', async () => {
      const p = await saved();
      const stale = await ds.Person.get(p.getKey());
      p.set('salary', 1);
      await p.save();
      stale?.set('salary', 2);
      reset();
      await assert.rejects(stale!.save(), (e: unknown) => e instanceof DatasetError && e.code === 'STAMP_CHANGED');
      assert.deepEqual(g.__events, ['validateSave:salary', 'validateSave', 'saving:salary', 'saving', 'afterSave']);
      assert.equal(argsOf('afterSave')[0].saveStatus, 'failed');
      assert.deepEqual(argsOf('afterSave')[0].savedAttributes, []);
      reset({ validateSave: { errCode: 45, message: 'first' } });
      await assert.rejects(stale!.save(), (e: unknown) => e instanceof DatasetError && e.toWire()[0].componentSignature === 'DBEV');
    });
  });

  describe('drop', () => {
    it('runs validateDrop, dropping (attribute level first) and afterDrop around the delete', async () => {
      const p = await saved('Dropped');
      const key = p.getKey();
      await p.drop();
      assert.deepEqual(g.__events, ['validateDrop:salary', 'validateDrop', 'dropping:salary', 'dropping', 'afterDrop']);
      assert.deepEqual(argsOf('validateDrop:salary'), [{ kind: 'validateDrop', attributeName: 'salary', dataClassName: 'Person' }]);
      const [afterDrop] = argsOf('afterDrop');
      assert.equal(afterDrop.dropStatus, 'success');
      assert.deepEqual(afterDrop.droppedAttributes, ['ID', 'firstName', 'lastName', 'salary', 'employerID']);
      assert.equal(await ds.Person.get(key), null);
    });

    it('stops the drop at an error object from validateDrop (mild) or dropping (serious)', async () => {
      const p = await saved('Kept');
      reset({ 'validateDrop:salary': { errCode: 50, message: 'keep it' } });
      await assert.rejects(p.drop(), (e: unknown) => {
        assert.ok(e instanceof DatasetError);
        assert.deepEqual(e.toWire(), [{ message: 'keep it', componentSignature: 'DBEV', errCode: 50, attributeName: 'salary' }]);
        assert.deepEqual(e.validation, { event: 'validateDrop', serious: false, status: 'validation failed', statusText: 'Mild Validation Error' });
        return true;
      });
      assert.deepEqual(g.__events, ['validateDrop:salary']);
      reset({ dropping: { errCode: 51, message: 'not now' } });
      await assert.rejects(p.drop(), (e: unknown) => e instanceof DatasetError && e.validation?.serious === true && e.toWire()[0].errCode === 51);
      assert.ok(!g.__events.includes('afterDrop'));
      assert.ok(await ds.Person.get(p.getKey()), 'still there');
    });

    it('drops a selection all or nothing: one entity its validateDrop refuses keeps them all, and no afterDrop runs', async () => {
      for (const name of ['Batch A', 'Batch B', 'Batch C']) await saved(name);
      const batch = () => ds.Person.query('lastName begin :1', 'Batch');
      reset({ validateDrop: (e: Entity) => (e.get('lastName') === 'Batch C' ? { errCode: 52, message: 'C stays' } : undefined) });
      await assert.rejects(batch().drop(), (e: unknown) => e instanceof DatasetError && e.toWire()[0].errCode === 52);
      assert.equal(await batch().length, 3, 'the two dropped before C are back');
      assert.ok(!g.__events.includes('afterDrop'), 'no afterDrop for drops that were rolled back');
      reset();
      await batch().drop();
      assert.equal(await batch().length, 0);
    });

    it('runs afterDrop with dropStatus "failed" when the delete fails, and ignores afterDrop errors', async () => {
      const p = await saved();
      const stale = await ds.Person.get(p.getKey());
      p.set('salary', 3);
      await p.save();
      reset({ afterDrop: 'throw' });
      await assert.rejects(stale!.drop(), (e: unknown) => e instanceof DatasetError && e.code === 'STAMP_CHANGED');
      assert.equal(argsOf('afterDrop')[0].dropStatus, 'failed');
      reset({ afterDrop: 'throw' });
      await p.drop();
      assert.equal(await ds.Person.get(p.getKey()), null);
      assert.equal(reported.filter((r) => r.kind === 'afterDrop').length, 2);
    });
  });

  describe('dataClass.defineEvent (events without a class)', () => {
    it('registers handlers on a dataclass and checks their kind and attribute', async () => {
      const seen: string[] = [];
      ds.Company.defineEvent('validateSave', function (this: Entity, e) {
        seen.push(`${e.kind}:${String(this.get('name'))}`);
        return this.get('name') === 'Forbidden' ? { errCode: 60, message: 'forbidden name' } : undefined;
      });
      ds.Company.defineEvent('touched', (e) => void seen.push(`touched:${String(e.attributeName)}`), 'name');
      const c = ds.Company.new();
      c.set('name', 'Forbidden');
      await assert.rejects(c.save(), (e: unknown) => e instanceof DatasetError && e.toWire()[0].errCode === 60);
      c.set('name', 'Fine');
      await c.save();
      assert.deepEqual(seen, ['touched:name', 'validateSave:Forbidden', 'touched:name', 'validateSave:Fine']);
      assert.throws(() => ds.Company.defineEvent('afterSave', () => undefined, 'name'), /entity-level event/);
      assert.throws(() => ds.Company.defineEvent('saving', () => undefined, 'nope'), /not a storage or relatedEntity attribute/);
      assert.throws(() => ds.Company.defineEvent('onSave' as never, () => undefined), /not an entity event/);
    });
  });
});

describe('the demo\'s Employee events', () => {
  let demo: Awaited<ReturnType<typeof openDemo>>;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('seeds through the events, defaults dailyHours, trims last names, and refuses bad salaries (serious / mild)', async () => {
    const { ds } = demo;
    assert.equal(await ds.Employee.all().length, 320);
    const e = ds.Employee.new();
    assert.equal(e.get('dailyHours'), 8 * 3_600_000);
    e.set('lastName', '  Padded  ');
    assert.equal(e.get('lastName'), 'Padded');
    e.set('salary', -1);
    await assert.rejects(e.save(), (err: unknown) => err instanceof DatasetError && err.validation?.serious === true
      && err.toWire()[0].componentSignature === 'DBEV' && err.toWire()[0].errCode === 1001);
    e.set('salary', 50_000_000);
    await assert.rejects(e.save(), (err: unknown) => err instanceof DatasetError && err.validation?.serious === false && err.toWire()[0].errCode === 1002);
    e.set('salary', 50_000);
    await e.save();
    assert.equal((await ds.Employee.get(e.getKey()))?.get('fullName'), 'Padded');
  });

  it('refuses a bad salary sent over REST with a DBEV error in __ERROR', async () => {
    const res = await demo.request('/rest/Employee?$method=update', 'POST', { lastName: 'Rest', salary: -5 });
    assert.ok(res.status >= 400 && res.status < 500, `${res.status} ${JSON.stringify(res.body)}`);
    assert.equal(res.body.__ERROR[0].componentSignature, 'DBEV');
    assert.equal(res.body.__ERROR[0].errCode, 1001);
    assert.match(res.body.__ERROR[0].message, /cannot be negative/);
    assert.deepEqual(res.body.__STATUS, { status: 8, statusText: 'Serious Validation Error', success: false });
    const mild = await demo.request('/rest/Employee?$method=update', 'POST', { lastName: 'Rest', salary: 50_000_000 });
    assert.deepEqual(mild.body.__STATUS, { status: 7, statusText: 'Mild Validation Error', success: false });
  });

  it('runs the validateSave events for $method=validate, saving nothing', async () => {
    const ok = await demo.request('/rest/Employee?$method=validate', 'POST', [{ lastName: 'V', salary: 10 }]);
    assert.deepEqual(ok.body, { ok: true });
    const bad = await demo.request('/rest/Employee?$method=validate', 'POST', [{ lastName: 'V', salary: 10 }, { lastName: 'W', salary: -1 }]);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.__ENTITIES.length, 1);
    assert.equal(bad.body.__ENTITIES[0].__ERROR[0].componentSignature, 'DBEV');
    assert.equal((await demo.request('/rest/Employee?$filter=%22lastName%20in%20[v,w]%22&$top=0')).body.__COUNT, 0);
  });
});
