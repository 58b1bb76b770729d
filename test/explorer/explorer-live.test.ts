// The Data Explorer follows live data (issue 36, "Users see it"): over a project whose Item tracks
// its changes (support/live-project.ts), a grid's row changed through REST by another client is
// updated where it is, a dropped row goes, a new one the query selects comes, and what leaves the
// query goes; an open form says "changed elsewhere" before a save would conflict, reloads the
// stored values, and says when the entity was dropped. An untracked dataclass shows no badge and
// opens no stream.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { explorerServer, launchBrowser, openExplorer, type ExplorerPage, type ExplorerServer } from '../support/browser.js';
import { tempDir } from '../support/helpers.js';
import { LIVE_MODEL, LIVE_ROLES } from '../support/live-project.js';

let browser: Browser;
let server: ExplorerServer;
const project = tempDir('dataset-rest-explorer-live-');

before(async () => {
  writeFileSync(join(project.dir, 'model.json'), JSON.stringify(LIVE_MODEL));
  writeFileSync(join(project.dir, 'roles.json'), JSON.stringify(LIVE_ROLES));
  browser = await launchBrowser();
  server = await explorerServer({ project: project.dir, roles: join(project.dir, 'roles.json') });
});
after(async () => {
  await browser?.close();
  await server?.close();
  project.remove();
});

type Entity = Record<string, unknown> & { __KEY: string; __STAMP: number };

/** A change another client makes, through REST. */
async function save(body: Record<string, unknown>): Promise<Entity> {
  const answer = await server.app.inject({ method: 'POST', url: '/rest/Item?$method=update', payload: body });
  assert.equal(answer.statusCode, 200, answer.body);
  return answer.json<Entity>();
}

async function drop(key: string): Promise<void> {
  const answer = await server.app.inject({ method: 'POST', url: `/rest/Item(${key})?$method=delete` });
  assert.equal(answer.statusCode, 200, answer.body);
}

async function read(key: string): Promise<Entity> {
  const answer = await server.app.inject({ method: 'GET', url: `/rest/Item(${key})` });
  assert.equal(answer.statusCode, 200, answer.body);
  return answer.json<Entity>();
}

async function open(hash: string): Promise<ExplorerPage> {
  const x = await openExplorer(browser, server, { hash });
  x.page.setDefaultTimeout(8000);
  return x;
}

/** nothing the page's CSP refused, no exception */
function assertClean(x: ExplorerPage): void {
  assert.deepEqual(x.problems.filter((p) => /Content Security Policy|exception:/.test(p)), []);
}

/** the badge says the view follows the changes */
async function following(page: Page): Promise<void> {
  await page.locator('[data-testid="live-state"][data-state="live"]').waitFor();
}

const row = (page: Page, key: string) => page.locator(`.ag-grid-viewport [role="row"][row-id="${key}"]`);
const cell = (page: Page, key: string, colId: string) => row(page, key).locator(`[col-id="${colId}"]`);
const count = (page: Page, text: string) => page.getByTestId('entity-count').getByText(text, { exact: true }).waitFor();

