// User classes: the modules of a project's classes/ folder, named as 4D names its classes
// (DataStore, <DataClass>, <DataClass>Entity, <DataClass>Selection, or any other name for a shared
// singleton), loaded at project open and installed on the datastore: entity classes with their
// calculated attributes and events, selection classes, the dataclass and datastore classes (by
// prototype: 4D's data model classes are never instantiated with new, reference §6.4), and the
// one instance of each singleton class.

import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { require as tsxRequire } from 'tsx/cjs/api';
import { register as registerTsx, type NamespacedUnregister } from 'tsx/esm/api';
import type { CalculatedDefinition } from '../datastore/entities/calculated.js';
import { userMembers } from '../datastore/entities/class-install.js';
import { classCoreOf, DataClass } from '../datastore/dataclass.js';
import { Datastore, type DatastoreWithClasses } from '../datastore/datastore.js';
import { Entity, type EntityEventHandler } from '../datastore/entities/entity.js';
import { ATTRIBUTE_EVENT_KINDS, EVENT_KINDS, type EventKind } from '../datastore/entities/events.js';
import { EntitySelection } from '../datastore/selections/selection.js';
import { DatasetError } from '../errors/dataset-error.js';
import { exposedFunctions, getWithoutExposed } from '../functions/exposure.js';
import { dataClassProblem } from '../functions/params.js';
import { createSingleton, Singleton } from '../functions/singletons.js';
import { closest } from '../util/suggest.js';
import { canonical } from '../util/canonical.js';

/** A problem with a class module, reported at start-up; its message starts with `classes/<file>: ` (the project loader turns it into a ProjectError naming the full path). */
export class ClassLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClassLoadError';
  }
}

const EXTENSIONS = ['.ts', '.js', '.mts', '.mjs'];

type ClassKind = 'datastore' | 'dataclass' | 'entity' | 'selection' | 'singleton';

interface ClassFile {
  readonly file: string;
  readonly name: string;
  readonly kind: ClassKind;
  readonly dataClass?: DataClass;
  /** a name of no data model class: a singleton class, or a mistake (this says which once the class is loaded) */
  readonly notDataModel?: string;
}

/** Registers the core's classes as the ones `dataset-rest` hands out, before any user module loads. */
function registerCoreClasses(): void {
  canonical('Datastore', Datastore);
  canonical('DataClass', DataClass);
  canonical('Entity', Entity);
  canonical('EntitySelection', EntitySelection);
  canonical('DatasetError', DatasetError);
  canonical('Singleton', Singleton);
}

/** Loads and installs the classes of `dir` (a project's classes/ folder); nothing to do when it is absent. */
export async function loadClasses(dir: string, ds: Datastore, importModule: ProjectModuleImport = projectModuleLoader()): Promise<void> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return;
  registerCoreClasses();
  const files = classFiles(dir, ds);
  // The datastore and dataclass classes first, then entity and selection classes, singletons last
  // (their constructors may use the datastore): a getter or an event may use the others' methods
  // only when called, but installing in a fixed order keeps start-up errors predictable.
  const order: ClassKind[] = ['datastore', 'dataclass', 'entity', 'selection', 'singleton'];
  files.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind) || a.name.localeCompare(b.name));
  for (const f of files) {
    const cls = await importClass(f, importModule);
    install(f, cls, ds);
  }
}

function classFiles(dir: string, ds: Datastore): ClassFile[] {
  const seen = new Map<string, string>();
  const out: ClassFile[] = [];
  const names = ds.dataClasses().map((d) => d.name);
  for (const entry of readdirSync(dir).sort()) {
    const file = join(dir, entry);
    const ext = extname(entry);
    if (!EXTENSIONS.includes(ext) || entry.endsWith('.d.ts') || !statSync(file).isFile()) continue;
    const name = basename(entry, ext);
    const other = seen.get(name);
    if (other) throw new ClassLoadError(`classes/${entry}: the class ${name} is also defined by classes/${other}`);
    seen.set(name, entry);
    out.push(classify(entry, file, name, ds, names));
  }
  return out;
}

