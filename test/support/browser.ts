// Browser tests' harness: Debian's Chromium (found, or installed with apt-get when the tests run
// as root on a machine without it, as CI does) driven by playwright-core, against a real server on
// 127.0.0.1 over the demo project in a temporary SQLite file. Screenshots go to
// test-results/explorer/ (docs/explorer.md names the folder). The Data Explorer is the same on every
// engine, so these files run on SQLite only.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { openProject } from '../../src/project/open.js';
import { buildServer, type ServerOptions } from '../../src/http/server.js';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { DEMO_DIR, tempDir } from './helpers.js';

/** (SCREENSHOTS_DIR puts them elsewhere: a closing note's pictures) */
export const SCREENSHOTS = process.env.SCREENSHOTS_DIR ?? fileURLToPath(new URL('../../test-results/explorer/', import.meta.url));

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => !!p);

/** Chromium's path; installs Debian's package when missing and allowed to (root with apt-get). */
export function chromiumPath(): string {
  const found = CANDIDATES.find((p) => existsSync(p));
  if (found) return found;
  if (process.getuid?.() === 0 && existsSync('/usr/bin/apt-get')) {
    process.stderr.write('# browser tests: installing Debian\'s chromium (apt-get install chromium)\n');
    execFileSync('/usr/bin/apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeout: 15 * 60_000 });
    if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  }
  throw new Error('the browser tests need Chromium: install Debian\'s package (apt-get install chromium) or set CHROMIUM_PATH');
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
  });
}

export interface ExplorerServer {
  readonly ds: DatastoreWithClasses;
  readonly app: FastifyInstance;
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  /** http://127.0.0.1:PORT/$explorer */
  readonly url: string;
  close(): Promise<void>;
}

export interface ExplorerServerOptions extends ServerOptions {
  /** the project folder (default the demo) */
  readonly project?: string;
  /** the demo's roles.json (true), another file, or none (false, the default) */
  readonly roles?: string | boolean;
  /** an existing SQLite file to serve instead of a fresh seeded one */
  readonly db?: string;
}

/** A real server on 127.0.0.1 for a browser to reach. */
export async function explorerServer(options: ExplorerServerOptions = {}): Promise<ExplorerServer> {
  const tmp = tempDir('dataset-rest-explorer-');
  const project = options.project ?? DEMO_DIR;
  const roles = options.roles === true ? join(project, 'roles.json') : options.roles ?? false;
  const ds = await openProject(project, { db: options.db ?? join(tmp.dir, 'data.sqlite'), roles });
  const app = await buildServer(ds, { logLevel: 'silent', ...options });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const origin = `http://127.0.0.1:${port}`;
  return {
    ds, app, origin, url: `${origin}/$explorer`,
    async close() {
      await app.close();
      await ds.close();
      tmp.remove();
    },
  };
}

export interface ExplorerPage {
  readonly page: Page;
  readonly context: BrowserContext;
  /** what the page logged as errors (CSP violations included) and the exceptions it threw */
  readonly problems: string[];
  /** a full-page screenshot in test-results/explorer/<name>.png */
  shot(name: string): Promise<void>;
}

/** A new browser context (its own cookies) with a page on the explorer. */
export async function openExplorer(browser: Browser, server: ExplorerServer, options: { width?: number; height?: number; hash?: string } = {}): Promise<ExplorerPage> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: options.height ?? 800 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`exception: ${e.message}`));
  await page.goto(`${server.url}${options.hash ?? ''}`);
  mkdirSync(SCREENSHOTS, { recursive: true });
  return {
    page, context, problems,
    async shot(name) {
      await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
    },
  };
}

/** Logs in through the header's button and the login dialog, and waits for the header to name the user. */
export async function logInThroughDialog(page: Page, userName: string, password: string): Promise<void> {
  await page.getByRole('banner').getByRole('button', { name: 'Log in' }).click();
  const dialog = page.getByRole('dialog', { name: 'Log in' });
  await dialog.getByLabel('User name').fill(userName);
  await dialog.getByLabel('Password').fill(password);
  await dialog.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('banner').getByText(`Logged in as ${userName}`).waitFor();
}
