// Query parameters that are not options but plainly meant one. A parameter without '$' is not an
// option and is ignored (cache-busters such as _=123), except where ignoring it would answer every
// entity to a client that asked for a few: one of our option names without its '$' (filter=…),
// another API's name for one of ours (PostgREST's select, order, limit, offset; PocketBase's sort,
// fields, page, perPage; OData's $select…), or, on a dataclass, an attribute's name
// (?lastName=Smith, which other APIs read as a filter). Each gets a 400 that shows ours.

import { DatasetError } from '../../errors/dataset-error.js';
import type { DataClassModel, Visibility } from '../../model/types.js';

/** What another API, or ours without its '$', calls an option: the option meant, and how its value reads there. */
interface Meant {
  readonly option: string;
  /** the value written as our option takes it (`lastName.desc` → `"lastName desc"`) */
  readonly rewrite?: (value: string) => string;
  readonly note?: string;
  /** the note is the whole hint: the value is not the option's (a page number is no $skip) */
  readonly noteOnly?: boolean;
}

/** PostgREST's `a.desc,b` and PocketBase's `-a,+b` as an $orderby list. */
function orderList(value: string): string {
  const items = value.split(',').map((item) => {
    const t = item.trim();
    if (t.startsWith('-')) return `${t.slice(1)} desc`;
    if (t.startsWith('+')) return t.slice(1);
    const dot = /^(.*)\.(asc|desc)(\.nulls(first|last))?$/i.exec(t);
    return dot ? `${dot[1]}${dot[2].toLowerCase() === 'desc' ? ' desc' : ''}` : t;
  });
  return `"${items.join(', ')}"`;
}

const PAGES = 'pages are read with $skip and $top: page 3 of 50 is $skip=100&$top=50';
const PAGE: Meant = { option: '$skip', note: PAGES, noteOnly: true };

/** Names without '$' (compared in lower case). */
const PLAIN: Readonly<Record<string, Meant>> = {
  filter: { option: '$filter' },
  where: { option: '$filter' },
  orderby: { option: '$orderby' },
  order: { option: '$orderby', rewrite: orderList },
  sort: { option: '$orderby', rewrite: orderList },
  top: { option: '$top' },
  limit: { option: '$top', note: "4D's $limit is the same" },
  skip: { option: '$skip' },
  offset: { option: '$skip' },
  attributes: { option: '$attributes' },
  select: { option: '$attributes' },
  fields: { option: '$attributes' },
  expand: { option: '$expand' },
  params: { option: '$params' },
  compute: { option: '$compute' },
  distinct: { option: '$distinct' },
  page: PAGE,
  perpage: PAGE,
  per_page: PAGE,
  pagesize: PAGE,
  page_size: PAGE,
};

/** Other APIs' $-names (OData, Mongo-like APIs), compared in lower case. */
const DOLLAR: Readonly<Record<string, Meant>> = {
  $select: { option: '$attributes' },
  $fields: { option: '$attributes' },
  $sort: { option: '$orderby', rewrite: orderList },
  $order: { option: '$orderby', rewrite: orderList },
  $where: { option: '$filter' },
  $offset: { option: '$skip' },
  $page: PAGE,
};

/** A table's own entry (never the prototype's: ?constructor=…, ?__proto__=…). */
function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

function shown(value: string): string {
  return value.length > 60 ? `${value.slice(0, 60)}…` : value;
}

function suggestion(meant: Meant, value: string | undefined): string {
  if (meant.noteOnly) return meant.note as string;
  const v = value === undefined || value === '' ? '…' : meant.rewrite ? meant.rewrite(value) : shown(value);
  return `${meant.option}=${v}${meant.note ? ` (${meant.note})` : ''}`;
}

/** A plain parameter (no '$') that names an option of ours or another API's: the error that shows ours, else undefined (it is ignored). */
export function strayOption(name: string, value: string | undefined): DatasetError | undefined {
  const meant = own(PLAIN, name.toLowerCase());
  if (!meant) return undefined;
  return new DatasetError('UNKNOWN_OPTION', `'${name}' is not an option of this API (options begin with '$'): ${meant.noteOnly ? '' : 'write '}${suggestion(meant, value)}`);
}

/** For an unknown $-option that another API names so: " (this API's is $attributes=…)", else "". */
export function otherApiHint(name: string, value: string | undefined): string {
  const meant = own(DOLLAR, name.toLowerCase());
  return meant ? `: ${meant.noteOnly ? '' : "this API's is "}${suggestion(meant, value)}` : '';
}

/** PostgREST's operators written before a value (lastName=eq.Smith), as comparators. */
const POSTGREST_OPS: Readonly<Record<string, string>> = { eq: '=', neq: '!=', gt: '>', gte: '>=', lt: '<', lte: '<=', like: '=', ilike: '=' };

function criterion(name: string, value: string): string {
  const op = /^([a-z]+)\.(.*)$/s.exec(value);
  const known = op ? own(POSTGREST_OPS, op[1]) : undefined;
  const comparator = known ?? '=';
  let v = op && known ? op[2] : value;
  if (op && (op[1] === 'like' || op[1] === 'ilike')) v = v.replace(/\*/g, '@');
  const quoted = v === '' || /^['"]|\s(and|or|except)\s|[&|()]/i.test(v) ? `'${v.replace(/[\\']/g, (c) => `\\${c}`)}'` : v;
  return `${name} ${comparator} ${shown(quoted)}`;
}

/**
 * The plain parameters of a dataclass request's query string that name an attribute the caller
 * sees (a path's first step: employer.name=acme): a 400 whose message writes them as a $filter.
 */
export function strayAttributeFilter(query: string, dc: DataClassModel, visible: Visibility): DatasetError | undefined {
  if (query === '') return undefined;
  const criteria: string[] = [];
  const names: string[] = [];
  for (const part of query.split('&')) {
    if (part === '' || part[0] === '$' || part.startsWith('%24')) continue;
    const eq = part.indexOf('=');
    const name = decoded(eq < 0 ? part : part.slice(0, eq));
    if (name === undefined) continue;
    const attr = dc.attributesByName.get(name.split('.')[0]);
    if (!attr || !visible(attr)) continue;
    names.push(name);
    criteria.push(criterion(name, decoded(eq < 0 ? '' : part.slice(eq + 1)) ?? ''));
  }
  if (names.length === 0) return undefined;
  const which = names.length === 1 ? `'${names[0]}' is an attribute of ${dc.name}` : `${names.map((n) => `'${n}'`).join(', ')} are attributes of ${dc.name}`;
  return new DatasetError('UNKNOWN_OPTION', `${which}, not ${names.length === 1 ? 'an option' : 'options'}: to select entities by ${names.length === 1 ? 'it' : 'them'}, write $filter="${criteria.join(' and ')}"`);
}

function decoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}
