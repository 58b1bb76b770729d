// The package (issue 18), as a user gets it: `npm pack` (its prepack builds dist/ from src/), the
// tarball installed into a fresh folder by a plain `npm install`, then used from there with no
// TypeScript of ours and no tsx registered by anyone but the package itself:
// - from plain JavaScript: `import { openProject, buildServer } from 'dataset-rest'` opens a project
//   whose TypeScript classes (and seed) import 'dataset-rest' too, and answers requests; the class
//   the project's entity extends is the package's own (one class identity, whatever module copy
//   the project's files were given); `require('dataset-rest')` works as well;
// - the command: `npx dataset-rest --version`; `--project DIR --port 0` serving that project; the
//   built-in demo (its classes and seed loaded from inside node_modules), with the Data Explorer's
//   page and script (bundled by esbuild from the package's explorer/ sources on first request);
// - the type declarations: a TypeScript file and the project's classes type-check with tsc against
//   the installed package (strict, no skipLibCheck).
//
// The tarball is packed from a copy of the working tree (node_modules linked), so the checkout's
// package.json and dist/ are never touched while other files run. The install takes the packages
// from npm's cache where it can (--prefer-offline; CI's cache is warm after `npm ci`), else from the
// registry. better-sqlite3 has no prebuilt binary it can download here (GitHub is out of reach) and
// would compile for over a minute: its install script (prebuild-install) is handed the checkout's
// own binary, the same version built for this Node, as a local prebuild;
// DATASET_REST_PACKAGE_TEST_COMPILE=1 leaves it to compile from source as a plain install would.
// Times and the tarball's size are printed as `# package:` lines.
//
// test:quick leaves this file out (a pack, a build and an install: minutes, and the registry).
//
// SQLite only: every datastore here is a file in a temporary folder.

import assert from 'node:assert/strict';
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../support/helpers.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
/** never copied into the folder packed: not the package's, or made by it */
const NOT_COPIED = new Set(['node_modules', '.git', 'dist', 'test-results', 'tmp', '.scratch', 'demo/data']);

const note = (text: string) => console.log(`# package: ${text}`);

