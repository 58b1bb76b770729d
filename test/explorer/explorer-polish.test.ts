// The Data Explorer's finish (issue 38): a query placeholder that fits the dataclass shown, locks
// rather than a login dialog on a page a guest may partly read, labels for relations and UUID keys
// (the key on hover), numbers in their defaultFormat, CSV export and import through the server's
// own REST API, the requests the page makes as URLs and curl commands that work, a one-line header
// at a phone's width, only the functions the session may call, and the API reference without
// Swagger's logo. Screenshots go to test-results/explorer/ (or SCREENSHOTS_DIR).

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { explorerServer, launchBrowser, logInThroughDialog, openExplorer, type ExplorerPage, type ExplorerServer } from '../support/browser.js';
import { DEMO_DIR, tempDir } from '../support/helpers.js';

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(() => browser.close());

async function restJson(server: ExplorerServer, url: string, headers: Record<string, string> = {}): Promise<any> {
  const res = await server.app.inject({ url, headers });
  return JSON.parse(res.body);
}

/** the page's problems that are defects: CSP violations and exceptions (4xx loads are expected refusals) */
function defects(x: ExplorerPage): string[] {
  return x.problems.filter((p) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(p));
}

async function chooseDataClass(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Dataclasses' }).getByRole('link', { name: new RegExp(`^${name}\\b`) }).click();
  await page.getByRole('heading', { level: 2, name }).waitFor();
  await page.locator('.ag-grid-viewport [role="row"]').first().waitFor();
}

/** the options of the Functions panel's list */
async function functionNames(page: Page): Promise<string[]> {
  await page.locator('summary', { hasText: /^Functions/ }).click();
  const select = page.getByLabel('Function', { exact: true });
  if (await select.count() === 0) return [];
  return (await select.locator('option').allInnerTexts()).map((t) => t.replace(/ \(GET allowed\)$/, ''));
}

