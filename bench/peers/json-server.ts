// json-server 0.17 over a JSON export of the suite's data (bench/suite/model.ts): "items" (each with
// categoryId, so that _expand=category finds its category) and "categories". It keeps the whole
// file in memory and answers every list read by a scan of it. Runs on the repository's Node (20).

import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CATEGORIES, categoryValues, itemValues } from '../suite/model.js';
import { JSON_SERVER_BIN, JSON_SERVER_DIR, VERSIONS } from './cache.js';
import { freePort, startChild, type Child } from './child.js';
import type { Peer } from './peer.js';
import { PAGE, jsonKeys } from './peer.js';

/** Writes the export of `rows` items and all the categories to `file`. */
export function writeJsonExport(file: string, rows: number): void {
  const fd = openSync(file, 'w');
  try {
    let chunk = '{\n"items": [\n';
    for (let n = 0; n < rows; n++) {
      const v = itemValues(n);
      chunk += `${JSON.stringify({ id: n + 1, name: v.name, price: v.price, qty: v.qty, created: v.created, categoryId: v.categoryID })}${n + 1 < rows ? ',' : ''}\n`;
      if (chunk.length > 1 << 20) {
        writeSync(fd, chunk);
        chunk = '';
      }
    }
    chunk += '],\n"categories": [\n';
    for (let n = 0; n < CATEGORIES; n++) {
      chunk += `${JSON.stringify({ id: n + 1, ...categoryValues(n) })}${n + 1 < CATEGORIES ? ',' : ''}\n`;
    }
    writeSync(fd, `${chunk}]\n}\n`);
  } finally {
    closeSync(fd);
  }
}

/** A regular expression that matches the text itself. */
function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export const jsonServerRoutes = {
  byKey: (key: number): string => `/items/${key}`,
  /** name_like is a case-insensitive regular expression: anchored, it is a prefix test (of every item: there is no index) */
  filtered: (prefix: string): string => `/items?name_like=${encodeURIComponent(`^${literal(prefix)}`)}&_start=0&_limit=${PAGE}`,
  expanded: (prefix: string): string => `/items?name_like=${encodeURIComponent(`^${literal(prefix)}`)}&_start=0&_limit=${PAGE}&_expand=category`,
  deepPage: (skip: number): string => `/items?_start=${skip}&_limit=${PAGE}`,
  sortedPage: (skip: number): string => `/items?_sort=price&_order=desc&_start=${skip}&_limit=${PAGE}`,
};

/**
 * Writes the export of `rows` items into `workDir` and starts json-server on it (read-only, quiet:
 * no log line per request), on 127.0.0.1 and a free port; resolves once it answers.
 */
export async function startJsonServer(workDir: string, rows: number): Promise<Peer> {
  mkdirSync(workDir, { recursive: true });
  const dir = resolve(workDir);
  // not json-server.json: the CLI reads a file of that name in its folder as its options
  const file = join(dir, 'json-server-db.json');
  writeJsonExport(file, rows);
  let child: Child | undefined;
  let lastError: unknown;
  // the port is free when picked, but may be taken before the server binds it: try another
  for (let attempt = 0; attempt < 3 && child === undefined; attempt++) {
    const port = await freePort();
    try {
      child = await startChild({
        name: 'json-server',
        command: process.execPath,
        args: [JSON_SERVER_BIN, '--host', '127.0.0.1', '--port', String(port), '--read-only', '--quiet', file],
        cwd: dir,
        ready: { poll: `http://127.0.0.1:${port}/categories/1` },
      });
    } catch (e) {
      lastError = e;
    }
  }
  if (child === undefined) {
    throw new Error(`json-server: cannot start (installed in ${JSON_SERVER_DIR}? call preparePeers() first): ${(lastError as Error).message}`);
  }
  const started = child;
  return {
    name: 'json-server',
    version: VERSIONS.jsonServer,
    nodeVersion: process.version,
    url: started.url,
    pid: started.pid,
    routes: jsonServerRoutes,
    countHeader: 'x-total-count',
    notes: {
      byKey: 'GET /items/:id (a find in the array)',
      filtered: 'name_like=^prefix: a case-insensitive regular expression tested on every item (no index); _start/_limit page it; X-Total-Count header (whenever _limit is given)',
      expanded: '_expand=category: each item of the page gets its category (a find by id in the categories array)',
      deepPage: "_start=N&_limit=100: a slice of the array; X-Total-Count header (the array's length)",
      sortedPage: '_sort=price&_order=desc: sorts the whole array (lodash orderBy) at every request, then slices',
    },
    keysOf: jsonKeys,
    stop: () => started.stop(),
  };
}
