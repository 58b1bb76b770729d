// Turns fetched entities into the wire JSON of 4D's REST server: __KEY as a string, __STAMP,
// __TIMESTAMP, deferred relations and pictures, inline related entities and selections.

import { type FetchedEntity, type FetchedSelection, leadsTo, type ProjectedAttribute, type Projection, relatedKeyOf } from '../../datastore/index.js';
import type { AliasAttribute, CalculatedAttribute, DataClassModel, StorageAttribute } from '../../model/types.js';
import { WIRE } from '../../config/wire.js';
import { REST_PREFIX } from '../request/constants.js';
import { keyInUri } from '../request/url.js';
import { isoOfMs } from '../../util/iso-time.js';

type Json = Record<string, unknown>;

export interface SerializeContext {
  readonly globalStamp: number;
}

export function entityUri(dc: DataClassModel, key: unknown): string {
  return `${REST_PREFIX}/${dc.name}(${keyInUri(key)})`;
}

/** One entity; `model` adds __entityModel (top-level single-entity answers). */
export function serializeEntity(f: FetchedEntity, p: Projection, ctx: SerializeContext, model = false): Json {
  const e = f.entity;
  const out: Json = {};
  if (model) out[WIRE.ENTITY_MODEL] = p.dataClass.name;
  out[WIRE.KEY] = String(e.getKey());
  out[WIRE.TIMESTAMP] = isoOfMs(e.getTimeStamp().getTime());
  out[WIRE.STAMP] = e.getStamp();
  for (const a of p.attributes) out[a.attr.name] = attributeValue(f, a, p.dataClass, ctx);
  return out;
}

/** A page of a selection in the collection envelope (reference §1.5 key order). */
export function serializeCollection(
  dc: DataClassModel, count: number, first: number, entities: readonly FetchedEntity[], p: Projection, ctx: SerializeContext,
): Json {
  return collectionOf(dc, count, first, entities.map((f) => serializeEntity(f, p, ctx)), ctx);
}

/** The collection envelope around entities already in their wire form. */
export function collectionOf(dc: DataClassModel, count: number, first: number, list: readonly Json[], ctx: SerializeContext): Json {
  return {
    [WIRE.ENTITY_MODEL]: dc.name,
    [WIRE.GLOBAL_STAMP]: ctx.globalStamp,
    [WIRE.COUNT]: count,
    [WIRE.FIRST]: first,
    [WIRE.ENTITIES]: list,
    [WIRE.SENT]: list.length,
  };
}

/** The same envelope as text, around entities already written as text (row-writer.ts); `head`: members before it, each with its trailing comma; `tail`: after it, each with its leading comma. */
export function collectionText(dc: DataClassModel, count: number, first: number, list: readonly string[], ctx: SerializeContext, tail = '', head = ''): string {
  return `${collectionHead(dc, count, first, ctx, head)}${list.join(',')}${collectionTail(list.length, tail)}`;
}

/** The envelope's text before its first entity (collectionText's). */
export function collectionHead(dc: DataClassModel, count: number, first: number, ctx: SerializeContext, head = ''): string {
  return `{${head}${ENVELOPE.model}${JSON.stringify(dc.name)}${ENVELOPE.stamp}${ctx.globalStamp}${ENVELOPE.count}${count}${ENVELOPE.first}${first}${ENVELOPE.entities}`;
}

/** The envelope's text after its last entity, `sent` of them (collectionText's). */
export function collectionTail(sent: number, tail = ''): string {
  return `]${ENVELOPE.sent}${sent}${tail}}`;
}

/** The envelope's member names as text, in collectionOf's order. */
const ENVELOPE = {
  model: `${JSON.stringify(WIRE.ENTITY_MODEL)}:`,
  stamp: `,${JSON.stringify(WIRE.GLOBAL_STAMP)}:`,
  count: `,${JSON.stringify(WIRE.COUNT)}:`,
  first: `,${JSON.stringify(WIRE.FIRST)}:`,
  entities: `,${JSON.stringify(WIRE.ENTITIES)}:[`,
  sent: `,${JSON.stringify(WIRE.SENT)}:`,
};

