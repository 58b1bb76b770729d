// Shared singletons (4D's `shared singleton Class`, reference §2.11): a class of the project's
// classes/ folder that extends Singleton is made once when the project opens, and its @exposed
// functions are called at /rest/$singleton/{Class}/{function}. One instance per server process:
// what it keeps in its fields is that process's alone (see docs/decisions.md).

import type { DatastoreWithClasses } from '../datastore/datastore.js';
import { exposedFunctions, type ExposedFunction } from './exposure.js';

/** The singleton the server is making, and its datastore (set only while the server constructs it). */
let constructing: { readonly ds: DatastoreWithClasses; readonly cls: new () => Singleton } | undefined;

/**
 * Base class of a shared singleton (classes/<Name>.ts, `export default class Tools extends
 * Singleton`). The server makes the one instance, with `new` and no arguments, when the project
 * opens; `this.ds` is the datastore (from the constructor on). User code does not construct one.
 */
export class Singleton {
  readonly #ds: DatastoreWithClasses;

  constructor() {
    // (the class being made, not any: another singleton's constructor cannot make a second one of some class)
    if (constructing === undefined || new.target !== constructing.cls) {
      throw new TypeError(`${new.target.name} is a shared singleton: the server makes its one instance when the project opens; call its functions over REST at /rest/$singleton/${new.target.name}/{function}`);
    }
    this.#ds = constructing.ds;
  }

  /** The datastore (as `ds` in 4D): its dataclasses are read with the privileges of the REST caller whose call runs. */
  get ds(): DatastoreWithClasses {
    return this.#ds;
  }
}

const registry = new WeakMap<object, Map<string, Singleton>>();

/** Makes the instance of a singleton class for a datastore and keeps it under its name. */
export function createSingleton(ds: DatastoreWithClasses, name: string, cls: new () => Singleton): Singleton {
  constructing = { ds, cls };
  let instance: Singleton;
  try {
    instance = new cls();
  } finally {
    constructing = undefined;
  }
  let byName = registry.get(ds);
  if (!byName) registry.set(ds, (byName = new Map()));
  byName.set(name, instance);
  return instance;
}

/** The shared singletons of a datastore, by class name, in name order. */
export function singletonsOf(ds: object): ReadonlyMap<string, Singleton> {
  const byName = registry.get(ds);
  return byName ? new Map([...byName].sort(([a], [b]) => a.localeCompare(b))) : new Map();
}

/** A singleton's exposed functions. */
export function singletonFunctions(instance: Singleton): ExposedFunction[] {
  return exposedFunctions(Object.getPrototypeOf(instance) as object, Singleton.prototype);
}
