// The internal tables (`__dataset_…`): their creation and every statement on them, so that the
// core calls functions rather than writing SQL for them. Entity tables are the compiler's. Where
// engines differ (the global stamp, the schema lock, the catalog), the dialect gives the SQL.

import { SET_ROW_MEMBERS } from '../config/limits.js';
import type { Reader, Storage } from './adapter.js';
import { GLOBAL_STAMP_TABLE } from '../sql/hidden-columns.js';

export const META_TABLE = '__dataset_meta';
export { GLOBAL_STAMP_TABLE };
export const BLOB_TABLE = '__dataset_blobs';
export const BLOB_CHUNK_TABLE = '__dataset_blob_chunks';
/** The last __queryPath of each session (its id in `caller`), for GET /rest/$querypath (in the database: every server instance sees it). */
export const QUERY_PATH_TABLE = '__dataset_query_paths';
/** Entity sets (datastore/sets/database-set-store.ts): one row a set, its members in chunks. */
export const SET_TABLE = '__dataset_entity_sets';
export const SET_CHUNK_TABLE = '__dataset_entity_set_chunks';
/** One row: how many sets are kept and their members, kept up to date with every set kept or deleted (the bound is checked without adding up every set). */
export const SET_TOTALS_TABLE = '__dataset_entity_set_totals';
/** One row a session holding sets: what its sets count toward the bound (members, and SET_ROW_MEMBERS a set), kept up to date like the totals — past the bound, the largest holder's sets go first. */
export const SET_OWNER_TABLE = '__dataset_entity_set_owners';
/** Web sessions (datastore/sessions.ts): one row a stored session, keyed by the hash of its cookie. */
export const SESSION_TABLE = '__dataset_sessions';
/** Failed logins counted per client address and per user name, in fixed windows. */
export const LOGIN_FAILURE_TABLE = '__dataset_login_failures';
/** Pessimistic entity locks (datastore/sessions/locks.ts, REST's $lock): one row a locked entity, held by a session's id. */
export const LOCK_TABLE = '__dataset_locks';