describe('on the open demo (no roles.json)', () => {
  let server: ExplorerServer;
  before(async () => {
    server = await explorerServer();
  });
  after(() => server.close());

  it('offers a query placeholder built from the dataclass shown (its attributes, a relation when it has one), which the server accepts', async () => {
    const x = await openExplorer(browser, server);
    const seen: string[] = [];
    for (const name of ['Employee', 'Company', 'City']) {
      await chooseDataClass(x.page, name);
      const query = x.page.getByRole('textbox', { name: 'Query' });
      const placeholder = await query.getAttribute('placeholder') ?? '';
      assert.notEqual(placeholder, 'salary > 50000 and employer.name = acme@');
      const catalog = await restJson(server, `/rest/$catalog/${name}`);
      const first = placeholder.split(/\s/)[0];
      assert.ok(catalog.attributes.some((a: any) => a.name === first), `${placeholder} names an attribute of ${name}`);
      seen.push(placeholder);
      await query.fill(placeholder);
      await x.page.getByRole('button', { name: 'Apply' }).click();
      const answer = await restJson(server, `/rest/${name}?$filter=${encodeURIComponent(`"${placeholder}"`)}&$top=0`);
      assert.equal(answer.__ERROR, undefined, `${name}: ${placeholder}`);
      await x.page.getByTestId('entity-count').getByText(new RegExp(`^${answer.__COUNT} entit`)).waitFor();
      assert.equal(await x.page.locator('#query-error').count(), 0);
    }
    assert.equal(seen[0], 'employeeNumber > 100 and employer.name = a@', 'through a relation, to its label');
    assert.equal(seen[1], 'revenues > 100 and city.name = a@');
    assert.equal(seen[2], 'population > 100 and name = a@', 'a dataclass without an N→1 relation: its own text');
    assert.deepEqual(defects(x), []);
    await x.context.close();
  });

  it('shows a relation and a UUID key by a label (the model\'s, or the first text attribute) with the key on hover, and numbers in their defaultFormat', async () => {
    const x = await openExplorer(browser, server);
    await chooseDataClass(x.page, 'Employee');
    const first = (await restJson(server, '/rest/Employee?$top=1&$attributes=lastName,employer.name')).__ENTITIES[0];
    const row = x.page.locator('.ag-grid-viewport [role="row"][row-index="0"]');
    // the key: Employee's label (model.json: "label": "lastName"), the UUID on hover
    const key = row.locator('[col-id="__KEY"] button');
    assert.equal((await key.innerText()).trim(), first.lastName);
    assert.equal(await key.getAttribute('title'), `Employee(${first.__KEY})`);
    assert.equal(await key.getAttribute('aria-label'), `Open Employee ${first.__KEY}`);
    // the employer: Company's first text attribute (name), its key on hover
    const employer = row.locator('[col-id="employer"] button');
    assert.equal((await employer.innerText()).trim(), first.employer.name);
    assert.equal(await employer.getAttribute('title'), `Company(${first.employer.__KEY})`);
    await x.shot('labels-employee');

    await chooseDataClass(x.page, 'Company');
    const company = (await restJson(server, '/rest/Company?$top=1&$attributes=revenues,city.name')).__ENTITIES[0];
    const cRow = x.page.locator('.ag-grid-viewport [role="row"][row-index="0"]');
    await cRow.locator('[col-id="city"] button').waitFor();
    // revenues: "defaultFormat": {"format": "$###,###,###"}
    assert.equal((await cRow.locator('[col-id="revenues"]').innerText()).trim(), `$${company.revenues.toLocaleString('en-US', { maximumFractionDigits: 0 })}`);
    assert.equal((await cRow.locator('[col-id="city"] button').innerText()).trim(), company.city.name);
    // a Company key (a number) stays itself
    assert.equal((await cRow.locator('[col-id="__KEY"] button').innerText()).trim(), company.__KEY);
    assert.deepEqual(defects(x), []);
    await x.context.close();
  });

  it('exports the collection as CSV through $format=csv, and imports a CSV file through the REST save, a refused row told with its error', async () => {
    const x = await openExplorer(browser, server);
    await chooseDataClass(x.page, 'City');
    await x.page.getByRole('textbox', { name: 'Query' }).fill('population > 1000000');
    await x.page.getByRole('button', { name: 'Apply' }).click();
    const big = await restJson(server, `/rest/City?$filter=${encodeURIComponent('"population > 1000000"')}&$top=0`);
    await x.page.getByTestId('entity-count').getByText(`${big.__COUNT} entities`).waitFor();
    await x.page.locator('summary', { hasText: /^CSV/ }).click();
    const link = x.page.getByTestId('csv-export');
    assert.match(decodeURIComponent(await link.getAttribute('href') ?? ''), /^\/rest\/City\?\$format=csv&\$filter="population > 1000000"$/);
    const download = x.page.waitForEvent('download');
    await link.click();
    const file = await (await download).path();
    const csv = readFileSync(file, 'utf8');
    const expected = (await server.app.inject({ url: `/rest/City?$format=csv&$filter=${encodeURIComponent('"population > 1000000"')}` })).body;
    assert.equal(csv, expected, 'the server\'s own export');
    const lines = csv.trim().split(/\r\n/);
    assert.equal(lines.length, big.__COUNT + 1, 'a header and a line per entity');
    assert.match(lines[0], /^"?ID"?,name,country,population$/);

    // import: two new cities with new keys, and one refused (a population that is no number)
    const before = (await restJson(server, '/rest/City?$top=0')).__COUNT;
    const tmp = tempDir();
    const path = join(tmp.dir, 'cities.csv');
    writeFileSync(path, 'ID,name,country,population\r\n999,Tórshavn,"Faroe Islands, the",14000\r\n998,"Quote ""Town""",Nowhere,12\r\n997,Bad,Nowhere,lots\r\n');
    await x.page.getByRole('checkbox', { name: /new keys/ }).check();
    await x.page.getByLabel('Import a CSV file into City').setInputFiles(path);
    const outcome = x.page.getByTestId('csv-import-outcome');
    const alert = x.page.getByRole('alert');
    // (a row the browser cannot read stops the import before anything is sent)
    await alert.getByText(/line 4: population: "lots" is not a number/).waitFor();
    assert.equal((await restJson(server, '/rest/City?$top=0')).__COUNT, before, 'nothing sent');
    // the server refuses one (a whole number wanted): said with its line and its message; the others are saved
    writeFileSync(path, 'ID,name,country,population\r\n999,Tórshavn,"Faroe Islands, the",14000\r\n998,"Quote ""Town""",Nowhere,12\r\n997,Half,Nowhere,12.5\r\n');
    await x.page.getByLabel('Import a CSV file into City').setInputFiles(path);
    await outcome.getByText(/2 created, 1 refused/).waitFor();
    assert.match(await outcome.innerText(), /line 4: City\.population \(long64\) cannot take 12\.5/);
    const after = await restJson(server, `/rest/City?$filter=${encodeURIComponent('"country = Nowhere or country = \'Faroe Islands, the\'"')}&$attributes=name,country,population`);
    assert.deepEqual(after.__ENTITIES.map((e: any) => [e.name, e.country, e.population]).sort(), [['Quote "Town"', 'Nowhere', 12], ['Tórshavn', 'Faroe Islands, the', 14000]]);
    assert.ok(after.__ENTITIES.every((e: any) => !['997', '998', '999'].includes(e.__KEY)), 'new keys');
    assert.equal((await restJson(server, '/rest/City?$top=0')).__COUNT, before + 2);
    await x.page.getByTestId('entity-count').getByText(`${big.__COUNT} entities`).waitFor();
    await x.shot('csv-import');
    tmp.remove();
    await x.context.close();
  });

  it('shows each REST call the page makes as a URL and a curl command, and the curl gives the same answer', async () => {
    const x = await openExplorer(browser, server, { hash: '#/Company' });
    await x.page.locator('.ag-grid-viewport [role="row"]').first().waitFor();
    await x.page.getByLabel('Show the requests').check();
    const panel = x.page.getByRole('complementary', { name: 'Requests' });
    await panel.waitFor();
    // the calls made before the panel opened are there too: the catalog, asked with Prefer: extensions
    const urls = await panel.getByTestId('request-url').allInnerTexts();
    assert.ok(urls.some((u) => u === `${server.origin}/rest/$catalog/$all`), urls.join('\n'));
    const curls = await panel.getByTestId('request-curl').allInnerTexts();
    assert.ok(curls.some((c) => c === `curl -H 'prefer: extensions' -g '${server.origin}/rest/$catalog/$all'`), curls.join('\n'));
    // a new query: its read is listed first
    await x.page.getByRole('textbox', { name: 'Query' }).fill("name = 'A@'");
    await x.page.getByRole('button', { name: 'Apply' }).click();
    await panel.getByTestId('request-url').filter({ hasText: /\$skip=0/ }).filter({ hasText: /%22name%20%3D%20%27A%40%27%22/ }).first().waitFor();
    const item = panel.locator('li', { has: x.page.getByTestId('request-url').filter({ hasText: /\$skip=0/ }) }).first();
    const curl = await item.getByTestId('request-curl').innerText();
    assert.match(curl, /^curl -g 'http:\/\/127\.0\.0\.1:\d+\/rest\/Company\?\$skip=0&\$top=100&\$attributes=[^']+&\$filter=%22name%20%3D%20%27A%40%27%22'$/);
    // run as written, in a shell (not synchronously: the server answering it is in this process)
    const answer = JSON.parse((await promisify(execFile)('sh', ['-c', curl], { encoding: 'utf8', timeout: 20_000 })).stdout);
    const expected = await restJson(server, `/rest/Company?$filter=${encodeURIComponent('"name = \'A@\'"')}&$top=0`);
    assert.equal(answer.__COUNT, expected.__COUNT);
    assert.ok(answer.__COUNT > 0);
    await x.shot('show-requests');
    assert.deepEqual(defects(x), []);
    await x.context.close();
  });

  it('keeps the header on one line at a phone\'s width (375 px), as a guest and logged in', async () => {
    const x = await openExplorer(browser, server, { width: 375, height: 740, hash: '#/Employee' });
    await x.page.locator('.ag-grid-viewport [role="row"]').first().waitFor();
    const oneLine = async () => {
      const boxes = await x.page.locator('header.top').evaluate((h) => [...h.querySelectorAll('button, h1, .who > span')]
        .map((el) => el.getBoundingClientRect()).filter((r) => r.width > 0).map((r) => ({ top: r.top, bottom: r.bottom, right: r.right })));
      const header = await x.page.locator('header.top').boundingBox();
      assert.ok(header && header.height < 56, `the header is ${header?.height} px high`);
      const middle = (b: { top: number; bottom: number }) => (b.top + b.bottom) / 2;
      for (const b of boxes) assert.ok(Math.abs(middle(b) - middle(boxes[0])) < 8, `one line: ${JSON.stringify(boxes)}`);
      for (const b of boxes) assert.ok(b.right <= 375, `inside the width: ${JSON.stringify(boxes)}`);
    };
    await oneLine();
    const overflow = await x.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px`);
    await x.shot('phone-header');
    await logInThroughDialog(x.page, 'admin', 'admin123');
    await oneLine();
    await x.shot('phone-header-logged-in');
    await x.context.close();
  });

  it('serves the API reference without Swagger\'s logo or top bar, with an icon of its own', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${server.origin}/$api`);
    await page.locator('.opblock').first().waitFor();
    assert.equal(await page.locator('.topbar').count(), 0);
    assert.equal(await page.locator('img[src*="logo"], .topbar-wrapper img, a.link svg').count(), 0);
    assert.deepEqual(await page.locator('link[rel="icon"]').evaluateAll((ls) => ls.map((l) => l.getAttribute('href'))), ['/$api/static/theme/icon.svg']);
    const icon = await server.app.inject({ url: '/$api/static/theme/icon.svg' });
    assert.equal(icon.statusCode, 200);
    assert.match(icon.headers['content-type'] as string, /svg/);
    await page.screenshot({ path: join(process.env.SCREENSHOTS_DIR ?? join(import.meta.dirname, '../../test-results/explorer'), 'api-reference.png') });
    await context.close();
  });
});

