// The paths of the OpenAPI document: what the caller's session may ask, as the planner reads it
// (url.ts, request.ts, plan-dataclass.ts, plan-function.ts) and the authorization step allows it
// (authorize.ts). Each dataclass the session may read gets its collection, entity, attribute-list,
// :attribute(value), relation, picture/blob and entity-set paths; writes only where roles.json
// grants them; each exposed function only where the session may execute it, at the URL and with
// the HTTP methods the planner takes for it. Paths are concrete where the model names them (a
// relation, a function) and templated where the caller chooses (a key, an attribute list): a
// concrete path wins over a templated one, as OpenAPI and our planner both read them.

import { DataClass, Datastore, Entity, EntitySelection, sessionMay } from '../../datastore/index.js';
import { ERRORS } from '../../errors/registry.js';
import { exposedFunctions, type ExposedFunction } from '../../functions/exposure.js';
import { projectMethodsOf } from '../../functions/method-registry.js';
import { expected, parseParam, type ParamType } from '../../functions/params.js';
import { Singleton, singletonFunctions, singletonsOf } from '../../functions/singletons.js';
import type { AttributeModel, DataClassModel } from '../../model/types.js';
import { REST_PREFIX } from '../request/constants.js';
import type { Scope } from '../scope/scope.js';
import { adminPaths } from './admin-paths.js';
import { signInPaths } from './sign-in-paths.js';
import { methodParam, PAGE, param, SHAPE } from './parameters.js';
import { names, OBJECT, readable, ref, storageInputSchema, visibleAttributes, type Schema } from './schemas.js';

type Operation = Schema;
type PathItem = Record<string, Operation | Schema[]>;
export type Paths = Record<string, PathItem>;

const JSON_TYPE = 'application/json';

const ok = (description: string, schema: Schema): Schema => ({ description, content: { [JSON_TYPE]: { schema } } });
const ERROR = { $ref: '#/components/responses/Error' };
/** What a `$method=watch` answers beside the JSON read: Server-Sent Events (rest/run/handlers/watch.ts). */
// (a Media Type Object has no description: it is the schema's)
const EVENT_STREAM = {
  schema: {
    type: 'string',
    description: 'Server-Sent Events: `ready` (id and __GlobalStamp: where the stream starts), then `entity` (an entity as this read shows it) and `remove` ({"__KEY": …}), each with the id of its change\'s stamp, which Last-Event-ID resumes from; `reset` when the client must read again.',
  },
};
/** What a collection read answers with $format=csv or ndjson (or Accept: text/csv): every entity selected, streamed (present/export-format.ts). */
const EXPORTS = {
  'text/csv': { schema: { type: 'string', description: 'a header row of the attributes, then one row per entity (RFC 4180)' } },
  'application/x-ndjson': { schema: { type: 'string', description: 'one JSON object per entity, a line each' } },
};
/** An upload's body: the raw bytes, whatever Content-Type the client gives them (the upload routes read any: rest/plugin.ts). */
const RAW_BODY = { required: true, content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } };
/** A collection read's 200, which may also be an export. */
const orExport = (response: Schema): Schema => ({ ...response, content: { ...(response.content as Record<string, unknown>), ...EXPORTS } });
/** A read's 200 that may also be a watch stream (a dataclass that tracks its changes). */
const orStream = (response: Schema, watched: boolean): Schema => (watched ? { ...response, content: { ...(response.content as Record<string, unknown>), 'text/event-stream': EVENT_STREAM } } : response);
const WATCH_NOTE = ' With $method=watch (this dataclass tracks its changes) the answer is instead a stream of its changes as Server-Sent Events (text/event-stream), resumed with Last-Event-ID.';

/** What a write answers when it fails: the Error, or the entities with their own __ERROR (rest/run/handlers/write.ts). */
const WRITE_ERROR = { description: 'a refused write: the Error, or the entity (each entity of a batch) with its __ERROR', content: { [JSON_TYPE]: { schema: { anyOf: [ref('Error'), ref('WriteError')] } } } };

function op(operationId: string, tags: string[], summary: string, o: { description?: string; parameters?: Schema[]; requestBody?: Schema; responses: Record<string, Schema>; failure?: Schema }): Operation {
  return {
    operationId,
    tags,
    summary,
    ...(o.description ? { description: o.description } : {}),
    ...(o.parameters && o.parameters.length > 0 ? { parameters: o.parameters } : {}),
    ...(o.requestBody ? { requestBody: o.requestBody } : {}),
    responses: { ...o.responses, default: o.failure ?? ERROR },
  };
}

const params = (keys: readonly string[]): Schema[] => keys.map((k) => param(k as never));