/** Creates the internal tables that are missing, with the columns added since their first version. In the schema sync's transaction. */
export async function createSystemTables(s: Storage): Promise<void> {
  const d = s.dialect;
  const q = d.sql.quote;
  for (const sql of [
    `CREATE TABLE IF NOT EXISTS ${q(META_TABLE)} (${q('key')} TEXT PRIMARY KEY, ${q('value')} TEXT NOT NULL)`,
    ...d.schema.globalStamp(q(GLOBAL_STAMP_TABLE)).create,
    `CREATE TABLE IF NOT EXISTS ${q(BLOB_TABLE)} (${q('id')} ${d.types.autoKey}, ${q('mime')} TEXT NOT NULL, ${q('size')} ${d.types.bigint} NOT NULL, ${q('created')} ${d.types.bigint} NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${q(QUERY_PATH_TABLE)} (${q('caller')} TEXT PRIMARY KEY, ${q('path')} TEXT NOT NULL, ${q('at')} ${d.types.bigint} NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${q(BLOB_CHUNK_TABLE)} (${q('blob')} ${d.types.bigint} NOT NULL, ${q('seq')} INTEGER NOT NULL, ${q('data')} ${d.types.bytes} NOT NULL, PRIMARY KEY (${q('blob')}, ${q('seq')}))`,
    `CREATE TABLE IF NOT EXISTS ${q(SET_TABLE)} (${q('id')} TEXT PRIMARY KEY, ${q('dataClass')} TEXT NOT NULL, ${q('sorted')} INTEGER NOT NULL, ${q('timeout')} ${d.types.bigint} NOT NULL, ${q('refreshed')} ${d.types.bigint} NOT NULL, ${q('size')} ${d.types.bigint} NOT NULL, ${q('text')} INTEGER NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS ${q(`${SET_TABLE}_refreshed`)} ON ${q(SET_TABLE)} (${q('refreshed')})`,
    `CREATE TABLE IF NOT EXISTS ${q(SESSION_TABLE)} (${q('token')} TEXT PRIMARY KEY, ${q('id')} TEXT NOT NULL, ${q('userName')} TEXT NOT NULL, ${q('privileges')} TEXT NOT NULL, ${q('storage')} TEXT NOT NULL, ${q('idle')} ${d.types.bigint} NOT NULL, ${q('expires')} ${d.types.bigint} NOT NULL, ${q('guest')} INTEGER NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS ${q(`${SESSION_TABLE}_expires`)} ON ${q(SESSION_TABLE)} (${q('expires')})`,
    // (the caps on live sessions count guests and the others apart)
    `CREATE INDEX IF NOT EXISTS ${q(`${SESSION_TABLE}_guest_expires`)} ON ${q(SESSION_TABLE)} (${q('guest')}, ${q('expires')})`,
    `CREATE TABLE IF NOT EXISTS ${q(LOGIN_FAILURE_TABLE)} (${q('key')} TEXT NOT NULL, ${q('window')} ${d.types.bigint} NOT NULL, ${q('count')} INTEGER NOT NULL, PRIMARY KEY (${q('key')}, ${q('window')}))`,
    // a lock lives as long as its session: found by the session's id
    `CREATE INDEX IF NOT EXISTS ${q(`${SESSION_TABLE}_id`)} ON ${q(SESSION_TABLE)} (${q('id')})`,
    `CREATE TABLE IF NOT EXISTS ${q(LOCK_TABLE)} (${q('dataClass')} TEXT NOT NULL, ${q('key')} TEXT NOT NULL, ${q('session')} TEXT NOT NULL, ${q('address')} TEXT NOT NULL, ${q('host')} TEXT NOT NULL, ${q('userAgent')} TEXT NOT NULL, ${q('at')} ${d.types.bigint} NOT NULL, PRIMARY KEY (${q('dataClass')}, ${q('key')}))`,
    `CREATE INDEX IF NOT EXISTS ${q(`${LOCK_TABLE}_session`)} ON ${q(LOCK_TABLE)} (${q('session')})`,
    `CREATE TABLE IF NOT EXISTS ${q(SET_CHUNK_TABLE)} (${q('set')} TEXT NOT NULL, ${q('seq')} INTEGER NOT NULL, ${q('data')} ${d.types.bytes} NOT NULL, PRIMARY KEY (${q('set')}, ${q('seq')}))`,
    ...d.schema.sqlFunctions(),
    // file contents (mostly compressed formats) and set members are written as they are
    d.schema.storeUncompressed(BLOB_CHUNK_TABLE, 'data'),
    d.schema.storeUncompressed(SET_CHUNK_TABLE, 'data'),
  ]) if (sql !== null) await s.exec(sql);
  // The stored files' columns for uploads (datastore/files/files.ts), added to databases made before
  // them: `upload` (the id a client attaches, while the file waits), `kind` (image or binary),
  // `expires` (set while no entity holds the file: past it, the file is swept), `owner` (who
  // stored it, while it waits: the pending-upload quotas count by it).
  const existing = await tableColumns(s, BLOB_TABLE);
  for (const [name, type] of [['upload', 'TEXT'], ['kind', 'TEXT'], ['expires', d.types.bigint], ['owner', 'TEXT']]) {
    if (!existing.includes(name)) await s.exec(`ALTER TABLE ${q(BLOB_TABLE)} ADD COLUMN ${q(name)} ${type}`);
  }
  // The version of an entity set's members (a set rebuilt under its id gets a new one), added to
  // databases made before it: instances cache members by it.
  const setColumns = await tableColumns(s, SET_TABLE);
  if (!setColumns.includes('version')) await s.exec(`ALTER TABLE ${q(SET_TABLE)} ADD COLUMN ${q('version')} TEXT`);
  // The session that made a set (its public id): counted for the sets-per-session quota, and what $info lists to it.
  if (!setColumns.includes('owner')) await s.exec(`ALTER TABLE ${q(SET_TABLE)} ADD COLUMN ${q('owner')} TEXT`);
  await s.exec(`CREATE INDEX IF NOT EXISTS ${q(`${SET_TABLE}_owner`)} ON ${q(SET_TABLE)} (${q('owner')})`);
  // When a set expires (refreshed + timeout, kept with them), indexed: the sweep reads the expired
  // sets only, whatever the number kept. Filled in for sets kept before it.
  if (!setColumns.includes('expires')) {
    await s.exec(`ALTER TABLE ${q(SET_TABLE)} ADD COLUMN ${q('expires')} ${d.types.bigint}`);
    await s.exec(`UPDATE ${q(SET_TABLE)} SET ${q('expires')} = ${q('refreshed')} + ${q('timeout')}`);
  }
  await s.exec(`CREATE INDEX IF NOT EXISTS ${q(`${SET_TABLE}_expires`)} ON ${q(SET_TABLE)} (${q('expires')})`);
  await s.exec(`CREATE TABLE IF NOT EXISTS ${q(SET_TOTALS_TABLE)} (${q('id')} INTEGER PRIMARY KEY, ${q('sets')} ${d.types.bigint} NOT NULL, ${q('members')} ${d.types.bigint} NOT NULL)`);
  await s.exec(
    `INSERT INTO ${q(SET_TOTALS_TABLE)} (${q('id')}, ${q('sets')}, ${q('members')}) SELECT 1, c.n, c.m FROM ` +
      `(SELECT COUNT(*) AS n, COALESCE(SUM(${q('size')}), 0) AS m FROM ${q(SET_TABLE)}) c WHERE NOT EXISTS (SELECT 1 FROM ${q(SET_TOTALS_TABLE)})`,
  );
  // Who stored a session (its client's address) and when it was last used, added to databases
  // made before them: stored guests are capped per address, and past the caps the least recently
  // used guests give way (datastore/sessions.ts).
  const sessionColumns = await tableColumns(s, SESSION_TABLE);
  if (!sessionColumns.includes('address')) await s.exec(`ALTER TABLE ${q(SESSION_TABLE)} ADD COLUMN ${q('address')} TEXT NOT NULL DEFAULT ''`);
  if (!sessionColumns.includes('used')) await s.exec(`ALTER TABLE ${q(SESSION_TABLE)} ADD COLUMN ${q('used')} ${d.types.bigint} NOT NULL DEFAULT 0`);
  await s.exec(`CREATE INDEX IF NOT EXISTS ${q(`${SESSION_TABLE}_guest_used`)} ON ${q(SESSION_TABLE)} (${q('guest')}, ${q('used')})`);
  await s.exec(`CREATE INDEX IF NOT EXISTS ${q(`${SESSION_TABLE}_address_used`)} ON ${q(SESSION_TABLE)} (${q('address')}, ${q('guest')}, ${q('used')})`);
  // What each session's sets hold (sets made by no session under ''), filled in from the sets
  // kept before it, when it is made.
  const ownersExisted = (await tableColumns(s, SET_OWNER_TABLE)).length > 0;
  await s.exec(`CREATE TABLE IF NOT EXISTS ${q(SET_OWNER_TABLE)} (${q('owner')} TEXT PRIMARY KEY, ${q('members')} ${d.types.bigint} NOT NULL)`);
  await s.exec(`CREATE INDEX IF NOT EXISTS ${q(`${SET_OWNER_TABLE}_members`)} ON ${q(SET_OWNER_TABLE)} (${q('members')})`);
  if (!ownersExisted) {
    await s.exec(
      `INSERT INTO ${q(SET_OWNER_TABLE)} (${q('owner')}, ${q('members')}) SELECT COALESCE(${q('owner')}, ''), SUM(${q('size')}) + COUNT(*) * ${SET_ROW_MEMBERS} FROM ${q(SET_TABLE)} GROUP BY COALESCE(${q('owner')}, '')`,
    );
  }
  await s.exec(`CREATE UNIQUE INDEX IF NOT EXISTS ${q(`${BLOB_TABLE}_upload`)} ON ${q(BLOB_TABLE)} (${q('upload')})`);
  await s.exec(`CREATE INDEX IF NOT EXISTS ${q(`${BLOB_TABLE}_expires`)} ON ${q(BLOB_TABLE)} (${q('expires')})`);
  await s.exec(`CREATE INDEX IF NOT EXISTS ${q(`${BLOB_TABLE}_owner`)} ON ${q(BLOB_TABLE)} (${q('owner')})`);
}

