// The parse tree of a query string (ORDA query() / REST $filter): names as written, values as
// written, offsets into the text for error messages. Knows nothing of the model: resolve.ts does.

export const COMPARATORS = ['=', '==', '===', 'IS', '#', '!=', '!==', 'IS NOT', '<', '>', '<=', '>=', 'IN', '%', 'begin'] as const;
export type Comparator = (typeof COMPARATORS)[number];

/** One step of an attribute path: `name`, `name[]`, `name[a]` (collection element), `name{2}` (class index). */
export interface PathStep {
  readonly name: string;
  /** present for a collection step: null for `[]` (any element), a letter for a linked `[a]` */
  readonly element?: string | null;
  /** `{n}` after a relation: criteria with different indexes may match different related entities */
  readonly classIndex?: number;
}

export type PathRef =
  | { readonly kind: 'path'; readonly steps: readonly PathStep[]; readonly text: string; readonly at: number }
  /** `:n` in the place of an attribute: the n-th parameter holds the path */
  | { readonly kind: 'pathParam'; readonly index: number; readonly at: number };

export type ValueRef =
  /** text (quoted or not), a number, true/false or null, as written; typed by the resolver */
  | { readonly kind: 'literal'; readonly value: string | number | boolean | null; readonly quoted: boolean; readonly at: number }
  /** `:n`: the n-th parameter (1-based), never parsed as query text */
  | { readonly kind: 'param'; readonly index: number; readonly at: number }
  | { readonly kind: 'list'; readonly items: readonly ValueRef[]; readonly at: number };

export type QueryNode =
  | { readonly kind: 'compare'; readonly path: PathRef; readonly op: Comparator; readonly value: ValueRef; readonly at: number }
  /** n-ary: AND (also written &, &&, and) and EXCEPT (AND NOT) bind tighter than OR */
  | { readonly kind: 'and'; readonly items: readonly { readonly node: QueryNode; readonly except: boolean }[]; readonly at: number }
  | { readonly kind: 'or'; readonly items: readonly QueryNode[]; readonly at: number }
  | { readonly kind: 'not'; readonly operand: QueryNode; readonly at: number };

export interface OrderItem {
  readonly path: PathRef;
  readonly descending: boolean;
}

export interface ParsedQuery {
  readonly text: string;
  /** null when the text holds only an order by clause */
  readonly where: QueryNode | null;
  readonly orderBy: readonly OrderItem[];
}
