// A project folder: model.json (the datastore definition), data/data.sqlite (the default
// database; --db names another file, or a PostgreSQL database by URL), optional classes/ and
// methods/ folders (user classes and project methods, loaded at every start), an optional
// roles.json (who may do what: without one, everything is open), an optional webhooks.json (the
// servers the changes are posted to: webhooks-file.ts), an optional auth.json (built-in users,
// API tokens, single sign-on: auth-file.ts) and an optional seed module (seed.ts or
// seed.js) run once, when the database is new.

import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { ClassLoadError, lineIn, loadClasses, projectModuleLoader, type ProjectModuleImport } from '../classes/loader.js';
import { loadProjectMethods } from '../functions/project-methods.js';
import { coreOf, Datastore, installPolicy, type DatastoreOptions, type DatastoreWithClasses } from '../datastore/datastore.js';
import { dataClassMethods, datastoreMethods, singletonEntries } from '../functions/catalog.js';
import { DIRECTORY_HOOKS, type DirectoryHooks } from '../datastore/directory.js';
import { parseRolesFile, RolesFileError, type KnownResources } from '../permissions/roles-file.js';
import { Policy } from '../permissions/policy.js';
import { loadModelFile } from '../model/load-model.js';
import { databaseTarget, openStorage, type DatabaseTarget } from '../storage/open.js';
import { lockSchema, readMeta, writeMeta } from '../storage/system-tables/meta.js';
import { syncSchema } from '../storage/schema.js';
import type { TransactionManager } from '../storage/transactions.js';
import { withDeadlines } from '../functions/deadlines.js';
import { readWebhooksFile, WebhooksFileError } from './webhooks-file.js';
import type { ReplicaOptions } from '../storage/replicas/router.js';
import { AUTH_FILE, AuthFileError, readAuthFile } from './auth-file.js';
import { NO_AUTH, type AuthConfig } from '../config/auth.js';
import { installBuiltInUserFunctions } from '../classes/built-in-users.js';

export interface ProjectOptions extends DatastoreOptions {
  /** the roles.json to enforce: default DIR/roles.json when it exists; false: none (everything open, for tests and tools) */
  readonly roles?: string | false;
  /** the SQLite file, or a postgres:// URL; default DIR/data/data.sqlite */
  readonly db?: string;
  /** PostgreSQL: connections in the pool at most */
  readonly poolSize?: number;
  /** the query time limit in ms: a statement running longer is stopped (QUERY_TIMEOUT); none by default */
  readonly queryTimeoutMs?: number;
  /** PostgreSQL read replicas of the database (storage/replicas/router.ts) */
  readonly replicas?: ReplicaOptions;
  /** told each change the start made to the database's schema, one line each ("Company: add attribute revenue (number)"): what the server logs */
  readonly onSchemaChange?: (line: string) => void;
  /**
   * The loader of the project's own modules (classes/, methods/, the seed): by default a new one
   * per opening, so an opening loads the project's files afresh. A process that opens one project
   * many times (a test suite) may pass one loader (projectModuleLoader()) to every opening: the
   * modules, and the copy of the core they import, are then loaded once and shared, their
   * module-level state with them.
   */
  readonly modules?: ProjectModuleImport;
}

export class ProjectError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ProjectError';
  }
}

/** A seed module's default export: fills a new database through the datastore core. */
export type SeedFunction = (ds: DatastoreWithClasses) => Promise<void>;

export async function openProject(dir: string, options: ProjectOptions = {}): Promise<DatastoreWithClasses> {
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new ProjectError(`the project folder ${root} does not exist`);
  const modelFile = join(root, 'model.json');
  if (!existsSync(modelFile)) throw new ProjectError(`${modelFile} is missing: a project folder holds a model.json`);
  const model = await loadModelFile(modelFile);
  const auth = readAuth(join(root, AUTH_FILE));
  const target = resolved(databaseTarget(options.db ?? join(root, 'data', 'data.sqlite')));
  const created = prepareDatabase(target);
  let storage: TransactionManager | undefined;
  let ds: DatastoreWithClasses | undefined;
  // one loader for this opening's modules: they share what they import (classes/loader.ts)
  const importModule = options.modules ?? projectModuleLoader();
  try {
    storage = await openStorage(target, { poolSize: options.poolSize, queryTimeoutMs: options.queryTimeoutMs, replicas: options.replicas });
    // the schema brought in line here, to tell what changed (Datastore.open then finds it in line)
    await syncSchema(storage, model, { onStep: (step) => options.onSchemaChange?.(step.description) });
    // statements check the time limit of the function call running them (functions/), and its
    // transactions roll back when it passes
    ds = await Datastore.open(model, withDeadlines(storage), { entitySets: options.entitySets, maxSetMembers: options.maxSetMembers, maxSetMemory: options.maxSetMemory, maxTextLength: options.maxTextLength, onEventError: options.onEventError, sessions: options.sessions, auth });
    try {
      await loadClasses(join(root, 'classes'), ds, importModule);
      await loadProjectMethods(join(root, 'methods'), ds, importModule, (message) => new ClassLoadError(message));
      // the built-in users' functions the project's DataStore class does not define itself
      if (auth.users) installBuiltInUserFunctions(ds);
    } catch (e) {
      if (e instanceof ClassLoadError) throw new ProjectError(`${root}${sep}${e.message}`);
      throw e;
    }
    // after the classes: roles.json names their functions
    const rolesFile = options.roles === false ? undefined : options.roles ?? join(root, 'roles.json');
    if (rolesFile !== undefined && (options.roles !== undefined || existsSync(rolesFile))) installPolicy(ds, readPolicy(rolesFile, ds));
    // the servers the changes are posted to (a server started on this datastore delivers them)
    const hooksFile = join(root, 'webhooks.json');
    if (existsSync(hooksFile)) coreOf(ds).webhooks.configure(readWebhooks(hooksFile, model));
    // a PostgreSQL database is new until a start has set it up (and seeded it); a SQLite file, when this start made it
    const isNew = created.isNew ?? (await readMeta(storage, SET_UP)) === undefined;
    if (isNew) await setUp(ds, storage, root, importModule);
    return ds;
  } catch (e) {
    // A SQLite file this start made and could not finish is removed, so the next start begins
    // afresh; on PostgreSQL the seed's transaction was rolled back, and the next start seeds again.
    await (ds !== undefined ? ds.close() : storage?.close());
    created.remove();
    throw e;
  }
}

