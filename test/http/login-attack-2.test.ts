// Second hostile review of issue 37's login fixes (the first review's login-attack.test.ts):
// each test states what a secure server does; a failing one is a finding. Both engines
// (openUsersProject).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_PASSWORD_CHECKS } from '../../src/config/limits.js';
import { addUser, openUsersProject, type UsersProject } from '../support/users-project.js';

describe('login fixes, second look', () => {
  let p: UsersProject;
  before(async () => {
    p = await openUsersProject();
    await addUser(p.a, 'alice', 'alice-password', ['Editor']);
  });
  after(() => p.close());

  const authentify = (userName: string, password: string, address: string) =>
    p.a.app.inject({ method: 'POST', url: '/rest/$catalog/authentify', payload: [{ userName, password }], remoteAddress: address });

  it('a login refused as busy (LOGINS_BUSY: its password never checked) does not count toward the lockout of its user name', async () => {
    // a flood of logins at unknown names (many addresses) fills the password checks in flight,
    // and alice's own logins, with her right password, meet LOGINS_BUSY meanwhile
    const flood = Array.from({ length: MAX_PASSWORD_CHECKS * 3 }, (_, i) => authentify(`nobody-${i}`, 'wrong-password', `10.1.${i >> 8}.${i & 255}`));
    const mine = Array.from({ length: 4 }, (_, i) => authentify('alice', 'alice-password', `10.2.0.${i + 1}`));
    const answers = await Promise.all([...flood, ...mine]);
    const busyAlice = answers.slice(flood.length).filter((a) => a.statusCode === 503).length;
    assert.ok(answers.some((a) => a.statusCode === 503), 'the flood met LOGINS_BUSY');
    if (busyAlice === 0) return; // (timing: alice's logins all got through; nothing to show)
    // once the flood is over, alice logs in with her right password
    const later = await authentify('alice', 'alice-password', '10.3.0.1');
    assert.equal(later.statusCode, 200, `after ${busyAlice} of her logins were refused as busy, alice is locked out: ${later.body}`);
  });
});
