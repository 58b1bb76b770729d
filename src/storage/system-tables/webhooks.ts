// The webhooks' cursors (issue 36): one row a webhook, named as webhooks.json names it — the
// stamp its receiver has every change up to (the changes after it are the outbox: they are read
// again from the tracked data, __GlobalStamp and __DeletedRecords), and which instance delivers
// it now (a lease, so that with several instances one posts and the others wait to take over).

import type { Reader, Storage } from '../adapter.js';
import { WEBHOOK_TABLE } from './tables.js';

export interface WebhookCursorRow {
  readonly name: string;
  /** the receiver has every change up to this stamp */
  readonly stamp: number;
  /** the instance that delivers it (while its lease runs), or '' */
  readonly owner: string;
  /** the lease's end, in ms since the epoch */
  readonly leaseUntil: number;
}

/** The webhook's cursor, made at `stamp` (from now on) the first time it is asked for. */
export async function webhookCursor(s: Storage, name: string, stamp: number): Promise<WebhookCursorRow> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const t = q(WEBHOOK_TABLE);
  await s.run(`INSERT INTO ${t} (${q('name')}, ${q('stamp')}, ${q('owner')}, ${q('leaseUntil')}) VALUES (${p(1)}, ${p(2)}, '', 0) ON CONFLICT (${q('name')}) DO NOTHING`, [name, stamp]);
  return (await readWebhookCursors(s, [name]))[0];
}

/** The cursors of these webhooks (those that have one). */
export async function readWebhookCursors(r: Reader, names: readonly string[]): Promise<WebhookCursorRow[]> {
  if (names.length === 0) return [];
  const { quote: q, placeholder: p } = r.dialect.sql;
  const rows = await r.all(`SELECT ${q('name')}, ${q('stamp')}, ${q('owner')}, ${q('leaseUntil')} FROM ${q(WEBHOOK_TABLE)} WHERE ${q('name')} IN (${names.map((_, i) => p(i + 1)).join(', ')})`, names);
  return rows.map((r) => ({ name: String(r.name), stamp: Number(r.stamp), owner: String(r.owner), leaseUntil: Number(r.leaseUntil) }));
}

/** Takes (or keeps) the lease of a webhook for `owner` until `until`, when it is free, ended or owner's already: whether it is owner's now. */
export async function leaseWebhook(s: Storage, name: string, owner: string, now: number, until: number): Promise<boolean> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const n = await s.run(`UPDATE ${q(WEBHOOK_TABLE)} SET ${q('owner')} = ${p(1)}, ${q('leaseUntil')} = ${p(2)} WHERE ${q('name')} = ${p(3)} AND (${q('owner')} = ${p(4)} OR ${q('leaseUntil')} < ${p(5)})`, [owner, until, name, owner, now]);
  return n > 0;
}

/** Gives the lease up (a closing instance: another takes over at once). */
export async function releaseWebhook(s: Storage, name: string, owner: string): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(`UPDATE ${q(WEBHOOK_TABLE)} SET ${q('owner')} = '', ${q('leaseUntil')} = 0 WHERE ${q('name')} = ${p(1)} AND ${q('owner')} = ${p(2)}`, [name, owner]);
}

/**
 * Moves the cursor on to `stamp` once the receiver took everything up to it — only while `owner`
 * holds the lease and the cursor is still where it delivered from: whether it moved (if not,
 * another instance delivers now, and this one stops).
 */
export async function advanceWebhook(s: Storage, name: string, owner: string, from: number, stamp: number): Promise<boolean> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const n = await s.run(`UPDATE ${q(WEBHOOK_TABLE)} SET ${q('stamp')} = ${p(1)} WHERE ${q('name')} = ${p(2)} AND ${q('owner')} = ${p(3)} AND ${q('stamp')} = ${p(4)}`, [stamp, name, owner, from]);
  return n > 0;
}
