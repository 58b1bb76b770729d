// The baseline of the suite's write scenarios (bench/suite/writes.ts): a hand-written node:http +
// better-sqlite3 server over a copy of the suite's SQLite file, doing the SQL work our server must
// do for the same request and answering the same JSON, with nothing else:
//
//   POST /create   one new Item (name, price, qty, created, category: {"__KEY": k}) → the entity
//   POST /update   {"__KEY", "__STAMP", …values} → the entity (409 when the stamp moved, 404 when gone)
//   POST /batch    an array of new Items, all or nothing → {"__ENTITIES": [...]}
//   POST /upload   any body, streamed into a file of DIR → {"ID": "<32 hex>"}
//
// Each write is one transaction: the category checked (our server refuses a key no Category has),
// the row with its hidden columns (the folded twin of each string, __stamp, __timestamp), and the
// global stamp bumped once a transaction (a batch too, as ours does). WAL and
// synchronous=NORMAL, as our server opens the file. The answers carry the contract's headers
// (security headers, a new guest's cookie) with `--cookie NAME` (bench/baseline-wire.ts).
//
// Usage: node --import tsx bench/suite/baseline-writes.ts DB_FILE UPLOAD_DIR [--cookie NAME]
//        → prints "baseline listening on http://127.0.0.1:PORT"

import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import Database from 'better-sqlite3';
import { fold } from '../../src/util/fold.js';
import { listenForBench, send } from '../baseline-wire.js';
import { itemJson, type ItemRow as Row } from './baseline-item.js';

const [file, uploads] = process.argv.slice(2);
if (!file || !uploads || file.startsWith('--') || uploads.startsWith('--')) {
  process.stderr.write('usage: baseline-writes.ts DB_FILE UPLOAD_DIR [--cookie NAME]\n');
  process.exit(2);
}

const db = new Database(file, { fileMustExist: true });
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');

/** A row of Item as stored. */
const COLUMNS = '"ID", "name", "price", "qty", "created", "categoryID", "__stamp", "__timestamp"';
const categoryExists = db.prepare('SELECT 1 FROM "Category" WHERE "ID" = ?').pluck();
const insert = db.prepare(
  'INSERT INTO "Item" ("name", "name__fold", "price", "qty", "created", "categoryID", "__stamp", "__timestamp") VALUES (?, ?, ?, ?, ?, ?, 1, ?) RETURNING "ID"',
).pluck();
const stampOf = db.prepare('SELECT "__stamp" FROM "Item" WHERE "ID" = ?').pluck();
const bump = db.prepare('UPDATE "__dataset_global_stamp" SET "value" = "value" + ? WHERE "id" = 1');

// ── Values ──

class BadRequest extends Error {
  constructor(message: string, readonly status = 400) {
    super(message);
  }
}

/** The attributes a body may set, in the order of the model (and of the answer). */
const ATTRIBUTES = ['name', 'price', 'qty', 'created', 'category'] as const;
type Attribute = (typeof ATTRIBUTES)[number];

/** A body's value of one attribute, checked and as stored (the category: its key, which must exist). */
function valueOf(attr: Attribute, v: unknown): string | number | null {
  if (v === null) return null;
  switch (attr) {
    case 'name':
      if (typeof v === 'string') return v;
      break;
    case 'price':
      if (typeof v === 'number' && Number.isFinite(v)) return v;
      break;
    case 'qty':
      if (Number.isSafeInteger(v)) return v as number;
      break;
    case 'created': {
      const t = typeof v === 'string' ? Date.parse(v) : Number.NaN;
      if (!Number.isNaN(t)) return new Date(t).toISOString();
      break;
    }
    case 'category': {
      const key = typeof v === 'object' && !Array.isArray(v) ? Number((v as { __KEY?: unknown }).__KEY) : Number.NaN;
      if (!Number.isSafeInteger(key)) break;
      if (categoryExists.get(key) === undefined) throw new BadRequest(`no Category has the key ${key}`, 404);
      return key;
    }
  }
  throw new BadRequest(`${attr} cannot take ${JSON.stringify(v)}`);
}

function object(v: unknown): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new BadRequest('an entity is a JSON object');
  return v as Record<string, unknown>;
}

// ── Writes (each in a transaction) ──

