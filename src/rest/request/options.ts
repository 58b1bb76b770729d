// Reads the query string into typed $-options. Values may be wrapped in double (or single)
// quotes (`$filter="…"`, `$params='[…]'`), '+' stands for a space, and every value is checked
// here so that handlers only see well-formed options.

import { MAX_PAGE_SIZE, MAX_TIMEOUT_S } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { didYouMean } from '../../util/suggest.js';
import type { AggregateFn } from '../../sql/compiler/aggregates.js';
import { OPTIONS, type OptionName } from './constants.js';
import { otherApiHint, strayOption } from './stray-parameters.js';
import { ATTRIBUTE_PATH } from './url.js';

export const METHODS = ['update', 'delete', 'entityset', 'release', 'subentityset', 'validate', 'watch'] as const;
/** $compute: one aggregate, or `$all` of them. */
export type ComputeKeyword = AggregateFn | '$all';
const COMPUTE_KEYWORDS: readonly ComputeKeyword[] = ['$all', 'count', 'sum', 'average', 'min', 'max'];
export type RestMethod = (typeof METHODS)[number];

export interface RestOptions {
  readonly top?: number;
  readonly skip: number;
  readonly attributes?: readonly string[];
  readonly expand?: readonly string[];
  readonly asArray: boolean;
  readonly orderby?: string;
  readonly method?: RestMethod;
  readonly filter?: string;
  /** values of the :1, :2 … placeholders of $filter */
  readonly params: readonly unknown[];
  readonly queryplan: boolean;
  readonly querypath: boolean;
  /** $atomic / $atOnce: a batch saves all or nothing */
  readonly atomic: boolean;
  /** $refresh with $method=update: answer the entity with the values applied, without saving */
  readonly refresh: boolean;
  readonly compute?: ComputeKeyword;
  readonly distinct: boolean;
  /** seconds an entity set lives without being used */
  readonly timeout?: number;
  /** $logicOperator (or $operator) with $otherCollection: set algebra between two entity sets */
  readonly logic?: { readonly operator: 'AND' | 'OR' | 'EXCEPT' | 'INTERSECT'; readonly other: string };
  /** $savedfilter / $savedorderby: rebuild an expired or released set from them */
  readonly savedFilter?: string;
  readonly savedOrderby?: string;
  /** the order of a $method=subentityset */
  readonly subOrderby?: string;
  /** $clean=true with $method=entityset: a copy of a set without its dropped members */
  readonly clean: boolean;
  /** $emMethod with $method=subentityset: the selection function called on a relation's entities (wakanda-client) */
  readonly emMethod?: string;
  /** $rawPict=true (or the image's MIME type, as wakanda-client sends it): an upload of an image; $binary=true: an upload of any file, or a blob read as a download */
  readonly rawPict: boolean;
  readonly binary: boolean;
  /** $imageformat: the format an image is sent in (best: as stored) */
  readonly imageFormat?: ImageFormat;
  /** $version: a picture's version, sent back by clients to defeat caches (read, never checked) */
  readonly version?: string;
  /** $lock=true / $lock=false: lock or unlock one entity for the session (undefined: not given) */
  readonly lock?: boolean;
  /** $format: json (4D's own shape, the default), looker (the Looker Studio connector's), or csv / ndjson (an export of every entity selected, streamed) */
  readonly format: OutputFormat;
  /** the options the query string gave, by the name it gave them */
  readonly given: ReadonlySet<OptionName>;
}

/** The field of RestOptions each option sets (several names set one field: $top and $limit …); options not built yet set none. */
const FIELD: Record<OptionName, Field | undefined> = {
  $top: 'top', $limit: 'top', $skip: 'skip', $attributes: 'attributes', $expand: 'expand', $asArray: 'asArray', $orderby: 'orderby',
  $method: 'method', $filter: 'filter', $params: 'params', $queryplan: 'queryplan', $querypath: 'querypath', $timeout: 'timeout',
  $savedfilter: 'savedFilter', $savedorderby: 'savedOrderby', $compute: 'compute', $distinct: 'distinct', $logicOperator: 'logic',
  $operator: 'logic', $otherCollection: 'logic', $subOrderby: 'subOrderby', $atomic: 'atomic', $atOnce: 'atomic', $atonce: 'atomic',
  $refresh: 'refresh', $rawPict: 'rawPict', $binary: 'binary', $imageformat: 'imageFormat', $version: 'version', $lock: 'lock', $format: 'format',
  $clean: 'clean', $emMethod: 'emMethod',
};

