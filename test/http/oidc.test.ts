// Single sign-on with OpenID Connect (issue 37), against a real provider run here (panva's
// oidc-provider on 127.0.0.1, support/oidc-provider.ts) and our server listening on a socket:
// the whole code flow with PKCE over real HTTP — the login's redirect, the provider's sign-in
// and consent pages, the callback — ending with the session logged in with the roles its claims
// map to. Then each bad input: a bad, reused, expired or foreign state, an unknown provider, the
// provider's own error, an unreachable provider, a refused client, an open redirect, the caps on
// pending sign-ins; and auth.json's mistakes, refused at the start with file, path and reason.

import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { NO_AUTH } from '../../src/config/auth.js';
import { MAX_PENDING_SIGN_INS_PER_ADDRESS } from '../../src/config/oidc.js';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { buildServer } from '../../src/http/server.js';
import { sameOriginPath } from '../../src/http/oidc/return-path.js';
import { authConfig } from '../../src/project/auth-file.js';
import { openProject } from '../../src/project/open.js';
import { tempDir, testDatabase } from '../support/helpers.js';
import { USERS_MODEL, USERS_ROLES } from '../support/users-project.js';
import { TestBrowser, testProvider, type TestProvider } from '../support/oidc-provider.js';

const SECRET = 'dataset-client-secret';
const SECRET_ENV = 'DATASET_REST_TEST_OIDC_SECRET';
const ACCOUNTS = [
  { sub: 'ada', claims: { preferred_username: 'ada', email: 'ada@corp.example', groups: ['admins', 'staff'] } },
  { sub: 'bert', claims: { preferred_username: 'bert', email: 'bert@corp.example', groups: ['visitors'] } },
  { sub: 'cleo', claims: { email: 'cleo@corp.example', groups: 'payroll' } },
];

type Json = Record<string, any>;
/** a query on Note.secret: only the secrets privilege may make it (Keeper, Administrator: support/users-project.ts's roles.json) */
const SECRET_QUERY = `/rest/Note?$filter=${encodeURIComponent('secret = "x"')}`;

