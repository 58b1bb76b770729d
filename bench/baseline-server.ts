// The baseline of the read bench: a hand-written node:http + better-sqlite3 server over the bench
// database, answering the wire JSON our server sends for the same reads, with nothing else:
//   /item/ID, /items?skip=N (a page of 100 in key order with the count), and
//   /items?prefix=P&skip=N (the same over name begin P: the SQL our server compiles, a range on the folded, indexed column).
// Usage: node --import tsx bench/baseline-server.ts DB_FILE  → prints "baseline listening on http://HOST:PORT"

import { createServer } from 'node:http';
import Database from 'better-sqlite3';
import { fold } from '../src/util/fold.js';
import { entity, entityTag, pageTag, listenForBench, PAGE_SIZE, pageAnswer, PREFIX_TOP, send, type ItemRow as Row } from './baseline-wire.js';

type ItemRow = Row<string>;


const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: baseline-server.ts DB_FILE\n');
  process.exit(2);
}

// Read-only, like our server's reader connection (the database is in WAL mode).
const db = new Database(file, { readonly: true, fileMustExist: true });
const COLUMNS = '"ID", "name", "price", "qty", "created", "__stamp", "__timestamp"';
const byId = db.prepare(`SELECT ${COLUMNS} FROM "Item" WHERE "ID" = ?`);
const page = db.prepare(`SELECT ${COLUMNS} FROM "Item" ORDER BY "ID" LIMIT ? OFFSET ?`);
const count = db.prepare('SELECT COUNT(*) AS n FROM "Item"').pluck();
const T0 = 't0."ID" AS "ID", t0."name" AS "name", t0."price" AS "price", t0."qty" AS "qty", t0."created" AS "created", t0."__stamp", t0."__timestamp"';
const PREFIX = '(t0."name__fold" >= ? AND t0."name__fold" < ?)';
const countPrefix = db.prepare(`SELECT COUNT(*) AS n FROM "Item" t0 WHERE ${PREFIX}`).pluck();
const pagePrefix = db.prepare(`SELECT ${T0} FROM "Item" t0 WHERE ${PREFIX} ORDER BY t0."ID" LIMIT ? OFFSET ?`);
const sumPrefix = db.prepare(`SELECT SUM(t0."price") AS sum FROM "Item" t0 WHERE ${PREFIX}`).pluck();




const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (url.startsWith('/item/')) {
    const id = Number(url.slice('/item/'.length));
    const row = Number.isInteger(id) ? (byId.get(id) as ItemRow | undefined) : undefined;
    if (!row) return send(res, 404, { error: 'not found' });
    return send(res, 200, entity(row, true), entityTag(row));
  }
  if (url === '/items' || url.startsWith('/items?')) {
    const m = /[?&]skip=(\d+)/.exec(url);
    const skip = m ? Number(m[1]) : 0;
    const p = /[?&]prefix=([^&]*)/.exec(url);
    const f = p ? fold(decodeURIComponent(p[1])) : undefined;
    const n = (f === undefined ? count.get() : countPrefix.get(f, f + PREFIX_TOP)) as number;
    const rows = (f === undefined ? page.all(PAGE_SIZE, skip) : pagePrefix.all(f, f + PREFIX_TOP, PAGE_SIZE, skip)) as ItemRow[];
    return send(res, 200, pageAnswer(rows, n, skip), pageTag());
  }
  if (url.startsWith('/sum?')) {
    const p = /[?&]prefix=([^&]*)/.exec(url);
    const f = fold(decodeURIComponent(p?.[1] ?? ''));
    return send(res, 200, (sumPrefix.get(f, f + PREFIX_TOP) as number | null) ?? 0);
  }
  send(res, 404, { error: 'not found' });
});

listenForBench(server, db);