type Field = Exclude<keyof RestOptions, 'given'>;

/** The options of a query string that gives none (shared: most reads give none). */
const NO_OPTIONS: RestOptions = Object.freeze({
  top: undefined, skip: 0, attributes: undefined, expand: undefined, asArray: false, orderby: undefined, method: undefined,
  filter: undefined, params: Object.freeze([]), queryplan: false, querypath: false, atomic: false, refresh: false, compute: undefined,
  distinct: false, timeout: undefined, logic: undefined, savedFilter: undefined, savedOrderby: undefined, subOrderby: undefined,
  emMethod: undefined, clean: false, rawPict: false, binary: false, imageFormat: undefined, version: undefined, lock: undefined, format: 'json', given: new Set<OptionName>(),
});

/** Per rule (an option list), which fields of RestOptions it reads: computed once per rule. */
const masks = new WeakMap<readonly OptionName[], Record<Field, boolean>>();

function maskOf(uses: readonly OptionName[]): Record<Field, boolean> {
  let mask = masks.get(uses);
  if (!mask) {
    mask = Object.fromEntries(Object.keys(NO_OPTIONS).filter((k) => k !== 'given').map((k) => [k, false])) as Record<Field, boolean>;
    for (const name of uses) {
      const field = FIELD[name];
      if (field) mask[field] = true;
    }
    masks.set(uses, mask);
  }
  return mask;
}

/**
 * The options as one kind of request reads them: those `uses` names, the others as if not given
 * (so that a kind can only act on the options its rule lists). One object of one shape: this runs
 * for every request.
 */
export function pick(o: RestOptions, uses: readonly OptionName[]): RestOptions {
  if (o === NO_OPTIONS) return o;
  const m = maskOf(uses);
  const d = NO_OPTIONS;
  return {
    top: m.top ? o.top : d.top,
    skip: m.skip ? o.skip : d.skip,
    attributes: m.attributes ? o.attributes : d.attributes,
    expand: m.expand ? o.expand : d.expand,
    asArray: m.asArray ? o.asArray : d.asArray,
    orderby: m.orderby ? o.orderby : d.orderby,
    method: m.method ? o.method : d.method,
    filter: m.filter ? o.filter : d.filter,
    params: m.params ? o.params : d.params,
    queryplan: m.queryplan ? o.queryplan : d.queryplan,
    querypath: m.querypath ? o.querypath : d.querypath,
    atomic: m.atomic ? o.atomic : d.atomic,
    refresh: m.refresh ? o.refresh : d.refresh,
    compute: m.compute ? o.compute : d.compute,
    distinct: m.distinct ? o.distinct : d.distinct,
    timeout: m.timeout ? o.timeout : d.timeout,
    logic: m.logic ? o.logic : d.logic,
    savedFilter: m.savedFilter ? o.savedFilter : d.savedFilter,
    savedOrderby: m.savedOrderby ? o.savedOrderby : d.savedOrderby,
    subOrderby: m.subOrderby ? o.subOrderby : d.subOrderby,
    emMethod: m.emMethod ? o.emMethod : d.emMethod,
    clean: m.clean ? o.clean : d.clean,
    rawPict: m.rawPict ? o.rawPict : d.rawPict,
    binary: m.binary ? o.binary : d.binary,
    imageFormat: m.imageFormat ? o.imageFormat : d.imageFormat,
    version: m.version ? o.version : d.version,
    lock: m.lock ? o.lock : d.lock,
    format: m.format ? o.format : d.format,
    given: o.given,
  };
}

