import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import pg from 'pg';
import { alive } from '../../bench/processes.js';
import { BIN, startCommand, tempDir } from '../support/helpers.js';
import { testPostgres } from '../support/postgres-server.js';


function run(args: string[]) {
  return spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 30_000 });
}

function project(dir: string, model: unknown): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'model.json'), typeof model === 'string' ? model : JSON.stringify(model));
  return dir;
}

const SMALL = {
  name: 'Small',
  dataClasses: [{ name: 'Note', attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'text', type: 'string' }] }],
};

describe('command line', () => {
  const tmp = tempDir();
  after(() => tmp.remove());

  it('--help explains every flag and exits 0', () => {
    const r = run(['--help']);
    assert.equal(r.status, 0);
    for (const flag of ['--project', '--db', '--pool-size', '--port', '--host', '--log-level', '--max-set-members', '--function-timeout', '--max-upload-size']) assert.match(r.stdout, new RegExp(flag));
  });

  const bad: [string, string[], RegExp][] = [
    ['an unknown flag', ['--bogus'], /unknown option '--bogus'/],
    ['a port that is not a number', ['--port', 'abc'], /port/],
    ['a time limit past what timers can wait', ['--function-timeout', '3000000000'], /--function-timeout.*at most 2147483647/],
    ['an upload size that is no size', ['--max-upload-size', 'lots'], /--max-upload-size.*a size in bytes/],
    ['an upload size with an unknown unit', ['--max-upload-size', '5XB'], /--max-upload-size.*a size in bytes/],
    ['a missing project folder', ['--project', '/nonexistent/nowhere'], /does not exist/],
    ['a folder without model.json', ['--project', '.'], /model\.json is missing/],
    ['a database URL of no supported engine', ['--db', 'mysql://u:p@127.0.0.1/db'], /mysql:\/\/ is not a database this server can use/],
    ['a PostgreSQL server nobody listens for', ['--db', 'postgres://u:p@127.0.0.1:1/db'], /PostgreSQL at u@127\.0\.0\.1:1\/db: connection refused/],
    ['a pool size of zero', ['--pool-size', '0'], /--pool-size.*a whole number of 2 or more/],
    ['no workers', ['--workers', '0'], /--workers.*a whole number from 1 to 64, or auto/],
    ['a pool size of one', ['--pool-size', '1'], /--pool-size.*a whole number of 2 or more/],
    ['a pool size that is no whole number', ['--pool-size', '2.5'], /--pool-size.*a whole number of 2 or more/],
  ];
  for (const [what, args, message] of bad) {
    it(`answers ${what} with one line on stderr and exit code 2`, () => {
      const r = run(args.map((a) => (a === '.' ? tmp.dir : a)));
      assert.equal(r.status, 2);
      assert.match(r.stderr, message);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    });
  }

  it('answers a wrong password, a missing database and missing rights on a real PostgreSQL with one line naming it, exit code 2, the password never shown', async () => {
    const server = new URL((await testPostgres()).url);
    const url = (user: string, password: string, db: string) => `postgres://${user}:${password}@${server.host}/${db}`;
    const admin = new pg.Client({ connectionString: server.href });
    await admin.connect();
    try {
      await admin.query("CREATE ROLE cli_reader LOGIN PASSWORD 'reader-secret'");
      await admin.query('CREATE DATABASE cli_rights');
      // (PostgreSQL 15 and later revoke it already in a new database; older ones do not)
      const inRights = new pg.Client({ connectionString: Object.assign(new URL(server.href), { pathname: '/cli_rights' }).href });
      await inRights.connect();
      await inRights.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC').finally(() => inRights.end());
      const cases: [string, RegExp][] = [
        [url(server.username, 'not-the-password', 'postgres'), /password authentication failed for user "postgres"/],
        [url(server.username, decodeURIComponent(server.password), 'no_such_db'), /database "no_such_db" does not exist/],
        [url('cli_reader', 'reader-secret', 'cli_rights'), /^dataset-rest: --db: PostgreSQL refused to bring the schema in line: permission denied for schema public \(the user needs the right/],
        ['postgres://u:p@[::1/x', /^dataset-rest: --db: the PostgreSQL URL cannot be read \(Invalid URL\)/],
      ];
      for (const [db, message] of cases) {
        const r = spawnSync(process.execPath, [BIN, '--db', db, '--port', '0'], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, DATASET_REST_INSTANCE: '1' } });
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, message);
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.doesNotMatch(r.stderr, /not-the-password|reader-secret/);
      }
    } finally {
      await admin.query('DROP DATABASE IF EXISTS cli_rights WITH (FORCE)').catch(() => undefined);
      await admin.query('DROP ROLE IF EXISTS cli_reader').catch(() => undefined);
      await admin.end();
    }
  });

  it('reports every model mistake with its JSON path on one line, exit code 2', () => {
    const dir = project(join(tmp.dir, 'badmodel'), {
      name: 'Bad',
      dataClasses: [{ name: 'A', attributes: [{ name: 'ID', type: 'lng', identifying: true }, { name: 'b', kind: 'relatedEntity', type: 'Nope' }] }],
    });
    const r = run(['--project', dir]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /\$\.dataClasses\[0\]\.attributes\[0\]\.type: unknown type 'lng', did you mean 'long'\?/);
    assert.match(r.stderr, /\$\.dataClasses\[0\]\.attributes\[1\]\.type: relatedEntity 'b' must name a dataclass/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });

  it('serves a project on a free port, prints the ready line, and stops cleanly on SIGTERM', async () => {
    const dir = project(join(tmp.dir, 'small'), SMALL);
    const child = spawn(process.execPath, [BIN, '--project', dir, '--port', '0', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += String(d);
        if (out.includes('\n')) resolve(out.split('\n')[0]);
      });
      child.on('exit', (code) => reject(new Error(`exited early with ${code}`)));
    });
    const m = /^dataset-rest listening on (http:\/\/127\.0\.0\.1:\d+\/rest)$/.exec(line);
    assert.ok(m, line);
    const res = await fetch(`${m[1]}/$catalog`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { dataClasses: [{ name: 'Note', uri: '/rest/$catalog/Note', dataURI: '/rest/Note' }] });
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', resolve);
      child.kill('SIGTERM');
    });
    assert.equal(code, 0);
    // the default database was created inside the project
    assert.ok(spawnSync('test', ['-f', join(dir, 'data', 'data.sqlite')]).status === 0);
  });

  it('runs --workers 2 as two processes on one port: one ready line, killed workers replaced on that port, SIGTERM stops them all', async () => {
    const dir = project(join(tmp.dir, 'workers'), SMALL);
    // (at info, each worker logs when it listens)
    const child = spawn(process.execPath, [BIN, '--project', dir, '--port', '0', '--workers', '2', '--log-level', 'info'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += String(d)));
    const base = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d) => {
        out += String(d);
        const m = /listening on (http:\S+\/rest)/.exec(out);
        if (m) resolve(m[1]);
      });
      child.on('exit', (code) => reject(new Error(`exited early with ${code}: ${err}`)));
    });
    const workers = () => spawnSync('ps', ['-o', 'pid=', '--ppid', String(child.pid)], { encoding: 'utf8' }).stdout.split('\n').map((l) => Number(l.trim())).filter((n) => n > 0);
    // (a time limit on each: a connection held by no one fails the test rather than hanging it)
    const served = async () => (await Promise.all(Array.from({ length: 20 }, () => fetch(`${base}/$catalog`, { headers: { connection: 'close' }, signal: AbortSignal.timeout(10_000) })))).map((r) => r.status);
    const until = async (what: () => boolean, ms: number) => {
      for (const end = Date.now() + ms; !what() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 100));
    };
    try {
      assert.equal(workers().length, 2, 'two server processes');
      assert.deepEqual(await served(), Array(20).fill(200));
      assert.equal(out.match(/listening on/g)?.length, 1, `one ready line: ${out}`);
      // each worker dies in turn: the other serves on, and a new one takes its place on the same
      // port (once both first ones are gone, only the replacements answer there)
      const listening = () => err.match(/"msg":"listening"/g)?.length ?? 0;
      assert.equal(listening(), 2);
      for (const [i, victim] of workers().entries()) {
        process.kill(victim, 'SIGKILL');
        assert.deepEqual(await served(), Array(20).fill(200));
        await until(() => listening() === 3 + i, 30_000);
        assert.equal(listening(), 3 + i, `a replacement listens: ${err}`);
        assert.ok(!workers().includes(victim));
      }
      assert.match(err, /a server instance ended \(SIGKILL\); starting a new one on port \d+/);
      assert.deepEqual(await served(), Array(20).fill(200));
      assert.equal(out.match(/listening on/g)?.length, 1, `still one ready line: ${out}`);
    } finally {
      const last = workers();
      const code = await new Promise<number | null>((resolve) => {
        child.on('exit', resolve);
        child.kill('SIGTERM');
      });
      assert.equal(code, 0);
      assert.deepEqual(last.filter(alive), [], 'no worker left behind');
    }
  });

  it('finishes a function call in flight when Ctrl-C signals the whole process group, then exits 0', async () => {
    // detached: its own process group, as a terminal's foreground job (supervisor and server)
    const { child, base, exited } = await startCommand(['--port', '0', '--db', join(tmp.dir, 'ctrl-c.sqlite'), '--log-level', 'warn', '--roles', 'none'], { detached: true });
    const call = fetch(`${base}/$catalog/pause`, { method: 'POST', body: '[800, "in flight"]', headers: { 'content-type': 'application/json' } });
    await new Promise((r) => setTimeout(r, 200));
    process.kill(-(child.pid as number), 'SIGINT');
    const res = await call;
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { result: { ms: 800, tag: 'in flight' } });
    assert.equal(await exited, 0);
  });

  it('finishes a request in flight when SIGTERM arrives, then exits 0', async () => {
    const dir = project(join(tmp.dir, 'inflight'), SMALL);
    const { child, base, exited } = await startCommand(['--project', dir, '--port', '0', '--log-level', 'warn']);
    const port = Number(new URL(base).port);
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let answer = '';
    socket.on('data', (d) => (answer += String(d)));
    // half a request: the server has started reading it when the signal comes
    socket.write('GET /rest/$catalog HTTP/1.1\r\nHost: localhost\r\n');
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    socket.write('Connection: close\r\n\r\n');
    await new Promise((r) => socket.once('close', r));
    assert.match(answer, /^HTTP\/1\.1 200 OK/);
    assert.match(answer, /"dataClasses"/);
    assert.equal(await exited, 0);
  });

  it('runs a seed.ts of a project outside any ES-module package, once, on a new database', async () => {
    const dir = project(join(tmp.dir, 'seeded'), SMALL);
    writeFileSync(join(dir, 'seed.ts'), `export default async function seed(ds: any): Promise<void> {
  for (const text of ['one', 'two']) { const n = ds.Note.new(); n.set('text', text); await n.save(); }
}
`);
    const { child, base: url } = await startCommand(['--project', dir, '--port', '0', '--log-level', 'warn']);
    const body = (await (await fetch(`${url}/Note`)).json()) as { __COUNT: number };
    child.kill('SIGTERM');
    await new Promise((r) => child.on('exit', r));
    assert.equal(body.__COUNT, 2);
  });

  it('names the seed\'s file and line when it fails, keeping nothing of it, and exits 2', () => {
    const dir = project(join(tmp.dir, 'bad-seed'), SMALL);
    writeFileSync(join(dir, 'seed.ts'), `export default async function seed(ds: any): Promise<void> {
  const n = ds.Note.new(); n.set('text', 'kept?'); await n.save();
  throw new TypeError('the seed went wrong');
}
`);
    const r = spawnSync(process.execPath, [BIN, '--project', dir, '--port', '0'], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, DATASET_REST_INSTANCE: '1' } });
    assert.match(r.stderr, /seed\.ts:3:\d+ failed \(nothing of it was kept\): the seed went wrong/);
    assert.notEqual(r.status, 0);
  });

  it("with --expose-errors, answers a function's unexpected exception with its message and the stack naming its file and line, and warns at start-up; without, only names the function", async () => {
    const dir = project(join(tmp.dir, 'expose'), SMALL);
    for (const d of ['classes', 'node_modules']) mkdirSync(join(dir, d), { recursive: true });
    symlinkSync(fileURLToPath(new URL('../..', import.meta.url)), join(dir, 'node_modules', 'dataset-rest'), 'dir');
    writeFileSync(join(dir, 'classes', 'DataStore.ts'), `import { Datastore, exposed } from 'dataset-rest';
export default class DataStore extends Datastore {
  @exposed broken(): never {
    throw new RangeError('the inner secret');
  }
}
`);
    for (const expose of [true, false]) {
      const { child, base, exited, stderr } = await startCommand(['--project', dir, '--port', '0', '--log-level', 'warn', '--roles', 'none', ...(expose ? ['--expose-errors'] : [])]);
      try {
        const res = await fetch(`${base}/$catalog/broken`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]' });
        assert.equal(res.status, 500);
        const error = ((await res.json()) as { __ERROR: { errCode: number; message: string; extraDescription?: { stack?: string } }[] }).__ERROR;
        assert.equal(error[0].errCode, 7019);
        assert.match(error[0].message, /broken/);
        const text = JSON.stringify(error);
        if (expose) {
          assert.match(text, /the inner secret/);
          assert.match(error.map((e) => e.extraDescription?.stack ?? '').join(''), /DataStore\.ts:4:\d+/);
          assert.match(stderr(), /--expose-errors/);
        } else {
          assert.doesNotMatch(text, /the inner secret|DataStore\.ts/);
          assert.doesNotMatch(stderr(), /--expose-errors/);
        }
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    }
  });

  // a starter standing for npm: it runs the command and stays, as npm does, until killed — the
  // command itself, or (as npm, yarn and pnpm run a script) a `sh -c` running it, which dash does
  // not replace by the command: killed, npm leaves that shell behind, alive, adopted by init
  for (const throughShell of [false, true]) {
    it(`stops when the process that started it${throughShell ? ' through `sh -c` (as npm runs a script)' : ''} is killed with SIGKILL (as npm start would be), its workers too: nothing is left serving`, async () => {
      const dir = project(join(tmp.dir, throughShell ? 'orphan-sh' : 'orphan'), SMALL);
      const command = [process.execPath, BIN, '--project', dir, '--port', '0', '--log-level', 'warn'];
      const [file, args] = throughShell ? ['/bin/sh', ['-c', command.map((a) => `'${a}'`).join(' ')]] : [command[0], command.slice(1)];
      const starter = spawn(process.execPath, ['-e', `
        const { spawn } = require('node:child_process');
        spawn(${JSON.stringify(file)}, ${JSON.stringify(args)}, { stdio: 'inherit' });
        setInterval(() => {}, 1e9);
      `], { stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      starter.stderr.on('data', (d) => (err += String(d)));
      const base = await new Promise<string>((resolve, reject) => {
        starter.stdout.on('data', (d) => {
          const m = /(http:\S+\/rest)/.exec(String(d));
          if (m) resolve(m[1]);
        });
        starter.on('exit', () => reject(new Error(err)));
      });
      const children = (pid: number) => spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout.split('\n').map(Number).filter((n) => n > 0);
      const [first] = children(starter.pid as number);
      const shell = throughShell ? first : undefined;
      const [supervisor] = throughShell ? children(first) : [first];
      const [worker] = children(supervisor);
      assert.ok(supervisor && worker, `${supervisor} ${worker}`);
      assert.equal((await fetch(`${base}/$catalog`)).status, 200);
      starter.kill('SIGKILL');
      const left = () => [shell, supervisor, worker].filter((p): p is number => p !== undefined && alive(p));
      for (const end = Date.now() + 15_000; Date.now() < end && left().length > 0; ) await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(left(), [], `still running: ${left().join(' ')}`);
      await assert.rejects(fetch(`${base}/$catalog`, { signal: AbortSignal.timeout(2000) }));
      assert.match(err, /the process that started the server is gone/);
    });
  }
});
