// Platformatic DB (SQL→REST, 3.x) over a copy of a SQLite file our server made, run by the cache's
// Node 22 through its programmatic API (platformatic-main.mjs), in one process, logging warnings
// only.
//
// Its copy is changed in three ways, none of which touches the rows:
// - a foreign key on Item.categoryID (our schema declares none; Platformatic finds relations by
//   foreign keys alone), written into the table's CREATE TABLE text with writable_schema — the
//   on-disk format does not change — so that Item N→1 Category exists in its API;
// - a plain index on Item.name (ours is on the folded twin name__fold), for the prefix filter;
// - an index on Item.price if the file has none (ours has one), and ANALYZE statistics.
// The startup checks with EXPLAIN QUERY PLAN that the SQL its routes run (as its trace log shows
// it: sql-mapper's find and count) uses those indexes, and fails if not.

import Database from 'better-sqlite3';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NODE22, PLATFORMATIC_DIR, VERSIONS, node22Env } from './cache.js';
import { startChild } from './child.js';
import type { Peer } from './peer.js';
import { PAGE, jsonKeys, prefixRange } from './peer.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const NAME_INDEX = 'peer_Item_name';
const PRICE_INDEX = 'peer_Item_price';
/** the columns it shows: ours less the hidden ones (name__fold, __stamp, __timestamp) */
const HIDDEN = { nameFold: true, stamp: true, timestamp: true };

/** What the copy got, and the plans that were checked. */
export interface PreparedCopy {
  readonly file: string;
  readonly nameIndex: string;
  readonly priceIndex: string;
  /** EXPLAIN QUERY PLAN of each read's SQL, one line per step */
  readonly plans: Readonly<Record<string, string>>;
}

/** The columns of a table, in order, for a SELECT like sql-mapper's (it names every column). */
function columnsOf(db: Database.Database, table: string): string[] {
  return (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((r) => r.name);
}

function plan(db: Database.Database, sql: string, params: readonly unknown[]): string {
  const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[];
  return rows.map((r) => r.detail).join('; ');
}

/** An index of `table` whose first column is `column` (with the default BINARY collation), if any. */
function indexOn(db: Database.Database, table: string, column: string): string | undefined {
  const indexes = db.prepare('SELECT name FROM pragma_index_list(?)').all(table) as { name: string }[];
  for (const { name } of indexes) {
    const first = db.prepare('SELECT name, coll FROM pragma_index_xinfo(?) WHERE seqno = 0').get(name) as { name: string; coll: string } | undefined;
    if (first?.name === column && first.coll === 'BINARY') return name;
  }
  return undefined;
}

/**
 * Copies `source` (and its -wal, so that a file our server has just written is whole: nothing must
 * write it meanwhile) to `target`, and gives the copy its foreign key, indexes and statistics.
 */
export function preparePlatformaticCopy(source: string, target: string): PreparedCopy {
  if (!existsSync(source)) throw new Error(`platformatic: no SQLite file at ${source}`);
  mkdirSync(dirname(target), { recursive: true });
  // a -wal left by an earlier copy would be replayed over this one
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${target}${suffix}`, { force: true });
  copyFileSync(source, target);
  if (existsSync(`${source}-wal`)) copyFileSync(`${source}-wal`, `${target}-wal`);
  const db = new Database(target);
  try {
    // folds the copied WAL into the file, then works on it alone
    db.pragma('wal_checkpoint(TRUNCATE)');
    const fks = db.prepare(`SELECT "table", "from", "to" FROM pragma_foreign_key_list('Item')`).all() as { table: string; from: string; to: string }[];
    if (!fks.some((fk) => fk.from === 'categoryID')) addForeignKey(db);

    db.exec(`CREATE INDEX IF NOT EXISTS "${NAME_INDEX}" ON "Item" ("name")`);
    let priceIndex = indexOn(db, 'Item', 'price');
    if (priceIndex === undefined) {
      db.exec(`CREATE INDEX "${PRICE_INDEX}" ON "Item" ("price")`);
      priceIndex = PRICE_INDEX;
    }
    // statistics from a sample of each index (quick at 10,000,000 rows)
    db.pragma('analysis_limit = 1000');
    db.exec('ANALYZE');

    // the SQL its routes run (seen in its trace log): every column, the hidden ones too (its
    // openapi/graphql ignore options leave them out of the answers, not out of the SELECT)
    const columns = columnsOf(db, 'Item');
    const select = `SELECT ${columns.map((c) => `"${c}"`).join(', ')} FROM "Item"`;
    const [from, to] = prefixRange('bolt-00001');
    const plans = {
      byKey: plan(db, `${select} WHERE "ID" = ? LIMIT ?`, [1, 1]),
      filtered: plan(db, `${select} WHERE "name" >= ? AND "name" < ? ORDER BY "ID" asc LIMIT ?`, [from, to, PAGE]),
      filteredCount: plan(db, `SELECT COUNT(*) AS total FROM "Item" WHERE "name" >= ? AND "name" < ?`, [from, to]),
      filteredLike: plan(db, `${select} WHERE "name" LIKE ? ORDER BY "ID" asc LIMIT ?`, ['bolt-00001%', PAGE]),
      deepPage: plan(db, `${select} ORDER BY "ID" asc LIMIT ? OFFSET ?`, [PAGE, 1000]),
      sortedPage: plan(db, `${select} ORDER BY "price" desc LIMIT ? OFFSET ?`, [PAGE, 1000]),
    };
    const uses = (p: string, index: string): boolean => p.includes(`INDEX ${index}`);
    if (!uses(plans.filtered, NAME_INDEX) || !uses(plans.filteredCount, NAME_INDEX)) {
      throw new Error(`platformatic: the prefix filter's SQL does not search ${NAME_INDEX}: ${plans.filtered} / ${plans.filteredCount}`);
    }
    if (!uses(plans.sortedPage, priceIndex) || plans.sortedPage.includes('TEMP B-TREE')) {
      throw new Error(`platformatic: the page sorted by price does not read ${priceIndex} in order: ${plans.sortedPage}`);
    }
    db.pragma('wal_checkpoint(TRUNCATE)');
    return { file: target, nameIndex: NAME_INDEX, priceIndex, plans };
  } finally {
    db.close();
  }
}

