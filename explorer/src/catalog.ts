// The model as $catalog describes it, and what the explorer derives from it: which attributes
// are columns, which are relations and where they lead, how to show and edit each type. The
// catalog is asked with `Prefer: extensions`, this server's additions to 4D's shape: what the
// session may do and call, what it may not read, the model's labels (docs/decisions.md).

import { REST, rest } from './api';

export interface AttributeInfo {
  readonly name: string;
  readonly kind: 'storage' | 'relatedEntity' | 'relatedEntities' | 'calculated' | 'alias' | string;
  readonly type: string;
  readonly indexed?: boolean;
  readonly identifying?: boolean;
  readonly simpleDate?: boolean;
  readonly readOnly?: boolean;
  readonly path?: string;
  /** 4D's display format ({format: "…"}): a number's or a date's (values.ts formatted) */
  readonly defaultFormat?: { readonly format: string };
}

export interface MethodInfo {
  readonly name: string;
  readonly applyTo?: 'dataClass' | 'entity' | 'entityCollection';
  readonly allowedOnHTTPGET?: boolean;
}

/** what this session may do in a dataclass (absent on servers that do not say: then everything is tried) */
export interface SessionMay {
  readonly read?: boolean;
  readonly create: boolean;
  readonly update: boolean;
  readonly drop: boolean;
  /** the dataclass's functions this session may call */
  readonly methods?: readonly string[];
  /** exposed attributes this session may not read (a login may show them) */
  readonly restricted?: readonly string[];
}

export interface DataClassInfo {
  readonly name: string;
  readonly collectionName: string;
  readonly dataURI: string;
  readonly defaultTopSize?: number;
  readonly attributes: readonly AttributeInfo[];
  readonly key: readonly { name: string }[];
  readonly methods?: readonly MethodInfo[];
  readonly sessionMay?: SessionMay;
  /** the attribute the model reads an entity by (model.json's `label`) */
  readonly label?: string;
}

export interface Catalog {
  readonly dataClasses: readonly DataClassInfo[];
  /** the datastore's own functions */
  readonly methods: readonly MethodInfo[];
  readonly singletons: readonly { name: string; methods: readonly MethodInfo[] }[];
  byName(name: string): DataClassInfo | undefined;
  /** the dataclass a relation leads to */
  target(attribute: AttributeInfo): DataClassInfo | undefined;
}

interface CatalogAnswer {
  /** $catalog/$all: each dataclass described in full */
  dataClasses?: DataClassInfo[];
  methods?: MethodInfo[];
  singletons?: { name: string; methods: MethodInfo[] }[];
  /** (Prefer: extensions) the datastore's and the singletons' functions this session may call */
  sessionMay?: { methods?: string[]; singletons?: Record<string, string[]> };
}

/** The preference that asks the catalog for this server's additions (sessionMay, label). */
const EXTENSIONS = 'extensions';

/** Only what `may` lists, when the server said (an older one does not: everything is offered). */
function callable(methods: readonly MethodInfo[] | undefined, may: readonly string[] | undefined): MethodInfo[] {
  return may === undefined ? [...(methods ?? [])] : (methods ?? []).filter((m) => may.includes(m.name));
}

/**
 * The whole catalog as this session sees it, in one request ($catalog/$all: a model of many
 * dataclasses costs one request, not one each, under a per-minute request limit too) — the
 * functions in it only those the session may call (a guest is offered none it cannot call).
 */
export async function loadCatalog(): Promise<Catalog> {
  const top = await rest<CatalogAnswer>(`${REST}/$catalog/$all`, { prefer: EXTENSIONS });
  const dataClasses = (top.dataClasses ?? []).map((d): DataClassInfo => ({ ...d, methods: callable(d.methods, d.sessionMay?.methods) }));
  const byName = new Map(dataClasses.map((d) => [d.name, d]));
  const byCollection = new Map(dataClasses.map((d) => [d.collectionName, d]));
  const singletonMay = top.sessionMay?.singletons;
  return {
    dataClasses,
    methods: callable(top.methods, top.sessionMay?.methods),
    singletons: (top.singletons ?? []).map((s) => ({ ...s, methods: callable(s.methods, top.sessionMay ? singletonMay?.[s.name] ?? [] : undefined) })).filter((s) => s.methods.length > 0),
    byName: (name) => byName.get(name),
    target: (a) => byName.get(a.type) ?? byCollection.get(a.type),
  };
}

