// What a REST request is, decided once: a typed action, one member per kind, holding only what
// that kind uses (names already resolved against what the caller may see, queries parsed).
// The planner (request.ts) builds actions, reading options through their kind's rule
// (option-rules.ts); handlers (run.ts) never look at the query string.

import type { IfMatch } from '../request/etag.js';
import type { DataClassCore, FileKind, SetOperator } from '../../datastore/index.js';
import type { ProjectMethod } from '../../functions/method-registry.js';
import type { ExposedFunction } from '../../functions/exposure.js';
import type { CallTarget } from '../../functions/call.js';
import type { RelatedEntitiesAttribute, RelatedEntityAttribute, AliasAttribute, StorageAttribute } from '../../model/types.js';
import type { OrderItem, ParsedQuery } from '../../query/ast.js';
import type { ComputeKeyword, ImageFormat } from '../request/options.js';

/** An entity named by the URL: `Company(1)`, `Company[1]` or `Company:code(A1)`. */
export type EntitySelector =
  | { readonly kind: 'key'; readonly key: string }
  | { readonly kind: 'attribute'; readonly attribute: StorageAttribute; readonly value: string };

/** A relation followed from an entity (a deferred URI): `/Company(1)/staff`. */
export interface RelationStep {
  readonly from: EntitySelector;
  readonly relation: RelatedEntityAttribute | RelatedEntitiesAttribute | AliasAttribute;
}

/** How an answer shows entities: `$attributes` (with the /a,b list of the URL), `$expand`, `$asArray`, `$format=looker`, `csv` or `ndjson` (a collection or set only). */
export interface Shape {
  readonly attributes?: readonly string[];
  readonly expand?: readonly string[];
  readonly asArray: boolean;
  /** present only for $format=looker (Looker Studio's table of values of a page), csv or ndjson (an export of every entity selected, streamed: handlers/export.ts) */
  readonly format?: 'looker' | 'csv' | 'ndjson';
}

/** A page: `$skip`, `$top` (undefined: the dataclass's default page size). */
export interface Paging {
  readonly skip: number;
  readonly top?: number;
}

/** A query on a collection: `$filter` (parsed) with its `$params`, and `$orderby` (parsed). */
export interface Narrowing {
  readonly filter?: ParsedQuery;
  readonly params: readonly unknown[];
  readonly orderBy?: readonly OrderItem[];
}

/** Where a collection's entities come from. */
export type CollectionSource =
  | { readonly kind: 'all' }
  | { readonly kind: 'related'; readonly step: RelationStep }
  | { readonly kind: 'set'; readonly set: SetRequest };

/** A stored set as a request defines it: the set (rebuilt from saved options if gone), combined with another, cleaned. */
export interface SetRequest {
  readonly id: string;
  readonly logic?: { readonly operator: SetOperator | 'INTERSECT'; readonly other: string };
  readonly clean: boolean;
  /** $savedfilter / $savedorderby: how to make the set again if it expired or was released */
  readonly saved?: { readonly filter?: ParsedQuery; readonly orderBy?: readonly OrderItem[]; readonly params: readonly unknown[] };
}

/** What a function call is: its code, what it runs on, how its answer is shown. */
export type FunctionCode =
  | { readonly kind: 'class'; readonly name: string; readonly fn: ExposedFunction; readonly target: CallTarget & { readonly kind?: 'selection' | 'dataClass' | 'entity' } }
  | { readonly kind: 'method'; readonly method: ProjectMethod };

export type FunctionSubject =
  | { readonly kind: 'datastore' }
  | { readonly kind: 'dataClass'; readonly dc: DataClassCore }
  | { readonly kind: 'entity'; readonly dc: DataClassCore; readonly selector: EntitySelector }
  /** the whole dataclass, a stored set's members, or the entities of a relation (wakanda-client's $emMethod), narrowed */
  | { readonly kind: 'selection'; readonly dc: DataClassCore; readonly set?: string; readonly related?: RelationStep; readonly narrowing: Narrowing }
  /** the one instance of a shared singleton class (/rest/$singleton/{Class}/{fn}) */
  | { readonly kind: 'singleton'; readonly name: string; readonly instance: object };

