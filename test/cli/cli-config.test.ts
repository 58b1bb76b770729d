// The command's settings from DATASET_REST_* variables and a configuration file besides its flags
// (src/process/cli-settings.ts): precedence, validation by the flags' own parsers, errors naming their
// source, --print-config; and the server processes taking the supervisor's settings as they are.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { commandLine, SETTINGS } from '../../src/process/cli-options.js';
import { describe as describeSettings, mask, resolveSettings, restoreSettings, SettingsError, snapshot, sourceOf, type Resolved } from '../../src/process/cli-settings.js';
import { BIN, DEMO_DIR, startCommand, tempDir } from '../support/helpers.js';
import { testPostgres } from '../support/postgres-server.js';

const tmp = tempDir();
after(() => tmp.remove());
let folders = 0;

/** A new folder holding dataset-rest.json with this text (or none). */
function folder(file?: string | object): string {
  const dir = join(tmp.dir, `p${++folders}`);
  mkdirSync(dir, { recursive: true });
  if (file !== undefined) writeFileSync(join(dir, 'dataset-rest.json'), typeof file === 'string' ? file : JSON.stringify(file));
  return dir;
}

/** The command's options from these flags, variables (nothing else of this process's) and files. */
function resolve(args: string[], env: Record<string, string> = {}) {
  const program = commandLine();
  program.parse(args, { from: 'user' });
  const resolved = resolveSettings(program, SETTINGS, env);
  const source = (key: string) => sourceOf(program, key, resolved).source;
  return { program, resolved, opts: program.opts(), source };
}

function refused(args: string[], env: Record<string, string>, message: RegExp): void {
  assert.throws(() => resolve(args, env), (e: unknown) => e instanceof SettingsError && message.test(e.message) ? true : assert.fail(String(e)));
}

/** The command run to its end (with --print-config it opens nothing), with only these DATASET_REST_ variables. */
function run(args: string[], env: Record<string, string> = {}, cwd = tmp.dir) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('DATASET_REST_')));
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 30_000, env: { ...base, ...env }, cwd });
}