const jsonBody = (schema: Schema, required: boolean, description?: string): Schema => ({ required, ...(description ? { description } : {}), content: { [JSON_TYPE]: { schema } } });

/** The path parameter of an entity's key, in the key's own type. */
const keyParam = (dc: DataClassModel): Schema => ({
  name: 'key', in: 'path', required: true,
  description: `the primary key (${dc.name}.${dc.key.name}), as a body gives it, or quoted ('A1', "A1"); ${dc.name}[key] (brackets for the parentheses) is read the same`,
  schema: { anyOf: [storageInputSchema(dc.key.type, false), { type: 'string', pattern: '^(\'[^\']*\'|"[^"]*")$' }] },
});

/** What the session may do with a dataclass's entities. */
function grantsOn(scope: Scope, dc: DataClassModel) {
  return sessionMay(scope.access.grants, dc);
}

/** An attribute list in a path: `firstName,employer.name`, `staff.*`. */
const ATTRIBUTE_LIST = '^[A-Za-z_*][A-Za-z0-9_.*]*(,[A-Za-z_*][A-Za-z0-9_.*]*)*$';

/** $lock for a session that may not update the dataclass: it may release its own lock, not take one (authorize.ts). */
const READ_ONLY_LOCK: Schema = { name: '$lock', in: 'query', required: false, description: "false releases the session's lock (taking one, true, needs the right to update the entity); answers {\"result\", \"__STATUS\"}", schema: { type: 'boolean', enum: [false] } };

/** The path parameter of a stored entity set. */
const SET_ID: Schema = { name: 'id', in: 'path', required: true, description: 'an entity set id (the end of __ENTITYSET)', schema: { type: 'string' } };

