// The JSON Schemas of the OpenAPI document (components.schemas): one entity, collection and input
// schema per dataclass the caller sees, built from the model and the caller's Visibility (an
// attribute the session may not read is not in its entity's schema, as it is not in its answers),
// and the shapes every dataclass shares (the __deferred reference, the __ERROR answer, a
// function's {"result"}). Each shape was checked against what the server really sends
// (test/http/openapi.test.ts compiles types generated from them against captured answers): where the
// server sends a key as a string (JSON answers: "__KEY": "1") or in its own type ($asArray), the
// schema says both.

import { ERRORS } from '../../errors/registry.js';
import { INTEGER_TYPES, type AttributeModel, type DataClassModel, type StorageType } from '../../model/types.js';
import type { Scope } from '../scope/scope.js';

export type Schema = Record<string, unknown>;

/** Any JSON object (without additionalProperties, generated types would allow none). */
export const OBJECT: Schema = { type: 'object', additionalProperties: true };
/** a list of names */
const STRINGS: Schema = { type: 'array', items: { type: 'string' } };

/**
 * The dataclasses whose entities the document describes: those REST exposes that the session may
 * read (a relation to another is not visible to it either, so no schema refers to one).
 */
export function readable(scope: Scope, dc: DataClassModel): boolean {
  return scope.sees(dc) && scope.access.grants.dataClass(dc.name, 'read');
}

/** A reference to a component schema. */
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** Component names of a dataclass's schemas. */
export const names = (dc: DataClassModel) => ({
  entity: `${dc.name}Entity`,
  collection: `${dc.name}Collection`,
  input: `${dc.name}Input`,
});

/** A value that may also be null. */
const nullable = (s: Schema): Schema => (typeof s.type === 'string' ? { ...s, type: [s.type, 'null'] } : { anyOf: [s, { type: 'null' }] });

/** The JSON a storage attribute's value is sent as (model/values.ts writes them). */
export function storageSchema(type: StorageType, dateOnly: boolean): Schema {
  switch (type) {
    case 'byte':
    case 'word':
    case 'long':
      return { type: 'integer' };
    case 'long64':
      return { type: 'integer', description: 'exact up to ±2^53−1' };
    case 'number':
      return { type: 'number' };
    case 'bool':
      return { type: 'boolean' };
    case 'string':
      return { type: 'string' };
    case 'uuid':
      return { type: 'string', pattern: '^[0-9A-F]{32}$', description: '32 uppercase hexadecimal digits (dashed input is accepted)' };
    case 'date':
      return dateOnly
        ? { type: 'string', pattern: '^\\d{1,2}!\\d{1,2}!\\d{4}$', description: "a date-only value as 4D sends it, d!m!yyyy (9!3!2017); $asArray sends !!yyyy-mm-dd!!; input takes 'YYYY-MM-DD' too" }
        : { type: 'string', format: 'date-time', description: 'ISO 8601 in UTC, with milliseconds' };
    case 'duration':
      return { type: 'integer', description: 'a duration in milliseconds' };
    case 'object':
      return { ...OBJECT, description: 'any JSON object' };
    case 'image':
      return { anyOf: [ref('Deferred'), { type: 'null' }], description: 'a picture: read its bytes at __deferred.uri; set it in an update with {"ID": <upload id>} (POST /rest/$upload?$rawPict=true) or null' };
    case 'blob':
      return { anyOf: [ref('Deferred'), { type: 'null' }], description: 'a blob: read its bytes at __deferred.uri ($binary=true); set it in an update with {"ID": <upload id>} (POST /rest/$upload?$binary=true) or null' };
    default: {
      const never: never = type;
      return never;
    }
  }
}