describe('configuration: sources and precedence', () => {
  it('a flag wins over its variable, a variable over the file, the file over the default', () => {
    const dir = folder({ port: 9001, poolSize: 7, maxSessions: 50, logLevel: 'debug' });
    const { opts, source } = resolve(['--project', dir, '--port', '9000'], { DATASET_REST_PORT: '9002', DATASET_REST_POOL_SIZE: '5', DATASET_REST_LOG_LEVEL: 'warn' });
    assert.deepEqual([opts.port, source('port')], [9000, 'flag']);
    assert.deepEqual([opts.poolSize, source('poolSize')], [5, 'env']);
    assert.deepEqual([opts.logLevel, source('logLevel')], ['warn', 'env']);
    assert.deepEqual([opts.maxSessions, source('maxSessions')], [50, 'file']);
    assert.deepEqual([opts.host, source('host')], ['127.0.0.1', 'default']);
  });

  it('names every variable DATASET_REST_ and the flag in upper snake case, a --no- flag without its no-', () => {
    const { opts, source } = resolve([], {
      DATASET_REST_MAX_UPLOAD_SIZE: '1GB', DATASET_REST_MAX_REQUESTS_PER_MINUTE: '600', DATASET_REST_EXPLORER: 'false', DATASET_REST_TRUST_PROXY: 'true', DATASET_REST_METRICS: '1', DATASET_REST_WORKERS: 'auto',
    });
    assert.equal(opts.maxUploadSize, 1024 ** 3);
    assert.equal(opts.maxRequestsPerMinute, 600);
    assert.deepEqual([opts.explorer, opts.trustProxy, opts.metrics], [false, true, true]);
    assert.ok(opts.workers >= 1);
    for (const key of ['maxUploadSize', 'explorer', 'trustProxy', 'metrics', 'workers']) assert.equal(source(key), 'env', key);
  });

  it('reads a switch from a variable as true/false, 1/0, yes/no or on/off, and refuses anything else naming the variable', () => {
    for (const [word, value] of [['TRUE', true], ['yes', true], ['on', true], ['0', false], ['No', false], ['off', false]] as const) {
      assert.equal(resolve([], { DATASET_REST_SECURE_COOKIES: word }).opts.secureCookies, value, word);
    }
    refused([], { DATASET_REST_TRUST_PROXY: 'maybe' }, /^DATASET_REST_TRUST_PROXY: 'maybe' is invalid: true or false/);
  });

  it('takes an empty variable as unset', () => {
    const { opts, source } = resolve([], { DATASET_REST_PORT: '', DATASET_REST_TRUST_PROXY: '' });
    assert.deepEqual([opts.port, source('port'), opts.trustProxy], [8080, 'default', undefined]);
  });

  it('lets --no-explorer win over DATASET_REST_EXPLORER=true and a flag list replace the file list', () => {
    const dir = folder({ allowedHosts: ['a.example.com', 'b.example.com'], corsOrigin: 'https://app.example.com' });
    const { opts, source } = resolve(['--project', dir, '--no-explorer', '--allowed-hosts', 'c.example.com'], { DATASET_REST_EXPLORER: 'true' });
    assert.deepEqual([opts.explorer, source('explorer')], [false, 'flag']);
    assert.deepEqual(opts.allowedHosts, ['c.example.com']);
    assert.deepEqual([opts.corsOrigin, source('corsOrigin')], [['https://app.example.com'], 'file']);
  });

  it('takes a list from a variable as a comma-separated string, replacing the file list', () => {
    const dir = folder({ allowedHosts: ['a.example.com'] });
    assert.deepEqual(resolve(['--project', dir], { DATASET_REST_ALLOWED_HOSTS: 'x.example.com, y.example.com' }).opts.allowedHosts, ['x.example.com', 'y.example.com']);
  });

  it('reads the project folder of DATASET_REST_PROJECT, and takes relative paths in a file from its folder', () => {
    const dir = folder({ db: 'data/prod.sqlite', roles: 'none' });
    const { opts, resolved } = resolve([], { DATASET_REST_PROJECT: dir });
    assert.equal(resolved.file.path, join(dir, 'dataset-rest.json'));
    assert.equal(opts.db, join(dir, 'data', 'prod.sqlite'));
    assert.equal(opts.roles, 'none');
    // (a URL is no path)
    assert.equal(resolve(['--project', folder({ db: 'postgres://u:p@db/app' })]).opts.db, 'postgres://u:p@db/app');
  });

  it('reads the file --config or DATASET_REST_CONFIG names instead, which may name the project (relative to that file)', () => {
    const elsewhere = folder();
    writeFileSync(join(elsewhere, 'prod.jsonc'), '{ "project": "../app", "port": 9300 }');
    for (const [args, env] of [[['--config', join(elsewhere, 'prod.jsonc')], {}], [[], { DATASET_REST_CONFIG: join(elsewhere, 'prod.jsonc') }]] as const) {
      const { opts, resolved, source } = resolve([...args], env);
      assert.equal(resolved.file.path, join(elsewhere, 'prod.jsonc'));
      assert.deepEqual([opts.port, source('port')], [9300, 'file']);
      assert.equal(opts.project, join(tmp.dir, 'app'));
    }
  });

  it('accepts comments and trailing commas in the file, and an empty file', () => {
    assert.equal(resolve(['--project', folder('{\n  // the public port\n  "port": 9400, /* and */\n}\n')]).opts.port, 9400);
    assert.equal(resolve(['--project', folder('')]).opts.port, 8080);
  });

  it('needs no file in the project folder', () => {
    const { resolved } = resolve(['--project', folder()]);
    assert.equal(resolved.file.found, false);
  });
});