/** The paths of one dataclass the session may read. */
function dataClassPaths(scope: Scope, dc: DataClassModel, out: Paths): void {
  const base = `${REST_PREFIX}/${dc.name}`;
  const entityPath = `${base}({key})`;
  const n = names(dc);
  const tags = [dc.name];
  const may = grantsOn(scope, dc);
  const attributes = visibleAttributes(scope, dc);
  const pageOrArray = { anyOf: [ref(n.collection), { type: 'array', items: ref(n.entity) }, ref('Looker')] };

  // the collection: a page (or a stored set of it), and the writes posted to it
  const collection: PathItem = {
    get: op(`get${dc.name}`, tags, `A page of ${dc.name} entities`, {
      description: `Filtered with $filter, sorted with $orderby, paged with $skip and $top. $method=entityset stores the whole selection as an entity set and answers its first page with __ENTITYSET.${dc.globalStamp ? WATCH_NOTE : ''}`,
      parameters: [...params(PAGE), methodParam(dc.globalStamp ? ['entityset', 'watch'] : ['entityset'], false, `entityset: store the selection as an entity set${dc.globalStamp ? '; watch: stream its changes' : ''}`), param('timeout')],
      responses: { 200: orStream(orExport(ok(`a page of ${dc.name}`, pageOrArray)), dc.globalStamp !== undefined) },
    }),
  };
  const writes = [...(may.create || may.update ? ['update', 'validate'] : []), ...(may.drop ? ['delete'] : [])];
  if (writes.length > 0) {
    collection.post = op(`post${dc.name}`, tags, `Create, update${may.drop ? ' or delete' : ''} ${dc.name} entities`, {
      description: [
        may.create || may.update ? '$method=update saves one entity (an object) or several (an array): without __KEY a new one, with __KEY and __STAMP an update; $method=validate checks the same body and saves nothing.' : '',
        may.drop ? '$method=delete with a $filter deletes every entity it selects, in one transaction (no body).' : '',
      ].filter(Boolean).join(' '),
      parameters: [methodParam(writes, true, writes.join(', ')), param('filter'), param('params'), ...(may.create || may.update ? [param('atomic'), param('refresh'), ...params(SHAPE)] : [])],
      ...(may.create || may.update ? { requestBody: jsonBody({ anyOf: [ref(n.input), { type: 'array', items: ref(n.input), minItems: 1 }] }, false) } : {}),
      responses: {
        200: ok('the saved entity (an object was posted), the entities (an array: without $atomic, those not saved carry their __ERROR), or {"ok": true} (validate, delete)', {
          anyOf: [ref(n.entity), { type: 'object', properties: { __ENTITIES: { type: 'array', items: { anyOf: [ref(n.entity), ref('WriteError')] } } }, required: ['__ENTITIES'], additionalProperties: false }, ref('Ok')],
        }),
      },
      failure: WRITE_ERROR,
    });
  }
  out[base] = collection;

  // one entity by key: read, lock, update by POST, delete
  const entity: PathItem = {
    parameters: [keyParam(dc)],
    get: op(`get${dc.name}ByKey`, tags, `One ${dc.name} entity`, {
      ...(dc.globalStamp ? { description: WATCH_NOTE.trim() } : {}),
      // ($lock=false releases the session's own lock: a session that may only read may still ask it, but not $lock=true)
      parameters: [...params(SHAPE), may.update ? param('lock') : READ_ONLY_LOCK, ...(dc.globalStamp ? [methodParam(['watch'], false, 'watch: stream the changes of this entity')] : [])],
      responses: { 200: orStream(ok(`the ${dc.name} entity, or with $lock the lock's result`, { anyOf: [ref(n.entity), ref('LockResult')] }), dc.globalStamp !== undefined) },
    }),
  };
  if (may.update || may.drop) {
    entity.post = op(`post${dc.name}ByKey`, tags, `Update${may.drop ? ' or delete' : ''} one ${dc.name} entity`, {
      description: [may.update ? 'Without $method: the body (its values, with the __STAMP it was read with) updates the entity. $lock=true|false locks or unlocks it.' : '', may.drop ? '$method=delete deletes it (no body).' : ''].filter(Boolean).join(' '),
      parameters: [...(may.drop ? [methodParam(['delete'], false, 'delete: delete this entity')] : []), ...(may.update ? [param('lock'), ...params(SHAPE)] : [])],
      ...(may.update ? { requestBody: jsonBody(ref(n.input), false) } : {}),
      responses: { 200: ok('the updated entity, {"ok": true} for a delete, or the lock\'s result', { anyOf: [ref(n.entity), ref('Ok'), ref('LockResult')] }) },
      failure: WRITE_ERROR,
    });
  }
  out[entityPath] = entity;

  // one entity by the value of one of its attributes
  const storage = attributes.filter((a) => a.kind === 'storage' && a.type !== 'image' && a.type !== 'blob' && a.type !== 'object');
  if (storage.length > 0) {
    out[`${base}:{attribute}({value})`] = {
      parameters: [
        { name: 'attribute', in: 'path', required: true, description: 'a storage attribute (a unique one names one entity; otherwise the first found)', schema: { type: 'string', enum: storage.map((a) => a.name) } },
        { name: 'value', in: 'path', required: true, description: 'its value (quoted or not)', schema: { type: 'string' } },
      ],
      get: op(`get${dc.name}ByAttribute`, tags, `One ${dc.name} entity by the value of an attribute`, { parameters: params(SHAPE), responses: { 200: ok(`the ${dc.name} entity`, ref(n.entity)) } }),
    };
  }

  // an attribute list after the collection, where $compute and $distinct are read too
  const listParam: Schema = {
    name: 'attributes', in: 'path', required: true,
    description: `attribute paths separated by commas (${attributes.slice(0, 3).map((a) => a.name).join(',')}); with $compute or $distinct, exactly one attribute`,
    schema: { type: 'string', pattern: ATTRIBUTE_LIST },
    example: attributes.find((a) => a.kind === 'storage')?.name,
  };
  out[`${base}/{attributes}`] = {
    parameters: [listParam],
    get: op(`get${dc.name}Attributes`, tags, `${dc.name} entities with only these attributes, or $compute / $distinct on one of them`, {
      parameters: [...params(PAGE), param('compute'), param('distinct'), methodParam(['entityset'], false, 'entityset: store the selection as an entity set'), param('timeout')],
      responses: {
        200: ok('a page (as GET /rest/{dataClass}); $compute: a value, or {attribute: {count, sum, average, min, max}} with $all; $distinct: an array of values', {
          anyOf: [ref(n.collection), { type: 'array' }, { type: 'number' }, { type: 'object', additionalProperties: { type: 'object', properties: { count: { type: 'integer' }, sum: {}, average: {}, min: {}, max: {} } } }, { type: 'string' }, { type: 'null' }],
        }),
      },
    }),
  };
  // the same on a stored entity set: the attribute list before $entityset (url.ts)
  out[`${base}/{attributes}/$entityset/{id}`] = {
    parameters: [listParam, SET_ID],
    get: op(`get${dc.name}AttributesOfSet`, tags, `The entities of a stored ${dc.name} set with only these attributes, or $compute / $distinct on one of them`, {
      parameters: [...params(PAGE.filter((p) => p !== 'queryplan' && p !== 'querypath')), param('compute'), param('distinct'), param('logicOperator'), param('otherCollection')],
      responses: (out[`${base}/{attributes}`].get as Schema).responses as Record<string, Schema>,
    }),
  };
  out[`${entityPath}/{attributes}`] = {
    parameters: [keyParam(dc), { ...listParam, description: 'attribute paths separated by commas' }],
    get: op(`get${dc.name}ByKeyAttributes`, tags, `One ${dc.name} entity with only these attributes`, { parameters: params(SHAPE), responses: { 200: ok(`the ${dc.name} entity`, ref(n.entity)) } }),
  };

  // relations (deferred URIs), pictures and blobs
  for (const a of attributes) relationOrFilePath(scope, dc, a, may, out);

  // entity sets
  out[`${base}/$entityset/{id}`] = {
    parameters: [SET_ID],
    get: op(`get${dc.name}EntitySet`, tags, `A page of a stored ${dc.name} entity set`, {
      description: `Narrowed by $filter, sorted by $orderby, combined with another set by $logicOperator and $otherCollection; $method=entityset stores the result as a new set, $method=release releases the set ({"ok": true}). A set past its $timeout is gone (404, errCode ${ERRORS.ENTITY_SET_NOT_FOUND.errCode}) unless $savedfilter / $savedorderby let the server make it again.${dc.globalStamp ? `${WATCH_NOTE} A watched set keeps its members (none enters it) and stays alive while watched.` : ''}`,
      parameters: [...params(PAGE.filter((p) => p !== 'queryplan' && p !== 'querypath')), param('logicOperator'), param('otherCollection'), param('clean'), param('savedfilter'), param('savedorderby'), param('subOrderby'),
        methodParam(['entityset', 'release', 'subentityset', ...(dc.globalStamp ? ['watch'] : [])], false, `entityset: store the page's selection as a new set; release: release this set; subentityset: a plain read (wakanda-client's paging)${dc.globalStamp ? '; watch: stream the changes of its members' : ''}`), param('timeout')],
      responses: { 200: orStream(orExport(ok('a page of the set, or {"ok": true} for a release', { anyOf: [ref(n.collection), { type: 'array', items: ref(n.entity) }, ref('Looker'), ref('Ok')] })), dc.globalStamp !== undefined) },
    }),
    ...(may.drop ? { post: op(`delete${dc.name}EntitySet`, tags, `Delete the entities of a stored ${dc.name} entity set`, { parameters: [methodParam(['delete'], true, 'delete')], responses: { 200: ok('deleted', ref('Ok')) } }) } : {}),
  };

  out[`${REST_PREFIX}/$catalog/${dc.name}`] = {
    get: op(`get${dc.name}Catalog`, ['catalog'], `The description of ${dc.name}: its attributes, key and functions`, { parameters: [PREFER_EXTENSIONS], responses: { 200: ok('the dataclass', ref('CatalogDataClass')) } }),
  };
}

