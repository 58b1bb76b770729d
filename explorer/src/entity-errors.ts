// Which field a refused save is about. The server names it in `attributeName` when it knows it
// (notNull, unique, an attribute's validate event); older answers only say it in the message, as
// "Company.name" or 'companyCode'. What names no attribute of the form is shown above the form.

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

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function attributeOf(dc: DataClassInfo, item: ErrorItem): string | undefined {
  const names = new Set(dc.attributes.map((a) => a.name));
  if (item.attributeName && names.has(item.attributeName)) return item.attributeName;
  for (const name of names) {
    const n = escape(name);
    if (new RegExp(`\\b${escape(dc.name)}\\.${n}\\b|'${n}'|"${n}"`).test(item.message)) return name;
  }
  return undefined;
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