/** auth.json's settings (none without the file); a ProjectError says what is wrong and where. */
function readAuth(file: string): AuthConfig {
  if (!existsSync(file)) return NO_AUTH;
  try {
    return readAuthFile(file);
  } catch (e) {
    if (e instanceof AuthFileError) throw new ProjectError(e.message);
    throw e;
  }
}

function readWebhooks(file: string, model: Parameters<typeof readWebhooksFile>[1]) {
  try {
    return readWebhooksFile(file, model);
  } catch (e) {
    if (e instanceof WebhooksFileError) throw new ProjectError(e.message);
    throw e;
  }
}

/** A roles.json read and checked against the datastore's dataclasses, attributes and functions; a ProjectError says what is wrong and where. */
function readPolicy(file: string, ds: DatastoreWithClasses): Policy {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ProjectError(`${file} cannot be read: ${(e as Error).message}`);
  }
  try {
    return Policy.fromFile(parseRolesFile(text, file, knownResources(ds)));
  } catch (e) {
    if (e instanceof RolesFileError) throw new ProjectError(e.message);
    throw e;
  }
}

/** What roles.json may name: the dataclasses and their attributes, the exposed functions (ds.f, DataClass.f), the singletons and theirs. */
function knownResources(ds: DatastoreWithClasses): KnownResources {
  const singletons = new Map(singletonEntries(ds).map((s) => [s.name, new Set(s.methods.map((m) => m.name))] as const));
  const dataClasses = new Map(ds.model.dataClasses.map((dc) => [dc.name, new Set(dc.attributes.map((a) => a.name))] as const));
  // the $directory hooks the DataStore class defines: roles.json may promote them, nothing more
  const promoteOnly = new Set(DIRECTORY_HOOKS.filter((h) => typeof (ds as DirectoryHooks)[h] === 'function').map((h) => `ds.${h}`));
  const functions = new Set([
    ...datastoreMethods(ds).map((m) => `ds.${m.name}`),
    ...promoteOnly,
    ...ds.dataClasses().flatMap((dc) => dataClassMethods(dc).map((m) => `${dc.name}.${m.name}`)),
  ]);
  return { dataClasses, functions, promoteOnly, singletons };
}

/** The meta key written once a database is set up (seeded, when the project has a seed). */
const SET_UP = 'setUp';

/**
 * Seeds a new database, in one transaction with the mark that it is set up. Under the schema
 * lock: instances starting together on a new database wait for each other, and only the first
 * seeds; the others find the mark.
 */
async function setUp(ds: DatastoreWithClasses, storage: TransactionManager, root: string, importModule: ProjectModuleImport): Promise<void> {
  const seed = ['seed.ts', 'seed.js'].map((f) => join(root, f)).find((f) => existsSync(f));
  let fn: SeedFunction | undefined;
  if (seed) {
    const mod = (await importModule(seed, basename(seed))) as { default?: SeedFunction | { default?: SeedFunction } };
    // Outside an ES-module package the file loads as CommonJS, whose exports sit under default.
    fn = typeof mod.default === 'function' ? mod.default : mod.default?.default;
    if (typeof fn !== 'function') throw new ProjectError(`${seed} must export a default async function (ds) => …`);
  }
  await ds.transaction(async () => {
    await lockSchema(storage);
    if ((await readMeta(storage, SET_UP)) !== undefined) return;
    try {
      await fn?.(ds);
    } catch (e) {
      // named with its file and line: the seed is the project's code, its failure the project's to fix
      const at = seed === undefined ? undefined : lineIn(e, seed);
      throw new ProjectError(`${seed === undefined ? 'the seed' : basename(seed)}${at === undefined ? '' : `:${at}`} failed (nothing of it was kept): ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
    await writeMeta(storage, SET_UP, new Date().toISOString());
  });
}

/** A SQLite file's absolute path. */
function resolved(target: DatabaseTarget): DatabaseTarget {
  return target.engine === 'sqlite' && target.file !== ':memory:' ? { engine: 'sqlite', file: resolve(target.file) } : target;
}

/** Known before a SQLite file is opened: whether it is new (and its folder made); PostgreSQL asks the database itself (SET_UP). */
function prepareDatabase(target: DatabaseTarget): { isNew?: boolean; remove(): void } {
  if (target.engine === 'postgres') return { remove() {} };
  // ':memory:' is SQLite's in-memory database, not a file name
  if (target.file === ':memory:') return { isNew: true, remove() {} };
  const db = target.file;
  if (existsSync(db)) return { isNew: false, remove() {} };
  mkdirSync(dirname(db), { recursive: true });
  return { isNew: true, remove: () => { for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true }); } };
}
