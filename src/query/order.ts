// Resolves an order (the items of `$orderby`, of a query's `order by`, of selection.orderBy())
// into sort terms. Paths may follow N→1 relations and aliases; a calculated attribute sorts by
// the order its orderBy function gives. A 1→N path has no single value to sort by: refused.

import { MAX_CALCULATED_DEPTH, MAX_ORDER_TERMS } from '../config/limits.js';
import { DatasetError } from '../errors/dataset-error.js';
import { EVERY_ATTRIBUTE, type CalculatedAttribute, type DataClassModel, type RelatedEntityAttribute, type Visibility } from '../model/types.js';
import type { OrderItem } from './ast.js';
import { NO_CALCULATED, type CalculatedLookup } from './calculated.js';
import { parseOrderList } from './parser.js';
import { described, walkPath } from './path.js';
import type { OrderTerm } from './plan.js';

const refuse = (message: string) => new DatasetError('INVALID_ORDER_BY', message);

/** An order string ("lastName desc, employer.name") parsed and resolved. */
export function parseOrderBy(dc: DataClassModel, text: string, visible: Visibility, calculated: CalculatedLookup = NO_CALCULATED): OrderTerm[] {
  return resolveOrder(dc, parseOrderList(text), visible, calculated);
}

export function resolveOrder(dc: DataClassModel, items: readonly OrderItem[], visible: Visibility, calculated: CalculatedLookup = NO_CALCULATED, depth = 0): OrderTerm[] {
  if (items.length > MAX_ORDER_TERMS) throw tooManyTerms(items.length);
  const terms = items.flatMap((item) => sortTerms(dc, item, visible, calculated, depth));
  if (terms.length > MAX_ORDER_TERMS) throw tooManyTerms(terms.length, ' (with the orders of the calculated attributes in it)');
  return terms;
}

function tooManyTerms(count: number, how = ''): DatasetError {
  return new DatasetError('LIMIT_EXCEEDED', `the order has ${count} terms${how}; at most ${MAX_ORDER_TERMS} are sorted by`);
}

/** The terms for sorting by one item: one term, or those of a calculated attribute's orderBy function. */
function sortTerms(dc: DataClassModel, item: OrderItem, visible: Visibility, calculated: CalculatedLookup, depth: number): OrderTerm[] {
  const ref = item.path;
  if (ref.kind !== 'path' || ref.steps.some((s) => s.element !== undefined || s.classIndex !== undefined)) {
    throw refuse(`cannot sort ${dc.name} by '${ref.kind === 'path' ? ref.text : `:${ref.index}`}': sort by attribute names and N→1 relations`);
  }
  const path = ref.text;
  const { hops, end } = walkPath(dc, ref.steps, visible, (message, unknown) => (unknown ? new DatasetError('UNKNOWN_ATTRIBUTE', message) : refuse(`cannot sort ${dc.name} by ${message}`)), `in '${path}'`);
  const many = hops.find((h) => h.kind === 'many');
  if (many) throw refuse(`cannot sort ${dc.name} by '${path}': ${described(many)} (a 1→N relation has many values)`);
  const via = hops.map((h) => h.attr as RelatedEntityAttribute);
  switch (end.kind) {
    case 'storage':
      if (end.inside.length > 0 || end.attr.type === 'object' || end.attr.type === 'image' || end.attr.type === 'blob') {
        throw refuse(`cannot sort ${dc.name} by '${path}': ${end.attr.type} attributes have no order`);
      }
      return [{ path: { via, attr: end.attr }, descending: item.descending }];
    case 'calculated':
      return calculatedTerms(end.attr, via, item.descending, calculated, depth, path);
    case 'relatedEntity':
    case 'relatedEntities':
      throw refuse(`cannot sort ${dc.name} by '${path}': ${described(end)}: the path ends on a relation`);
    default: {
      const never: never = end;
      return never;
    }
  }
}

/** Sorting by a calculated attribute: the order its orderBy function returns, on its own dataclass. */
function calculatedTerms(attr: CalculatedAttribute, via: RelatedEntityAttribute[], descending: boolean, calculated: CalculatedLookup, depth: number, path: string): OrderTerm[] {
  const orderBy = calculated(attr)?.orderBy;
  if (!orderBy) throw refuse(`cannot sort by '${path}': the calculated attribute ${attr.dataClass.name}.${attr.name} has no orderBy function`);
  if (depth >= MAX_CALCULATED_DEPTH) throw refuse(`cannot sort by '${path}': calculated attributes sort by each other more than ${MAX_CALCULATED_DEPTH} levels deep (a loop?)`);
  const text = orderBy({ attributeName: attr.name, dataClassName: attr.dataClass.name, kind: 'orderBy', operator: descending ? 'desc' : 'asc', descending });
  // the function's own order is trusted code: every attribute is visible to it
  const terms = resolveOrder(attr.dataClass, parseOrderList(text), EVERY_ATTRIBUTE, calculated, depth + 1);
  return terms.map((t) => ({ ...t, path: { ...t.path, via: [...via, ...t.path.via] } }));
}
