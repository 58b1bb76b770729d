// GET on a dataclass resource: the whole dataclass, one entity by key or by a unique attribute,
// and what deferred URIs point at (/Company(1)/staff, /Employee(5)/employer, alias relations).
// Everything about data is asked of the datastore core; this file only maps the URL onto it.

import type { DataClass } from '../../datastore/dataclass.js';
import { entityNotFound, type Datastore } from '../../datastore/datastore.js';
import type { Entity } from '../../datastore/entity.js';
import { compute, distinct } from '../../datastore/compute.js';
import { resolveValuePath } from '../../query/path.js';
import { fetchRelated, type FetchedEntity } from '../../datastore/fetch.js';
import { parseOrderBy } from '../../query/order.js';
import { leadsTo, resolveProjection, type Projection } from '../../datastore/projection.js';
import type { EntitySelection } from '../../datastore/selection.js';
import { requireKey, valueFromText } from '../../model/values.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { isExposed, pageSize } from '../../model/types.js';
import { attributeOf, kindOf } from '../../query/path.js';
import { queryPath, queryPlan } from '../../query/describe.js';
import { WIRE } from '../../config/wire.js';
import type { RestOptions } from '../options.js';
import { createSet, readSet } from './entity-sets.js';
import { formatDate, serializeAsArray, serializeCollection, serializeEntity } from '../serialize.js';
import type { PathSegment, Route } from '../url.js';
import { exposedDataClass } from './catalog.js';

type DataClassRoute = Extract<Route, { kind: 'dataClass' }>;

export async function readDataClass(ds: Datastore, route: DataClassRoute, opts: RestOptions, caller = ''): Promise<unknown> {
  const dc = ds.dataClassOf(exposedDataClass(ds, route.dataClass));
  const setAt = route.path.findIndex((s) => s.kind === 'entitySet');
  if (setAt >= 0) {
    // /rest/{dc}/$entityset/{id}, an attribute list before it: /rest/{dc}/a,b/$entityset/{id}
    const seg = route.path[setAt] as Extract<PathSegment, { kind: 'entitySet' }>;
    if (route.selector.kind !== 'all' || setAt !== route.path.length - 1 || seg.id === '') {
      throw new DatasetError('MALFORMED_URL', `an entity set is read as /rest/${dc.name}/$entityset/{id}, with an optional attribute list before $entityset`);
    }
    if (opts.method !== undefined && opts.method !== 'entityset' && opts.method !== 'release') refuseMethod(opts.method);
    const listed = attributeList(route.path.slice(0, setAt));
    const compute = opts.compute !== undefined || opts.distinct;
    return readSet(ds, dc, seg.id, opts, compute ? resolveProjection(dc.model, {}, isExposed) : projectionFor(dc.model, listed, opts), (members) => computation(members, listed, opts));
  }
  if (opts.method !== undefined && opts.method !== 'entityset' && opts.method !== 'subentityset') refuseMethod(opts.method);
  if (route.selector.kind === 'all') return readCollection(ds, dc.all(), attributeList(route.path), opts, caller);

  const entity = await findEntity(dc, route.selector);
  const [first, ...rest] = route.path;
  if (first?.kind === 'names' && first.names.length === 1) {
    const attr = dc.model.attributesByName.get(first.names[0]);
    if (attr && isExposed(attr)) {
      const leads = leadsTo(attr);
      if (leads) {
        // a deferred URI: /Company(1)/staff?$expand=staff — that $expand names the relation followed
        const spent = withoutExpand(opts, attr.name);
        const reached = entity.related(attr.name);
        if (opts.method === 'subentityset') {
          if (!leads.many) throw new DatasetError('INVALID_OPTION', `$method=subentityset stores the entities of a 1→N relation; ${dc.name}.${attr.name} leads to one entity`);
          return subEntitySet(ds, reached as EntitySelection, attributeList(rest), spent);
        }
        if (leads.many) return readCollection(ds, reached as EntitySelection, attributeList(rest), spent, caller);
        const target = await (reached as Promise<Entity | null>);
        if (!target) throw new DatasetError('ENTITY_NOT_FOUND', `${dc.name}(${String(entity.getKey())}) has no ${attr.name}`);
        return readEntity(ds, target, attributeList(rest), spent);
      }
    }
  }
  return readEntity(ds, entity, attributeList(route.path), opts);
}

export async function readCollection(ds: Datastore, selection: EntitySelection, attributes: string[] | undefined, opts: RestOptions, caller: string): Promise<unknown> {
  const model = selection.getDataClass().model;
  if (opts.method === 'subentityset') throw new DatasetError('INVALID_OPTION', '$method=subentityset stores the entities of a relation: /rest/{dataClass}({key})/{relation}?$method=subentityset');
  const filtered = opts.filter === undefined ? selection : selection.queryAs(isExposed, opts.filter, opts.params);
  if (opts.compute !== undefined || opts.distinct) return computation(filtered, attributes, opts);
  const projection = projectionFor(model, attributes, opts);
  if (opts.filter !== undefined && opts.orderby !== undefined && /\border\s+by\b/i.test(opts.filter)) {
    throw new DatasetError('INVALID_OPTION', 'the order is given twice: in $filter (order by …) and in $orderby; keep one');
  }
  const sorted = opts.orderby === undefined ? filtered : filtered.withOrder(parseOrderBy(model, opts.orderby, isExposed, ds.calculatedLookup));
  if (opts.method === 'entityset') return createSet(ds, sorted, opts, projection);
  const [count, entities, globalStamp] = await Promise.all([
    sorted.length,
    sorted.page(opts.skip, opts.top ?? pageSize(model)),
    ds.globalStamp(),
  ]);
  const fetched = await fetchRelated(ds, entities, projection);
  if (opts.asArray) return serializeAsArray(fetched, projection, { globalStamp });
  const answer = serializeCollection(model, count, opts.skip, fetched, projection, { globalStamp });
  const where = filtered.source.where;
  if (where && opts.queryplan) answer[WIRE.QUERY_PLAN] = queryPlan(where);
  if (where && opts.querypath) {
    answer[WIRE.QUERY_PATH] = await queryPath(where, (w) => ds.countWhere(model, w));
    await ds.recordQueryPath(caller, answer[WIRE.QUERY_PATH]); // for GET /rest/$querypath
  }
  return answer;
}

