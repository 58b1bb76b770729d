// The baseline of the read bench on PostgreSQL: a hand-written node:http + pg server over the bench
// database, answering the wire JSON our server sends for the same reads, with nothing else: a pg
// Pool of the same size as our server's, named (prepared) statements of the same SQL text as ours,
// numbers read as ours reads them (int8 and numeric as numbers), times in UTC.
//   /item/ID                       SELECT … WHERE "ID" = $1
//   /items?skip=N                  COUNT(*), then the page of 100 in key order
//   /items?prefix=P&skip=N         the same over name begin P (a range on the folded, indexed column)
//   /sum?prefix=P                  SUM(price) over name begin P ($compute=sum)
// A page's two statements run one after the other on one pooled connection, with no transaction
// (our server also opens a REPEATABLE READ READ ONLY snapshot around them and reads the global
// stamp in it: three more round trips, which are its own cost, so not done here).
// Usage: node --import tsx bench/baseline-server-pg.ts URL [POOL_SIZE]  → prints "baseline listening on http://HOST:PORT"

import { createServer, type ServerResponse } from 'node:http';
import pg from 'pg';
import { fold } from '../src/util/fold.js';
import { entity, entityTag, pageTag, PAGE_SIZE, pageAnswer, PREFIX_TOP, send, type ItemRow as Row } from './baseline-wire.js';

type ItemRow = Row<Date>;
import { PG_TYPES } from './postgres.js';


const [url, size] = [process.argv[2], Number(process.argv[3] ?? 10)];
if (!url || !(Number.isInteger(size) && size >= 1)) {
  process.stderr.write('usage: baseline-server-pg.ts URL [POOL_SIZE]\n');
  process.exit(2);
}

const pool = new pg.Pool({ connectionString: url, max: size, types: PG_TYPES, options: '-c TimeZone=UTC' });
pool.on('error', () => {});

// The SQL our server compiles (src/sql/compiler/), word for word, so that the plans are the same.
const COLUMNS = 't0."ID" AS "ID", t0."name" AS "name", t0."price" AS "price", t0."qty" AS "qty", t0."created" AS "created", t0."__stamp", t0."__timestamp"';
const PREFIX = '(t0."name__fold" >= $1 AND t0."name__fold" < $2)';
const statements = {
  byId: { name: 'byId', text: `SELECT ${COLUMNS} FROM "Item" t0 WHERE t0."ID" = $1` },
  count: { name: 'count', text: 'SELECT COUNT(*) AS n FROM "Item" t0' },
  page: { name: 'page', text: `SELECT ${COLUMNS} FROM "Item" t0 ORDER BY t0."ID" LIMIT $1 OFFSET $2` },
  countPrefix: { name: 'countPrefix', text: `SELECT COUNT(*) AS n FROM "Item" t0 WHERE ${PREFIX}` },
  pagePrefix: { name: 'pagePrefix', text: `SELECT ${COLUMNS} FROM "Item" t0 WHERE ${PREFIX} ORDER BY t0."ID" LIMIT $3 OFFSET $4` },
  sumPrefix: { name: 'sumPrefix', text: `SELECT SUM((t0."price")::numeric) AS sum FROM "Item" t0 WHERE ${PREFIX}` },
};




async function page(res: ServerResponse, skip: number, prefix: string | undefined): Promise<void> {
  const client = await pool.connect();
  let n: number;
  let rows: ItemRow[];
  try {
    if (prefix === undefined) {
      n = (await client.query<{ n: number }>({ ...statements.count, values: [] })).rows[0].n;
      rows = (await client.query<ItemRow>({ ...statements.page, values: [PAGE_SIZE, skip] })).rows;
    } else {
      const p = fold(prefix);
      n = (await client.query<{ n: number }>({ ...statements.countPrefix, values: [p, p + PREFIX_TOP] })).rows[0].n;
      rows = (await client.query<ItemRow>({ ...statements.pagePrefix, values: [p, p + PREFIX_TOP, PAGE_SIZE, skip] })).rows;
    }
  } finally {
    client.release();
  }
  send(res, 200, pageAnswer(rows, n, skip), pageTag());
}

async function handle(url: string, res: ServerResponse): Promise<void> {
  if (url.startsWith('/item/')) {
    const id = Number(url.slice('/item/'.length));
    const row = Number.isInteger(id) ? (await pool.query<ItemRow>({ ...statements.byId, values: [id] })).rows[0] : undefined;
    if (!row) return send(res, 404, { error: 'not found' });
    return send(res, 200, entity(row, true), entityTag(row));
  }
  if (url === '/items' || url.startsWith('/items?')) {
    const m = /[?&]skip=(\d+)/.exec(url);
    const p = /[?&]prefix=([^&]*)/.exec(url);
    return page(res, m ? Number(m[1]) : 0, p ? decodeURIComponent(p[1]) : undefined);
  }
  if (url.startsWith('/sum?')) {
    const p = fold(decodeURIComponent(/[?&]prefix=([^&]*)/.exec(url)?.[1] ?? ''));
    const sum = (await pool.query<{ sum: number | null }>({ ...statements.sumPrefix, values: [p, p + PREFIX_TOP] })).rows[0].sum;
    return send(res, 200, Number(sum ?? 0));
  }
  send(res, 404, { error: 'not found' });
}

const server = createServer((req, res) => {
  handle(req.url ?? '/', res).catch((e: unknown) => send(res, 500, { error: String(e) }));
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`baseline listening on http://127.0.0.1:${port}\n`);
});

function shutdown(): void {
  server.close(() => {
    void pool.end().finally(() => process.exit(0));
  });
  server.closeAllConnections();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
