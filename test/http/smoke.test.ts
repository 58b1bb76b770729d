import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDemo, type DemoFixture } from '../support/helpers.js';

describe('demo smoke', () => {
  let demo: DemoFixture;
  before(async () => {
    demo = await openDemo();
  });
  after(() => demo.close());

  it('lists the exposed dataclasses in the catalog', async () => {
    const res = await demo.request('/rest/$catalog');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.dataClasses.map((d: { name: string }) => d.name), ['City', 'Company', 'Employee']);
  });
});

describe('a project over an in-memory database', () => {
  it('opens and seeds the demo in memory, writing no file named :memory:', async () => {
    const { existsSync } = await import('node:fs');
    const { openProject } = await import('../../src/project/open.js');
    const { DEMO_DIR } = await import('../support/helpers.js');
    const ds = await openProject(DEMO_DIR, { db: ':memory:' });
    try {
      assert.ok((await ds.Employee.all().length) > 0, 'seeded');
      assert.equal(existsSync(':memory:'), false);
    } finally {
      await ds.close();
    }
  });
});
