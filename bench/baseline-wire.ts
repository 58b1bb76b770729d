// What both read baselines (baseline-server.ts on SQLite, baseline-server-pg.ts on PostgreSQL)
// write: an Item entity as our server writes it, and a JSON answer. Kept to the few lines the
// wire needs, so that a baseline stays a hand-written server with nothing else.

import type { ServerResponse } from 'node:http';

export const PAGE_SIZE = 100;
/** the top of a prefix range on a folded column (as our compiler writes it) */
export const PREFIX_TOP = '\u{10FFFF}';

/** A row of the bench's Item table; `created` as the engine's driver reads it (ISO text on SQLite, a Date on PostgreSQL). */
export interface ItemRow<Created = string | Date> {
  ID: number;
  name: string | null;
  price: number | null;
  qty: number | null;
  created: Created | null;
  __stamp: number;
  __timestamp: number;
}

/** One entity as our server writes it. */
export function entity(row: ItemRow, top: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (top) out.__entityModel = 'Item';
  out.__KEY = String(row.ID);
  out.__TIMESTAMP = new Date(row.__timestamp).toISOString();
  out.__STAMP = row.__stamp;
  out.ID = row.ID;
  out.name = row.name;
  out.price = row.price;
  out.qty = row.qty;
  out.created = row.created;
  return out;
}

export function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** A page of Items as our server answers it (the global stamp, which our server reads too, left at 0). */
export function pageAnswer(rows: readonly ItemRow[], count: number, skip: number): Record<string, unknown> {
  return { __entityModel: 'Item', __GlobalStamp: 0, __COUNT: count, __FIRST: skip, __ENTITIES: rows.map((r) => entity(r, false)), __SENT: rows.length };
}
