// A real OpenID Connect provider for the single sign-on tests: panva's oidc-provider on
// 127.0.0.1 (a free port), with its development sign-in pages, the accounts given, and a
// browser that drives a sign-in over real HTTP — cookies kept per origin, redirects followed by
// hand, the provider's login and consent forms submitted as a person would. Nothing leaves the
// machine.

import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type ClientMetadata } from 'oidc-provider';

/** An account of the provider: its subject and the claims it gives. */
export interface TestAccount {
  readonly sub: string;
  readonly claims: Record<string, unknown>;
}

export interface TestProvider {
  /** http://127.0.0.1:PORT */
  readonly issuer: string;
  /** registers the clients (once the callbacks' URLs are known: they name our server's port) */
  start(clients: readonly ClientMetadata[]): void;
  close(): Promise<void>;
}

/** The provider's HTTP server, listening at once; it answers once start() has given it its clients. */
export async function testProvider(accounts: readonly TestAccount[]): Promise<TestProvider> {
  let handle: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => {
    if (handle) handle(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const bySub = new Map(accounts.map((a) => [a.sub, a]));
  // (a key of its own for the test: the provider's built-in development key is not for use)
  const signingKey = { ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), kid: 'test', use: 'sig', alg: 'RS256' };
  return {
    issuer,
    start(clients) {
      const provider = new Provider(issuer, {
        clients: [...clients],
        jwks: { keys: [signingKey] },
        cookies: { keys: ['oidc-test-cookie-key'] },
        // (its artifacts' lives, given: without them it says it used its defaults)
        ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
        // groups travel with the profile scope, so that the default scopes bring them
        claims: { openid: ['sub'], profile: ['preferred_username', 'name', 'groups'], email: ['email', 'email_verified'] },
        findAccount: (_ctx, sub) => {
          const account = bySub.get(sub);
          return account === undefined ? undefined : { accountId: sub, claims: () => ({ sub, ...account.claims }) };
        },
      });
      handle = provider.callback();
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** An answer as the browser saw it (redirects not followed). */
export interface Seen {
  readonly status: number;
  readonly location: string | undefined;
  readonly text: string;
  readonly url: string;
  readonly headers: Headers;
}

/** A browser: a cookie jar per origin (name → value; the paths are not needed here), redirects followed by hand. */
export class TestBrowser {
  readonly #jar = new Map<string, Map<string, string>>();

  /** The value of a cookie the browser keeps for an origin. */
  cookie(origin: string, name: string): string | undefined {
    return this.#jar.get(origin)?.get(name);
  }

  /** Drops the cookies of an origin (signed out at the provider, say). */
  forget(origin: string): void {
    this.#jar.delete(origin);
  }

  /** One request, its cookies sent and kept; no redirect followed. */
  async fetch(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Seen> {
    const { origin } = new URL(url);
    const cookies = [...(this.#jar.get(origin) ?? new Map<string, string>())].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: { ...(cookies === '' ? {} : { cookie: cookies }), ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...init.headers },
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
    });
    for (const line of res.headers.getSetCookie()) this.#keep(origin, line);
    const location = res.headers.get('location') ?? undefined;
    return { status: res.status, location: location === undefined ? undefined : new URL(location, url).href, text: await res.text(), url, headers: res.headers };
  }

  /**
   * Follows redirects from `url`, signing in at the provider's pages as `login` (its login form,
   * then its consent form; `abort` answers the first page with the provider's "cancel" instead),
   * until a redirect leaves for `until` (an origin): resolves to that redirect's URL, not fetched.
   */
  async signInAtProvider(url: string, login: string, until: string, options: { abort?: boolean } = {}): Promise<string> {
    let next = url;
    for (let step = 0; step < 20; step++) {
      if (new URL(next).origin === until && step > 0) return next;
      const seen = await this.fetch(next);
      if (seen.location !== undefined) {
        next = seen.location;
        continue;
      }
      assert200(seen);
      const prompt = /name="prompt" value="(\w+)"/.exec(seen.text)?.[1];
      if (prompt === undefined) throw new Error(`no sign-in form at ${next}: ${seen.text.slice(0, 300)}`);
      if (options.abort) {
        next = new URL(`${new URL(next).pathname}/abort`, next).href;
        continue;
      }
      const submitted = await this.fetch(next, { method: 'POST', form: prompt === 'login' ? { prompt, login, password: 'any' } : { prompt } });
      if (submitted.location === undefined) throw new Error(`the ${prompt} form did not redirect: ${submitted.status} ${submitted.text.slice(0, 300)}`);
      next = submitted.location;
    }
    throw new Error('the sign-in did not come back in 20 steps');
  }

  #keep(origin: string, line: string): void {
    const [pair, ...attributes] = line.split(';');
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const jar = this.#jar.get(origin) ?? new Map<string, string>();
    this.#jar.set(origin, jar);
    // (an expired cookie is one the server removes)
    const gone = value === '' || attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]) < Date.now()));
    if (gone) jar.delete(name);
    else jar.set(name, value);
  }
}

function assert200(seen: Seen): void {
  if (seen.status !== 200) throw new Error(`${seen.url} answered ${seen.status}: ${seen.text.slice(0, 300)}`);
}
