// The Data Explorer's administration (issue 37), in Chromium, over a project with built-in users
// (auth.json {"users": true}) and a roles.json with roles Editor, Keeper and Administrator: only an
// administrator sees it; it adds a user, resets a password (proved by logging in as that user over
// REST), changes roles and removes a user; creates an API token whose one-time secret, read from
// the page, works as a Bearer token (with the privileges ticked, no more), and revokes it (401
// after); and shows roles.json as a matrix whose cells are what the server does. Mistakes show the
// server's message where they were made, and nothing is made. Each view passes axe-core, wide and
// at a phone's width. Screenshots: test-results/explorer/admin-*.png.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { coreOf } from '../../src/datastore/datastore.js';
import { explorerServer, launchBrowser, logInThroughDialog, openExplorer, type ExplorerPage, type ExplorerServer } from '../support/browser.js';
import { tempDir } from '../support/helpers.js';
import { writeLiveProject } from '../support/live-project.js';
import { USERS_MODEL, USERS_ROLES } from '../support/users-project.js';

/** the users project's roles.json, with a dataclass function editors run and that promotes to secrets */
const ROLES = {
  ...USERS_ROLES,
  permissions: { allowed: [...USERS_ROLES.permissions.allowed, { applyTo: 'Note.tally', type: 'method', execute: ['edit'], promote: ['secrets'] }] },
};

const CLASSES = {
  Note: `import { DataClass, exposed, params } from 'dataset-rest';
export default class Note extends DataClass {
  @exposed
  @params()
  tally(): string { return 'counted'; }
}
`,
  Tools: `import { exposed, params, Singleton } from 'dataset-rest';
export default class Tools extends Singleton {
  @exposed
  @params()
  ping(): string { return 'pong'; }
}
`,
};

let browser: Browser;
let server: ExplorerServer;
const project = tempDir('dataset-rest-explorer-admin-');

before(async () => {
  writeLiveProject(project.dir, USERS_MODEL, ROLES, CLASSES);
  writeFileSync(join(project.dir, 'auth.json'), JSON.stringify({ users: true }));
  browser = await launchBrowser();
  server = await explorerServer({ project: project.dir, roles: join(project.dir, 'roles.json') });
  const users = coreOf(server.ds).users!;
  await users.add('root', 'root-password', ['Administrator']);
  await users.add('ed', 'ed-password', ['Editor']);
  const note = server.ds.Note.new();
  note.set('text', 'hello');
  note.set('secret', 'hidden');
  await note.save();
});
after(async () => {
  await browser?.close();
  await server?.close();
  project.remove();
});

/** axe-core, the accessibility checker, run in the page (evaluated over the DevTools protocol: the page's CSP allows no injected script) */
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(`axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] })
    .then((r) => r.violations.flatMap((v) => v.nodes.map((n) => v.id + ' at ' + n.target.join(' ') + ': ' + n.failureSummary)))`) as Promise<string[]>;
}

/** CSP violations and exceptions (a 4xx load is an expected refusal: a probe of $roles, a wrong password; 501 is a project without built-in users) */
function assertClean(x: ExplorerPage): void {
  assert.deepEqual(x.problems.filter((p) => !/Failed to load resource: the server responded with a status of (4\d\d|501)/.test(p)), []);
}

async function open(options: { width?: number; hash?: string } = {}): Promise<ExplorerPage> {
  const x = await openExplorer(browser, server, { width: options.width, height: 800, hash: options.hash });
  x.page.setDefaultTimeout(8000);
  return x;
}

/** REST as a script would call it: over the socket, with no cookie unless given */
async function call(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.origin}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}

const authentify = (userName: string, password: string) => call('/rest/$catalog/authentify', { body: [{ userName, password }] });

async function openAdministration(page: Page, tab: 'Users' | 'Tokens' | 'Roles'): Promise<void> {
  if (await page.getByRole('button', { name: 'Dataclasses' }).isVisible()) await page.getByRole('button', { name: 'Dataclasses' }).click();
  await page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'Administration' }).click();
  await page.getByRole('heading', { level: 2, name: 'Administration' }).waitFor();
  await page.getByRole('navigation', { name: 'Administration views' }).getByRole('link', { name: tab, exact: true }).click();
  await page.getByRole('heading', { level: 3, name: tab === 'Tokens' ? 'API tokens' : tab === 'Roles' ? 'Roles and permissions' : 'Users' }).waitFor();
}

const userRow = (page: Page, name: string) => page.getByTestId('users-table').locator(`tr[data-user="${name}"]`);

