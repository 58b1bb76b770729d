// dataset-rest users misused: a password from a stdin that holds none (cron, CI, `< /dev/null`)
// where auth.json's minimum is 0 — the one setting where an empty password is taken. Both engines
// (testDatabase).

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main as users } from '../../src/commands/users.js';
import { run } from '../support/cli-data.js';
import { tempDir, testDatabase } from '../support/helpers.js';
import { USERS_MODEL, USERS_ROLES } from '../support/users-project.js';

describe('dataset-rest users, misused', () => {
  let tmp: { dir: string; remove(): void };
  let dir: string;
  before(async () => {
    tmp = tempDir();
    dir = join(tmp.dir, 'project');
    mkdirSync(dir);
    writeFileSync(join(dir, 'model.json'), JSON.stringify(USERS_MODEL));
    writeFileSync(join(dir, 'roles.json'), JSON.stringify(USERS_ROLES));
    writeFileSync(join(dir, 'auth.json'), JSON.stringify({ users: { minPasswordLength: 0 } }));
    writeFileSync(join(dir, 'dataset-rest.json'), JSON.stringify({ db: await testDatabase(join(tmp.dir, 'users.sqlite')) }));
  });
  after(() => tmp.remove());

  it('refuses to add an administrator whose password is a stdin that ended with nothing in it', async () => {
    const added = await run(users, ['add', 'admin', '--role', 'Administrator', '--project', dir], '');
    assert.notEqual(added.code, 0, `an administrator with an empty password was added from an empty stdin: ${added.stderr}`);
  });
});
