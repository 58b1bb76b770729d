// GET on a dataclass resource: the whole dataclass, one entity by key or by a unique attribute,
// and the relations that deferred URIs point at (/Company(1)/staff, /Employee(5)/employer).

import { DEFAULT_PAGE_SIZE } from '../../config/limits.js';
import type { DataClass } from '../../datastore/dataclass.js';
import type { Datastore } from '../../datastore/datastore.js';
import type { Entity } from '../../datastore/entity.js';
import { fetchRelated } from '../../datastore/fetch.js';
import { parseOrderBy } from '../../datastore/order-by.js';
import { aliasSelectionTarget, resolveProjection, type Projection } from '../../datastore/projection.js';
import { walkAlias } from '../../datastore/alias-values.js';
import type { EntitySelection } from '../../datastore/selection.js';
import { requireKey, valueFromText } from '../../datastore/values.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { isExposed, type AliasAttribute, type DataClassModel } from '../../model/types.js';
import { directPath } from '../../query/plan.js';
import { didYouMean } from '../../util/suggest.js';
import type { RestOptions } from '../options.js';
import { serializeAsArray, serializeCollection, serializeEntity } from '../serialize.js';
import type { PathSegment, Route } from '../url.js';
import { exposedDataClass } from './catalog.js';

type DataClassRoute = Extract<Route, { kind: 'dataClass' }>;

export async function readDataClass(ds: Datastore, route: DataClassRoute, opts: RestOptions): Promise<unknown> {
  const model = exposedDataClass(ds, route.dataClass);
  const dc = ds.dataClassOf(model);
  if (route.path.some((s) => s.kind === 'entitySet')) {
    throw new DatasetError('OPTION_NOT_SUPPORTED', 'entity sets ($entityset) are not supported by this version of the server yet');
  }
  if (opts.method !== undefined) refuseMethod(opts.method);
  if (route.selector.kind === 'all') return readCollection(ds, dc.all(), attributeList(route.path), opts, undefined);

  const entity = await findEntity(dc, route.selector);
  const [first, ...rest] = route.path;
  if (first?.kind === 'names' && first.names.length === 1) {
    const attr = model.attributesByName.get(first.names[0]);
    if (attr && isExposed(attr)) {
      if (attr.kind === 'relatedEntity') {
        const target = await (entity.related(attr.name) as Promise<Entity | null>);
        if (!target) throw new DatasetError('ENTITY_NOT_FOUND', `${model.name}(${String(entity.getKey())}) has no ${attr.name}`);
        return readEntity(ds, target, attributeList(rest), withoutExpand(opts, attr.name));
      }
      if (attr.kind === 'relatedEntities') {
        return readCollection(ds, entity.related(attr.name) as EntitySelection, attributeList(rest), opts, attr.name);
      }
      if (attr.kind === 'alias' && attr.steps[attr.steps.length - 1].kind !== 'storage') {
        return readAliasRelation(ds, entity, attr, attributeList(rest), opts);
      }
      if (attr.kind === 'storage' && (attr.type === 'image' || attr.type === 'blob')) {
        throw new DatasetError('OPTION_NOT_SUPPORTED', `reading the contents of the ${attr.type} attribute ${model.name}.${attr.name} is not supported by this version of the server yet`);
      }
    }
  }
  return readEntity(ds, entity, attributeList(route.path), opts);
}

/** Following an alias that leads to entities: one entity (N→1 path) or a selection of them. */
async function readAliasRelation(
  ds: Datastore, entity: Entity, alias: AliasAttribute, attributes: string[] | undefined, opts: RestOptions,
): Promise<unknown> {
  const reached = ((await walkAlias(ds, [entity], alias)).get(entity) ?? []) as Entity[];
  const target = aliasSelectionTarget(alias);
  if (!target) {
    if (reached.length === 0) throw new DatasetError('ENTITY_NOT_FOUND', `${entity.getDataClass().name}(${String(entity.getKey())}) has no ${alias.name}`);
    return readEntity(ds, reached[0], attributes, withoutExpand(opts, alias.name));
  }
  const dc = ds.dataClassOf(target);
  const keys = [...new Set(reached.map((e) => e.getKey()))];
  const selection = dc.selectionWhere({ kind: 'in', path: directPath(target.key), values: keys });
  return readCollection(ds, selection, attributes, opts, alias.name);
}

async function readCollection(
  ds: Datastore, selection: EntitySelection, attributes: string[] | undefined, opts: RestOptions, navigated: string | undefined,
): Promise<unknown> {
  const model = selection.getDataClass().model;
  const projection = projectionFor(model, attributes, navigated ? withoutExpand(opts, navigated) : opts);
  const sorted = opts.orderby === undefined ? selection : selection.withOrder(parseOrderBy(model, opts.orderby, isExposed));
  const top = opts.top ?? model.defaultTopSize ?? DEFAULT_PAGE_SIZE;
  const [count, entities, globalStamp] = await Promise.all([
    sorted.length,
    sorted.page(opts.skip, top, projection.aliases),
    ds.globalStamp(),
  ]);
  const fetched = await fetchRelated(ds, entities, projection);
  if (opts.asArray) return serializeAsArray(fetched, projection);
  return serializeCollection(model, count, opts.skip, fetched, projection, { globalStamp });
}

