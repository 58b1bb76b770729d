// The resolved query plan: conditions and sort terms holding model references and coerced values,
// never names as written. Built by the resolvers of query/, compiled by sql/compiler/.

import type { AliasAttribute, DataClassModel, RelatedEntitiesAttribute, RelatedEntityAttribute, StorageAttribute } from '../model/types.js';

/** A storage attribute reached from a dataclass, possibly through N→1 relations. */
export interface AttributePath {
  readonly via: readonly RelatedEntityAttribute[];
  readonly attr: StorageAttribute;
  /** a property path inside an object attribute (extra.address.city → ['address', 'city']) */
  readonly json?: readonly string[];
  /**
   * compare by the folded text (case and accents ignored): the folded column (which holds the
   * fold's first FOLD_PREFIX_LENGTH code points), or fold() of a JSON value; 'computed': the whole
   * text's fold, computed by the query (query/folded-text.ts)
   */
  readonly fold?: boolean | 'computed';
  /** the path starts at the element of the innermost `elements` condition, not at the entity */
  readonly element?: boolean;
}

export type CompareOp = '=' | '!=' | '<' | '<=' | '>' | '>=';

export type Condition =
  | { readonly kind: 'compare'; readonly path: AttributePath; readonly op: CompareOp; readonly value: unknown }
  | { readonly kind: 'isNull'; readonly path: AttributePath; readonly negated: boolean }
  | { readonly kind: 'in'; readonly path: AttributePath; readonly values: readonly unknown[] }
  /** the path's value is one of these keys (an entity set's members), bound as one parameter */
  | { readonly kind: 'inKeys'; readonly path: AttributePath; readonly keys: ArrayLike<unknown> }
  /** SQL LIKE with '\\' as escape: 4D's @ wildcards, `%` */
  | { readonly kind: 'like'; readonly path: AttributePath; readonly pattern: string }
  /** the (folded) text starts with `prefix`: `begin`, a trailing @ (the compiler makes it a range an index serves) */
  | { readonly kind: 'prefix'; readonly path: AttributePath; readonly prefix: string }
  /** at least one element of the JSON array at `path` (an object attribute and a property path) matches `where` */
  | { readonly kind: 'elements'; readonly path: AttributePath; readonly where: Condition; readonly tag?: string }
  /** at least one entity on the N side of `relation` (reached through `via` first) matches `where` */
  | {
    readonly kind: 'exists'; readonly via: readonly RelatedEntityAttribute[]; readonly relation: RelatedEntitiesAttribute; readonly where: Condition | null;
    /** the relation path and class index: criteria of one AND with the same tag share the related entity */
    readonly tag?: string;
  }
  /** the path's value is among those a one-column sub-select returns (a slice's keys, a relation's keys) */
  | { readonly kind: 'inSelect'; readonly path: AttributePath; readonly select: SelectSpec }
  | { readonly kind: 'and' | 'or'; readonly items: readonly Condition[] }
  | { readonly kind: 'not'; readonly item: Condition };

export interface OrderTerm {
  readonly path: AttributePath;
  readonly descending: boolean;
}

/** What a SELECT reads of an entity's own row. */
export type RowColumnSpec =
  | { readonly kind: 'storage'; readonly attr: StorageAttribute }
  | { readonly kind: 'alias'; readonly attr: AliasAttribute }
  | { readonly kind: 'stamp' }
  | { readonly kind: 'timestamp' };

/** What a SELECT reads for each row. */
export type ColumnSpec =
  | RowColumnSpec
  /** the key of the entity an N→1 path leads to, null when there is none (gone, or hidden from the caller) */
  | { readonly kind: 'relatedKey'; readonly via: readonly RelatedEntityAttribute[] }
  /** a column of the entity an N→1 path leads to, through a LEFT JOIN (one per path and statement); null when there is none */
  | { readonly kind: 'joined'; readonly via: readonly RelatedEntityAttribute[]; readonly column: RowColumnSpec }
  /** how many rows the SELECT's condition matches, whatever its window (read once per statement) */
  | { readonly kind: 'total' }
  /** the datastore's global stamp, as the statement sees it */
  | { readonly kind: 'globalStamp' }
  /** the engine's data version (Dialect.concurrency.dataVersion) as the statement sees it */
  | { readonly kind: 'dataVersion' }
  /** 1 when the row meets `where`, else 0, as the column `name`: which of several queries hold a row, in one statement (reads/entities-within.ts) */
  | { readonly kind: 'meets'; readonly where: Condition; readonly name: string };

export interface SelectSpec {
  readonly dataClass: DataClassModel;
  readonly columns: readonly ColumnSpec[];
  readonly where: Condition | null;
  readonly order: readonly OrderTerm[];
  readonly limit?: number | null;
  readonly offset?: number;
  /** at most `limit` rows per value of `attr` (first rows in `order`), as for inline 1→N pages */
  readonly perGroup?: { readonly attr: StorageAttribute; readonly limit: number };
}

/**
 * A caller's row filter: the condition on `dc` its rows must meet to be seen or changed
 * (permissions' restrict), or null for every row. The compiler applies it at every FROM.
 */
export type RowFilter = (dc: DataClassModel) => Condition | null;

export function directPath(attr: StorageAttribute): AttributePath {
  return { via: [], attr };
}

/** The entities of `dc` whose `attr` is among the `column` values of the rows `select` reads. */
export function inSelect(attr: StorageAttribute, from: DataClassModel, column: StorageAttribute, where: Condition | null, rest: Partial<SelectSpec> = {}): Condition {
  return { kind: 'inSelect', path: directPath(attr), select: { dataClass: from, columns: [{ kind: 'storage', attr: column }], where, order: [], ...rest } };
}

/** The conjunction of conditions, nulls left out; nested ANDs are flattened (query().query()… chains grow one list, not a deep tree). */
export function and(...items: (Condition | null)[]): Condition | null {
  const present = items.flatMap((c) => (c === null ? [] : c.kind === 'and' ? c.items : [c]));
  if (present.length === 0) return null;
  return present.length === 1 ? present[0] : { kind: 'and', items: present };
}