/** The schema of a value named by a catalog type (a calculated attribute's, an alias's target). */
function typeNameSchema(scope: Scope, typeName: string): Schema {
  const storage = typeName as StorageType;
  const model = scope.ds.model;
  const target = model.dataClasses.find((d) => d.name === typeName && readable(scope, d));
  if (target) return relationOne(target);
  const many = model.dataClasses.find((d) => d.collectionName === typeName && readable(scope, d));
  if (many) return relationMany(many);
  if (['bool', 'blob', 'byte', 'date', 'duration', 'image', 'long', 'long64', 'number', 'string', 'uuid', 'word', 'object'].includes(storage)) return storageSchema(storage, false);
  return {};
}

/** An N→1 relation: deferred (its uri and __KEY), inline with $expand or $attributes=rel.*, or null when empty. */
function relationOne(target: DataClassModel): Schema {
  return { anyOf: [ref('Deferred'), ref(names(target).entity), { type: 'null' }] };
}

/** A 1→N relation: deferred, an inline page ($expand), or {"__COUNT": n} in $asArray answers. */
function relationMany(target: DataClassModel): Schema {
  return { anyOf: [ref('Deferred'), ref(names(target).collection), ref('RelatedCount')] };
}

/** What dropping the entity does to a 1→N relation's entities (model.json's deleteRule). */
const DELETE_RULE_TEXT = { leave: '', cascade: ' (deleteRule cascade: dropping this entity drops them too)', refuse: ' (deleteRule refuse: this entity cannot be dropped while it has any, 409)' } as const;

/** An attribute's value in an entity answer. */
function attributeSchema(scope: Scope, a: AttributeModel): Schema {
  switch (a.kind) {
    case 'storage': {
      const s = storageSchema(a.type, a.dateOnly);
      if (a.type === 'image' || a.type === 'blob') return s;
      // (a key the server gives is null in the $refresh answer of an entity not saved yet)
      const generated = a.identifying && (a.autoincrement || a.autogenerate);
      const out = a.identifying && !generated ? s : nullable(s);
      return generated || a.serverSet ? { ...out, readOnly: true } : out;
    }
    case 'relatedEntity':
      return { ...relationOne(a.target), description: `N→1 relation to ${a.target.name} (foreign key ${a.foreignKey.name})` };
    case 'relatedEntities':
      // (null in the $refresh answer of an entity not saved yet: it has no related entities of its own)
      return { ...nullable(relationMany(a.target)), description: `1→N relation: the ${a.target.name} entities whose ${a.inverse.name} is this one${DELETE_RULE_TEXT[a.deleteRule]}`, readOnly: true };
    case 'alias': {
      const last = a.steps[a.steps.length - 1];
      const value = last.kind === 'relatedEntity' || last.kind === 'relatedEntities' || last.kind === 'alias' ? typeNameSchema(scope, a.type) : attributeSchema(scope, last);
      // a scalar reached through a 1→N step is a list of values
      const s = a.toMany && last.kind !== 'relatedEntities' && last.kind !== 'relatedEntity' ? { type: 'array', items: value } : value;
      return { ...nullable(s), readOnly: true, description: `alias of ${a.path}` };
    }
    case 'calculated': {
      const writable = scope.core.classOf(a.dataClass).calculated(a.name)?.set !== undefined;
      return { ...nullable(typeNameSchema(scope, a.type)), ...(writable ? {} : { readOnly: true }), description: `calculated (${a.type})` };
    }
    default: {
      const never: never = a;
      return never;
    }
  }
}

/**
 * What a write takes for a storage attribute: what it answers, and the text model/values.ts
 * converts (coerceValue: numeric text, ISO and dd!mm!yyyy dates, a uuid in any case, dashed).
 */
