// What both read baselines (baseline-server.ts on SQLite, baseline-server-pg.ts on PostgreSQL)
// write: an Item entity as our server writes it, and a JSON answer. Kept to the few lines the
// wire needs, so that a baseline stays a hand-written server with nothing else.

import type { Server, ServerResponse } from 'node:http';

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

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * The headers the service's contract puts on every answer, which a hand-written server meeting the
 * same contract would send too: the security headers (nosniff, a CSP, no-store). A cookie-less
 * read gets no session cookie and no request id from our server (a guest that keeps nothing has no
 * cookie; an id goes back only when one was sent, or on an error), so the baseline sends neither.
 * With them both servers put the same headers on the wire; `--bare-baseline` leaves them out (the
 * minimal baseline: content-type and content-length only). The baselines take them with
 * `--cookie NAME` (the name is no longer used: kept so that older scripts still start).
 */
export function contractHeaders(_cookieName: string): (res: ServerResponse) => void {
  return (res) => {
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
    res.setHeader('cache-control', 'no-store');
  };
}

/** The contract's headers when the baseline was started with `--cookie NAME`; none without. */
const headers = ((i) => (i > 0 && process.argv[i + 1] ? contractHeaders(process.argv[i + 1]) : undefined))(process.argv.indexOf('--cookie'));

/** The view part of our entity tags (src/rest/request/etag.ts): a digest of what the caller is shown, the same for every request of one projection here. */
const VIEW = 'baselineview';

/** An entity's ETag as our server writes it for an entity showing its own row alone. */
export const entityTag = (row: { __stamp: number }): string => `"${row.__stamp}-${VIEW}"`;

/** A page's ETag as our server writes it (the global stamp, 0 here as in the page's body). */
export const pageTag = (globalStamp = 0): string => `W/"g${globalStamp}-${VIEW}"`;

export function send(res: ServerResponse, status: number, body: unknown, etag?: string): void {
  const text = JSON.stringify(body);
  headers?.(res);
  if (etag !== undefined && headers) res.setHeader('etag', etag);
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** A page of Items as our server answers it (the global stamp, which our server reads too, left at 0). */
export function pageAnswer(rows: readonly ItemRow[], count: number, skip: number): Record<string, unknown> {
  return { __entityModel: 'Item', __GlobalStamp: 0, __COUNT: count, __FIRST: skip, __ENTITIES: rows.map((r) => entity(r, false)), __SENT: rows.length };
}

/** Listens on a free port of 127.0.0.1 and prints it as the bench reads it; SIGTERM or SIGINT close the server, then the database, then the process. */
export function listenForBench(server: Server, db: { close(): unknown }): void {
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`baseline listening on http://127.0.0.1:${port}\n`);
  });
  const shutdown = (): void => {
    server.close(() => {
      db.close();
      process.exit(0);
    });
    server.closeAllConnections();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