describe('who sees the administration', () => {
  it('a guest and an editor see no Administration entry, and #/$admin/users tells them it is for administrators', async () => {
    const x = await open();
    await x.page.getByRole('navigation', { name: 'Dataclasses' }).getByRole('link', { name: /^Note/ }).waitFor();
    assert.equal(await x.page.getByRole('navigation', { name: 'Administration' }).count(), 0, 'a guest');
    await logInThroughDialog(x.page, 'ed', 'ed-password');
    // (the session's probe of $roles is answered 403: still no entry)
    await x.page.waitForTimeout(300);
    assert.equal(await x.page.getByRole('navigation', { name: 'Administration' }).count(), 0, 'an editor');
    await x.page.evaluate(() => {
      location.hash = '#/$admin/users';
    });
    await x.page.getByRole('alert').getByText(/for administrators/).waitFor();
    assert.equal(await x.page.getByTestId('users-table').count(), 0);
    assert.equal(await x.page.getByRole('dialog', { name: 'Log in' }).isVisible(), false, 'the probe opens no login dialog');
    await x.shot('admin-not-for-editors');
    assertClean(x);
    await x.context.close();
  });

  it('an administrator sees it once logged in, and loses it on logging out', async () => {
    const x = await open();
    await logInThroughDialog(x.page, 'root', 'root-password');
    const entry = x.page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'Administration' });
    await entry.waitFor();
    await x.page.getByRole('button', { name: 'Log out' }).click();
    await x.page.getByRole('banner').getByRole('button', { name: 'Log in' }).waitFor();
    await entry.waitFor({ state: 'detached' });
    assertClean(x);
    await x.context.close();
  });
});

describe('users', () => {
  it('lists the users, adds one with roles, refuses a name taken (nothing added), resets a password, changes roles, removes a user after asking', async () => {
    const x = await open();
    await logInThroughDialog(x.page, 'root', 'root-password');
    await openAdministration(x.page, 'Users');
    await userRow(x.page, 'root').waitFor();
    assert.match(await userRow(x.page, 'root').innerText(), /Administrator/);
    assert.match(await userRow(x.page, 'ed').innerText(), /Editor/);

    // add dan, an Editor
    const form = x.page.getByRole('form', { name: 'Add a user' });
    await form.getByLabel('User name').fill('dan');
    await form.getByLabel('Password').fill('dan-password');
    await form.getByRole('group', { name: 'Roles' }).getByLabel('Editor').check();
    await x.page.getByRole('button', { name: 'Add user' }).click();
    await x.page.getByTestId('users-status').getByText('Added dan.').waitFor();
    await userRow(x.page, 'dan').waitFor();
    assert.deepEqual((await coreOf(server.ds).users!.get('dan'))?.roles, ['Editor']);
    assert.equal(await form.getByLabel('User name').inputValue(), '', 'the form is emptied');
    assert.equal((await authentify('dan', 'dan-password')).status, 200);

    // a name taken (folded: ED is ed): the server's message under the form, what was typed kept, nobody added
    await form.getByLabel('User name').fill('ED');
    await form.getByLabel('Password').fill('another-password');
    await x.page.getByRole('button', { name: 'Add user' }).click();
    const refusal = x.page.locator('#add-user-error');
    await refusal.getByText(/./).waitFor();
    assert.match(await refusal.innerText(), /ed/i);
    assert.equal(await form.getByLabel('User name').inputValue(), 'ED');
    assert.equal((await coreOf(server.ds).users!.list()).length, 3);
    await x.shot('admin-users-refused');
    await form.getByLabel('User name').fill('');
    await form.getByLabel('Password').fill('');

    // reset dan's password: the old one is refused, the new one logs in
    await x.page.getByRole('button', { name: 'Reset password of dan' }).click();
    const reset = x.page.getByRole('dialog', { name: 'Reset the password of dan' });
    await reset.getByLabel('New password').fill('dan-new-password');
    await reset.getByRole('button', { name: 'Reset password' }).click();
    await x.page.getByTestId('users-status').getByText('The password of dan was reset.').waitFor();
    assert.equal(await reset.isVisible(), false);
    assert.equal((await authentify('dan', 'dan-password')).status, 401);
    const asDan = await authentify('dan', 'dan-new-password');
    assert.equal(asDan.status, 200, JSON.stringify(asDan.body));
    assert.equal(asDan.body.result.userName, 'dan');

    // roles: dan becomes a Keeper as well
    await x.page.getByRole('button', { name: 'Change roles of dan' }).click();
    const roles = x.page.getByRole('dialog', { name: 'Change the roles of dan' });
    assert.equal(await roles.getByLabel('Editor').isChecked(), true);
    await roles.getByLabel('Keeper').check();
    await roles.getByRole('button', { name: 'Save roles' }).click();
    await x.page.getByTestId('users-status').getByText(/dan now has the roles Editor, Keeper/).waitFor();
    assert.deepEqual([...(await coreOf(server.ds).users!.get('dan'))!.roles].sort(), ['Editor', 'Keeper']);
    assert.match(await userRow(x.page, 'dan').innerText(), /Editor, Keeper/);
    await x.shot('admin-users');

    // remove: asked first (Cancel keeps the user), then gone
    await coreOf(server.ds).users!.add('temp', 'temp-password', []);
    await x.page.getByRole('button', { name: 'Read again' }).click();
    await x.page.getByRole('button', { name: 'Remove temp' }).click();
    const confirm = x.page.getByRole('alertdialog', { name: 'Remove temp?' });
    await confirm.waitFor();
    await x.shot('admin-users-remove');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    assert.ok(await coreOf(server.ds).users!.get('temp'));
    await x.page.getByRole('button', { name: 'Remove temp' }).click();
    await confirm.getByRole('button', { name: 'Remove' }).click();
    await x.page.getByTestId('users-status').getByText('Removed temp.').waitFor();
    await userRow(x.page, 'temp').waitFor({ state: 'detached' });
    assert.equal(await coreOf(server.ds).users!.get('temp'), undefined);
    assertClean(x);
    await x.context.close();
  });
});

