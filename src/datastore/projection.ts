// Projection: which attributes of an entity to read and how (value, deferred relation, inline
// related entity, inline related selection), resolved from attribute paths ($attributes, the
// /attr1,attr2 list) and $expand paths against the model (spec "$attributes rules" 1–6).

import { DatasetError } from '../errors/dataset-error.js';
import type {
  AliasAttribute, AttributeModel, CalculatedAttribute, DataClassModel,
  RelatedEntitiesAttribute, RelatedEntityAttribute, StorageAttribute,
} from '../model/types.js';
import { didYouMean } from '../util/suggest.js';
import type { Visibility } from './order-by.js';

export type ProjectedAttribute =
  | { readonly kind: 'value'; readonly attr: StorageAttribute | AliasAttribute | CalculatedAttribute }
  /** an alias through a 1→N relation to a value: the list of values */
  | { readonly kind: 'list'; readonly attr: AliasAttribute }
  | { readonly kind: 'deferred'; readonly attr: RelatedEntityAttribute | RelatedEntitiesAttribute | AliasAttribute }
  | { readonly kind: 'entity'; readonly attr: RelatedEntityAttribute; readonly sub: Projection }
  /** a 1→N relation, or an alias that leads to several entities */
  | { readonly kind: 'entities'; readonly attr: RelatedEntitiesAttribute | AliasAttribute; readonly sub: Projection };

/** The dataclass of the entities an alias leads to, when it leads to several; else undefined. */
export function aliasSelectionTarget(alias: AliasAttribute): DataClassModel | undefined {
  const last = alias.steps[alias.steps.length - 1];
  if (last.kind === 'relatedEntities' || (last.kind === 'relatedEntity' && alias.toMany)) return last.target;
  return undefined;
}

export interface Projection {
  readonly dataClass: DataClassModel;
  readonly attributes: readonly ProjectedAttribute[];
  /** names of the alias attributes read with the entities (computed in SQL) */
  readonly aliases: readonly string[];
  /** true when every attribute is shown (no $attributes restriction) */
  readonly all: boolean;
  /** true when some attribute needs more reads than the entity's own row (see fetchRelated) */
  readonly related: boolean;
}

/** Longest attribute path accepted in $attributes / $expand (limits work on hostile input). */
export const MAX_PATH_DEPTH = 8;

/** A tree of requested paths: null = the whole entity ("*"), a map = only these children. */
type Want = Map<string, Want | null>;

export interface ProjectionRequest {
  /** attribute paths; undefined = all attributes */
  readonly attributes?: readonly string[];
  /** relation paths to inline */
  readonly expand?: readonly string[];
}

/** The full projection of each dataclass, per visibility rule: the common case, built once. */
const fullProjections = new WeakMap<Visibility, WeakMap<DataClassModel, Projection>>();

export function resolveProjection(dc: DataClassModel, req: ProjectionRequest, visible: Visibility): Projection {
  if (!req.attributes && !req.expand) {
    let cache = fullProjections.get(visible);
    if (!cache) fullProjections.set(visible, (cache = new WeakMap()));
    let full = cache.get(dc);
    if (!full) cache.set(dc, (full = build(dc, null, undefined, visible, '')));
    return full;
  }
  const attrs = req.attributes?.filter((p) => p !== '*');
  const want = attrs && attrs.length > 0 ? tree(attrs) : null;
  const expand = req.expand && req.expand.length > 0 ? tree(req.expand) : undefined;
  return build(dc, want, expand, visible, '');
}

function tree(paths: readonly string[]): Want {
  const root: Want = new Map();
  for (const path of paths) {
    const parts = path.split('.');
    if (parts.length > MAX_PATH_DEPTH) throw new DatasetError('LIMIT_EXCEEDED', `the attribute path '${path}' has more than ${MAX_PATH_DEPTH} steps`);
    if (parts.some((p) => p === '')) throw new DatasetError('INVALID_OPTION', `'${path}' is not an attribute path (empty step)`);
    let node = root;
    parts.forEach((part, i) => {
      const last = i === parts.length - 1;
      if (part === '*') {
        if (!last) throw new DatasetError('INVALID_OPTION', `'*' can only end an attribute path ('${path}')`);
        return;
      }
      if (last) {
        if (!node.has(part)) node.set(part, new Map());
        return;
      }
      let child = node.get(part);
      if (child === undefined) node.set(part, (child = new Map()));
      // "rel.*" asks for the whole related entity: remembered as null (all attributes)
      if (parts[i + 1] === '*' && i + 1 === parts.length - 1) {
        node.set(part, null);
        child = null;
      }
      if (child !== null) node = child;
      else node = new Map(); // children of a whole entity add nothing
    });
  }
  return root;
}

