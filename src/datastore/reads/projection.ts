// Projection: which attributes of an entity to read and how (value, deferred relation, inline
// related entity, inline related selection), resolved from attribute paths ($attributes, the
// /attr1,attr2 list) and $expand paths against the model (spec "$attributes rules" 1–6).

import { MAX_PATH_DEPTH, PROJECTIONS_KEPT } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import type {
  AliasAttribute, AttributeModel, CalculatedAttribute, DataClassModel,
  RelatedEntitiesAttribute, RelatedEntityAttribute, StorageAttribute, Visibility,
} from '../../model/types.js';
import { kindOf, knownAttribute } from '../../query/path.js';

export type ProjectedAttribute =
  | { readonly kind: 'value'; readonly attr: StorageAttribute | AliasAttribute | CalculatedAttribute }
  /** an alias through a 1→N relation to a value: the list of values */
  | { readonly kind: 'list'; readonly attr: AliasAttribute }
  /** a relation (or an alias leading to entities) sent as a __deferred URI */
  | { readonly kind: 'deferred'; readonly attr: RelatedEntityAttribute | RelatedEntitiesAttribute | AliasAttribute }
  /** a related entity inline: an N→1 relation, or an alias through N→1 relations to one */
  | { readonly kind: 'entity'; readonly attr: RelatedEntityAttribute | AliasAttribute; readonly sub: Projection }
  /** a related selection inline: a 1→N relation, or an alias that leads to several entities */
  | { readonly kind: 'entities'; readonly attr: RelatedEntitiesAttribute | AliasAttribute; readonly sub: Projection };

export interface Projection {
  readonly dataClass: DataClassModel;
  readonly attributes: readonly ProjectedAttribute[];
  /** true when some attribute needs more than the entity's own row: relations (inline, or deferred N→1 ones whose target must still exist), lists, calculated values (see fetchRelated) */
  readonly related: boolean;
}

export interface ProjectionRequest {
  /** attribute paths; undefined = all attributes */
  readonly attributes?: readonly string[];
  /** relation paths to inline */
  readonly expand?: readonly string[];
}

/** What a relation or alias leads to: nothing (a value), one entity, or several. */
export function leadsTo(attr: AttributeModel): { target: DataClassModel; many: boolean } | undefined {
  if (attr.kind === 'relatedEntity') return { target: attr.target, many: false };
  if (attr.kind === 'relatedEntities') return { target: attr.target, many: true };
  if (attr.kind !== 'alias') return undefined;
  const last = attr.steps[attr.steps.length - 1];
  if (last.kind === 'relatedEntities') return { target: last.target, many: true };
  if (last.kind === 'relatedEntity') return { target: last.target, many: attr.toMany };
  return undefined;
}

/** Requested paths as a tree: `all` where '*' was given at that level, `children` for named steps. */
interface Want {
  all: boolean;
  readonly children: Map<string, Want>;
}

/** The full projection of each dataclass, per visibility rule: the common case, built once. */
const fullProjections = new WeakMap<Visibility, WeakMap<DataClassModel, Projection>>();
/**
 * The other projections asked for, per visibility rule and dataclass, by their paths: the same
 * `$attributes` or `$expand` gives the same object, so what is made once per projection (its row
 * writer, a generated function) is made once, not at every request. The last PROJECTIONS_KEPT
 * of each are kept (a client naming ever new paths cannot grow it).
 */
const namedProjections = new WeakMap<Visibility, WeakMap<DataClassModel, Map<string, Projection>>>();

export function resolveProjection(dc: DataClassModel, req: ProjectionRequest, visible: Visibility): Projection {
  if (!req.attributes && !req.expand) {
    let cache = fullProjections.get(visible);
    if (!cache) fullProjections.set(visible, (cache = new WeakMap()));
    let full = cache.get(dc);
    if (!full) cache.set(dc, (full = build(dc, null, undefined, visible, '')));
    return full;
  }
  let byClass = namedProjections.get(visible);
  if (!byClass) namedProjections.set(visible, (byClass = new WeakMap()));
  let kept = byClass.get(dc);
  if (!kept) byClass.set(dc, (kept = new Map()));
  const key = JSON.stringify([req.attributes ?? null, req.expand ?? null]);
  const found = kept.get(key);
  if (found) return found;
  const want = req.attributes && req.attributes.length > 0 ? tree(req.attributes) : null;
  const expand = req.expand && req.expand.length > 0 ? tree(req.expand) : undefined;
  const made = build(dc, want === null || (want.all && want.children.size === 0) ? null : want, expand, visible, '');
  if (kept.size >= PROJECTIONS_KEPT) kept.delete(kept.keys().next().value as string);
  kept.set(key, made);
  return made;
}

