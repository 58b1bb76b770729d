// The exposed functions as the catalog lists them: a `methods` array on each dataclass (its
// dataclass, entity and selection classes, then its project methods), one at the top for the
// datastore class, and the `singletons` section (shared singletons with exposed functions).

import { classCoreOf, DataClass } from '../datastore/dataclass.js';
import { Datastore } from '../datastore/datastore.js';
import { Entity } from '../datastore/entities/entity.js';
import { EntitySelection } from '../datastore/selections/selection.js';
import { exposedFunctions } from './exposure.js';
import { projectMethodsOf } from './method-registry.js';
import type { MethodScope } from './project-methods.js';
import { singletonFunctions, singletonsOf } from './singletons.js';

/** Where a function applies, in the catalog's words. */
export type ApplyTo = 'dataClass' | 'entity' | 'entityCollection';

export interface CatalogMethod {
  name: string;
  applyTo?: ApplyTo;
  exposed: true;
  allowedOnHTTPGET: boolean;
}

/** What REST can call on a dataclass: its exposed class functions, then its exposed project methods. */
export function dataClassMethods(dc: DataClass): CatalogMethod[] {
  const methods = [...projectMethodsOf(dc).values()].filter((m) => m.definition.exposed);
  return [
    ...classFunctions(dc),
    ...methods.map((m): CatalogMethod => ({ name: m.name, applyTo: SCOPE_APPLIES_TO[m.definition.scope], exposed: true, allowedOnHTTPGET: m.definition.onHttpGet === true })),
  ];
}

const SCOPE_APPLIES_TO: Record<MethodScope, ApplyTo> = { table: 'dataClass', currentRecord: 'entity', currentSelection: 'entityCollection' };

/** The exposed functions of a dataclass's classes: dataclass, then entity, then selection. */
export function classFunctions(dc: DataClass): CatalogMethod[] {
  const out: CatalogMethod[] = [];
  const add = (proto: object | undefined, stop: object, applyTo: ApplyTo) => {
    if (!proto) return;
    for (const f of exposedFunctions(proto, stop)) out.push({ name: f.name, applyTo, exposed: true, allowedOnHTTPGET: f.onHttpGet });
  };
  add(Object.getPrototypeOf(dc) as object, DataClass.prototype, 'dataClass');
  add(classCoreOf(dc).entityPrototype, Entity.prototype, 'entity');
  add(classCoreOf(dc).selectionPrototype, EntitySelection.prototype, 'entityCollection');
  return out;
}

/** The exposed functions of the datastore class (called at /rest/$catalog/{function}). */
export function datastoreMethods(ds: Datastore): CatalogMethod[] {
  return exposedFunctions(Object.getPrototypeOf(ds) as object, Datastore.prototype).map((f) => ({ name: f.name, exposed: true, allowedOnHTTPGET: f.onHttpGet }));
}

/** A shared singleton as the catalog's `singletons` section lists it (4D's docs/REST/$catalog.md, "singletons"). */
export interface CatalogSingleton {
  name: string;
  methods: { name: string; allowedOnHTTPGET: boolean; exposed: true }[];
}

/** The shared singletons with at least one exposed function, in name order. */
export function singletonEntries(ds: Datastore): CatalogSingleton[] {
  const out: CatalogSingleton[] = [];
  for (const [name, instance] of singletonsOf(ds)) {
    const methods = singletonFunctions(instance).map((f) => ({ name: f.name, allowedOnHTTPGET: f.onHttpGet, exposed: true as const }));
    if (methods.length > 0) out.push({ name, methods });
  }
  return out;
}
