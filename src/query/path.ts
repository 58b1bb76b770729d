// The one attribute-path resolver: walks a path (names as written) through the model for every
// reader of paths — queries, sorts, computations, projections, lookups — with one wording for a
// name that is not there. An alias stands for its own path. What a path may end on is each
// reader's rule; the walk only says where it goes.

import { MAX_PATH_DEPTH } from '../config/limits.js';
import { DatasetError } from '../errors/dataset-error.js';
import type {
  AliasAttribute, AttributeModel, CalculatedAttribute, DataClassModel, RelatedEntitiesAttribute, RelatedEntityAttribute, StorageAttribute, Visibility,
} from '../model/types.js';
import { didYouMean } from '../util/suggest.js';
import type { PathStep } from './ast.js';
import type { AttributePath } from './plan.js';
import { LruCache, planStats } from './plan-cache.js';

/** A step reached through an alias the client wrote: messages name the alias, not what it stands for. */
interface Written {
  readonly alias?: AliasAttribute;
}

/** A relation step of a path: N→1 (one entity) or 1→N (several; `classIndex` is `{n}`). */
export type Hop = Written & (
  | { readonly kind: 'one'; readonly attr: RelatedEntityAttribute }
  | { readonly kind: 'many'; readonly attr: RelatedEntitiesAttribute; readonly classIndex?: number });

/** Where a path ends: an attribute that is not followed further. */
export type PathEnd = Written & (
  /** `inside`: the steps after an object attribute (a property path, maybe a collection step) */
  | { readonly kind: 'storage'; readonly attr: StorageAttribute; readonly inside: readonly PathStep[] }
  | { readonly kind: 'relatedEntity'; readonly attr: RelatedEntityAttribute }
  | { readonly kind: 'relatedEntities'; readonly attr: RelatedEntitiesAttribute }
  | { readonly kind: 'calculated'; readonly attr: CalculatedAttribute });

export interface WalkedPath {
  readonly hops: readonly Hop[];
  readonly end: PathEnd;
}

/** How a reader of paths words its failures: `unknown` for a name that is not there (or not visible), else the path's shape. */
export type PathFailure = (message: string, unknown: boolean) => DatasetError;

/** The error for a name a dataclass has no (visible) attribute of, in 4D's words, with the closest name. */
export function unknownAttribute(dc: DataClassModel, name: string, visible: Visibility, where?: string): DatasetError {
  return new DatasetError('UNKNOWN_ATTRIBUTE', unknownAttributeMessage(dc, name, visible, where));
}

function unknownAttributeMessage(dc: DataClassModel, name: string, visible: Visibility, where?: string): string {
  const names = dc.attributes.filter(visible).map((a) => a.name);
  return `The "${name}" attribute cannot be found in the "${dc.name}" dataclass${where ? ` (${where})` : ''}${didYouMean(name, names)}`;
}

/** The visible attribute of that name, or UNKNOWN_ATTRIBUTE (`where` says where the name was read). */
export function attributeOf(dc: DataClassModel, name: string, visible: Visibility, where?: string): AttributeModel {
  const attr = dc.attributesByName.get(name);
  if (!attr || !visible(attr)) throw (attr && visible.denied?.(attr)) || unknownAttribute(dc, name, visible, where);
  return attr;
}

/** The attribute of that name the caller sees or may not read (a permission), or UNKNOWN_ATTRIBUTE: names an answer leaves out without a word. */
export function knownAttribute(dc: DataClassModel, name: string, visible: Visibility, where?: string): AttributeModel {
  const attr = dc.attributesByName.get(name);
  if (!attr || !(visible(attr) || visible.denied?.(attr))) throw unknownAttribute(dc, name, visible, where);
  return attr;
}

/** "a storage attribute", "an alias attribute": how messages name an attribute's kind. */
export function kindOf(attr: AttributeModel): string {
  return `a${attr.kind === 'alias' ? 'n' : ''} ${attr.kind} attribute`;
}

/** "'staff' is a relatedEntities attribute", or, reached through an alias, what the client wrote first. */
export function described(step: Hop | PathEnd): string {
  const own = `'${step.attr.name}' is ${kindOf(step.attr)}`;
  return step.alias ? `'${step.alias.name}' is an alias of '${step.alias.path}', where ${own}` : own;
}

/**
 * Walks `steps` from `dc`. `where` (e.g. "in 'employer.name'") ends the message of an unknown
 * name; `fail` words every failure for the reader.
 */
/**
 * A path through MAX_PATH_DEPTH relations has more steps than any path may (each relation a
 * subquery or a join of every row: 20 of them ran for minutes): refused before it is compiled.
 */
function tooLong(hops: readonly Hop[], text: string): void {
  if (hops.length >= MAX_PATH_DEPTH) throw new DatasetError('LIMIT_EXCEEDED', `the attribute path '${text.length > 200 ? `${text.slice(0, 200)}…` : text}' has more than ${MAX_PATH_DEPTH} steps (relations and the attribute, aliases counted as the path they stand for)`);
}

