// The Data Explorer's panels over a collection, driven as a person would in Chromium: summaries
// ($compute, $distinct), entity sets (save, list from $info, AND / OR / EXCEPT, open, release) and
// function calls with typed parameters. What the page shows is checked against the REST answers.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { explorerServer, launchBrowser, openExplorer, type ExplorerPage, type ExplorerServer } from '../support/browser.js';

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

async function get<T>(server: ExplorerServer, url: string, body?: unknown): Promise<T> {
  const r = await server.app.inject(body === undefined ? { method: 'GET', url } : { method: 'POST', url, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return r.json() as T;
}

const filterQuery = (filter: string) => `$filter=${encodeURIComponent(`"${filter}"`)}`;

async function keysWhere(server: ExplorerServer, dc: string, filter: string): Promise<Set<string>> {
  const page = await get<{ __ENTITIES: { __KEY: string }[] }>(server, `/rest/${dc}?${filterQuery(filter)}&$top=1000&$attributes=ID`);
  return new Set(page.__ENTITIES.map((e) => e.__KEY));
}

async function openDataClass(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Dataclasses' }).getByRole('link', { name: new RegExp(`^${name}\\b`) }).click();
  await page.getByRole('heading', { level: 2, name }).waitFor();
}

async function openPanel(page: Page, title: string): Promise<void> {
  await page.locator('summary', { hasText: new RegExp(`^${title}$`) }).click();
}

/** Applies a query in the query box and waits for the grid to count what REST counts. */
async function applyFilter(page: Page, server: ExplorerServer, dc: string, filter: string): Promise<number> {
  const { __COUNT } = await get<{ __COUNT: number }>(server, `/rest/${dc}?${filterQuery(filter)}&$top=0`);
  await page.getByLabel('Query', { exact: true }).fill(filter);
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByTestId('entity-count').filter({ hasText: new RegExp(`^${__COUNT} entit`) }).waitFor();
  return __COUNT;
}

/** the stats table's rows as {count: '40', …} */
async function stats(page: Page): Promise<Record<string, string>> {
  const rows = await page.getByTestId('summary-stats').locator('tr').all();
  const out: Record<string, string> = {};
  for (const row of rows) out[(await row.locator('th').innerText()).trim()] = (await row.locator('td').innerText()).trim();
  return out;
}

/** Does `action`, then waits for the element's text to change: its new text. */
async function changed(element: Locator, action: () => Promise<void>): Promise<string> {
  const before = await element.innerText();
  await action();
  const handle = await element.elementHandle();
  await element.page().waitForFunction(([e, text]) => (e as HTMLElement).innerText !== text, [handle, before] as const);
  return element.innerText();
}

/** Fills the open login dialog as admin and waits for the header to say so. */
async function logIn(page: Page): Promise<void> {
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('User name').fill('admin');
  await dialog.getByLabel('Password').fill('admin123');
  await dialog.getByRole('button', { name: 'Log in' }).click();
  await page.getByText('Logged in as').waitFor();
}

function assertNoProblems(x: ExplorerPage): void {
  assert.deepEqual(x.problems.filter((p) => p.includes('Content Security Policy') || p.startsWith('exception:')), []);
}

describe('explorer panels (open datastore)', () => {
  let server: ExplorerServer;
  before(async () => {
    server = await explorerServer();
  });
  after(async () => {
    await server?.close();
  });

  test('summaries: $compute and $distinct of the selection, following the filter', async () => {
    const x = await openExplorer(browser, server);
    const { page } = x;
    await openDataClass(page, 'Company');
    await openPanel(page, 'Summaries');
    await page.getByLabel('Attribute').selectOption('revenues');
    await page.getByRole('button', { name: 'Summarize' }).click();
    await page.getByTestId('summary-stats').waitFor();
    const all = await get<{ revenues: Record<string, number> }>(server, '/rest/Company/revenues?$compute=$all');
    assert.deepEqual(await stats(page), Object.fromEntries(Object.entries(all.revenues).map(([k, v]) => [k, String(v)])));
    assert.match(await page.getByTestId('summary-stats').locator('caption').innerText(), /revenues/);

    // the grid's filter applies: the summary is asked again
    await applyFilter(page, server, 'Company', 'revenues > 20000000');
    const some = await get<{ revenues: Record<string, number> }>(server, `/rest/Company/revenues?$compute=$all&${filterQuery('revenues > 20000000')}`);
    await page.getByTestId('summary-stats').locator('caption', { hasText: 'where revenues > 20000000' }).waitFor();
    assert.equal((await stats(page)).count, String(some.revenues.count));
    assert.equal((await stats(page)).sum, String(some.revenues.sum));
    const distinct = await get<number[]>(server, `/rest/Company/revenues?$distinct=true&${filterQuery('revenues > 20000000')}`);
    assert.match(await page.getByTestId('summary-distinct').locator('caption').innerText(), new RegExp(`: ${distinct.length}$`));
    assert.equal(await page.getByTestId('summary-distinct').locator('td').count(), distinct.length);

    // a date-only attribute: min and max shown as dates, count as a number
    await page.getByLabel('Attribute').selectOption('founded');
    await page.getByRole('button', { name: 'Summarize' }).click();
    await page.getByTestId('summary-stats').locator('caption', { hasText: /^founded/ }).waitFor();
    const founded = (await stats(page));
    assert.match(founded.min, /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(founded.sum, undefined);
    await x.shot('panels-summaries');

    // many distinct values: capped, and said so
    await openDataClass(page, 'Employee');
    await openPanel(page, 'Summaries');
    await page.getByLabel('Attribute').selectOption('badge');
    await page.getByRole('button', { name: 'Summarize' }).click();
    await page.getByTestId('summary-distinct').locator('caption', { hasText: 'the first 100 (there are more)' }).waitFor();
    assert.equal(await page.getByTestId('summary-distinct').locator('td').count(), 100);
    assertNoProblems(x);
    await x.context.close();
  });

  test('entity sets: save, list from $info, AND / OR / EXCEPT, open, release', async () => {
    const x = await openExplorer(browser, server);
    const { page } = x;
    await openDataClass(page, 'Company');
    await openPanel(page, 'Entity sets');
    const message = page.getByTestId('sets-message');
    const rich = 'revenues > 20000000';
    const early = 'name < M';
    const saveWith = async (filter: string): Promise<string> => {
      await applyFilter(page, server, 'Company', filter);
      const m = /^Saved set (\w+) \((\d+) entities\)/.exec(await changed(message, () => page.getByRole('button', { name: 'Save selection as a set' }).click()));
      assert.ok(m);
      assert.equal(Number(m[2]), (await keysWhere(server, 'Company', filter)).size);
      return m[1];
    };
    const a = await saveWith(rich);
    const b = await saveWith(early);
    const list = page.getByTestId('sets-list');
    await list.getByRole('button', { name: `Open set ${b}` }).waitFor();
    assert.equal(await list.locator('tbody tr').count(), 2);

    const richKeys = await keysWhere(server, 'Company', rich);
    const earlyKeys = await keysWhere(server, 'Company', early);
    const expected: Record<string, number> = {
      AND: [...richKeys].filter((k) => earlyKeys.has(k)).length,
      OR: new Set([...richKeys, ...earlyKeys]).size,
      EXCEPT: [...richKeys].filter((k) => !earlyKeys.has(k)).length,
    };
    for (const op of ['AND', 'OR', 'EXCEPT']) {
      await page.getByLabel('First set').selectOption(a);
      await page.getByLabel('Operator').selectOption(op);
      await page.getByLabel('Second set').selectOption(b);
      const m = new RegExp(`^${op} made set (\\w+) \\((\\d+) entities\\)`).exec(await changed(message, () => page.getByRole('button', { name: 'Combine' }).click()));
      assert.ok(m, op);
      assert.equal(Number(m[2]), expected[op], op);
      await list.getByRole('button', { name: `Open set ${m[1]}` }).waitFor();
    }
    assert.equal(await list.locator('tbody tr').count(), 5);

    // $info on demand: the session's sets, as the server says
    await page.getByRole('button', { name: 'Show $info' }).click();
    const info = JSON.parse(await page.getByTestId('info-json').innerText()) as { entitySet: { id: string }[] };
    assert.ok(info.entitySet.some((s) => s.id === a) && info.entitySet.some((s) => s.id === b));
    await x.shot('panels-sets');

    // release: gone from the list and from the session's $info
    await list.getByRole('button', { name: `Release set ${b}` }).click();
    await message.filter({ hasText: `Released set ${b}` }).waitFor();
    await list.getByRole('button', { name: `Open set ${b}` }).waitFor({ state: 'detached' });
    const ids = await page.evaluate(async () => ((await (await fetch('/rest/$info')).json()) as { entitySet: { id: string }[] }).entitySet.map((s) => s.id));
    assert.ok(!ids.includes(b) && ids.includes(a));

    // open: the set in a grid of its own
    await list.getByRole('button', { name: `Open set ${a}` }).click();
    await page.waitForURL(new RegExp(`#/Company/set/${a}$`));
    await page.getByTestId('entity-count').filter({ hasText: `${richKeys.size} entities` }).waitFor();
    assertNoProblems(x);
    await x.context.close();
  });

  test('functions: typed parameters, GET and POST, the selection, datastore and singleton', async () => {
    const x = await openExplorer(browser, server);
    const { page } = x;
    await openDataClass(page, 'Company');
    await openPanel(page, 'Functions');
    const fn = page.getByLabel('Function', { exact: true });
    const call = (name: string) => page.getByRole('button', { name: `Call ${name}` }).click();
    const result = page.getByTestId('function-result');
    const request = page.getByTestId('function-request');

    // a dataclass function allowed on GET, with one string parameter: sent as $params
    await fn.selectOption({ label: 'byCode (GET allowed)' });
    assert.equal(await page.getByLabel('HTTP method').inputValue(), 'GET');
    await page.getByRole('button', { name: 'Add parameter' }).click();
    await page.getByLabel('Value of parameter 1').fill('C1000');
    await call('byCode');
    await page.getByTestId('function-entity').filter({ hasText: 'Company(1)' }).waitFor();
    assert.match(await request.innerText(), /^GET \/rest\/Company\/byCode\?\$params=/);

    // a selection function: the grid's filter is the selection it runs on
    await applyFilter(page, server, 'Company', 'revenues > 20000000');
    await fn.selectOption('sel:totalRevenues');
    await page.getByRole('button', { name: 'Remove parameter 1' }).click();
    await call('totalRevenues');
    const total = await get<{ result: number }>(server, `/rest/Company/totalRevenues?${filterQuery('revenues > 20000000')}`, []);
    await result.filter({ hasText: String(total.result) }).waitFor();
    assert.deepEqual(JSON.parse(await result.innerText()), total);

    // a datastore function with a date parameter: a selection, its count and first keys shown
    await fn.selectOption('ds:hiredBetween');
    await page.getByRole('button', { name: 'Add parameter' }).click();
    await page.getByLabel('Type of parameter 1').selectOption('date');
    await page.getByLabel('Value of parameter 1').fill('2019-01-01');
    await call('hiredBetween');
    const hired = await get<{ __COUNT: number; __ENTITIES: { __KEY: string }[] }>(server, '/rest/$catalog/hiredBetween?$top=10', ['2019-01-01']);
    await page.getByTestId('function-selection').filter({ hasText: `An entity selection of Employee: ${hired.__COUNT} entities` }).waitFor();
    const shown = page.getByTestId('function-selection').getByRole('listitem');
    assert.deepEqual(await shown.allInnerTexts(), hired.__ENTITIES.map((e) => e.__KEY));
    assert.equal(await request.innerText(), 'POST /rest/$catalog/hiredBetween');
    assert.equal(await page.getByTestId('function-body').innerText(), '["2019-01-01"]');

    // two parameters of two types (one removed on the way), a JSON-free object answer
    await fn.selectOption('ds:pause');
    await page.getByLabel('Type of parameter 1').selectOption('number');
    await page.getByLabel('Value of parameter 1').fill('5');
    for (let i = 0; i < 2; i++) await page.getByRole('button', { name: 'Add parameter' }).click();
    await page.getByLabel('Type of parameter 2').selectOption('boolean');
    await page.getByRole('button', { name: 'Remove parameter 2' }).click();
    await page.getByLabel('Value of parameter 2').fill('tagged');
    await call('pause');
    await result.filter({ hasText: 'tagged' }).waitFor();
    assert.deepEqual(JSON.parse(await result.innerText()), { result: { ms: 5, tag: 'tagged' } });

    // a JSON parameter: a singleton's function
    await fn.selectOption('st:Tools:companiesIn');
    await page.getByRole('button', { name: 'Remove parameter 2' }).click();
    await page.getByLabel('Type of parameter 1').selectOption('string');
    await page.getByLabel('Value of parameter 1').fill('France');
    await call('companiesIn');
    const french = await get<{ __COUNT: number }>(server, '/rest/$singleton/Tools/companiesIn', ['France']);
    await page.getByTestId('function-selection').filter({ hasText: `An entity selection of Company: ${french.__COUNT} ` }).waitFor();
    await x.shot('panels-functions');

    // the server's refusal of a parameter the function declares, shown with its code
    await fn.selectOption('ds:earningAtLeast');
    await page.getByLabel('Value of parameter 1').fill('many');
    await call('earningAtLeast');
    const error = page.getByTestId('function-error');
    await error.waitFor();
    assert.match(await error.innerText(), /parameter #1 \(min\) of earningAtLeast of the DataStore class is a number; got "many" \(HTTP 400, errCode 7021\)/);
    // a parameter that is not what its type says never leaves the page
    await page.getByLabel('Type of parameter 1').selectOption('json');
    await page.getByLabel('Value of parameter 1').fill('{oops');
    await call('earningAtLeast');
    await error.filter({ hasText: /parameter 1: not JSON/ }).waitFor();
    await x.shot('panels-functions-error');
    assertNoProblems(x);
    await x.context.close();
  });

  test('functions: a selection function on a relation\'s entities (a set made for the call, then released)', async () => {
    const x = await openExplorer(browser, server, { hash: '#/Company/(1)/staff' });
    const { page } = x;
    await page.getByRole('heading', { level: 2, name: 'Company(1).staff' }).waitFor();
    await openPanel(page, 'Functions');
    await page.getByLabel('Function', { exact: true }).selectOption('sel:payrollSummary');
    await page.getByRole('button', { name: 'Add parameter' }).click();
    await page.getByLabel('Type of parameter 1').selectOption('number');
    await page.getByLabel('Value of parameter 1').fill('10');
    await page.getByRole('button', { name: 'Call payrollSummary' }).click();
    const staff = await get<{ __ENTITIES: { salary: number }[] }>(server, '/rest/Company(1)/staff?$attributes=salary&$top=1000');
    const total = staff.__ENTITIES.reduce((s, e) => s + (e.salary ?? 0), 0);
    await page.getByTestId('function-result').filter({ hasText: '"count"' }).waitFor();
    const answer = JSON.parse(await page.getByTestId('function-result').innerText()) as { result: { count: number; total: number } };
    assert.equal(answer.result.count, staff.__ENTITIES.length);
    assert.equal(answer.result.total, total);
    const made = /^POST \/rest\/Employee\/\$entityset\/(\w+)\/payrollSummary/.exec(await page.getByTestId('function-request').innerText());
    assert.ok(made);
    // the set made for the call is gone
    const sets = await page.evaluate(async () => ((await (await fetch('/rest/$info')).json()) as { entitySet: { id: string }[] }).entitySet.map((s) => s.id));
    assert.ok(!sets.includes(made[1]));
    assertNoProblems(x);
    await x.context.close();
  });
});

describe('explorer panels (demo roles)', () => {
  let server: ExplorerServer;
  before(async () => {
    server = await explorerServer({ roles: true });
  });
  after(async () => {
    await server?.close();
  });

  test('a function the session may not call is not offered (issue 38), and one that throws shows the server\'s message', async () => {
    const x = await openExplorer(browser, server);
    const { page } = x;
    await openDataClass(page, 'Company');
    await openPanel(page, 'Functions');
    // a guest may not execute raiseSalaries (roles.json: salaries): it is not in the list, nor spin (testing)
    const offered = await page.getByLabel('Function', { exact: true }).locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    assert.ok(offered.includes('ds:counts'), offered.join(', '));
    for (const id of ['ds:raiseSalaries', 'ds:spin']) assert.ok(!offered.includes(id), `${id} offered to a guest: ${offered.join(', ')}`);
    const refused = await get<{ __ERROR: { message: string }[] }>(server, '/rest/$catalog/raiseSalaries', [1, 60]);
    assert.match(refused.__ERROR[0].message, /No permission to execute/);

    // admin may call it: the function itself refuses a raise past 50%
    await page.getByRole('banner').getByRole('button', { name: 'Log in' }).click();
    await logIn(page);
    await openPanel(page, 'Functions');
    await page.getByLabel('Function', { exact: true }).selectOption('ds:raiseSalaries');
    for (let i = 0; i < 2; i++) await page.getByRole('button', { name: 'Add parameter' }).click();
    for (const n of [1, 2]) await page.getByLabel(`Type of parameter ${n}`).selectOption('number');
    await page.getByLabel('Value of parameter 1').fill('1');
    await page.getByLabel('Value of parameter 2').fill('60');
    await page.getByRole('button', { name: 'Call raiseSalaries' }).click();
    const error = page.getByTestId('function-error');
    await error.filter({ hasText: 'a 60% raise needs a board decision' }).waitFor();
    assertNoProblems(x);
    await x.context.close();
  });

  test('entity functions: GET without parameters, then a typed parameter', async () => {
    const page1 = await get<{ __ENTITIES: { __KEY: string }[] }>(server, '/rest/Employee?$top=1&$attributes=ID');
    const key = page1.__ENTITIES[0].__KEY;
    const x = await openExplorer(browser, server, { hash: `#/Employee/(${key})` });
    const { page } = x;
    await page.getByRole('main').getByText(key).first().waitFor();
    const summary = page.locator('summary', { hasText: /^Functions$/ });
    await summary.click();
    await page.getByLabel('Function', { exact: true }).selectOption({ label: 'seniority (GET allowed)' });
    await page.getByRole('button', { name: 'Call seniority' }).click();
    await page.getByTestId('function-result').filter({ hasText: '"result"' }).waitFor();
    assert.match(await page.getByTestId('function-request').innerText(), new RegExp(`^GET /rest/Employee\\(${key}\\)/seniority`));

    // as admin, a function with a parameter that saves: the answer is the entity, raised
    await page.getByRole('banner').getByRole('button', { name: 'Log in' }).click();
    await logIn(page);
    await summary.click();
    const salary = await page.evaluate(async (url) => ((await (await fetch(url)).json()) as { salary: number }).salary, `/rest/Employee(${key})?$attributes=salary`);
    await page.getByLabel('Function', { exact: true }).selectOption({ label: 'raise' });
    await page.getByRole('button', { name: 'Add parameter' }).click();
    await page.getByLabel('Type of parameter 1').selectOption('number');
    await page.getByLabel('Value of parameter 1').fill('10');
    await page.getByRole('button', { name: 'Call raise' }).click();
    await page.getByTestId('function-entity').filter({ hasText: `Employee(${key})` }).waitFor();
    const raised = JSON.parse(await page.getByTestId('function-result').innerText()) as { salary: number };
    assert.equal(raised.salary, Math.round(salary * 1.1));
    await x.shot('panels-entity-functions');
    assertNoProblems(x);
    await x.context.close();
  });
});
