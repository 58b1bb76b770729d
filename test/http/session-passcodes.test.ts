// 4D's one-time passcodes (Session.createOTP, 20 R9) and $4DSID: a request whose URL carries a
// passcode becomes that session once, on any instance, until the passcode expires; and
// session().promote()/demote(), 4D 21's privileges for the running code only.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { coreOf } from '../../src/datastore/datastore.js';
import { hashOf } from '../../src/datastore/sessions/tokens.js';
import { insertOtp } from '../../src/storage/system-tables/users.js';
import { addUser, logIn, openUsersProject, type UsersProject } from '../support/users-project.js';

const DATASTORE_CLASS = `import { Datastore, exposed, params, session } from 'dataset-rest';
export default class DataStore extends Datastore {
  @exposed
  @params('seconds?: number')
  passcode(seconds?: number): string {
    return session().createOTP(seconds);
  }

  @exposed
  @params()
  whoAmI(): { userName: string; privileges: string[]; storage: unknown } {
    return { userName: session().userName, privileges: session().getPrivileges(), storage: session().storage };
  }

  @exposed
  @params('value: text')
  remember(value: string): boolean {
    session().storage.remembered = value;
    return true;
  }

  @exposed
  @params()
  async withPromotion(): Promise<unknown> {
    const before = session().hasPrivilege('secrets');
    const id = session().promote('secrets');
    const note = await this.dataClass('Note')!.all().first();
    const during = { has: session().hasPrivilege('secrets'), listed: session().getPrivileges().includes('secrets'), secret: note?.get('secret') ?? null };
    session().demote(id);
    return { before, during, after: session().hasPrivilege('secrets') };
  }
}
`;

describe('one-time passcodes ($4DSID) and promote()', () => {
  let p: UsersProject;
  before(async () => {
    p = await openUsersProject(undefined, { 'package.json': JSON.stringify({ type: 'module' }), 'classes/DataStore.ts': DATASTORE_CLASS });
    await addUser(p.a, 'alice', 'alice-password', ['Editor']);
    const note = p.a.ds.Note.new();
    note.set('text', 'hello');
    note.set('secret', 'hidden');
    await note.save();
  });
  after(() => p.close());

  const call = (fn: string, args: unknown[], cookie?: string, on = p.a) => on.request(`/rest/$catalog/${fn}`, 'POST', args, cookie === undefined ? {} : { cookie });
  const cookieOf = (res: { headers: Record<string, unknown> }) => String(res.headers['set-cookie'] ?? '').split(';')[0];

  it('resumes the session a passcode was made in, once, under a new cookie, on another instance too', async () => {
    const alice = await logIn(p.a, 'alice', 'alice-password');
    await call('remember', ['the blue door'], alice);
    const made = await call('passcode', [], alice);
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const passcode = made.body.result as string;
    assert.match(passcode, /^[0-9A-F]{8}-[0-9A-F]{4}-/);
    const b = await p.second();
    const resumed = await b.request(`/rest/Note?$top=1&$4DSID=${passcode}`);
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
    const cookie = cookieOf(resumed);
    assert.match(cookie, /=[0-9A-F]{32}$/);
    const who = await call('whoAmI', [], cookie, b);
    assert.equal(who.body.result.userName, 'alice');
    assert.deepEqual(who.body.result.privileges, ['edit']);
    assert.deepEqual(who.body.result.storage, { remembered: 'the blue door' });
    // once only
    const again = await p.a.request(`/rest/Note?$4DSID=${passcode}`);
    assert.equal(again.status, 401);
    assert.equal(again.body.__ERROR[0].errCode, 7076);
    // the link's holder has the session now: the cookie it was made under is worth nothing
    const old = await call('whoAmI', [], alice);
    assert.equal(old.body.result.userName, '');
  });

  it('refuses a passcode that is expired, unknown or not a UUID with 401 OTP_INVALID', async () => {
    const alice = await logIn(p.a, 'alice', 'alice-password');
    const id = (await call('whoAmI', [], alice)).body.result;
    assert.ok(id);
    const expired = '11111111-2222-3333-4444-555555555555';
    const session = await coreOf(p.a.ds).sessions.list(100);
    await insertOtp(coreOf(p.a.ds).storage, hashOf(expired), session[0].sessionID, Date.now() - 1000);
    for (const code of [expired, '99999999-2222-3333-4444-555555555555', 'not-a-passcode']) {
      const res = await p.a.request(`/rest/Note?$4DSID=${code}`);
      assert.equal(res.status, 401, code);
      assert.equal(res.body.__ERROR[0].errCode, 7076);
    }
  });

  it("takes $4DSID as no option of the query (it is the session's)", async () => {
    const res = await p.a.request('/rest/Note?$filter="ID>0"&$4DSID=');
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });

  it('gives a guest a passcode too: its session is kept for it', async () => {
    const made = await call('passcode', [30]);
    const guestCookie = cookieOf(made);
    assert.match(guestCookie, /=[0-9A-F]{32}$/);
    const resumed = await p.a.request(`/rest/Note?$4DSID=${made.body.result}`);
    assert.equal(resumed.status, 200);
  });

  it('promote() adds a privilege for the running code only: hasPrivilege counts it, getPrivileges does not list it', async () => {
    const alice = await logIn(p.a, 'alice', 'alice-password');
    const res = await call('withPromotion', [], alice);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.result, { before: false, during: { has: true, listed: false, secret: 'hidden' }, after: false });
    const who = await call('whoAmI', [], alice);
    assert.deepEqual(who.body.result.privileges, ['edit']);
  });
});
