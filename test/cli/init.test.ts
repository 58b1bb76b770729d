// dataset-rest init (issue 37, "a first project in one command"): the project it writes, served by
// its own `npm start` (dataset-rest found as a user's install puts it: node_modules above the
// folder, here links to this checkout) — a page, the relation both ways, the exposed function, the
// catalog, guests who read but may not write, the config file read; the next commands it prints;
// an empty folder taken as it is; refusals (a folder not empty, a file, no parent, bad flags) with
// exit code 2 and nothing written, not even the staging folder; --with-users with the password
// on stdin, then a login as that administrator.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { BIN, TEST_ENGINE, tempDir, testDatabase } from '../support/helpers.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
const TEMPLATE_FILES = ['.gitignore', 'README.md', 'classes/Book.ts', 'dataset-rest.json', 'model.json', 'package.json', 'roles.json', 'seed.ts'];

/** The environment of a command run here: npm's own variables of a surrounding `npm test` left out. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name))), npm_config_update_notifier: 'false', ...extra };
}

function run(args: readonly string[], options: { cwd?: string; input?: string; env?: Record<string, string> } = {}) {
  return spawnSync(process.execPath, [BIN, ...args], { cwd: options.cwd, input: options.input ?? '', encoding: 'utf8', timeout: 60_000, env: cleanEnv(options.env) });
}

function filesOf(dir: string, under = ''): string[] {
  return readdirSync(join(dir, under), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesOf(dir, join(under, e.name)) : [join(under, e.name)])).sort();
}

/** A refusal: exit code 2, one line on stderr, nothing on stdout. */
function refused(r: ReturnType<typeof run>, message: RegExp): void {
  assert.equal(r.status, 2, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stderr, message);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.equal(r.stdout, '');
}

interface Served {
  readonly base: string;
  get(path: string): Promise<{ status: number; body: any }>;
  post(path: string, body: unknown, cookie?: string): Promise<{ status: number; body: any; cookie?: string }>;
  stop(): Promise<void>;
  /** what it wrote on stderr so far (its log) */
  stderr(): string;
}

/** `npm start -- ARGS` in `cwd`, a process group of its own (npm, its shell, the command, its server), until the ready line. */
async function npmStart(cwd: string, args: readonly string[]): Promise<Served> {
  const child = spawn('npm', ['start', '--silent', '--', ...args], { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += String(d)));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line within 60 s:\n${out}\n${err}`)), 60_000);
    child.stdout.on('data', (d) => {
      out += String(d);
      const m = /dataset-rest listening on (http:\S+\/rest)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code}:\n${out}\n${err}`));
    });
  });
  const origin = base.replace(/\/rest$/, '');
  const json = async (res: Response) => {
    const text = await res.text();
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  };
  return {
    base,
    stderr: () => err,
    get: async (path) => {
      const res = await fetch(origin + path);
      return { status: res.status, body: await json(res) };
    },
    post: async (path, body, cookie) => {
      const res = await fetch(origin + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) }, body: JSON.stringify(body) });
      return { status: res.status, body: await json(res), cookie: res.headers.get('set-cookie')?.split(';')[0] };
    },
    stop: async () => {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // (gone already)
      }
      await exited;
    },
  };
}