/**
 * want: null = every attribute; a map = the listed ones (an empty child map = the attribute itself,
 * a non-empty map = inline with those children, null = inline with everything).
 * expand: relations to inline, with their own expand sub-trees.
 */
function build(dc: DataClassModel, want: Want | null, expand: Want | undefined, visible: Visibility, at: string): Projection {
  const names = (w: Want | undefined | null) => (w ? [...w.keys()] : []);
  for (const name of new Set([...names(want), ...names(expand)])) {
    const attr = dc.attributesByName.get(name);
    if (!attr || !visible(attr)) {
      const candidates = dc.attributes.filter(visible).map((a) => a.name);
      throw new DatasetError('UNKNOWN_ATTRIBUTE', `The "${name}" attribute cannot be found in the "${dc.name}" dataclass${at ? ` (in '${at}${name}')` : ''}${didYouMean(name, candidates)}`);
    }
  }
  const out: ProjectedAttribute[] = [];
  const aliases: string[] = [];
  for (const attr of dc.attributes) {
    if (!visible(attr)) continue;
    const listed = want === null || want.has(attr.name);
    const expanded = expand?.has(attr.name) ?? false;
    if (!listed && !expanded) continue;
    const sub = want === null ? undefined : want.get(attr.name);
    const p = project(attr, sub, expanded ? expand?.get(attr.name) ?? new Map() : undefined, visible, `${at}${attr.name}.`);
    out.push(p);
    if (p.kind === 'value' && p.attr.kind === 'alias') aliases.push(p.attr.name);
  }
  const related = out.some((a) => a.kind === 'entity' || a.kind === 'entities' || a.kind === 'list');
  return { dataClass: dc, attributes: out, aliases, all: want === null, related };
}

function project(
  attr: AttributeModel, sub: Want | null | undefined, expand: Want | null | undefined, visible: Visibility, at: string,
): ProjectedAttribute {
  const inlineWant = sub === undefined ? undefined : sub === null ? null : sub.size > 0 ? sub : undefined;
  switch (attr.kind) {
    case 'relatedEntity':
    case 'relatedEntities': {
      // inline when paths go inside (rel.x, rel.*) or when $expand names it
      if (inlineWant === undefined && expand === undefined) return { kind: 'deferred', attr };
      const subWant = inlineWant === undefined ? null : inlineWant;
      const projection = build(attr.target, subWant, expand ?? undefined, visible, at);
      return attr.kind === 'relatedEntity' ? { kind: 'entity', attr, sub: projection } : { kind: 'entities', attr, sub: projection };
    }
    case 'alias': {
      const target = aliasSelectionTarget(attr);
      if (target) {
        if (inlineWant === undefined && expand === undefined) return { kind: 'deferred', attr };
        return { kind: 'entities', attr, sub: build(target, inlineWant === undefined ? null : inlineWant, expand ?? undefined, visible, at) };
      }
      if (inlineWant !== undefined) {
        throw new DatasetError('NOT_A_RELATION', `'${at.slice(0, -1)}' is an alias to a value: only relation attributes can be followed by '.'`);
      }
      return attr.toMany ? { kind: 'list', attr } : { kind: 'value', attr };
    }
    case 'storage':
    case 'calculated':
      if (inlineWant !== undefined && !(attr.kind === 'storage' && attr.type === 'object')) {
        throw new DatasetError('NOT_A_RELATION', `'${at.slice(0, -1)}' is a ${attr.kind} attribute: only relation attributes can be followed by '.'`);
      }
      // Paths inside object attributes are not listed separately (reference §2.5): the whole object is sent.
      return { kind: 'value', attr };
    default: {
      const never: never = attr;
      return never;
    }
  }
}
