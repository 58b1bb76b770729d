// dataset-rest migrate (issue 18), run as the command: --dry-run prints the plan and changes
// nothing, without it the plan is applied and printed; a refused plan exits 1 naming why, bad usage
// exits 2. On the engine the run names (testDatabase: SQLite, or a PostgreSQL database).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Datastore } from '../../src/datastore/datastore.js';
import { buildModel } from '../../src/model/load-model.js';
import { databaseTarget, openStorage } from '../../src/storage/open.js';
import { readMeta } from '../../src/storage/system-tables/meta.js';
import { BIN, startCommand, TEST_ENGINE, tempDir, testDatabase } from '../support/helpers.js';

const KEY = { name: 'ID', type: 'long', identifying: true, autoincrement: true };
const modelJson = (attrs: object[]) => ({ name: 'M', dataClasses: [{ name: 'Thing', attributes: [KEY, ...attrs] }] });

/** runs `dataset-rest migrate ARGS`; resolves to its exit code and output */
function migrate(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'migrate', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe(`dataset-rest migrate (${TEST_ENGINE})`, () => {
  const tmp = tempDir();
  const project = join(tmp.dir, 'project');
  let db: string;
  const schema = async () => {
    const s = await openStorage(databaseTarget(db), { poolSize: 2 });
    try {
      return await readMeta(s, 'schema');
    } finally {
      await s.close();
    }
  };

  before(async () => {
    mkdirSync(project);
    db = await testDatabase(join(tmp.dir, 'data.sqlite'));
    const ds = await Datastore.open(buildModel(modelJson([{ name: 'title', type: 'string' }, { name: 'n', type: 'long' }])), await openStorage(databaseTarget(db), { poolSize: 2 }));
    for (const [title, n] of [['a', 1], ['b', 2]] as const) {
      const e = ds.Thing.new();
      e.set('title', title);
      e.set('n', n);
      await e.save();
    }
    await ds.close();
  });
  after(() => tmp.remove());

  it('--dry-run prints the plan, one line a change, exits 0 and changes nothing', async () => {
    writeFileSync(join(project, 'model.json'), JSON.stringify(modelJson([{ name: 'name', type: 'string', renamedFrom: 'title' }, { name: 'n', type: 'long64' }, { name: 'extra', type: 'number' }])));
    const recorded = await schema();
    const { code, stdout, stderr } = await migrate(['--project', project, '--db', db, '--dry-run']);
    assert.match(stderr, /^dataset-rest: migrate: on the (SQLite file .*data\.sqlite|PostgreSQL database postgres:\/\/\S+)\n$/);
    assert.equal(code, 0);
    assert.equal(stdout, [
      'dry run: 3 changes to apply (nothing was changed):',
      '  rename attribute Thing.title → Thing.name',
      '  Thing.n: long → long64, 2 values converted',
      '  Thing: add attribute extra (number)',
      '',
    ].join('\n'));
    assert.equal(await schema(), recorded);
  });

  it('applies the plan and prints what it did; a second run finds nothing to do', async () => {
    const { code, stdout } = await migrate(['--project', project, '--db', db]);
    assert.equal(code, 0);
    assert.match(stdout, /^applied 3 changes \(in one transaction\):\n {2}rename attribute Thing\.title → Thing\.name\n/);
    const again = await migrate(['--project', project, '--db', db]);
    assert.equal(again.stdout, 'nothing to change: the database is in line with the model\n');
    const dry = await migrate(['--project', project, '--db', db, '--dry-run']);
    assert.equal(dry.stdout, 'dry run: nothing to change, the database is in line with the model\n');
    const ds = await Datastore.open(buildModel(modelJson([{ name: 'name', type: 'string' }, { name: 'n', type: 'long64' }, { name: 'extra', type: 'number' }])), await openStorage(databaseTarget(db), { poolSize: 2 }));
    assert.deepEqual((await ds.Thing.all().orderBy('ID').toArray()).map((e) => e.get('name')), ['a', 'b']);
    await ds.close();
  });

  it('a plan that would be refused exits 1 with why on stderr, with --dry-run or without, and changes nothing', async () => {
    writeFileSync(join(project, 'model.json'), JSON.stringify(modelJson([{ name: 'name', type: 'string', unique: true }, { name: 'n', type: 'bool' }, { name: 'extra', type: 'number' }, { name: 'more', type: 'long' }])));
    const recorded = await schema();
    for (const args of [['--dry-run'], []]) {
      const { code, stderr } = await migrate(['--project', project, '--db', db, ...args]);
      assert.equal(code, 1);
      assert.match(stderr, /^dataset-rest: migrate: on .*\ndataset-rest: .*\n {2}- Thing\.n: the type changed from long64 → bool; .*add a new attribute of type bool/);
      assert.match(stderr, /nothing was changed/);
    }
    assert.equal(await schema(), recorded);
  });

  it('the server logs each change its start makes, one line each at info', async () => {
    writeFileSync(join(project, 'model.json'), JSON.stringify(modelJson([{ name: 'name', type: 'string' }, { name: 'n', type: 'long64' }, { name: 'extra', type: 'number' }, { name: 'label', type: 'string', indexed: true }])));
    const server = await startCommand(['--project', project, '--db', db, '--port', '0', '--roles', 'none'], { alone: true });
    server.child.kill('SIGTERM');
    await server.exited;
    const lines = server.stderr().split('\n').filter((l) => l.includes('"schema: ')).map((l) => JSON.parse(l) as { level: number; msg: string });
    assert.deepEqual(lines.map((l) => l.msg), ['schema: Thing: add attribute label (string)']);
    assert.equal(lines[0].level, 30); // info
  });

  it('bad usage exits 2 with one line on stderr', async () => {
    for (const [args, message] of [
      [['--db', db], /migrate needs the project whose model\.json it applies: --project, \$DATASET_REST_PROJECT, or a --config file naming one/],
      [['--project', project, '--db', db, '--bogus'], /unknown option '--bogus'/],
      [['--project', join(tmp.dir, 'none'), '--db', db], /model\.json is missing/],
      [['--project', project, '--db', 'mysql://x/y'], /mysql:\/\/ is not a database this server can use/],
      [['--project', project, '--db', join(tmp.dir, 'absent.sqlite')], /there is no database at .*absent\.sqlite: start the server once/],
    ] as const) {
      const { code, stderr } = await migrate(args);
      assert.equal(code, 2, stderr);
      assert.match(stderr, /^dataset-rest: /);
      assert.match(stderr, message);
    }
  });

  it('a mistyped command exits 2 naming the commands (and the likeliest), not "too many arguments"; --help lists them', async () => {
    const child = spawn(process.execPath, [BIN, 'migrat', '--project', project], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += String(d)));
    const code = await new Promise((resolve) => child.on('close', resolve));
    assert.equal(code, 2, stderr);
    assert.match(stderr, /^dataset-rest: there is no command 'migrat' \(did you mean 'migrate'\?\): the commands are migrate, import, export/);
    // and the server's --help names them
    const help = spawn(process.execPath, [BIN, '--help'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let stdout = '';
    help.stdout.on('data', (d) => (stdout += String(d)));
    assert.equal(await new Promise((resolve) => help.on('close', resolve)), 0);
    for (const command of ['migrate', 'import', 'export']) assert.match(stdout, new RegExp(`dataset-rest ${command} +\\[?--project`));
  });
});