describe('dataset-rest init', () => {
  const tmp = tempDir('dataset-rest-init-');
  after(() => tmp.remove());
  /** a folder with dataset-rest installed, as `npm install dataset-rest` leaves it (links to this checkout) */
  const installed = join(tmp.dir, 'installed');
  before(() => {
    mkdirSync(join(installed, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(REPO, join(installed, 'node_modules', 'dataset-rest'), 'dir');
    symlinkSync(join(REPO, 'bin', 'dataset-rest.mjs'), join(installed, 'node_modules', '.bin', 'dataset-rest'));
  });

  it('writes the project and a package.json depending on this version; prints cd DIR, then npm install && npm start', () => {
    const r = run(['init', 'first-app'], { cwd: tmp.dir });
    assert.equal(r.status, 0, r.stderr);
    const dir = join(tmp.dir, 'first-app');
    assert.deepEqual(filesOf(dir), TEMPLATE_FILES);
    assert.equal(r.stdout, 'Next:\n  cd first-app\n  npm install && npm start\n');
    assert.match(r.stderr, /^dataset-rest: init: wrote a new project in .*first-app/);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    assert.deepEqual(pkg.scripts, { start: 'dataset-rest --project .' });
    assert.deepEqual(pkg.dependencies, { 'dataset-rest': `^${VERSION}` });
    assert.equal(pkg.name, 'first-app');
    // the model is named after the folder: its session cookie is 4DSID_first_app, not another project's
    assert.equal(JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')).name, 'first_app');
    // no staging folder left beside it
    assert.deepEqual(readdirSync(tmp.dir).filter((f) => f.startsWith('.')), []);
  });

  it('npm start in it serves it: a page, the relation both ways, the exposed function, the catalog; guests read, and may not write', async () => {
    const r = run(['init', 'library'], { cwd: installed });
    assert.equal(r.status, 0, r.stderr);
    // dataset-rest is installed above: starting is all there is to do
    assert.equal(r.stdout, 'Next:\n  cd library\n  npm start\n');
    const dir = join(installed, 'library');
    const server = await npmStart(dir, ['--port', '0', '--db', await testDatabase(join(dir, 'data', 'data.sqlite')), '--log-level', 'warn']);
    try {
      const page = await server.get('/rest/Book?$top=1&$orderby=ID');
      assert.equal(page.status, 200, JSON.stringify(page.body));
      assert.equal(page.body.__COUNT, 8);
      assert.equal(page.body.__ENTITIES[0].title, 'A Wizard of Earthsea');
      assert.equal(page.body.__ENTITIES[0].authorName, 'Ursula K. Le Guin');
      const book = await server.get('/rest/Book(1)?$attributes=title,author.name');
      assert.equal(book.body.author.name, 'Ursula K. Le Guin');
      const authors = await server.get('/rest/Author?$top=1&$orderby=ID&$expand=books');
      assert.deepEqual(authors.body.__ENTITIES[0].books.__ENTITIES.map((b: any) => b.title), ['A Wizard of Earthsea', 'The Left Hand of Darkness', 'The Dispossessed']);
      const since = await server.get('/rest/Book/since?$params=[1970]&$attributes=title,year');
      assert.equal(since.status, 200, JSON.stringify(since.body));
      assert.deepEqual(since.body.__ENTITIES.map((b: any) => b.year), [1972, 1974, 1979]);
      const called = await server.post('/rest/Book/since', [1975]);
      assert.deepEqual(called.body.__ENTITIES.map((b: any) => b.title), ["If on a winter's night a traveler"]);
      const catalog = await server.get('/rest/$catalog');
      assert.deepEqual(catalog.body.dataClasses.map((d: any) => d.name), ['Author', 'Book']);
      const bookClass = await server.get('/rest/$catalog/Book');
      assert.ok(bookClass.body.methods.some((m: any) => m.name === 'since' && m.allowedOnHTTPGET === true), JSON.stringify(bookClass.body.methods));
      // roles.json: a guest may read, not write
      const write = await server.post('/rest/Book?$method=update', { title: 'Not by a guest' });
      assert.equal(write.status, 401, JSON.stringify(write.body));
    } finally {
      await server.stop();
    }
  });

  it('its dataset-rest.json is the settings file the server reads', () => {
    const r = run(['--project', join(tmp.dir, 'first-app'), '--print-config']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^port\s+8080\s+file .*first-app\/dataset-rest\.json$/m);
  });

  it('takes an empty folder as it is (the same folder: a shell may be in it), and prints no cd when it is the working folder', () => {
    const dir = join(tmp.dir, 'empty');
    mkdirSync(dir);
    const inode = statSync(dir).ino;
    const r = run(['init', '.'], { cwd: dir });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'Next:\n  npm install && npm start\n');
    assert.equal(statSync(dir).ino, inode);
    assert.deepEqual(filesOf(dir), TEMPLATE_FILES);
    assert.equal(JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')).name, 'empty');
  });

  it('quotes a folder name the shell would split', () => {
    const r = run(['init', "it's mine"], { cwd: tmp.dir });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, "Next:\n  cd 'it'\\''s mine'\n  npm install && npm start\n");
    assert.equal(JSON.parse(readFileSync(join(tmp.dir, "it's mine", 'package.json'), 'utf8')).name, 'it-s-mine');
  });

  it('--with-users: auth.json, and an administrator (password on stdin) who logs in once the package is installed; no link of its own left in the folder', async () => {
    // (on PostgreSQL the project's database is the variable's, as the server's would be)
    const db = TEST_ENGINE === 'postgres' ? await testDatabase('') : undefined;
    const r = run(['init', 'staff', '--with-users'], { cwd: tmp.dir, input: 'correct horse\n', env: db ? { DATASET_REST_DB: db } : {} });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'Next:\n  cd staff\n  npm install && npm start\n');
    assert.match(r.stderr, /init: wrote a new project in .*staff \(dataclasses Author and Book; the administrator admin, role Administrator, on /);
    const dir = join(tmp.dir, 'staff');
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'auth.json'), 'utf8')), { users: { minPasswordLength: 8 } });
    // the package it linked to open the project is gone: npm install puts its own there
    assert.equal(existsSync(join(dir, 'node_modules')), false);
    assert.equal(existsSync(join(REPO, 'package.json')), true);
    mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(REPO, join(dir, 'node_modules', 'dataset-rest'), 'dir');
    symlinkSync(join(REPO, 'bin', 'dataset-rest.mjs'), join(dir, 'node_modules', '.bin', 'dataset-rest'));
    const server = await npmStart(dir, ['--port', '0', '--log-level', 'warn', ...(db ? ['--db', db] : [])]);
    try {
      const wrong = await server.post('/rest/$catalog/authentify', [{ userName: 'admin', password: 'not the one' }]);
      assert.equal(wrong.status, 401, `${JSON.stringify(wrong.body)}\n${server.stderr()}`);
      const login = await server.post('/rest/$catalog/authentify', [{ userName: 'admin', password: 'correct horse' }]);
      assert.equal(login.status, 200, `${JSON.stringify(login.body)}\n${server.stderr()}`);
      assert.equal(login.body.result.success, true);
      assert.deepEqual([...login.body.result.privileges].sort(), ['admin', 'edit']);
      // the seed ran when init opened the project: the data is there
      const count = await server.get('/rest/Book?$top=0');
      assert.equal(count.body.__COUNT, 8);
      const created = await server.post('/rest/Book?$method=update', { title: 'By the administrator', year: 2026 }, login.cookie);
      assert.equal(created.status, 200, JSON.stringify(created.body));
    } finally {
      await server.stop();
    }
  });

  it('--with-users --admin NAME: the administrator is named so (dataset-rest users list)', () => {
    const r = run(['init', 'team', '--with-users', '--admin', 'boss'], { cwd: installed, input: 'long enough\n' });
    assert.equal(r.status, 0, r.stderr);
    const list = run(['users', 'list', '--json', '--project', join(installed, 'team')]);
    assert.equal(list.status, 0, list.stderr);
    assert.deepEqual(JSON.parse(list.stdout).map((u: any) => [u.userName, u.roles]), [['boss', ['Administrator']]]);
  });

  describe('refuses, exit code 2, nothing written', () => {
    const refusals = join(tmp.dir, 'refusals');
    before(() => {
      mkdirSync(join(refusals, 'full'), { recursive: true });
      writeFileSync(join(refusals, 'full', 'notes.txt'), 'mine');
      writeFileSync(join(refusals, 'a-file'), 'mine');
    });
    const cases: [string, string[], RegExp][] = [
      ['a folder that is not empty', ['init', 'full'], /^dataset-rest: full exists and is not empty: name a new folder, or an empty one \(nothing was written\)$/m],
      ['a file', ['init', 'a-file'], /a-file exists and is not a folder/],
      ['a folder in a folder that does not exist', ['init', 'no/such'], /the folder .*refusals\/no does not exist/],
      ['no folder', ['init'], /missing required argument 'dir'/],
      ['an unknown flag', ['init', 'x', '--bogus'], /unknown option '--bogus'/],
      ['two folders', ['init', 'x', 'y'], /too many arguments/],
      ['--admin without --with-users', ['init', 'x', '--admin', 'root'], /--admin names the administrator --with-users creates/],
      ['--admin without its value', ['init', 'x', '--with-users', '--admin'], /option '--admin <name>' argument missing/],
      ['--with-users and no password on stdin', ['init', 'x', '--with-users'], /stdin ended before a password/],
      ['--with-users and an empty first line on stdin', ['init', 'x', '--with-users'], /--with-users: no password on stdin/],
      ['--with-users and a password too short', ['init', 'x', '--with-users'], /--with-users: the password read from stdin is 5 characters long: this project asks for at least 8 .*\(nothing was written\)$/m],
      ['--with-users and a user name the store refuses', ['init', 'x', '--with-users', '--admin', ' boss'], /--with-users: .*' boss' begins or ends with spaces \(nothing was written\)$/m],
      // (a failure once the project is written, in its staging folder: opening the database it names)
      ['--with-users and a database that cannot be used', ['init', 'x', '--with-users'], /mysql:\/\/ is not a database this server can use/],
    ];
    for (const [what, args, message] of cases) {
      it(what, () => {
        const input = what.includes('too short') ? 'short\n' : what.includes('empty first line') ? '\nlong enough\n' : what.includes('--with-users and a') ? 'long enough\n' : '';
        const env: Record<string, string> = what.includes('database') ? { DATASET_REST_DB: 'mysql://u:p@127.0.0.1/db' } : {};
        refused(run(args, { cwd: refusals, input, env }), message);
        assert.deepEqual(readdirSync(refusals).sort(), ['a-file', 'full']);
        assert.deepEqual(readdirSync(join(refusals, 'full')), ['notes.txt']);
      });
    }
  });

  it('--help says what it does and exits 0', () => {
    const r = run(['init', '--help']);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /Usage: dataset-rest init \[options\] <dir>/);
    assert.match(r.stdout, /--with-users/);
  });

  it('is named among the commands when one is mistyped', () => {
    const r = run(['inti']);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /did you mean 'init'\?/);
  });
});