describe('API tokens', () => {
  it('creates a token for a user with some of its privileges, shows the secret once, and it works as a Bearer token until revoked', async () => {
    await coreOf(server.ds).users!.add('kate', 'kate-password', ['Keeper']);
    const x = await open();
    await logInThroughDialog(x.page, 'root', 'root-password');
    await openAdministration(x.page, 'Tokens');

    // a name the server refuses (over 100 characters): its message under the form, no token made
    const form = x.page.getByRole('form', { name: 'Create a token' });
    await form.getByLabel('User', { exact: true }).selectOption('kate');
    await form.getByLabel('Name', { exact: true }).fill('x'.repeat(101));
    await x.page.getByRole('button', { name: 'Create token' }).click();
    await x.page.locator('#create-token-error').getByText(/name/).waitFor();
    assert.equal((await coreOf(server.ds).tokens!.list()).length, 0);
    assert.equal(await x.page.getByTestId('token-secret').count(), 0);

    // kate holds edit and secrets; the token gets edit only, for 30 days
    const privileges = form.getByRole('group', { name: 'Privileges' });
    assert.equal(await privileges.getByLabel('edit').isChecked(), true);
    assert.equal(await privileges.getByLabel('secrets').isChecked(), true);
    await privileges.getByLabel('secrets').uncheck();
    await form.getByLabel('Name', { exact: true }).fill('sync job');
    await form.getByLabel('Expires').selectOption('30');
    await x.page.getByRole('button', { name: 'Create token' }).click();
    const secretField = x.page.getByTestId('token-secret');
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    assert.match(secret, /^dsr_[A-Za-z0-9_-]{43}$/);
    await x.page.getByText('Copy it now: it will not be shown again.').waitFor();
    await x.page.getByRole('button', { name: 'Copy' }).click();
    await x.page.getByTestId('token-secret-box').getByRole('status').getByText(/./).waitFor();

    // the token acts as kate with edit only: it reads notes, not their secret, and writes
    const bearer = { authorization: `Bearer ${secret}` };
    const read = await call('/rest/Note', { headers: bearer });
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.equal(read.body.__ENTITIES[0].text, 'hello');
    assert.equal(read.body.__ENTITIES[0].secret, undefined);
    const write = await call('/rest/Note?$method=update', { body: { text: 'by token' }, headers: bearer });
    assert.equal(write.status, 200, JSON.stringify(write.body));

    const row = x.page.getByTestId('tokens-table').locator('tr', { hasText: 'sync job' });
    await row.waitFor();
    const [token] = await coreOf(server.ds).tokens!.list('kate');
    assert.deepEqual(token.privileges, ['edit']);
    assert.ok(token.expires && Math.abs(Date.parse(token.expires) - Date.now() - 30 * 86_400_000) < 60_000);
    // its last use shows after a read again
    await x.page.getByRole('button', { name: 'Read again' }).click();
    await row.locator('time').nth(2).waitFor();
    const cells = await row.locator('th, td').allInnerTexts();
    assert.equal(cells[0], 'sync job');
    assert.equal(cells[1], 'kate');
    assert.equal(cells[2], 'edit');
    assert.notEqual(cells[4], 'never');
    assert.notEqual(cells[5], 'never');
    await x.shot('admin-tokens-secret');
    assert.deepEqual(await accessibilityViolations(x.page), [], 'the tokens view with the secret shown');

    // once: Done takes the secret away, and no answer of the server has it again
    await x.page.getByRole('button', { name: 'Done' }).click();
    await secretField.waitFor({ state: 'detached' });
    await x.page.reload();
    await x.page.getByTestId('tokens-table').locator('tr', { hasText: 'sync job' }).waitFor();
    assert.ok(!(await x.page.content()).includes(secret));
    await x.shot('admin-tokens');

    // revoke: asked first, then 401 at once
    await x.page.getByRole('button', { name: 'Revoke sync job of kate' }).click();
    const confirm = x.page.getByRole('alertdialog', { name: 'Revoke “sync job”?' });
    await confirm.waitFor();
    await x.shot('admin-tokens-revoke');
    await confirm.getByRole('button', { name: 'Revoke' }).click();
    await x.page.getByTestId('tokens-status').getByText(/Revoked “sync job” of kate/).waitFor();
    await x.page.getByTestId('tokens-table').locator('tr', { hasText: 'sync job' }).waitFor({ state: 'detached' });
    const refused = await call('/rest/Note', { headers: bearer });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.__ERROR[0].errCode, 7075);
    assertClean(x);
    await x.context.close();
  });
});