describe('single sign-on with OpenID Connect, against a provider run locally', () => {
  let provider: TestProvider;
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  let tmp: ReturnType<typeof tempDir>;
  /** our server: http://127.0.0.1:PORT */
  let ours: string;
  // the sessions' and sign-ins' clock, moved by the expiry test
  let skew = 0;

  before(async () => {
    provider = await testProvider(ACCOUNTS);
    tmp = tempDir();
    // a project whose auth.json lists the providers, read by the project loader at the start
    const dir = join(tmp.dir, 'project');
    mkdirSync(dir);
    writeFileSync(join(dir, 'model.json'), JSON.stringify(USERS_MODEL));
    writeFileSync(join(dir, 'roles.json'), JSON.stringify(USERS_ROLES));
    writeFileSync(join(dir, 'auth.json'), JSON.stringify({
      oidc: [
        { name: 'corp', issuer: provider.issuer, clientId: 'dataset', clientSecretEnv: SECRET_ENV, roles: { claim: 'groups', map: { admins: ['Administrator'], payroll: ['Keeper'] }, default: ['Editor'] } },
        { name: 'mail', issuer: provider.issuer, clientId: 'public-dataset', scopes: ['openid', 'email', 'profile'], userNameClaim: 'email' },
        { name: 'wrongsecret', issuer: provider.issuer, clientId: 'dataset', clientSecret: 'not-the-secret' },
        // (a port nothing listens on: the provider cannot be reached)
        { name: 'down', issuer: 'http://127.0.0.1:9', clientId: 'dataset', clientSecret: SECRET },
      ],
    }));
    process.env[SECRET_ENV] = SECRET;
    ds = await openProject(dir, { db: await testDatabase(join(tmp.dir, 'oidc.sqlite')), poolSize: 4, sessions: { now: () => Date.now() + skew } });
    app = await buildServer(ds, { logLevel: 'silent' });
    await app.listen({ host: '127.0.0.1', port: 0 });
    ours = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const callback = (name: string) => `${ours}/rest/$oidc/${name}/callback`;
    provider.start([
      { client_id: 'dataset', client_secret: SECRET, redirect_uris: [callback('corp'), callback('wrongsecret')], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' },
      { client_id: 'public-dataset', redirect_uris: [callback('mail')], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' },
    ]);
  });

  after(async () => {
    delete process.env[SECRET_ENV];
    await app?.close();
    await ds?.close();
    await provider?.close();
    tmp?.remove();
  });

  /** A sign-in's callback URL, the browser having signed in at the provider as `login`. */
  const callbackFor = async (browser: TestBrowser, login: string, path = '/rest/$oidc/corp/login?redirect=/rest/$info', options: { abort?: boolean } = {}) =>
    browser.signInAtProvider(`${ours}${path}`, login, ours, options);
  const json = async (browser: TestBrowser, path: string): Promise<{ status: number; body: Json }> => {
    const seen = await browser.fetch(`${ours}${path}`);
    return { status: seen.status, body: JSON.parse(seen.text) as Json };
  };
  const sessionCookie = (browser: TestBrowser) => browser.cookie(ours, `4DSID_${ds.model.name}`);
  const errorOf = (seen: { text: string }) => (JSON.parse(seen.text) as Json).__ERROR[0] as { errCode: number; message: string };

  it('lists the providers for a login page: GET /rest/$oidc', async () => {
    const { status, body } = await json(new TestBrowser(), '/rest/$oidc');
    assert.equal(status, 200);
    assert.deepEqual(body.providers.map((p: Json) => p.name), ['corp', 'mail', 'wrongsecret', 'down']);
    assert.equal(body.providers[0].login, '/rest/$oidc/corp/login');
  });

  it('describes the sign-in routes in the OpenAPI document', async () => {
    const { body } = await json(new TestBrowser(), '/rest/$openapi');
    const result = await new Validator().validate(body as never);
    assert.equal(result.valid, true, JSON.stringify(result.errors));
    for (const path of ['/rest/$oidc', '/rest/$oidc/{provider}/login', '/rest/$oidc/{provider}/callback']) assert.ok(body.paths[path], path);
  });

  it('signs in with the code flow and PKCE: the groups claim mapped to roles, the default role added, the session logged in with a new cookie', async () => {
    const browser = new TestBrowser();
    // a guest first: the cookie it holds before the sign-in is worth nothing after it
    await browser.fetch(`${ours}/rest/$info`);
    const before = sessionCookie(browser);
    const login = await browser.fetch(`${ours}/rest/$oidc/corp/login?redirect=/rest/$info`);
    assert.equal(login.status, 302);
    const authorize = new URL(login.location ?? '');
    assert.equal(authorize.origin, provider.issuer);
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authorize.searchParams.get('scope'), 'openid profile email');
    assert.ok(authorize.searchParams.get('state') && authorize.searchParams.get('nonce') && authorize.searchParams.get('code_challenge'));
    assert.equal(authorize.searchParams.get('redirect_uri'), `${ours}/rest/$oidc/corp/callback`);
    // the browser binding: a cookie of its own, for the sign-in routes only, while a sign-in may wait
    const binding = login.headers.getSetCookie().find((c) => c.startsWith('oidc_'));
    assert.match(binding ?? '', /^oidc_4DSID_\w+=[0-9a-f]{32}; Max-Age=600; Path=\/rest\/\$oidc; HttpOnly; SameSite=Lax$/);

    const callback = await browser.signInAtProvider(login.location ?? '', 'ada', ours);
    const back = await browser.fetch(callback);
    assert.equal(back.status, 302, back.text);
    assert.equal(back.location, `${ours}/rest/$info`);
    const after = sessionCookie(browser);
    assert.ok(after !== undefined && after !== before, 'the sign-in sets a new session cookie');
    const { body } = await json(browser, '/rest/$info');
    assert.equal(body.session.userName, 'ada');
    // admins → Administrator (admin, which includes edit and secrets), and the default Editor (edit)
    assert.deepEqual([...body.session.privileges].sort(), ['admin', 'edit', 'secrets']);
    // a query only the secrets privilege may make (admin includes it); a guest may not
    assert.equal((await json(browser, SECRET_QUERY)).status, 200);
    assert.equal((await json(new TestBrowser(), SECRET_QUERY)).status, 401);
  });

  it('gives the default roles alone when no claim value is mapped; a string claim maps as one value; userNameClaim picks the name', async () => {
    const bert = new TestBrowser();
    assert.equal((await bert.fetch(await callbackFor(bert, 'bert'))).status, 302);
    const info = (await json(bert, '/rest/$info')).body.session;
    assert.equal(info.userName, 'bert');
    assert.deepEqual(info.privileges, ['edit']);
    assert.equal((await json(bert, SECRET_QUERY)).status, 403);
    // cleo has no preferred_username: her e-mail names her; her groups is a string
    const cleo = new TestBrowser();
    assert.equal((await cleo.fetch(await callbackFor(cleo, 'cleo'))).status, 302);
    const cleoInfo = (await json(cleo, '/rest/$info')).body.session;
    assert.equal(cleoInfo.userName, 'cleo@corp.example');
    assert.deepEqual([...cleoInfo.privileges].sort(), ['edit', 'secrets']);
  });

  it('signs in a public client (PKCE alone, no secret), to the default redirect, the Data Explorer', async () => {
    const browser = new TestBrowser();
    const back = await browser.fetch(await callbackFor(browser, 'ada', '/rest/$oidc/mail/login'));
    assert.equal(back.status, 302, back.text);
    assert.equal(back.location, `${ours}/$explorer`);
    const info = (await json(browser, '/rest/$info')).body.session;
    // userNameClaim: email; no roles configured: a user holding no privilege
    assert.equal(info.userName, 'ada@corp.example');
    assert.deepEqual(info.privileges, []);
  });

  it('refuses a callback whose state names no sign-in (400, 7091), and leaves the session as it was', async () => {
    const browser = new TestBrowser();
    const callback = new URL(await callbackFor(browser, 'ada'));
    callback.searchParams.set('state', 'not-a-state-we-gave');
    const seen = await browser.fetch(callback.href);
    assert.equal(seen.status, 400);
    assert.equal(errorOf(seen).errCode, 7091);
    assert.match(errorOf(seen).message, /names no sign-in/);
    assert.equal((await json(browser, '/rest/$info')).body.session.userName, '');
    // no state at all
    const none = await browser.fetch(`${ours}/rest/$oidc/corp/callback?code=x`);
    assert.equal(none.status, 400);
    assert.match(errorOf(none).message, /carries no state/);
  });

  it('takes a callback once: the same callback again is refused (400, 7091)', async () => {
    const browser = new TestBrowser();
    const callback = await callbackFor(browser, 'ada');
    assert.equal((await browser.fetch(callback)).status, 302);
    const again = await browser.fetch(callback);
    assert.equal(again.status, 400);
    assert.equal(errorOf(again).errCode, 7091);
  });

  it('refuses a callback that comes after the sign-in expired (10 minutes)', async () => {
    const browser = new TestBrowser();
    const callback = await callbackFor(browser, 'ada');
    skew = 11 * 60_000;
    try {
      const seen = await browser.fetch(callback);
      assert.equal(seen.status, 400);
      assert.equal(errorOf(seen).errCode, 7091);
      assert.match(errorOf(seen).message, /too late/);
    } finally {
      skew = 0;
    }
    assert.equal((await json(browser, '/rest/$info')).body.session.userName, '');
  });

  it('refuses a callback brought by another browser than the one that started it (a sign-in link handed to a victim)', async () => {
    const attacker = new TestBrowser();
    const callback = await callbackFor(attacker, 'bert');
    const victim = new TestBrowser();
    const seen = await victim.fetch(callback);
    assert.equal(seen.status, 400);
    assert.match(errorOf(seen).message, /another browser/);
    assert.equal((await json(victim, '/rest/$info')).body.session.userName, '');
  });

  it("refuses a callback that comes to another provider's route than the one the sign-in was started with", async () => {
    const browser = new TestBrowser();
    const callback = (await callbackFor(browser, 'ada')).replace('/corp/callback', '/mail/callback');
    const seen = await browser.fetch(callback);
    assert.equal(seen.status, 400);
    assert.match(errorOf(seen).message, /started with "corp"/);
  });

  it('signs a signed-in session in again as another user: the user changes, with a new cookie', async () => {
    const browser = new TestBrowser();
    await browser.fetch(await callbackFor(browser, 'ada'));
    const ada = sessionCookie(browser);
    // (signed out at the provider, whose session would sign ada in again without asking)
    browser.forget(provider.issuer);
    await browser.fetch(await callbackFor(browser, 'bert'));
    assert.notEqual(sessionCookie(browser), ada);
    assert.equal((await json(browser, '/rest/$info')).body.session.userName, 'bert');
  });

  it('answers 404 (7090) for a provider auth.json does not list', async () => {
    for (const path of ['/rest/$oidc/nope/login', '/rest/$oidc/nope/callback?state=x&code=y']) {
      const seen = await new TestBrowser().fetch(`${ours}${path}`);
      assert.equal(seen.status, 404);
      assert.equal(errorOf(seen).errCode, 7090);
      assert.match(errorOf(seen).message, /corp, mail, wrongsecret, down/);
    }
  });

  it("names the provider's own error in its callback (access_denied: 401, 7092), the session unchanged", async () => {
    const browser = new TestBrowser();
    const callback = await callbackFor(browser, 'ada', undefined, { abort: true });
    assert.equal(new URL(callback).searchParams.get('error'), 'access_denied');
    const seen = await browser.fetch(callback);
    assert.equal(seen.status, 401);
    assert.equal(errorOf(seen).errCode, 7092);
    assert.match(errorOf(seen).message, /access_denied/);
    assert.equal((await json(browser, '/rest/$info')).body.session.userName, '');
  });

  it('answers 502 (7093) when the provider cannot be reached, or refuses our client at its token endpoint', async () => {
    const down = await new TestBrowser().fetch(`${ours}/rest/$oidc/down/login`);
    assert.equal(down.status, 502);
    assert.equal(errorOf(down).errCode, 7093);
    const browser = new TestBrowser();
    const refused = await browser.fetch(await callbackFor(browser, 'ada', '/rest/$oidc/wrongsecret/login'));
    assert.equal(refused.status, 502);
    assert.equal(errorOf(refused).errCode, 7093);
    assert.match(errorOf(refused).message, /invalid_client/);
    assert.equal((await json(browser, '/rest/$info')).body.session.userName, '');
  });

  it('refuses a redirect that is not a path of this server (400, 7094): no open redirect', async () => {
    for (const redirect of ['//evil.example/', 'https://evil.example/', '/\\evil.example', '\\\\evil.example', 'javascript:alert(1)', '/.//evil.example', 'evil', '/a\tb']) {
      const seen = await new TestBrowser().fetch(`${ours}/rest/$oidc/corp/login?redirect=${encodeURIComponent(redirect)}`);
      assert.equal(seen.status, 400, redirect);
      assert.equal(errorOf(seen).errCode, 7094, redirect);
    }
    assert.equal(sameOriginPath('/$explorer?x=1#y'), '/$explorer?x=1#y');
    assert.equal(sameOriginPath('/a/../b'), '/b');
  });

  it('is guarded as the REST API is (a Host not ours: 421) and routes no HEAD (which would start a sign-in)', async () => {
    // (fetch sends the URL's host: inject writes another)
    const foreign = await app.inject({ url: '/rest/$oidc/corp/login', headers: { host: 'evil.example' } });
    assert.equal(foreign.statusCode, 421);
    const head = await new TestBrowser().fetch(`${ours}/rest/$oidc/corp/login`, { method: 'HEAD' });
    assert.equal(head.status, 404);
    assert.equal(head.location, undefined);
  });

  it(`keeps at most ${MAX_PENDING_SIGN_INS_PER_ADDRESS} sign-ins waiting from one address (429 past it, with Retry-After)`, async () => {
    // (the sign-ins the tests above left waiting count too: the loop stops at the first refusal)
    let refused: Awaited<ReturnType<TestBrowser['fetch']>> | undefined;
    for (let i = 0; i <= MAX_PENDING_SIGN_INS_PER_ADDRESS && refused === undefined; i++) {
      const seen = await new TestBrowser().fetch(`${ours}/rest/$oidc/corp/login`);
      if (seen.status !== 302) refused = seen;
    }
    assert.ok(refused, 'a sign-in past the cap is refused');
    assert.equal(refused.status, 429);
    assert.equal(errorOf(refused).errCode, 7044);
    assert.equal(refused.headers.get('retry-after'), '60');
    // once they expire, sign-ins are taken again (the expired ones swept)
    skew = 11 * 60_000;
    try {
      assert.equal((await new TestBrowser().fetch(`${ours}/rest/$oidc/corp/login`)).status, 302);
    } finally {
      skew = 0;
    }
  });
});

describe("auth.json's oidc section: mistakes stop the start, naming the file, the JSON path and what is wrong", () => {
  const good = { name: 'corp', issuer: 'https://login.corp.example', clientId: 'dataset' };
  const refused = (oidc: unknown, env: NodeJS.ProcessEnv = {}): string => {
    try {
      authConfig({ oidc }, '/p/auth.json', env);
    } catch (e) {
      assert.equal((e as Error).name, 'AuthFileError');
      return (e as Error).message;
    }
    assert.fail('accepted');
  };

  it('reads a provider with its defaults', () => {
    const [p] = authConfig({ oidc: [good] }, 'auth.json', {}).oidc;
    assert.deepEqual(p.scopes, ['openid', 'profile', 'email']);
    assert.equal(p.roles.claim, 'groups');
    assert.deepEqual(p.roles.default, []);
    assert.equal(p.clientSecret, undefined);
    assert.equal(authConfig({}, 'auth.json', {}).oidc.length, 0);
    assert.deepEqual(NO_AUTH.oidc, []);
  });

  it('stops the start of a project whose auth.json has a mistake, with the closest setting', async () => {
    const tmp = tempDir();
    try {
      writeFileSync(join(tmp.dir, 'model.json'), JSON.stringify(USERS_MODEL));
      const file = join(tmp.dir, 'auth.json');
      writeFileSync(file, JSON.stringify({ oidc: [{ ...good, issuser: 'x' }] }));
      await assert.rejects(openProject(tmp.dir, { db: join(tmp.dir, 'never.sqlite') }), (e: Error) => e.name === 'ProjectError'
        && e.message === `${file}: $.oidc[0].issuser is not a setting, did you mean 'issuer'?: the settings are name, issuer, clientId, clientSecret, clientSecretEnv, scopes, userNameClaim, roles, redirectUri`);
    } finally {
      tmp.remove();
    }
  });

  it('refuses each kind of mistake', () => {
    assert.match(refused({}), /^\/p\/auth\.json: \$\.oidc must be an array/);
    assert.match(refused([{ ...good, name: 'a b' }]), /\$\.oidc\[0\]\.name is "a b": .*letters, digits/);
    assert.match(refused([good, { ...good, name: 'CORP' }]), /\$\.oidc\[1\]\.name is "CORP", the name of the provider at \[0\] too/);
    assert.match(refused([{ ...good, issuer: 'http://login.corp.example' }]), /\$\.oidc\[0\]\.issuer .*over https/);
    assert.match(refused([{ ...good, issuer: 'login.corp.example' }]), /\$\.oidc\[0\]\.issuer .*not an absolute URL/);
    assert.match(refused([{ ...good, clientId: '' }]), /\$\.oidc\[0\]\.clientId must be a non-empty string/);
    assert.match(refused([{ ...good, clientSecret: 's', clientSecretEnv: 'S' }]), /gives both clientSecret and clientSecretEnv/);
    assert.match(refused([{ ...good, clientSecretEnv: 'CORP_SECRET' }]), /\$\.oidc\[0\]\.clientSecretEnv names the environment variable CORP_SECRET, which is not set/);
    assert.match(refused([{ ...good, scopes: ['profile'] }]), /\$\.oidc\[0\]\.scopes must include "openid"/);
    assert.match(refused([{ ...good, scopes: ['openid', 'a b'] }]), /\$\.oidc\[0\]\.scopes\[1\] is "a b"/);
    assert.match(refused([{ ...good, roles: { claim: 'groups', mapp: {} } }]), /\$\.oidc\[0\]\.roles\.mapp is not a setting, did you mean 'map'\?/);
    assert.match(refused([{ ...good, roles: { map: { hr: 'Payroll' } } }]), /\$\.oidc\[0\]\.roles\.map\["hr"\] must be an array of strings/);
    assert.match(refused([{ ...good, redirectUri: 'https://data.example/rest/$oidc/other/callback' }]), /\$\.oidc\[0\]\.redirectUri .*must end with \/\$oidc\/corp\/callback/);
    // a secret from the environment, and a claim value such as __proto__ kept as a key like another
    const [p] = authConfig({ oidc: [{ ...good, clientSecretEnv: 'CORP_SECRET', roles: { map: JSON.parse('{"__proto__": ["Editor"]}') } }] }, 'auth.json', { CORP_SECRET: 's3' }).oidc;
    assert.equal(p.clientSecret, 's3');
    assert.deepEqual(p.roles.map.__proto__, ['Editor']);
  });
});
