// The suite's data set written straight into a project's database (issue 16): CATEGORIES
// Categories and `rows` Items (bench/suite/model.ts), stored exactly as our server would have
// stored them had they been created through it one by one, in key order:
//
// - the schema is the server's own: model.json is written and the project opened once
//   (openProject), which creates the tables, indexes, hidden columns and system tables;
// - every string column has its folded twin (`name__fold` = fold(name)), `__stamp` = 1,
//   `__timestamp` = GENERATED_AT (a fixed time: the data set is the same on every run), dates as
//   the dialect encodes them (SQLite: Date.toISOString()'s text; PostgreSQL: timestamptz);
// - keys are 1 … CATEGORIES and 1 … rows, and the key generators are left where N inserts leave
//   them (SQLite: sqlite_sequence; PostgreSQL: the identity's sequence), so that the next entity
//   created through the server gets key rows + 1; the global stamp is what CATEGORIES + rows
//   saves leave (one bump each).
//
// SQLite (≥ 300,000 rows/s end to end is the aim): the journal and fsync off while the file is
// still the generator's alone; the secondary indexes dropped before the fill and re-created after
// it with their own SQL from sqlite_master (one sort each, on SQLite's helper threads, instead of
// random inserts into three B-trees); multi-row INSERTs prepared once, with values made by
// formulas that need no Date and no fold per row (itemColumns); from PARALLEL_FROM items, a worker
// thread fills the top of the key range meanwhile (see fillSqlite); then ANALYZE, and the journal
// back to WAL (the server's mode) with nothing left in it.
//
// PostgreSQL: the items made by the server from their number (INSERT … SELECT FROM
// generate_series, the same formulas in SQL), a million a statement, one transaction, the
// secondary indexes dropped and re-created around it, the sequences set, then VACUUM ANALYZE.
//
// The formulas are those of itemValues and categoryValues written for speed: after every fill,
// checkStored() reads a sample of rows back (the first and last hundred and a thousand spread
// between) and compares each column with itemValues(n), fold() and the hidden columns, so a
// change of model.ts that the formulas missed stops the generator instead of giving wrong data.
//
// cacheDir (SQLite): the file is generated once per (rows, cache key) into that folder, and each
// caller gets a fresh copy of it (the suite's write scenarios change the data). The key hashes
// MODEL, the value functions' source, CATEGORIES, GENERATOR_VERSION and the schema the server
// makes (sqlite_master and its recorded schema): a change to any of them makes a new file.

import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { GLOBAL_STAMP_TABLE, META_TABLE } from '../../src/storage/system-tables/tables.js';
import { fold } from '../../src/util/fold.js';
import { CATEGORIES, CATEGORY, categoryValues, ITEM, itemValues, MODEL } from './model.js';

/** Bump when the generator's output changes (a cached file made by another version is not reused). */
export const GENERATOR_VERSION = 1;
/** every row's __timestamp (the time of its "save"): fixed, so that every run stores the same data */
export const GENERATED_AT = Date.UTC(2025, 0, 1);
/** the most items: names hold the number in DIGITS digits (model.ts) */
export const MAX_ROWS = 100_000_000;

export interface Generated {
  /** the project folder (model.json, data/data.sqlite) */
  readonly dir: string;
  /** the SQLite file, or the PostgreSQL database's URL */
  readonly db: string;
  /** items (the categories come with them) */
  readonly rows: number;
  /** ms from the start to the database ready to open (a copy of the cached file, when fromCache) */
  readonly ms: number;
  readonly rowsPerSecond: number;
  /** the SQLite file's size, or on PostgreSQL the two tables with their indexes */
  readonly bytes: number;
  readonly fromCache: boolean;
  /** with cacheDir: the cached file copied, or made */
  readonly cacheFile?: string;
}

export interface GenerateOptions {
  /** fill this PostgreSQL database (it must hold no dataset-rest tables yet) instead of DIR/data/data.sqlite */
  readonly pgUrl?: string;
  /** SQLite: keep the generated file in this folder, and copy it from there next time (Generated.cacheFile) */
  readonly cacheDir?: string;
  /**
   * SQLite: share the fill with a worker thread (default: from PARALLEL_FROM items, with two cores
   * or more, and the worker takes what it can once started); true: always, waiting for the worker to
   * start (they then take about half each); false: never.
   */
  readonly parallel?: boolean;
  /** progress lines (phases, and every million rows of the fill) */
  readonly log?: (line: string) => void;
}

