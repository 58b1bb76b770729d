// What the side panels of a collection view are given: the collection as the grid shows it.

import type { Catalog, DataClassInfo } from './catalog';

export interface CollectionContext {
  readonly catalog: Catalog;
  readonly dc: DataClassInfo;
  /** the collection's URL (a dataclass, a relation's entities, an entity set) */
  readonly base: string;
  /** the query the grid applies ('' for none) */
  readonly filter: string;
  /** the grid's sort as $orderby text ('' for none) */
  readonly orderBy: string;
}
