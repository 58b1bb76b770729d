// How one caller reaches the data: where its reads go (the storage, or one request's snapshot)
// and which rows it may see and change (a row filter: permissions' restrict). It is carried by
// the selections and entities it reads — not by a global or an async context — so everything
// derived from them (a query on a selection, a related entity, a page) stays in it.

import type { RowFilter } from '../query/plan.js';
import type { Reader } from '../storage/adapter.js';

export type { Reader };

export interface Access {
  /** reads outside a write transaction (inside one, the storage routes them to it) */
  readonly reader: Reader;
  /** the rows of each dataclass this caller may see and change; null: every row */
  readonly restrict: RowFilter | null;
}