/** Takes the lock named `name` until the current transaction ends, where the engine needs one (see Dialect.concurrency.transactionLock). */
export async function lockNamed(s: Storage, name: string): Promise<void> {
  const sql = s.dialect.concurrency.transactionLock(name);
  if (sql !== null) await s.run(sql);
}

/**
 * Takes the schema's lock until the current transaction ends: instances bring the schema in line,
 * and seed, one at a time. The transaction runs without the query time limit from here: an
 * instance may wait for another's whole sync or seed, and a conversion goes through whole tables.
 */
export async function lockSchema(s: Storage): Promise<void> {
  if (s.dialect.concurrency.noStatementTimeout !== null) await s.run(s.dialect.concurrency.noStatementTimeout);
  await lockNamed(s, 'schema sync');
}

/** The column names of a table, or [] when the table does not exist. */
export async function tableColumns(r: Reader, table: string): Promise<string[]> {
  return (await r.column(r.dialect.schema.tableColumns, [table])) as string[];
}

/** A value recorded in the meta table (the schema last applied, the fold version), if any. */
export async function readMeta(r: Reader, key: string): Promise<string | undefined> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(`SELECT ${q('value')} AS v FROM ${q(META_TABLE)} WHERE ${q('key')} = ${p(1)}`, [key]);
  return row === undefined ? undefined : String(row.v);
}