const OUTPUT_FORMATS = ['json', 'looker', 'csv', 'ndjson'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** $format, any case (reference §3.11). */
function outputFormat(v: string | undefined): OutputFormat {
  if (v === undefined) return 'json';
  const f = v.trim().toLowerCase();
  if (!(OUTPUT_FORMATS as readonly string[]).includes(f)) throw new DatasetError('INVALID_OPTION', `$format must be json or looker; got '${v}'${didYouMean(f, OUTPUT_FORMATS)} (or csv, ndjson: an export of every entity selected)`);
  return f as OutputFormat;
}

const IMAGE_FORMATS = ['best', 'png', 'jpeg', 'gif', 'tiff'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

/** The URL parameter of a one-time passcode that resumes a session (4D's $4DSID). */
export const PASSCODE_PARAMETER = '$4DSID';

/** Parses the raw query string (without '?'); throws a DatasetError for any bad option. */
export function parseOptions(query: string, maxPageSize = MAX_PAGE_SIZE): RestOptions {
  if (query === '') return NO_OPTIONS;
  const raw = new Map<OptionName, string>();
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decode(eq < 0 ? part : part.slice(0, eq), part);
    // Parameters without '$' are not ours (cache busters such as _=123): ignored, but for the
    // names of an option (ours without '$', or another API's: stray-parameters.ts). $4DSID, a
    // one-time passcode, is the session's: read before the request is (rest/session-http.ts).
    if (!name.startsWith('$')) {
      const stray = strayOption(name, eq < 0 ? undefined : decode(part.slice(eq + 1), part));
      if (stray) throw stray;
      continue;
    }
    if (name === PASSCODE_PARAMETER) continue;
    if (!(name in OPTIONS)) {
      const value = eq < 0 ? undefined : unquote(decode(part.slice(eq + 1), part));
      throw new DatasetError('UNKNOWN_OPTION', `unknown option '${name}'${otherApiHint(name, value) || didYouMean(name, Object.keys(OPTIONS))}`);
    }
    const option = name as OptionName;
    if (raw.has(option)) throw new DatasetError('INVALID_OPTION', `the option ${name} is given twice`);
    raw.set(option, unquote(eq < 0 ? '' : decode(part.slice(eq + 1), part)));
  }
  for (const name of raw.keys()) {
    if (!OPTIONS[name]) throw new DatasetError('OPTION_NOT_SUPPORTED', `the option ${name} is not supported by this version of the server yet`);
  }
  if (raw.has('$top') && raw.has('$limit')) throw new DatasetError('INVALID_OPTION', '$top and $limit are the same option: give one of them');
  const top = raw.get('$top') ?? raw.get('$limit');
  const method = raw.get('$method');
  if (method !== undefined && !METHODS.includes(method as RestMethod)) {
    throw new DatasetError('INVALID_OPTION', `'${method}' is not a value of $method${didYouMean(method, METHODS)} (one of ${METHODS.join(', ')})`);
  }
  const orderby = raw.get('$orderby');
  if (orderby !== undefined && orderby.trim() === '') throw new DatasetError('INVALID_OPTION', '$orderby is empty: give attribute paths, like $orderby="lastName desc"');
  const format = outputFormat(raw.get('$format'));
  return {
    // (an export streams any number: its $top is no page size)
    top: top === undefined ? undefined : count(raw.has('$top') ? '$top' : '$limit', top, format === 'csv' || format === 'ndjson' ? Number.MAX_SAFE_INTEGER : maxPageSize),
    skip: raw.has('$skip') ? count('$skip', raw.get('$skip') as string, Number.MAX_SAFE_INTEGER) : 0,
    attributes: list('$attributes', raw.get('$attributes')),
    expand: list('$expand', raw.get('$expand')),
    asArray: bool('$asArray', raw.get('$asArray')),
    orderby,
    method: method as RestMethod | undefined,
    filter: filter(raw.get('$filter')),
    params: params(raw.get('$params')),
    queryplan: bool('$queryplan', raw.get('$queryplan')),
    querypath: bool('$querypath', raw.get('$querypath')),
    atomic: bool('$atomic', raw.get('$atomic')) || bool('$atOnce', raw.get('$atOnce')) || bool('$atonce', raw.get('$atonce')),
    refresh: bool('$refresh', raw.get('$refresh')),
    compute: computeKeyword(raw.get('$compute')),
    distinct: bool('$distinct', raw.get('$distinct')),
    timeout: raw.has('$timeout') ? positive('$timeout', raw.get('$timeout') as string) : undefined,
    logic: logic(raw.get('$logicOperator') ?? raw.get('$operator'), raw.get('$otherCollection')),
    savedFilter: nonEmpty('$savedfilter', raw.get('$savedfilter')),
    savedOrderby: nonEmpty('$savedorderby', raw.get('$savedorderby')),
    subOrderby: nonEmpty('$subOrderby', raw.get('$subOrderby')),
    emMethod: functionName('$emMethod', raw.get('$emMethod')),
    clean: bool('$clean', raw.get('$clean')),
    rawPict: rawPict(raw.get('$rawPict')),
    binary: bool('$binary', raw.get('$binary')),
    imageFormat: imageFormat(raw.get('$imageformat')),
    version: raw.get('$version'),
    lock: lockValue(raw.get('$lock')),
    format,
    given: new Set(raw.keys()),
  };
}

/**
 * Whether a query string gives $rawPict or $binary a true value, read as parseOptions reads it
 * (names and values percent-decoded, values unquoted): with POST, such a request is an upload and
 * its body goes raw to the upload's handler (the route constraint in plugin.ts). A value that is
 * not valid counts as given: the request's planning then answers the option's error.
 */
export function givesUpload(query: string): boolean {
  // (most query strings hold neither name, written or percent-encoded)
  if (!query.includes('rawPict') && !query.includes('binary') && !query.includes('%')) return false;
  for (const part of query.split('&')) {
    const eq = part.indexOf('=');
    let name: string;
    try {
      name = decode(eq < 0 ? part : part.slice(0, eq), part);
    } catch {
      continue;
    }
    if (name !== '$rawPict' && name !== '$binary') continue;
    try {
      const value = unquote(eq < 0 ? '' : decode(part.slice(eq + 1), part));
      if (name === '$rawPict' ? rawPict(value) : bool(name, value)) return true;
    } catch {
      return true;
    }
  }
  return false;
}

/** $imageformat, any case; jpg and tif as their long names. */
function imageFormat(v: string | undefined): ImageFormat | undefined {
  if (v === undefined) return undefined;
  const f = v.trim().toLowerCase().replace(/^\./, '');
  const name = f === 'jpg' ? 'jpeg' : f === 'tif' ? 'tiff' : f;
  if (!(IMAGE_FORMATS as readonly string[]).includes(name)) throw new DatasetError('INVALID_OPTION', `$imageformat must be one of ${IMAGE_FORMATS.join(', ')}; got '${v}'${didYouMean(f, IMAGE_FORMATS)}`);
  return name as ImageFormat;
}

/** Query-string decoding: unlike a path, '+' stands for a space here (form encoding). */
function decode(text: string, whole: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    throw new DatasetError('MALFORMED_URL', `bad percent-encoding in the query string at '${whole}'`);
  }
}