/** The path an attribute that leads somewhere has after one entity: a relation's entities, or a picture's or blob's bytes. */
function relationOrFilePath(scope: Scope, dc: DataClassModel, a: AttributeModel, may: ReturnType<typeof grantsOn>, out: Paths): void {
  const path = `${REST_PREFIX}/${dc.name}({key})/${a.name}`;
  const tags = [dc.name];
  const id = `${dc.name}${a.name[0].toUpperCase()}${a.name.slice(1)}`;
  if (a.kind === 'storage' && (a.type === 'image' || a.type === 'blob')) {
    const image = a.type === 'image';
    // a picture is sent as the image type of its bytes, a blob as the type its contents show (text/plain, application/pdf …)
    const bytes = { [image ? 'image/*' : '*/*']: { schema: { type: 'string', contentMediaType: image ? 'image/*' : 'application/octet-stream' } } };
    const item: PathItem = {
      parameters: [keyParam(dc)],
      get: op(`get${id}`, tags, `The ${image ? 'picture' : 'blob'} ${dc.name}.${a.name}`, {
        description: 'The stored bytes, their Content-Type read from the content; ETag and If-None-Match (304), Range (206). An empty attribute answers 204.',
        parameters: [...(image ? [param('imageformat')] : []), param('binary'), param('version'), param('expand')],
        responses: {
          200: { description: 'the bytes', content: bytes },
          204: { description: 'the attribute is empty' },
          206: { description: 'the bytes of the Range asked for', content: bytes },
          304: { description: 'not modified (If-None-Match)' },
        },
      }),
    };
    if (may.update && scope.access.grants.attribute(dc.name, a.name, 'update')) {
      item.post = op(`post${id}`, tags, `Store a file into ${dc.name}.${a.name}`, {
        description: 'The raw body (not a multipart form) is stored into the attribute and the entity saved, as an update.',
        parameters: [{ ...(image ? { name: '$rawPict', schema: { type: 'string' }, description: 'true, or the MIME type', example: 'true' } : { name: '$binary', schema: { type: 'boolean' }, description: 'true', example: true }), in: 'query', required: true }],
        requestBody: RAW_BODY,
        responses: { 200: ok('the saved entity', ref(names(dc).entity)) },
      });
    }
    out[path] = item;
    return;
  }
  const leads = leadsTo(a);
  if (!leads || !readable(scope, leads.target)) return;
  const t = names(leads.target);
  // wakanda-client's call of a selection function on a relation's entities (plan-function.ts, planRelationCall)
  const onRelated = leads.many ? dataClassFunctions(scope, leads.target).filter((c) => c.selection) : [];
  out[path] = {
    parameters: [keyParam(dc)],
    ...(onRelated.length > 0
      ? {
        post: op(`call${id}EmMethod`, tags, `Call a function of the ${leads.target.name} selection on the entities of ${dc.name}.${a.name}`, {
          description: `$emMethod names a function of the ${leads.target.name}Selection class (or a project method of scope currentSelection) the session may call; it runs on the related entities, narrowed by $filter. Its result is sent as for POST /rest/${leads.target.name}/{function}.`,
          parameters: [
            { name: '$emMethod', in: 'query', required: true, description: 'the function', schema: { type: 'string', enum: onRelated.map((c) => c.name) }, example: onRelated[0].name },
            methodParam(['subentityset'], false, 'subentityset (as wakanda-client sends it), or none'),
            param('filter'), param('orderby'), param('params'), param('top'), param('skip'), ...params(SHAPE),
          ],
          requestBody: jsonBody({ type: 'array', description: 'the parameters, in order' }, false, 'a JSON array of the parameters'),
          responses: { 200: ok('what the function returned', RESULT) },
        }),
      }
      : {}),
    get: leads.many
      ? op(`get${id}`, tags, `The ${leads.target.name} entities of ${dc.name}.${a.name}`, {
        description: 'A page, as GET /rest/{dataClass}; $method=subentityset (or entityset) stores them as an entity set, sorted by $subOrderby. The $expand of the deferred uri names the relation followed.',
        parameters: [...params(PAGE), param('subOrderby'), methodParam(['subentityset', 'entityset'], false, 'store the related entities as an entity set'), param('timeout')],
        responses: { 200: orExport(ok(`a page of ${leads.target.name}`, { anyOf: [ref(t.collection), { type: 'array', items: ref(t.entity) }, ref('Looker')] })) },
      })
      : op(`get${id}`, tags, `The ${leads.target.name} entity of ${dc.name}.${a.name}`, {
        description: `An empty relation answers 404 (errCode ${ERRORS.ENTITY_NOT_FOUND.errCode}), as its null value says.`,
        parameters: params(SHAPE),
        responses: { 200: ok(`the ${leads.target.name} entity`, ref(t.entity)) },
      }),
  };
  // the related entities with only some of their attributes (url.ts: an attribute list after the relation)
  const get = out[path].get as Schema;
  out[`${path}/{attributes}`] = {
    parameters: [keyParam(dc), { name: 'attributes', in: 'path', required: true, description: `attribute paths of ${leads.target.name}, separated by commas`, schema: { type: 'string', pattern: ATTRIBUTE_LIST }, example: visibleAttributes(scope, leads.target).find((x) => x.kind === 'storage')?.name }],
    get: { ...get, operationId: `${String(get.operationId)}Attributes`, summary: `${String(get.summary)}, with only these attributes` },
  };
}