export async function writeMeta(s: Storage, key: string, value: string): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(
    `INSERT INTO ${q(META_TABLE)} (${q('key')}, ${q('value')}) VALUES (${p(1)}, ${p(2)}) ON CONFLICT (${q('key')}) DO UPDATE SET ${q('value')} = excluded.${q('value')}`,
    [key, value],
  );
}

/** Increases the global stamp: in every transaction that saves or drops. */
export async function bumpGlobalStamp(s: Storage): Promise<void> {
  await s.run(s.dialect.schema.globalStamp(s.dialect.sql.quote(GLOBAL_STAMP_TABLE)).bump);
}

/** The read of the modification counter, per dialect: built once (many answers show the counter). */
const stampReads = new WeakMap<Reader['dialect'], string>();

/** The datastore's modification counter. */
export async function readGlobalStamp(r: Reader): Promise<number> {
  let sql = stampReads.get(r.dialect);
  if (sql === undefined) stampReads.set(r.dialect, (sql = r.dialect.schema.globalStamp(r.dialect.sql.quote(GLOBAL_STAMP_TABLE)).read));
  const row = await r.get(sql);
  return Number(row?.v ?? 0);
}

/** Keeps the last query path of a caller. */
export async function recordQueryPath(s: Storage, caller: string, path: unknown, at: number): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(
    `INSERT INTO ${q(QUERY_PATH_TABLE)} (${q('caller')}, ${q('path')}, ${q('at')}) VALUES (${p(1)}, ${p(2)}, ${p(3)})`
    + ` ON CONFLICT (${q('caller')}) DO UPDATE SET ${q('path')} = excluded.${q('path')}, ${q('at')} = excluded.${q('at')}`,
    [caller, JSON.stringify(path), at],
  );
}

/**
 * Removes the query paths of sessions no longer stored (expired, evicted, or ended by a login's
 * new id), recorded before `before` (a path recorded by a guest whose row its request has yet to
 * store is left for the next sweep), and those of the address-keyed callers of older versions.
 */
export async function deleteVoidQueryPaths(s: Storage, before: number): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const paths = q(QUERY_PATH_TABLE);
  const sessions = q(SESSION_TABLE);
  return s.run(`DELETE FROM ${paths} WHERE ${paths}.${q('at')} < ${p(1)} AND NOT EXISTS (SELECT 1 FROM ${sessions} WHERE ${sessions}.${q('id')} = ${paths}.${q('caller')})`, [before]);
}

/** The last query path recorded for a caller, if any. */
export async function lastQueryPath(r: Reader, caller: string): Promise<unknown> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(`SELECT ${q('path')} AS p FROM ${q(QUERY_PATH_TABLE)} WHERE ${q('caller')} = ${p(1)}`, [caller]);
  return row ? JSON.parse(row.p as string) : undefined;
}

// ── Stored files (datastore/files/files.ts): a row per file, its bytes in chunks ──

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

// ── Web sessions (datastore/sessions.ts) ──

export interface SessionRow {
  /** the SHA-256 of the cookie's token (the token itself is never stored) */
  readonly token: string;
  /** the session's public id ($info, session().id): not the cookie */
  readonly id: string;
  readonly userName: string;
  /** JSON: the privilege names held, expanded */
  readonly privileges: string;
  /** JSON: the session's storage object */
  readonly storage: string;
  /** the idle timeout, in ms */
  readonly idle: number;
  /** when it expires unless used again (ms since the epoch) */
  readonly expires: number;
  readonly guest: boolean;
}

