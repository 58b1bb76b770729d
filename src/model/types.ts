// The resolved model: dataclasses and attributes with their cross-references filled in.
// Built once from model.json by load-model.ts; read-only afterwards, shared by every layer.

import type { DatasetError } from '../errors/dataset-error.js';
import { DEFAULT_PAGE_SIZE } from '../config/limits.js';

export const STORAGE_TYPES = [
  'bool', 'blob', 'byte', 'date', 'duration', 'image', 'long', 'long64', 'number', 'string', 'uuid', 'word', 'object',
] as const;
export type StorageType = (typeof STORAGE_TYPES)[number];

export const INTEGER_TYPES: ReadonlySet<StorageType> = new Set(['byte', 'word', 'long', 'long64']);
/** Types whose values can be summed and averaged. */
export const NUMBER_TYPES: ReadonlySet<StorageType> = new Set(['byte', 'word', 'long', 'long64', 'number', 'duration']);

export type AttributeKind = 'storage' | 'relatedEntity' | 'relatedEntities' | 'alias' | 'calculated';

interface AttributeBase {
  readonly name: string;
  /** catalog `fieldPos`: 1-based position among storage attributes; a relation's is its field's; 0 = none */
  readonly fieldPos: number;
  readonly exposed: boolean;
  readonly dataClass: DataClassModel;
  readonly defaultFormat?: { format: string };
  readonly multiLine?: boolean;
  readonly extraProperties?: Record<string, unknown>;
}

export interface StorageAttribute extends AttributeBase {
  readonly kind: 'storage';
  readonly type: StorageType;
  /** SQL column name */
  readonly column: string;
  readonly identifying: boolean;
  readonly autoincrement: boolean;
  readonly autogenerate: boolean;
  readonly indexed: boolean;
  readonly unique: boolean;
  readonly dateOnly: boolean;
  /** 4D's "Mandatory": a save that leaves it null is refused (checked by the core, not the engine) */
  readonly notNull: boolean;
  /** true when the loader created it to hold a relation's key (not declared in model.json) */
  readonly implicit: boolean;
  /** model.json's `renamedFrom`: the name it had before, whose column the schema sync renames to this one (storage/schema.ts) */
  readonly renamedFrom?: string;
  /** kept by the server, written by no client and no code: `__GlobalStamp`, the attributes of `__DeletedRecords` (model/build/tracking.ts) */
  readonly serverSet?: boolean;
}

export interface RelatedEntityAttribute extends AttributeBase {
  readonly kind: 'relatedEntity';
  readonly target: DataClassModel;
  readonly foreignKey: StorageAttribute;
  /** the relatedEntities attribute of the target that points back here, if any */
  readonly inverse: RelatedEntitiesAttribute | undefined;
}

export interface RelatedEntitiesAttribute extends AttributeBase {
  readonly kind: 'relatedEntities';
  readonly target: DataClassModel;
  /** the relatedEntity attribute of the target whose foreign key selects our entities */
  readonly inverse: RelatedEntityAttribute;
  /** 4D's delete control: what dropping one of our entities does to its related ones (writes/delete-rules.ts) */
  readonly deleteRule: DeleteRule;
}

/**
 * 4D's delete controls on a 1→N relation (model.json's `deleteRule`): `leave` the related entities
 * as they are (their relation then reads null), `cascade` (drop them with it, through the core:
 * their events and rules run), or `refuse` the drop while one exists.
 */
export const DELETE_RULES = ['leave', 'cascade', 'refuse'] as const;
export type DeleteRule = (typeof DELETE_RULES)[number];

export interface AliasAttribute extends AttributeBase {
  readonly kind: 'alias';
  readonly path: string;
  /** every attribute along the path, the last one being the target */
  readonly steps: readonly AttributeModel[];
  /** catalog type: the target's type, or `<Class>` / `<Class>Selection` for relation targets */
  readonly type: string;
  /** true when some step is a relatedEntities: the value is then a list */
  readonly toMany: boolean;
}

export interface CalculatedAttribute extends AttributeBase {
  readonly kind: 'calculated';
  readonly type: string;
}

export type AttributeModel =
  | StorageAttribute
  | RelatedEntityAttribute
  | RelatedEntitiesAttribute
  | AliasAttribute
  | CalculatedAttribute;