export function walkPath(dc: DataClassModel, steps: readonly PathStep[], visible: Visibility, fail: PathFailure, where?: string): WalkedPath {
  const hops: Hop[] = [];
  const text = pathText(steps);
  let cls = dc;
  // each step with the alias the client wrote, if it came from one
  const queue: (PathStep & Written)[] = [...steps];
  while (queue.length > 0) {
    const step = queue.shift() as PathStep & Written;
    const { alias } = step;
    const attr = cls.attributesByName.get(step.name);
    if (!attr || !visible(attr)) throw (attr && visible.denied?.(attr)) || fail(unknownAttributeMessage(cls, step.name, visible, where), true);
    if (step.element !== undefined && !(attr.kind === 'storage' && attr.type === 'object' && queue.length > 0)) {
      throw fail(`'${step.name}[${step.element ?? ''}]': only properties inside an object attribute can be collections, and ${cls.name}.${step.name} is ${attr.kind === 'storage' ? `a ${attr.type}` : kindOf(attr)}${attr.kind === 'storage' ? ' attribute' : ''}`, false);
    }
    if (step.classIndex !== undefined && attr.kind !== 'relatedEntities' && attr.kind !== 'relatedEntity') {
      throw fail(`'${step.name}{${step.classIndex}}': a class index follows a relation, and ${cls.name}.${step.name} is ${kindOf(attr)}`, false);
    }
    switch (attr.kind) {
      case 'alias':
        // an alias stands for its path (an alias inside it is still named by the outer one)
        queue.unshift(...attr.path.split('.').map((name) => ({ name, alias: alias ?? attr })));
        continue;
      case 'calculated':
        if (queue.length > 0) throw fail(`'${text}': nothing can follow the calculated attribute ${cls.name}.${attr.name}`, false);
        return { hops, end: { kind: 'calculated', attr, alias } };
      case 'relatedEntity':
        if (queue.length === 0) return { hops, end: { kind: 'relatedEntity', attr, alias } };
        hops.push({ kind: 'one', attr, alias });
        tooLong(hops, text);
        cls = attr.target;
        continue;
      case 'relatedEntities':
        if (queue.length === 0) return { hops, end: { kind: 'relatedEntities', attr, alias } };
        hops.push({ kind: 'many', attr, alias, ...(step.classIndex ? { classIndex: step.classIndex } : {}) });
        tooLong(hops, text);
        cls = attr.target;
        continue;
      case 'storage':
        if (queue.length > 0 && attr.type !== 'object') throw fail(`'${text}': ${cls.name}.${attr.name} is a ${attr.type} attribute, nothing can follow it`, false);
        return { hops, end: { kind: 'storage', attr, alias, inside: queue } };
      default: {
        const never: never = attr;
        return never;
      }
    }
  }
  throw fail('an empty attribute path', false);
}

/** A path as written: `extra.tags[a].name`, `staff{2}.lastName`. */
export function pathText(steps: readonly PathStep[]): string {
  return steps.map((s) => `${s.name}${s.element !== undefined ? `[${s.element ?? ''}]` : ''}${s.classIndex ? `{${s.classIndex}}` : ''}`).join('.');
}

/** The steps of a dotted path written without brackets ("employer.city.name"). */
export function namesOf(text: string): PathStep[] {
  return text.split('.').map((name) => ({ name }));
}

/**
 * The value path of a computation ($compute, $distinct, sum(), min() …): a storage attribute,
 * through N→1 relations, or a property of an object attribute.
 */
export function resolveValuePath(dc: DataClassModel, text: string, visible: Visibility): AttributePath {
  let byVisibility = valuePaths.get(dc);
  if (!byVisibility) valuePaths.set(dc, (byVisibility = new WeakMap()));
  let kept = byVisibility.get(visible);
  if (!kept) byVisibility.set(visible, (kept = new LruCache(VALUE_PATHS)));
  const found = kept.get(text);
  if (found) {
    planStats.valuePathHits++;
    return found;
  }
  planStats.valuePaths++;
  const path = walkValuePath(dc, text, visible);
  kept.set(text, path);
  return path;
}

/** The value paths resolved lately, per dataclass and visibility (plan-cache.ts: they depend on nothing else); a failure is not kept. */
const valuePaths = new WeakMap<DataClassModel, WeakMap<Visibility, LruCache<string, AttributePath>>>();
/** Per dataclass and visibility: the attributes computations name, a few dozen at most. */
const VALUE_PATHS = 64;

function walkValuePath(dc: DataClassModel, text: string, visible: Visibility): AttributePath {
  const refuse = (why: string) => new DatasetError('INVALID_OPTION', `cannot compute on '${text}': ${why}`);
  const { hops, end } = walkPath(dc, namesOf(text), visible, (message, unknown) => (unknown ? new DatasetError('UNKNOWN_ATTRIBUTE', message) : refuse(message)), `in '${text}'`);
  const many = hops.find((h) => h.kind === 'many');
  if (many) throw refuse(`${described(many)} (a 1→N relation has many values)`);
  const via = hops.map((h) => h.attr as RelatedEntityAttribute);
  if (end.kind !== 'storage') throw refuse(`${described(end)}${end.kind === 'relatedEntities' ? ' (a 1→N relation has many values)' : ''}`);
  if (end.inside.length > 0) {
    if (end.inside.some((s) => s.element !== undefined || s.classIndex !== undefined)) throw refuse('a property path has no collection steps here');
    return { via, attr: end.attr, json: end.inside.map((s) => s.name) };
  }
  if (end.attr.type === 'image' || end.attr.type === 'blob' || end.attr.type === 'object') {
    throw refuse(`${end.attr.type} attributes have no value to compute (a property of an object can be: '${text}.property')`);
  }
  return { via, attr: end.attr };
}