describe('with a roles.json where a guest may read Company and Employee but not City, and testing is the administrator\'s', () => {
  let server: ExplorerServer;
  let tmp: ReturnType<typeof tempDir>;
  before(async () => {
    tmp = tempDir();
    const roles = JSON.parse(readFileSync(join(DEMO_DIR, 'roles.json'), 'utf8'));
    roles.roles = roles.roles.map((r: any) => (r.role === 'Administrator' ? { ...r, privileges: [...r.privileges, 'testing'] } : r));
    roles.permissions.allowed.push({ applyTo: 'City', type: 'dataclass', read: ['edit'] });
    writeFileSync(join(tmp.dir, 'roles.json'), JSON.stringify(roles));
    server = await explorerServer({ roles: join(tmp.dir, 'roles.json') });
  });
  after(async () => {
    await server.close();
    tmp.remove();
  });

  it('opens no login dialog on a page a guest may partly read: it shows what may be read, locks what may not, and asks for a login when the person does', async () => {
    const x = await openExplorer(browser, server, { hash: '#/Employee' });
    await x.page.locator('.ag-grid-viewport [role="row"]').first().waitFor();
    await x.page.getByTestId('entity-count').getByText('320 entities').waitFor();
    // the counts and the reads are done: no dialog opened by itself
    await x.page.waitForLoadState('networkidle');
    assert.equal(await x.page.getByRole('dialog').count(), 0);
    // City is listed locked, not counted
    const nav = x.page.getByRole('navigation', { name: 'Dataclasses' });
    await nav.getByRole('link', { name: /^City/ }).getByLabel('locked: log in to see').waitFor();
    // what this page may not show is named, locked
    const restricted = x.page.getByTestId('restricted');
    assert.match(await restricted.innerText(), /Not shown to this session: salary, employerCity\./);
    assert.equal(await x.page.locator('.ag-header-cell[col-id="salary"]').count(), 0);
    await x.page.locator('summary', { hasText: /^Columns/ }).click();
    await x.page.getByText('salary (log in to see)').waitFor();
    await x.shot('guest-partly-restricted');

    // a locked dataclass's page says so, with its own login button, and opens no dialog either
    await nav.getByRole('link', { name: /^City/ }).click();
    await x.page.getByRole('button', { name: 'Log in to see City' }).waitFor();
    await x.page.waitForLoadState('networkidle');
    assert.equal(await x.page.getByRole('dialog').count(), 0);
    // asked for: the dialog
    await x.page.getByRole('button', { name: 'Log in to see City' }).click();
    const dialog = x.page.getByRole('dialog', { name: 'Log in' });
    await dialog.waitFor();
    await x.shot('login-dialog');
    await dialog.getByLabel('User name').fill('alice');
    await dialog.getByLabel('Password').fill('alice123');
    await dialog.getByRole('button', { name: 'Log in' }).click();
    // alice (edit) reads City
    await x.page.getByTestId('entity-count').getByText(/entities$/).waitFor();
    await x.page.locator('.ag-grid-viewport [role="row"]').first().waitFor();
    assert.deepEqual(defects(x), []);
    await x.context.close();
  });

  it('offers a guest only the functions it may call (no spin, pause, raiseSalaries), and an administrator holding testing those too', async () => {
    const x = await openExplorer(browser, server, { hash: '#/Company' });
    await x.page.locator('.ag-grid-viewport [role="row"]').first().waitFor();
    const guest = await functionNames(x.page);
    for (const name of ['spin', 'pause', 'whoCalls', 'renameSlowly', 'raiseSalaries']) assert.ok(!guest.includes(name), `a guest is not offered ${name}: ${guest.join(', ')}`);
    assert.ok(guest.includes('counts'), guest.join(', '));
    // the datastore's: those the catalog says the session may execute (roles.json), no more
    const catalog = await restJson(server, '/rest/$catalog', { prefer: 'extensions' });
    assert.deepEqual(guest.filter((n) => catalog.methods.some((m: any) => m.name === n)).sort(), [...catalog.sessionMay.methods].sort());
    const refused = await server.app.inject({ method: 'POST', url: '/rest/$catalog/spin', payload: [1] });
    assert.equal(refused.statusCode, 401, 'spin is refused to a guest indeed');
    await x.page.reload();
    await x.page.locator('.ag-grid-viewport [role="row"]').first().waitFor();
    await logInThroughDialog(x.page, 'admin', 'admin123');
    await x.page.locator('.ag-grid-viewport [role="row"]').first().waitFor();
    await x.page.waitForLoadState('networkidle');
    const admin = await functionNames(x.page);
    for (const name of ['spin', 'pause', 'raiseSalaries']) assert.ok(admin.includes(name), `admin is offered ${name}: ${admin.join(', ')}`);
    // the login is listed with its password hidden: the panel keeps every call from the page's
    // start, shown or not, and its curl commands are there to be copied
    await x.page.getByLabel('Show the requests').check();
    const panel = x.page.getByRole('complementary', { name: 'Requests' });
    const login = panel.locator('li', { has: x.page.getByTestId('request-url').filter({ hasText: /\/rest\/\$directory\/login$/ }) }).first();
    assert.match(await login.getByTestId('request-curl').innerText(), /--data-binary '\["admin","<password>"\]'/);
    assert.doesNotMatch(await panel.innerText(), /admin123/);
    await x.shot('functions-admin');
    assert.deepEqual(defects(x), []);
    await x.context.close();
  });

  it('titles an Employee\'s form by its label (its UUID on hover), and takes screenshots of the form and the administration, logged in as admin', async () => {
    const x = await openExplorer(browser, server, { hash: '#/Employee' });
    await x.page.locator('.ag-grid-viewport [role="row"]').first().waitFor();
    await logInThroughDialog(x.page, 'admin', 'admin123');
    await x.page.locator('.ag-header-cell[col-id="salary"]').waitFor();
    await x.shot('collection-admin');
    const first = (await restJson(server, '/rest/Employee?$top=1&$attributes=lastName')).__ENTITIES[0];
    await x.page.locator('.ag-grid-viewport [role="row"][row-index="0"] [col-id="__KEY"] button').click();
    await x.page.getByLabel('lastName', { exact: true }).waitFor();
    // the form's title: the entity's label, not its UUID, which is on hover
    const title = x.page.getByRole('heading', { level: 2, name: `Employee ${first.lastName}`, exact: true });
    await title.waitFor();
    assert.equal(await title.getAttribute('title'), `Employee(${first.__KEY})`);
    await x.page.waitForLoadState('networkidle');
    await x.shot('entity-employee');
    await x.page.getByRole('navigation', { name: 'Administration' }).getByRole('link', { name: 'Administration' }).click();
    await x.page.getByRole('heading', { level: 2, name: /Administration/ }).waitFor();
    await x.page.waitForLoadState('networkidle');
    await x.shot('admin');
    await x.context.close();
  });
});
