// The REST URL grammar: turns the path after /rest into a typed Route. Names stay as written;
// handlers resolve them against the model. Keys and values are percent-decoded here, after the
// path is split, so an encoded '/' inside a key does not split it.

import { MAX_PATH_SEGMENTS } from '../../config/limits.js';
import { DatasetError } from '../../errors/dataset-error.js';
import { didYouMean } from '../../util/suggest.js';

export type Selector =
  | { readonly kind: 'all' }
  /** `Company(1)`, `Company[1]`, `Company("A1")` */
  | { readonly kind: 'key'; readonly key: string }
  /** `Company:companyCode(Acme001)` */
  | { readonly kind: 'attribute'; readonly attribute: string; readonly value: string };

export type PathSegment =
  /** one name or a comma-separated attribute list: `staff`, `firstName,lastName`, `employer.name` */
  | { readonly kind: 'names'; readonly names: readonly string[] }
  /** `$entityset/{id}` (id may be empty: `…/$entityset/?$filter=…`) */
  | { readonly kind: 'entitySet'; readonly id: string }
  /** `addEmployee(John,Smith)`: a function called with its parameters in the URL (4D's legacy form, reference §2.13) */
  | { readonly kind: 'call'; readonly name: string; readonly args: readonly UrlArgument[] };

/** A parameter written in the URL: its text (percent-decoded, quotes removed) and whether it was quoted (then it is a string, whatever it reads). */
export interface UrlArgument {
  readonly text: string;
  readonly quoted: boolean;
}

export type Route =
  | { readonly kind: 'catalog' }
  | { readonly kind: 'catalogAll' }
  | { readonly kind: 'catalogItem'; readonly name: string }
  | { readonly kind: 'queryPath' }
  | { readonly kind: 'info' }
  /** /rest/$openapi: the OpenAPI description of what the caller may use */
  | { readonly kind: 'openapi' }
  /** POST /rest/$entityset/$release with the ids in the body */
  | { readonly kind: 'releaseSets' }
  /** /rest/$upload: POST is served by its own route (the raw body); any other method lands here */
  | { readonly kind: 'upload' }
  /** /rest/$directory/login, logout, currentUser, currentUserBelongsTo (4D's legacy login) */
  | { readonly kind: 'directory'; readonly name: DirectoryName }
  /** /rest/$users[/{name}], /rest/$tokens[/{id}], /rest/$roles: built-in users, their API tokens, roles.json as a matrix (administrators) */
  | { readonly kind: 'admin'; readonly resource: AdminResource; readonly name?: string }
  /** /rest/$singleton/{Class}/{function}: a function of a shared singleton */
  | { readonly kind: 'singleton'; readonly className: string; readonly fn: string }
  | { readonly kind: 'dataClass'; readonly dataClass: string; readonly selector: Selector; readonly path: readonly PathSegment[] };

export const ADMIN_RESOURCES = ['$users', '$tokens', '$roles'] as const;
export type AdminResource = (typeof ADMIN_RESOURCES)[number];

export const DIRECTORY_NAMES = ['login', 'logout', 'currentUser', 'currentUserBelongsTo'] as const;
export type DirectoryName = (typeof DIRECTORY_NAMES)[number];

export type DataClassRoute = Extract<Route, { kind: 'dataClass' }>;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** An attribute path as lists and $attributes/$expand write it: names or '*' joined by dots. */
export const ATTRIBUTE_PATH = /^(?:[A-Za-z_][A-Za-z0-9_]*|\*)(?:\.(?:[A-Za-z_][A-Za-z0-9_]*|\*))*$/;

