// A project folder: model.json (the datastore definition), data/data.sqlite (the default
// database), optional classes/ and methods/ folders (user classes and project methods, loaded at
// every start) and an optional seed module (seed.ts or seed.js) run once, when the database is new.

import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import { ClassLoadError, importProjectModule, loadClasses } from './classes/loader.js';
import { loadProjectMethods } from './functions/project-methods.js';
import { Datastore, type DatastoreOptions, type DatastoreWithClasses } from './datastore/datastore.js';
import { loadModelFile } from './model/load-model.js';
import { sqliteStorage } from './storage/open.js';
import { withDeadlines } from './functions/deadlines.js';

export interface ProjectOptions extends DatastoreOptions {
  /** the SQLite file; default DIR/data/data.sqlite */
  readonly db?: string;
}

export class ProjectError extends Error {
  constructor(message: string) {
    super(message);
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
  // ':memory:' is SQLite's in-memory database, not a file name
  const memory = options.db === ':memory:';
  const db = memory ? ':memory:' : resolve(options.db ?? join(root, 'data', 'data.sqlite'));
  const isNew = memory || !existsSync(db);
  if (isNew && !memory) mkdirSync(dirname(db), { recursive: true });
  let ds: DatastoreWithClasses | undefined;
  try {
    // statements check the time limit of the function call running them (functions/), and its
    // transactions roll back when it passes
    ds = await Datastore.open(model, withDeadlines(sqliteStorage(db)), { entitySets: options.entitySets, onEventError: options.onEventError });
    try {
      await loadClasses(join(root, 'classes'), ds);
      await loadProjectMethods(join(root, 'methods'), ds, importProjectModule, (message) => new ClassLoadError(message));
    } catch (e) {
      if (e instanceof ClassLoadError) throw new ProjectError(`${root}${sep}${e.message}`);
      throw e;
    }
    const seed = ['seed.ts', 'seed.js'].map((f) => join(root, f)).find((f) => existsSync(f));
    if (isNew && seed) {
      // tsImport loads it as ESM, TypeScript or not, whatever the package.json around it says
      const mod = (await tsImport(pathToFileURL(seed).href, import.meta.url)) as { default?: SeedFunction | { default?: SeedFunction } };
      // Outside an ES-module package the file loads as CommonJS, whose exports sit under default.
      const fn = typeof mod.default === 'function' ? mod.default : mod.default?.default;
      if (typeof fn !== 'function') throw new ProjectError(`${seed} must export a default async function (ds) => …`);
      const target = ds;
      await ds.transaction(() => fn(target));
    }
    return ds;
  } catch (e) {
    await ds?.close();
    // A database this start created and could not finish is removed, so the next start begins afresh.
    if (isNew && !memory) for (const f of [db, `${db}-wal`, `${db}-shm`]) rmSync(f, { force: true });
    throw e;
  }
}
