// What the data commands (`dataset-rest import`, `export`, `migrate`, users, tokens) share: the
// --project, --db and --config flags, resolved by the server's own settings code (flags, then
// DATASET_REST_* variables, then the configuration file, with its errors: serverSettings below),
// flag parsing with --help, the project opened as its
// owner (no roles.json, no session: a command run on the database's machine may do everything),
// and the one form of a refusal: "dataset-rest: <message>" on stderr, exit code 2.

import type { Writable } from 'node:stream';
import { join, resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { CONFIG_FILE, resolveSettings, SettingsError } from '../process/cli-settings.js';
import { commandLine, DEMO, SETTINGS } from '../process/cli-options.js';
import type { DataClass } from '../datastore/dataclass.js';
import type { DatastoreWithClasses } from '../datastore/datastore.js';
import { didYouMean } from '../util/suggest.js';

/** The variables the server reads for --project and --db, read here too when the flag is absent. */
export const PROJECT_ENV = 'DATASET_REST_PROJECT';
export const DB_ENV = 'DATASET_REST_DB';
export const CONFIG_ENV = 'DATASET_REST_CONFIG';

/** A refusal before anything was done (a bad flag, an unknown dataclass or column, a missing file): exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Where the commands write, and read a password from: the process's stdout, stderr and stdin (a test puts its own in their place). */
export const io: { stdout: Writable & { isTTY?: boolean }; stderr: Writable & { isTTY?: boolean }; stdin: NodeJS.ReadableStream & { isTTY?: boolean } } = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin };

/** What the commands print on stderr, one line each: "dataset-rest: …". */
export function say(message: string): void {
  io.stderr.write(`dataset-rest: ${message.replace(/[^\S\n]*\n\s*/g, ' ')}\n`);
}

/** The flags every data command takes. */
export interface ProjectFlags {
  project?: string;
  db?: string;
  /** the configuration file read instead of the project's dataset-rest.json, as the server's --config */
  config?: string;
}

/** A command with the shared flags; `--help` prints its usage. Errors are thrown, never printed by commander. */
export function dataCommand(name: string, summary: string): Command {
  return new Command(`dataset-rest ${name}`)
    .description(summary)
    .option('--project <dir>', `project folder holding model.json (default: $${PROJECT_ENV}, else the built-in demo)`)
    .option('--db <file|url>', `SQLite file or postgres:// URL (default: $${DB_ENV}, else the "db" of the project's ${CONFIG_FILE}, else <project>/data/data.sqlite)`)
    .option('--config <file>', `the configuration file whose "db" is read (default: $${CONFIG_ENV}, else the project's ${CONFIG_FILE}), as the server reads it`)
    .exitOverride()
    .configureOutput({ outputError: () => {} })
    .allowExcessArguments(false);
}

/** An action of a command of actions (users add, tokens revoke): errors thrown, never printed by commander. */
export function actionCommand(program: Command, name: string, summary: string): Command {
  return program.command(name).description(summary).exitOverride().configureOutput({ outputError: () => {} }).allowExcessArguments(false);
}

/**
 * Parses the args of a command of actions: the action named, with the command's flags and its
 * own, and its arguments; or the exit code to end with (--help: 0; a bad flag or no action: 2, said).
 */
export function parseAction<F extends object>(program: Command, args: readonly string[]): { action: Command; flags: ProjectFlags & F; args: (string | undefined)[] } | number {
  const code = parseFlags(program, args);
  if (code !== undefined) return code;
  const action = program.args[0] === undefined ? undefined : program.commands.find((c) => c.name() === program.args[0]);
  if (!action) {
    const name = program.name().replace(/^dataset-rest /, '');
    say(`say what to do: dataset-rest ${name} ${program.commands.map((c) => c.name()).join('|')} (dataset-rest ${name} --help)`);
    return 2;
  }
  return { action, flags: { ...program.opts<ProjectFlags>(), ...(action.opts() as F) }, args: action.processedArgs as (string | undefined)[] };
}

/** Parses `args`: the command's options and arguments, or the exit code to end with (--help: 0; a bad flag: 2, said). */
export function parseFlags(program: Command, args: readonly string[]): number | undefined {
  try {
    program.parse([...args], { from: 'user' });
    return undefined;
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    if (e.exitCode === 0) return 0; // --help
    // (no action given: commander has printed the usage already)
    if (e.code !== 'commander.help') say(e.message.replace(/^error: /, ''));
    return 2;
  }
}

/** A whole number of 1 or more (commander's parser of a flag's value). */
export function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('a whole number of 1 or more');
  return Number(value);
}

/** A number of seconds, 0 or more (commander's parser of a flag's value). */
export function seconds(value: string): number {
  if (!/^\d+(\.\d+)?$/.test(value)) throw new InvalidArgumentError('a number of seconds, 0 or more');
  return Number(value);
}

/** One of `choices` (commander's parser of a flag's value). */
export function oneOf<T extends string>(choices: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(choices as readonly string[]).includes(value)) throw new InvalidArgumentError(`one of ${choices.join(', ')}`);
    return value as T;
  };
}

