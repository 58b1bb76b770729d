// The internal tables (`__dataset_…`): their names and their creation, with the columns and
// indexes added since their first version, so that a database made by an older version is
// brought in line by the schema sync. The statements on each table are the other files of this
// folder (meta.ts, global-stamp.ts, query-paths.ts, files.ts, sessions.ts, locks.ts, webhooks.ts, users.ts), so that the
// core calls functions rather than writing SQL for them; entity tables are the compiler's
// (sql/compiler/). Where engines differ (the global stamp, the schema lock, the catalog), the
// dialect gives the SQL.

import { SET_ROW_MEMBERS } from '../../config/limits.js';
import type { Reader, Storage } from '../adapter.js';
import { GLOBAL_STAMP_TABLE } from '../../sql/hidden-columns.js';
import { oidcStateTableStatements } from './oidc.js';

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
/** Web sessions (datastore/sessions/store.ts; the statements: sessions.ts): one row a stored session, keyed by the hash of its cookie. */
export const SESSION_TABLE = '__dataset_sessions';
/** Failed logins counted per client address and per user name, in fixed windows. */
export const LOGIN_FAILURE_TABLE = '__dataset_login_failures';
/** Pessimistic entity locks (datastore/sessions/locks.ts, REST's $lock): one row a locked entity, held by a session's id. */
export const LOCK_TABLE = '__dataset_locks';
/** The webhooks' cursors and leases (webhooks.ts): one row a webhook of webhooks.json. */
export const WEBHOOK_TABLE = '__dataset_webhooks';
/** Built-in users (users.ts, datastore/users/): one row a user, keyed by its folded name. */
export const USER_TABLE = '__dataset_users';
/** API tokens: one row a token, found by its secret's hash. */
export const API_TOKEN_TABLE = '__dataset_api_tokens';
/** One-time passcodes (4D's createOTP, $4DSID): one row a passcode, by its hash, until used or expired. */
export const OTP_TABLE = '__dataset_otps';
/** Wrong passwords in a row per folded user name, and the lock they bring. */
export const LOCKOUT_TABLE = '__dataset_login_lockouts';

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
    `CREATE TABLE IF NOT EXISTS ${q(WEBHOOK_TABLE)} (${q('name')} TEXT PRIMARY KEY, ${q('stamp')} ${d.types.bigint} NOT NULL, ${q('owner')} TEXT NOT NULL, ${q('leaseUntil')} ${d.types.bigint} NOT NULL)`,
    // (a built-in user's sessions end with its password, its roles, its removal)
    `CREATE INDEX IF NOT EXISTS ${q(`${SESSION_TABLE}_userName`)} ON ${q(SESSION_TABLE)} (${q('userName')})`,
    `CREATE TABLE IF NOT EXISTS ${q(USER_TABLE)} (${q('key')} TEXT PRIMARY KEY, ${q('userName')} TEXT NOT NULL, ${q('hash')} TEXT NOT NULL, ${q('roles')} TEXT NOT NULL, ${q('created')} ${d.types.bigint} NOT NULL, ${q('changed')} ${d.types.bigint} NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${q(API_TOKEN_TABLE)} (${q('id')} TEXT PRIMARY KEY, ${q('hash')} TEXT NOT NULL UNIQUE, ${q('name')} TEXT NOT NULL, ${q('user')} TEXT NOT NULL, ${q('privileges')} TEXT NOT NULL, ${q('created')} ${d.types.bigint} NOT NULL, ${q('expires')} ${d.types.bigint}, ${q('lastUsed')} ${d.types.bigint})`,
    `CREATE INDEX IF NOT EXISTS ${q(`${API_TOKEN_TABLE}_user`)} ON ${q(API_TOKEN_TABLE)} (${q('user')})`,
    `CREATE TABLE IF NOT EXISTS ${q(OTP_TABLE)} (${q('hash')} TEXT PRIMARY KEY, ${q('session')} TEXT NOT NULL, ${q('expires')} ${d.types.bigint} NOT NULL)`,
    `CREATE INDEX IF NOT EXISTS ${q(`${OTP_TABLE}_session`)} ON ${q(OTP_TABLE)} (${q('session')})`,
    `CREATE TABLE IF NOT EXISTS ${q(LOCKOUT_TABLE)} (${q('key')} TEXT PRIMARY KEY, ${q('failures')} INTEGER NOT NULL, ${q('until')} ${d.types.bigint} NOT NULL, ${q('seen')} ${d.types.bigint} NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${q(SET_CHUNK_TABLE)} (${q('set')} TEXT NOT NULL, ${q('seq')} INTEGER NOT NULL, ${q('data')} ${d.types.bytes} NOT NULL, PRIMARY KEY (${q('set')}, ${q('seq')}))`,
    ...oidcStateTableStatements(d), // single sign-on's pending sign-ins (oidc.ts)
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
  // used guests give way (datastore/sessions/admission.ts).
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

/** The column names of a table, or [] when the table does not exist. */
export async function tableColumns(r: Reader, table: string): Promise<string[]> {
  return (await r.column(r.dialect.schema.tableColumns, [table])) as string[];
}
