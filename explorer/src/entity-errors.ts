// Which field a refused save is about: the one the server names in `attributeName` (notNull,
// unique, a wrong value, an attribute's validate event). Messages are not searched for names: a
// message may quote another dataclass's attribute (a relation's key). What names no attribute of
// the form is shown above the form.

import type { ErrorItem } from './api';
import type { DataClassInfo } from './catalog';

export interface PlacedErrors {
  /** messages by attribute name */
  readonly fields: Readonly<Record<string, string[]>>;
  /** messages about the entity as a whole */
  readonly general: readonly string[];
}

/** 4D's follow-ups of a refused save ("cannot save record …"): they add nothing next to a field */
const FOLLOW_UPS = new Set([1046, 1517]);

export function attributeOf(dc: DataClassInfo, item: ErrorItem): string | undefined {
  const name = item.attributeName;
  return name !== undefined && dc.attributes.some((a) => a.name === name) ? name : undefined;
}

export function placeErrors(dc: DataClassInfo, items: readonly ErrorItem[]): PlacedErrors {
  const fields: Record<string, string[]> = {};
  const general: string[] = [];
  for (const item of items) {
    const name = attributeOf(dc, item);
    if (name) (fields[name] ??= []).push(item.message);
    else if (!FOLLOW_UPS.has(item.errCode) || items.length === 1) general.push(item.message);
  }
  return { fields, general };
}
