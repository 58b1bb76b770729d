// dataset-rest init DIR [--with-users]: a first project in one command (issue 37). It copies
// templates/init/ (two dataclasses and their relation, a class with an exposed function, roles,
// a config file, a seed, a README), adds a package.json whose `npm start` serves the folder, and
// prints the next two commands. Everything is written into a hidden folder beside DIR, which then
// becomes DIR: a refusal or a failure leaves nothing behind, not part of a project. With
// --with-users, auth.json turns the built-in users on and an administrator is added to the folder
// (by `dataset-rest users add`'s own code) before it becomes DIR.

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { isDatasetError } from '../errors/dataset-error.js';
import { VERSION } from '../process/cli-options.js';
import { databaseInWords, io, openForCommand, parseFlags, runCommand, say, UsageError } from './common.js';
import { askAdministrator, MIN_PASSWORD_LENGTH, type Administrator } from './init-admin.js';
import { usersOf } from './users.js';

/** The files every new project starts from (beside src/ in the checkout, beside dist/ in the package). */
export const TEMPLATE = fileURLToPath(new URL('../../templates/init', import.meta.url));
/** This package's folder: the project's classes import it as 'dataset-rest' while init adds the administrator. */
const PACKAGE_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The administrator's role: the template's roles.json gives it the server's `admin` privilege. */
export const ADMIN_ROLE = 'Administrator';

interface InitFlags {
  withUsers?: boolean;
  admin?: string;
}

function command(): Command {
  return new Command('dataset-rest init')
    .description('Writes a small working project into DIR (a new folder, or an empty one); `npm start` in it serves it.')
    .argument('<dir>', 'the folder to write the project in')
    .option('--with-users', 'turn the built-in users on (auth.json) and create an administrator: its name and password asked on the terminal, or the password read from stdin')
    .option('--admin <name>', "with --with-users: the administrator's user name (default: asked on a terminal, else admin)")
    .exitOverride()
    .configureOutput({ outputError: () => {} })
    .allowExcessArguments(false);
}

export async function main(args: readonly string[]): Promise<number> {
  const program = command();
  const code = parseFlags(program, args);
  if (code !== undefined) return code;
  const flags = program.opts<InitFlags>();
  const [dir] = program.processedArgs as [string];
  return runCommand(() => init(dir, flags));
}

async function init(dir: string, flags: InitFlags): Promise<number> {
  if (flags.admin !== undefined && !flags.withUsers) throw new UsageError('--admin names the administrator --with-users creates: give both, or neither');
  const target = resolve(dir);
  const replacing = checkTarget(dir, target);
  // asked before anything is written: a mistake, or Ctrl-C at the prompt, leaves nothing
  const admin = flags.withUsers ? await askAdministrator(flags.admin) : undefined;
  const staging = join(dirname(target), `.${basename(target)}.init-${randomBytes(4).toString('hex')}`);
  try {
    mkdirSync(staging);
  } catch (e) {
    throw new UsageError(`cannot write in ${dirname(target)}: ${(e as Error).message}`);
  }
  // (a kill while the administrator is added, the only step that takes a while: the staging folder goes too)
  const interrupted = () => {
    rmSync(staging, { recursive: true, force: true });
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  try {
    writeProject(staging, target, admin !== undefined);
    if (admin) {
      const unlink = linkPackage(staging);
      try {
        await addAdministrator(staging, admin);
      } finally {
        unlink();
      }
    }
    place(staging, target, replacing);
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    throw e;
  } finally {
    process.off('SIGINT', interrupted);
  }
  // (the database named as the server will find it: in DIR, not in the staging folder)
  say(`init: wrote a new project in ${target} (dataclasses Author and Book${admin ? `; the administrator ${admin.name}, role ${ADMIN_ROLE}, on ${databaseInWords({ project: target })}` : ''})`);
  io.stdout.write(`Next:\n${nextCommands(target).map((c) => `  ${c}\n`).join('')}`);
  return 0;
}

/** Whether DIR is there already (an empty folder, taken); refuses anything else there, and a folder that cannot be made. */
function checkTarget(dir: string, target: string): boolean {
  if (existsSync(target)) {
    if (!statSync(target).isDirectory()) throw new UsageError(`${dir} exists and is not a folder: name a new folder`);
    if (readdirSync(target).length > 0) throw new UsageError(`${dir} exists and is not empty: name a new folder, or an empty one (nothing was written)`);
    return true;
  }
  const parent = dirname(target);
  if (!existsSync(parent) || !statSync(parent).isDirectory()) throw new UsageError(`the folder ${parent} does not exist: create it first, or name a folder in an existing one`);
  return false;
}

/** The template's files, named for the project, and what depends on the flags. */
function writeProject(dir: string, target: string, withUsers: boolean): void {
  const name = modelName(target);
  for (const file of templateFiles(TEMPLATE)) {
    const to = join(dir, relative(TEMPLATE, file));
    mkdirSync(dirname(to), { recursive: true });
    writeFileSync(to, readFileSync(file, 'utf8').replaceAll('{{name}}', name));
  }
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(packageJson(target), null, 2)}\n`);
  // (written here, not shipped in the template: npm pack leaves every .gitignore out)
  writeFileSync(join(dir, '.gitignore'), 'node_modules/\ndata/\n');
  if (withUsers) {
    writeFileSync(join(dir, 'auth.json'), `${JSON.stringify({ users: { minPasswordLength: MIN_PASSWORD_LENGTH } }, null, 2)}\n`);
    const readme = join(dir, 'README.md');
    writeFileSync(readme, `${readFileSync(readme, 'utf8')}
Built-in users are on (\`auth.json\`): log in with \`POST /rest/$catalog/authentify\` and
\`[{"userName": "…", "password": "…"}]\`; add one with \`npx dataset-rest users add NAME --role Editor --project .\`.
`);
  }
}

function templateFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? templateFiles(join(dir, e.name)) : [join(dir, e.name)])).sort();
}

/** The model's name, from the folder's: it names the session cookie (4DSID_<name>), which two projects on one host must not share. */
export function modelName(target: string): string {
  const name = basename(target).replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  return name === '' ? 'Project' : name;
}

/** The project's package.json: `npm start` serves the folder with the dataset-rest it depends on. */
function packageJson(target: string): Record<string, unknown> {
  let name = basename(target).toLowerCase().replace(/[^a-z0-9._~-]+/g, '-').replace(/^[._-]+/, '').slice(0, 214);
  // (npm refuses to install a package into one of the same name)
  if (name === '' || name === 'dataset-rest') name = 'dataset-rest-project';
  return {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    scripts: { start: 'dataset-rest --project .' },
    dependencies: { 'dataset-rest': `^${VERSION}` },
  };
}

/**
 * The staging folder made DIR: renamed to it, or, when DIR is an empty folder already (perhaps a
 * shell's working folder, which must stay the same folder), its files moved into it.
 */
function place(staging: string, target: string, replacing: boolean): void {
  if (!replacing) {
    renameSync(staging, target);
    return;
  }
  const moved: string[] = [];
  try {
    if (readdirSync(target).length > 0) throw new UsageError(`${target} is not empty any more: something wrote into it meanwhile (nothing was written)`);
    for (const entry of readdirSync(staging)) {
      renameSync(join(staging, entry), join(target, entry));
      moved.push(entry);
    }
  } catch (e) {
    for (const entry of moved) renameSync(join(target, entry), join(staging, entry));
    throw e;
  }
  rmSync(staging, { recursive: true, force: true });
}

/**
 * What to type next: install the package the project imports, then start it — or only start it
 * when a folder above already has dataset-rest installed (npm start finds its command there, and
 * the project's classes its module).
 */
function nextCommands(target: string): string[] {
  const where = relative(process.cwd(), target);
  const start = installedAbove(target) ? 'npm start' : 'npm install && npm start';
  return where === '' ? [start] : [`cd ${shellWord(where)}`, start];
}

function installedAbove(target: string): boolean {
  for (let dir = dirname(target); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'node_modules', 'dataset-rest', 'package.json')) && existsSync(join(dir, 'node_modules', '.bin', 'dataset-rest'))) return true;
    if (dirname(dir) === dir) return false;
  }
}

/** A path as a POSIX shell reads it back. */
function shellWord(text: string): string {
  return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * Makes 'dataset-rest' importable from the project for the time the administrator is added (the
 * project is opened, so its classes are loaded) when no folder above has it yet: this package,
 * linked from DIR/node_modules; undone before the folder becomes DIR (`npm install` installs it).
 */
function linkPackage(dir: string): () => void {
  if (installedAbove(dir)) return () => {};
  const modules = join(dir, 'node_modules');
  const link = join(modules, 'dataset-rest');
  mkdirSync(modules);
  // (a junction on Windows: no privilege needed; the type is ignored elsewhere)
  symlinkSync(PACKAGE_ROOT, link, 'junction');
  return () => {
    unlinkSync(link);
    rmdirSync(modules);
  };
}

/**
 * Adds the administrator as `dataset-rest users add NAME --role Administrator` does (the project
 * opened as that command opens it, on the database the server will use, its seed run there), with
 * the password asked already.
 */
async function addAdministrator(dir: string, admin: Administrator): Promise<void> {
  const ds = await openForCommand({ project: dir }, { withRoles: true });
  try {
    await usersOf(ds).add(admin.name, admin.password, [ADMIN_ROLE]);
  } catch (e) {
    if (isDatasetError(e)) throw new UsageError(`--with-users: ${e.message}`);
    throw e;
  } finally {
    await ds.close();
  }
}
