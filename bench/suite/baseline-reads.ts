// The suite's read baseline: a hand-written node:http + better-sqlite3 server over the suite's
// SQLite file (bench/suite/model.ts), answering each read of the suite with the JSON our server
// sends for it (the global stamp aside: 0 here), and nothing else — what a team writing this one
// API by hand would write. It runs the SQL a hand-written server would: a count and a page (our
// server reads the count with the page, and keeps it while the data does not change), the
// existence of each item's category (our server checks it too: a relation to a dropped entity reads
// null), a LEFT JOIN for the expanded category, one aggregate statement, and for the entity set the
// keys of every item kept in memory (ours keeps sets in the database, for every instance).
//
//   GET /item/ID                      one item
//   GET /items?prefix=P[&expand=1]    the items whose name begins with P, 100 in key order, with the count
//   GET /items?skip=N                 100 items in key order from N, with the count
//   GET /items?order=price&skip=N     100 items by price descending (then key) from N, with the count
//   GET /compute?prefix=P             count, sum, average, min and max of the price of those items
//   GET /set?skip=N                   100 members of the set of every item (key order) from N
//
// Usage: node --import tsx bench/suite/baseline-reads.ts DB_FILE [--cookie NAME] → "baseline listening on http://127.0.0.1:PORT"

import { createServer } from 'node:http';
import Database from 'better-sqlite3';
import { fold } from '../../src/util/fold.js';
import { entityTag, listenForBench, pageTag, send } from '../baseline-wire.js';
import { itemJson, type ItemRow as BaseRow } from './baseline-item.js';

const PAGE = 100;
/** above every character a folded text holds (the top of a prefix range, as our compiler writes it) */
const TOP = '\u{10FFFF}';

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: baseline-reads.ts DB_FILE [--cookie NAME]\n');
  process.exit(2);
}

interface ItemRow extends BaseRow {
  /** the category's key if it exists */
  cat: number | null;
}
interface ExpandedRow extends ItemRow {
  cStamp: number;
  cTimestamp: number;
  cName: string | null;
  cRate: number | null;
}

const db = new Database(file, { readonly: true, fileMustExist: true });
const ITEM = 'i."ID", i."name", i."price", i."qty", i."created", i."categoryID", i."__stamp", i."__timestamp"';
const CAT = '(SELECT c."ID" FROM "Category" c WHERE c."ID" = i."categoryID") AS cat';
const PREFIX = 'i."name__fold" >= ? AND i."name__fold" < ?';
const byId = db.prepare(`SELECT ${ITEM}, ${CAT} FROM "Item" i WHERE i."ID" = ?`);
const countAll = db.prepare('SELECT COUNT(*) FROM "Item"').pluck();
const countPrefix = db.prepare(`SELECT COUNT(*) FROM "Item" i WHERE ${PREFIX}`).pluck();
const pagePrefix = db.prepare(`SELECT ${ITEM}, ${CAT} FROM "Item" i WHERE ${PREFIX} ORDER BY i."ID" LIMIT ?`);
const pageExpanded = db.prepare(
  `SELECT ${ITEM}, c."ID" AS cat, c."__stamp" AS "cStamp", c."__timestamp" AS "cTimestamp", c."name" AS "cName", c."rate" AS "cRate" ` +
    `FROM "Item" i LEFT JOIN "Category" c ON c."ID" = i."categoryID" WHERE ${PREFIX} ORDER BY i."ID" LIMIT ?`,
);
const pageByKey = db.prepare(`SELECT ${ITEM}, ${CAT} FROM "Item" i ORDER BY i."ID" LIMIT ? OFFSET ?`);
const pageByPrice = db.prepare(`SELECT ${ITEM}, ${CAT} FROM "Item" i ORDER BY i."price" DESC, i."ID" DESC LIMIT ? OFFSET ?`);
const aggregates = db.prepare(`SELECT COUNT(i."price") AS count, SUM(i."price") AS sum, AVG(i."price") AS average, MIN(i."price") AS min, MAX(i."price") AS max FROM "Item" i WHERE ${PREFIX}`);
/** the set's members: every item's key, read at the first set request */
let setKeys: Float64Array | undefined;
const byIds = new Map<number, Database.Statement>();

function item(r: ItemRow, top: boolean): Record<string, unknown> {
  return itemJson(r, top, r.cat);
}

function expanded(r: ExpandedRow): Record<string, unknown> {
  const out = item(r, false);
  out.category = r.cat === null ? null : {
    __KEY: String(r.cat),
    __TIMESTAMP: new Date(r.cTimestamp).toISOString(),
    __STAMP: r.cStamp,
    ID: r.cat,
    name: r.cName,
    rate: r.cRate,
    items: { __deferred: { uri: `/rest/Category(${r.cat})/items?$expand=items` } },
  };
  return out;
}

function envelope(count: number, first: number, entities: unknown[]): Record<string, unknown> {
  return { __entityModel: 'Item', __GlobalStamp: 0, __COUNT: count, __FIRST: first, __ENTITIES: entities, __SENT: entities.length };
}

/** The members of the set at [skip, skip + PAGE), in the set's order, read by their keys. */
function setPage(skip: number): Record<string, unknown> {
  setKeys ??= Float64Array.from(db.prepare('SELECT "ID" FROM "Item" ORDER BY "ID"').pluck().all() as number[]);
  const keys = Array.from(setKeys.subarray(skip, skip + PAGE));
  let stmt = byIds.get(keys.length);
  if (!stmt) byIds.set(keys.length, (stmt = db.prepare(`SELECT ${ITEM}, ${CAT} FROM "Item" i WHERE i."ID" IN (${keys.map(() => '?').join(', ')})`)));
  const rows = new Map((stmt.all(...keys) as ItemRow[]).map((r) => [r.ID, r]));
  return envelope(setKeys.length, skip, keys.map((k) => {
    const r = rows.get(k);
    return r ? item(r, false) : { __STAMP: 0 };
  }));
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const q = url.searchParams;
  const skip = Number(q.get('skip') ?? 0);
  const prefix = q.get('prefix');
  const f = prefix === null ? '' : fold(prefix);
  switch (url.pathname) {
    case '/items': {
      if (prefix !== null) {
        const count = countPrefix.get(f, f + TOP) as number;
        const entities = q.get('expand') === '1'
          ? (pageExpanded.all(f, f + TOP, PAGE) as ExpandedRow[]).map(expanded)
          : (pagePrefix.all(f, f + TOP, PAGE) as ItemRow[]).map((r) => item(r, false));
        return send(res, 200, envelope(count, 0, entities), pageTag());
      }
      const rows = (q.get('order') === 'price' ? pageByPrice : pageByKey).all(PAGE, skip) as ItemRow[];
      return send(res, 200, envelope(countAll.get() as number, skip, rows.map((r) => item(r, false))), pageTag());
    }
    case '/compute':
      return send(res, 200, { price: aggregates.get(f, f + TOP) });
    case '/set':
      return send(res, 200, setPage(skip));
    default: {
      if (url.pathname.startsWith('/item/')) {
        const row = byId.get(Number(url.pathname.slice('/item/'.length))) as ItemRow | undefined;
        return row ? send(res, 200, item(row, true), entityTag(row)) : send(res, 404, { error: 'not found' });
      }
      return send(res, 404, { error: 'not found' });
    }
  }
});

listenForBench(server, db);