/** The environment of a command run here: npm's own variables of a surrounding `npm test` left out. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  return { ...env, ...extra };
}

/** Runs a command to its end; fails the test with its output when it exits otherwise than 0. */
function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): SpawnSyncReturns<string> {
  const r = spawnSync(command, args, { cwd: options.cwd, env: options.env ?? cleanEnv(), encoding: 'utf8', timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, `${command} ${args.join(' ')} (in ${options.cwd}) ended with ${r.status ?? r.signal}${r.error ? ` (${r.error.message})` : ''}:\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** better-sqlite3's binary in the checkout, as the file prebuild-install looks for in a folder of local prebuilds. */
function localPrebuild(dir: string): string {
  const pkg = dirname(createRequire(join(REPO, 'package.json')).resolve('better-sqlite3/package.json'));
  const { version } = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string };
  assert.ok(existsSync(join(pkg, 'build', 'Release', 'better_sqlite3.node')), "the checkout's better-sqlite3 has no binary");
  mkdirSync(dir, { recursive: true });
  // (glibc: prebuild-install's name has no libc part)
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  run('tar', ['-czf', join(dir, name), 'build/Release/better_sqlite3.node'], { cwd: pkg });
  return dir;
}

interface Server {
  readonly base: string;
  /** SIGTERM to the whole process group (npm, the shell, the command, its server process); resolves once every one has ended */
  stop(): Promise<void>;
}

/** Whether any process of the group is still there. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `npx dataset-rest ARGS` (or another command: `npm start --`) in `cwd` (a process group of its own), until its ready line. */
async function startServer(cwd: string, args: readonly string[], command: readonly string[] = ['npx', '--no', '--', 'dataset-rest']): Promise<Server> {
  const child = spawn(command[0], [...command.slice(1), ...args], { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += String(d)));
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ready line within 90 s:\n${out}\n${err}`)), 90_000);
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
      reject(new Error(`npx dataset-rest ${args.join(' ')} exited with ${code}:\n${out}\n${err}`));
    });
  });
  const pgid = child.pid!;
  return {
    base,
    stop: async () => {
      if (groupAlive(pgid)) process.kill(-pgid, 'SIGTERM');
      const deadline = Date.now() + 15_000;
      while (groupAlive(pgid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      if (groupAlive(pgid)) {
        process.kill(-pgid, 'SIGKILL');
        assert.fail(`npx dataset-rest ${args.join(' ')}: still running 15 s after SIGTERM:\n${err}`);
      }
    },
  };
}

const MODEL = {
  name: 'Things',
  dataClasses: [{
    name: 'Thing',
    attributes: [
      { name: 'ID', type: 'long', identifying: true, autoincrement: true },
      { name: 'name', type: 'string' },
      { name: 'shout', kind: 'calculated', type: 'string' },
    ],
  }],
};

/** The project's files: TypeScript classes and seed, each importing the package. */
const PROJECT_FILES: Record<string, string> = {
  'model.json': JSON.stringify(MODEL, null, 2),
  'seed.ts': `import type { DatastoreWithClasses } from 'dataset-rest';
export default async function seed(ds: DatastoreWithClasses): Promise<void> {
  for (const name of ['first', 'second']) {
    const thing = ds.Thing.new();
    thing.set('name', name);
    await thing.save();
  }
}
`,
  'classes/ThingEntity.ts': `import { Entity } from 'dataset-rest';
export default class ThingEntity extends Entity {
  declare name: string | null;
  get shout(): string {
    return (this.name ?? '').toUpperCase() + '!';
  }
  greet(): string {
    return 'Hello, ' + String(this.name);
  }
}
`,
  'classes/DataStore.ts': `import { Datastore, exposed } from 'dataset-rest';
export default class DataStore extends Datastore {
  @exposed
  whoAmI(): string {
    return 'a TypeScript class of the project';
  }
}
`,
};

/** Plain JavaScript (an ES module) using the package, printing what it saw as one JSON line. */
const CHECK_MJS = `import { buildServer, Entity, openProject } from 'dataset-rest';
const [dir, db] = process.argv.slice(2);
const ds = await openProject(dir, { db, roles: false });
const app = await buildServer(ds, { logLevel: 'silent' });
const thing = await ds.Thing.get(1);
const page = await app.inject({ url: '/rest/Thing?$attributes=name,shout&$orderby=ID' });
const call = await app.inject({ method: 'POST', url: '/rest/$catalog/whoAmI', payload: [] });
console.log(JSON.stringify({
  greet: thing.greet(),
  isEntity: thing instanceof Entity,
  page: { status: page.statusCode, shouts: JSON.parse(page.body).__ENTITIES.map((e) => e.shout) },
  call: { status: call.statusCode, body: JSON.parse(call.body) },
}));
await app.close();
`;

/** The same from CommonJS. */
const CHECK_CJS = `const { openProject, buildServer, Entity } = require('dataset-rest');
console.log(JSON.stringify([typeof openProject, typeof buildServer, typeof Entity]));
`;

/** TypeScript against the declarations: names, signatures, and an error that must be one. */
const CHECK_TS = `import { buildServer, DatasetError, Entity, openProject, type DatastoreWithClasses, type EntityEvent } from 'dataset-rest';

export class NoteEntity extends Entity {
  declare title: string | null;
  get label(): string {
    return this.title ?? '';
  }
  onValidate(_event: EntityEvent): void {
    if (this.title === '') throw new DatasetError('REFUSED', 'the title is empty', { status: 422 });
  }
}

export async function serve(dir: string): Promise<string> {
  const ds: DatastoreWithClasses = await openProject(dir, { db: 'data.sqlite', roles: false });
  const app = await buildServer(ds, { logLevel: 'silent' });
  const res = await app.inject({ url: '/rest/$catalog' });
  const count: number = await ds.Thing.all().length;
  await app.close();
  return res.body + count;
}

// @ts-expect-error openProject takes the folder's path (the declarations are not any)
void openProject(42);
`;

describe('the package (npm pack, then a plain install into a fresh folder)', { timeout: 600_000 }, () => {
  const tmp = tempDir('dataset-rest-package-');
  after(() => tmp.remove());
  const source = join(tmp.dir, 'source');
  const app = join(tmp.dir, 'app');
  const project = join(app, 'project');
  let tarball = '';
  let manifest = '';

  before(() => {
    // the working tree as it is, without what is not the package's
    cpSync(REPO, source, { recursive: true, filter: (from) => !NOT_COPIED.has(relative(REPO, from)) && !from.endsWith('.tgz') });
    symlinkSync(join(REPO, 'node_modules'), join(source, 'node_modules'), 'dir');
    manifest = readFileSync(join(source, 'package.json'), 'utf8');
    const packed = join(tmp.dir, 'packed');
    mkdirSync(packed);
    let start = performance.now();
    run('npm', ['pack', '--pack-destination', packed, '--loglevel', 'warn'], { cwd: source, timeoutMs: 300_000 });
    const packSeconds = (performance.now() - start) / 1000;
    const [file] = readdirSync(packed).filter((f) => f.endsWith('.tgz'));
    assert.ok(file, 'npm pack made no tarball');
    tarball = join(packed, file);
    const listing = run('tar', ['-tzf', tarball], { cwd: tmp.dir }).stdout.trim().split('\n');
    note(`npm pack (prepack: tsc -p tsconfig.build.json) ${packSeconds.toFixed(1)} s; ${basename(tarball)} ${(statSync(tarball).size / 1024).toFixed(0)} kB, ${listing.length} files`);

    // a folder of its own, as a user's: a package.json with no "type" (its TypeScript classes load as CommonJS)
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'package-test-app', private: true }, null, 2));
    const env = process.env.DATASET_REST_PACKAGE_TEST_COMPILE === '1' ? cleanEnv() : cleanEnv({ npm_config_better_sqlite3_local_prebuilds: localPrebuild(join(tmp.dir, 'prebuilds')) });
    start = performance.now();
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel', 'error', tarball], { cwd: app, env, timeoutMs: 480_000 });
    note(`npm install --prefer-offline of the tarball into a fresh folder ${((performance.now() - start) / 1000).toFixed(1)} s${env.npm_config_better_sqlite3_local_prebuilds ? " (better-sqlite3: the checkout's binary as a local prebuild)" : ' (better-sqlite3 compiled)'}`);

    for (const [name, text] of Object.entries(PROJECT_FILES)) {
      mkdirSync(dirname(join(project, name)), { recursive: true });
      writeFileSync(join(project, name), text);
    }
  });

  it('is built by prepack: dist/ with .js and .d.ts, the command, the demo and the explorer sources; no src/, tests or data; the repository package.json put back', () => {
    const listing = new Set(run('tar', ['-tzf', tarball], { cwd: tmp.dir }).stdout.trim().split('\n').map((f) => f.replace(/^package\//, '')));
    for (const f of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/main.js', 'dist/process/cli.js', 'bin/dataset-rest.mjs', 'demo/model.json', 'demo/seed.ts', 'demo/classes/DataStore.ts', 'templates/init/model.json', 'templates/init/classes/Book.ts', 'explorer/index.html', 'explorer/src/main.tsx']) {
      assert.ok(listing.has(f), `the tarball lacks ${f}`);
    }
    for (const f of listing) assert.doesNotMatch(f, /^(src|test|bench|node_modules|demo\/data)\/|\.sqlite$|^bin\/pack\.mjs$/, `the tarball holds ${f}`);
    const installed = join(app, 'node_modules', 'dataset-rest');
    const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { version: string; exports: Record<string, unknown> };
    assert.equal(pkg.version, VERSION);
    assert.deepEqual(pkg.exports['.'], { types: './dist/index.d.ts', import: './dist/index.js', default: './dist/index.js' });
    assert.ok(!existsSync(join(installed, 'src')));
    // postpack gave the folder packed its own package.json back, byte for byte
    assert.equal(readFileSync(join(source, 'package.json'), 'utf8'), manifest);
  });

  it('from plain JavaScript: openProject and buildServer answer, with the TypeScript classes and seed of the project importing the package', () => {
    writeFileSync(join(app, 'check.mjs'), CHECK_MJS);
    writeFileSync(join(app, 'check.cjs'), CHECK_CJS);
    const r = run(process.execPath, ['check.mjs', project, join(tmp.dir, 'embedded.sqlite')], { cwd: app });
    const seen = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { greet: string; isEntity: boolean; page: { status: number; shouts: string[] }; call: { status: number; body: unknown } };
    assert.equal(seen.greet, 'Hello, first');
    // the class the project's ThingEntity extends is the Entity the script imported
    assert.equal(seen.isEntity, true);
    assert.deepEqual(seen.page, { status: 200, shouts: ['FIRST!', 'SECOND!'] });
    assert.deepEqual(seen.call, { status: 200, body: { result: 'a TypeScript class of the project' } });
    assert.deepEqual(JSON.parse(run(process.execPath, ['check.cjs'], { cwd: app }).stdout), ['function', 'function', 'function']);
  });

  it('npx dataset-rest --version (and -V) prints the version', () => {
    for (const flag of ['--version', '-V']) assert.equal(run('npx', ['--no', '--', 'dataset-rest', flag], { cwd: app }).stdout.trim(), VERSION);
  });

  it('npx dataset-rest --project DIR --port 0 serves the project, its TypeScript classes loaded', async () => {
    const server = await startServer(app, ['--project', project, '--db', join(tmp.dir, 'served.sqlite'), '--port', '0', '--log-level', 'warn', '--roles', 'none']);
    try {
      const catalog = await fetch(`${server.base}/$catalog`);
      assert.equal(catalog.status, 200);
      assert.deepEqual(((await catalog.json()) as { dataClasses: { name: string }[] }).dataClasses.map((d) => d.name), ['Thing']);
      const page = await fetch(`${server.base}/Thing(2)?$attributes=shout`);
      assert.equal(((await page.json()) as { shout: string }).shout, 'SECOND!');
      const call = await fetch(`${server.base}/$catalog/whoAmI`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]' });
      assert.deepEqual(await call.json(), { result: 'a TypeScript class of the project' });
    } finally {
      await server.stop();
    }
  });

  it('npx dataset-rest serves the built-in demo from inside node_modules, and the Data Explorer', async () => {
    const server = await startServer(app, ['--db', join(tmp.dir, 'demo.sqlite'), '--port', '0', '--log-level', 'warn']);
    try {
      const catalog = await fetch(`${server.base}/$catalog`);
      assert.equal(catalog.status, 200);
      const names = ((await catalog.json()) as { dataClasses: { name: string }[] }).dataClasses.map((d) => d.name);
      for (const name of ['City', 'Company', 'Employee']) assert.ok(names.includes(name), `the demo's catalog lacks ${name}: ${names.join(', ')}`);
      const employees = await fetch(`${server.base}/Employee?$top=2`);
      assert.equal(employees.status, 200);
      assert.equal(((await employees.json()) as { __COUNT: number }).__COUNT, 320);
      const origin = server.base.replace(/\/rest$/, '');
      const page = await fetch(`${origin}/$explorer`);
      assert.equal(page.status, 200);
      const html = await page.text();
      const script = /<script[^>]+src="([^"]+\.js)"/.exec(html)?.[1];
      assert.ok(script, `no script in the explorer's page: ${html}`);
      const bundle = await fetch(new URL(script, `${origin}/$explorer`));
      assert.equal(bundle.status, 200);
      assert.ok((await bundle.text()).length > 100_000, "the explorer's bundle is too small to be it");
    } finally {
      await server.stop();
    }
  });

  it('npx dataset-rest init DIR writes a project whose npm start serves it with the package installed above', async () => {
    const r = run('npx', ['--no', '--', 'dataset-rest', 'init', 'first'], { cwd: app });
    // (the package is installed in the folder above: nothing to install)
    assert.equal(r.stdout, 'Next:\n  cd first\n  npm start\n');
    const server = await startServer(join(app, 'first'), ['--port', '0', '--log-level', 'warn'], ['npm', 'start', '--silent', '--']);
    try {
      const books = await fetch(`${server.base}/Book/since?$params=[1970]&$attributes=title,author.name`);
      assert.equal(books.status, 200);
      const body = (await books.json()) as { __ENTITIES: { author: { name: string } }[] };
      assert.deepEqual(body.__ENTITIES.map((b) => b.author.name), ['Italo Calvino', 'Ursula K. Le Guin', 'Italo Calvino']);
    } finally {
      await server.stop();
    }
  });

  it("the type declarations: a TypeScript file and the project's classes type-check with tsc (strict, no skipLibCheck)", () => {
    // what a TypeScript user adds: typescript, @types/node, and @types/pg, whose types the
    // declarations of the storage name (PostgreSQL's options); the checkout's versions, in npm's cache
    const versionOf = (name: string) => (JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel', 'error', '--save-dev', ...['typescript', '@types/node', '@types/pg'].map((name) => `${name}@${versionOf(name)}`)], { cwd: app, timeoutMs: 180_000 });
    writeFileSync(join(app, 'check-types.mts'), CHECK_TS);
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] },
      // (and the files of the project `init` wrote, in the test before)
      files: ['check-types.mts', 'project/seed.ts', 'project/classes/ThingEntity.ts', 'project/classes/DataStore.ts', 'first/seed.ts', 'first/classes/Book.ts'],
    }, null, 2));
    run('npx', ['--no', '--', 'tsc', '-p', 'tsconfig.json'], { cwd: app, timeoutMs: 180_000 });
  });
});