/** A session as it is stored: with the address of the client that stored it and when it was last used (ms; written with its expiry). */
export interface StoredSessionRow extends SessionRow {
  readonly address: string;
  readonly used: number;
}

const SESSION_COLUMNS = ['token', 'id', 'userName', 'privileges', 'storage', 'idle', 'expires', 'guest'] as const;
const STORED_COLUMNS = [...SESSION_COLUMNS, 'address', 'used'] as const;

function sessionFromRow(row: Record<string, unknown>): SessionRow {
  return {
    token: String(row.token), id: String(row.id), userName: String(row.userName), privileges: String(row.privileges), storage: String(row.storage),
    idle: Number(row.idle), expires: Number(row.expires), guest: Number(row.guest) === 1,
  };
}

export async function readSession(r: Reader, token: string): Promise<SessionRow | undefined> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(`SELECT ${SESSION_COLUMNS.map((c) => q(c)).join(', ')} FROM ${q(SESSION_TABLE)} WHERE ${q('token')} = ${p(1)}`, [token]);
  return row ? sessionFromRow(row) : undefined;
}

/** Stores a new session (its token is new: never one stored before). */
export async function insertSession(s: Storage, row: StoredSessionRow): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(
    // (a guest kept by its cookie, stored by two of its requests at once: one row, the same)
    `INSERT INTO ${q(SESSION_TABLE)} (${STORED_COLUMNS.map((c) => q(c)).join(', ')}) VALUES (${STORED_COLUMNS.map((_, i) => p(i + 1)).join(', ')}) ON CONFLICT (${q('token')}) DO NOTHING`,
    [row.token, row.id, row.userName, row.privileges, row.storage, row.idle, row.expires, row.guest ? 1 : 0, row.address, row.used],
  );
}

/** Whether a token's session is stored (live or not). */
export async function sessionExists(r: Reader, token: string): Promise<boolean> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  return (await r.get(`SELECT 1 AS x FROM ${q(SESSION_TABLE)} WHERE ${q('token')} = ${p(1)}`, [token])) !== undefined;
}

/** The live guest sessions stored from one client address. */
export async function countGuestsFrom(r: Reader, address: string, now: number): Promise<number> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(`SELECT COUNT(*) AS n FROM ${q(SESSION_TABLE)} WHERE ${q('address')} = ${p(1)} AND ${q('guest')} = 1 AND ${q('expires')} > ${p(2)}`, [address, now]);
  return Number(row?.n ?? 0);
}

/**
 * Removes the `count` least recently used live guest sessions (of one address, when given);
 * resolves to their ids. One statement: the rows are chosen by the index on their last use.
 */
export async function evictGuests(s: Storage, count: number, now: number, address?: string): Promise<string[]> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const from = address === undefined ? '' : ` AND ${q('address')} = ${p(2)}`;
  const rows = await s.all(
    `DELETE FROM ${q(SESSION_TABLE)} WHERE ${q('token')} IN (SELECT ${q('token')} FROM ${q(SESSION_TABLE)} WHERE ${q('guest')} = 1 AND ${q('expires')} > ${p(1)}${from} ORDER BY ${q('used')} LIMIT ${p(address === undefined ? 2 : 3)}) RETURNING ${q('id')} AS id`,
    address === undefined ? [now, count] : [now, address, count],
  );
  return rows.map((r) => String(r.id));
}

/**
 * Writes the parts of a stored session that a request changed (who it is, its storage, its idle
 * timeout) and its expiry, never the others; resolves to 0 when it is gone (a gone session is not
 * brought back).
 */
export async function updateSession(s: Storage, row: StoredSessionRow, parts: { readonly who: boolean; readonly storage: boolean; readonly idle: boolean }): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const sets: string[] = [];
  const values: unknown[] = [];
  const set = (column: string, value: unknown) => {
    values.push(value);
    sets.push(`${q(column)} = ${p(values.length)}`);
  };
  if (parts.who) {
    set('userName', row.userName);
    set('privileges', row.privileges);
    set('guest', row.guest ? 1 : 0);
  }
  if (parts.storage) set('storage', row.storage);
  if (parts.idle) set('idle', row.idle);
  set('expires', row.expires);
  set('used', row.used);
  values.push(row.token);
  return s.run(`UPDATE ${q(SESSION_TABLE)} SET ${sets.join(', ')} WHERE ${q('token')} = ${p(values.length)}`, values);
}