function classify(entry: string, file: string, name: string, ds: Datastore, names: string[]): ClassFile {
  if (name === 'DataStore') return { file, name, kind: 'datastore' };
  const exact = ds.dataClass(name);
  if (exact) return { file, name, kind: 'dataclass', dataClass: exact };
  for (const [suffix, kind] of [['Entity', 'entity'], ['Selection', 'selection']] as const) {
    const dc = name.endsWith(suffix) ? ds.dataClass(name.slice(0, -suffix.length)) : undefined;
    if (dc) return { file, name, kind, dataClass: dc };
  }
  // Any other name is a singleton class's, if the class extends Singleton (known once it is loaded)
  const stem = name.replace(/(Entity|Selection)$/, '');
  const guess = closest(stem, names);
  const notDataModel = `classes/${entry}: "${name}" names no dataclass of the model: a class file is DataStore, <DataClass>, <DataClass>Entity, <DataClass>Selection`
    + ` or a shared singleton class (one that extends Singleton) (dataclasses: ${names.join(', ')})${guess ? `; did you mean ${name.replace(stem, guess)}?` : ''}. Helper modules belong in a subfolder.`;
  return { file, name, kind: 'singleton', notDataModel };
}

/**
 * Whether a file is an ES module by Node's rules: .mts/.mjs are, .cts/.cjs are not, and any other
 * is one when the nearest package.json says "type": "module".
 */
function isEsModule(file: string): boolean {
  if (/\.m[tj]s$/.test(file)) return true;
  if (/\.c[tj]s$/.test(file)) return false;
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        return (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: unknown }).type === 'module';
      } catch {
        return false; // Node reads an unreadable package.json as no "type" too
      }
    }
    if (dirname(dir) === dir) return false;
  }
}

/** Loads a module of the project; a failure is a ClassLoadError starting with `where`. */
export type ProjectModuleImport = (file: string, where: string) => Promise<Record<string, unknown>>;

/**
 * A loader for the modules of one opening of a project (classes/, methods/, the seed): every module
 * it loads shares one tsx namespace. A namespace is a module cache of its own, so a project opened
 * again in the same process loads its files afresh; within one opening its modules share the
 * modules they import, `dataset-rest` included. (tsx's tsImport makes a namespace — a loader hook —
 * per call: a project of ten modules evaluated the core ten times, and the hooks added up for the
 * life of the process.) The namespace's hook stays registered: a module may import lazily.
 */
export function projectModuleLoader(): ProjectModuleImport {
  let scoped: NamespacedUnregister | undefined;
  return async (file, where) => {
    registerCoreClasses();
    try {
      // A TypeScript file in a CommonJS scope is required, not imported: tsx imports CommonJS
      // through a data: URL, and every stack frame of its code would then name that URL, not its
      // file and line. (A .js file there is imported still: its ESM syntax is transformed only that way.)
      if (/\.c?tsx?$/.test(file) && !isEsModule(file)) return tsxRequire(file, import.meta.url) as Record<string, unknown>;
      scoped ??= registerTsx({ namespace: randomUUID() });
      return (await scoped.import(pathToFileURL(file).href, import.meta.url)) as Record<string, unknown>;
    } catch (e) {
      const at = lineIn(e, file);
      throw new ClassLoadError(`${where}${at === undefined ? '' : `:${at}`}: failed to load: ${loadFailure(e)}`);
    }
  };
}

async function importClass(f: ClassFile, importModule: ProjectModuleImport): Promise<unknown> {
  const mod = await importModule(f.file, `classes/${basename(f.file)}`);
  // Outside an ES-module package the file loads as CommonJS, whose exports sit under default.
  const inner = mod.default !== null && typeof mod.default === 'object' ? (mod.default as Record<string, unknown>) : {};
  const cls = [mod.default, mod[f.name], inner.default, inner[f.name]].find((c) => typeof c === 'function');
  if (!cls) throw new ClassLoadError(f.notDataModel ?? `classes/${basename(f.file)}: must export its class, as default or under the name ${f.name}`);
  return cls;
}

/** One line saying why a module failed to load (esbuild puts the detail on the line after its summary). */
/** Where in `file` an exception was thrown ("line:column"), from its stack; undefined when no frame is in that file. */
export function lineIn(e: unknown, file: string): string | undefined {
  const stack = e instanceof Error ? e.stack : undefined;
  if (stack === undefined) return undefined;
  for (const frame of stack.split('\n')) {
    // (frames only: a message may name the file too, as esbuild's do)
    if (!/^\s+at /.test(frame)) continue;
    const i = frame.indexOf(`${file}:`);
    const m = i < 0 ? null : /^:(\d+):(\d+)/.exec(frame.slice(i + file.length));
    if (m) return `${m[1]}:${m[2]}`;
  }
  return undefined;
}