/** Removes one pair of surrounding double or single quotes. */
function unquote(v: string): string {
  const t = v.trim();
  if (t.length >= 2 && (t[0] === '"' || t[0] === "'") && t.endsWith(t[0])) return t.slice(1, -1);
  return v;
}

/** What a count that is not one was likely meant as: MySQL's `LIMIT offset,count`, or "all". */
function countHint(name: string, v: string): string {
  const pair = /^\s*(\d+)\s*,\s*(\d+)\s*$/.exec(v);
  if (pair && name !== '$skip') return ` (a page starts at $skip and holds $top entities: LIMIT ${pair[1]},${pair[2]} is $skip=${pair[1]}&$top=${pair[2]})`;
  if (name !== '$skip' && /^\s*(-1|all|\*|max|none|unlimited)\s*$/i.test(v)) return ' (for every entity leave it out: a page holds at most the server\'s page size; page with $skip, or export every entity with $format=csv or ndjson)';
  return '';
}

function count(name: string, v: string, max: number): number {
  // (a page's limit is far below the largest safe integer, which bounds $skip and an export's $top)
  const page = max < Number.MAX_SAFE_INTEGER;
  if (!/^\s*\d+\s*$/.test(v)) throw new DatasetError('INVALID_OPTION', `${name} must be a whole number of 0 or more, got '${v}'${countHint(name, v)}`);
  const n = Number(v);
  if (n > max) {
    throw new DatasetError('LIMIT_EXCEEDED', name === '$skip' ? `$skip=${v.trim()} is beyond the largest position this server can count to (${max})` : `${name}=${v.trim()} is more than the ${max} entities this server sends in one page${page ? ' (page with $skip, or export every entity with $format=csv or ndjson)' : ''}`);
  }
  return n;
}

/**
 * $rawPict: true or false, or the file's MIME type (wakanda-client sends file.type, which a browser
 * may not know: application/octet-stream): an image either way, whose bytes say what it is.
 */