export interface DataClassModel {
  readonly name: string;
  readonly className: string;
  readonly collectionName: string;
  /** 1-based position in the model (catalog `tableNumber`) */
  readonly tableNumber: number;
  /** SQL table name */
  readonly table: string;
  readonly defaultTopSize: number | undefined;
  readonly exposed: boolean;
  readonly extraProperties: Record<string, unknown>;
  readonly attributes: readonly AttributeModel[];
  readonly attributesByName: ReadonlyMap<string, AttributeModel>;
  readonly key: StorageAttribute;
  readonly storage: readonly StorageAttribute[];
  /** model.json's `renamedFrom`: the name it had before, whose table the schema sync renames to this one (storage/schema.ts) */
  readonly renamedFrom?: string;
  /** 4D's data change tracking (`trackChanges`): the `__GlobalStamp` attribute every create and update stamps (model/build/tracking.ts) */
  readonly globalStamp?: StorageAttribute;
  /** `__DeletedRecords`, the server's own record of the drops of tracked dataclasses: read-only to clients and code */
  readonly system?: boolean;
  /** model.json's `label`: the attribute a person reads an entity by (a relation's value in the Data Explorer); checked in model/build/labels.ts */
  readonly label?: string;
}

export interface Model {
  readonly name: string;
  readonly dataClasses: readonly DataClassModel[];
  readonly dataClassesByName: ReadonlyMap<string, DataClassModel>;
  /** the `__DeletedRecords` dataclass, when a dataclass tracks its changes */
  readonly deletedRecords?: DataClassModel;
  /** model.json's `deletedRecordsRetention`: how long `__DeletedRecords` keeps a drop (by default, for ever) */
  readonly deletedRecordsRetention?: DeletedRecordsRetention;
}

/** Keeps the drops of the last `days` days, or of the last `stamps` global stamps (a sync further behind starts again). */
export interface DeletedRecordsRetention {
  readonly days?: number;
  readonly stamps?: number;
}

/** The names 4D gives the change tracking's attributes and dataclass (ORDA/global-stamp.md). */
export const TRACKING = {
  GLOBAL_STAMP: '__GlobalStamp',
  DELETED_RECORDS: '__DeletedRecords',
  PRIMARY_KEY: '__PrimaryKey',
  STAMP: '__Stamp',
  TABLE_NAME: '__TableName',
  TABLE_NUMBER: '__TableNumber',
} as const;

/**
 * Is the attribute reachable through REST: itself and its dataclass exposed, and so is every
 * step of a path and every dataclass it leads to. A 1→N relation also needs its inverse exposed
 * (its catalog entry names it).
 */
export function isExposed(attr: AttributeModel): boolean {
  if (!attr.exposed || !attr.dataClass.exposed) return false;
  switch (attr.kind) {
    case 'relatedEntity':
      return attr.target.exposed;
    case 'relatedEntities':
      return attr.target.exposed && attr.inverse.exposed;
    case 'alias':
      return attr.steps.every((s) => s.exposed && s.dataClass.exposed && (s.kind !== 'relatedEntity' && s.kind !== 'relatedEntities' ? true : s.target.exposed));
    default:
      return true;
  }
}

/**
 * Which attributes a caller may see: every one for the server's own code, the exposed ones for
 * REST, those its session may read. `denied` tells an attribute the caller knows of but may not
 * read (a permission) from one that is not there for it: a query or sort naming the first is
 * refused with that error, not "unknown attribute"; answers leave it out either way.
 */
export type Visibility = ((attr: AttributeModel) => boolean) & { readonly denied?: (attr: AttributeModel) => DatasetError | undefined };

/** What user code (and the model's own functions) sees: every attribute. */
export const EVERY_ATTRIBUTE: Visibility = () => true;

/** Catalog type of an attribute (`long`, `Company`, `EmployeeSelection` …). */
export function attributeType(attr: AttributeModel): string {
  switch (attr.kind) {
    case 'storage':
      return attr.type;
    case 'relatedEntity':
      return attr.target.name;
    case 'relatedEntities':
      return attr.target.collectionName;
    case 'alias':
    case 'calculated':
      return attr.type;
    default: {
      const never: never = attr;
      return never;
    }
  }
}

/** Default page size of a dataclass: its defaultTopSize (4D's "Default Top Size"), else 100. */
export function pageSize(dc: DataClassModel): number {
  return dc.defaultTopSize ?? DEFAULT_PAGE_SIZE;
}
