// The Data Explorer's entity view, used as a person would: reading an entity and following its
// relations, files, the typed form, create and delete, a stale __STAMP, validation errors and a
// session's permissions. Checked through the page and, where it matters, through REST.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { explorerServer, launchBrowser, openExplorer, type ExplorerPage, type ExplorerServer } from '../support/browser.js';

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser.close();
});

type Entity = Record<string, unknown> & { __KEY: string; __STAMP: number };

async function read(server: ExplorerServer, path: string): Promise<Entity> {
  const answer = await server.app.inject({ method: 'GET', url: `/rest/${path}` });
  assert.equal(answer.statusCode, 200, answer.body);
  return answer.json<Entity>();
}

/** nothing the page's CSP refused, no exception (expected 4xx are logged as "Failed to load resource") */
function assertClean(x: ExplorerPage): void {
  assert.deepEqual(x.problems.filter((p) => /Content Security Policy|exception:/.test(p)), []);
}

/** the bodies the page sends to $method=update */
function updates(page: Page): Record<string, unknown>[] {
  const bodies: Record<string, unknown>[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().includes('$method=update')) bodies.push(r.postDataJSON() as Record<string, unknown>);
  });
  return bodies;
}

/** a page on the explorer that fails fast: the server is local */
async function open(server: ExplorerServer, options: Parameters<typeof openExplorer>[2]): Promise<ExplorerPage> {
  const x = await openExplorer(browser, server, options);
  x.page.setDefaultTimeout(8000);
  return x;
}

const field = (page: Page, name: string) => page.getByLabel(name, { exact: true });
const heading = (page: Page, text: string) => page.getByRole('heading', { name: text, exact: true });