describe('roles.json as a matrix', () => {
  /** a cell's letters: R C U D X where the column may, a dot where it may not */
  const cell = (page: Page, resource: string, column: string) => page.locator(`[data-testid="roles-matrix"] tr[data-resource="${resource}"] td[data-column="${column}"] .letters`).innerText();

  it('shows who may do what on the dataclass, its attributes and functions, as the server judges it', async () => {
    const x = await open();
    await logInThroughDialog(x.page, 'root', 'root-password');
    await openAdministration(x.page, 'Roles');
    await x.page.getByTestId('roles-matrix').waitFor();
    // Note: guests read (and run its functions), editors do everything
    assert.equal(await cell(x.page, 'Note', 'guest'), 'R···X');
    assert.equal(await cell(x.page, 'Note', 'role:Editor'), 'RCUDX');
    // Note.secret: the secrets privilege only
    assert.equal(await cell(x.page, 'Note.secret', 'guest'), '···');
    assert.equal(await cell(x.page, 'Note.secret', 'role:Editor'), '···');
    assert.equal(await cell(x.page, 'Note.secret', 'role:Keeper'), 'RCU');
    // (secrets alone reads it; writing it takes the right to write a Note too, which is edit's)
    assert.equal(await cell(x.page, 'Note.secret', 'privilege:secrets'), 'R··');
    assert.equal(await cell(x.page, 'Note.text', 'guest'), 'R··');
    // Note.tally(): editors run it, and it promotes to secrets
    assert.equal(await cell(x.page, 'Note.tally', 'guest'), '·');
    assert.equal(await cell(x.page, 'Note.tally', 'role:Editor'), 'X');
    assert.equal(await x.page.locator('tr[data-resource="Note.tally"] td.promote').innerText(), 'secrets');
    // each cell says it in words to a screen reader
    assert.equal(await x.page.locator('tr[data-resource="Note.secret"] td[data-column="role:Keeper"] .visually-hidden').innerText(), 'read, create, update');
    // the groups: the datastore's functions, Note with its attributes and function beneath, the Tools singleton
    const titles = await x.page.locator('[data-testid="roles-matrix"] tr.group-title').allInnerTexts();
    assert.deepEqual(titles, ['Datastore', 'Tools (singleton)']);
    const order = await x.page.locator('[data-testid="roles-matrix"] tbody tr[data-resource]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-resource')));
    assert.ok(order.indexOf('Note') < order.indexOf('Note.secret') && order.indexOf('Note.secret') < order.indexOf('Note.tally') && order.indexOf('Note.tally') < order.indexOf('Tools.ping'), order.join(' '));
    assert.equal(await x.page.locator('tr[data-resource="Note.secret"] th').getAttribute('class'), 'resource nested');
    // the matrix's cells match the server's own answer
    const matrix = (await server.app.inject({ url: '/rest/$roles', headers: { cookie: await rootCookie() } })).json();
    for (const r of matrix.rows as { resource: string; allowed: Record<string, string[]> }[]) {
      for (const c of matrix.columns as { name: string }[]) {
        const said = await x.page.locator(`tr[data-resource="${r.resource}"] td[data-column="${c.name}"]`).getAttribute('title');
        const expected = Object.entries(r.allowed).filter(([, who]) => who.includes(c.name)).map(([a]) => a);
        assert.equal(said, expected.length > 0 ? expected.join(', ') : 'nothing', `${r.resource} × ${c.name}`);
      }
    }
    await x.shot('admin-roles');
    assert.deepEqual(await accessibilityViolations(x.page), [], 'the matrix, wide');
    assertClean(x);
    await x.context.close();
  });

  it('is readable at a phone\'s width: the matrix scrolls sideways inside its region, the page does not', async () => {
    const x = await open({ width: 390 });
    await logInThroughDialog(x.page, 'root', 'root-password');
    await openAdministration(x.page, 'Roles');
    const region = x.page.getByRole('region', { name: /Who may do what/ });
    await region.waitFor();
    const { scroll, client } = await region.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    assert.ok(scroll > client, `the matrix (${scroll}px) fits ${client}px: nothing to scroll`);
    const overflow = await x.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
    await x.shot('admin-roles-phone');
    assert.deepEqual(await accessibilityViolations(x.page), [], 'the matrix at 390 px');
    await region.evaluate((el) => el.scrollBy(400, 0));
    await x.shot('admin-roles-phone-scrolled');
    assertClean(x);
    await x.context.close();
  });
});

