// The model as $catalog describes it, and what the explorer derives from it: which attributes
// are columns, which are relations and where they lead, how to show and edit each type.

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
}

export interface MethodInfo {
  readonly name: string;
  readonly applyTo?: 'dataClass' | 'entity' | 'entityCollection';
  readonly allowedOnHTTPGET?: boolean;
}

/** what this session may do in a dataclass (absent on servers that do not say: then everything is tried) */
export interface SessionMay {
  readonly create: boolean;
  readonly update: boolean;
  readonly drop: boolean;
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
  dataClasses?: { name: string }[];
  methods?: MethodInfo[];
  singletons?: { name: string; methods: MethodInfo[] }[];
}

/** The whole catalog as this session sees it: the list, then each dataclass's description. */
export async function loadCatalog(): Promise<Catalog> {
  const top = await rest<CatalogAnswer>(`${REST}/$catalog`);
  const dataClasses = await Promise.all((top.dataClasses ?? []).map((d) => rest<DataClassInfo>(`${REST}/$catalog/${encodeURIComponent(d.name)}`)));
  const byName = new Map(dataClasses.map((d) => [d.name, d]));
  const byCollection = new Map(dataClasses.map((d) => [d.collectionName, d]));
  return {
    dataClasses,
    methods: top.methods ?? [],
    singletons: top.singletons ?? [],
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