/** Where a relation (or an alias ending on one) leads, and whether to many entities. */
function leadsTo(a: AttributeModel): { target: DataClassModel; many: boolean } | undefined {
  if (a.kind === 'relatedEntity') return { target: a.target, many: false };
  if (a.kind === 'relatedEntities') return { target: a.target, many: true };
  if (a.kind !== 'alias') return undefined;
  const last = a.steps[a.steps.length - 1];
  if (last.kind === 'relatedEntity') return { target: last.target, many: a.toMany };
  if (last.kind === 'relatedEntities') return { target: last.target, many: true };
  return undefined;
}

/** A declared parameter type as a schema (its name and what it takes in the description). */
function paramSchema(t: ParamType): Schema {
  const p = parseParam(t);
  const base: Schema =
    p.kind === 'string' ? { type: 'string' }
      : p.kind === 'number' ? { type: 'number' }
        : p.kind === 'boolean' ? { type: 'boolean' }
          : p.kind === 'date' ? { type: 'string' }
            : p.kind === 'object' ? OBJECT
              : p.kind === 'array' ? { type: 'array' }
                : p.kind === 'entity' ? ref('EntityParameter')
                  : p.kind === 'selection' ? ref('SelectionParameter')
                    : {};
  // (OpenAPI 3.1: a $ref takes a description beside it)
  return { ...(p.optional ? { anyOf: [base, { type: 'null' }] } : base), description: `${p.name === undefined ? '' : `${p.name}: `}${expected(p)}${p.optional ? ' (optional)' : ''}` };
}