/** Moves a session's expiry and last use (it was used at `used`); resolves to 0 when it is gone. */
export async function touchSession(s: Storage, token: string, expires: number, used: number): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  return s.run(`UPDATE ${q(SESSION_TABLE)} SET ${q('expires')} = ${p(1)}, ${q('used')} = ${p(2)} WHERE ${q('token')} = ${p(3)}`, [expires, used, token]);
}

export async function deleteSession(s: Storage, token: string): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(`DELETE FROM ${q(SESSION_TABLE)} WHERE ${q('token')} = ${p(1)}`, [token]);
}

/** The live sessions, guests or not. */
export async function countSessions(r: Reader, guest: boolean, now: number): Promise<number> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(`SELECT COUNT(*) AS n FROM ${q(SESSION_TABLE)} WHERE ${q('guest')} = ${p(1)} AND ${q('expires')} > ${p(2)}`, [guest ? 1 : 0, now]);
  return Number(row?.n ?? 0);
}

/** The live sessions, soonest to expire last, at most `limit` (no tokens). */
export async function listSessions(r: Reader, now: number, limit: number): Promise<Omit<SessionRow, 'token' | 'storage'>[]> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const rows = await r.all(
    `SELECT ${q('id')} AS id, ${q('userName')} AS ${q('userName')}, ${q('privileges')} AS privileges, ${q('idle')} AS idle, ${q('expires')} AS expires, ${q('guest')} AS guest FROM ${q(SESSION_TABLE)}`
    + ` WHERE ${q('expires')} > ${p(1)} ORDER BY ${q('expires')} DESC LIMIT ${p(2)}`,
    [now, limit],
  );
  return rows.map((row) => ({ id: String(row.id), userName: String(row.userName), privileges: String(row.privileges), idle: Number(row.idle), expires: Number(row.expires), guest: Number(row.guest) === 1 }));
}

/** Removes expired sessions and login-failure counts of windows past; resolves to the sessions removed. */
export async function deleteExpiredSessions(s: Storage, now: number, failuresBefore: number): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const n = await s.run(`DELETE FROM ${q(SESSION_TABLE)} WHERE ${q('expires')} <= ${p(1)}`, [now]);
  await s.run(`DELETE FROM ${q(LOGIN_FAILURE_TABLE)} WHERE ${q('window')} < ${p(1)}`, [failuresBefore]);
  return n;
}

/**
 * Adds `delta` to the login count of each key in the window (an attempt: +1; a success forgiven:
 * -1), in one statement each, so that attempts arriving at once each see the others; resolves to
 * each key's count after it.
 */
export async function countLogins(s: Storage, keys: readonly string[], window: number, delta: number): Promise<number[]> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const out: number[] = [];
  for (const key of keys) {
    const row = await s.get(
      `INSERT INTO ${q(LOGIN_FAILURE_TABLE)} (${q('key')}, ${q('window')}, ${q('count')}) VALUES (${p(1)}, ${p(2)}, ${p(3)})`
      + ` ON CONFLICT (${q('key')}, ${q('window')}) DO UPDATE SET ${q('count')} = ${q(LOGIN_FAILURE_TABLE)}.${q('count')} + ${p(4)} RETURNING ${q('count')} AS n`,
      [key, window, delta, delta],
    );
    out.push(Number(row?.n ?? 0));
  }
  return out;
}

// ── Pessimistic entity locks (datastore/sessions/locks.ts) ──
// A lock is held by a session's id while that session lives: every read of a lock joins the
// sessions table, so a lock of a session gone (expired, swept) is void at once on every instance,
// before the sweep removes its row.

/** Who holds a lock: the session (its id and user name) and the client it locked from. */
export interface LockHolderRow {
  readonly session: string;
  readonly userName: string;
  readonly address: string;
  readonly host: string;
  readonly userAgent: string;
}

