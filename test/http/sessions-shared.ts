// What the files of web sessions (sessions-*.test.ts, http-guards.test.ts) share: the demo's
// roles.json and users, a request through Fastify's inject with a cookie, and the cookie, error,
// login and $info an answer gives.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { DEMO_DIR } from '../support/helpers.js';

export type Json = Record<string, any>;
export type Answer = { status: number; body: any; headers: Record<string, unknown> };

export const ROLES = join(DEMO_DIR, 'roles.json');
export const COOKIE = '4DSID_Demo';
export const PASSWORDS: Record<string, string> = { alice: 'alice123', bob: 'bob123', admin: 'admin123' };

/** One request through inject: `cookie` is sent as the Cookie header, a body as JSON. */
export async function call(app: FastifyInstance, url: string, o: { method?: InjectOptions['method']; body?: unknown; cookie?: string; headers?: Record<string, string>; remoteAddress?: string } = {}): Promise<Answer> {
  const headers = { ...(o.cookie ? { cookie: o.cookie } : {}), ...o.headers };
  const res = await app.inject({ method: o.method ?? 'GET', url, headers, remoteAddress: o.remoteAddress, ...(o.body === undefined ? {} : { payload: o.body as object }) });
  let body: unknown = res.body;
  try {
    body = JSON.parse(res.body);
  } catch {
    // not JSON
  }
  return { status: res.statusCode, body, headers: res.headers };
}

/** The session cookie an answer sets, as "4DSID_Demo=TOKEN" (what goes back in a Cookie header), or undefined. */
export function cookieOf(res: Answer): string | undefined {
  const raw = res.headers['set-cookie'];
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw.map(String) : [String(raw)];
  return lines.find((l) => l.startsWith(`${COOKIE}=`))?.split(';')[0];
}

export function setCookieLine(res: Answer): string {
  const raw = res.headers['set-cookie'];
  return String(Array.isArray(raw) ? raw[0] : raw);
}

export function errCode(res: Answer): number | undefined {
  return res.body?.__ERROR?.[0]?.errCode;
}

/** Logs `user` in (with the cookie given, if any); resolves to the cookie the session now has. */
export async function login(app: FastifyInstance, user: string, cookie?: string): Promise<string> {
  const res = await call(app, '/rest/$catalog/authentify', { method: 'POST', body: [{ userName: user, password: PASSWORDS[user] }], cookie });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.result.success, true);
  const next = cookieOf(res);
  assert.ok(next, 'a login sets a cookie');
  return next;
}

export async function info(app: FastifyInstance, cookie?: string): Promise<Json> {
  const res = await call(app, '/rest/$info', { cookie });
  assert.equal(res.status, 200);
  return res.body;
}