function rawPict(v: string | undefined): boolean {
  if (v !== undefined && /^[\w.+-]+\/[\w.+-]+$/.test(v)) return true;
  if (v === undefined || ['true', '1', '', 'false', '0'].includes(v)) return bool('$rawPict', v);
  const hint = v === 'undefined' ? " (wakanda-client in Node sends file.type: give the Buffer a type property, like buf.type = 'image/png')" : '';
  throw new DatasetError('INVALID_OPTION', `$rawPict is true or false, or the file's MIME type (image/png); got '${v.slice(0, 60)}'${hint}`);
}

/** $lock: true or false, said (an empty $lock could mean either). */
function lockValue(v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new DatasetError('INVALID_OPTION', `$lock is true (lock the entity for this session) or false (unlock it); got '${v.slice(0, 60)}'`);
}

/** A function's name ($emMethod). */
function functionName(name: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (!/^[A-Za-z_$][\w$]*$/.test(v)) throw new DatasetError('INVALID_OPTION', `${name} names a function, like ${name}=totalRevenues; got '${v.slice(0, 60)}'`);
  return v;
}

function bool(name: string, v: string | undefined): boolean {
  if (v === undefined) return false;
  if (v === 'true' || v === '1' || v === '') return true;
  if (v === 'false' || v === '0') return false;
  throw new DatasetError('INVALID_OPTION', `${name} must be true or false, got '${v}'`);
}

function list(name: string, v: string | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  const items = v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) throw new DatasetError('INVALID_OPTION', `${name} is empty: give attribute paths separated by commas`);
  const bad = items.find((i) => !ATTRIBUTE_PATH.test(i));
  if (bad !== undefined) throw new DatasetError('INVALID_OPTION', `${name}: '${bad}' is not an attribute path`);
  return items;
}

function filter(v: string | undefined): string | undefined {
  if (v !== undefined && v.trim() === '') throw new DatasetError('INVALID_OPTION', '$filter is empty: give a query, like $filter="lastName = smith"');
  return v;
}

/** $params='[…]' or $params=[…]: a JSON array (its values are never read as query text). */
function params(v: string | undefined): unknown[] {
  if (v === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch (e) {
    throw new DatasetError('INVALID_OPTION', `$params must be a JSON array like '["smith", 5000]': ${(e as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new DatasetError('INVALID_OPTION', `$params must be a JSON array like '["smith", 5000]', not ${JSON.stringify(parsed)}`);
  return parsed;
}

function computeKeyword(v: string | undefined): ComputeKeyword | undefined {
  if (v === undefined) return undefined;
  if (!COMPUTE_KEYWORDS.includes(v as ComputeKeyword)) {
    throw new DatasetError('INVALID_OPTION', `'${v}' is not a $compute keyword${didYouMean(v, COMPUTE_KEYWORDS)} (one of ${COMPUTE_KEYWORDS.join(', ')})`);
  }
  return v as ComputeKeyword;
}

function positive(name: string, v: string): number {
  if (!/^\s*\d+\s*$/.test(v) || Number(v) === 0) throw new DatasetError('INVALID_OPTION', `${name} must be a whole number of seconds, 1 or more, got '${v}'`);
  const n = Number(v);
  if (n > MAX_TIMEOUT_S) throw new DatasetError('LIMIT_EXCEEDED', `${name}=${v.trim()} is longer than the ${MAX_TIMEOUT_S} seconds (30 days) this server keeps anything`);
  return n;
}

const LOGIC = ['AND', 'OR', 'EXCEPT', 'INTERSECT'] as const;

function logic(operator: string | undefined, other: string | undefined): RestOptions['logic'] {
  if (operator === undefined && other === undefined) return undefined;
  if (operator === undefined || other === undefined || other.trim() === '') {
    throw new DatasetError('INVALID_OPTION', '$logicOperator and $otherCollection go together: an operator (AND, OR, EXCEPT, INTERSECT) and the id of the other entity set');
  }
  const op = operator.toUpperCase();
  if (!LOGIC.includes(op as (typeof LOGIC)[number])) {
    throw new DatasetError('INVALID_OPTION', `'${operator}' is not a $logicOperator${didYouMean(op, LOGIC)} (one of ${LOGIC.join(', ')}, in any case)`);
  }
  return { operator: op as (typeof LOGIC)[number], other: other.trim() };
}

function nonEmpty(name: string, v: string | undefined): string | undefined {
  if (v !== undefined && v.trim() === '') throw new DatasetError('INVALID_OPTION', `${name} is empty`);
  return v;
}