/** The live lock on an entity held by a session other than `except` (null: any session), if any. */
export async function lockHeldElsewhere(r: Reader, dataClass: string, key: string, now: number, except: string | null): Promise<LockHolderRow | undefined> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const l = q(LOCK_TABLE);
  const s = q(SESSION_TABLE);
  const row = await r.get(
    `SELECT ${l}.${q('session')} AS ${q('session')}, ${s}.${q('userName')} AS ${q('userName')}, ${l}.${q('address')} AS ${q('address')}, ${l}.${q('host')} AS ${q('host')}, ${l}.${q('userAgent')} AS ${q('userAgent')}`
    + ` FROM ${l} JOIN ${s} ON ${s}.${q('id')} = ${l}.${q('session')}`
    // (placeholders in the order they bind: SQLite's bind by position)
    + ` WHERE ${l}.${q('dataClass')} = ${p(1)} AND ${l}.${q('key')} = ${p(2)} AND ${s}.${q('expires')} > ${p(3)}${except === null ? '' : ` AND ${l}.${q('session')} <> ${p(4)}`} LIMIT 1`,
    except === null ? [dataClass, key, now] : [dataClass, key, now, except],
  );
  return row ? { session: String(row.session), userName: String(row.userName), address: String(row.address), host: String(row.host), userAgent: String(row.userAgent) } : undefined;
}

/**
 * In a lock's transaction: the session's row is still the one its request was opened with (its
 * token, id, user name and privileges; not expired), taken for update where the engine locks
 * rows, so that a logout or a login as another user (which changes or removes that row, then
 * removes the session's locks) waits for the lock to commit, or is seen by it.
 */
export async function sessionStillHeld(s: Storage, row: { token: string; id: string; userName: string; privileges: string }, now: number): Promise<boolean> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const t = q(SESSION_TABLE);
  const found = await s.get(
    `SELECT 1 AS ok FROM ${t} WHERE ${q('token')} = ${p(1)} AND ${q('id')} = ${p(2)} AND ${q('userName')} = ${p(3)} AND ${q('privileges')} = ${p(4)} AND ${q('expires')} > ${p(5)}${s.dialect.concurrency.rowLock(t)}`,
    [row.token, row.id, row.userName, row.privileges, now],
  );
  return found !== undefined;
}

/** How many locks a session holds, besides the one on an entity (the one it asks again). */
export async function countSessionLocks(r: Reader, session: string, dataClass: string, key: string): Promise<number> {
  const { quote: q, placeholder: p } = r.dialect.sql;
  const row = await r.get(
    `SELECT COUNT(*) AS n FROM ${q(LOCK_TABLE)} WHERE ${q('session')} = ${p(1)} AND NOT (${q('dataClass')} = ${p(2)} AND ${q('key')} = ${p(3)})`,
    [session, dataClass, key],
  );
  return Number(row?.n ?? 0);
}

/** What a write asks of an entity's locks after its UPDATE or DELETE: another live session's lock on it, and any lock row at all (a drop removes it). */
export interface LockProbe {
  readonly heldElsewhere: boolean;
  readonly anyRow: boolean;
}

/** The statements of bumpStampProbingLock, per dialect and shape (built once: every update and drop runs one). */
const probeStatements = new WeakMap<Reader['dialect'], Map<string, string>>();

/**
 * Increases the global stamp (when `bump`) and asks the entity's locks (LockProbe), in one
 * statement: where the increase is an expression (PostgreSQL's nextval), a SELECT of it and the
 * look-ups, at no round trip more than the write's own; where it is a statement of its own
 * (SQLite's UPDATE of its one row), that statement with the look-ups as its RETURNING clause. A
 * new statement after the write's, so that it sees a lock committed while the write waited for the row.
 */