describe('configuration: errors name their source', () => {
  it('checks a variable with its flag\'s parser, naming the variable', () => {
    refused([], { DATASET_REST_PORT: '99999' }, /^DATASET_REST_PORT: '99999' is invalid: a port is a whole number from 0 to 65535/);
    refused([], { DATASET_REST_MAX_UPLOAD_SIZE: 'lots' }, /^DATASET_REST_MAX_UPLOAD_SIZE: 'lots' is invalid: a size in bytes/);
    refused([], { DATASET_REST_CORS_ORIGIN: 'app.example.com' }, /^DATASET_REST_CORS_ORIGIN: 'app.example.com' is invalid: 'app.example.com' is not an origin/);
  });

  it('checks a variable even when a flag overrides it', () => {
    refused(['--port', '9000'], { DATASET_REST_PORT: 'abc' }, /^DATASET_REST_PORT: 'abc' is invalid/);
  });

  it('checks a file value with its flag\'s parser, naming the file, line, column and key', () => {
    const dir = folder('{\n  "host": "0.0.0.0",\n  "port": "eighty"\n}');
    refused(['--project', dir], {}, new RegExp(`^${join(dir, 'dataset-rest.json')}:3:11: "port": 'eighty' is invalid: a port is a whole number`));
    refused(['--project', folder({ poolSize: 1 })], {}, /dataset-rest\.json:1:13: "poolSize": '1' is invalid: a whole number of 2 or more/);
    refused(['--project', folder({ trustProxy: 'yes' })], {}, /dataset-rest\.json:1:15: "trustProxy" must be true or false, found a string/);
    refused(['--project', folder({ port: null })], {}, /"port" must be a string or a number, found null/);
    refused(['--project', folder({ allowedHosts: [] })], {}, /"allowedHosts" is an empty list/);
  });

  it('refuses an unknown key in the file with the closest setting', () => {
    refused(['--project', folder({ prot: 9000 })], {}, /dataset-rest\.json:1:2: "prot" is not a setting, did you mean 'port'\?/);
    refused(['--project', folder({ 'max-upload-size': '1GB' })], {}, /"max-upload-size" is not a setting, did you mean 'maxUploadSize'\?/);
  });

  it('refuses "config" in any file, "project" in the project folder\'s own, and a key given twice', () => {
    refused(['--project', folder({ config: 'x.json' })], {}, /"config" cannot be set in a configuration file/);
    refused(['--project', folder({ project: '/srv/app' })], {}, /"project" cannot be set in the project folder's own dataset-rest\.json/);
    refused(['--project', folder('{ "port": 1, "port": 2 }')], {}, /"port" is given twice/);
  });

  it('reports a file that is no JSON object with its line and column', () => {
    refused(['--project', folder('{\n  "port": 9000\n  "host": "::"\n}')], {}, /dataset-rest\.json:3:3: invalid JSON: comma expected/);
    refused(['--project', folder('[8080]')], {}, /dataset-rest\.json:1:1: the file must hold a JSON object of settings/);
  });

  it('refuses a file --config names that is not there, naming the flag or the variable', () => {
    refused(['--config', join(tmp.dir, 'nowhere.json')], {}, /^--config: cannot read the configuration file .*nowhere\.json: no such file/);
    refused([], { DATASET_REST_CONFIG: join(tmp.dir, 'nowhere.json') }, /^DATASET_REST_CONFIG: cannot read the configuration file/);
  });

  it('warns of an unknown DATASET_REST_ variable with the closest one, and ignores the internal ones', () => {
    const { resolved } = resolve([], { DATASET_REST_PROT: '9000', DATASET_REST_NO_EXPLORER: '1', DATASET_REST_INSTANCE: '1', DATASET_REST_TEST_PG: 'x', DATASET_REST_BENCH_PG: 'x', DATASET_REST_PRINT_CONFIG: '1' });
    assert.deepEqual(resolved.warnings, [
      'DATASET_REST_NO_EXPLORER is not a setting: write DATASET_REST_EXPLORER=false (ignored)',
      'DATASET_REST_PRINT_CONFIG is not a setting: --print-config is a flag only (ignored)',
      "DATASET_REST_PROT is not a setting, did you mean 'DATASET_REST_PORT'? (ignored)",
    ]);
  });
});

describe('configuration: --print-config and the server processes', () => {
  it('masks the password of a URL and secret-like query parameters', () => {
    assert.equal(mask('postgres://app:s3cr/et@db:5432/app?sslpassword=x&application_name=y'), 'postgres://app:***@db:5432/app?sslpassword=***&application_name=y');
    assert.equal(mask('postgres://app@db/app'), 'postgres://app@db/app');
    assert.equal(mask('postgres://u:pa@ss@h/db'), 'postgres://u:***@h/db', 'a password holding @ is masked whole');
    assert.equal(mask('postgres://app:s3cr#et@db/app'), 'postgres://app:***@db/app', 'a password holding # is masked whole');
    assert.equal(mask('postgres://app:pa?ss@db/app?sslmode=require'), 'postgres://app:***@db/app?sslmode=require', 'a password holding ? is masked whole');
    assert.equal(mask('data/data.sqlite'), 'data/data.sqlite');
  });

  it('describes every setting, its value and its source', () => {
    const dir = folder({ maxSessions: 50 });
    const { program, resolved } = resolve(['--project', dir, '--port', '9000'], { DATASET_REST_DB: 'postgres://app:hunter2@db/app' });
    const text = describeSettings(program, SETTINGS, resolved);
    assert.match(text, /^port +9000 +flag --port$/m);
    assert.match(text, /^db +postgres:\/\/app:\*\*\*@db\/app +env DATASET_REST_DB$/m);
    assert.match(text, new RegExp(`^maxSessions +50 +file ${join(dir, 'dataset-rest.json')}$`, 'm'));
    assert.match(text, /^host +127\.0\.0\.1 +default$/m);
    assert.match(text, /^metrics +false +default$/m);
    assert.doesNotMatch(text, /hunter2/);
  });

  it('hands the server processes the settings as resolved, keeping their own flags (the port the supervisor adds)', () => {
    const dir = folder({ maxSessions: 50, logLevel: 'warn' });
    const parent = resolve(['--project', dir], { DATASET_REST_PORT: '9000', DATASET_REST_METRICS: 'true' });
    const saved = snapshot(parent.program, SETTINGS, parent.resolved);
    // the file changed meanwhile: the child never reads it
    writeFileSync(join(dir, 'dataset-rest.json'), '{ "broken": ');
    const child = commandLine();
    child.parse(['--project', dir, '--port', '9555'], { from: 'user' });
    const restored: Resolved = restoreSettings(child, saved);
    const opts = child.opts();
    assert.deepEqual([opts.port, child.getOptionValueSource('port')], [9555, 'cli']);
    assert.deepEqual([opts.maxSessions, opts.logLevel, opts.metrics], [50, 'warn', true]);
    assert.equal(sourceOf(child, 'maxSessions', restored).source, 'file');
  });

  it('--print-config prints the table on stdout and exits 0 without opening the project or the database', () => {
    const dir = folder({ maxSessions: 50 });
    const r = run(['--print-config', '--project', dir, '--port', '9000'], { DATASET_REST_DB: 'postgres://app:hunter2@127.0.0.1:1/app' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^port +9000 +flag --port$/m);
    assert.match(r.stdout, /^db +postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/app +env DATASET_REST_DB$/m);
    assert.match(r.stdout, /^maxSessions +50 +file /m);
    assert.doesNotMatch(r.stdout, /hunter2/);
  });

  it('answers a bad variable, a bad file value and a file that is no JSON with one line on stderr naming it, exit code 2', () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [[], { DATASET_REST_PORT: 'abc' }, /^dataset-rest: DATASET_REST_PORT: 'abc' is invalid: a port is/],
      [['--project', folder({ workers: 0 })], {}, /^dataset-rest: \S+dataset-rest\.json:1:12: "workers": '0' is invalid: a whole number from 1 to 64, or auto/],
      [['--project', folder('{ "port": 80,, }')], {}, /^dataset-rest: \S+dataset-rest\.json:1:14: invalid JSON: property name expected/],
      [['--config', 'missing.json'], {}, /^dataset-rest: --config: cannot read the configuration file missing\.json: no such file/],
    ];
    for (const [args, env, message] of cases) {
      const r = run(args, env);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  });

  it('serves with settings from the project\'s file (metrics on, log level warn) and the environment (port 0), and a replacement process keeps them though the file changed', async () => {
    const dir = folder({ logLevel: 'warn', metrics: true });
    writeFileSync(join(dir, 'model.json'), JSON.stringify({
      name: 'Small', dataClasses: [{ name: 'Note', attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'text', type: 'string' }] }],
    }));
    const previous = process.env.DATASET_REST_PORT;
    process.env.DATASET_REST_PORT = '0';
    let server;
    try {
      server = await startCommand(['--project', dir]);
    } finally {
      if (previous === undefined) delete process.env.DATASET_REST_PORT;
      else process.env.DATASET_REST_PORT = previous;
    }
    const { child, base, exited } = server;
    const metrics = base.replace(/\/rest$/, '/metrics');
    try {
      assert.equal((await fetch(`${base}/$catalog`)).status, 200);
      // the file's "metrics": true reaches the server
      assert.equal((await fetch(metrics)).status, 200);
      writeFileSync(join(dir, 'dataset-rest.json'), '{ "broken": ');
      const pid = () => Number(spawnSync('ps', ['-o', 'pid=', '--ppid', String(child.pid)], { encoding: 'utf8' }).stdout.trim().split('\n')[0]);
      const first = pid();
      process.kill(first, 'SIGKILL');
      // the replacement starts on the same port, with the settings the supervisor resolved
      let status = 0;
      for (const end = Date.now() + 30_000; status !== 200 && Date.now() < end; ) {
        await new Promise((r) => setTimeout(r, 200));
        status = await fetch(`${base}/$catalog`).then((r) => r.status, () => 0);
      }
      assert.equal(status, 200, server.stderr());
      assert.notEqual(pid(), first);
      // (at warn, nothing of the start-up is logged: the file's logLevel held)
      assert.doesNotMatch(server.stderr(), /"msg":"listening"/);
      assert.equal((await fetch(metrics)).status, 200);
    } finally {
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    }
  });

  it('hands the workers their settings over IPC, never in their environment: a password of the file is not in /proc/<pid>/environ, of a replacement either, and they serve', { skip: process.platform !== 'linux' && '/proc/<pid>/environ is Linux\'s' }, async () => {
    // a role and a database of its own, so that the password is in the file and nowhere else
    const server = await testPostgres();
    const id = randomBytes(6).toString('hex');
    const [role, database, password] = [`r_${id}`, `t_${id}`, `pw-${randomBytes(12).toString('hex')}`];
    const admin = async (sql: string) => {
      const c = new pg.Client({ connectionString: server.url });
      await c.connect();
      try {
        await c.query(sql);
      } finally {
        await c.end();
      }
    };
    await admin(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await admin(`CREATE DATABASE ${database} OWNER ${role} TEMPLATE template0 ENCODING 'UTF8'`);
    const url = new URL(server.url);
    [url.username, url.password, url.pathname] = [role, password, `/${database}`];
    const file = join(tmp.dir, `workers-${id}.json`);
    writeFileSync(file, JSON.stringify({ project: DEMO_DIR, db: url.href, logLevel: 'warn' }));
    // the file named by a variable: a setting's variable, kept from the workers too
    const previous = process.env.DATASET_REST_CONFIG;
    process.env.DATASET_REST_CONFIG = file;
    let command;
    try {
      command = await startCommand(['--port', '0', '--workers', '2']);
    } finally {
      if (previous === undefined) delete process.env.DATASET_REST_CONFIG;
      else process.env.DATASET_REST_CONFIG = previous;
    }
    const { child, base, exited } = command;
    const workers = () => spawnSync('ps', ['-o', 'pid=', '--ppid', String(child.pid)], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean).map(Number);
    const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    const checkEnviron = (pid: number) => {
      const env = environ(pid);
      assert.ok(env.includes('DATASET_REST_INSTANCE=supervised'), `worker ${pid}: ${env.filter((v) => v.startsWith('DATASET_REST_')).join(' ')}`);
      assert.ok(!env.some((v) => v.includes(password)), `worker ${pid}: the password is in its environment`);
      assert.ok(!env.some((v) => v.startsWith('DATASET_REST_INSTANCE_CONFIG=') || v.startsWith('DATASET_REST_CONFIG=')), `worker ${pid}: ${env.filter((v) => v.startsWith('DATASET_REST_')).join(' ')}`);
    };
    // new connections each: the workers take them in turn
    const read = () => fetch(`${base}/City?$top=1`, { headers: { connection: 'close' }, signal: AbortSignal.timeout(10_000) }).then((r) => r.status, () => 0);
    try {
      const first = workers();
      assert.equal(first.length, 2, command.stderr());
      for (const pid of first) checkEnviron(pid);
      for (let i = 0; i < 6; i++) assert.equal(await read(), 200, command.stderr());
      // a worker killed is replaced: the new one asks for the settings as well
      process.kill(first[0], 'SIGKILL');
      let now: number[] = [];
      for (const end = Date.now() + 30_000; Date.now() < end; ) {
        await new Promise((r) => setTimeout(r, 200));
        now = workers();
        if (now.length === 2 && !now.includes(first[0]) && await read() === 200) break;
      }
      const replacement = now.find((pid) => !first.includes(pid));
      assert.ok(replacement !== undefined && now.length === 2, `${now.join(' ')}: ${command.stderr()}`);
      checkEnviron(replacement);
      for (let i = 0; i < 6; i++) assert.equal(await read(), 200, command.stderr());
      // (at warn, nothing of the start-up is logged: the file's settings reached the replacement too)
      assert.doesNotMatch(command.stderr(), /"msg":"listening"/);
    } finally {
      child.kill('SIGTERM');
      assert.equal(await exited, 0, command.stderr());
      await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin(`DROP ROLE IF EXISTS ${role}`);
    }
  });
});
