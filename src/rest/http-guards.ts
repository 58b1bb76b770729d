// What every HTTP request meets before its route: the Host it names must be one this server
// answers for (a guard against DNS rebinding: a web page whose name points at 127.0.0.1 cannot
// reach the API under its own name), a request that changes data and carries an Origin must come
// from the server's own origin or a --cors-origin (a guard against cross-site request forgery:
// clients without a browser send no Origin and are not concerned), and answers carry headers that
// keep browsers from reading them as anything but data.

import type { FastifyReply, FastifyRequest } from 'fastify';
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

/** Headers on every answer (one object: set at once). */
const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  // what an answer says depends on the session that asked: no cache keeps it for another
  'cache-control': 'no-store',
};

/** The onRequest hook (a callback one: an async hook costs every request a promise). */
export function httpGuards(options: HttpGuardOptions): (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => void {
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
  return (request, reply, done) => {
    reply.headers(SECURITY_HEADERS);
    if (!anyHost && !allowed(request.host)) {
      done(new DatasetError('HOST_NOT_ALLOWED', `this server does not answer for the host '${request.host.slice(0, 100)}': use one of ${[...hosts].join(', ')} (or start it with --allowed-hosts)`));
      return;
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !SAFE.has(request.method)) {
      const own = `${request.protocol}://${request.host}`.toLowerCase();
      if (origin.toLowerCase() !== own && !origins.has(origin.toLowerCase())) {
        done(new DatasetError('CROSS_SITE_REFUSED', `a request that changes data came from the web page of another origin (${origin.slice(0, 100)}): only ${own} and the --cors-origin list may send one`));
        return;
      }
    }
    done();
  };
}