/**
 * Adds REFERENCES "Category" ("ID") to Item.categoryID in the stored CREATE TABLE text: the
 * procedure SQLite documents for schema changes that leave the stored rows as they are.
 */
function addForeignKey(db: Database.Database): void {
  const row = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'Item'`).get() as { sql: string } | undefined;
  if (!row) throw new Error('platformatic: the file has no table "Item"');
  const changed = row.sql.replace(/("categoryID"\s+INTEGER)(\s*[,)])/, '$1 REFERENCES "Category" ("ID")$2');
  if (changed === row.sql) throw new Error(`platformatic: cannot find the column "categoryID" INTEGER in ${row.sql}`);
  const columns = columnsOf(db, 'Item').length;
  const version = db.pragma('schema_version', { simple: true }) as number;
  db.unsafeMode(true);
  try {
    db.transaction(() => {
      db.pragma('writable_schema = ON');
      db.prepare(`UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'Item'`).run(changed);
      db.pragma(`schema_version = ${version + 1}`);
      db.pragma('writable_schema = OFF');
    })();
  } finally {
    db.unsafeMode(false);
  }
  // the new text must parse to the same columns, now with the foreign key (a whole quick_check
  // would read every page of a large file for a change that touched none)
  const fk = db.prepare(`SELECT "table", "to" FROM pragma_foreign_key_list('Item') WHERE "from" = 'categoryID'`).get() as { table: string; to: string } | undefined;
  if (fk?.table !== 'Category' || fk.to !== 'ID' || columnsOf(db, 'Item').length !== columns) {
    throw new Error(`platformatic: the foreign key on Item.categoryID did not take: ${JSON.stringify(fk)}`);
  }
}

/** The REST and GraphQL routes (paths, under the peer's URL) of each read. */
export const platformaticRoutes = {
  byKey: (key: number): string => `/item/${key}`,
  filtered: (prefix: string): string => {
    const [from, to] = prefixRange(prefix);
    return `/item/?where.name.gte=${encodeURIComponent(from)}&where.name.lt=${encodeURIComponent(to)}&orderby.id=asc&limit=${PAGE}&totalCount=true`;
  },
  /** GraphQL over GET (REST has no inline expansion): the page, each item's category, and the count */
  expanded: (prefix: string): string => {
    const [from, to] = prefixRange(prefix);
    const where = `{name:{gte:${JSON.stringify(from)},lt:${JSON.stringify(to)}}}`;
    const query = `{item(where:${where},orderBy:{field:id,direction:ASC},limit:${PAGE}){id name price qty created categoryId{id name rate}} countItem(where:${where}){total}}`;
    return `/graphql?query=${encodeURIComponent(query)}`;
  },
  deepPage: (skip: number): string => `/item/?orderby.id=asc&limit=${PAGE}&offset=${skip}`,
  sortedPage: (skip: number): string => `/item/?orderby.price=desc&limit=${PAGE}&offset=${skip}`,
};

/**
 * Starts Platformatic DB over a copy of `sqliteFile` made in `workDir` (preparePeers must have
 * installed it): resolves once it has printed its URL, on 127.0.0.1 and a port of its choosing.
 */
export async function startPlatformatic(sqliteFile: string, workDir: string): Promise<Peer & { copy: PreparedCopy }> {
  if (!existsSync(join(PLATFORMATIC_DIR, 'node_modules', '@platformatic', 'db'))) {
    throw new Error(`platformatic: not installed in ${PLATFORMATIC_DIR}: call preparePeers() first`);
  }
  mkdirSync(workDir, { recursive: true });
  const copy = preparePlatformaticCopy(resolve(sqliteFile), join(resolve(workDir), 'platformatic.sqlite'));
  const config = {
    server: { hostname: '127.0.0.1', port: 0, logger: { level: 'warn' } },
    db: {
      connectionString: `sqlite://${copy.file}`,
      // our system tables (__dataset_…) stay out of its API
      include: { Item: true, Category: true },
      openapi: { ignore: { item: HIDDEN, category: HIDDEN } },
      graphql: { ignore: { item: HIDDEN, category: HIDDEN } },
    },
  };
  const configFile = join(resolve(workDir), 'platformatic.db.json');
  writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);
  const child = await startChild({
    name: 'platformatic',
    command: NODE22,
    args: [join(HERE, 'platformatic-main.mjs'), PLATFORMATIC_DIR, configFile],
    cwd: resolve(workDir),
    env: node22Env(),
    ready: { line: /platformatic listening on (http:\/\/\S+)/ },
  });
  return {
    name: 'platformatic',
    version: VERSIONS.platformatic,
    nodeVersion: `v${VERSIONS.node22}`,
    url: child.url,
    pid: child.pid,
    routes: platformaticRoutes,
    countHeader: 'x-total-count',
    notes: {
      byKey: 'GET /item/:id (REST); ids come back as strings',
      filtered: `where.name.gte/lt: the prefix as a range on ${copy.nameIndex} (a LIKE 'prefix%' would scan: SQLite's LIKE is case-insensitive and the index is not NOCASE); totalCount=true → X-Total-Count header (a COUNT(*) over the same range)`,
      expanded: 'not in one REST request (REST gives GET /item/:id/categoryID, one item at a time); one GraphQL GET request does it (the categories batched into one query), with countItem for the total',
      deepPage: 'orderby.id=asc&limit=100&offset=N (LIMIT/OFFSET; no count unless totalCount=true, then COUNT(*) over the table)',
      sortedPage: `orderby.price=desc&limit=100&offset=N, read in order from ${copy.priceIndex}`,
    },
    copy,
    keysOf: jsonKeys,
    stop: () => child.stop(),
  };
}
