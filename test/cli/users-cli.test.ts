// dataset-rest users and tokens: built-in users managed from the command line, on the database
// the project's configuration names (as the server picks it), passwords read from stdin, and a
// token made there working over REST as Authorization: Bearer.

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main as tokens } from '../../src/commands/tokens.js';
import { main as users } from '../../src/commands/users.js';
import { openProject } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { run } from '../support/cli-data.js';
import { injected, tempDir, testDatabase } from '../support/helpers.js';
import { USERS_MODEL, USERS_ROLES } from '../support/users-project.js';

describe('dataset-rest users and tokens', () => {
  let tmp: { dir: string; remove(): void };
  let dir: string;
  let db: string;
  before(async () => {
    tmp = tempDir();
    dir = join(tmp.dir, 'project');
    mkdirSync(dir);
    writeFileSync(join(dir, 'model.json'), JSON.stringify(USERS_MODEL));
    writeFileSync(join(dir, 'roles.json'), JSON.stringify(USERS_ROLES));
    writeFileSync(join(dir, 'auth.json'), JSON.stringify({ users: { minPasswordLength: 10 } }));
    db = await testDatabase(join(tmp.dir, 'configured.sqlite'));
    // the database the server would use: the project's configuration file names it
    writeFileSync(join(dir, 'dataset-rest.json'), JSON.stringify({ db }));
  });
  after(() => tmp.remove());

  const project = () => ['--project', dir];

  it('adds a user with its roles, the password from stdin, on the configured database, saying which', async () => {
    const added = await run(users, ['add', 'admin', '--role', 'Administrator', ...project()], 'a-long-password\n');
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stderr, /users: on the (SQLite file .*configured\.sqlite|PostgreSQL database)/);
    assert.match(added.stderr, /added admin \(Administrator\)/);
    const listed = await run(users, ['list', '--json', ...project()]);
    assert.deepEqual(JSON.parse(listed.stdout).map((u: { userName: string; roles: string[] }) => [u.userName, u.roles]), [['admin', ['Administrator']]]);
  });

  it('refuses a weak password, an unknown role, a user twice, with exit code 2 and nothing written', async () => {
    const weak = await run(users, ['add', 'bob', ...project()], 'short\n');
    assert.equal(weak.code, 2);
    assert.match(weak.stderr, /at least 10/);
    const role = await run(users, ['add', 'bob', '--role', 'Wizard', ...project()], 'a-long-password\n');
    assert.equal(role.code, 2);
    assert.match(role.stderr, /no role 'Wizard'.*Editor/);
    const twice = await run(users, ['add', 'ADMIN', ...project()], 'a-long-password\n');
    assert.equal(twice.code, 2);
    const listed = await run(users, ['list', ...project()]);
    assert.doesNotMatch(listed.stdout, /bob/);
    const nothing = await run(users, ['passwd', 'nobody', ...project()], 'a-long-password\n');
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /no user 'nobody'/);
  });

  it('makes a token printed once that the server takes as Bearer, lists it and revokes it', async () => {
    const made = await run(tokens, ['create', '--user', 'admin', '--name', 'ci', '--expires', '30d', ...project()]);
    assert.equal(made.code, 0, made.stderr);
    const token = made.stdout.trim();
    assert.match(token, /^dsr_/);
    const ds = await openProject(dir, { db });
    const app = await buildServer(ds, { logLevel: 'silent' });
    try {
      const res = await injected(app, '/rest/$users', 'GET', undefined, { authorization: `Bearer ${token}` });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const listed = await run(tokens, ['list', '--json', ...project()]);
      const [info] = JSON.parse(listed.stdout);
      assert.equal(info.name, 'ci');
      assert.ok(!listed.stdout.includes(token));
      const revoked = await run(tokens, ['revoke', info.id, ...project()]);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.equal((await injected(app, '/rest/$users', 'GET', undefined, { authorization: `Bearer ${token}` })).status, 401);
    } finally {
      await app.close();
      await ds.close();
    }
  });

  it('refuses a token asking for what its user lacks, and a bad expiry', async () => {
    await run(users, ['add', 'ed', '--role', 'Editor', ...project()], 'a-long-password\n');
    const more = await run(tokens, ['create', '--user', 'ed', '--privileges', 'secrets', ...project()]);
    assert.equal(more.code, 2);
    assert.match(more.stderr, /does not hold 'secrets'/);
    const bad = await run(tokens, ['create', '--user', 'ed', '--expires', 'soon', ...project()]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--expires/);
  });

  it('changes roles and removes a user with its tokens', async () => {
    const roles = await run(users, ['roles', 'ed', '--role', 'Keeper', ...project()]);
    assert.equal(roles.code, 0, roles.stderr);
    assert.match(roles.stderr, /the roles Keeper/);
    const removed = await run(users, ['remove', 'ed', ...project()]);
    assert.equal(removed.code, 0);
    const none = await run(users, ['remove', 'ed', ...project()]);
    assert.equal(none.code, 2);
  });

  it('says how to turn built-in users on when auth.json does not', async () => {
    const other = join(tmp.dir, 'plain');
    mkdirSync(other);
    writeFileSync(join(other, 'model.json'), JSON.stringify(USERS_MODEL));
    const res = await run(users, ['list', '--project', other, '--db', await testDatabase(join(tmp.dir, 'plain.sqlite'))]);
    assert.equal(res.code, 2);
    assert.match(res.stderr, /auth\.json/);
  });
});