export type Action =
  | { readonly kind: 'catalog'; readonly all: boolean }
  | { readonly kind: 'catalogDataClass'; readonly dc: DataClassCore }
  | { readonly kind: 'info' }
  /** GET /rest/$openapi: the OpenAPI document of what the caller's session may use, as JSON or YAML */
  | { readonly kind: 'openapi'; readonly format: 'json' | 'yaml' }
  | { readonly kind: 'queryPath' }
  | { readonly kind: 'readCollection'; readonly dc: DataClassCore; readonly source: CollectionSource; readonly narrowing: Narrowing; readonly paging: Paging; readonly shape: Shape; readonly plan: { readonly queryplan: boolean; readonly querypath: boolean } }
  | { readonly kind: 'readEntity'; readonly dc: DataClassCore; readonly selector: EntitySelector; readonly shape: Shape }
  | { readonly kind: 'readRelation'; readonly dc: DataClassCore; readonly step: RelationStep; readonly shape: Shape }
  | { readonly kind: 'readFile'; readonly dc: DataClassCore; readonly selector: EntitySelector; readonly attribute: StorageAttribute; readonly imageFormat?: ImageFormat; readonly download: boolean; readonly headers: RequestHeaders }
  /** $method=entityset on a collection, or $method=subentityset on a relation: the whole selection stored, its first page answered */
  | { readonly kind: 'createSet'; readonly dc: DataClassCore; readonly source: CollectionSource; readonly narrowing: Narrowing; readonly paging: Paging; readonly shape: Shape; readonly timeoutS?: number }
  /** a page of a stored set (filtered, sorted, combined, cleaned: then stored anew with $method=entityset) */
  | { readonly kind: 'readSet'; readonly dc: DataClassCore; readonly set: SetRequest; readonly narrowing: Narrowing; readonly paging: Paging; readonly shape: Shape; readonly store: boolean; readonly timeoutS?: number }
  /** a set released; the attributes the URL names are checked first (a mistake keeps the set) */
  | { readonly kind: 'release'; readonly dc: DataClassCore; readonly id: string; readonly shape: Shape }
  | { readonly kind: 'releaseSets'; readonly ids: readonly string[] }
  | { readonly kind: 'update'; readonly dc: DataClassCore; readonly entities: readonly unknown[]; readonly single: boolean; readonly atomic: boolean; readonly refresh: boolean; readonly shape: Shape; readonly origin: string; /** If-Match, read (its stamp, the entity and life its tag names; '*': any), for an update of one entity */ readonly ifMatch?: IfMatch }
  | { readonly kind: 'validate'; readonly dc: DataClassCore; readonly entities: readonly unknown[]; /** the body was one object (answered as one, as an update of one is), not an array */ readonly single: boolean }
  /** ifMatch: If-Match, read, on a delete of one entity (412 when it no longer names the entity as it is) */
  | { readonly kind: 'delete'; readonly dc: DataClassCore; readonly target: { readonly kind: 'entity'; readonly selector: EntitySelector; readonly ifMatch?: IfMatch } | { readonly kind: 'filter'; readonly filter: ParsedQuery; readonly params: readonly unknown[] } }
  | { readonly kind: 'deleteSet'; readonly dc: DataClassCore; readonly id: string }
  | { readonly kind: 'compute'; readonly dc: DataClassCore; readonly source: CollectionSource; readonly narrowing: Narrowing; readonly attribute: string; readonly keyword: ComputeKeyword }
  | { readonly kind: 'distinct'; readonly dc: DataClassCore; readonly source: CollectionSource; readonly narrowing: Narrowing; readonly attribute: string; readonly paging: Paging }
  | { readonly kind: 'callFunction'; readonly code: FunctionCode; readonly subject: FunctionSubject; readonly args: readonly unknown[]; readonly viaGet: boolean; readonly answer: FunctionAnswer }
  | { readonly kind: 'upload'; readonly fileKind: FileKind; readonly timeoutS: number }
  /** a file's bytes (the request body) stored into an image or blob attribute of one entity, saved as an update */
  | { readonly kind: 'storeFile'; readonly dc: DataClassCore; readonly selector: EntitySelector; readonly attribute: StorageAttribute; readonly fileKind: FileKind; readonly shape: Shape }
  | { readonly kind: 'directory'; readonly request: DirectoryRequest }
  /** built-in users, their tokens, roles.json as a matrix: an administrator's (handlers/admin.ts) */
  | { readonly kind: 'admin'; readonly request: AdminRequest }
  /** $lock=true / $lock=false on one entity: the session's pessimistic lock taken or released */
  | { readonly kind: 'lock'; readonly dc: DataClassCore; readonly selector: EntitySelector; readonly lock: boolean }
  /** $method=watch: the changes of a query's entities, of one entity or of a set's members, as Server-Sent Events (handlers/watch.ts) */
  | { readonly kind: 'watch'; readonly dc: DataClassCore; readonly target: WatchTarget; readonly shape: Shape; /** Last-Event-ID: the stamp the client has every change up to */ readonly since?: number };

/** What a watch follows: the entities a filter selects (all, without one), one entity, or an entity set's members. */
export type WatchTarget =
  | { readonly kind: 'query'; readonly narrowing: Narrowing }
  | { readonly kind: 'entity'; readonly selector: EntitySelector }
  /** the members of a stored set (4D's sets hold the entities they were made of: none enters), narrowed by a filter */
  | { readonly kind: 'set'; readonly id: string; readonly narrowing: Narrowing };

/** What /rest/$directory/… asks (4D's legacy login, wakanda-client's directory). */
export type DirectoryRequest =
  /** credentials from the body [user, password, seconds] or the username-4D, password-4D and session-4D-length headers */
  | { readonly name: 'login'; readonly userName: string; readonly password: string; readonly idleMinutes?: number }
  | { readonly name: 'logout' }
  | { readonly name: 'currentUser' }
  | { readonly name: 'currentUserBelongsTo'; readonly group: string };

/** What /rest/$users, $tokens and $roles ask. */
export type AdminRequest =
  | { readonly op: 'listUsers' }
  | { readonly op: 'getUser'; readonly name: string }
  | { readonly op: 'addUser'; readonly body: Record<string, unknown> }
  | { readonly op: 'changeUser'; readonly name: string; readonly body: Record<string, unknown> }
  | { readonly op: 'removeUser'; readonly name: string }
  | { readonly op: 'listTokens'; readonly user?: string }
  | { readonly op: 'createToken'; readonly body: Record<string, unknown> }
  | { readonly op: 'revokeToken'; readonly id: string }
  | { readonly op: 'roles' };

export type ActionKind = Action['kind'];

/** How a function's result is answered when it is an entity or a selection. */
export interface FunctionAnswer {
  readonly paging: Paging;
  readonly shape: Shape;
  readonly store: boolean;
  readonly timeoutS?: number;
  readonly plan: { readonly queryplan: boolean; readonly querypath: boolean };
  /** $top, $skip or $method=entityset was given: refused when the result is one entity */
  readonly collectionOptions: boolean;
  /** what a selection result refuses: $method=subentityset (no relation), $compute/$distinct (no attribute in the path) */
  readonly selectionRefuses?: 'subentityset' | '$compute' | '$distinct' | 'both';
}

export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;