export const isRelation = (a: AttributeInfo): boolean => a.kind === 'relatedEntity' || a.kind === 'relatedEntities';
export const isFile = (a: AttributeInfo): boolean => a.type === 'image' || a.type === 'blob' || a.type === 'picture';

/** values the server computes: never sent back in an edit */
export function isEditable(dc: DataClassInfo, a: AttributeInfo): boolean {
  if (a.readOnly || a.kind === 'alias' || a.kind === 'relatedEntities') return false;
  if (a.kind === 'calculated') return false;
  if (a.kind === 'storage' && a.name === dc.key[0]?.name) return false;
  return true;
}

/** attributes a grid may sort on: plain values */
export function isSortable(a: AttributeInfo): boolean {
  return (a.kind === 'storage' || a.kind === 'alias' || a.kind === 'calculated') && !isFile(a) && a.type !== 'object';
}

/** the label of a type in a header: `number`, `→ Company`, `→ [Employee]` */
export function typeLabel(a: AttributeInfo, catalog: Catalog): string {
  if (a.kind === 'relatedEntity') return `→ ${a.type}`;
  if (a.kind === 'relatedEntities') return `→ [${catalog.target(a)?.name ?? a.type}]`;
  if (a.type === 'date' && a.simpleDate) return 'date';
  if (a.type === 'date') return 'date & time';
  return a.type;
}

/** The session may read the dataclass (a server that does not say: it is tried). */
export const mayRead = (dc: DataClassInfo): boolean => dc.sessionMay?.read !== false;

const TEXT = new Set(['string', 'text']);
/** the catalog's number types: the integers, and those with decimals (a form's input, a CSV field, the placeholder) */
export const INTEGER_TYPES: ReadonlySet<string> = new Set(['byte', 'word', 'short', 'long', 'long64', 'integer']);
export const NUMBER_TYPES: ReadonlySet<string> = new Set([...INTEGER_TYPES, 'number', 'float']);

/**
 * The attribute an entity of `dc` is shown by where it is named (a relation's value, a key): the
 * one the model names, if this session reads it, else the first text attribute but the key.
 */
export function labelAttribute(dc: DataClassInfo): AttributeInfo | undefined {
  const key = dc.key[0]?.name;
  const named = dc.label === undefined ? undefined : dc.attributes.find((a) => a.name === dc.label);
  return named ?? dc.attributes.find((a) => a.kind === 'storage' && TEXT.has(a.type) && a.name !== key);
}

/** (a label may be a number or a date: `= a@` is a text's comparison, which the server refuses on those) */
const isTextStorage = (a: AttributeInfo | undefined): a is AttributeInfo => a?.kind === 'storage' && TEXT.has(a.type);


/**
 * A query that fits `dc`, for the query box's placeholder: one of its numbers compared, and a text
 * through one of its N→1 relations (or its own) matched with `@` ("revenues > 100 and city.name = a@").
 */
export function exampleQuery(dc: DataClassInfo, catalog: Catalog): string {
  const key = dc.key[0]?.name;
  const parts: string[] = [];
  const number = dc.attributes.find((a) => a.kind === 'storage' && NUMBER_TYPES.has(a.type) && a.name !== key && !a.name.endsWith('ID'));
  if (number) parts.push(`${number.name} > 100`);
  const relation = dc.attributes.map((a) => {
    const target = a.kind === 'relatedEntity' ? catalog.target(a) : undefined;
    const text = target && labelAttribute(target);
    return isTextStorage(text) ? `${a.name}.${text.name}` : undefined;
  }).find((p) => p !== undefined);
  const own = labelAttribute(dc);
  const text = relation ?? (isTextStorage(own) ? own.name : undefined);
  if (text) parts.push(`${text} = a@`);
  // (a UUID key compared with 0 is refused: then no example)
  const keyType = dc.attributes.find((a) => a.name === key)?.type;
  if (parts.length === 0 && key && keyType !== undefined && NUMBER_TYPES.has(keyType)) parts.push(`${key} > 0`);
  return parts.join(' and ');
}
