// Parses and resolves an order string, "lastName desc, employer.name asc", into sort terms.
// Paths may follow N→1 relations and aliases; sorting by a 1→N path or a calculated attribute
// is refused with a clear error (the query-language issue extends this).

import { DatasetError } from '../errors/dataset-error.js';
import type { DataClassModel, RelatedEntityAttribute, StorageAttribute, Visibility } from '../model/types.js';
import type { OrderTerm } from '../query/plan.js';
import { didYouMean } from '../util/suggest.js';


const TERM = /^\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\s+(asc|desc))?\s*$/i;

export function parseOrderBy(dc: DataClassModel, text: string, visible: Visibility): OrderTerm[] {
  if (text.trim() === '') throw new DatasetError('INVALID_ORDER_BY', `empty order-by string for ${dc.name}`);
  let at = 0;
  return text.split(',').map((part) => {
    const m = TERM.exec(part);
    if (!m) {
      throw new DatasetError('INVALID_ORDER_BY', `cannot read the order-by string "${text}" at offset ${at}: expected an attribute path optionally followed by asc or desc, found "${part.trim()}"`);
    }
    at += part.length + 1;
    return { path: resolveSortPath(dc, m[1], visible), descending: m[2]?.toLowerCase() === 'desc' };
  });
}

/** Resolves "employer.name" to the storage attribute reached through N→1 relations. */
export function resolveSortPath(dc: DataClassModel, path: string, visible: Visibility): OrderTerm['path'] {
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
      return { via, attr };
    }
    if (attr.kind === 'alias' && last && !attr.toMany && attr.steps[attr.steps.length - 1].kind === 'storage') {
      const steps = attr.steps;
      return { via: [...via, ...(steps.slice(0, -1) as RelatedEntityAttribute[])], attr: steps[steps.length - 1] as StorageAttribute };
    }
    throw new DatasetError('INVALID_ORDER_BY', `cannot sort ${dc.name} by '${path}': '${parts[i]}' is a${attr.kind === 'alias' ? 'n' : ''} ${attr.kind} attribute${
      attr.kind === 'relatedEntities' ? ' (a 1→N relation has many values)' : attr.kind === 'calculated' ? ' (sorting by calculated attributes comes with user classes)' : ''
    }`);
  }
  throw new DatasetError('INVALID_ORDER_BY', `cannot sort ${dc.name} by '${path}': the path ends on a relation`);
}
