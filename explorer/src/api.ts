// The explorer's one way to the server: the public REST API under /rest, with the session's
// cookie. Every failure becomes a RestError holding the server's __ERROR items, so each view can
// show them where they belong (a query's offset, a field's message).

export const REST = '/rest';

export interface ErrorItem {
  readonly message: string;
  readonly errCode: number;
  readonly componentSignature: string;
  /** the attribute an error is about, when the server knows it (notNull, unique, a field's event) */
  readonly attributeName?: string;
  readonly extraDescription?: unknown;
}

export class RestError extends Error {
  constructor(readonly status: number, readonly items: readonly ErrorItem[], readonly body: unknown) {
    super(items.map((i) => i.message).join('; ') || `the server answered ${status}`);
  }

  /** the status the body may carry beside the error (__STATUS of a failed save) */
  get errCodes(): number[] {
    return this.items.map((i) => i.errCode);
  }
}

type Listener = (error: RestError | undefined) => void;
const authListeners = new Set<Listener>();

/** Called with each 401 (the datastore wants a login), and when the person asks for one (no error). */
export function onLoginNeeded(listener: Listener): () => void {
  authListeners.add(listener);
  return () => authListeners.delete(listener);
}

/** The person asked to log in (a lock's "Log in to see" button): the login dialog opens. */
export function askLogin(): void {
  for (const l of authListeners) l(undefined);
}

/** One REST call the page made, as the "show the requests" panel lists it. */
export interface SentRequest {
  readonly id: number;
  readonly method: string;
  /** absolute: http://host/rest/… */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** the JSON text sent, if any (an upload's bytes are not shown) */
  readonly body?: string;
  /** the answer's status, once it came */
  status?: number;
}

type RequestListener = (request: SentRequest) => void;
const requestListeners = new Set<RequestListener>();
let requestCount = 0;

/** Called with each REST call as it is sent, and again when its answer came (its status set). */
export function onRequest(listener: RequestListener): () => void {
  requestListeners.add(listener);
  return () => requestListeners.delete(listener);
}

/** Tells the listeners about a call the page makes without rest() (an EventSource, a download link). */
export function announce(request: Omit<SentRequest, 'id'>): SentRequest {
  const sent: SentRequest = { ...request, id: ++requestCount };
  for (const l of requestListeners) l(sent);
  return sent;
}

/** Single-quoted for a POSIX shell: 'it'\''s'. */
function shellQuoted(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * The same call as a curl command (the session's cookie left out: it is this browser's; -b takes
 * one). A body longer than `maxBody` characters is read from a file instead (`@body.json`, the
 * panel says so beside it): an import's batches are 200 entities each, and the panel shows fifty calls.
 */
export function curlOf(request: Pick<SentRequest, 'method' | 'url' | 'headers' | 'body'>, maxBody = Infinity): string {
  const parts = ['curl'];
  // (a stream: each event as it comes, not when curl's buffer fills)
  if (request.headers.accept === 'text/event-stream') parts.push('-N');
  if (request.method !== 'GET') parts.push('-X', request.method);
  for (const [name, value] of Object.entries(request.headers)) {
    if (name === 'accept' && value === 'application/json') continue;
    parts.push('-H', shellQuoted(`${name}: ${value}`));
  }
  const long = request.body !== undefined && request.body.length > maxBody;
  if (request.body !== undefined) parts.push('--data-binary', long ? '@body.json' : shellQuoted(request.body));
  // (curl reads [ ] and { } in a URL as globs: -g takes them as they are)
  parts.push('-g', shellQuoted(request.url));
  return parts.join(' ');
}

export interface RequestOptions {
  readonly method?: string;
  readonly body?: unknown;
  /** raw bytes (an upload) instead of JSON */
  readonly raw?: Blob;
  readonly signal?: AbortSignal;
  /** a 401 is only an answer here (a probe): it opens no login dialog */
  readonly quiet?: boolean;
  /** an RFC 7240 preference (the catalog's `extensions`) */
  readonly prefer?: string;
  /** what the answer should be (text/csv for an export): its text is then returned as is */
  readonly accept?: string;
  /**
   * the body as the "show the requests" panel shows it, when `body` holds a secret (a password):
   * the panel keeps the calls from the page's start, shown or not, and a curl command is copied
   */
  readonly shownBody?: unknown;
}

/** What the requests panel shows in place of a password. */
export const HIDDEN = '<password>';

/** A REST call: `path` is under /rest (`Company?$top=1`) or absolute (`/rest/...`). */
export async function rest<T = Json>(path: string, options: RequestOptions = {}): Promise<T> {
  const url = path.startsWith('/') ? path : `${REST}/${path}`;
  const headers: Record<string, string> = { accept: options.accept ?? 'application/json' };
  if (options.prefer) headers.prefer = options.prefer;
  let body: BodyInit | undefined;
  if (options.raw) {
    body = options.raw;
    headers['content-type'] = options.raw.type || 'application/octet-stream';
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const method = options.method ?? (body === undefined ? 'GET' : 'POST');
  const shown = options.shownBody === undefined ? body : JSON.stringify(options.shownBody);
  const sent = announce({ method, url: new URL(url, location.href).href, headers, body: typeof shown === 'string' ? shown : undefined });
  const response = await fetch(url, { method, headers, body, credentials: 'same-origin', signal: options.signal });
  sent.status = response.status;
  for (const l of requestListeners) l(sent);
  const text = await response.text();
  if (options.accept && options.accept !== 'application/json' && response.ok) return text as T;
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    throw new RestError(response.status, [{ message: `the server answered ${response.status} with something that is not JSON`, errCode: 0, componentSignature: 'xplr' }], text);
  }
  const items = errorItems(parsed);
  if (!response.ok || items) {
    const error = new RestError(response.status, items ?? [{ message: `the server answered ${response.status}`, errCode: 0, componentSignature: 'xplr' }], parsed);
    if (response.status === 401 && !options.quiet) for (const l of authListeners) l(error);
    throw error;
  }
  return parsed as T;
}

function errorItems(body: unknown): ErrorItem[] | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const items = (body as { __ERROR?: unknown }).__ERROR;
  return Array.isArray(items) ? (items as ErrorItem[]) : undefined;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** The first error's message, or the text of anything thrown. */
export function messageOf(error: unknown): string {
  if (error instanceof RestError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** A query string from options; `$filter`-like texts are sent quoted, as 4D's clients do. */
export function query(options: Readonly<Record<string, string | number | boolean | undefined>>): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined || value === '') continue;
    parts.push(`${name}=${encodeURIComponent(String(value))}`);
  }
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

/** A text as a quoted option value (`$filter="…"`): the server removes one pair of quotes. */
export function quoted(text: string): string {
  return `"${text}"`;
}

/** A key as it goes in `/rest/Company(…)`, written as the server writes its own URIs. */
export function keyPath(dataClass: string, key: string): string {
  return `${REST}/${encodeURIComponent(dataClass)}(${keyInUri(key)})`;
}

/**
 * A key in a URL: percent-encoded, parentheses and quotes included (they would end or quote the
 * key), and a key that is itself quoted given one more pair of quotes, which the server removes.
 */
export function keyInUri(key: string): string {
  const text = key.length >= 2 && /^(["']).*\1$/s.test(key) ? `"${key}"` : key;
  return encodeURIComponent(text).replace(/[()'!*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