export function storageInputSchema(type: StorageType, dateOnly: boolean): Schema {
  switch (type) {
    case 'byte':
    case 'word':
    case 'long':
    case 'long64':
      return { anyOf: [storageSchema(type, dateOnly), { type: 'string', pattern: '^\\s*-?\\d+\\s*$', description: 'a whole number as text' }] };
    case 'number':
    case 'duration':
      // (a duration's float noise, 3960000.0000000005 ms, is rounded away)
      return { anyOf: [{ type: 'number', ...(type === 'duration' ? { description: 'milliseconds' } : {}) }, { type: 'string', pattern: '^\\s*[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?\\s*$', description: 'a number as text' }] };
    case 'uuid':
      return { type: 'string', pattern: '^[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}$', description: '32 hexadecimal digits, in any case, dashed or not' };
    case 'date':
      return { type: 'string', pattern: '^(\\d{1,2}!\\d{1,2}!\\d{4}|\\d{4}-\\d{2}-\\d{2}([T ][\\d:.]+(Z|[+-]\\d{2}:?\\d{2})?)?)$', description: `YYYY-MM-DD, an ISO 8601 date-time or d!m!yyyy${dateOnly ? ' (the day is kept)' : ''}` };
    default:
      return storageSchema(type, dateOnly);
  }
}

/** A key as a body gives it: in its own type, or as text ("__KEY": "1", as answers send it). */
function keyInputSchema(dc: DataClassModel): Schema {
  return storageInputSchema(dc.key.type, false);
}

/** The attributes of a dataclass the caller sees, in model order. */
export function visibleAttributes(scope: Scope, dc: DataClassModel): AttributeModel[] {
  return dc.attributes.filter(scope.visible);
}

/** Entity, collection and input schemas of one dataclass, as the caller sees it. */
function dataClassSchemas(scope: Scope, dc: DataClassModel): Record<string, Schema> {
  const n = names(dc);
  const attributes = visibleAttributes(scope, dc);
  const integerKey = INTEGER_TYPES.has(dc.key.type);
  const properties: Record<string, Schema> = {
    __entityModel: { type: 'string', const: dc.name, description: 'the dataclass (single entities; not inside __ENTITIES)' },
    __KEY: integerKey
      ? { type: ['string', 'integer'], description: 'the primary key: as text in JSON answers ("1"), in its own type in $asArray answers' }
      : { type: 'string', description: 'the primary key' },
    __TIMESTAMP: { type: 'string', format: 'date-time', description: 'when the entity was last saved (not in $asArray answers)' },
    __STAMP: { type: 'integer', description: `the save counter: give it back in an update (a stale one answers 409, errCode ${ERRORS.STAMP_CHANGED.errCode})` },
  };
  for (const a of attributes) properties[a.name] = attributeSchema(scope, a);
  // what an update's answer adds
  properties.uri = { type: 'string', description: 'the absolute URI of a saved entity (answers of $method=update)' };
  properties.__ERROR = { type: 'array', items: ref('ErrorItem'), description: 'why this entity of a batch was not saved' };
  properties.__STATUS = ref('SaveStatus');
  const entity: Schema = {
    type: 'object',
    description: `An entity of ${dc.name}. Every attribute may be left out ($attributes, the /a,b list of the URL); relations are __deferred unless $expand (or $attributes=rel.*) inlines them.`,
    properties,
    required: ['__STAMP'],
    additionalProperties: false,
  };
  const collection: Schema = {
    type: 'object',
    description: `A page of ${dc.name} entities.`,
    properties: {
      __ENTITYSET: { type: 'string', description: 'the URI of the stored entity set ($method=entityset, or an inline 1→N relation)' },
      __entityModel: { type: 'string', const: dc.name },
      __GlobalStamp: { type: 'integer', description: "the datastore's global stamp when the page was read" },
      __COUNT: { type: 'integer', description: 'how many entities the selection holds (not only this page)' },
      __FIRST: { type: 'integer', description: 'the position of the first entity sent ($skip)' },
      __ENTITIES: { type: 'array', items: ref(n.entity) },
      __SENT: { type: 'integer', description: 'how many entities this page holds' },
      __queryPlan: { ...OBJECT, description: '$queryplan=true' },
      __queryPath: { ...OBJECT, description: '$querypath=true' },
    },
    required: ['__COUNT', '__ENTITIES'],
    additionalProperties: false,
  };
  // What rest/run/input.ts takes: the writable attributes; a relation as 4D gives it, {"__KEY": k}
  // (ClassFunctions, "Related entity parameter"), or null; a relation, picture or blob sent back
  // as it was read ({"__deferred": …}) is left as it is; the properties of an answer that are no
  // attribute are ignored; any other name (__TIMESTAMP, an alias, a calculated attribute without
  // a set function, an attribute the model does not have) is refused (400).
  const echo = { ...ref('Deferred'), description: 'sent back as it was read: left unchanged' };
  const inputProps: Record<string, Schema> = {
    __KEY: { ...keyInputSchema(dc), description: 'the key of the entity to update (leave out to create one)' },
    __STAMP: { type: 'integer', description: 'the __STAMP the entity was read with (required to update)' },
    __entityModel: { type: 'string', description: 'ignored (as an answer gives it)' },
    __DATACLASS: { type: 'string', description: 'ignored' },
    uri: { type: 'string', description: 'ignored (as an answer gives it)' },
  };
  for (const a of attributes) {
    if (a.kind === 'storage') {
      if (a.type === 'image' || a.type === 'blob') inputProps[a.name] = { anyOf: [ref('UploadRef'), echo, { type: 'null' }] };
      else if (!(a.identifying && (a.autoincrement || a.autogenerate))) inputProps[a.name] = a.identifying ? storageInputSchema(a.type, a.dateOnly) : nullable(storageInputSchema(a.type, a.dateOnly));
    } else if (a.kind === 'relatedEntity') {
      inputProps[a.name] = {
        anyOf: [{ type: 'object', properties: { __KEY: keyInputSchema(a.target) }, required: ['__KEY'] }, echo, { type: 'null' }],
        description: `the related ${a.target.name}: {"__KEY": <its key>} (4D's form; an inline entity read with $expand is read by its __KEY), or null to empty the relation`,
      };
    } else if (a.kind === 'calculated' && scope.core.classOf(a.dataClass).calculated(a.name)?.set !== undefined) {
      inputProps[a.name] = nullable(typeNameSchema(scope, a.type));
    } else if (a.kind === 'relatedEntities' || a.kind === 'alias') {
      // read-only: only the value it was read with, unchanged
      if (attributeSchema(scope, a).anyOf) inputProps[a.name] = echo;
    }
  }
  const input: Schema = {
    type: 'object',
    description: `The values of a ${dc.name} entity to create (no __KEY) or update (__KEY and __STAMP). Relations, pictures and blobs sent back as they were read ({"__deferred": …}) stay as they are, and __entityModel and uri are ignored; any other read-only property (__TIMESTAMP, an alias, a calculated attribute) or a name the model does not have is refused (400).`,
    properties: inputProps,
    additionalProperties: false,
  };
  return { [n.entity]: entity, [n.collection]: collection, [n.input]: input };
}

