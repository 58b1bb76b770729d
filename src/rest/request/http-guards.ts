// What every HTTP request meets before its route: the Host it names must be one this server
// answers for (a guard against DNS rebinding: a web page whose name points at 127.0.0.1 cannot
// reach the API under its own name), and a request that changes something must not come from the
// web page of another origin (a guard against cross-site request forgery). A page is judged by
// its Origin; without one, by the browser's Sec-Fetch-Site, and a page of another origin or site
// is believed to be a --cors-origin's only when its Referer says so; a request with none of the
// three comes from a client without a browser, and is not concerned. A write is judged here; a GET
// that changes something (a logout, a lock, a stored set: pipeline.ts sideEffectOf) by the
// pipeline, once it is planned, with foreignPage below. (The headers that keep browsers from
// reading answers as anything but data are response.ts's.)

import { DatasetError } from '../../errors/dataset-error.js';

export interface HttpGuardOptions {
  /** host names (no port) this server answers for; '*' among them: any */
  readonly allowedHosts: readonly string[];
  /** origins (scheme://host[:port]) whose pages may call the API with the session's cookie */
  readonly corsOrigins: readonly string[];
}

/** Methods that never change data (a GET that does is judged once planned: see foreignPage). */
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The host name of a Host header (its port and IPv6 brackets taken off), lower case. */
export function hostName(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  const colon = h.lastIndexOf(':');
  // only a port may follow the colon (localhost:1@evil.example is no host of ours)
  return colon >= 0 && h.indexOf(':') === colon && /^\d*$/.test(h.slice(colon + 1)) ? h.slice(0, colon) : h;
}

const HOSTS_REMEMBERED = 64;

/** What the guard reads of a request (a Fastify request has it). */
export interface GuardedRequest {
  readonly host: string;
  readonly method: string;
  readonly protocol: string;
  readonly headers: { readonly origin?: string; readonly referer?: string; readonly 'sec-fetch-site'?: string | string[] };
}

/** Judges a request by its Host, method and the page it came from: the refusal to answer, or undefined when it may go on. */
export interface HttpGuard {
  (request: GuardedRequest): DatasetError | undefined;
  /**
   * The web page of another origin the request came from, in words, or undefined when it came
   * from one of the server's own pages or a --cors-origin's, from the user's own action (an
   * address typed, a bookmark) or from a client without a browser.
   */
  readonly foreignPage: (request: GuardedRequest) => string | undefined;
}

/** The origin of a URL (scheme://host[:port], default port left out, lower case); 'null' when it has none (file:, data:, not a URL). */
function originOf(url: string): string {
  try {
    return new URL(url).origin.toLowerCase();
  } catch {
    return 'null';
  }
}

/**
 * The check every route makes first (the REST routes and the not-found answer; not a Fastify
 * hook: a hook costs every request its runner, measured at a few percent of a read by key).
 */
export function httpGuard(options: HttpGuardOptions): HttpGuard {
  const anyHost = options.allowedHosts.includes('*');
  const hosts = new Set(options.allowedHosts.map((h) => hostName(h)));
  // each listed origin as written (lower case, no trailing slash) and as a URL reads it (a default port left out)
  const origins = new Set(options.corsOrigins.flatMap((o) => [o.toLowerCase().replace(/\/$/, ''), originOf(o)]).filter((o) => o !== 'null'));
  // the Host headers seen and whether they are ours: a server hears a handful of them, so each is
  // judged once (the first HOSTS_REMEMBERED; past them, each time)
  const judged = new Map<string, boolean>();
  const allowed = (host: string): boolean => {
    let ok = judged.get(host);
    if (ok === undefined) {
      ok = hosts.has(hostName(host));
      if (judged.size < HOSTS_REMEMBERED) judged.set(host, ok);
    }
    return ok;
  };
  const foreignPage = (request: GuardedRequest): string | undefined => {
    const { origin, referer } = request.headers;
    const fetchSite = request.headers['sec-fetch-site'];
    const site = Array.isArray(fetchSite) ? fetchSite[0] : fetchSite;
    // (the usual request of a client without a browser: nothing to judge, nothing computed)
    if (origin === undefined && site === undefined && referer === undefined) return undefined;
    const own = `${request.protocol}://${request.host}`.toLowerCase();
    const trusted = (o: string) => o === own || origins.has(o) || (o !== 'null' && o === originOf(own));
    if (origin !== undefined) return trusted(origin.toLowerCase()) ? undefined : `the web page of another origin (Origin: ${origin.slice(0, 100)})`;
    // the browser's own word (a page cannot set it): one of the server's pages, or the user's own action
    if (site === 'same-origin' || site === 'none') return undefined;
    const from = referer === undefined ? undefined : originOf(referer);
    if (site === 'cross-site' || site === 'same-site') {
      // another site, or another origin of this one (another port of localhost is same-site with
      // this server, and so is every page of a shared domain): the origin, which is what the
      // server trusts, is known only from the Referer
      if (from !== undefined && trusted(from)) return undefined;
      return `a page of ${site === 'cross-site' ? 'another site' : 'another origin of the same site'} (Sec-Fetch-Site: ${site}, ${from === undefined ? 'no Referer' : `Referer from ${from.slice(0, 100)}`})`;
    }
    // a browser that sends no Fetch metadata: its Referer
    return from === undefined || trusted(from) ? undefined : `the web page of another origin (Referer from ${from.slice(0, 100)})`;
  };
  const guard = (request: GuardedRequest): DatasetError | undefined => {
    const host = request.host;
    if (!anyHost && !allowed(host)) {
      return new DatasetError('HOST_NOT_ALLOWED', `this server does not answer for the host '${host.slice(0, 100)}': use one of ${[...hosts].join(', ')} (or start it with --allowed-hosts)`);
    }
    if (SAFE.has(request.method)) return undefined;
    const page = foreignPage(request);
    if (page === undefined) return undefined;
    return new DatasetError('CROSS_SITE_REFUSED', `a request that changes data came from ${page}: only the pages of ${`${request.protocol}://${host}`.toLowerCase().slice(0, 100)} and of the --cors-origin list may send one`);
  };
  return Object.assign(guard, { foreignPage });
}

/**
 * Whether a request that changes who the browser is (a passcode resumed, a sign-in started) came
 * from the user's own action or page: a link followed (a top-level navigation), the server's own
 * page, or a client without a browser's Fetch metadata (a script, a test: taken at its word).
 * Another site's image, script or fetch is not: it would plant a session in the victim's browser,
 * or fill the caps. Undefined when it did; else what it was, in words.
 */
export function notFollowed(headers: { readonly 'sec-fetch-site'?: string | string[]; readonly 'sec-fetch-mode'?: string | string[]; readonly 'sec-fetch-dest'?: string | string[] }): string | undefined {
  const site = headers['sec-fetch-site'];
  if (site === undefined || site === 'same-origin' || site === 'none' || headers['sec-fetch-mode'] === 'navigate') return undefined;
  return `another site's ${String(headers['sec-fetch-dest'] ?? headers['sec-fetch-mode'] ?? 'request')}`;
}