/**
 * The project opened for a command: as its owner (no roles.json), with a small pool. A project
 * that cannot open (no model, a bad model, a database that refuses) is a UsageError naming why.
 */
export async function openForCommand(flags: ProjectFlags, options: { withRoles?: boolean } = {}): Promise<DatastoreWithClasses> {
  const [{ openProject, ProjectError }, { ModelError }, { SchemaError }, { StorageConfigError }] = await Promise.all([
    import('../project/open.js'), import('../model/load-model.js'), import('../storage/schema.js'), import('../storage/open.js'),
  ]);
  const project = projectDir(flags);
  const db = databaseOf(flags);
  try {
    // a model.json edited since the last start is applied here as a server start applies it: said
    // on stderr, a line each, as the server logs it (stdout may be an export's data)
    // (withRoles: the project's roles.json, whose roles users are given — nothing is refused by it here)
    return await openProject(project, { db, ...(options.withRoles ? {} : { roles: false }), poolSize: 2, onSchemaChange: (line) => io.stderr.write(`schema: ${line}\n`) });
  } catch (e) {
    if (e instanceof ModelError) throw new UsageError(`${e.problems.length} problem(s) in the model: ${e.problems.join('; ')}`);
    if (e instanceof ProjectError || e instanceof SchemaError || e instanceof StorageConfigError) throw new UsageError(e.message);
    throw new UsageError(`cannot open the project ${project}: ${(e as Error).message}`);
  }
}


/**
 * The project and database a command works on, as the server picks them: the command's --project,
 * --db and --config given to the server's command line, then resolved as a start resolves them
 * (DATASET_REST_* variables, the configuration file — --config's, or the project's
 * dataset-rest.json — relative paths taken from the file's folder), so that both always agree. A
 * setting the server would refuse (a bad variable, a file that is no JSON) is refused here too.
 */
function serverSettings(flags: ProjectFlags): Settings {
  let known = resolvedOf.get(flags);
  if (known) return known;
  const program = commandLine().exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  const argv = [['--project', flags.project], ['--db', flags.db], ['--config', flags.config]].flatMap(([flag, value]) => (value === undefined ? [] : [flag as string, value]));
  try {
    program.parse(argv, { from: 'user' });
    resolveSettings(program, SETTINGS);
  } catch (e) {
    if (e instanceof SettingsError || e instanceof CommanderError) throw new UsageError(e.message.replace(/^error: /, ''));
    throw e;
  }
  const project = program.getOptionValue('project') as string | undefined;
  known = { project: project ?? DEMO, projectGiven: project !== undefined, db: program.getOptionValue('db') as string | undefined };
  resolvedOf.set(flags, known);
  return known;
}

interface Settings {
  readonly project: string;
  /** false: the built-in demo, for want of a project named by a flag, a variable or a --config file */
  readonly projectGiven: boolean;
  readonly db?: string;
}

const resolvedOf = new WeakMap<ProjectFlags, Settings>();

/** The project folder a command opens, as the server's (see serverSettings). */
export function projectDir(flags: ProjectFlags): string {
  return serverSettings(flags).project;
}

/** Whether a flag, a variable or a --config file named the project (else it is the built-in demo). */
export function projectGiven(flags: ProjectFlags): boolean {
  return serverSettings(flags).projectGiven;
}

/** The database a command works on, as the server's; undefined: the project's data/data.sqlite. */
export function databaseOf(flags: ProjectFlags): string | undefined {
  return serverSettings(flags).db;
}

/** The database in words, for the line a command says before it works (a URL without its password). */
export function databaseInWords(flags: ProjectFlags): string {
  const db = databaseOf(flags) ?? join(projectDir(flags), 'data', 'data.sqlite');
  if (!/^postgres(ql)?:\/\//i.test(db)) return `the SQLite file ${resolve(db)}`;
  try {
    const url = new URL(db);
    if (url.password !== '') url.password = '***';
    return `the PostgreSQL database ${url.toString()}`;
  } catch {
    return 'a PostgreSQL database';
  }
}


/** The dataclass of that name, or a UsageError with the closest name. */
export function dataClassNamed(ds: DatastoreWithClasses, name: string): DataClass {
  const names = ds.model.dataClasses.map((dc) => dc.name);
  if (!names.includes(name)) throw new UsageError(`there is no dataclass '${name}' in the model${didYouMean(name, names) || ` (it has ${names.join(', ')})`}`);
  return ds.dataClass(name) as DataClass;
}

/**
 * Runs a command's body: its exit code, or 2 after saying a UsageError. The datastore it opened
 * (given to `opened`) is closed whatever happens.
 */
export async function runCommand(body: (opened: (ds: DatastoreWithClasses) => void) => Promise<number>): Promise<number> {
  let ds: DatastoreWithClasses | undefined;
  try {
    return await body((d) => (ds = d));
  } catch (e) {
    if (e instanceof UsageError) {
      say(e.message);
      return 2;
    }
    throw e;
  } finally {
    await ds?.close();
  }
}