describe('the entity view, open datastore', () => {
  let server: ExplorerServer;
  before(async () => {
    server = await explorerServer();
  });
  after(async () => {
    await server.close();
  });

  it('shows every attribute with its type, follows relations and goes back', async () => {
    const x = await open( server, { hash: '#/Company' });
    const { page } = x;
    await page.getByRole('button', { name: 'Open Company 1', exact: true }).click();
    await heading(page, 'Company(1)').waitFor();
    const catalog = (await server.app.inject({ method: 'GET', url: '/rest/$catalog/Company' })).json<{ attributes: { name: string }[] }>();
    // (the heading can show before the form's fields: wait for the last one)
    await page.locator('.fields > .label').nth(catalog.attributes.length - 1).waitFor();
    const labels = await page.locator('.fields > .label > :first-child').allInnerTexts();
    assert.deepEqual(labels, catalog.attributes.map((a) => a.name));
    assert.equal(await field(page, 'name').inputValue(), 'Acme Industries');
    assert.match(await page.locator('#ef-founded-type').innerText(), /^date$/);
    assert.match(await page.locator('#ef-city-type').innerText(), /→ City/);
    await x.shot('entity-company');

    // N→1: the related entity, then Back
    // (named by its label, the city's name, with the key on hover)
    const city = page.getByRole('link', { name: /City\(1\)$/ });
    await city.getByText((await read(server, 'City(1)')).name as string).waitFor();
    assert.equal(await city.getAttribute('title'), 'City(1)');
    await city.click();
    await heading(page, 'City(1)').waitFor();
    assert.match(page.url(), /#\/City\/\(1\)$/);
    await page.getByRole('button', { name: '← Back' }).click();
    await heading(page, 'Company(1)').waitFor();

    // 1→N: the related entities as a list
    await page.getByRole('link', { name: 'Company(1).staff' }).click();
    await heading(page, 'Company(1).staff').waitFor();
    await page.getByTestId('entity-count').getByText('10 entities').waitFor();
    assert.doesNotMatch(decodeURIComponent(page.url()), /\$expand/);
    await page.getByRole('button', { name: '← Back' }).click();
    await heading(page, 'Company(1)').waitFor();
    assertClean(x);
    await x.context.close();
  });

  it('shows images, offers downloads, uploads and removes files', async () => {
    const x = await open( server, { hash: '#/Company/(1)' });
    const { page } = x;
    const thumb = page.getByRole('img', { name: 'the logo of Company(1)' });
    await thumb.waitFor();
    await page.waitForFunction(() => (document.querySelector('img.entity-thumb') as HTMLImageElement | null)?.naturalWidth ?? 0 > 0);
    const png = await page.getByRole('link', { name: 'Download the logo as PNG' }).getAttribute('href');
    assert.match(png ?? '', /\$imageformat=png/);
    const answer = await page.request.get(`${server.origin}${png}`);
    assert.equal(answer.headers()['content-type'], 'image/png');
    const jpeg = await page.getByRole('link', { name: 'Download the logo as JPEG' }).getAttribute('href');
    assert.equal((await page.request.get(`${server.origin}${jpeg}`)).headers()['content-type'], 'image/jpeg');

    // a new logo: uploaded, previewed, attached by the save
    const before = await read(server, 'Company(1)');
    const image = await sharp({ create: { width: 80, height: 48, channels: 3, background: '#c2410c' } }).png().toBuffer();
    await field(page, 'logo').setInputFiles({ name: 'orange.png', mimeType: 'image/png', buffer: image });
    await page.getByText('orange.png: sent with the next save.').waitFor();
    await x.shot('entity-upload-ready');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    const after = await read(server, 'Company(1)');
    assert.notDeepEqual(after.logo, before.logo);
    const bytes = await server.app.inject({ method: 'GET', url: '/rest/Company(1)/logo' });
    assert.deepEqual(bytes.rawPayload, image);

    // removed: null
    await page.getByRole('button', { name: 'Remove the logo' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    assert.equal((await read(server, 'Company(1)')).logo, null);
    await page.getByText('(empty)').first().waitFor();

    // a blob: any file, then a download link
    const employee = (await read(server, 'Employee?$top=1&$attributes=ID')).__ENTITIES as Entity[];
    const key = employee[0].__KEY;
    await page.goto(`${server.url}#/Employee/(${key})`);
    await field(page, 'resume').setInputFiles({ name: 'cv.txt', mimeType: 'text/plain', buffer: Buffer.from('a resume') });
    await page.getByText('cv.txt: sent with the next save.').waitFor();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    const link = await page.getByRole('link', { name: 'Download the resume' }).getAttribute('href');
    assert.equal(await (await page.request.get(`${server.origin}${link}`)).text(), 'a resume');
    assertClean(x);
    await x.context.close();
  });

  it('edits each type, sends only what changed, picks a relation in a dialog', async () => {
    const x = await open( server, { hash: '#/Company/(2)' });
    const { page } = x;
    const sent = updates(page);
    await heading(page, 'Company(2)').waitFor();
    await field(page, 'name').fill('Renamed Co');
    await field(page, 'revenues').fill('1234.5');
    await field(page, 'active').selectOption('false');
    await field(page, 'founded').fill('2001-04-03');

    // invalid JSON is refused next to its field, before anything is sent
    await field(page, 'extra').fill('{"sector": ');
    await page.getByRole('button', { name: 'Save' }).click();
    await assertInvalid(page, 'extra', /not JSON/);
    assert.equal(sent.length, 0);
    await field(page, 'extra').fill('{"sector": "tea", "n": 2}');

    // the city, from the dialog, by keyboard
    await page.getByRole('button', { name: 'Choose the city' }).click();
    const dialog = page.getByRole('dialog', { name: /Choose the city/ });
    await dialog.getByLabel('Search City by name').fill('erl');
    await dialog.getByText('1 found').waitFor();
    await x.shot('entity-picker');
    await dialog.getByRole('button', { name: 'City(3) Berlin' }).press('Enter');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await field(page, 'city').inputValue(), '3');
    await x.shot('entity-form-edited');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();

    assert.equal(sent.length, 1);
    const stamp = 1;
    assert.deepEqual(sent[0], { __KEY: '2', __STAMP: stamp, name: 'Renamed Co', revenues: 1234.5, active: false, founded: '3!4!2001', extra: { sector: 'tea', n: 2 }, city: { __KEY: '3' } });
    const stored = await read(server, 'Company(2)');
    assert.equal(stored.name, 'Renamed Co');
    assert.equal(stored.founded, '3!4!2001');
    assert.equal((stored.city as { __deferred: { __KEY: string } }).__deferred.__KEY, '3');
    await page.getByRole('link', { name: /City\(3\)$/ }).waitFor();
    assert.equal(await page.locator('.title-row .muted').first().innerText(), 'stamp 2');

    // a date-time and a duration, read back as typed
    const [employee] = (await read(server, 'Employee?$top=1&$attributes=ID')).__ENTITIES as Entity[];
    await page.goto(`${server.url}#/Employee/(${employee.__KEY})`);
    await field(page, 'hiredAt').fill('2020-02-03T04:05:06');
    await field(page, 'dailyHours').fill('7:30:00');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    const saved = await read(server, `Employee(${employee.__KEY})`);
    assert.equal(saved.dailyHours, 27_000_000);
    assert.equal(await field(page, 'hiredAt').inputValue(), '2020-02-03T04:05:06');
    assert.equal(new Date(String(saved.hiredAt)).getTime(), await page.evaluate(() => new Date('2020-02-03T04:05:06').getTime()));
    assertClean(x);
    await x.context.close();
  });

  it('creates an entity, then deletes it after a confirmation', async () => {
    const x = await open( server, { hash: '#/Company' });
    const { page } = x;
    await page.getByRole('button', { name: 'New Company' }).click();
    await heading(page, 'New Company').waitFor();
    const sent = updates(page);
    await field(page, 'name').fill('Fresh Start');
    await field(page, 'companyCode').fill('FS-1');
    await x.shot('entity-new');
    await page.getByRole('button', { name: 'Create Company' }).click();
    await page.waitForURL(/#\/Company\/\(\d+\)$/);
    const key = /\((\d+)\)$/.exec(page.url())![1];
    await heading(page, `Company(${key})`).waitFor();
    assert.deepEqual(sent, [{ name: 'Fresh Start', companyCode: 'FS-1' }]);
    assert.equal((await read(server, `Company(${key})`)).name, 'Fresh Start');

    // a delete asks first; Cancel keeps the entity
    await page.getByRole('button', { name: 'Delete…' }).click();
    const confirm = page.getByRole('alertdialog', { name: `Delete Company(${key})?` });
    await confirm.waitFor();
    await x.shot('entity-delete-confirm');
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden' });
    assert.equal((await server.app.inject({ method: 'GET', url: `/rest/Company(${key})` })).statusCode, 200);
    await page.getByRole('button', { name: 'Delete…' }).click();
    await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.waitForURL(/#\/Company$/);
    assert.equal((await server.app.inject({ method: 'GET', url: `/rest/Company(${key})` })).statusCode, 404);
    assertClean(x);
    await x.context.close();
  });

  it('shows a stale stamp as a conflict: Overwrite re-sends, Reload shows the stored values', async () => {
    const x = await open( server, { hash: '#/Company/(3)' });
    const { page } = x;
    await heading(page, 'Company(3)').waitFor();
    const theirs = async (name: string) => {
      const now = await read(server, 'Company(3)');
      const answer = await server.app.inject({ method: 'POST', url: '/rest/Company?$method=update', payload: { __KEY: '3', __STAMP: now.__STAMP, name } });
      assert.equal(answer.statusCode, 200, answer.body);
    };
    await field(page, 'name').fill('Mine');
    await theirs('Theirs');
    await page.getByRole('button', { name: 'Save' }).click();
    const box = page.locator('.conflict');
    await box.getByRole('heading', { name: /Someone else saved/ }).waitFor();
    const row = box.getByRole('row', { name: /name/ });
    assert.deepEqual(await row.getByRole('cell').allInnerTexts(), ['Mine', 'Theirs']);
    await x.shot('entity-conflict');
    await box.getByRole('button', { name: 'Overwrite' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    assert.equal((await read(server, 'Company(3)')).name, 'Mine');

    await field(page, 'name').fill('Mine again');
    await theirs('Theirs again');
    await page.getByRole('button', { name: 'Save' }).click();
    await box.getByRole('button', { name: 'Reload' }).click();
    await box.waitFor({ state: 'detached' });
    assert.equal(await field(page, 'name').inputValue(), 'Theirs again');
    assert.equal((await read(server, 'Company(3)')).name, 'Theirs again');
    assertClean(x);
    await x.context.close();
  });

  it('shows validation errors next to their field', async () => {
    const x = await open( server, { hash: '#/Company/new' });
    const { page } = x;
    // notNull (7018): nothing typed in the name
    await field(page, 'revenues').fill('5');
    await page.getByRole('button', { name: 'Create Company' }).click();
    await assertInvalid(page, 'name', /cannot be null/);
    await x.shot('entity-validation');

    // unique (7015), on an existing entity
    const taken = (await read(server, 'Company(1)')).companyCode as string;
    await page.goto(`${server.url}#/Company/(4)`);
    await heading(page, 'Company(4)').waitFor();
    await field(page, 'companyCode').fill(taken);
    await page.getByRole('button', { name: 'Save' }).click();
    await assertInvalid(page, 'companyCode', /already has this value/);

    // an attribute's validate event (1002): by its field once the server names the attribute, above the form until then
    const [employee] = (await read(server, 'Employee?$top=1&$attributes=ID')).__ENTITIES as Entity[];
    await page.goto(`${server.url}#/Employee/(${employee.__KEY})`);
    await field(page, 'salary').fill('20000000');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('a salary above 10000000 needs a second look').waitFor();
    if (await page.locator('#ef-salary-error').innerText() !== '') await assertInvalid(page, 'salary', /needs a second look/);
    assert.notEqual((await read(server, `Employee(${employee.__KEY})`)).salary, 20_000_000);
    assertClean(x);
    await x.context.close();
  });

  it('shows and saves a date-time in the browser\'s time zone', async () => {
    // (the harness's page has the machine's zone; this one is +05:30, never UTC)
    const context = await browser.newContext({ timezoneId: 'Asia/Kolkata' });
    const page = await context.newPage();
    page.setDefaultTimeout(8000);
    const [employee] = (await read(server, 'Employee?$skip=5&$top=1&$attributes=ID,hiredAt')).__ENTITIES as Entity[];
    await page.goto(`${server.url}#/Employee/(${employee.__KEY})`);
    const shown = new Date(new Date(String(employee.hiredAt)).getTime() + 5.5 * 3600_000).toISOString().slice(0, 19);
    assert.equal(await field(page, 'hiredAt').inputValue(), shown);
    await field(page, 'hiredAt').fill('2021-06-01T09:00:00');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    assert.equal((await read(server, `Employee(${employee.__KEY})`)).hiredAt, '2021-06-01T03:30:00.000Z');
    await context.close();
  });

  it('fits a phone', async () => {
    const x = await open( server, { hash: '#/Employee', width: 390, height: 844 });
    const { page } = x;
    await page.getByRole('button', { name: /^Open Employee / }).first().click();
    await field(page, 'firstName').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px too wide`);
    await x.shot('entity-phone');
    assertClean(x);
    await x.context.close();
  });
});

async function assertInvalid(page: Page, name: string, message: RegExp): Promise<void> {
  const input = field(page, name);
  await page.locator(`#ef-${name}-error`).getByText(message).waitFor();
  assert.equal(await input.getAttribute('aria-invalid'), 'true');
  assert.match(await input.getAttribute('aria-describedby') ?? '', new RegExp(`ef-${name}-error`));
}

describe('the entity view and permissions', () => {
  let server: ExplorerServer;
  before(async () => {
    server = await explorerServer({ roles: true });
  });
  after(async () => {
    await server.close();
  });

  it('a save the server refuses to a guest (a catalog that said it may) opens the login; logged in as alice it saves', async () => {
    const x = await open( server, { hash: '#/' });
    const { page } = x;
    // a catalog read before roles.json changed: it says the guest may update, the server refuses
    await page.route('**/rest/$catalog/$all', async (route) => {
      const answer = await route.fetch();
      const json = await answer.json() as { dataClasses: Record<string, unknown>[] };
      const dataClasses = json.dataClasses.map((dc) => (dc.name === 'Company' ? { ...dc, sessionMay: { ...(dc.sessionMay as object), create: true, update: true, drop: true } } : dc));
      await route.fulfill({ response: answer, json: { ...json, dataClasses } });
    });
    await page.goto(`${server.url}#/Company/(5)`);
    await page.reload();
    await field(page, 'name').fill('Guest was here');
    await page.getByRole('button', { name: 'Save' }).click();
    const login = page.getByRole('dialog', { name: 'Log in' });
    await login.waitFor();
    await page.locator('.form-errors').getByText(/No permission to update/).waitFor();
    await login.getByLabel('User name').fill('alice');
    await login.getByLabel('Password').fill('alice123');
    await login.getByRole('button', { name: 'Log in' }).click();
    await login.waitFor({ state: 'hidden' });
    // the view starts afresh with the new session's catalog (what was typed before is gone)
    await page.getByRole('banner').getByText('Logged in as alice').waitFor();
    await field(page, 'name').fill('Alice was here');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    assert.equal((await read(server, 'Company(5)')).name, 'Alice was here');
    assertClean(x);
    await x.context.close();
  });

  it('keeps what was typed when the session ran out and the same user logs in again to save it', async () => {
    const x = await open( server, { hash: '#/Company/(6)' });
    const { page } = x;
    const login = page.getByRole('dialog', { name: 'Log in' });
    const logIn = async () => {
      await login.getByLabel('User name').fill('alice');
      await login.getByLabel('Password').fill('alice123');
      await login.getByRole('button', { name: 'Log in' }).click();
      await login.waitFor({ state: 'hidden' });
    };
    await page.getByRole('banner').getByRole('button', { name: 'Log in' }).click();
    await logIn();
    await page.getByRole('banner').getByText('Logged in as alice').waitFor();
    // the session ends behind the page's back (a timeout, a logout in another tab)
    await page.evaluate(() => fetch('/rest/$directory/logout', { method: 'POST', body: '[]', headers: { 'content-type': 'application/json' } }));
    await field(page, 'name').fill('Typed before the login');
    await page.getByRole('button', { name: 'Save' }).click();
    await login.waitFor();
    await logIn();
    assert.equal(await field(page, 'name').inputValue(), 'Typed before the login');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    assert.equal((await read(server, 'Company(6)')).name, 'Typed before the login');
    assertClean(x);
    await x.context.close();
  });

  it('renders read-only, without delete, for a guest the catalog says may not write; editable once alice logs in', async () => {
    const x = await open( server, { hash: '#/Company/(1)' });
    const { page } = x;
    await heading(page, 'Company(1)').waitFor();
    await page.getByText('read-only for this session').waitFor();
    assert.equal(await page.getByRole('textbox').count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Save' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Delete…' }).count(), 0);
    await page.getByRole('group', { name: 'name' }).getByText('Acme Industries').waitFor();
    await page.getByRole('link', { name: 'City(1)' }).waitFor();
    await x.shot('entity-read-only');
    await page.getByRole('button', { name: 'Log in' }).click();
    const login = page.getByRole('dialog', { name: 'Log in' });
    await login.getByLabel('User name').fill('alice');
    await login.getByLabel('Password').fill('alice123');
    await login.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('banner').getByText('Logged in as alice').waitFor();
    await field(page, 'name').waitFor();
    await page.getByRole('button', { name: 'Delete…' }).waitFor();
    assertClean(x);
    await x.context.close();
  });
});
