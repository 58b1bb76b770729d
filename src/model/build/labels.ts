// The model's `label` pass (after the derived attributes): a dataclass may name the attribute
// that stands for one of its entities where a person reads it (`"label": "name"`), as the Data
// Explorer shows a relation's value (Company "Acme" rather than Company(1)). It must name one of
// the dataclass's own attributes holding one plain value: a storage attribute, an alias or a
// calculated attribute of a scalar type — never a relation, a picture, a blob or an object — and
// an exposed one.

import { attributeType, type DataClassModel } from '../types.js';
import { didYouMean } from '../../util/suggest.js';
import type { Draft, Fail, Mutable } from './checks.js';

const NOT_A_LABEL = new Set(['image', 'picture', 'blob', 'object']);

/** Sets each dataclass's `label` from its JSON entry; reports a label that names no fit attribute. */
export function resolveLabels(draft: Draft, dataClasses: readonly unknown[], fail: Fail): void {
  for (const dc of draft.classes as Mutable<DataClassModel>[]) {
    const index = draft.jsonIndex.get(dc);
    const raw = index === undefined ? undefined : (dataClasses[index] as { label?: unknown }).label;
    if (raw === undefined) continue;
    const path = `$.dataClasses[${index}].label`;
    if (typeof raw !== 'string' || raw === '') {
      fail(path, 'must be the name of one of the dataclass\'s attributes (a string)');
      continue;
    }
    const attr = dc.attributes.find((a) => a.name === raw);
    if (!attr) {
      fail(path, `${dc.name} has no attribute '${raw}'${didYouMean(raw, dc.attributes.map((a) => a.name))}`);
      continue;
    }
    // (the catalog names the label to every client asking for extensions: a hidden attribute's name would leak)
    if (!attr.exposed) {
      fail(path, `'${raw}' cannot label a ${dc.name}: it is not exposed ("exposed": false), so no client may read it`);
      continue;
    }
    if (attr.kind === 'relatedEntity' || attr.kind === 'relatedEntities' || NOT_A_LABEL.has(attributeType(attr))) {
      fail(path, `'${raw}' cannot label a ${dc.name}: a label is an attribute of one plain value (text, number, date…), and ${raw} is ${attr.kind === 'storage' || attr.kind === 'alias' || attr.kind === 'calculated' ? `of type ${attributeType(attr)}` : `a relation (${attr.kind})`}`);
      continue;
    }
    dc.label = raw;
  }
}
