// The Data Explorer in a real browser (issue 15): the frame, the grid, the query box, relations,
// login and permissions, keyboard and a phone's width — each done as a person would, by clicking
// and typing. Screenshots land in test-results/explorer/. (The entity form, the panels and the
// million-entity run have files of their own: explorer-entity, explorer-panels, explorer-scale.)

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { explorerServer, launchBrowser, openExplorer, type ExplorerPage, type ExplorerServer } from '../support/browser.js';

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(() => browser.close());

/** What REST answers for a URL, through the server itself. */
async function restJson(server: ExplorerServer, url: string, cookie?: string): Promise<any> {
  const res = await server.app.inject({ url, headers: cookie ? { cookie } : {} });
  return JSON.parse(res.body);
}

/** the page's problems that are defects: CSP violations and exceptions (4xx loads are expected refusals) */
function defects(x: ExplorerPage): string[] {
  return x.problems.filter((p) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(p));
}

/** axe-core, the accessibility checker, run in the page (evaluated over the DevTools protocol: the page's CSP allows no injected script) */
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** WCAG 2.1 A and AA violations axe finds in the page as it is: contrast, names, roles, structure */
async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(`axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] })
    .then((r) => r.violations.flatMap((v) => v.nodes.map((n) => v.id + ' at ' + n.target.join(' ') + ': ' + n.failureSummary)))`) as Promise<string[]>;
}

/** the text of the grid's cells in one column, rows in the order shown */
async function column(page: Page, colId: string): Promise<string[]> {
  const cells = page.locator(`.ag-grid-viewport [role="row"] [col-id="${colId}"]`);
  await cells.first().waitFor();
  const rows = await page.locator('.ag-grid-viewport [role="row"][row-index]').evaluateAll((els) => els
    .map((r) => ({ index: Number(r.getAttribute('row-index')), el: r }))
    .sort((a, b) => a.index - b.index)
    .map(({ el }) => el.getAttribute('row-index')));
  const out: string[] = [];
  for (const index of rows) out.push((await page.locator(`.ag-grid-viewport [role="row"][row-index="${index}"] [col-id="${colId}"]`).innerText()).trim());
  return out;
}

async function chooseDataClass(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Dataclasses' }).getByRole('link', { name: new RegExp(`^${name}\\b`) }).click();
  await page.getByRole('heading', { level: 2, name }).waitFor();
  await page.locator('.ag-grid-viewport [role="row"]').first().waitFor();
}