/**
 * `$asArray=true`: a bare array; __KEY keeps the key's own type, no __TIMESTAMP; a 1→N relation
 * reads {"__COUNT": n} (counted by countRelated, 4D's $asArray page), the other deferred
 * relations are left out; value lists and relations the request inlines explicitly are kept.
 * See docs/decisions.md.
 */
export function serializeAsArray(entities: readonly FetchedEntity[], p: Projection, ctx: SerializeContext): Json[] {
  return entities.map((f) => asArrayEntity(f, p, ctx));
}

/** One entity of a `$asArray=true` answer. */
export function asArrayEntity(f: FetchedEntity, p: Projection, ctx: SerializeContext): Json {
  const out: Json = { [WIRE.KEY]: f.entity.getKey(), [WIRE.STAMP]: f.entity.getStamp() };
  for (const a of p.attributes) {
    if (a.kind === 'value') out[a.attr.name] = plainValue(a.attr.kind === 'calculated' ? f.related.get(a.attr.name) : f.entity.get(a.attr.name), a.attr, p.dataClass, f.entity.getKey(), true);
    else if (a.kind !== 'deferred') out[a.attr.name] = attributeValue(f, a, p.dataClass, ctx);
    else if (a.attr.kind === 'relatedEntities' && f.related.has(a.attr.name)) out[a.attr.name] = { [WIRE.COUNT]: f.related.get(a.attr.name) };
  }
  return out;
}

/** Projections that inline a related selection at some level (nests()). */
const nesting = new WeakMap<Projection, boolean>();

/** Whether a projection inlines a related selection at some level: its entities are then written in pieces (entityPieces). */
function nests(p: Projection): boolean {
  let n = nesting.get(p);
  if (n === undefined) nesting.set(p, (n = p.attributes.some((a) => a.kind === 'entities' || (a.kind === 'entity' && nests(a.sub)))));
  return n;
}

/**
 * One entity's wire JSON in pieces: the very text of JSON.stringify(serializeEntity(…)), the
 * entities of its inline selections (at any level) written one by one, so that an entity inlining
 * thousands is made a slice at a time and no object tree of the whole is built. Each run of
 * attributes between two inline selections is written by JSON.stringify, as the whole would be.
 */
export function* entityPieces(f: FetchedEntity, p: Projection, ctx: SerializeContext, model = false): Generator<string, void, undefined> {
  if (!nests(p)) {
    yield JSON.stringify(serializeEntity(f, p, ctx, model));
    return;
  }
  const e = f.entity;
  let run: Json = {};
  if (model) run[WIRE.ENTITY_MODEL] = p.dataClass.name;
  run[WIRE.KEY] = String(e.getKey());
  run[WIRE.TIMESTAMP] = isoOfMs(e.getTimeStamp().getTime());
  run[WIRE.STAMP] = e.getStamp();
  let text = '{';
  let members = 0;
  const flush = () => {
    const written = JSON.stringify(run).slice(1, -1);
    if (written !== '') text += `${members++ === 0 ? '' : ','}${written}`;
    run = {};
  };
  for (const a of p.attributes) {
    if (a.kind !== 'entities' && !(a.kind === 'entity' && nests(a.sub))) {
      run[a.attr.name] = attributeValue(f, a, p.dataClass, ctx);
      continue;
    }
    flush();
    text += `${members++ === 0 ? '' : ','}${JSON.stringify(a.attr.name)}:`;
    if (a.kind === 'entity') {
      const related = f.related.get(a.attr.name) as FetchedEntity | null | undefined;
      if (!related) {
        text += 'null';
        continue;
      }
      yield text;
      text = '';
      yield* entityPieces(related, a.sub, ctx);
      continue;
    }
    const sel = f.related.get(a.attr.name) as FetchedSelection;
    yield `${text}{${SELECTION.set}${JSON.stringify(relationUri(p.dataClass, e.getKey(), a.attr.name))}${SELECTION.stamp}${ctx.globalStamp}${SELECTION.count}${sel.count}${SELECTION.entities}`;
    text = '';
    for (let i = 0; i < sel.entities.length; i++) {
      if (i > 0) yield ',';
      yield* entityPieces(sel.entities[i], a.sub, ctx);
    }
    yield `]${ENVELOPE.sent}${sel.entities.length}}`;
  }
  flush();
  yield `${text}}`;
}

