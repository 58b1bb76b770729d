// Checks the peers end to end: builds a 10,000-item database with our schema, starts each peer (and
// our server on Node 22, unless --no-ours22), runs each read once, checks that each answer holds the
// keys bench/suite/model.ts says, in order, and prints what each can do and its answers' sizes.
//
//   node --import tsx bench/peers/check.ts [--rows 10000] [--no-ours22]

import Database from 'better-sqlite3';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CATEGORIES, MODEL, categoryValues, itemValues, keysWithPrefix, prefixOf } from '../suite/model.js';
import { openProject } from '../../src/project/open.js';
import { fold } from '../../src/util/fold.js';
import { temporaryFolder } from '../processes.js';
import { PAGE, jsonKeys, ourServerOnNode22, preparePeers, startJsonServer, startPlatformatic, type Peer, type PeerRoutes, type ReadName } from './index.js';

const args = process.argv.slice(2);
const ROWS = args.includes('--rows') ? Number(args[args.indexOf('--rows') + 1]) : 10_000;
const WITH_OURS22 = !args.includes('--no-ours22');
if (!Number.isInteger(ROWS) || ROWS < 1000) throw new Error('--rows: an integer of at least 1000');

const log = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/** A project folder whose data/data.sqlite has our schema and `rows` items of the model, with their hidden columns. */
async function buildDatabase(rows: number): Promise<{ dir: string; file: string }> {
  const dir = temporaryFolder('peers-check-');
  writeFileSync(join(dir, 'model.json'), `${JSON.stringify(MODEL, null, 2)}\n`);
  mkdirSync(join(dir, 'data'), { recursive: true });
  const ds = await openProject(dir, { roles: false });
  await ds.close();
  const file = join(dir, 'data', 'data.sqlite');
  const db = new Database(file);
  const now = Date.now();
  const category = db.prepare('INSERT INTO "Category" ("ID", "name", "rate", "name__fold", "__stamp", "__timestamp") VALUES (?, ?, ?, ?, 1, ?)');
  const item = db.prepare(
    'INSERT INTO "Item" ("ID", "name", "price", "qty", "created", "categoryID", "name__fold", "__stamp", "__timestamp") VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?)',
  );
  db.transaction(() => {
    for (let n = 0; n < CATEGORIES; n++) {
      const c = categoryValues(n);
      category.run(n + 1, c.name, c.rate, fold(c.name), now);
    }
    for (let n = 0; n < rows; n++) {
      const v = itemValues(n);
      item.run(n + 1, v.name, v.price, v.qty, v.created, v.categoryID, fold(v.name), now);
    }
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { dir, file };
}

// ---- what each read must hold ----

const KEY = 4321;
const PREFIX = prefixOf(KEY - 1);
const DEEP = ROWS - PAGE;

function sortedByPrice(rows: number): number[] {
  const keys = Array.from({ length: rows }, (_, n) => n + 1);
  const price = (key: number): number => itemValues(key - 1).price;
  // ties (none below 100,000 items) by key, in the sort's direction
  return keys.sort((a, b) => price(b) - price(a) || b - a);
}

const EXPECTED: Record<ReadName, number[]> = {
  byKey: [KEY],
  filtered: keysWithPrefix(PREFIX, ROWS),
  expanded: keysWithPrefix(PREFIX, ROWS),
  deepPage: Array.from({ length: PAGE }, (_, i) => DEEP + i + 1),
  sortedPage: sortedByPrice(ROWS).slice(DEEP, DEEP + PAGE),
};
const READS: readonly ReadName[] = ['byKey', 'filtered', 'expanded', 'deepPage', 'sortedPage'];

function routeOf(routes: PeerRoutes, read: ReadName): string | undefined {
  switch (read) {
    case 'byKey':
      return routes.byKey(KEY);
    case 'filtered':
      return routes.filtered(PREFIX);
    case 'expanded':
      return routes.expanded?.(PREFIX);
    case 'deepPage':
      return routes.deepPage(DEEP);
    case 'sortedPage':
      return routes.sortedPage(DEEP);
  }
}

/** The category keys found inline in an answer's items (an object value with an id or __KEY), in order. */
function inlineCategories(body: string): number[] {
  const value = JSON.parse(body) as unknown;
  const data = (value as { data?: Record<string, unknown> }).data;
  const items = Array.isArray(value)
    ? value
    : ((value as { __ENTITIES?: unknown[] }).__ENTITIES ?? (data ? Object.values(data).find(Array.isArray) : undefined) ?? []);
  return (items as Record<string, unknown>[]).map((item) => {
    for (const v of Object.values(item)) {
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        const key = (v as { id?: unknown; __KEY?: unknown }).id ?? (v as { __KEY?: unknown }).__KEY;
        if (key !== undefined) return Number(key);
      }
    }
    return Number.NaN;
  });
}

/** The total count an answer gives, from the peer's header or its body. */
function countOf(body: string, headers: Headers, countHeader: string | undefined): string {
  if (countHeader && headers.get(countHeader) !== null) return `${headers.get(countHeader)} (${countHeader})`;
  try {
    const value = JSON.parse(body) as { __COUNT?: number; data?: Record<string, unknown> };
    if (typeof value.__COUNT === 'number') return `${value.__COUNT} (__COUNT)`;
    for (const [name, v] of Object.entries(value.data ?? {})) {
      const total = (v as { total?: unknown } | null)?.total;
      if (typeof total === 'number') return `${total} (${name}.total)`;
    }
  } catch {
    // not JSON: no count
  }
  return '—';
}

interface Row {
  peer: string;
  read: ReadName;
  can: string;
  status: string;
  bytes: string;
  ms: string;
  keys: string;
  count: string;
  route: string;
}

const failures: string[] = [];

async function checkPeer(peer: Pick<Peer, 'name' | 'url' | 'routes' | 'keysOf' | 'countHeader' | 'nodeVersion'> & { version?: string }, rows: Row[]): Promise<void> {
  for (const read of READS) {
    const route = routeOf(peer.routes, read);
    const label = `${peer.name} ${peer.version ?? ''} (${peer.nodeVersion})`.replace(/ {2}/g, ' ');
    if (route === undefined) {
      rows.push({ peer: label, read, can: 'no', status: '', bytes: '', ms: '', keys: 'cannot in one request', count: '', route: '' });
      continue;
    }
    const t0 = performance.now();
    const response = await fetch(peer.url + route);
    const body = await response.text();
    const ms = performance.now() - t0;
    let verdict: string;
    try {
      const keys = peer.keysOf(body);
      const want = EXPECTED[read];
      const same = keys.length === want.length && keys.every((k, i) => k === want[i]);
      verdict = same ? `ok (${keys.length})` : `WRONG: ${keys.length} keys, first ${keys.slice(0, 5).join(',')} (want ${want.slice(0, 5).join(',')})`;
      if (same && read === 'expanded') {
        const categories = inlineCategories(body);
        const wantCategories = want.map((k) => itemValues(k - 1).categoryID);
        if (!categories.every((c, i) => c === wantCategories[i])) verdict = `WRONG categories: ${categories.slice(0, 5).join(',')} (want ${wantCategories.slice(0, 5).join(',')})`;
        else verdict += ', categories ok';
      }
    } catch (e) {
      verdict = `WRONG: ${(e as Error).message}`;
    }
    if (response.status !== 200 || verdict.startsWith('WRONG')) failures.push(`${label} ${read}: ${response.status} ${verdict} — ${route}\n  ${body.slice(0, 300)}`);
    rows.push({
      peer: label,
      read,
      can: 'yes',
      status: String(response.status),
      bytes: String(Buffer.byteLength(body)),
      ms: ms.toFixed(1),
      keys: verdict,
      count: read === 'filtered' || read === 'expanded' ? countOf(body, response.headers, peer.countHeader) : '',
      route,
    });
  }
}

function printTable(rows: Row[]): void {
  const columns: (keyof Row)[] = ['peer', 'read', 'can', 'status', 'bytes', 'ms', 'keys', 'count'];
  const width = Object.fromEntries(columns.map((c) => [c, Math.max(c.length, ...rows.map((r) => r[c].length))])) as Record<keyof Row, number>;
  const line = (r: Record<keyof Row, string>): string => columns.map((c) => r[c].padEnd(width[c])).join('  ').trimEnd();
  log('');
  log(line(Object.fromEntries(columns.map((c) => [c, c])) as Record<keyof Row, string>));
  for (const r of rows) log(line(r));
  log('');
  log('routes (under each peer\'s URL):');
  for (const r of rows) if (r.route) log(`  ${r.peer.padEnd(width.peer)}  ${r.read.padEnd(10)}  ${r.route}`);
}

// ---- our server, for reference (its routes are the suite's business; these are the plain ones) ----

const oursRoutes: PeerRoutes = {
  byKey: (key) => `/rest/Item(${key})`,
  filtered: (prefix) => `/rest/Item?$filter=${encodeURIComponent('"name begin :1"')}&$params=${encodeURIComponent(JSON.stringify([prefix]))}&$top=${PAGE}`,
  expanded: (prefix) => `/rest/Item?$filter=${encodeURIComponent('"name begin :1"')}&$params=${encodeURIComponent(JSON.stringify([prefix]))}&$top=${PAGE}&$expand=category`,
  deepPage: (skip) => `/rest/Item?$top=${PAGE}&$skip=${skip}`,
  sortedPage: (skip) => `/rest/Item?$orderby=${encodeURIComponent('"price desc"')}&$top=${PAGE}&$skip=${skip}`,
};

function oursKeys(body: string): number[] {
  const value = JSON.parse(body) as { __ENTITIES?: { __KEY: string }[]; __KEY?: string };
  if (value.__ENTITIES) return value.__ENTITIES.map((e) => Number(e.__KEY));
  if (value.__KEY !== undefined) return [Number(value.__KEY)];
  return jsonKeys(body);
}

// ---- the run ----

const t0 = Date.now();
const prepared = await preparePeers(log, { ours22: WITH_OURS22 });
log(`peers ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (cache ${prepared.cache}; Node 22 at ${prepared.node22}, ${prepared.node22Version}; installs: ${JSON.stringify(prepared.installMs)} ms)`);

const built = Date.now();
const { dir, file } = await buildDatabase(ROWS);
log(`database of ${ROWS} items built in ${Date.now() - built} ms: ${file}`);
log(`reads: Item ${KEY}; name begins with "${PREFIX}" (${EXPECTED.filtered.length} items); key order from ${DEEP}; price descending from ${DEEP}`);

const rows: Row[] = [];

let started = Date.now();
const platformatic = await startPlatformatic(file, temporaryFolder('peers-platformatic-'));
log(`platformatic ${platformatic.version} on ${platformatic.nodeVersion}: ready in ${Date.now() - started} ms at ${platformatic.url} (pid ${platformatic.pid})`);
for (const [read, plan] of Object.entries(platformatic.copy.plans)) log(`  plan of ${read}: ${plan}`);
try {
  await checkPeer(platformatic, rows);
} finally {
  await platformatic.stop();
}

started = Date.now();
const jsonServer = await startJsonServer(temporaryFolder('peers-json-server-'), ROWS);
log(`json-server ${jsonServer.version} on ${jsonServer.nodeVersion}: ready in ${Date.now() - started} ms at ${jsonServer.url} (pid ${jsonServer.pid})`);
try {
  await checkPeer(jsonServer, rows);
} finally {
  await jsonServer.stop();
}

if (WITH_OURS22) {
  started = Date.now();
  const ours = await ourServerOnNode22(dir, { log });
  log(`ours on ${ours.nodeVersion}: ready in ${Date.now() - started} ms at ${ours.url} (pid ${ours.pid})`);
  try {
    await checkPeer({ name: 'ours', url: ours.url, routes: oursRoutes, keysOf: oursKeys, nodeVersion: ours.nodeVersion }, rows);
  } finally {
    await ours.stop();
  }
}

printTable(rows);
log('');
for (const peer of [platformatic, jsonServer]) {
  log(`${peer.name}:`);
  for (const [read, note] of Object.entries(peer.notes)) log(`  ${read}: ${note}`);
}
if (failures.length > 0) {
  log(`\n${failures.length} read(s) did not hold the expected keys:\n${failures.join('\n')}`);
  process.exitCode = 1;
} else {
  log(`\nevery answer holds the expected keys, in order (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}