export async function bumpStampProbingLock(s: Storage, dataClass: string, key: string, now: number, except: string | null, bump = true): Promise<LockProbe> {
  const d = s.dialect;
  const stamp = d.schema.globalStamp(d.sql.quote(GLOBAL_STAMP_TABLE));
  const shape = !bump ? 'probe' : stamp.bumpExpression === null ? 'returning' : 'select';
  const name = `${shape}${except === null ? '' : ' except'}`;
  let byShape = probeStatements.get(d);
  if (!byShape) probeStatements.set(d, (byShape = new Map()));
  let sql = byShape.get(name);
  if (sql === undefined) {
    const { quote: q, placeholder: p } = d.sql;
    const l = q(LOCK_TABLE);
    const t = q(SESSION_TABLE);
    // (placeholders in the order they bind, the same as `values` below: SQLite's bind by position)
    let n = 0;
    const bind = () => p(++n);
    const onKey = () => `${l}.${q('dataClass')} = ${bind()} AND ${l}.${q('key')} = ${bind()}`;
    const held = `EXISTS (SELECT 1 FROM ${l} JOIN ${t} ON ${t}.${q('id')} = ${l}.${q('session')} WHERE ${onKey()} AND ${t}.${q('expires')} > ${bind()}${except === null ? '' : ` AND ${l}.${q('session')} <> ${bind()}`}) AS ${q('held')}`;
    const anyRow = `EXISTS (SELECT 1 FROM ${l} WHERE ${onKey()}) AS ${q('anyRow')}`;
    sql = shape === 'returning' ? `${stamp.bump} RETURNING ${held}, ${anyRow}` : `SELECT ${shape === 'select' ? `${stamp.bumpExpression} AS ${q('stamp')}, ` : ''}${held}, ${anyRow}`;
    byShape.set(name, sql);
  }
  const values = except === null ? [dataClass, key, now, dataClass, key] : [dataClass, key, now, except, dataClass, key];
  let row = await s.get(sql, values);
  // (the stamp's one row is made with the schema: an UPDATE of it always returns one)
  if (row === undefined && shape === 'returning') row = await bumpStampProbingLock(s, dataClass, key, now, except, false).then((r) => ({ held: r.heldElsewhere, anyRow: r.anyRow }));
  return { heldElsewhere: truthy(row?.held), anyRow: truthy(row?.anyRow) };
}

function truthy(v: unknown): boolean {
  return v === true || v === 1 || v === 1n || v === '1' || v === 't';
}

/** Puts a session's lock on an entity, in place of any lock there (the caller checked it is void or the session's own). */
export async function putLock(s: Storage, row: { dataClass: string; key: string; session: string; address: string; host: string; userAgent: string; at: number }): Promise<void> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  await s.run(
    `INSERT INTO ${q(LOCK_TABLE)} (${q('dataClass')}, ${q('key')}, ${q('session')}, ${q('address')}, ${q('host')}, ${q('userAgent')}, ${q('at')}) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)})`
    + ` ON CONFLICT (${q('dataClass')}, ${q('key')}) DO UPDATE SET ${['session', 'address', 'host', 'userAgent', 'at'].map((c) => `${q(c)} = excluded.${q(c)}`).join(', ')}`,
    [row.dataClass, row.key, row.session, row.address, row.host, row.userAgent, row.at],
  );
}

/** The keys among `keys` (as the lock table writes them) that a lock row names, live or not: a big delete's few to look at closer (datastore/sessions/locks.ts). */
export async function lockedKeysAmong(r: Reader, dataClass: string, keys: readonly string[]): Promise<string[]> {
  if (keys.length === 0) return [];
  const { quote: q, placeholder: p } = r.dialect.sql;
  const marks = keys.map((_, i) => p(i + 2)).join(', ');
  return (await r.column(`SELECT ${q('key')} FROM ${q(LOCK_TABLE)} WHERE ${q('dataClass')} = ${p(1)} AND ${q('key')} IN (${marks})`, [dataClass, ...keys])).map(String);
}

/** Removes the lock on an entity: the session's own (`session`), or whoever's (null: the entity was dropped). */
export async function deleteLock(s: Storage, dataClass: string, key: string, session: string | null): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  return s.run(
    `DELETE FROM ${q(LOCK_TABLE)} WHERE ${q('dataClass')} = ${p(1)} AND ${q('key')} = ${p(2)}${session === null ? '' : ` AND ${q('session')} = ${p(3)}`}`,
    session === null ? [dataClass, key] : [dataClass, key, session],
  );
}

/** Removes every lock a session holds (it logged out). */
export async function deleteSessionLocks(s: Storage, session: string): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  return s.run(`DELETE FROM ${q(LOCK_TABLE)} WHERE ${q('session')} = ${p(1)}`, [session]);
}

/** Removes the locks whose session is gone or expired (the session sweep). */
export async function deleteVoidLocks(s: Storage, now: number): Promise<number> {
  const { quote: q, placeholder: p } = s.dialect.sql;
  const l = q(LOCK_TABLE);
  const t = q(SESSION_TABLE);
  return s.run(`DELETE FROM ${l} WHERE NOT EXISTS (SELECT 1 FROM ${t} WHERE ${t}.${q('id')} = ${l}.${q('session')} AND ${t}.${q('expires')} > ${p(1)})`, [now]);
}
