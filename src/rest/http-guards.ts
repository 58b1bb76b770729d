// What every HTTP request meets before its route: the Host it names must be one this server
// answers for (a guard against DNS rebinding: a web page whose name points at 127.0.0.1 cannot
// reach the API under its own name), a request that changes data and carries an Origin must come
// from the server's own origin or a --cors-origin (a guard against cross-site request forgery:
// clients without a browser send no Origin and are not concerned). (The headers that keep browsers
// from reading answers as anything but data are response.ts's.)

import { DatasetError } from '../errors/dataset-error.js';

export interface HttpGuardOptions {
  /** host names (no port) this server answers for; '*' among them: any */
  readonly allowedHosts: readonly string[];
  /** origins (scheme://host[:port]) whose pages may call the API with the session's cookie */
  readonly corsOrigins: readonly string[];
}

/** Methods that never change data (a GET-callable function is the project's choice; its session cookie is SameSite=Lax). */
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
  readonly headers: { readonly origin?: string };
}

/** Judges a request by its Host, method and Origin: the refusal to answer, or undefined when it may go on. */
export type HttpGuard = (request: GuardedRequest) => DatasetError | undefined;

/**
 * The check every route makes first (the REST routes and the not-found answer; not a Fastify
 * hook: a hook costs every request its runner, measured at a few percent of a read by key).
 */
export function httpGuard(options: HttpGuardOptions): HttpGuard {
  const anyHost = options.allowedHosts.includes('*');
  const hosts = new Set(options.allowedHosts.map((h) => hostName(h)));
  const origins = new Set(options.corsOrigins.map((o) => o.toLowerCase().replace(/\/$/, '')));
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
  return (request) => {
    const host = request.host;
    if (!anyHost && !allowed(host)) {
      return new DatasetError('HOST_NOT_ALLOWED', `this server does not answer for the host '${host.slice(0, 100)}': use one of ${[...hosts].join(', ')} (or start it with --allowed-hosts)`);
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !SAFE.has(request.method)) {
      const own = `${request.protocol}://${host}`.toLowerCase();
      if (origin.toLowerCase() !== own && !origins.has(origin.toLowerCase())) {
        return new DatasetError('CROSS_SITE_REFUSED', `a request that changes data came from the web page of another origin (${origin.slice(0, 100)}): only ${own} and the --cors-origin list may send one`);
      }
    }
    return undefined;
  };
}
