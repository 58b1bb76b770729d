// Where the project methods of each dataclass are kept once loaded: beside the datastore, in
// functions/, so that the core's DataClass knows nothing of REST calls.

import type { DataClass } from '../datastore/dataclass.js';
import type { ProjectMethodDefinition } from './project-methods.js';

/** A loaded project method. */
export interface ProjectMethod {
  readonly name: string;
  readonly file: string;
  readonly definition: ProjectMethodDefinition;
}

const registry = new WeakMap<DataClass, Map<string, ProjectMethod>>();

/** The project methods of a dataclass (methods/ folder), by name. */
export function projectMethodsOf(dc: DataClass): ReadonlyMap<string, ProjectMethod> {
  return registry.get(dc) ?? new Map();
}

export function installMethod(dc: DataClass, m: ProjectMethod): void {
  let methods = registry.get(dc);
  if (!methods) registry.set(dc, (methods = new Map()));
  methods.set(m.name, m);
}