describe('accessibility of the users and tokens views', () => {
  it('passes axe-core on the users view, its dialogs and the tokens view, wide and at a phone\'s width', async () => {
    for (const width of [1280, 390]) {
      const x = await open({ width });
      await logInThroughDialog(x.page, 'root', 'root-password');
      await openAdministration(x.page, 'Users');
      await userRow(x.page, 'root').waitFor();
      assert.deepEqual(await accessibilityViolations(x.page), [], `the users view at ${width} px`);
      const overflow = await x.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px at ${width} px`);
      if (width < 760) await x.shot('admin-users-phone');
      await x.page.getByRole('button', { name: 'Reset password of ed' }).click();
      await x.page.getByRole('dialog', { name: 'Reset the password of ed' }).waitFor();
      assert.deepEqual(await accessibilityViolations(x.page), [], `the reset dialog at ${width} px`);
      await x.page.keyboard.press('Escape');
      await x.page.getByRole('button', { name: 'Change roles of ed' }).click();
      await x.page.getByRole('dialog', { name: 'Change the roles of ed' }).waitFor();
      assert.deepEqual(await accessibilityViolations(x.page), [], `the roles dialog at ${width} px`);
      await x.page.keyboard.press('Escape');
      await x.page.getByRole('button', { name: 'Remove ed' }).click();
      const confirm = x.page.getByRole('alertdialog', { name: 'Remove ed?' });
      await confirm.waitFor();
      // the safe choice has the first focus
      assert.equal(await x.page.evaluate(() => document.activeElement?.textContent), 'Cancel');
      assert.deepEqual(await accessibilityViolations(x.page), [], `the confirmation at ${width} px`);
      await x.page.keyboard.press('Escape');
      await openAdministration(x.page, 'Tokens');
      await x.page.getByTestId('tokens-table').waitFor();
      const form = x.page.getByRole('form', { name: 'Create a token' });
      await form.getByLabel('User', { exact: true }).selectOption('ed');
      await form.getByLabel('Expires').selectOption('date');
      await form.getByLabel('Date').waitFor();
      assert.deepEqual(await accessibilityViolations(x.page), [], `the tokens view at ${width} px`);
      if (width < 760) await x.shot('admin-tokens-phone');
      assert.ok(await coreOf(server.ds).users!.get('ed'), 'Escape removed nobody');
      assertClean(x);
      await x.context.close();
    }
  });
});

describe('a project without roles.json (the open demo: no one holds the admin privilege)', () => {
  let demo: ExplorerServer;
  before(async () => {
    demo = await explorerServer();
  });
  after(() => demo.close());

  it('offers no administration: users, tokens and roles are an administrator\'s even where everything else is open', async () => {
    const x = await openExplorer(browser, demo, { width: 1280, height: 800 });
    await x.page.getByRole('navigation').first().waitFor();
    // (once the page's probe of $roles has had its answer)
    await x.page.waitForLoadState('networkidle');
    assert.equal(await x.page.getByRole('link', { name: 'Administration' }).count(), 0);
    await x.context.close();
  });
});

async function rootCookie(): Promise<string> {
  const res = await server.app.inject({ method: 'POST', url: '/rest/$catalog/authentify', payload: [{ userName: 'root', password: 'root-password' }] });
  return String(res.headers['set-cookie']).split(';')[0];
}
