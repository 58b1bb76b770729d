// Stored files (datastore/files/files.ts): a row per file, its bytes in chunks. A file is written
// before an entity holds it (an upload waiting to be attached, a file being written) with an
// expiry, which a claim clears and past which the sweep removes it.

import type { Reader, Storage } from '../adapter.js';
import { BLOB_CHUNK_TABLE, BLOB_TABLE } from './tables.js';

export interface FileRow {
  readonly id: number;
  readonly mime: string;
  readonly size: number;
  /** 'image' or 'binary': what it was stored (or announced, for an upload) as */
  readonly kind: string;
  /** the id a client attaches it by while it waits (uploads only); null once an entity holds it */
  readonly upload: string | null;
}
export interface UploadRow extends FileRow {
  readonly expires: number;
}

/** A new file, its bytes to come, kept from the sweep until `expires`; resolves to its id. */
export async function insertFile(s: Storage, mime: string, kind: string, created: number, expires: number, owner: string | null = null): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const row = await s.get(
    `INSERT INTO ${q(BLOB_TABLE)} (${q('mime')}, ${q('size')}, ${q('created')}, ${q('kind')}, ${q('expires')}, ${q('owner')}) VALUES (${p(1)}, 0, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}) RETURNING ${q('id')} AS id`,
    [mime, created, kind, expires, owner],
  );
  return Number(row?.id);
}

/** A file whose bytes all arrived, written complete at once (its chunks follow in the same commit); resolves to its id. */
export async function insertCompleteFile(s: Storage, f: { mime: string; size: number; upload: string | null; kind: string; expires: number; created: number; owner?: string | null }): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const row = await s.get(
    `INSERT INTO ${q(BLOB_TABLE)} (${q('mime')}, ${q('size')}, ${q('created')}, ${q('kind')}, ${q('upload')}, ${q('expires')}, ${q('owner')}) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}) RETURNING ${q('id')} AS id`,
    [f.mime, f.size, f.created, f.kind, f.upload, f.expires, f.owner ?? null],
  );
  return Number(row?.id);
}

export async function insertFileChunk(s: Storage, file: number, seq: number, data: Uint8Array): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(`INSERT INTO ${q(BLOB_CHUNK_TABLE)} (${q('blob')}, ${q('seq')}, ${q('data')}) VALUES (${p(1)}, ${p(2)}, ${p(3)})`, [file, seq, data]);
}

/** A file whose bytes are all stored: its type, size, upload id and expiry. Resolves to 0 when it is gone (swept). */
export async function completeFile(s: Storage, id: number, f: { mime: string; size: number; upload: string | null; kind: string; expires: number }): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  return s.run(
    `UPDATE ${q(BLOB_TABLE)} SET ${q('mime')} = ${p(1)}, ${q('size')} = ${p(2)}, ${q('upload')} = ${p(3)}, ${q('kind')} = ${p(4)}, ${q('expires')} = ${p(5)} WHERE ${q('id')} = ${p(6)}`,
    [f.mime, f.size, f.upload, f.kind, f.expires, id],
  );
}

/** The complete upload a client attaches by id, unless it expired. */
export async function findUploadRow(r: Reader, upload: string, now: number): Promise<UploadRow | undefined> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(
    `SELECT ${q('id')} AS id, ${q('mime')} AS mime, ${q('size')} AS size, ${q('kind')} AS kind, ${q('expires')} AS expires FROM ${q(BLOB_TABLE)} WHERE ${q('upload')} = ${p(1)} AND ${q('expires')} > ${p(2)}`,
    [upload, now],
  );
  return row ? { id: Number(row.id), mime: String(row.mime), size: Number(row.size), kind: String(row.kind), upload, expires: Number(row.expires) } : undefined;
}