describe('browsing and querying, on the open demo', () => {
  let server: ExplorerServer;
  before(async () => {
    server = await explorerServer();
  });
  after(() => server.close());

  it('lists the dataclasses with their counts, and a dataclass\'s entities in a grid with a column per attribute and its type', async () => {
    const x = await openExplorer(browser, server);
    const nav = x.page.getByRole('navigation', { name: 'Dataclasses' });
    await nav.getByRole('link', { name: /^Employee/ }).getByText('320').waitFor();
    await nav.getByRole('link', { name: /^Company/ }).getByText('40').waitFor();
    await chooseDataClass(x.page, 'Company');
    await x.page.getByTestId('entity-count').getByText('40 entities').waitFor();
    const header = async (colId: string) => (await x.page.locator(`.ag-header-cell[col-id="${colId}"]`).innerText()).trim();
    assert.match(await header('revenues'), /^revenues\s+number$/);
    assert.match(await header('founded'), /^founded\s+date$/);
    assert.match(await header('city'), /^city\s+→ City$/);
    assert.match(await header('staff'), /^staff\s+→ \[Employee\]$/);
    const names = await column(x.page, 'name');
    const first = await restJson(server, '/rest/Company?$top=3&$attributes=name');
    assert.deepEqual(names.slice(0, 3), first.__ENTITIES.map((e: any) => e.name));
    // the logos are thumbnails from the REST API
    const thumb = x.page.locator('img.thumb').first();
    await thumb.waitFor();
    assert.match(await thumb.getAttribute('src') ?? '', /^\/rest\/Company\(\d+\)\/logo\?/);
    assert.ok(await thumb.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'the thumbnail loaded');
    await x.shot('grid-company');
    assert.deepEqual(defects(x), []);
    await x.context.close();
  });

  it('sorts by a clicked header with $orderby, and chooses the columns it asks for with $attributes', async () => {
    const x = await openExplorer(browser, server);
    const asked: string[] = [];
    x.page.on('request', (r) => {
      if (r.url().includes('/rest/Company?')) asked.push(decodeURIComponent(r.url()));
    });
    await chooseDataClass(x.page, 'Company');
    await x.page.locator('.ag-header-cell[col-id="revenues"] .ag-header-cell-label').click();
    await x.page.waitForFunction(() => document.querySelector('.ag-header-cell[col-id="revenues"]')?.getAttribute('aria-sort') === 'ascending');
    const expected = await restJson(server, '/rest/Company?$orderby="revenues"&$top=5&$attributes=revenues');
    // (shown in the model's defaultFormat, "$###,###,###")
    const shown = (e: any) => `$${e.revenues.toLocaleString('en-US', { maximumFractionDigits: 0 })}`;
    await x.page.waitForFunction((v) => document.querySelector('.ag-grid-viewport [row-index="0"] [col-id="revenues"]')?.textContent === v, shown(expected.__ENTITIES[0]));
    assert.deepEqual((await column(x.page, 'revenues')).slice(0, 5), expected.__ENTITIES.map(shown));
    assert.ok(asked.some((u) => u.includes('$orderby="revenues asc"')), asked.join('\n'));
    // descending on a second click
    const descending = x.page.waitForRequest((r) => decodeURIComponent(r.url()).includes('$orderby="revenues desc"'));
    await x.page.locator('.ag-header-cell[col-id="revenues"] .ag-header-cell-label').click();
    await descending;

    await x.page.getByText(/^Columns \(/).click();
    const refetched = x.page.waitForRequest((r) => r.url().includes('/rest/Company?') && !decodeURIComponent(r.url()).includes('extra'));
    await x.page.getByRole('checkbox', { name: /^extra\b/ }).uncheck();
    await refetched;
    await x.page.locator('.ag-header-cell[col-id="extra"]').waitFor({ state: 'detached' });
    const last = asked.at(-1) ?? '';
    assert.match(last, /\$attributes=name,companyCode,revenues,active,logo,founded/);
    assert.doesNotMatch(last, /extra/);
    await x.shot('grid-columns-sorted');
    assert.deepEqual(defects(x), []);
    await x.context.close();
  });

  it('filters with the query language, shows the server\'s refusal at its offset, and the plan and path on demand', async () => {
    const x = await openExplorer(browser, server);
    await chooseDataClass(x.page, 'Employee');
    const query = x.page.getByRole('textbox', { name: 'Query' });
    await query.fill('level > 5 and employer.name = i@');
    await x.page.getByRole('button', { name: 'Apply' }).click();
    const expected = await restJson(server, '/rest/Employee?$filter="level > 5 and employer.name = i@"&$top=0');
    await x.page.getByTestId('entity-count').getByText(`${expected.__COUNT} entities`).waitFor();

    await query.fill('level >== 5');
    await x.page.getByRole('button', { name: 'Apply' }).click();
    const alert = x.page.locator('#query-error');
    await alert.waitFor();
    assert.match(await alert.innerText(), /at offset 8/);
    assert.equal(await x.page.locator('.caret').innerText(), 'level >== 5\n        ^');
    assert.equal(await query.getAttribute('aria-invalid'), 'true');
    assert.equal(await query.evaluate((i: HTMLInputElement) => i.selectionStart), 8);
    // the grid kept the last good query
    assert.equal(await x.page.getByTestId('entity-count').innerText(), `${expected.__COUNT} entities`);
    await x.shot('query-error');

    await query.fill('lastName = m@');
    await x.page.getByRole('checkbox', { name: 'plan and path' }).check();
    await x.page.getByRole('button', { name: 'Apply' }).click();
    await x.page.getByTestId('query-plan').waitFor();
    assert.match(await x.page.getByTestId('query-plan').innerText(), /Employee\.lastName/);
    assert.match(await x.page.getByTestId('query-path').innerText(), /recordsfounds/);
    assert.equal(await alert.count(), 0);
    await x.shot('query-plan');
    assert.deepEqual(defects(x), []);
    await x.context.close();
  });

  it('shows stored markup as text: a value never becomes elements of the page', async () => {
    const payload = '<img src=x id=pwn1><b id=pwnb>bold</b><meta http-equiv=refresh content="0;url=/rest/$info">';
    const created = await server.app.inject({ method: 'POST', url: '/rest/Company?$method=update', payload: { name: payload, extra: { '<b id=pwnk>k</b>': '<i id=pwni>i</i>' } } });
    assert.equal(created.statusCode, 200, created.body);
    const key = JSON.parse(created.body).__KEY;
    const x = await openExplorer(browser, server);
    await chooseDataClass(x.page, 'Company');
    await x.page.getByRole('textbox', { name: 'Query' }).fill(`ID = ${key}`);
    await x.page.getByRole('button', { name: 'Apply' }).click();
    await x.page.getByTestId('entity-count').getByText('1 entity').waitFor();
    await x.page.locator('.ag-grid-viewport [row-index="0"] [col-id="name"]').getByText(payload).waitFor();
    await x.page.getByRole('button', { name: `Open Company ${key}`, exact: true }).click();
    await x.page.waitForURL(new RegExp(`#/Company/\\(${key}\\)$`));
    await x.page.getByLabel('name', { exact: true }).waitFor();
    assert.equal(await x.page.getByLabel('name', { exact: true }).inputValue(), payload);
    assert.equal(await x.page.locator('#pwn1, #pwnb, #pwnk, #pwni, meta[http-equiv]').count(), 0);
    assert.match(x.page.url(), /\/\$explorer#\/Company/, 'no refresh took the page away');
    await server.app.inject({ method: 'POST', url: `/rest/Company(${key})?$method=delete` });
    await x.context.close();
  });

  it('follows an N→1 value to its entity and a 1→N attribute to its entities, and goes back', async () => {
    const x = await openExplorer(browser, server);
    await chooseDataClass(x.page, 'Company');
    const staff = await restJson(server, '/rest/Company(1)/staff?$top=0');
    await x.page.getByRole('button', { name: 'List the staff of Company 1', exact: true }).click();
    await x.page.getByRole('heading', { level: 2, name: 'Company(1).staff' }).waitFor();
    assert.match(x.page.url(), /#\/Company\/\(1\)\/staff$/);
    await x.page.getByTestId('entity-count').getByText(`${staff.__COUNT} entities`).waitFor();
    const firstLast = (await column(x.page, 'lastName'))[0];
    const expected = await restJson(server, '/rest/Company(1)/staff?$top=1&$attributes=lastName');
    assert.equal(firstLast, expected.__ENTITIES[0].lastName);
    await x.shot('relation-list');

    // an employee's employer opens Company 1
    await x.page.getByRole('button', { name: 'Open Company 1', exact: true }).first().click();
    await x.page.waitForURL(/#\/Company\/\(1\)$/);
    await x.page.goBack();
    await x.page.getByRole('heading', { level: 2, name: 'Company(1).staff' }).waitFor();
    await x.page.getByRole('button', { name: '← Back' }).click();
    await x.page.getByRole('heading', { level: 2, name: 'Company' }).waitFor();
    assert.deepEqual(defects(x), []);
    await x.context.close();
  });

  it('works from the keyboard: Tab to a dataclass, Enter opens it, Enter on a key opens the entity', async () => {
    const x = await openExplorer(browser, server);
    await x.page.getByRole('link', { name: /^City/ }).focus();
    await x.page.keyboard.press('Enter');
    await x.page.getByRole('heading', { level: 2, name: 'City' }).waitFor();
    await x.page.locator('.ag-grid-viewport [role="row"]').first().waitFor();
    await x.page.getByRole('button', { name: /^Open City \d+$/ }).first().focus();
    await x.page.keyboard.press('Enter');
    await x.page.waitForURL(/#\/City\/\(\d+\)$/);
    // every control in the frame has a name a screen reader can say
    await x.page.goBack();
    await x.page.getByRole('heading', { level: 2, name: 'City' }).waitFor();
    const unnamed = await x.page.evaluate(() => [...document.querySelectorAll('input, select, textarea, button')]
      .filter((el) => !(el as HTMLElement).closest('.ag-root-wrapper'))
      .filter((el) => {
        const labelled = ((el as HTMLInputElement).labels?.length ?? 0) > 0 || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby');
        return !labelled && !(el.textContent ?? '').trim();
      }).map((el) => el.outerHTML.slice(0, 80)));
    assert.deepEqual(unnamed, []);
    await x.context.close();
  });

  it('passes axe-core\'s WCAG 2.1 AA checks (contrast, labels, roles) on the grid with its panels open, an entity\'s form and the login dialog, wide and at a phone\'s width', async () => {
    for (const width of [1280, 390]) {
      const x = await openExplorer(browser, server, { width, height: 800 });
      if (width < 760) await x.page.getByRole('button', { name: 'Dataclasses' }).click();
      await chooseDataClass(x.page, 'Company');
      for (const panel of ['Columns', 'Summaries', 'Entity sets', 'Functions']) await x.page.locator('summary', { hasText: new RegExp(`^${panel}`) }).click();
      await x.page.getByRole('textbox', { name: 'Query' }).fill('name >== 1');
      await x.page.getByRole('button', { name: 'Apply' }).click();
      await x.page.locator('#query-error').waitFor();
      assert.deepEqual(await accessibilityViolations(x.page), [], `the grid at ${width} px`);
      await x.page.getByRole('button', { name: 'Open Company 1', exact: true }).click();
      await x.page.getByLabel('name', { exact: true }).waitFor();
      assert.deepEqual(await accessibilityViolations(x.page), [], `the form at ${width} px`);
      await x.page.getByRole('banner').getByRole('button', { name: 'Log in' }).click();
      await x.page.getByRole('dialog', { name: 'Log in' }).waitFor();
      assert.deepEqual(await accessibilityViolations(x.page), [], `the login dialog at ${width} px`);
      // the checker does find what is wrong: a field without a label
      await x.page.evaluate(() => document.querySelector('dialog form')!.append(document.createElement('input')));
      assert.match((await accessibilityViolations(x.page)).join('\n'), /^label at /);
      await x.context.close();
    }
  });

  it('fits a phone\'s width: the dataclasses behind a menu button, the grid below the query box', async () => {
    const x = await openExplorer(browser, server, { width: 390, height: 844 });
    const nav = x.page.getByRole('navigation', { name: 'Dataclasses' });
    assert.equal(await nav.isVisible(), false);
    await x.page.getByRole('button', { name: 'Dataclasses' }).click();
    await nav.getByRole('link', { name: /^Employee/ }).click();
    await x.page.getByRole('heading', { level: 2, name: 'Employee' }).waitFor();
    await x.page.locator('.ag-grid-viewport [role="row"]').first().waitFor();
    assert.equal(await nav.isVisible(), false, 'the menu closes on a choice');
    const overflow = await x.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
    await x.shot('phone-employee');
    await x.context.close();
  });
});

describe('sessions and permissions, on the demo with its roles.json', () => {
  let server: ExplorerServer;
  before(async () => {
    server = await explorerServer({ roles: true });
  });
  after(() => server.close());

  it('a guest sees no salary and no New button; logged in as bob the salaries appear; as alice the New button; logging out goes back', async () => {
    const x = await openExplorer(browser, server);
    await chooseDataClass(x.page, 'Employee');
    assert.equal(await x.page.locator('.ag-header-cell[col-id="salary"]').count(), 0);
    assert.equal(await x.page.getByRole('button', { name: 'New Employee' }).count(), 0);

    await x.page.getByRole('banner').getByRole('button', { name: 'Log in' }).click();
    const dialog = x.page.getByRole('dialog', { name: 'Log in' });
    await dialog.getByLabel('User name').fill('bob');
    await dialog.getByLabel('Password').fill('wrong');
    await dialog.getByRole('button', { name: 'Log in' }).click();
    await dialog.getByRole('alert').getByText(/./).waitFor();
    await x.shot('login-refused');
    await dialog.getByLabel('Password').fill('bob123');
    await dialog.getByRole('button', { name: 'Log in' }).click();
    await x.page.getByText('Logged in as').waitFor();
    await x.page.locator('.ag-header-cell[col-id="salary"]').waitFor();
    assert.equal(await x.page.getByRole('button', { name: 'New Employee' }).count(), 0, 'bob may not create');

    await x.page.getByRole('button', { name: 'Log out' }).click();
    await x.page.getByRole('banner').getByRole('button', { name: 'Log in' }).click();
    await dialog.getByLabel('User name').fill('alice');
    await dialog.getByLabel('Password').fill('alice123');
    await dialog.getByRole('button', { name: 'Log in' }).click();
    await x.page.getByRole('button', { name: 'New Employee' }).waitFor();
    assert.equal(await x.page.locator('.ag-header-cell[col-id="salary"]').count(), 0, 'alice may not see salaries');
    await x.shot('logged-in-alice');
    await x.page.getByRole('button', { name: 'Log out' }).click();
    await x.page.getByRole('banner').getByRole('button', { name: 'Log in' }).waitFor();
    assert.equal(await x.page.getByRole('button', { name: 'New Employee' }).count(), 0);
    assert.deepEqual(defects(x), []);
    await x.context.close();
  });

  it('asks for a login when the datastore forces one (a 401), and shows what the session may read afterwards', async () => {
    const { readFileSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { DEMO_DIR, tempDir } = await import('../support/helpers.js');
    const tmp = tempDir();
    const roles = JSON.parse(readFileSync(join(DEMO_DIR, 'roles.json'), 'utf8'));
    writeFileSync(join(tmp.dir, 'roles.json'), JSON.stringify({ ...roles, forceLogin: true }));
    const forced = await explorerServer({ roles: join(tmp.dir, 'roles.json') });
    try {
      const x = await openExplorer(browser, forced, { hash: '#/Company' });
      const dialog = x.page.getByRole('dialog', { name: 'Log in' });
      await dialog.waitFor();
      await dialog.getByLabel('User name').fill('admin');
      await dialog.getByLabel('Password').fill('admin123');
      await dialog.getByRole('button', { name: 'Log in' }).click();
      await x.page.getByText('Logged in as').waitFor();
      await x.page.locator('.ag-grid-viewport [role="row"]').first().waitFor();
      await x.page.getByTestId('entity-count').getByText('40 entities').waitFor();
      await x.context.close();
    } finally {
      await forced.close();
      tmp.remove();
    }
  });
});