/** The JSON array body of a call (its declared parameters as a tuple, else any values). */
function argumentsSchema(declared: readonly ParamType[] | undefined): Schema {
  if (!declared) return { type: 'array', description: 'the parameters, in order (the function declares no types: they arrive as JSON gives them)' };
  const required = declared.filter((t) => !parseParam(t).optional).length;
  // (JSON Schema: prefixItems holds at least one schema; a function declaring none takes an empty array)
  return { type: 'array', ...(declared.length > 0 ? { prefixItems: declared.map(paramSchema) } : {}), minItems: required, maxItems: declared.length, items: false, description: `the parameters, in order: ${declared.join(', ') || 'none'}` };
}

const RESULT = { anyOf: [ref('FunctionResult'), ref('AnyEntity'), ref('AnyCollection')] };

interface Callable {
  /** the URL */
  readonly path: string;
  /** the resource roles.json names it by (ds.fn, Employee.fn, Tools.fn) */
  readonly resource: string;
  readonly name: string;
  readonly onHttpGet: boolean;
  readonly params?: readonly ParamType[];
  readonly tag: string;
  readonly runsOn: string;
  /** $filter and $orderby apply: it runs on a selection */
  readonly selection: boolean;
  readonly entity?: DataClassModel;
  /** at …/$entityset/{id}: it runs on the members of a stored set */
  readonly onSet?: boolean;
}

/** A function's path item: POST with a JSON array body, GET (when @onHttpGet) with $params. */
function callPath(c: Callable): PathItem {
  const id = `${c.resource.replace(/\./g, '_')}${c.onSet ? '_onSet' : ''}`;
  const narrowing = c.selection ? [param('filter'), param('orderby')] : [];
  const shaping = [param('top'), param('skip'), ...params(SHAPE), methodParam(['entityset'], false, 'entityset: when the function returns an entity selection, store it')];
  const description = `${c.runsOn}. Its result is sent as {"result": …}; an entity it returns as the entity; an entity selection as a page (shaped by $attributes, $top …).${c.params ? ` Declared parameters: ${c.params.join(', ') || 'none'}.` : ''}`;
  const item: PathItem = {
    ...(c.entity ? { parameters: [keyParam(c.entity)] } : {}),
    ...(c.onSet ? { parameters: [SET_ID] } : {}),
    post: op(`call_${id}`, [c.tag], `Call ${c.name}${c.onSet ? ' on a stored entity set' : ''}`, {
      description,
      parameters: [...narrowing, ...(c.selection ? [param('params')] : []), ...shaping],
      requestBody: jsonBody(argumentsSchema(c.params), false, 'a JSON array of the parameters'),
      responses: { 200: ok('what the function returned', RESULT) },
    }),
  };
  if (c.onHttpGet) {
    item.get = op(`get_${id}`, [c.tag], `Call ${c.name} (GET)`, {
      description: `${description} With GET, $params gives the parameters as a JSON array.`,
      parameters: [...narrowing, { ...param('params') }, ...shaping],
      responses: { 200: ok('what the function returned', RESULT) },
    });
  }
  return item;
}

