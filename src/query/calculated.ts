// What queries and sorts ask of a calculated attribute's code: its query function (a query on other
// attributes standing for a criterion on it) and its orderBy function (an order standing for a
// sort on it), as 4D's entity classes declare them. The code itself is registered in datastore/.

import type { CalculatedAttribute } from '../model/types.js';

/** What a calculated attribute's query function receives (4D's $event for `query`). */
export interface CalculatedQueryEvent {
  readonly attributeName: string;
  readonly dataClassName: string;
  readonly kind: 'query';
  /** 4D's operator names: ==, ===, !=, !==, <, <=, >, >=, IN, % */
  readonly operator: string;
  readonly value: unknown;
}

/** What a calculated attribute's orderBy function receives (4D's $event for `orderBy`). */
export interface CalculatedOrderByEvent {
  readonly attributeName: string;
  readonly dataClassName: string;
  readonly kind: 'orderBy';
  readonly operator: 'asc' | 'desc';
  readonly descending: boolean;
}

/** The functions of a calculated attribute that queries and sorts use. */
export interface CalculatedRules {
  /** a query on other attributes standing for a criterion on this one ("lastName = :1"), or null for none */
  query?(event: CalculatedQueryEvent): string | { query: string; parameters?: unknown[] } | null | undefined;
  /** an order on other attributes standing for a sort on this one ("lastName desc, firstName desc") */
  orderBy?(event: CalculatedOrderByEvent): string;
}

/** Finds the code of a calculated attribute (registered on its dataclass). */
export type CalculatedLookup = (attr: CalculatedAttribute) => CalculatedRules | undefined;

/** For code that knows no calculated attribute's code. */
export const NO_CALCULATED: CalculatedLookup = () => undefined;