function loadFailure(e: unknown): string {
  const lines = (e instanceof Error ? e.message : String(e)).split('\n').map((l) => l.trim()).filter(Boolean);
  const esbuild = lines.map((l) => /^.*?:(\d+):\d+: ERROR: (.*)$/.exec(l)).find((m) => m);
  const line = esbuild ? `${esbuild[2]} (line ${esbuild[1]})` : (lines[0] ?? 'unknown error');
  if (/Cannot find (module|package) 'dataset-rest'/.test(line)) {
    return `${line}: install dataset-rest where the project can import it (npm install dataset-rest, or npm link from a checkout)`;
  }
  return line;
}

const BASES: Record<ClassKind, { base: { prototype: object }; baseName: string }> = {
  datastore: { base: Datastore, baseName: 'Datastore' },
  dataclass: { base: DataClass, baseName: 'DataClass' },
  entity: { base: Entity, baseName: 'Entity' },
  selection: { base: EntitySelection, baseName: 'EntitySelection' },
  singleton: { base: Singleton, baseName: 'Singleton' },
};

function install(f: ClassFile, cls: unknown, ds: Datastore): void {
  const { base, baseName } = BASES[f.kind];
  const c = cls as { prototype: object; name: string };
  if (typeof c.prototype !== 'object' || !Object.prototype.isPrototypeOf.call(base.prototype, c.prototype)) {
    if (f.notDataModel) throw new ClassLoadError(f.notDataModel);
    throw new ClassLoadError(`classes/${basename(f.file)}: the class ${c.name || f.name} must extend ${baseName} (import { ${baseName} } from 'dataset-rest')`);
  }
  // the core's own methods stay the core's: the core and REST call them (a save, a key, a page)
  const core = new Set(Object.getOwnPropertyNames(base.prototype).filter((n) => n !== 'constructor'));
  const replaced = [...userMembers(c.prototype, base.prototype)].filter((n) => core.has(n));
  if (replaced.length > 0) {
    throw new ClassLoadError(`classes/${basename(f.file)}: ${replaced.join(', ')} ${replaced.length === 1 ? 'is a method' : 'are methods'} of the core's ${baseName}: a class cannot replace ${replaced.length === 1 ? 'it' : 'them'} (give yours another name)`);
  }
  const getOnly = getWithoutExposed(c.prototype, base.prototype);
  if (getOnly.length > 0) {
    throw new ClassLoadError(`classes/${basename(f.file)}: ${getOnly.join(', ')}: @onHttpGet allows GET for an exposed function; mark it @exposed too`);
  }
  for (const fn of exposedFunctions(c.prototype, base.prototype)) {
    const unknown = fn.params && dataClassProblem(fn.params, (name) => Boolean(ds.dataClass(name)));
    if (unknown) throw new ClassLoadError(`classes/${basename(f.file)}: @params of ${fn.name}: ${unknown}`);
  }
  switch (f.kind) {
    case 'datastore':
      Object.setPrototypeOf(ds, c.prototype);
      return;
    case 'dataclass':
      Object.setPrototypeOf(f.dataClass as DataClass, c.prototype);
      return;
    case 'selection':
      classCoreOf(f.dataClass as DataClass).useSelectionClass(cls as typeof EntitySelection);
      return;
    case 'entity':
      installEntityClass(f, cls as typeof Entity);
      return;
    case 'singleton':
      installSingleton(f, cls as new () => Singleton, ds);
      return;
    default: {
      const never: never = f.kind;
      throw new Error(`unknown class kind ${String(never)}`);
    }
  }
}