/** The files no entity holds yet (uploads waiting to be attached, and those being written): how many, and their bytes so far. */
export async function waitingFiles(r: Reader, owner?: string): Promise<{ count: number; bytes: number }> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const mine = owner === undefined ? '' : ` AND ${q('owner')} = ${p(1)}`;
  const row = await r.get(`SELECT COUNT(*) AS n, COALESCE(SUM(${q('size')}), 0) AS bytes FROM ${q(BLOB_TABLE)} WHERE ${q('expires')} IS NOT NULL${mine}`, owner === undefined ? [] : [owner]);
  return { count: Number(row?.n ?? 0), bytes: Number(row?.bytes ?? 0) };
}

/** Takes a waiting file for an entity: no expiry, no upload id. Resolves to 0 when it expired or another took it. */
export async function claimFileRow(s: Storage, id: number, now: number): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  return s.run(`UPDATE ${q(BLOB_TABLE)} SET ${q('expires')} = NULL, ${q('upload')} = NULL WHERE ${q('id')} = ${p(1)} AND ${q('expires')} > ${p(2)}`, [id, now]);
}

/** Moves the expiry of a file still waiting (one an entity holds has none). */
export async function setFileExpiry(s: Storage, id: number, expires: number): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(`UPDATE ${q(BLOB_TABLE)} SET ${q('expires')} = ${p(1)} WHERE ${q('id')} = ${p(2)} AND ${q('expires')} IS NOT NULL`, [expires, id]);
}

export async function fileRow(r: Reader, id: number): Promise<FileRow | undefined> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(`SELECT ${q('mime')} AS mime, ${q('size')} AS size, ${q('kind')} AS kind, ${q('upload')} AS upload FROM ${q(BLOB_TABLE)} WHERE ${q('id')} = ${p(1)}`, [id]);
  return row ? { id, mime: String(row.mime), size: Number(row.size), kind: String(row.kind), upload: (row.upload as string | null) ?? null } : undefined;
}

/** The bytes of chunk `seq` of a file, if it has one. */
export async function readFileChunk(r: Reader, id: number, seq: number): Promise<Buffer | undefined> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(`SELECT ${q('data')} AS data FROM ${q(BLOB_CHUNK_TABLE)} WHERE ${q('blob')} = ${p(1)} AND ${q('seq')} = ${p(2)}`, [id, seq]);
  return row?.data as Buffer | undefined;
}

/** Removes a file and its bytes. */
export async function deleteFile(s: Storage, id: number): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(`DELETE FROM ${q(BLOB_CHUNK_TABLE)} WHERE ${q('blob')} = ${p(1)}`, [id]);
  await s.run(`DELETE FROM ${q(BLOB_TABLE)} WHERE ${q('id')} = ${p(1)}`, [id]);
}

/** The files whose expiry has passed. */
export async function expiredFiles(r: Reader, now: number): Promise<number[]> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  return (await r.column(`SELECT ${q('id')} FROM ${q(BLOB_TABLE)} WHERE ${q('expires')} <= ${p(1)}`, [now])).map(Number);
}

/**
 * Removes a file if it is still expired, in one transaction; resolves to whether it did. The
 * delete is conditional, so an instance whose clock is late cannot remove what another just renewed.
 */
export async function deleteExpiredFile(s: Storage, id: number, now: number): Promise<boolean> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  return s.transaction(async () => {
    const gone = await s.run(`DELETE FROM ${q(BLOB_TABLE)} WHERE ${q('id')} = ${p(1)} AND ${q('expires')} <= ${p(2)}`, [id, now]);
    if (gone > 0) await s.run(`DELETE FROM ${q(BLOB_CHUNK_TABLE)} WHERE ${q('blob')} = ${p(1)}`, [id]);
    return gone > 0;
  });
}

/** Removes chunks whose file is gone (a crash between a file's two deletes). */
export async function deleteOrphanChunks(s: Storage): Promise<void> {
  const q = s.dialect.sql.quote;
  await s.run(`DELETE FROM ${q(BLOB_CHUNK_TABLE)} WHERE ${q('blob')} NOT IN (SELECT ${q('id')} FROM ${q(BLOB_TABLE)})`);
}