/** The functions of a dataclass the session may call, at the URLs the planner reads them from. */
function dataClassFunctions(scope: Scope, dc: DataClassModel): Callable[] {
  const core = scope.core.classOf(dc);
  const attrs = new Set(visibleAttributes(scope, dc).map((a) => a.name));
  const out: Callable[] = [];
  const seen = { collection: new Set<string>(), entity: new Set<string>() };
  const add = (level: 'collection' | 'entity', c: Omit<Callable, 'path' | 'resource' | 'tag' | 'entity'>) => {
    // the first of a name wins (the planner looks in this order), and a visible attribute's name is read as the attribute
    if (seen[level].has(c.name) || attrs.has(c.name)) return;
    seen[level].add(c.name);
    const resource = `${dc.name}.${c.name}`;
    if (!scope.access.grants.execute(resource)) return;
    const path = level === 'entity' ? `${REST_PREFIX}/${dc.name}({key})/${c.name}` : `${REST_PREFIX}/${dc.name}/${c.name}`;
    out.push({ ...c, path, resource, tag: dc.name, ...(level === 'entity' ? { entity: dc } : {}) });
  };
  const fns = (proto: object | undefined, stop: object): ExposedFunction[] => (proto ? exposedFunctions(proto, stop) : []);
  for (const f of fns(core.selectionPrototype, EntitySelection.prototype)) add('collection', { ...f, runsOn: `A function of the ${dc.name}Selection class: it runs on the entities $filter and $orderby select (all of them without), or on a stored set at ${REST_PREFIX}/${dc.name}/${f.name}/$entityset/{id}`, selection: true });
  for (const f of fns(Object.getPrototypeOf(core.dataClass) as object, DataClass.prototype)) add('collection', { ...f, runsOn: `A function of the ${dc.name} class`, selection: false });
  for (const f of fns(core.entityPrototype, Entity.prototype)) add('entity', { ...f, runsOn: `A function of the ${dc.name}Entity class: it runs on the entity of the key`, selection: false });
  for (const m of projectMethodsOf(core.dataClass).values()) {
    const d = m.definition;
    if (!d.exposed) continue;
    const common = { name: m.name, onHttpGet: d.onHttpGet === true, params: d.params };
    if (d.scope === 'currentRecord') add('entity', { ...common, runsOn: `The project method ${m.name} (scope currentRecord): it runs on the entity of the key`, selection: false });
    else if (d.scope === 'currentSelection') add('collection', { ...common, runsOn: `The project method ${m.name} (scope currentSelection): it runs on the entities $filter and $orderby select`, selection: true });
    else add('collection', { ...common, runsOn: `The project method ${m.name} (scope table): it runs on the whole dataclass`, selection: false });
  }
  return out;
}

/** The functions of the DataStore class and of the shared singletons the session may call. */
function datastoreFunctions(scope: Scope): Callable[] {
  const out: Callable[] = [];
  const seen = new Set(scope.ds.model.dataClasses.filter(scope.sees).map((d) => d.name));
  for (const f of exposedFunctions(Object.getPrototypeOf(scope.ds) as object, Datastore.prototype)) {
    // /rest/$catalog/{name} names a dataclass first
    if (seen.has(f.name) || !scope.access.grants.execute(`ds.${f.name}`)) continue;
    out.push({ ...f, path: `${REST_PREFIX}/$catalog/${f.name}`, resource: `ds.${f.name}`, tag: 'datastore', runsOn: 'A function of the DataStore class', selection: false });
  }
  for (const [className, instance] of singletonsOf(scope.ds)) {
    for (const f of singletonFunctions(instance as Singleton)) {
      const resource = `${className}.${f.name}`;
      if (!scope.access.grants.execute(resource)) continue;
      out.push({ ...f, path: `${REST_PREFIX}/$singleton/${className}/${f.name}`, resource, tag: className, runsOn: `A function of the shared singleton ${className}`, selection: false });
    }
  }
  return out;
}

/** The catalog's one header: this server's additions to 4D's shape, when asked (handlers/catalog.ts). */
const PREFER_EXTENSIONS: Schema = {
  name: 'Prefer',
  in: 'header',
  required: false,
  schema: { type: 'string' },
  description: '`extensions` (RFC 7240) adds this server\'s additions to 4D\'s shape: `sessionMay` (what this session may do, call and not read) and the model\'s `label`. Without it, 4D\'s shape.',
};