/** A shared singleton class: its one instance made now (a constructor that throws stops the start). */
function installSingleton(f: ClassFile, cls: new () => Singleton, ds: Datastore): void {
  const where = `classes/${basename(f.file)}`;
  // roles.json names the datastore's functions "ds.<function>", a singleton's "<Class>.<function>"
  if (f.name === 'ds') throw new ClassLoadError(`${where}: a singleton class cannot be named ds (roles.json names the datastore so)`);
  try {
    createSingleton(ds as DatastoreWithClasses, f.name, cls);
  } catch (e) {
    throw new ClassLoadError(`${where}: the constructor of the singleton ${f.name} failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * An entity class: calculated attributes (`get x()`, `set x(v)`, `queryX(event)`,
 * `orderByX(event)`) and events (`validateSave()`, `validateSaveX()` …), then the class itself.
 */
function installEntityClass(f: ClassFile, cls: typeof Entity): void {
  const dc = f.dataClass as DataClass;
  const where = `classes/${basename(f.file)}`;
  const members = userMembers(cls.prototype, Entity.prototype);
  const statics = new Set(Object.getOwnPropertyNames(cls));
  const lookup = (name: string): PropertyDescriptor | undefined => {
    for (let p: object | null = cls.prototype; p && p !== Entity.prototype; p = Object.getPrototypeOf(p) as object | null) {
      const d = Object.getOwnPropertyDescriptor(p, name);
      if (d) return d;
    }
    return undefined;
  };
  // a function of the class: static first, else on the prototype (called with `this` the dataclass)
  const fn = (name: string): ((event: never) => unknown) | undefined => {
    const s = statics.has(name) ? (cls as unknown as Record<string, unknown>)[name] : undefined;
    if (typeof s === 'function') return (event) => (s as (e: unknown) => unknown).call(cls, event);
    const d = lookup(name);
    if (d && typeof d.value === 'function') return (event) => (d.value as (e: unknown) => unknown).call(dc, event);
    return undefined;
  };

  for (const attr of dc.model.attributes) {
    const d = lookup(attr.name);
    if (attr.kind === 'calculated') {
      const def: { -readonly [K in keyof CalculatedDefinition]: CalculatedDefinition[K] } = {};
      if (d?.get) {
        const get = d.get;
        def.get = (e) => get.call(e);
      }
      if (d?.set) {
        const set = d.set;
        def.set = (e, v) => set.call(e, v);
      }
      if (d && !d.get && !d.set) throw new ClassLoadError(`${where}: ${dc.name}.${attr.name} is a calculated attribute: declare it with get ${attr.name}() (and optionally set ${attr.name}(value))`);
      const query = fn(`query${capitalize(attr.name)}`);
      if (query) def.query = query as CalculatedDefinition['query'];
      const orderBy = fn(`orderBy${capitalize(attr.name)}`);
      if (orderBy) def.orderBy = orderBy as CalculatedDefinition['orderBy'];
      if (Object.keys(def).length > 0) dc.defineCalculated(attr.name, def);
    } else if (d && attr.kind !== 'alias') {
      throw new ClassLoadError(`${where}: "${attr.name}" is a ${attr.kind} attribute of ${dc.name}; the class cannot declare a member of that name`);
    }
  }
  for (const name of [...members, ...statics]) {
    for (const prefix of ['query', 'orderBy']) {
      const rest = name.slice(prefix.length);
      if (!name.startsWith(prefix) || !/^[A-Z_]/.test(rest)) continue;
      const attr = dc.model.attributes.find((a) => a.name === rest || capitalize(a.name) === rest);
      if (attr && attr.kind !== 'calculated') throw new ClassLoadError(`${where}: ${name}() names ${dc.name}.${attr.name}, a ${attr.kind} attribute: only calculated attributes take ${prefix} functions`);
    }
  }

  // Events: entity level `validateSave()`, attribute level `validateSaveSalary()` (§6.5). Model order.
  for (const kind of EVENT_KINDS) {
    for (const name of members) {
      if (!name.startsWith(kind)) continue;
      const rest = name.slice(kind.length);
      if (rest !== '' && !/^[A-Z_]/.test(rest)) continue; // savingsTotal: another method
      const d = lookup(name);
      if (!d || typeof d.value !== 'function') throw new ClassLoadError(`${where}: ${name} must be a method (an entity event)`);
      if (rest === '') continue; // entity level: registered after the attribute-level ones below
      if (!ATTRIBUTE_EVENT_KINDS.has(kind)) throw new ClassLoadError(`${where}: ${kind} is an entity-level event; ${name}() names an attribute`);
      const attr = dc.model.attributes.find((a) => a.name === rest || capitalize(a.name) === rest);
      if (!attr) throw new ClassLoadError(`${where}: ${name}() names no attribute of ${dc.name} (an attribute-level ${kind} event is ${kind}<AttributeName>)`);
    }
    const byAttr = new Map<string, EntityEventHandler>();
    for (const attr of dc.model.attributes) {
      const name = `${kind}${capitalize(attr.name)}`;
      const d = members.has(name) ? lookup(name) : undefined;
      if (d && typeof d.value === 'function') byAttr.set(attr.name, d.value as EntityEventHandler);
    }
    for (const [attrName, handler] of byAttr) {
      try {
        dc.defineEvent(kind, handler, attrName);
      } catch (e) {
        throw new ClassLoadError(`${where}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    const entityLevel = members.has(kind) ? lookup(kind) : undefined;
    if (entityLevel && typeof entityLevel.value === 'function') dc.defineEvent(kind as EventKind, entityLevel.value as EntityEventHandler);
  }
  classCoreOf(dc).useEntityClass(cls);
}