/**
 * Makes `dir` (an empty or missing folder) a project of the suite's model whose database holds
 * CATEGORIES categories and `rows` items: DIR/data/data.sqlite, or the PostgreSQL database at
 * options.pgUrl.
 */
export async function generateProject(dir: string, rows: number, options: GenerateOptions = {}): Promise<Generated> {
  if (!Number.isInteger(rows) || rows < 0 || rows > MAX_ROWS) throw new RangeError(`rows must be an integer from 0 to ${MAX_ROWS}, not ${rows}`);
  const log = options.log ?? (() => {});
  mkdirSync(dir, { recursive: true });
  if (readdirSync(dir).length > 0) throw new Error(`${dir} is not empty: the generator makes a new project folder`);
  writeFileSync(join(dir, 'model.json'), JSON.stringify(MODEL, null, 2));
  const file = join(dir, 'data', 'data.sqlite');
  // the server's modules are loaded before the clock starts (imported here, not at the top: a fill
  // worker loads this module, and needs none of the server)
  const { openProject } = await import('../../src/project/open.js');
  const started = performance.now();
  const done = (db: string, bytes: number, fromCache: boolean, cacheFile?: string): Generated => {
    const ms = performance.now() - started;
    return { dir, db, rows, ms, rowsPerSecond: ms > 0 ? Math.round(rows / (ms / 1000)) : 0, bytes, fromCache, ...(cacheFile === undefined ? {} : { cacheFile }) };
  };

  if (options.pgUrl !== undefined) {
    await createSchema(openProject, dir, options.pgUrl);
    const bytes = await fillPostgres(options.pgUrl, rows, log);
    return done(options.pgUrl, bytes, false);
  }

  await createSchema(openProject, dir);
  log(`schema made by openProject in ${(performance.now() - started).toFixed(0)} ms`);
  // the cache is keyed by the schema the server makes today too: a change of the server's tables
  // (a new column of a system table, another fold) is a new file
  const { cacheDir } = options;
  const cached = cacheDir === undefined ? undefined : join(cacheDir, `suite-${rows}-${cacheKey(schemaOf(file))}.sqlite`);
  if (cached !== undefined && existsSync(cached)) {
    for (const f of [`${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
    const t = performance.now();
    copyFileSync(cached, file);
    log(`copied ${cached} (${mib(statSync(file).size)}) in ${(performance.now() - t).toFixed(0)} ms`);
    return done(file, statSync(file).size, true, cached);
  }
  try {
    await fillSqlite(file, rows, options.parallel, log);
  } catch (e) {
    // a half-filled database is no data set: gone, so that nobody opens it
    for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
    throw e;
  }
  const generated = done(file, statSync(file).size, false, cached);
  if (cacheDir !== undefined && cached !== undefined) {
    // a copy under a name of its own, renamed at once: another process never sees half a file
    mkdirSync(cacheDir, { recursive: true });
    const partial = `${cached}.${process.pid}.partial`;
    const t = performance.now();
    copyFileSync(file, partial);
    renameSync(partial, cached);
    // the files of the same size made for an older key go (each is as big as this one)
    for (const f of readdirSync(cacheDir)) {
      if (f.startsWith(`suite-${rows}-`) && f.endsWith('.sqlite') && join(cacheDir, f) !== cached) rmSync(join(cacheDir, f), { force: true });
    }
    log(`cached as ${cached} in ${(performance.now() - t).toFixed(0)} ms`);
  }
  return generated;
}

/** What the cache is keyed by: the model, the value functions, the categories, the generator's version and the server's schema. */
function cacheKey(schema: string): string {
  const h = createHash('sha256');
  h.update(JSON.stringify({ MODEL, CATEGORIES, GENERATOR_VERSION, GENERATED_AT, schema }));
  // their source: a change of a value's formula is a new data set
  h.update(itemValues.toString());
  h.update(categoryValues.toString());
  return h.digest('hex').slice(0, 16);
}

/** The schema of a SQLite file as the server made it: its tables and indexes, and what it recorded of them (not when). */
function schemaOf(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    const objects = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all();
    const meta = db.prepare(`SELECT * FROM ${q(META_TABLE)} WHERE "key" <> 'setUp' ORDER BY "key"`).all();
    return JSON.stringify({ objects, meta });
  } finally {
    db.close();
  }
}

/** The schema, by opening the project once (on PostgreSQL: on that database). */
async function createSchema(openProject: typeof import('../../src/project/open.js').openProject, dir: string, pgUrl?: string): Promise<void> {
  const ds = await openProject(dir, { roles: false, ...(pgUrl === undefined ? {} : { db: pgUrl }) });
  await ds.close();
}

// ── The values, fast ──

/** The words of item names, in the order of n % WORDS.length (model.ts keeps them to itself). */
const WORDS = Array.from({ length: 10 }, (_, n) => itemValues(n).name.split('-')[0]);
/** the digits of the number in a name */
const DIGITS = itemValues(0).name.length - WORDS[0].length - 1;
const CREATED_FROM = Date.parse(itemValues(0).created);
const CREATED_STEP = Date.parse(itemValues(1).created) - CREATED_FROM;
const DAY = 86_400_000;
const TWO = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/**
 * Date.toISOString() of times that mostly fall on the same day as the one before: the day's text
 * is made once (by toISOString itself), the time of day from two- and three-digit tables.
 */
class IsoTimes {
  #day = Number.NaN;
  #dayText = '';
  text(t: number): string {
    const day = Math.floor(t / DAY);
    if (day !== this.#day) {
      this.#day = day;
      this.#dayText = new Date(day * DAY).toISOString().slice(0, 11);
    }
    const ms = t - day * DAY;
    return `${this.#dayText}${TWO[Math.floor(ms / 3_600_000)]}:${TWO[Math.floor(ms / 60_000) % 60]}:${TWO[Math.floor(ms / 1000) % 60]}.${THREE[ms % 1000]}Z`;
  }
}

/**
 * The columns of item n after its key, as stored: name, price, qty, created (ISO text), categoryID.
 * itemValues(n)'s formulas; the name is its own fold (lower-case ASCII letters, '-' and digits,
 * each of which folds to itself: checkStored compares with fold() all the same).
 */
function itemColumns(n: number, times: IsoTimes, out: unknown[], at: number): void {
  out[at] = `${WORDS[n % 10]}-${String(n).padStart(DIGITS, '0')}`;
  out[at + 1] = ((n * 7919) % 100_000) / 100;
  out[at + 2] = (n * 31) % 1000;
  out[at + 3] = times.text(CREATED_FROM + n * CREATED_STEP);
  out[at + 4] = ((n * 37) % CATEGORIES) + 1;
}

// ── SQLite ──

/** items a statement: multi-row INSERTs bind this many rows at once */
const PER_STATEMENT = 100;
const CATEGORY_COLUMNS = ['ID', 'name', 'rate', 'name__fold', '__stamp', '__timestamp'];

const q = (id: string): string => `"${id.replaceAll('"', '""')}"`;

/** An INSERT of `rows` categories: ID, name, rate and the fold of the name bound for each. */
function insertCategories(db: Database.Database, rows: number): Database.Statement {
  // __stamp and __timestamp are the same on every row: written as literals
  const row = `(${CATEGORY_COLUMNS.map((c) => (c === '__stamp' ? '1' : c === '__timestamp' ? String(GENERATED_AT) : '?')).join(', ')})`;
  return db.prepare(`INSERT INTO ${q(CATEGORY)} (${CATEGORY_COLUMNS.map(q).join(', ')}) VALUES ${Array<string>(rows).fill(row).join(', ')}`);
}

/** values bound per item: its key and the five columns of itemColumns */
const ITEM_PARAMS = 6;

/**
 * An INSERT of `rows` items, ITEM_PARAMS bound for each: the name is its own fold (itemColumns),
 * so name__fold is the name's value again (bound once: 7 % less CPU than twice).
 */
function insertItemRows(db: Database.Database, table: string, rows: number): Database.Statement {
  return db.prepare(
    `INSERT INTO ${q(table)} ("ID", "name", "price", "qty", "created", "categoryID", "name__fold", "__stamp", "__timestamp") ` +
      `SELECT column1, column2, column3, column4, column5, column6, column2, 1, ${GENERATED_AT} FROM (VALUES ${Array<string>(rows).fill('(?, ?, ?, ?, ?, ?)').join(', ')})`,
  );
}

/** Items [from, to) into `table` of `db`, PER_STATEMENT a statement (the last one with the rest), in the caller's transaction. */
function insertItems(db: Database.Database, from: number, to: number, table: string): void {
  const full = insertItemRows(db, table, PER_STATEMENT);
  const params: unknown[] = new Array<unknown>(PER_STATEMENT * ITEM_PARAMS);
  const times = new IsoTimes();
  let n = from;
  while (n < to) {
    const count = Math.min(PER_STATEMENT, to - n);
    const p = count === PER_STATEMENT ? params : new Array<unknown>(count * ITEM_PARAMS);
    for (let i = 0, at = 0; i < count; i++, n++, at += ITEM_PARAMS) {
      p[at] = n + 1;
      itemColumns(n, times, p, at + 1);
    }
    (count === PER_STATEMENT ? full : insertItemRows(db, table, count)).run(p);
  }
}

/** The pragmas of a file nobody else has yet: no journal (a failed fill removes the file), no fsync. */
function bulkMode(db: Database.Database): void {
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  // SQLite's default page cache (2 MiB): the fill only appends, and CREATE INDEX sorts much
  // faster in runs of that size (a 64 MiB cache doubled the CPU time of the sorts)
  db.pragma('cache_size = -2000');
  // CREATE INDEX sorts its runs, and merges them, on helper threads (SQLite gives it none when
  // temporary files are kept in memory: temp_store stays the default, files): −35 % of the time of
  // the three indexes of 1,000,000 items on two cores
  db.pragma(`threads = ${Math.max(2, availableParallelism())}`);
}

// ── SQLite: the fill shared with a worker thread (fillSqlite) ──
//
// The items left to insert are a range [low, high) in a SharedArrayBuffer: this thread takes
// chunks from its bottom and inserts them straight into the table (in key order, as appends), a
// worker thread takes chunks from its top and inserts each into a table of its own in a file of
// its own; they meet wherever their speeds make them meet (the worker starts a second or so late:
// it loads this module through tsx). The worker's tables are then appended to the table in key
// order by SQLite's transfer (INSERT INTO … SELECT * between tables of one definition copies the
// records as they are, without decoding them).

/** items a claim from the shared range, at most (and a twentieth of them, at least PER_STATEMENT) */
const CHUNK = 50_000;
const chunkOf = (rows: number): number => Math.min(CHUNK, Math.max(PER_STATEMENT, Math.ceil(rows / 20)));

/** What a fill worker is given at its start (workerData). */
interface FillShare {
  readonly role: typeof FILL_WORKER;
  /** a new SQLite file for the worker's tables */
  readonly file: string;
  /** one BigInt64: low × 2³² + high */
  readonly range: SharedArrayBuffer;
  /** items a claim */
  readonly chunk: number;
}
const FILL_WORKER = 'dataset-rest suite generator: fill';

/** What the worker is told once the schema is known: the CREATE TABLE of the items, as sqlite_master has it. */
interface FillStart {
  readonly tableSql: string;
}

/** What the worker answers when the range is used up: its tables ([from, to) each), and when it began and ended (ms since the epoch). */
interface FillDone {
  readonly parts: readonly (readonly [number, number])[];
  readonly began: number;
  readonly ended: number;
}

const epochMs = (): number => performance.timeOrigin + performance.now();
const pack = (low: number, high: number): bigint => (BigInt(low) << 32n) | BigInt(high);

/** A chunk of the shared range, from its bottom or its top, or undefined once it is used up. */
function claim(range: BigInt64Array, side: 'low' | 'high', chunk: number): [number, number] | undefined {
  for (;;) {
    const v = Atomics.load(range, 0);
    const low = Number(v >> 32n);
    const high = Number(v & 0xffff_ffffn);
    if (low >= high) return undefined;
    const [from, to] = side === 'low' ? [low, Math.min(high, low + chunk)] : [Math.max(low, high - chunk), high];
    if (Atomics.compareExchange(range, 0, v, side === 'low' ? pack(to, high) : pack(low, from)) === v) return [from, to];
  }
}

/** The name of the worker's table of the items from `from` on. */
const partTable = (from: number): string => `part_${from}`;

/** A worker thread running this module (loaded there through tsx), told to fill. */
function startFillWorker(share: FillShare): { start(message: FillStart): void; began: Promise<void>; done: Promise<FillDone>; stop(): Promise<void> } {
  const api = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(api)}).then(({ tsImport }) => tsImport(${JSON.stringify(import.meta.url)}, ${JSON.stringify(import.meta.url)}))`;
  const worker = new Worker(code, { eval: true, workerData: share });
  let began!: () => void;
  const beganPromise = new Promise<void>((resolve) => (began = resolve));
  const done = new Promise<FillDone>((resolve, reject) => {
    worker.on('message', (m: FillDone | 'began') => (m === 'began' ? began() : resolve(m)));
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`the fill worker stopped (exit code ${code}) before it was done`)));
  });
  // (a worker stopped because the fill failed here: its end is no second error)
  done.catch(() => {});
  return {
    start: (message) => worker.postMessage(message),
    // (or failed: the fill then learns it from done)
    began: Promise.race([beganPromise, done.then(() => {}, () => {})]),
    done,
    stop: async () => void (await worker.terminate()),
  };
}

/** The worker's side: chunks from the top of the range, each into a table of its own; `claimed` once it holds its first (or finds none). */
function fillShare(share: FillShare, start: FillStart, claimed: () => void): FillDone {
  const began = epochMs();
  const range = new BigInt64Array(share.range);
  const parts: [number, number][] = [];
  let db: Database.Database | undefined;
  try {
    let chunk = claim(range, 'high', share.chunk);
    claimed();
    for (; chunk !== undefined; chunk = claim(range, 'high', share.chunk)) {
      if (db === undefined) {
        rmSync(share.file, { force: true });
        db = new Database(share.file);
        bulkMode(db);
        db.exec('BEGIN');
      }
      const [from, to] = chunk;
      // the same definition under another name (the transfer needs the same columns, types and constraints)
      db.exec(start.tableSql.replace(/^CREATE TABLE "(?:[^"]|"")+"/, `CREATE TABLE ${q(partTable(from))}`));
      insertItems(db, from, to, partTable(from));
      parts.push([from, to]);
    }
    db?.exec('COMMIT');
  } finally {
    db?.close();
  }
  return { parts: parts.reverse(), began, ended: epochMs() };
}

if (!isMainThread && (workerData as Partial<FillShare> | null)?.role === FILL_WORKER) {
  parentPort?.once('message', (start: FillStart) => {
    // 'began' once the worker holds a chunk: a fill told to share (parallel: true) waits for it, so
    // the worker takes part even when this thread could insert every item before it got going
    parentPort?.postMessage(fillShare(workerData as FillShare, start, () => parentPort?.postMessage('began')));
  });
}

/** the fewest items for which a worker thread shares the fill (below, starting it costs more than it saves) */
const PARALLEL_FROM = 200_000;

async function fillSqlite(file: string, rows: number, parallel: boolean | undefined, log: (line: string) => void): Promise<void> {
  const t0 = performance.now();
  const startedAt = epochMs();
  const since = (t: number): string => `${((performance.now() - t) / 1000).toFixed(1)} s`;
  const partFile = `${file}.part`;
  const range = new BigInt64Array(new SharedArrayBuffer(8));
  range[0] = pack(0, rows);
  const share = (parallel ?? (rows >= PARALLEL_FROM && availableParallelism() >= 2)) && rows > 0;
  let worker = share ? startFillWorker({ role: FILL_WORKER, file: partFile, range: range.buffer as SharedArrayBuffer, chunk: chunkOf(rows) }) : undefined;
  const db = new Database(file);
  try {
    const indexes = db
      .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (?, ?) ORDER BY rowid`)
      .all(ITEM, CATEGORY) as { name: string; sql: string }[];
    worker?.start({ tableSql: (db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`).get(ITEM) as { sql: string }).sql });

    bulkMode(db);
    db.exec('BEGIN');
    for (const ix of indexes) db.exec(`DROP INDEX ${q(ix.name)}`);
    const categoryRows: unknown[] = [];
    for (let n = 0; n < CATEGORIES; n++) {
      const c = categoryValues(n);
      categoryRows.push(n + 1, c.name, c.rate, fold(c.name));
    }
    insertCategories(db, CATEGORIES).run(categoryRows);
    // parallel: true shares the fill whatever the size: this thread waits for the worker to begin
    if (parallel === true) await worker?.began;
    let here = 0;
    let nextLog = 1_000_000;
    for (let chunk = claim(range, 'low', chunkOf(rows)); chunk !== undefined; chunk = claim(range, 'low', chunkOf(rows))) {
      insertItems(db, chunk[0], chunk[1], ITEM);
      here = chunk[1];
      const high = Number(Atomics.load(range, 0) & 0xffff_ffffn);
      if (here + rows - high >= nextLog) {
        log(`${(here + rows - high).toLocaleString('en-US')} items in ${since(t0)}${share ? ` (${(rows - high).toLocaleString('en-US')} on the worker)` : ''}`);
        nextLog += 1_000_000;
      }
    }
    db.exec('COMMIT');
    if (worker !== undefined && here === rows) {
      // the worker took nothing (it had not started yet)
      log(`every item inserted here, the worker took none`);
      await worker.stop();
      worker = undefined;
    }
    if (worker !== undefined) {
      const waitFrom = epochMs();
      const { parts, began, ended } = await worker.done;
      worker = undefined;
      const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
      log(
        `items 1 to ${here.toLocaleString('en-US')} inserted here, the others (${parts.length} tables) on the worker, which began ${s(began - startedAt)} after this ` +
          `and ended ${s(ended - began)} later (waited ${s(Math.max(0, ended - waitFrom))} for it); appending them`,
      );
      const t1 = performance.now();
      db.prepare('ATTACH ? AS part').run(partFile);
      db.exec('BEGIN');
      for (const [from] of parts) db.exec(`INSERT INTO main.${q(ITEM)} SELECT * FROM part.${q(partTable(from))}`);
      db.exec('COMMIT');
      db.exec('DETACH part');
      log(`appended in ${since(t1)}`);
    }
    const t2 = performance.now();
    log(`${rows.toLocaleString('en-US')} items inserted in ${since(t0)}; indexes`);
    db.exec('BEGIN');
    for (const ix of indexes) db.exec(ix.sql);
    // one bump of the global stamp a save (the sequence of each table moved with its keys)
    db.prepare(`UPDATE ${q(GLOBAL_STAMP_TABLE)} SET "value" = "value" + ? WHERE "id" = 1`).run(CATEGORIES + rows);
    db.exec('COMMIT');
    log(`indexes made in ${since(t2)}`);
    const t3 = performance.now();
    db.exec('ANALYZE');
    log(`analyzed in ${since(t3)}`);
    checkStored(db, rows);
    // the server's journal mode; the WAL is empty (the fill did not use it): the file is complete
    db.pragma('journal_mode = WAL');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    await worker?.stop();
    db.close();
    rmSync(partFile, { force: true });
  }
}

// ── The check ──

/** The items compared after a fill: the first and last hundred, and a thousand spread between. */
function sampleItems(rows: number): number[] {
  const out = new Set<number>();
  for (let n = 0; n < Math.min(rows, 100); n++) out.add(n).add(rows - 1 - n);
  for (let i = 0; i < 1000 && rows > 0; i++) out.add(Math.floor((i * rows) / 1000));
  return [...out].sort((a, b) => a - b);
}

interface StoredRow {
  ID: number;
  name: string;
  price: number;
  qty: number;
  created: unknown;
  categoryID: number;
  name__fold: string;
  __stamp: number;
  __timestamp: number;
}

/** Compares a stored item with itemValues(n), fold() and the hidden columns; throws at the first difference. */
function compareItem(n: number, row: StoredRow | undefined, created: (stored: unknown) => string): void {
  const v = itemValues(n);
  const expected = { ID: n + 1, name: v.name, price: v.price, qty: v.qty, created: v.created, categoryID: v.categoryID, name__fold: fold(v.name), __stamp: 1, __timestamp: GENERATED_AT };
  const got = row === undefined ? undefined : { ...row, created: created(row.created) };
  for (const [k, want] of Object.entries(expected)) {
    if (got?.[k as keyof StoredRow] !== want) {
      throw new Error(`the generator's item ${n + 1} is not itemValues(${n}) (bench/suite/model.ts changed? update itemColumns in bench/suite/generate.ts): ${k} is ${JSON.stringify(got?.[k as keyof StoredRow])}, not ${JSON.stringify(want)}`);
    }
  }
}

function compareCategory(n: number, row: { name: string; rate: number; name__fold: string; __stamp: number; __timestamp: number } | undefined): void {
  const c = categoryValues(n);
  if (row?.name !== c.name || row.rate !== c.rate || row.name__fold !== fold(c.name) || Number(row.__stamp) !== 1 || Number(row.__timestamp) !== GENERATED_AT) {
    throw new Error(`the generator's category ${n + 1} is not categoryValues(${n}): ${JSON.stringify(row)}`);
  }
}

function checkStored(db: Database.Database, rows: number): void {
  const item = db.prepare(`SELECT * FROM ${q(ITEM)} WHERE "ID" = ?`);
  for (const n of sampleItems(rows)) compareItem(n, item.get(n + 1) as StoredRow | undefined, String);
  const categories = db.prepare(`SELECT * FROM ${q(CATEGORY)} ORDER BY "ID"`).all() as Parameters<typeof compareCategory>[1][];
  for (let n = 0; n < CATEGORIES; n++) compareCategory(n, categories[n]);
  const counts = db.prepare(`SELECT (SELECT count(*) FROM ${q(ITEM)}) AS items, (SELECT count(*) FROM ${q(CATEGORY)}) AS categories`).get() as { items: number; categories: number };
  if (counts.items !== rows || counts.categories !== CATEGORIES) throw new Error(`the generator stored ${counts.items} items and ${counts.categories} categories`);
  const seq = new Map((db.prepare('SELECT name, seq FROM sqlite_sequence').all() as { name: string; seq: number }[]).map((r) => [r.name, r.seq]));
  if ((seq.get(ITEM) ?? 0) !== rows || seq.get(CATEGORY) !== CATEGORIES) throw new Error(`sqlite_sequence is ${JSON.stringify([...seq])}`);
  const stamp = (db.prepare(`SELECT "value" AS v FROM ${q(GLOBAL_STAMP_TABLE)} WHERE "id" = 1`).get() as { v: number } | undefined)?.v;
  if (stamp !== CATEGORIES + rows) throw new Error(`the global stamp is ${stamp}, not ${CATEGORIES + rows}`);
}

// ── PostgreSQL ──

/** items a statement (INSERT … SELECT FROM generate_series) */
const BATCH = 1_000_000;

async function fillPostgres(url: string, rows: number, log: (line: string) => void): Promise<number> {
  const { connect, relationBytes } = await import('../postgres.js');
  const c = await connect(url);
  try {
    const t0 = performance.now();
    const since = (t: number): string => `${((performance.now() - t) / 1000).toFixed(1)} s`;
    const { rows: indexes } = await c.query<{ name: string; sql: string }>(
      `SELECT i.indexname AS name, i.indexdef AS sql FROM pg_indexes i
       WHERE i.schemaname = current_schema() AND i.tablename = ANY($1)
         AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conname = i.indexname AND k.connamespace = (SELECT oid FROM pg_namespace WHERE nspname = i.schemaname))`,
      [[ITEM, CATEGORY]],
    );
    await c.query('BEGIN');
    for (const ix of indexes) await c.query(`DROP INDEX ${q(ix.name)}`);
    const categoryCols: unknown[][] = [[], [], [], []];
    for (let n = 0; n < CATEGORIES; n++) {
      const v = categoryValues(n);
      categoryCols[0].push(n + 1);
      categoryCols[1].push(v.name);
      categoryCols[2].push(v.rate);
      categoryCols[3].push(fold(v.name));
    }
    await c.query(
      `INSERT INTO ${q(CATEGORY)} ("ID", "name", "rate", "name__fold", "__stamp", "__timestamp") SELECT *, 1, ${GENERATED_AT} FROM unnest($1::integer[], $2::text[], $3::float8[], $4::text[])`,
      categoryCols,
    );
    // The items made by the server itself from their number (generate_series): itemColumns' formulas
    // in SQL, in exact arithmetic (the price divided as float8, as JavaScript divides; the time
    // from milliseconds, exact to the microsecond), checked by checkPostgres like the rest.
    const sql =
      `INSERT INTO ${q(ITEM)} ("ID", "name", "price", "qty", "created", "categoryID", "name__fold", "__stamp", "__timestamp") ` +
      `SELECT n + 1, nm, ((n * 7919) % 100000)::float8 / 100, (n * 31) % 1000, 'epoch'::timestamptz + ($4::bigint + n * $5::bigint) * interval '1 millisecond', ` +
      `(n * 37) % $6::bigint + 1, nm, 1, ${GENERATED_AT} ` +
      `FROM (SELECT n, ($3::text[])[n % ${WORDS.length} + 1] || '-' || lpad(n::text, ${DIGITS}, '0') AS nm FROM generate_series($1::bigint, $2::bigint) AS n) AS s`;
    for (let from = 0; from < rows; from += BATCH) {
      const to = Math.min(rows, from + BATCH);
      await c.query(sql, [from, to - 1, WORDS, CREATED_FROM, CREATED_STEP, CATEGORIES]);
      if (rows >= 2_000_000) log(`${to.toLocaleString('en-US')} items in ${since(t0)}`);
    }
    const t1 = performance.now();
    log(`${rows.toLocaleString('en-US')} items inserted in ${since(t0)}; indexes`);
    for (const ix of indexes) await c.query(ix.sql);
    log(`indexes made in ${since(t1)}`);
    // the identities where CATEGORIES and `rows` inserts leave them, and one global stamp a save
    await setSequence(c, `pg_get_serial_sequence('${q(CATEGORY)}', 'ID')`, CATEGORIES);
    await setSequence(c, `pg_get_serial_sequence('${q(ITEM)}', 'ID')`, rows);
    await c.query(`SELECT setval('${q(GLOBAL_STAMP_TABLE)}', (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM ${q(GLOBAL_STAMP_TABLE)}) + $1::bigint)`, [CATEGORIES + rows]);
    await c.query('COMMIT');
    const t2 = performance.now();
    // the planner's statistics and the visibility map (index-only scans), as autovacuum would leave them
    await c.query(`VACUUM ANALYZE ${q(CATEGORY)}, ${q(ITEM)}`);
    log(`committed and vacuumed in ${since(t2)}`);
    await checkPostgres(c, rows);
    return (await relationBytes(c, ITEM)) + (await relationBytes(c, CATEGORY));
  } catch (e) {
    await c.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    await c.end();
  }
}

/** A sequence as `count` nextval() calls leave it (none: as new, is_called false). */
async function setSequence(c: pg.Client, sequence: string, count: number): Promise<void> {
  await c.query(`SELECT setval(${sequence}, $1::bigint, $2::boolean)`, [Math.max(count, 1), count > 0]);
}

async function checkPostgres(c: pg.Client, rows: number): Promise<void> {
  const sample = sampleItems(rows);
  const { rows: items } = await c.query<StoredRow>(`SELECT * FROM ${q(ITEM)} WHERE "ID" = ANY($1::integer[]) ORDER BY "ID"`, [sample.map((n) => n + 1)]);
  const byKey = new Map(items.map((r) => [Number(r.ID), r]));
  for (const n of sample) compareItem(n, byKey.get(n + 1), (d) => (d instanceof Date ? d.toISOString() : String(d)));
  const { rows: categories } = await c.query(`SELECT * FROM ${q(CATEGORY)} ORDER BY "ID"`);
  for (let n = 0; n < CATEGORIES; n++) compareCategory(n, categories[n] as Parameters<typeof compareCategory>[1]);
  const { rows: [counts] } = await c.query<{ items: number; categories: number }>(`SELECT (SELECT count(*) FROM ${q(ITEM)}) AS items, (SELECT count(*) FROM ${q(CATEGORY)}) AS categories`);
  if (counts.items !== rows || counts.categories !== CATEGORIES) throw new Error(`the generator stored ${counts.items} items and ${counts.categories} categories`);
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(0)} MiB`;
}