/** The paths of the server itself: catalog, info, uploads, set releases, the legacy login, this document. */
function systemPaths(scope: Scope, out: Paths): void {
  const guestLocked = scope.core.policy.forceLogin && scope.session.isGuest();
  const tags = ['server'];
  out[`${REST_PREFIX}/$catalog`] = { get: op('getCatalog', ['catalog'], 'The dataclasses REST exposes, the datastore\'s functions and the shared singletons', { parameters: [PREFER_EXTENSIONS], responses: { 200: ok('the catalog', ref('Catalog')) } }) };
  out[`${REST_PREFIX}/$catalog/$all`] = { get: op('getCatalogAll', ['catalog'], 'Every exposed dataclass with its attributes', { parameters: [PREFER_EXTENSIONS], responses: { 200: ok('the catalog', ref('Catalog')) } }) };
  out[`${REST_PREFIX}/$openapi`] = {
    get: op('getOpenapi', tags, 'This document: what this session may use', {
      parameters: [{ name: 'format', in: 'query', required: false, schema: { type: 'string', enum: ['json', 'yaml'] }, description: 'json (the default) or yaml' }],
      responses: { 200: { description: 'an OpenAPI 3.1 document', content: { [JSON_TYPE]: { schema: OBJECT }, 'application/yaml': { schema: { type: 'string' } } } } },
    }),
  };
  if (!guestLocked) {
    out[`${REST_PREFIX}/$info`] = { get: op('getInfo', tags, 'The session, its privileges and its entity sets (every session\'s and set for admin)', { responses: { 200: ok('the server\'s state for this session', ref('Info')) } }) };
    out[`${REST_PREFIX}/$querypath`] = { get: op('getQueryPath', tags, 'The last __queryPath recorded for this session', { responses: { 200: ok('the last query path', { type: 'object', properties: { __queryPath: OBJECT }, required: ['__queryPath'] }) } }) };
    out[`${REST_PREFIX}/$entityset/$release`] = {
      post: op('releaseEntitySets', tags, 'Release entity sets', { requestBody: jsonBody({ type: 'array', items: { type: 'string' } }, true, 'the ids of the sets'), responses: { 200: ok('released', ref('Ok')) } }),
    };
  }
  const g = scope.access.grants;
  if (scope.ds.model.dataClasses.some((dc) => g.dataClass(dc.name, 'create') || g.dataClass(dc.name, 'update'))) {
    out[`${REST_PREFIX}/$upload`] = {
      post: op('upload', tags, 'Upload a file, to attach to an entity in an update ({"attribute": {"ID": …}})', {
        description: 'The raw body (any Content-Type, not a multipart form). Give $rawPict=true for an image or $binary=true for any other file.',
        parameters: [{ $ref: '#/components/parameters/uploadRawPict' }, { $ref: '#/components/parameters/uploadBinary' }, { $ref: '#/components/parameters/uploadTimeout' }],
        requestBody: RAW_BODY,
        responses: { 200: ok('the upload\'s ID', { type: 'object', properties: { ID: { type: 'string' } }, required: ['ID'], additionalProperties: false }) },
      }),
    };
  }
  const result = (schema: Schema) => ok('the answer', { type: 'object', properties: { result: schema }, required: ['result'], additionalProperties: false });
  if (typeof (scope.ds as unknown as { directoryLogin?: unknown }).directoryLogin === 'function') {
    out[`${REST_PREFIX}/$directory/login`] = {
      post: op('directoryLogin', ['session'], "Log in (4D's legacy login)", {
        description: 'The credentials as a JSON body [userName, password, sessionSeconds?], or in the headers username-4D, password-4D (and session-4D-length, in minutes). A refusal answers 401 with {"result": false, "__ERROR": …}.',
        requestBody: jsonBody({ type: 'array', prefixItems: [{ type: 'string' }, { type: 'string' }, { type: 'number' }], minItems: 2, maxItems: 3, items: false }, false),
        responses: { 200: result({ type: 'boolean' }) },
      }),
    };
  }
  out[`${REST_PREFIX}/$directory/logout`] = {
    get: op('directoryLogout', ['session'], 'Log out: a guest again', { responses: { 200: result({ type: 'boolean' }) } }),
    post: op('directoryLogoutPost', ['session'], 'Log out (POST)', { responses: { 200: result({ type: 'boolean' }) } }),
  };
  const user = { anyOf: [{ type: 'object', properties: { ID: { type: ['string', 'number'] }, userName: { type: 'string' }, fullName: { type: 'string' } } }, { type: 'null' }] };
  out[`${REST_PREFIX}/$directory/currentUser`] = {
    get: op('directoryCurrentUser', ['session'], "The session's user (null for a guest)", { responses: { 200: result(user) } }),
    post: op('directoryCurrentUserPost', ['session'], "The session's user (POST)", { responses: { 200: result(user) } }),
  };
  out[`${REST_PREFIX}/$directory/currentUserBelongsTo`] = {
    post: op('directoryBelongsTo', ['session'], "Whether the session's user belongs to a group", { requestBody: jsonBody({ type: 'array', prefixItems: [{ type: 'string' }], minItems: 1, maxItems: 1, items: false }, true), responses: { 200: result({ type: 'boolean' }) } }),
  };
}

/** Every path the session may use. */
export function buildPaths(scope: Scope, dataClasses: readonly DataClassModel[]): Paths {
  const out: Paths = {};
  systemPaths(scope, out);
  adminPaths(scope, out as never);
  signInPaths(scope, out as never);
  for (const dc of dataClasses) dataClassPaths(scope, dc, out);
  for (const dc of dataClasses) {
    for (const c of dataClassFunctions(scope, dc)) {
      out[c.path] = callPath(c);
      // a selection's function runs on a stored entity set too (plan-function.ts)
      if (c.selection) out[`${c.path}/$entityset/{id}`] = callPath({ ...c, onSet: true });
    }
  }
  for (const c of datastoreFunctions(scope)) out[c.path] = callPath(c);
  return out;
}