/** $method=subentityset: the related entities stored as a set, sorted by $subOrderby (attr ASC|DESC, …). */
async function subEntitySet(ds: Datastore, selection: EntitySelection, attributes: string[] | undefined, opts: RestOptions): Promise<unknown> {
  const model = selection.getDataClass().model;
  const sorted = opts.subOrderby === undefined ? selection : selection.withOrder(parseOrderBy(model, opts.subOrderby, isExposed, ds.calculatedLookup));
  return createSet(ds, sorted, { ...opts, orderby: opts.subOrderby }, projectionFor(model, attributes, opts));
}

/** $compute and $distinct: /rest/{dataClass}/{attribute}?$compute=sum (filtered too). */
async function computation(selection: EntitySelection, attributes: string[] | undefined, opts: RestOptions): Promise<unknown> {
  const option = opts.compute !== undefined ? '$compute' : '$distinct';
  if (opts.compute !== undefined && opts.distinct) throw new DatasetError('INVALID_OPTION', '$compute and $distinct are two requests: give one');
  if (!attributes || attributes.length !== 1) {
    throw new DatasetError('INVALID_OPTION', `${option} needs exactly one attribute in the path: /rest/${selection.getDataClass().name}/{attribute}?${option}=…`);
  }
  const path = resolveValuePath(selection.getDataClass().model, attributes[0], isExposed);
  const sorted = opts.orderby === undefined ? selection : selection.withOrder(parseOrderBy(selection.getDataClass().model, opts.orderby, isExposed, selection.getDataClass().ds.calculatedLookup));
  // dates are sent as in entities (date-only ones as d!m!yyyy)
  const wire = (v: unknown) => (v instanceof Date ? formatDate(v, path.attr.dateOnly) : v);
  if (opts.compute !== undefined) {
    const value = await compute(sorted, path, opts.compute, attributes[0]);
    if (opts.compute !== '$all') return wire(value);
    const [[name, all]] = Object.entries(value as Record<string, Record<string, unknown>>);
    return { [name]: Object.fromEntries(Object.entries(all).map(([k, v]) => [k, wire(v)])) };
  }
  // $distinct: $skip and $top apply to the array (reference §3.7)
  return (await distinct(sorted, path, opts.skip, opts.top ?? null)).map(wire);
}

export async function readEntity(ds: Datastore, entity: Entity, attributes: string[] | undefined, opts: RestOptions): Promise<unknown> {
  if (opts.top !== undefined || opts.skip > 0 || opts.orderby !== undefined || opts.filter !== undefined || opts.method === 'entityset') {
    throw new DatasetError('INVALID_OPTION', '$top, $limit, $skip, $orderby, $filter and $method=entityset apply to collections, not to a single entity');
  }
  const model = entity.getDataClass().model;
  if (!model.exposed) throw new DatasetError('UNKNOWN_DATACLASS', `The "${model.name}" dataclass cannot be found`);
  const projection = projectionFor(model, attributes, opts);
  const [fetched]: FetchedEntity[] = projection.related ? await fetchRelated(ds, [entity], projection) : [{ entity, related: new Map() }];
  // the global stamp is only sent inside inline selections: read it only then
  const globalStamp = hasInlineSelection(projection) ? await ds.globalStamp() : 0;
  if (opts.asArray) return serializeAsArray([fetched], projection, { globalStamp });
  return serializeEntity(fetched, projection, { globalStamp }, true);
}

function hasInlineSelection(p: Projection): boolean {
  return p.attributes.some((a) => a.kind === 'entities' || (a.kind === 'entity' && hasInlineSelection(a.sub)));
}

export function findEntity(dc: DataClass, selector: Exclude<DataClassRoute['selector'], { kind: 'all' }>): Promise<Entity> {
  if (selector.kind === 'key') {
    // (not async: the read by key is the hottest path, and every async frame costs)
    return dc.get(requireKey(dc.model.key, selector.key)).then((entity) => entity ?? Promise.reject(entityNotFound(dc.model, selector.key)));
  }
  const attr = attributeOf(dc.model, selector.attribute, isExposed);
  if (attr.kind !== 'storage') throw new DatasetError('INVALID_VALUE', `${dc.name}:${attr.name}(…) needs a storage attribute; '${attr.name}' is ${kindOf(attr)}`);
  return dc.findBy(attr.name, valueFromText(attr, selector.value)).then((entity) =>
    entity ?? Promise.reject(new DatasetError('ENTITY_NOT_FOUND', `Cannot find entity with "${selector.value}" as ${attr.name} in the "${dc.name}" dataclass`)));
}

function projectionFor(model: DataClass['model'], listed: string[] | undefined, opts: RestOptions): Projection {
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
  throw new DatasetError('OPTION_NOT_SUPPORTED', `$method=${method} is not supported here by this version of the server yet`);
}