/** The registered errCodes, lowest first. */
export function errCodes(): number[] {
  return [...new Set(Object.values(ERRORS).map((e) => e.errCode))].sort((a, b) => a - b);
}

/** The shapes every dataclass shares. */
function sharedSchemas(): Record<string, Schema> {
  const table = Object.entries(ERRORS).map(([name, e]) => `- ${e.errCode} (${e.status}, ${name}): ${e.summary}`).join('\n');
  return {
    Deferred: {
      type: 'object',
      description: 'A value not sent inline: a relation (its uri, with the related key for N→1) or the contents of a picture (image: true) or blob.',
      properties: {
        __deferred: {
          type: 'object',
          properties: { uri: { type: 'string', description: 'a relative URI (/rest/…) to GET' }, __KEY: { type: 'string' }, image: { type: 'boolean', const: true } },
          required: ['uri'],
          additionalProperties: false,
        },
      },
      required: ['__deferred'],
      additionalProperties: false,
    },
    RelatedCount: {
      type: 'object',
      description: 'a 1→N relation in a $asArray answer: how many related entities the session sees',
      properties: { __COUNT: { type: 'integer' } },
      required: ['__COUNT'],
      additionalProperties: false,
    },
    UploadRef: { type: 'object', description: 'an upload to attach (POST /rest/$upload answered its ID)', properties: { ID: { type: 'string' } }, required: ['ID'] },
    ErrorItem: {
      type: 'object',
      properties: {
        message: { type: 'string' },
        componentSignature: { type: 'string', description: 'dbmg (4D database-engine codes), dsrs (this server\'s own), DBEV (an entity event\'s error)' },
        errCode: {
          anyOf: [{ type: 'integer', enum: errCodes() }, { type: 'integer', description: "an entity event's own code (componentSignature DBEV)" }],
          description: `The registered codes (docs/errors.md):\n${table}`,
        },
        extraDescription: { description: "what an entity event's error adds" },
        attributeName: { type: 'string', description: 'the attribute the error is about' },
      },
      required: ['message', 'componentSignature', 'errCode'],
      additionalProperties: false,
    },
    Error: {
      type: 'object',
      description: `Every failure: the errors, innermost first (a refused save: ${[ERRORS.STAMP_CHANGED, ERRORS.RECORD_NOT_SAVED, ERRORS.ENTITY_NOT_SAVED].map((e) => e.errCode).join(', ')}).`,
      properties: {
        __ERROR: { type: 'array', items: ref('ErrorItem'), minItems: 1 },
        result: { type: 'boolean', const: false, description: 'a refused $directory/login' },
      },
      required: ['__ERROR'],
      additionalProperties: false,
    },
    WriteError: {
      description: `A refused write ($method=update, validate, an update by key): one entity — its values as sent (a new one) or as stored (__STATUS with a stale __STAMP, errCode ${ERRORS.STAMP_CHANGED.errCode}) beside its __ERROR — or a batch, __ENTITIES with each entity so; or the Error of a refusal before any entity was read.`,
      anyOf: [
        { type: 'object', properties: { __ERROR: { type: 'array', items: ref('ErrorItem'), minItems: 1 }, __STATUS: ref('SaveStatus') }, required: ['__ERROR'], additionalProperties: true },
        { type: 'object', properties: { __ENTITIES: { type: 'array', items: { type: 'object', properties: { __ERROR: { type: 'array', items: ref('ErrorItem') }, __STATUS: ref('SaveStatus') }, additionalProperties: true } } }, required: ['__ENTITIES'], additionalProperties: false },
      ],
    },
    SaveStatus: {
      type: 'object',
      description: "4D's status of a refused save or lock (2: stamp changed, 3: locked, 7/8: validation failed)",
      properties: { status: { type: 'integer' }, statusText: { type: 'string' }, success: { type: 'boolean' } },
      required: ['status'],
    },
    FunctionResult: {
      type: 'object',
      description: 'what a function returned, when it is neither an entity (sent as the entity) nor an entity selection (sent as a page)',
      properties: { result: { description: 'any JSON value (null for nothing)' } },
      required: ['result'],
      additionalProperties: false,
    },
    AnyEntity: { type: 'object', description: 'an entity (of the dataclass the function returns)', properties: { __entityModel: { type: 'string' }, __KEY: { type: 'string' }, __STAMP: { type: 'integer' } }, required: ['__entityModel', '__KEY', '__STAMP'] },
    AnyCollection: {
      type: 'object',
      description: 'a page of entities (of the dataclass the function returns)',
      properties: { __ENTITYSET: { type: 'string' }, __entityModel: { type: 'string' }, __COUNT: { type: 'integer' }, __FIRST: { type: 'integer' }, __SENT: { type: 'integer' }, __ENTITIES: { type: 'array', items: OBJECT } },
      required: ['__COUNT', '__ENTITIES'],
    },
    LockResult: {
      type: 'object',
      description: '$lock=true|false: whether it succeeded, and 4D\'s status (who holds the lock when refused)',
      properties: { result: { type: 'boolean' }, __STATUS: OBJECT },
      required: ['result', '__STATUS'],
      additionalProperties: false,
    },
    Catalog: {
      type: 'object',
      properties: {
        singletons: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, methods: { type: 'array', items: OBJECT } } } },
        dataClasses: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, uri: { type: 'string' }, dataURI: { type: 'string' } }, required: ['name'] } },
        methods: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, exposed: { type: 'boolean' }, allowedOnHTTPGET: { type: 'boolean' } } } },
        sessionMay: {
          type: 'object',
          description: '(Prefer: extensions) the datastore\'s and the shared singletons\' functions this session may call',
          properties: { methods: STRINGS, singletons: { type: 'object', additionalProperties: STRINGS } },
        },
      },
      required: ['dataClasses'],
    },
    CatalogDataClass: {
      type: 'object',
      properties: {
        name: { type: 'string' }, className: { type: 'string' }, collectionName: { type: 'string' }, tableNumber: { type: 'integer' }, dataURI: { type: 'string' }, defaultTopSize: { type: 'integer' },
        attributes: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, kind: { type: 'string' }, type: { type: 'string' } }, required: ['name', 'kind', 'type'] } },
        key: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
        methods: { type: 'array', items: OBJECT },
        label: { type: 'string', description: '(Prefer: extensions) the attribute the model reads an entity by, when this session reads it' },
        sessionMay: {
          type: 'object',
          description: '(Prefer: extensions) what this session may do here: roles.json\'s answers, the functions it may call, the exposed attributes it may not read',
          properties: { read: { type: 'boolean' }, create: { type: 'boolean' }, update: { type: 'boolean' }, drop: { type: 'boolean' }, methods: STRINGS, restricted: STRINGS },
        },
      },
      required: ['name', 'attributes', 'key'],
    },
    Info: {
      type: 'object',
      properties: {
        entitySetCount: { type: 'integer' },
        entitySet: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, dataClass: { type: 'string' }, selectionSize: { type: 'integer' }, sorted: { type: 'boolean' }, refreshed: { type: 'string' }, expires: { type: 'string' } } } },
        session: ref('SessionInfo'),
        sessionInfo: { type: 'array', items: ref('SessionInfo') },
        privileges: { type: 'object', properties: { privileges: { type: 'array', items: { type: 'object', properties: { privilege: { type: 'string' } } } } } },
      },
      required: ['session'],
    },
    SessionInfo: {
      type: 'object',
      properties: { sessionID: { type: 'string' }, userName: { type: 'string' }, privileges: { type: 'array', items: { type: 'string' } }, lifeTime: { type: 'integer' }, expiration: { type: 'string' } },
    },
    Ok: { type: 'object', properties: { ok: { type: 'boolean', const: true } }, required: ['ok'], additionalProperties: false },
    Looker: {
      type: 'object',
      description: "$format=looker: Looker Studio's connector table",
      properties: {
        __COUNT: { type: 'integer' },
        __FIRST: { type: 'integer' },
        schema: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, dataType: { type: 'string' }, semantics: OBJECT } } },
        rows: { type: 'array', items: { type: 'object', properties: { values: { type: 'array' } } } },
        filtersApplied: { type: 'boolean' },
      },
      required: ['schema', 'rows'],
    },
    EntityParameter: {
      type: 'object',
      description: 'an entity given as a function parameter: it arrives with these values applied, unsaved',
      properties: { __DATACLASS: { type: 'string' }, __ENTITY: { type: 'boolean', const: true }, __KEY: {} },
      required: ['__DATACLASS', '__ENTITY'],
    },
    SelectionParameter: {
      type: 'object',
      description: 'an entity selection given as a function parameter: the members of a stored entity set',
      properties: { __DATASET: { type: 'string', description: 'an entity set id' }, __ENTITIES: { type: 'boolean', const: true } },
      required: ['__DATASET', '__ENTITIES'],
    },
  };
}

/** Every component schema the caller's document uses. */
export function componentSchemas(scope: Scope, dataClasses: readonly DataClassModel[]): Record<string, Schema> {
  const out = sharedSchemas();
  for (const dc of dataClasses) Object.assign(out, dataClassSchemas(scope, dc));
  return out;
}
