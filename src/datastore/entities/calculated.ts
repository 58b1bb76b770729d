// Calculated attributes: their code (get, set, query, orderBy, as 4D's entity classes declare
// them) is registered on the dataclass. User classes register theirs when they are loaded; code
// can register one directly with dataClass.defineCalculated().

import type { CalculatedRules } from '../../query/calculated.js';
import type { Entity } from './entity.js';

export type { CalculatedOrderByEvent, CalculatedQueryEvent } from '../../query/calculated.js';

export interface CalculatedDefinition extends CalculatedRules {
  /** the value of the attribute for an entity */
  get?(entity: Entity): unknown;
  /** makes the attribute writable: applies a value to the entity's storage attributes */
  set?(entity: Entity, value: unknown): void;
}
