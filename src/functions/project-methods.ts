// Project methods: the modules of a project's methods/ folder, one method per file, named by the
// file. Each declares its dataclass, its scope (what it runs on: the whole dataclass, the current
// record, or the current selection the request defines) and whether REST may call it — what 4D's
// "Available through REST server" project methods were (reference §2.13). REST calls them at
// /rest/{dataClass}/{method} and /rest/{dataClass}({key})/{method}; they return an object or an array.

import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, extname, join } from 'node:path';
import type { DataClass } from '../datastore/dataclass.js';
import type { Datastore } from '../datastore/datastore.js';
import type { Entity } from '../datastore/entities/entity.js';
import type { EntitySelection } from '../datastore/selections/selection.js';
import { closest } from '../util/suggest.js';
import { classFunctions } from './catalog.js';
import { installMethod, type ProjectMethod } from './method-registry.js';
import { dataClassProblem, paramTypesProblem, type ParamType } from './params.js';

export type { ProjectMethod } from './method-registry.js';

export const METHOD_SCOPES = ['table', 'currentRecord', 'currentSelection'] as const;
export type MethodScope = (typeof METHOD_SCOPES)[number];

/** What a method of each scope runs on. */
export type MethodTarget<S extends MethodScope> = S extends 'table' ? DataClass : S extends 'currentRecord' ? Entity : EntitySelection;

export interface ProjectMethodDefinition<S extends MethodScope = MethodScope> {
  /** the dataclass the method belongs to (its URL is /rest/{dataClass}/…) */
  readonly dataClass: string;
  /** table: runs on the dataclass; currentRecord: on the entity of /rest/{dc}({key})/{method}; currentSelection: on the selection the request defines ($filter, $orderby, $entityset; the whole dataclass without them) */
  readonly scope: S;
  /** available through REST (4D's "Available through REST server"); false or absent: REST cannot see it */
  readonly exposed?: boolean;
  /** also callable with GET (parameters then come from $params) */
  readonly onHttpGet?: boolean;
  /** declared parameter types, as @params takes them */
  readonly params?: readonly ParamType[];
  /** the method: its target, then the call's parameters; returns an object or an array (maybe through a promise) */
  readonly run: (target: MethodTarget<S>, ...args: never[]) => unknown;
}

/** Declares a project method (the default export of a methods/ module); the identity, for types. */
export function projectMethod<S extends MethodScope>(definition: ProjectMethodDefinition<S>): ProjectMethodDefinition<S> {
  return definition;
}


const EXTENSIONS = ['.ts', '.js', '.mts', '.mjs'];

/** The error of a method module, `methods/<file>: …`, as the class loader reports its own. */
export type LoadProblem = (message: string) => Error;

/**
 * Loads the modules of `dir` (a project's methods/ folder) and installs each method on its
 * dataclass; nothing to do when the folder is absent. `importModule` loads a file as the class
 * loader does (TypeScript or JavaScript, ESM or CommonJS).
 */
export async function loadProjectMethods(dir: string, ds: Datastore, importModule: (file: string, where: string) => Promise<Record<string, unknown>>, problem: LoadProblem): Promise<void> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return;
  for (const entry of readdirSync(dir).sort()) {
    const file = join(dir, entry);
    const ext = extname(entry);
    if (!EXTENSIONS.includes(ext) || entry.endsWith('.d.ts') || !statSync(file).isFile()) continue;
    const where = `methods/${entry}`;
    const name = basename(entry, ext);
    if (!/^[A-Za-z_$][\w$]*$/.test(name)) throw problem(`${where}: "${name}" cannot name a method: the file name is the method's name, an identifier`);
    const mod = await importModule(file, where);
    // ESM: the definition is the default export; loaded as CommonJS, it sits one level deeper
    const outer = mod.default;
    const inner = isObject(outer) ? outer.default : undefined;
    const definition = [inner, outer].find((d) => isObject(d) && ['dataClass', 'scope', 'run'].some((k) => k in d));
    install(ds, { name, file, definition: checkDefinition(definition, where, ds, problem) }, where, problem);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';

function checkDefinition(d: unknown, where: string, ds: Datastore, problem: LoadProblem): ProjectMethodDefinition {
  if (d === null || typeof d !== 'object') throw problem(`${where}: must export default projectMethod({ dataClass, scope, exposed, run }) (import { projectMethod } from 'dataset-rest')`);
  const def = d as Record<string, unknown>;
  const names = ds.dataClasses().map((x) => x.name);
  if (typeof def.dataClass !== 'string' || !ds.dataClass(def.dataClass)) {
    const guess = typeof def.dataClass === 'string' ? closest(def.dataClass, names) : undefined;
    throw problem(`${where}: dataClass ${JSON.stringify(def.dataClass)} names no dataclass of the model (dataclasses: ${names.join(', ')})${guess ? `; did you mean ${guess}?` : ''}`);
  }
  if (!(METHOD_SCOPES as readonly unknown[]).includes(def.scope)) throw problem(`${where}: scope ${JSON.stringify(def.scope)} is not one of ${METHOD_SCOPES.join(', ')}`);
  if (typeof def.run !== 'function') throw problem(`${where}: run must be a function (target, ...parameters) => object or array`);
  for (const flag of ['exposed', 'onHttpGet'] as const) {
    if (def[flag] !== undefined && typeof def[flag] !== 'boolean') throw problem(`${where}: ${flag} is true or false; got ${JSON.stringify(def[flag])}`);
  }
  if (def.onHttpGet && !def.exposed) throw problem(`${where}: onHttpGet allows GET for a method REST can call; set exposed: true too`);
  const unknown = Object.keys(def).filter((k) => !['dataClass', 'scope', 'exposed', 'onHttpGet', 'params', 'run'].includes(k));
  if (unknown.length > 0) throw problem(`${where}: unknown propert${unknown.length === 1 ? 'y' : 'ies'} ${unknown.join(', ')} (a method declares dataClass, scope, exposed, onHttpGet, params, run)`);
  if (def.params !== undefined) {
    const why = paramTypesProblem(def.params) ?? dataClassProblem(def.params as ParamType[], (name) => Boolean(ds.dataClass(name)));
    if (why) throw problem(`${where}: ${why}`);
  }
  return def as unknown as ProjectMethodDefinition;
}

/** Installs a method on its dataclass, refusing a name REST could not tell from an attribute or a class function. */
function install(ds: Datastore, m: ProjectMethod, where: string, problem: LoadProblem): void {
  const dc = ds.dataClass(m.definition.dataClass) as DataClass;
  if (dc.model.attributesByName.has(m.name)) throw problem(`${where}: ${dc.name} has an attribute named ${m.name}: /rest/${dc.name}/${m.name} reads it; rename the method`);
  const entityLevel = m.definition.scope === 'currentRecord';
  const clash = classFunctions(dc).some((f) => f.name === m.name && (f.applyTo === 'entity') === entityLevel);
  if (clash) throw problem(`${where}: ${dc.name} has a class function named ${m.name}, called at the same URL; rename one of them`);
  installMethod(dc, m);
}


