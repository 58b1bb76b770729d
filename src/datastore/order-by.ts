// Parses and resolves an order string, "lastName desc, employer.name asc", into sort terms.
// Paths may follow N→1 relations and aliases; a calculated attribute sorts by the order its
// orderBy function gives. A 1→N path has no single value to sort by: refused with a clear error.

import { DatasetError } from '../errors/dataset-error.js';
import type { CalculatedAttribute, DataClassModel, RelatedEntityAttribute, StorageAttribute, Visibility } from '../model/types.js';
import type { OrderTerm } from '../query/plan.js';
import { didYouMean } from '../util/suggest.js';
import type { CalculatedDefinition } from './calculated.js';

/** Finds the code of a calculated attribute (registered on its dataclass). */
export type CalculatedLookup = (attr: CalculatedAttribute) => CalculatedDefinition | undefined;

const TERM = /^\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\s+(asc|desc))?\s*$/i;
/** How deep calculated attributes may sort by other calculated attributes. */
const MAX_CALCULATED_DEPTH = 8;

export function parseOrderBy(dc: DataClassModel, text: string, visible: Visibility, calculated: CalculatedLookup = () => undefined, depth = 0): OrderTerm[] {
  if (text.trim() === '') throw new DatasetError('INVALID_ORDER_BY', `empty order-by string for ${dc.name}`);
  let at = 0;
  return text.split(',').flatMap((part) => {
    const m = TERM.exec(part);
    if (!m) {
      throw new DatasetError('INVALID_ORDER_BY', `cannot read the order-by string "${text}" at offset ${at}: expected an attribute path optionally followed by asc or desc, found "${part.trim()}"`);
    }
    at += part.length + 1;
    return sortTerms(dc, m[1], m[2]?.toLowerCase() === 'desc', visible, calculated, depth);
  });
}

/** The terms for sorting by one path: one term, or those of a calculated attribute's orderBy function. */
export function sortTerms(dc: DataClassModel, path: string, descending: boolean, visible: Visibility, calculated: CalculatedLookup, depth = 0): OrderTerm[] {
  const via: RelatedEntityAttribute[] = [];
  let cls = dc;
  const parts = path.split('.');
  for (let i = 0; i < parts.length; i++) {
    const attr = cls.attributesByName.get(parts[i]);
    if (!attr || !visible(attr)) {
      const names = cls.attributes.filter(visible).map((a) => a.name);
      throw new DatasetError('UNKNOWN_ATTRIBUTE', `The "${parts[i]}" attribute cannot be found in the "${cls.name}" dataclass (in the order-by path '${path}')${didYouMean(parts[i], names)}`);
    }
    const last = i === parts.length - 1;
    if (attr.kind === 'relatedEntity' && !last) {
      via.push(attr);
      cls = attr.target;
      continue;
    }
    if (attr.kind === 'storage' && last) {
      if (attr.type === 'object' || attr.type === 'image' || attr.type === 'blob') {
        throw new DatasetError('INVALID_ORDER_BY', `cannot sort ${dc.name} by '${path}': ${attr.type} attributes have no order`);
      }
      return [{ path: { via, attr }, descending }];
    }
    if (attr.kind === 'alias' && last && !attr.toMany && attr.steps[attr.steps.length - 1].kind === 'storage') {
      const steps = attr.steps;
      return [{ path: { via: [...via, ...(steps.slice(0, -1) as RelatedEntityAttribute[])], attr: steps[steps.length - 1] as StorageAttribute }, descending }];
    }
    if (attr.kind === 'calculated' && last) return calculatedTerms(attr, via, descending, visible, calculated, depth, path);
    throw new DatasetError('INVALID_ORDER_BY', `cannot sort ${dc.name} by '${path}': '${parts[i]}' is a${attr.kind === 'alias' ? 'n' : ''} ${attr.kind} attribute${
      attr.kind === 'relatedEntities' ? ' (a 1→N relation has many values)' : ''
    }`);
  }
  throw new DatasetError('INVALID_ORDER_BY', `cannot sort ${dc.name} by '${path}': the path ends on a relation`);
}

/** Sorting by a calculated attribute: the order its orderBy function returns, on its own dataclass. */
function calculatedTerms(
  attr: CalculatedAttribute, via: RelatedEntityAttribute[], descending: boolean, visible: Visibility, calculated: CalculatedLookup, depth: number, path: string,
): OrderTerm[] {
  const orderBy = calculated(attr)?.orderBy;
  if (!orderBy) throw new DatasetError('INVALID_ORDER_BY', `cannot sort by '${path}': the calculated attribute ${attr.dataClass.name}.${attr.name} has no orderBy function`);
  if (depth >= MAX_CALCULATED_DEPTH) throw new DatasetError('INVALID_ORDER_BY', `cannot sort by '${path}': calculated attributes sort by each other more than ${MAX_CALCULATED_DEPTH} levels deep (a loop?)`);
  const text = orderBy({ attributeName: attr.name, dataClassName: attr.dataClass.name, kind: 'orderBy', operator: descending ? 'desc' : 'asc', descending });
  // the function's own order is trusted code: every attribute is visible to it
  return parseOrderBy(attr.dataClass, text, () => true, calculated, depth + 1).map((t) => ({ ...t, path: { ...t.path, via: [...via, ...t.path.via] } }));
}