function tree(paths: readonly string[]): Want {
  const root: Want = { all: false, children: new Map() };
  for (const path of paths) {
    const parts = path.split('.');
    if (parts.length > MAX_PATH_DEPTH) throw new DatasetError('LIMIT_EXCEEDED', `the attribute path '${path}' has more than ${MAX_PATH_DEPTH} steps`);
    let node = root;
    parts.forEach((part, i) => {
      if (part === '') throw new DatasetError('INVALID_OPTION', `'${path}' is not an attribute path (empty step)`);
      if (part === '*') {
        if (i !== parts.length - 1) throw new DatasetError('INVALID_OPTION', `'*' can only end an attribute path ('${path}')`);
        node.all = true;
        return;
      }
      let child = node.children.get(part);
      if (!child) node.children.set(part, (child = { all: false, children: new Map() }));
      node = child;
    });
  }
  return root;
}

/** A want that asks for the attribute only (no '*', no steps inside it). */
function isLeaf(w: Want): boolean {
  return !w.all && w.children.size === 0;
}

/**
 * want: null = every attribute; else the listed ones (all of them too when want.all). A listed
 * relation is inline when the request goes inside it ('rel.*', 'rel.x') or $expand names it.
 */
function build(dc: DataClassModel, want: Want | null, expand: Want | undefined, visible: Visibility, at: string): Projection {
  for (const name of new Set([...(want?.children.keys() ?? []), ...(expand?.children.keys() ?? [])])) {
    // one the session may not read is left out without a word (4D: "not sent"), as below
    knownAttribute(dc, name, visible, at ? `in '${at}${name}'` : undefined);
  }
  const out: ProjectedAttribute[] = [];
  for (const attr of dc.attributes) {
    if (!visible(attr)) continue;
    const sub = want?.children.get(attr.name);
    const expanded = expand?.children.get(attr.name);
    if (want !== null && !want.all && !sub && !expanded) continue;
    out.push(project(attr, sub, expanded, visible, `${at}${attr.name}.`));
  }
  const related = out.some((a) => a.kind === 'entity' || a.kind === 'entities' || a.kind === 'list'
    || (a.kind === 'value' && a.attr.kind === 'calculated') || (a.kind === 'deferred' && leadsTo(a.attr)?.many === false));
  return { dataClass: dc, attributes: out, related };
}

function project(attr: AttributeModel, sub: Want | undefined, expand: Want | undefined, visible: Visibility, at: string): ProjectedAttribute {
  const leads = leadsTo(attr);
  if (leads) {
    const r = attr as RelatedEntityAttribute | RelatedEntitiesAttribute | AliasAttribute;
    const inside = sub !== undefined && !isLeaf(sub);
    if (!inside && !expand) return { kind: 'deferred', attr: r };
    const subWant = inside && !(sub.all && sub.children.size === 0) ? sub : null;
    const projection = build(leads.target, subWant, expand, visible, at);
    return leads.many
      ? { kind: 'entities', attr: r as RelatedEntitiesAttribute | AliasAttribute, sub: projection }
      : { kind: 'entity', attr: r as RelatedEntityAttribute | AliasAttribute, sub: projection };
  }
  if ((sub && !isLeaf(sub) && !(attr.kind === 'storage' && attr.type === 'object')) || (expand && !isLeaf(expand))) {
    throw new DatasetError('NOT_A_RELATION', `'${at.slice(0, -1)}' is ${kindOf(attr)}: only relation attributes can be followed by '.'`);
  }
  if (expand && !(attr.kind === 'storage' && (attr.type === 'image' || attr.type === 'blob'))) {
    throw new DatasetError('INVALID_OPTION', `$expand=${at.slice(0, -1)}: '${attr.name}' is not a relation (only relations, pictures and blobs can be expanded)`);
  }
  // Paths inside object attributes are not listed separately (reference §2.5): the whole object is sent.
  if (attr.kind === 'alias') return attr.toMany ? { kind: 'list', attr } : { kind: 'value', attr };
  return { kind: 'value', attr: attr as StorageAttribute | CalculatedAttribute };
}

/** The projection sends a related selection (whose envelope carries the global stamp) somewhere. */
export function hasInlineSelection(p: Projection): boolean {
  return p.attributes.some((a) => a.kind === 'entities' || (a.kind === 'entity' && hasInlineSelection(a.sub)));
}