/** Inserts one new item; its row as stored. */
function create(body: unknown): Row {
  const o = object(body);
  const name = valueOf('name', o.name ?? null) as string | null;
  const price = valueOf('price', o.price ?? null) as number | null;
  const qty = valueOf('qty', o.qty ?? null) as number | null;
  const created = valueOf('created', o.created ?? null) as string | null;
  const categoryID = valueOf('category', o.category ?? null) as number | null;
  const timestamp = Date.now();
  const ID = insert.get(name, name === null ? null : fold(name), price, qty, created, categoryID, timestamp) as number;
  return { ID, name, price, qty, created, categoryID, __stamp: 1, __timestamp: timestamp };
}

const createOne = db.transaction((body: unknown): Row => {
  const row = create(body);
  bump.run(1);
  return row;
});

const createMany = db.transaction((list: unknown[]): Row[] => {
  const rows = list.map(create);
  bump.run(1);
  return rows;
});

/** UPDATE … WHERE key AND stamp RETURNING the row, one statement per set of attributes given (prepared once). */
const updates = new Map<number, Database.Statement>();
function updateStatement(mask: number): Database.Statement {
  let stmt = updates.get(mask);
  if (stmt === undefined) {
    const sets: string[] = [];
    ATTRIBUTES.forEach((a, i) => {
      if ((mask & (1 << i)) === 0) return;
      if (a === 'category') sets.push('"categoryID" = ?');
      else sets.push(`"${a}" = ?`, ...(a === 'name' ? ['"name__fold" = ?'] : []));
    });
    sets.push('"__stamp" = "__stamp" + 1', '"__timestamp" = ?');
    stmt = db.prepare(`UPDATE "Item" SET ${sets.join(', ')} WHERE "ID" = ? AND "__stamp" = ? RETURNING ${COLUMNS}`);
    updates.set(mask, stmt);
  }
  return stmt;
}

const updateOne = db.transaction((body: unknown): Row => {
  const o = object(body);
  const key = Number(o.__KEY);
  const stamp = o.__STAMP;
  if (!Number.isSafeInteger(key) || !Number.isSafeInteger(stamp)) throw new BadRequest('an update takes __KEY and __STAMP');
  let mask = 0;
  const params: unknown[] = [];
  ATTRIBUTES.forEach((a, i) => {
    if (o[a] === undefined) return;
    mask |= 1 << i;
    const v = valueOf(a, o[a]);
    params.push(v);
    if (a === 'name') params.push(v === null ? null : fold(v as string));
  });
  params.push(Date.now(), key, stamp);
  const row = updateStatement(mask).get(...params) as Row | undefined;
  if (row === undefined) {
    throw stampOf.get(key) === undefined ? new BadRequest(`no Item has the key ${key}`, 404) : new BadRequest(`the stamp of Item ${key} is not ${String(stamp)}`, 409);
  }
  bump.run(1);
  return row;
});

// ── Answers ──

/** An Item as our server answers it after a save (top: a single entity, with __entityModel). */
function entity(row: Row, top: boolean, origin: string): Record<string, unknown> {
  const out = itemJson(row, top, row.categoryID);
  out.uri = `${origin}/rest/Item(${row.ID})`;
  return out;
}

/** A request's body as JSON. */
async function json(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new BadRequest('the body is not JSON');
  }
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') return send(res, 405, { error: 'POST only' });
  const origin = `http://${req.headers.host ?? '127.0.0.1'}`;
  switch (req.url) {
    case '/create':
      return send(res, 200, entity(createOne(await json(req)), true, origin));
    case '/update':
      return send(res, 200, entity(updateOne(await json(req)), true, origin));
    case '/batch': {
      const body = await json(req);
      if (!Array.isArray(body)) throw new BadRequest('a batch is a JSON array');
      return send(res, 200, { __ENTITIES: createMany(body).map((r) => entity(r, false, origin)) });
    }
    case '/upload': {
      const id = randomBytes(16).toString('hex').toUpperCase();
      await pipeline(req, createWriteStream(join(uploads, id)));
      return send(res, 200, { ID: id });
    }
    default:
      req.resume();
      return send(res, 404, { error: 'not found' });
  }
}

const server = createServer((req, res) => {
  handle(req, res).catch((e: unknown) => {
    if (res.headersSent) return void res.destroy();
    if (e instanceof BadRequest) send(res, e.status, { __ERROR: [{ message: e.message }] });
    else send(res, 500, { __ERROR: [{ message: String(e) }] });
  });
});
// our server's (Fastify's) keep-alive time: an idle connection outlives the other server's round
server.keepAliveTimeout = 72_000;

listenForBench(server, db);
