// Calculated attributes: their code (get, set, query, orderBy, as 4D's entity classes declare
// them) is registered on the dataclass. User classes register theirs when they are loaded; code
// can register one directly with dataClass.defineCalculated().

import type { Entity } from './entity.js';

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

export interface CalculatedDefinition {
  /** the value of the attribute for an entity */
  get?(entity: Entity): unknown;
  /** makes the attribute writable: applies a value to the entity's storage attributes */
  set?(entity: Entity, value: unknown): void;
  /** a query on other attributes standing for a criterion on this one ("lastName = :1"), or null for none */
  query?(event: CalculatedQueryEvent): string | { query: string; parameters?: unknown[] } | null | undefined;
  /** an order on other attributes standing for a sort on this one ("lastName desc, firstName desc") */
  orderBy?(event: CalculatedOrderByEvent): string;
}