/** Parses the path after `/rest` (still percent-encoded, without the query string). */
export function parseRestPath(rawPath: string): Route {
  const segments = splitSegments(rawPath);
  if (segments.length === 0) throw new DatasetError('UNKNOWN_RESOURCE', 'no resource named after /rest: try /rest/$catalog');
  const [raw, ...rest] = segments;
  // A client that encodes the whole path (encodeURI turns [ ] into %5B %5D) sends no literal
  // bracket at all: such a segment is decoded before it is read. (Our own URIs encode only the
  // brackets inside keys, and always write the outer ones as they are.)
  const first = /[([:]/.test(raw) || !/%(28|5B|3A)/i.test(raw) ? raw : decode(raw, 'resource');
  if (first.startsWith('$')) return systemRoute(decode(first, 'resource'), rest.map((s) => decode(s, 'segment')));
  if (rest.length > MAX_PATH_SEGMENTS) throw new DatasetError('LIMIT_EXCEEDED', `the URL has ${rest.length} segments after the dataclass; at most ${MAX_PATH_SEGMENTS} are read`);
  const { dataClass, selector } = parseResource(first);
  const path: PathSegment[] = [];
  for (let i = 0; i < rest.length; i++) {
    const call = callSegment(rest[i]);
    if (call) {
      path.push(call);
      continue;
    }
    const seg = decode(rest[i], 'segment');
    if (seg === '$entityset') {
      const id = i + 1 < rest.length ? decode(rest[++i], 'entity set id') : '';
      path.push({ kind: 'entitySet', id });
      continue;
    }
    const names = seg.split(',').map((n) => n.trim());
    const bad = names.find((n) => !ATTRIBUTE_PATH.test(n));
    if (bad !== undefined) throw new DatasetError('MALFORMED_URL', `'${seg}' is not an attribute name or a comma-separated list of attribute paths (at '${bad}')`);
    path.push({ kind: 'names', names });
  }
  return { kind: 'dataClass', dataClass, selector, path };
}

function systemRoute(name: string, rest: string[]): Route {
  if (name === '$catalog') {
    if (rest.length === 0) return { kind: 'catalog' };
    if (rest.length === 1) return rest[0] === '$all' ? { kind: 'catalogAll' } : { kind: 'catalogItem', name: rest[0] };
    throw new DatasetError('MALFORMED_URL', `/rest/$catalog takes at most one more segment ($all or a dataclass name), got '${rest.join('/')}'`);
  }
  if (name === '$querypath' && rest.length === 0) return { kind: 'queryPath' };
  if (name === '$info' && rest.length === 0) return { kind: 'info' };
  if (name === '$openapi' && rest.length === 0) return { kind: 'openapi' };
  if (name === '$entityset' && rest.length === 1 && rest[0] === '$release') return { kind: 'releaseSets' };
  if (name === '$upload' && rest.length === 0) return { kind: 'upload' };
  if (name === '$singleton') return singletonRoute(rest);
  const admin = ADMIN_RESOURCES.find((r) => r === name);
  if (admin !== undefined) {
    if (rest.length === 0) return { kind: 'admin', resource: admin };
    if (rest.length === 1 && admin !== '$roles' && rest[0] !== '') return { kind: 'admin', resource: admin, name: rest[0] };
    throw new DatasetError('UNKNOWN_RESOURCE', `'${[name, ...rest].join('/')}' is not a resource of this server (${admin === '$roles' ? '$roles takes no more segment' : `${admin} takes one more segment at most: ${admin === '$users' ? 'a user name' : "a token's id"}`})`);
  }
  if (name === '$directory') {
    const found = DIRECTORY_NAMES.find((n) => n === rest[0]);
    if (rest.length === 1 && found) return { kind: 'directory', name: found };
    throw new DatasetError('UNKNOWN_RESOURCE', `'${[name, ...rest].join('/')}' is not a resource of this server ($directory has ${DIRECTORY_NAMES.join(', ')})${didYouMean(rest.join('/'), DIRECTORY_NAMES)}`);
  }
  throw new DatasetError('UNKNOWN_RESOURCE', `'${[name, ...rest].join('/')}' is not a resource of this server (known: $catalog, $info, $openapi, $querypath, $entityset/$release, $upload, $directory, $singleton, $users, $tokens, $roles)`);
}

/** $singleton/{Class}/{function}: two names, the function without parentheses (4D's docs/REST/$singleton.md). */
function singletonRoute(rest: string[]): Route {
  const usage = 'a singleton function is called as /rest/$singleton/{SingletonClass}/{function}, its parameters in the body (POST) or in $params (GET)';
  if (rest.length !== 2) throw new DatasetError('MALFORMED_URL', `'$singleton/${rest.join('/')}': ${usage}`);
  const [className, fn] = rest;
  if (!NAME.test(className)) throw new DatasetError('MALFORMED_URL', `'${className}' is not a class name: ${usage}`);
  if (!NAME.test(fn)) throw new DatasetError('MALFORMED_URL', `'${fn}' is not a function name${fn.includes('(') ? ' (written without parentheses)' : ''}: ${usage}`);
  return { kind: 'singleton', className, fn };
}

/** `Name`, `Name(key)`, `Name[key]`, `Name:attr(value)`. */
function parseResource(raw: string): { dataClass: string; selector: Selector } {
  const m = /^([^([:]*)(.*)$/s.exec(raw) as RegExpExecArray;
  const dataClass = decode(m[1], 'dataclass name');
  if (!NAME.test(dataClass)) throw new DatasetError('MALFORMED_URL', `'${dataClass}' is not a dataclass name`);
  const tail = m[2];
  if (tail === '') return { dataClass, selector: { kind: 'all' } };
  if (tail.startsWith(':')) {
    const open = tail.indexOf('(');
    const attribute = decode(open < 0 ? tail.slice(1) : tail.slice(1, open), 'attribute name');
    if (!NAME.test(attribute) || open < 0) {
      throw new DatasetError('MALFORMED_URL', `'${raw}' is not {dataClass}:{attribute}(value): expected an attribute name then a value in parentheses`);
    }
    return { dataClass, selector: { kind: 'attribute', attribute, value: bracketed(tail.slice(open), raw) } };
  }
  return { dataClass, selector: { kind: 'key', key: bracketed(tail, raw) } };
}

/**
 * The text inside `(…)` or `[…]`, which must end the segment. Quotes around it are removed,
 * whether written as they are (`("A1")`) or percent-encoded as browsers send them (`(%22A1%22)`).
 */
function bracketed(text: string, whole: string): string {
  const close = text[0] === '(' ? ')' : text[0] === '[' ? ']' : '';
  if (!close) throw new DatasetError('MALFORMED_URL', `'${whole}': a key is written in parentheses or brackets, like Company(1) or Company[1]`);
  const q = text[1];
  const quoted = q === '"' || q === "'";
  const end = quoted ? text.indexOf(q + close, 2) + 1 : text.indexOf(close, 1);
  if (end <= 0) throw new DatasetError('MALFORMED_URL', `'${whole}': the key is not closed with '${close}'`);
  if (end !== text.length - 1) throw new DatasetError('MALFORMED_URL', `'${whole}': unexpected '${text.slice(end + 1)}' after the key`);
  let inner: string;
  if (quoted) inner = decode(text.slice(2, end - 1), 'key');
  else {
    inner = decode(text.slice(1, end), 'key');
    const c = inner[0];
    if ((c === '"' || c === "'") && inner.length >= 2 && inner.endsWith(c)) inner = inner.slice(1, -1);
  }
  if (inner === '') throw new DatasetError('MALFORMED_URL', `'${whole}': the key is empty`);
  return inner;
}

const CALL_USAGE = 'a function with its parameters in the URL is written name(a,b), like addEmployee(John,Smith) or find("Smith, John")';

/** One character of a segment as written: `%XX` (one escaped byte) or a single character. */
interface Token {
  /** as written: '%2C' or ',' */
  readonly raw: string;
  /** its offset in the segment as written */
  readonly at: number;
  /** the byte it stands for, as a character (an escaped byte of a multi-byte character gives a character we never compare) */
  readonly char: string;
}

function tokens(raw: string): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < raw.length; ) {
    const escaped = raw[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(raw.slice(i + 1, i + 3));
    const len = escaped ? 3 : 1;
    out.push({ raw: raw.slice(i, i + len), at: i, char: escaped ? String.fromCharCode(parseInt(raw.slice(i + 1, i + 3), 16)) : raw[i] });
    i += len;
  }
  return out;
}

/**
 * `fn(a,b)` after the dataclass or the entity, or undefined for a segment without parentheses.
 * The segment is read once as written, and each name and parameter is percent-decoded once:
 * - parentheses: in a segment with a literal '(', only the literal '(' and ')' are parentheses
 *   and %28 %29 are characters of a value; in a segment without one (a client that encodes
 *   everything, `f%28a%29`), %28 and %29 are the parentheses too. Either way the call ends the
 *   segment, and a parenthesis outside quotes inside the parameters is refused (a ')' too many).
 * - commas written as such separate parameters; an encoded %2C is a character of the value;
 * - a parameter in quotes ("…" or '…', written as they are or encoded as %22 %27) is a string
 *   and may hold commas and parentheses;
 * - spaces around a parameter, written or encoded (%20, as browsers send them), are not part of
 *   it (inside quotes they are).
 */
function callSegment(raw: string): PathSegment | undefined {
  const literal = raw.includes('(');
  const toks = tokens(raw);
  const isParen = (t: Token | undefined, c: '(' | ')') => t !== undefined && t.char === c && (t.raw.length === 1 || !literal);
  const open = toks.findIndex((t) => isParen(t, '('));
  if (open < 0) return undefined;
  const name = decode(raw.slice(0, toks[open].at), 'function name');
  if (!NAME.test(name) || !isParen(toks[toks.length - 1], ')') || toks.length - 1 === open) {
    throw new DatasetError('MALFORMED_URL', `'${shown(raw)}' is no attribute list nor a function call: ${CALL_USAGE}`);
  }
  return { kind: 'call', name, args: callArguments(raw, toks.slice(open + 1, -1), isParen) };
}

function callArguments(whole: string, inner: readonly Token[], isParen: (t: Token | undefined, c: '(' | ')') => boolean): UrlArgument[] {
  const out: UrlArgument[] = [];
  const n = inner.length;
  const space = (k: number) => k < n && inner[k].char === ' ';
  const quote = (k: number) => (k < n && (inner[k].char === '"' || inner[k].char === "'") ? inner[k].char : '');
  const text = (from: number, to: number) => (from < to ? whole.slice(inner[from].at, inner[to - 1].at + inner[to - 1].raw.length) : '');
  const bad = (why: string) => new DatasetError('MALFORMED_URL', `'${whole}': ${why}; ${CALL_USAGE}`);
  const empty = () => bad(`parameter #${out.length + 1} is empty (write "" for an empty string)`);
  let i = 0;
  while (space(i)) i++;
  if (i >= n) return out;
  for (;;) {
    while (space(i)) i++;
    const q = quote(i);
    if (q) {
      let end = i + 1;
      while (end < n && inner[end].char !== q) end++;
      if (end >= n) throw bad(`the quote of parameter #${out.length + 1} is not closed`);
      out.push({ text: decode(text(i + 1, end), 'parameter'), quoted: true });
      i = end + 1;
      while (space(i)) i++;
      if (i < n && inner[i].raw !== ',') throw bad(`unexpected '${shown(text(i, n))}' after the quoted parameter #${out.length}`);
    } else {
      let end = i;
      for (; end < n && inner[end].raw !== ','; end++) {
        const t = inner[end];
        if (isParen(t, '(') || isParen(t, ')')) {
          throw bad(`unexpected '${t.raw}' at offset ${t.at} in parameter #${out.length + 1} (a parenthesis in a parameter is written in quotes)`);
        }
      }
      const piece = decode(text(i, end), 'parameter').replace(/^ +| +$/g, '');
      if (piece === '') throw empty();
      out.push({ text: piece, quoted: false });
      i = end;
    }
    if (i >= n) return out;
    i++; // past the comma
    while (space(i)) i++;
    if (i >= n) throw empty();
  }
}

/** A segment for a message: decoded when it can be. */
function shown(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Splits on '/' outside brackets and quotes; empty segments (double or trailing slashes) are dropped.
 * In the first segment (the resource and its key) only a quote written right after the opening
 * bracket starts a quoted key, so O'Brien stays a name, and an unbalanced bracket or quote is
 * refused here. In the later ones (a call's parameters, `f(a, "b/c")`) a quote, written or encoded
 * (%22, %27), also starts one after a comma inside parentheses, spaces (written or %20) between,
 * as the call's parameters are read; a segment left open at the end is kept whole, and the call's
 * reading says what is wrong with it.
 */
function splitSegments(path: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  let prev = ''; // the last character read (in later segments: outside spaces, quotes decoded)
  for (let i = 0; i <= path.length; ) {
    const c = path[i];
    if (i === path.length || (c === '/' && depth === 0 && !quote)) {
      if (i > start) out.push(path.slice(start, i));
      start = i + 1;
      i++;
      prev = '';
      if (out.length > 0) quote = '';
      continue;
    }
    const later = out.length > 0;
    const encoded = later ? SPLIT_ESCAPES[path.slice(i, i + 3).toUpperCase()] : undefined;
    const ch = encoded ?? c;
    if (quote) {
      if (ch === quote) quote = '';
    } else if ((ch === '"' || ch === "'") && (prev === '(' || prev === '[' || (later && depth > 0 && prev === ','))) {
      quote = ch;
    } else if (c === '(' || c === '[') depth++;
    else if ((c === ')' || c === ']') && depth > 0) depth--;
    if (!later || ch !== ' ') prev = ch;
    i += encoded ? 3 : 1;
  }
  if (out.length <= 1 && (depth !== 0 || quote)) throw new DatasetError('MALFORMED_URL', `unbalanced ${quote ? 'quote' : 'bracket'} in '${path}'`);
  return out;
}

const SPLIT_ESCAPES: Readonly<Record<string, string>> = { '%22': '"', '%27': "'", '%20': ' ' };

function decode(text: string, what: string): string {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    throw new DatasetError('MALFORMED_URL', `bad percent-encoding in the ${what} '${text}'`);
  }
}

/** How a key is written in a URI we emit: as is for numbers and plain text, percent-encoded otherwise. */
export function keyInUri(key: unknown): string {
  let text = String(key);
  // A key that itself starts and ends with a quote gets one more pair, which parsing removes.
  if (/^(["']).*\1$/s.test(text) && text.length >= 2) text = `"${text}"`;
  return encodeURIComponent(text).replace(/[()'!*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