async function readEntity(ds: Datastore, entity: Entity, attributes: string[] | undefined, opts: RestOptions): Promise<unknown> {
  if (opts.top !== undefined || opts.skip > 0 || opts.orderby !== undefined) {
    throw new DatasetError('INVALID_OPTION', '$top, $limit, $skip and $orderby apply to collections, not to a single entity');
  }
  const model = entity.getDataClass().model;
  const projection = projectionFor(model, attributes, opts);
  const withValues = projection.aliases.length === 0 ? entity : await withAliases(entity, projection);
  const [fetched] = projection.related ? await fetchRelated(ds, [withValues], projection) : [{ entity: withValues, related: new Map() }];
  if (opts.asArray) return serializeAsArray([fetched], projection);
  // the global stamp is only sent inside inline selections: read it only then
  const globalStamp = hasInlineSelection(projection) ? await ds.globalStamp() : 0;
  return serializeEntity(fetched, projection, { globalStamp }, true);
}

function hasInlineSelection(p: Projection): boolean {
  return p.attributes.some((a) => a.kind === 'entities' || (a.kind === 'entity' && hasInlineSelection(a.sub)));
}

/** The entity again with the projection's alias values (they are read in SQL). */
async function withAliases(entity: Entity, projection: Projection): Promise<Entity> {
  const dc = entity.getDataClass();
  const again = await dc.findOne({ kind: 'compare', path: directPath(dc.model.key), op: '=', value: entity.getKey() }, projection.aliases);
  return again ?? entity;
}

function findEntity(dc: DataClass, selector: Exclude<DataClassRoute['selector'], { kind: 'all' }>): Promise<Entity> {
  const model = dc.model;
  if (selector.kind === 'key') {
    // (not async: the read by key is the hottest path, and every async frame costs)
    return dc.get(requireKey(model.key, selector.key)).then((entity) => {
      if (!entity) throw new DatasetError('ENTITY_NOT_FOUND', `Cannot find entity with "${selector.key}" key in the "${model.name}" dataclass`);
      return entity;
    });
  }
  return findByAttribute(dc, selector);
}

async function findByAttribute(dc: DataClass, selector: Extract<DataClassRoute['selector'], { kind: 'attribute' }>): Promise<Entity> {
  const model = dc.model;
  const attr = model.attributesByName.get(selector.attribute);
  if (!attr || !isExposed(attr)) {
    const names = model.storage.filter(isExposed).map((a) => a.name);
    throw new DatasetError('UNKNOWN_ATTRIBUTE', `The "${selector.attribute}" attribute cannot be found in the "${model.name}" dataclass${didYouMean(selector.attribute, names)}`);
  }
  if (attr.kind !== 'storage') {
    throw new DatasetError('INVALID_VALUE', `${model.name}:${attr.name}(…) needs a storage attribute; '${attr.name}' is a ${attr.kind} attribute`);
  }
  const value = valueFromText(attr, selector.value);
  const entity = await dc.findOne({ kind: 'compare', path: directPath(attr), op: '=', value });
  if (!entity) throw new DatasetError('ENTITY_NOT_FOUND', `Cannot find entity with "${selector.value}" as ${attr.name} in the "${model.name}" dataclass`);
  return entity;
}

function projectionFor(model: DataClassModel, listed: string[] | undefined, opts: RestOptions): Projection {
  const attributes = listed || opts.attributes ? [...(listed ?? []), ...(opts.attributes ?? [])] : undefined;
  return resolveProjection(model, { attributes, expand: opts.expand }, isExposed);
}

/** The attribute list of the trailing /attr1,attr2 segment, if any. */
function attributeList(path: readonly PathSegment[]): string[] | undefined {
  if (path.length === 0) return undefined;
  if (path.length > 1 || path[0].kind !== 'names') {
    throw new DatasetError('MALFORMED_URL', `unexpected segments after the resource: only one attribute list (/attr1,attr2) can follow`);
  }
  return [...path[0].names];
}

/** Deferred URIs carry ?$expand=<relation>; once the relation is followed, that $expand is spent. */
function withoutExpand(opts: RestOptions, relation: string): RestOptions {
  if (!opts.expand) return opts;
  const expand = opts.expand.filter((e) => e !== relation);
  return { ...opts, expand: expand.length > 0 ? expand : undefined };
}

function refuseMethod(method: NonNullable<RestOptions['method']>): never {
  if (method === 'update' || method === 'delete' || method === 'validate') {
    throw new DatasetError('METHOD_NOT_ALLOWED', `$method=${method} changes data: send it with POST`);
  }
  throw new DatasetError('OPTION_NOT_SUPPORTED', `$method=${method} (entity sets) is not supported by this version of the server yet`);
}
