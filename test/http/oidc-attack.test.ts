// A hostile client against single sign-on (issue 37's OpenID Connect flow), second review: a real
// provider run here (support/oidc-provider.ts) beside built-in users and API tokens, and each test
// states what a secure server does, so that a failing one is a finding (the review's report).
// Runs on both engines (testDatabase).

import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { MAX_PENDING_SIGN_INS_PER_ADDRESS } from '../../src/config/oidc.js';
import { coreOf, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { ERRORS } from '../../src/errors/registry.js';
import { buildServer } from '../../src/http/server.js';
import { openProject } from '../../src/project/open.js';
import { addressBlock } from '../../src/rest/scope/quotas.js';
import { tempDir, testDatabase } from '../support/helpers.js';
import { USERS_MODEL, USERS_ROLES } from '../support/users-project.js';
import { TestBrowser, testProvider, type TestProvider } from '../support/oidc-provider.js';

const SECRET = 'attack-client-secret-value';
const ACCOUNTS = [
  { sub: 'ada', claims: { preferred_username: 'ada', email: 'ada@corp.example', groups: ['staff'] } },
  { sub: 'bert', claims: { preferred_username: 'bert', groups: ['visitors'] } },
  // a provider account whose self-chosen name is the built-in administrator's, in another case
  { sub: 'mallory', claims: { preferred_username: 'Root', groups: ['visitors'] } },
  // names carrying a line break, a right-to-left override, a zero-width space
  { sub: 'ctrl', claims: { preferred_username: 'eve\nroot', groups: [] } },
  { sub: 'bidi', claims: { preferred_username: '\u202Etoor', groups: [] } },
  { sub: 'zw', claims: { preferred_username: 'root\u200B', groups: [] } },
  // no preferred_username, an e-mail the provider has not verified
  { sub: 'unverified', claims: { email: 'ceo@corp.example', email_verified: false, groups: [] } },
];

type Json = Record<string, any>;
const REGISTERED = new Set(Object.values(ERRORS).map((e) => e.errCode));

describe('single sign-on under attack (second review)', () => {
  let provider: TestProvider;
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  let tmp: ReturnType<typeof tempDir>;
  let ours: string;
  const logLines: string[] = [];

  before(async () => {
    provider = await testProvider(ACCOUNTS);
    tmp = tempDir();
    const dir = join(tmp.dir, 'project');
    mkdirSync(dir);
    writeFileSync(join(dir, 'model.json'), JSON.stringify(USERS_MODEL));
    writeFileSync(join(dir, 'roles.json'), JSON.stringify(USERS_ROLES));
    writeFileSync(join(dir, 'auth.json'), JSON.stringify({
      users: { minPasswordLength: 8, lockout: { failures: 3, minutes: 5 } },
      oidc: [
        { name: 'corp', issuer: provider.issuer, clientId: 'dataset', clientSecret: SECRET, roles: { claim: 'groups', map: { admins: ['Administrator'] }, default: ['Editor'] } },
        { name: 'wrongsecret', issuer: provider.issuer, clientId: 'dataset', clientSecret: 'the-wrong-secret-value' },
      ],
    }));
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(fileURLToPath(new URL('../..', import.meta.url)), join(dir, 'node_modules', 'dataset-rest'), 'dir');
    ds = await openProject(dir, { db: await testDatabase(join(tmp.dir, 'oidc-attack.sqlite')), poolSize: 4 });
    const log = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
    app = await buildServer(ds, { log });
    await app.listen({ host: '127.0.0.1', port: 0 });
    ours = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const callback = (name: string) => `${ours}/rest/$oidc/${name}/callback`;
    provider.start([
      { client_id: 'dataset', client_secret: SECRET, redirect_uris: [callback('corp'), callback('wrongsecret')], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' },
    ]);
    const users = coreOf(ds).users;
    assert.ok(users, 'built-in users are on');
    await users.add('root', 'root-password', ['Administrator']);
    await users.add('ada', 'ada-password', ['Editor']);
  });

  after(async () => {
    await app?.close();
    await ds?.close();
    await provider?.close();
    tmp?.remove();
  });

  const cookieName = () => `4DSID_${ds.model.name}`;
  const bindingName = () => `oidc_${cookieName()}`;
  const callbackFor = (browser: TestBrowser, login: string, path = '/rest/$oidc/corp/login?redirect=/rest/$info') => browser.signInAtProvider(`${ours}${path}`, login, ours);
  const signIn = async (login: string): Promise<TestBrowser> => {
    const browser = new TestBrowser();
    const back = await browser.fetch(await callbackFor(browser, login));
    assert.equal(back.status, 302, back.text);
    return browser;
  };
  const get = async (browser: TestBrowser, path: string, headers: Record<string, string> = {}) => {
    const seen = await browser.fetch(`${ours}${path}`, { headers });
    return { status: seen.status, body: (seen.text === '' ? {} : JSON.parse(seen.text)) as Json, seen };
  };
  const post = async (browser: TestBrowser, path: string, body: unknown) => {
    const cookie = browser.cookie(ours, cookieName());
    const res = await fetch(`${ours}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(cookie ? { cookie: `${cookieName()}=${cookie}` } : {}) }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const whoIs = async (browser: TestBrowser) => (await get(browser, '/rest/$info')).body.session as { userName: string; privileges: string[] };

  // ---- identities: a provider's user named like a built-in user ----

  it("a provider's user named like a built-in administrator ('Root' ~ 'root') does not belong to the administrator's roles", async () => {
    const mallory = await signIn('mallory');
    const me = await whoIs(mallory);
    assert.equal(me.userName, 'Root');
    // roles.json-wise mallory is an Editor (the default) and no more...
    assert.deepEqual(me.privileges, ['edit']);
    // ...but the built-in $directory hooks look the session's user name up among the built-in users (by its fold)
    const belongs = await post(mallory, '/rest/$directory/currentUserBelongsTo', ['Administrator']);
    assert.equal(belongs.status, 200, JSON.stringify(belongs.body));
    assert.equal(belongs.body.result, false, "an SSO user who chose the name 'Root' belongs to the built-in root's Administrator role");
  });

  it("a provider's user named like a built-in user is not that built-in user to $directory/currentUser", async () => {
    const mallory = await signIn('mallory');
    const current = await get(mallory, '/rest/$directory/currentUser');
    assert.equal(current.status, 200);
    assert.notDeepEqual(current.body.result, { ID: 'root', userName: 'root', fullName: 'root' }, 'the SSO user Root is answered as the built-in user root');
  });

  it("an administrator's reset of the built-in user 'ada' does not log out the provider's user 'ada' (another identity)", async () => {
    const adaSso = await signIn('ada');
    assert.equal((await whoIs(adaSso)).userName, 'ada');
    await coreOf(ds).users?.setPassword('ada', 'reset-by-admin-1');
    assert.equal((await whoIs(adaSso)).userName, 'ada', "resetting the built-in ada's password ended the SSO ada's session");
  });

  for (const [login, what] of [['ctrl', 'a line break'], ['bidi', 'a right-to-left override'], ['zw', 'a zero-width space']]) {
    it(`a provider's user name carrying ${what} is refused or cleaned (as built-in names are)`, async () => {
      const browser = new TestBrowser();
      const back = await browser.fetch(await callbackFor(browser, login));
      if (back.status === 302) {
        const name = (await whoIs(browser)).userName;
        // eslint-disable-next-line no-control-regex -- what is looked for
        assert.doesNotMatch(name, /[\u0000-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/u, `${login}: the session's userName is ${JSON.stringify(name)}`);
      } else {
        assert.equal(back.status, 401, back.text);
        assert.equal(JSON.parse(back.text).__ERROR[0].errCode, 7092);
      }
    });
  }

  it('does not name a user by an e-mail the provider says is not verified', async () => {
    const browser = new TestBrowser();
    const back = await browser.fetch(await callbackFor(browser, 'unverified'));
    if (back.status === 302) assert.notEqual((await whoIs(browser)).userName, 'ceo@corp.example', 'an unverified e-mail became the session user name');
  });

  // ---- the browser binding, fixation, races ----

  it('a binding cookie value planted in the victim (cookie tossing) does not let an attacker sign the victim in as the attacker', async () => {
    // the attacker picks a binding value, and plants it in the victim's browser (a sibling
    // subdomain, or plain http: the cookie has neither a __Host- prefix nor, on http, Secure)
    const planted = 'a'.repeat(32);
    const attacker = new TestBrowser();
    const login = await attacker.fetch(`${ours}/rest/$oidc/corp/login?redirect=/rest/$info`, { headers: { cookie: `${bindingName()}=${planted}` } });
    assert.equal(login.status, 302);
    // the server kept the attacker's value instead of minting its own
    const callback = await attacker.signInAtProvider(login.location ?? '', 'bert', ours);
    const victim = new TestBrowser();
    const seen = await victim.fetch(callback, { headers: { cookie: `${bindingName()}=${planted}` } });
    const victimCookie = seen.headers.getSetCookie().find((c) => c.startsWith(`${cookieName()}=`));
    assert.notEqual(seen.status, 302, `the victim was signed in as bert by a planted binding value (${victimCookie?.split(';')[0]})`);
  });

  it('two callbacks of one sign-in at once: one signs in, the other is refused (400, 7091)', async () => {
    const browser = new TestBrowser();
    const callback = await callbackFor(browser, 'ada');
    const binding = browser.cookie(ours, bindingName());
    const once = () => fetch(callback, { redirect: 'manual', headers: { cookie: `${bindingName()}=${binding}` } });
    const answers = await Promise.all([once(), once(), once()]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [302, 400, 400]);
  });

  it('the cookie a browser held before signing in (one an attacker may have planted) is worth nothing after it', async () => {
    const fixed = new TestBrowser();
    await fixed.fetch(`${ours}/rest/$info`);
    const planted = fixed.cookie(ours, cookieName());
    assert.ok(planted);
    await fixed.fetch(await callbackFor(fixed, 'ada'));
    assert.notEqual(fixed.cookie(ours, cookieName()), planted);
    const res = await fetch(`${ours}/rest/$info`, { headers: { cookie: `${cookieName()}=${planted}` } });
    assert.equal(((await res.json()) as Json).session.userName, '');
  });

  it('a callback carrying an API token (Authorization: Bearer) either signs the browser in or is refused: never a 302 that signs nobody in', async () => {
    const made = await coreOf(ds).tokens?.create({ userName: 'root', name: 'ci' });
    assert.ok(made);
    const secret = (made as Json).token ?? (made as Json).secret;
    assert.equal(typeof secret, 'string', JSON.stringify(made));
    const browser = new TestBrowser();
    const callback = await callbackFor(browser, 'ada');
    const seen = await browser.fetch(callback, { headers: { authorization: `Bearer ${secret}` } });
    if (seen.status === 302) {
      assert.equal((await whoIs(browser)).userName, 'ada', 'the callback answered 302 (signed in) but the browser is a guest: the sign-in went to the token\'s throw-away session');
    } else {
      assert.ok(REGISTERED.has(JSON.parse(seen.text).__ERROR[0].errCode));
    }
  });

  // ---- the pending sign-ins' bounds ----

  it(`counts the pending sign-ins of an IPv6 client by its /64, as the login throttle does (${MAX_PENDING_SIGN_INS_PER_ADDRESS} at most)`, async () => {
    let refused: number | undefined;
    for (let i = 1; i <= MAX_PENDING_SIGN_INS_PER_ADDRESS + 1 && refused === undefined; i++) {
      const res = await app.inject({ url: '/rest/$oidc/corp/login', remoteAddress: `2001:db8:1:2::${i.toString(16)}` });
      if (res.statusCode !== 302) refused = res.statusCode;
    }
    assert.equal(refused, 429, `${MAX_PENDING_SIGN_INS_PER_ADDRESS + 1} sign-ins were kept for one /64 (a client drawing a new address each time fills the global cap of 10,000 alone)`);
  });

  it("starts no sign-in for another site's image or script (a page of 30 <img> tags per visitor fills the global cap with others' browsers)", async () => {
    const res = await app.inject({
      url: '/rest/$oidc/corp/login',
      remoteAddress: '10.9.9.9',
      headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' },
    });
    assert.notEqual(res.statusCode, 302, "another site's <img> started a sign-in (a pending row, a binding cookie)");
    assert.ok(REGISTERED.has(JSON.parse(res.body).__ERROR[0].errCode));
  });

  // ---- secrets and errors ----

  it("writes neither the client secret nor a callback's code into the server log", async () => {
    const browser = new TestBrowser();
    const callback = await callbackFor(browser, 'ada', '/rest/$oidc/wrongsecret/login');
    const code = new URL(callback).searchParams.get('code') ?? '';
    assert.ok(code.length > 10);
    const refused = await browser.fetch(callback);
    assert.equal(refused.status, 502);
    const log = logLines.join('');
    assert.ok(!log.includes('the-wrong-secret-value') && !log.includes(SECRET), 'a client secret is in the log');
    assert.ok(!log.includes(code), "the callback's authorization code is in the log (its URL, logged with the 502)");
  });
});

describe('addressBlock on odd addresses', () => {
  it('one address in other spellings (upper case, zeros written out) is one block', () => {
    assert.equal(addressBlock('2001:DB8:0:0:1::1'), addressBlock('2001:db8::1:0:0:1'));
    assert.equal(addressBlock('2001:0db8:0000:0000::1'), '2001:db8:0:0::/64');
    assert.equal(addressBlock('::'), '0:0:0:0::/64');
    assert.equal(addressBlock('fe80::1%eth0'), addressBlock('fe80::2%eth1'));
  });

  it('an IPv4-mapped address is its IPv4 client, whatever the case', () => {
    assert.equal(addressBlock('::FFFF:10.0.0.1'), addressBlock('::ffff:10.0.0.1'));
    assert.equal(addressBlock('::ffff:10.0.0.1'), addressBlock('10.0.0.1'), 'the IPv4 client and its IPv4-mapped form are counted apart');
  });

  it('IPv4-mapped addresses written in hex are not all one block (0:0:0:0::/64, with ::1 and every mapped client)', () => {
    assert.notEqual(addressBlock('::ffff:a00:1'), addressBlock('::ffff:a00:2'));
    assert.notEqual(addressBlock('::ffff:a00:1'), addressBlock('::1'));
  });
});