/** An inline selection's member names as text, in attributeValue's order. */
const SELECTION = {
  set: `${JSON.stringify(WIRE.ENTITY_SET)}:`,
  stamp: `,${JSON.stringify(WIRE.GLOBAL_STAMP)}:`,
  count: `,${JSON.stringify(WIRE.COUNT)}:`,
  entities: `,${JSON.stringify(WIRE.FIRST)}:0,${JSON.stringify(WIRE.ENTITIES)}:[`,
};

function attributeValue(f: FetchedEntity, a: ProjectedAttribute, dc: DataClassModel, ctx: SerializeContext): unknown {
  const e = f.entity;
  switch (a.kind) {
    case 'value':
      return plainValue(a.attr.kind === 'calculated' ? f.related.get(a.attr.name) : e.get(a.attr.name), a.attr, dc, e.getKey(), false);
    case 'list':
      return (f.related.get(a.attr.name) as unknown[]).map((v) => plainValue(v, a.attr, dc, e.getKey(), false));
    case 'deferred': {
      const leads = leadsTo(a.attr) as { target: DataClassModel; many: boolean };
      if (leads.many) return { [WIRE.DEFERRED]: { uri: relationUri(dc, e.getKey(), a.attr.name) } };
      // fetchRelated has checked that the target still exists
      return deferredEntity(leads.target, f.related.has(a.attr.name) ? f.related.get(a.attr.name) : relatedKeyOf(e, a.attr.name));
    }
    case 'entity': {
      const related = f.related.get(a.attr.name) as FetchedEntity | null | undefined;
      return related ? serializeEntity(related, a.sub, ctx) : null;
    }
    case 'entities': {
      const sel = f.related.get(a.attr.name) as FetchedSelection;
      return {
        [WIRE.ENTITY_SET]: relationUri(dc, e.getKey(), a.attr.name),
        [WIRE.GLOBAL_STAMP]: ctx.globalStamp,
        [WIRE.COUNT]: sel.count,
        [WIRE.FIRST]: 0,
        [WIRE.ENTITIES]: sel.entities.map((r) => serializeEntity(r, a.sub, ctx)),
        [WIRE.SENT]: sel.entities.length,
      };
    }
    default: {
      const never: never = a;
      return never;
    }
  }
}

/** An N→1 relation sent deferred: its target's URI and key, or null when there is none. */
export function deferredEntity(target: DataClassModel, key: unknown): Json | null {
  return key === null ? null : { [WIRE.DEFERRED]: { uri: entityUri(target, key), [WIRE.KEY]: String(key) } };
}

export function relationUri(dc: DataClassModel, key: unknown, attr: string): string {
  return `${entityUri(dc, key)}/${attr}?$expand=${attr}`;
}

/** A scalar-like attribute value in its wire form. */
export function plainValue(
  v: unknown, attr: StorageAttribute | AliasAttribute | CalculatedAttribute, dc: DataClassModel, key: unknown, asArray: boolean,
): unknown {
  if (v === null || v === undefined) return null;
  // An alias takes its target's form, but its URIs name the alias on this entity.
  const name = attr.name;
  const target = attr.kind === 'alias' ? attr.steps[attr.steps.length - 1] : attr;
  if (target.kind !== 'storage') return v;
  switch (target.type) {
    case 'date':
      return formatDate(v as Date, target.dateOnly, asArray);
    case 'image':
      return { [WIRE.DEFERRED]: { uri: `${entityUri(dc, key)}/${name}?$imageformat=best&$version=${String(v)}&$expand=${name}`, image: true } };
    case 'blob':
      return { [WIRE.DEFERRED]: { uri: `${entityUri(dc, key)}/${name}?$binary=true&$version=${String(v)}&$expand=${name}` } };
    default:
      return v;
  }
}

/**
 * Dates as 4D sends them: ISO 8601 with milliseconds; date-only attributes as 4D's `d!m!yyyy`
 * (`!!yyyy-mm-dd!!` in $asArray answers). See docs/decisions.md.
 */
export function formatDate(d: Date, dateOnly: boolean, asArray = false): string {
  if (!dateOnly) return d.toISOString();
  if (asArray) return `!!${d.toISOString().slice(0, 10)}!!`;
  return `${d.getUTCDate()}!${d.getUTCMonth() + 1}!${d.getUTCFullYear()}`;
}
