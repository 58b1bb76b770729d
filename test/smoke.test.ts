import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDemo, type DemoFixture } from './helpers.js';

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