describe('the Data Explorer over live data', () => {
  let items: Entity[];
  before(async () => {
    items = [];
    for (const [name, price] of [['anchor', 20], ['bolt', 30], ['cog', 40], ['dowel', 5]] as const) items.push(await save({ name, price, cost: 1 }));
  });

  it('updates a row changed elsewhere where it is, takes out a dropped one, brings in a new one', async () => {
    const x = await open('#/Item');
    const { page } = x;
    const watches: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('$method=watch')) watches.push(decodeURIComponent(r.url()));
    });
    await count(page, '4 entities');
    await following(page);
    assert.equal(await page.getByTestId('live-state').innerText(), 'Live');
    const [anchor, bolt, cog] = items;
    await cell(page, bolt.__KEY, 'name').getByText('bolt', { exact: true }).waitFor();

    // changed elsewhere: the row shows the new value, the grid reads no page again for it
    let pagesRead = 0;
    page.on('request', (r) => {
      if (/\/rest\/Item\?.*\$skip=/.test(decodeURIComponent(r.url()))) pagesRead++;
    });
    await save({ __KEY: bolt.__KEY, __STAMP: bolt.__STAMP, name: 'bolt, renamed elsewhere' });
    await cell(page, bolt.__KEY, 'name').getByText('bolt, renamed elsewhere', { exact: true }).waitFor();
    assert.equal(pagesRead, 0, 'a row in the cache is updated in place');
    assert.equal(await cell(page, bolt.__KEY, 'cost').count(), 0, 'a guest is shown no attribute it may not read');

    // dropped elsewhere: the row goes, the count follows
    await drop(cog.__KEY);
    await row(page, cog.__KEY).waitFor({ state: 'detached' });
    await count(page, '3 entities');

    // created elsewhere: it comes in
    const extra = await save({ name: 'eyelet', price: 60, cost: 2 });
    await cell(page, extra.__KEY, 'name').getByText('eyelet', { exact: true }).waitFor();
    await count(page, '4 entities');
    await cell(page, anchor.__KEY, 'name').getByText('anchor', { exact: true }).waitFor();
    await x.shot('live-grid');

    // the watch is the grid's query: its attributes, no page
    assert.ok(watches.length >= 1, 'a watch was opened');
    assert.match(watches[0] ?? '', /\/rest\/Item\?\$attributes=name,price,__GlobalStamp&\$method=watch$/);
    items = items.filter((i) => i.__KEY !== cog.__KEY).concat(extra);
    assertClean(x);
    await x.context.close();
  });

  it('follows the query: what leaves the filter goes, what enters it comes', async () => {
    const x = await open('#/Item');
    const { page } = x;
    await count(page, '4 entities');
    await page.getByRole('textbox', { name: 'Query' }).fill('price > 10');
    const watching = page.waitForRequest((r) => decodeURIComponent(r.url()).includes('$filter="price > 10"&$method=watch'));
    await page.getByRole('button', { name: 'Apply' }).click();
    await watching;
    await count(page, '3 entities');
    await following(page);
    const [anchor, , dowel] = items;
    assert.equal(dowel.name, 'dowel');
    const fresh = await read(anchor.__KEY);
    await save({ __KEY: anchor.__KEY, __STAMP: fresh.__STAMP, price: 1 });
    await row(page, anchor.__KEY).waitFor({ state: 'detached' });
    await count(page, '2 entities');
    await save({ __KEY: dowel.__KEY, __STAMP: dowel.__STAMP, price: 15 });
    await cell(page, dowel.__KEY, 'price').getByText('15', { exact: true }).waitFor();
    await count(page, '3 entities');
    assertClean(x);
    await x.context.close();
  });

  it('an open form shows "changed elsewhere" before a save would conflict, reloads the stored values, and tells a drop', async () => {
    const [anchor] = items;
    const x = await open(`#/Item/(${anchor.__KEY})`);
    const { page } = x;
    const name = page.getByLabel('name', { exact: true });
    await name.waitFor();
    await following(page);
    assert.equal(await page.getByTestId('changed-elsewhere').count(), 0);
    await name.fill('mine, typed here');

    // saved elsewhere while the form is open
    const before = await read(anchor.__KEY);
    await save({ __KEY: anchor.__KEY, __STAMP: before.__STAMP, name: 'theirs, saved elsewhere' });
    const notice = page.getByTestId('changed-elsewhere');
    await notice.getByRole('heading', { name: 'Changed elsewhere' }).waitFor();
    assert.match(await notice.innerText(), /Saving your changes now would conflict/);
    await x.shot('live-form-changed');
    assert.equal(await name.inputValue(), 'mine, typed here', 'what was typed stays until the person chooses');

    // reloaded: the stored values, the notice gone, and a save that no longer conflicts
    await notice.getByRole('button', { name: 'Reload the stored values' }).click();
    await page.getByRole('status').getByText('Reloaded: the stored values are shown.').waitFor();
    assert.equal(await name.inputValue(), 'theirs, saved elsewhere');
    assert.equal(await notice.count(), 0);
    await name.fill('mine, after reading theirs');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    assert.equal((await read(anchor.__KEY)).name, 'mine, after reading theirs');
    // (the form's own save is no change elsewhere: its event comes, and says nothing)
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await notice.count(), 0, "the form's own save is not shown as a change elsewhere");

    // dropped elsewhere
    await drop(anchor.__KEY);
    const gone = page.getByTestId('dropped-elsewhere');
    await gone.getByRole('heading', { name: 'Deleted elsewhere' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Save' }).isDisabled(), true, 'a dropped entity cannot be saved');
    await x.shot('live-form-dropped');
    assertClean(x);
    await x.context.close();
  });

  it("follows an entity set's members: one changed elsewhere is updated, one dropped shows as dropped", async () => {
    const x = await open('#/Item');
    const { page } = x;
    await following(page);
    // a set of this page's session (its cookie), then its view
    const made = await page.evaluate(async () => {
      const answer = await fetch('/rest/Item?$filter=%22price%20%3E%2010%22&$method=entityset', { credentials: 'same-origin' });
      return (await answer.json()) as { __ENTITYSET: string; __COUNT: number; __ENTITIES: { __KEY: string; __STAMP: number }[] };
    });
    const id = made.__ENTITYSET.split('/').at(-1)!;
    await page.evaluate((hash) => (location.hash = hash), `#/Item/set/${id}`);
    await page.getByRole('heading', { name: `Item set ${id}` }).waitFor();
    await count(page, `${made.__COUNT} entities`);
    await following(page);
    const [first, second] = made.__ENTITIES.map((e) => e.__KEY);
    const stored = await read(first);
    await save({ __KEY: first, __STAMP: stored.__STAMP, name: 'renamed, a member of the set' });
    await cell(page, first, 'name').getByText('renamed, a member of the set', { exact: true }).waitFor();
    await drop(second);
    await row(page, second).waitFor({ state: 'detached' });
    // (a set keeps a member dropped since it was made, as 4D does: its place says so; the count stays)
    await page.locator('.ag-grid-viewport [role="row"] [col-id="__KEY"]').getByText('dropped', { exact: true }).waitFor();
    await count(page, `${made.__COUNT} entities`);
    await x.shot('live-set');
    assertClean(x);
    await x.context.close();
  });

  it("does not take the form's own save for a change elsewhere when the save's event comes before its answer", async () => {
    const mine = await save({ name: 'flange', price: 3, cost: 1 });
    const x = await open(`#/Item/(${mine.__KEY})`);
    const { page } = x;
    // the entity events the page's streams receive, counted (before the page's own handlers see them)
    await page.addInitScript(() => {
      const w = window as unknown as { __entityEvents: number; EventSource: typeof EventSource };
      const Native = w.EventSource;
      w.__entityEvents = 0;
      w.EventSource = class extends Native {
        constructor(url: string | URL, init?: EventSourceInit) {
          super(url, init);
          this.addEventListener('entity', () => w.__entityEvents++);
        }
      };
    });
    await page.reload();
    const name = page.getByLabel('name', { exact: true });
    await name.waitFor();
    await following(page);
    const notice = page.getByTestId('changed-elsewhere');
    // the save's answer is held until its event has come (and had time to be shown)
    let shownBeforeAnswer: number | undefined;
    await page.route((u) => decodeURIComponent(u.toString()).includes('/rest/Item?$method=update'), async (route) => {
      const response = await route.fetch();
      await page.waitForFunction(() => (window as unknown as { __entityEvents: number }).__entityEvents > 0);
      await new Promise((r) => setTimeout(r, 300));
      shownBeforeAnswer = await notice.count();
      await route.fulfill({ response });
    });
    await name.fill('flange, saved here');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Saved.').waitFor();
    assert.equal(shownBeforeAnswer, 0, "the form's own save, its event first, is not shown as a change elsewhere");
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await notice.count(), 0);
    assert.equal((await read(mine.__KEY)).name, 'flange, saved here');

    // a save elsewhere is still shown
    const stored = await read(mine.__KEY);
    await save({ __KEY: mine.__KEY, __STAMP: stored.__STAMP, name: 'flange, theirs' });
    await notice.getByRole('heading', { name: 'Changed elsewhere' }).waitFor();
    assertClean(x);
    await x.context.close();
  });

  it('leaves an untracked dataclass as it was: no badge, no stream', async () => {
    await server.app.inject({ method: 'POST', url: '/rest/Plain?$method=update', payload: { name: 'plain' } });
    const x = await open('#/Plain');
    const { page } = x;
    const watches: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('$method=watch')) watches.push(r.url());
    });
    await count(page, '1 entity');
    await page.getByRole('button', { name: /^Open Plain / }).first().click();
    await page.getByLabel('name', { exact: true }).waitFor();
    assert.equal(await page.getByTestId('live-state').count(), 0);
    assert.deepEqual(watches, []);
    assertClean(x);
    await x.context.close();
  });
});
