// The bulk insert of an import (`dataset-rest import` without events): many new entities of one
// dataclass written by multi-row INSERTs (sql/bulk-insert.ts) instead of one save each, leaving
// rows no different from those a save makes. Each row is converted and checked as a save of a new
// entity checks it, by the same rules (model/save-rules.ts) — the value of each attribute for its
// type (coerceValue), the key (given, a new uuid, or the engine's autoincrement; else refused),
// notNull attributes, encodable values — before any statement, so a bad row is refused alone.
// Then, in the caller's transaction: the relations' targets looked up (one query per target per
// batch, as a WriteBatch does), the rows inserted with stamp 1, the save time, the folded form
// of every string (text search and sorts), and the global stamp moved once (stored in each row's
// __GlobalStamp where the dataclass tracks its changes: tracking.ts). A batch whose
// statement the engine refuses (a unique value taken) is undone and written again with a
// savepoint per statement, the rows of the refused statement one by one, so that only the rows
// at fault are refused. No user code runs here: neither events nor an entity class's constructor
// (the command goes through save() when they must run). Files (image, blob) are not imported:
// they hold stored files, not values.

import { DatasetError, isDatasetError } from '../../errors/dataset-error.js';
import type { DataClassModel, StorageAttribute } from '../../model/types.js';
import { givenKey, isRequired, keyOfNewEntity, requireValue } from '../../model/save-rules.js';
import { coerceValue } from '../../model/values.js';
import { bulkRowWidth, compileBulkInsert, compileKeyCounterCatchUp } from '../../sql/bulk-insert.js';
import { isoDate, type Dialect } from '../../sql/dialect.js';
import { ALL_DIALECTS } from '../../sql/dialects.js';
import { ConstraintError } from '../../storage/adapter.js';
import { bumpGlobalStamp } from '../../storage/system-tables/global-stamp.js';
import { fold, FOLD_PREFIX_LENGTH, storedFold } from '../../util/fold.js';
import type { Access } from '../access/access.js';
import type { DataClassCore } from '../dataclass-core.js';
import { requireDataClass } from '../access/guard.js';
import { checkValues, knownTargets, relationsOf } from './rules.js';
import { trackedStamp } from './tracking.js';

/** Bound values one statement takes at most: under SQLite's 32,766 and PostgreSQL's 65,535. */
const MAX_PARAMS = 30_000;
/** Rows one statement inserts at most (past a few hundred, longer statements gain nothing). */
const MAX_ROWS_PER_STATEMENT = 200;

/**
 * Rows checked and converted, in flat arrays (no object per row: an import makes hundreds of
 * thousands of them, and a batch crosses from the worker thread that prepares it as it is).
 */
export interface PreparedRows {
  /** each row's key, bound (undefined: the engine gives one) */
  readonly keys: unknown[];
  /** each row's other bound values (and folds), `width` a row, in the inserter's order */
  readonly values: unknown[];
  readonly width: number;
  /** each row's foreign keys (converted, null: none), one per foreign key given, in the preparer's order; empty when none is given */
  readonly foreignKeys: unknown[];
}

/**
 * Checks and converts the rows of an import for one dataclass and a fixed list of attributes (the
 * columns of the file), as a save of a new entity would: needs only the model and the dialect, so
 * that it can run in the thread that parses the file.
 */
export class RowPreparer {
  readonly #model: DataClassModel;
  readonly #dialect: Dialect;
  /** the attributes given, in the order of the values prepare() takes */
  readonly #given: readonly StorageAttribute[];
  /** position of the key in the values given to prepare(), or -1 */
  readonly #keyAt: number;
  /** the attributes a save requires a value for (model/save-rules.ts) and where prepare() finds them (-1: not given, so always null) */
  readonly #required: readonly (readonly [StorageAttribute, number])[];
  /** where the foreign keys given are among the values (in the order of relationsOf) */
  readonly #foreignKeyAt: readonly number[];
  /** per attribute given, the cells of texts met lately */
  readonly #memos: readonly Memo[];
  /** the cells of the row being prepared (one array for every row: prepare() copies them out) */
  readonly #cells: Cell[];
  /** the longest text a string takes (--max-text-length) */
  readonly #maxTextLength: number;
  /** bound values a row takes, the key apart */
  readonly width: number;

  constructor(model: DataClassModel, attrs: readonly StorageAttribute[], dialect: Dialect, maxTextLength: number) {
    this.#model = model;
    this.#maxTextLength = maxTextLength;
    this.#dialect = dialect;
    const key = model.key;
    for (const a of attrs) {
      if (a.dataClass !== model) throw new Error(`${a.dataClass.name}.${a.name} is not an attribute of ${model.name}`);
      if (a.type === 'image' || a.type === 'blob') throw new DatasetError('INVALID_VALUE', `${model.name}.${a.name} is ${a.type === 'image' ? 'a picture' : 'a blob'}: an import holds values, not files`, [], { attributeName: a.name });
    }
    this.#keyAt = attrs.indexOf(key);
    this.#given = attrs;
    this.#memos = attrs.map((a) => new Memo(a, dialect, maxTextLength));
    this.#cells = new Array<Cell>(attrs.length).fill(NULL_CELL);
    this.#required = model.storage.filter(isRequired).map((a) => [a, attrs.indexOf(a)] as const);
    this.#foreignKeyAt = foreignKeysGiven(model, attrs).map((fk) => attrs.indexOf(fk));
    this.width = bulkRowWidth(attrs.filter((a) => a !== key)) - 2;
  }

  /** An empty batch of rows for prepare() to fill. */
  rows(): PreparedRows {
    return { keys: [], values: [], width: this.width, foreignKeys: [] };
  }

  /**
   * Adds one row's values (in the order of the attributes given; null or undefined: none) to
   * `rows`, converted and checked as a save of a new entity would; throws the DatasetError that
   * save would throw, `rows` then unchanged.
   */
  prepare(given: readonly unknown[], rows: PreparedRows): void {
    const dc = this.#model;
    const dialect = this.#dialect;
    const keyAttr = dc.key;
    let key: unknown = null;
    if (this.#keyAt >= 0) {
      const raw = given[this.#keyAt];
      // (the key converted and checked as a save assigns it, then given one as a save gives it)
      if (raw !== null && raw !== undefined) key = givenKey(keyAttr, coerceValue(keyAttr, raw, this.#maxTextLength));
    }
    if (key === null) key = keyOfNewEntity(keyAttr) ?? null;
    const cells = this.#cells;
    for (let i = 0; i < given.length; i++) {
      if (i === this.#keyAt) continue;
      const raw = given[i];
      cells[i] = raw === undefined || raw === null ? NULL_CELL : typeof raw === 'string' ? this.#memos[i].cell(raw) : cellOf(this.#given[i], dialect, raw, this.#maxTextLength);
    }
    for (const [attr, at] of this.#required) requireValue(attr, at < 0 ? null : cells[at].value);
    // (nothing can throw past here: the row goes in whole)
    const values = rows.values;
    for (let i = 0; i < given.length; i++) {
      if (i === this.#keyAt) continue;
      const cell = cells[i];
      values.push(cell.bound);
      if (this.#given[i].type === 'string') values.push(cell.folded);
    }
    for (const at of this.#foreignKeyAt) rows.foreignKeys.push(at === this.#keyAt ? key : cells[at].value);
    rows.keys.push(key === null ? undefined : dialect.types.encode(keyAttr.type, key, false));
  }
}

/** The foreign keys among `attrs`, in the order of the dataclass's relations. */
function foreignKeysGiven(model: DataClassModel, attrs: readonly StorageAttribute[]): StorageAttribute[] {
  const out: StorageAttribute[] = [];
  for (const a of model.attributes) if (a.kind === 'relatedEntity' && attrs.includes(a.foreignKey) && !out.includes(a.foreignKey)) out.push(a.foreignKey);
  return out;
}

/** Inserts rows of one dataclass with a fixed list of attributes (the columns of the file), prepared by a RowPreparer for the same attributes. */
export class BulkInserter {
  readonly #dc: DataClassCore;
  readonly #access: Access;
  /** the attributes but the key, in the order of PreparedRows.values */
  readonly #others: readonly StorageAttribute[];
  /** the foreign keys given, in the order of PreparedRows.foreignKeys */
  readonly #foreignKeys: readonly StorageAttribute[];
  /** a relation of the dataclass to itself is among them: a row may name one inserted just before it */
  readonly #selfRelation: boolean;
  /** the columns a statement writes but the key: #others, and a tracked dataclass's __GlobalStamp */
  readonly #written: readonly StorageAttribute[];
  /** the stamp the rows of this pass store, for a dataclass that tracks its changes */
  #globalStamp: number | undefined;
  /** SQL texts by (key given, rows), built once */
  readonly #sql = new Map<string, string>();
  /** prepares rows for this inserter, in this thread */
  readonly preparer: RowPreparer;

  constructor(dc: DataClassCore, attrs: readonly StorageAttribute[], access: Access) {
    requireDataClass(access, dc.model, 'create');
    this.#dc = dc;
    this.#access = access;
    this.preparer = new RowPreparer(dc.model, attrs, dc.core.storage.dialect, dc.core.maxTextLength);
    this.#others = attrs.filter((a) => a !== dc.model.key);
    const tracked = dc.model.globalStamp;
    this.#written = tracked ? [...this.#others, tracked] : this.#others;
    this.#foreignKeys = foreignKeysGiven(dc.model, attrs);
    this.#selfRelation = relationsOf(dc).some((r) => r.target === dc.model && attrs.includes(r.foreignKey));
  }

  /**
   * Inserts prepared rows in the caller's transaction (one of their own if none is open), the global
   * stamp moved once: resolves to each row's refusal (undefined: inserted). The batch is written
   * first without a savepoint per statement; if the engine refuses a statement, that pass is undone
   * and the batch written again guarded: each statement in a savepoint, and the rows of one that
   * fails one by one, so that only the rows at fault are refused.
   */
  async insert(rows: PreparedRows): Promise<(DatasetError | undefined)[]> {
    try {
      return await this.#pass(rows, false);
    } catch (e) {
      if (!(e instanceof StatementRefused)) throw e;
    }
    return this.#pass(rows, true);
  }

  /** One pass over the batch, in a transaction (a savepoint inside the caller's). */
  #pass(rows: PreparedRows, guarded: boolean): Promise<(DatasetError | undefined)[]> {
    const storage = this.#dc.core.storage;
    const count = rows.keys.length;
    const refused = new Array<DatasetError | undefined>(count);
    const relations = this.#relations(rows);
    return storage.transaction(async () => {
      // a dataclass that tracks its changes: the pass's rows store the stamp it moves to (tracking.ts)
      this.#globalStamp = this.#dc.model.globalStamp ? await trackedStamp(this.#dc.core, this.#dc.model, undefined) : undefined;
      const known = this.#foreignKeys.length > 0 && !this.#selfRelation
        ? await knownTargets(this.#dc, Array.from(relations, (r) => r ?? EMPTY), this.#access)
        : undefined;
      // (the time of the batch's rows, taken once the writer is ours, as a save takes it)
      const timestamp = Date.now();
      const perStatement = this.#selfRelation ? 1 : Math.max(1, Math.min(MAX_ROWS_PER_STATEMENT, Math.floor(MAX_PARAMS / bulkRowWidth([this.#dc.model.key, ...this.#written]))));
      let pending: number[] = [];
      let inserted = 0;
      let keysGiven = false;
      const flush = async () => {
        if (pending.length === 0) return;
        inserted += await this.#write(rows, pending, timestamp, refused, guarded);
        pending = [];
      };
      const keys = rows.keys;
      for (let i = 0; i < count; i++) {
        const rowRelations = relations[i];
        // a statement holds rows of one shape (key given or not) and at most perStatement of them;
        // flushed before the next row's checks, so that a row may name one written just before it
        if (pending.length > 0 && ((keys[pending[0]] === undefined) !== (keys[i] === undefined) || pending.length >= perStatement)) await flush();
        if (rowRelations) {
          try {
            await checkValues(this.#dc, rowRelations, this.#access, known, true);
          } catch (e) {
            if (!isDatasetError(e)) throw e;
            refused[i] = e;
            continue;
          }
        }
        pending.push(i);
        keysGiven ||= keys[i] !== undefined;
      }
      await flush();
      if (inserted > 0 && this.#globalStamp === undefined) await bumpGlobalStamp(storage);
      const catchUp = keysGiven && inserted > 0 ? compileKeyCounterCatchUp(storage.dialect, this.#dc.model) : null;
      if (catchUp) await storage.get(catchUp.sql, catchUp.params);
      return refused;
    });
  }

  /**
   * One statement for the rows at `which`: unguarded, a refusal ends the pass (StatementRefused);
   * guarded, in a savepoint, and if the engine refuses it, each row alone. Resolves to the rows inserted.
   */
  async #write(rows: PreparedRows, which: readonly number[], timestamp: number, refused: (DatasetError | undefined)[], guarded: boolean): Promise<number> {
    const storage = this.#dc.core.storage;
    const sql = this.#statement(rows.keys[which[0]] !== undefined, which.length);
    const params = this.#params(rows, which, timestamp);
    if (!guarded) {
      try {
        await storage.run(sql, params);
        return which.length;
      } catch (e) {
        throw new StatementRefused(e);
      }
    }
    try {
      // (a savepoint: on PostgreSQL a failed statement would end the whole transaction)
      await storage.transaction(() => storage.run(sql, params));
      return which.length;
    } catch (e) {
      if (which.length === 1) {
        refused[which[0]] = this.#refusal(e);
        return 0;
      }
    }
    let inserted = 0;
    for (const i of which) inserted += await this.#write(rows, [i], timestamp, refused, true);
    return inserted;
  }

  #statement(withKey: boolean, count: number): string {
    const id = `${withKey ? 'k' : 'n'}${count}`;
    let sql = this.#sql.get(id);
    if (sql === undefined) {
      const attrs = withKey ? [this.#dc.model.key, ...this.#written] : this.#written;
      this.#sql.set(id, (sql = compileBulkInsert(this.#dc.core.storage.dialect, this.#dc.model, attrs, count)));
    }
    return sql;
  }

  #params(rows: PreparedRows, which: readonly number[], timestamp: number): unknown[] {
    const { keys, values, width } = rows;
    const params: unknown[] = [];
    for (const i of which) {
      const key = keys[i];
      if (key !== undefined) params.push(key);
      for (let at = i * width, end = at + width; at < end; at++) params.push(values[at]);
      if (this.#globalStamp !== undefined) params.push(this.#globalStamp);
      params.push(1, timestamp);
    }
    return params;
  }

  /** Each row's foreign keys given (not null), as the relation checks take them; undefined for a row that names none. */
  #relations(rows: PreparedRows): (Map<StorageAttribute, unknown> | undefined)[] {
    const n = this.#foreignKeys.length;
    const out = new Array<Map<StorageAttribute, unknown> | undefined>(rows.keys.length);
    if (n === 0) return out;
    for (let i = 0; i < rows.keys.length; i++) {
      for (let j = 0; j < n; j++) {
        const v = rows.foreignKeys[i * n + j];
        if (v !== null && v !== undefined) (out[i] ??= new Map()).set(this.#foreignKeys[j], v);
      }
    }
    return out;
  }

  /** The engine's refusal of one row, as a save would report it: a unique value taken names its attribute. */
  #refusal(e: unknown): DatasetError {
    const dc = this.#dc.model;
    if (e instanceof ConstraintError && e.constraint === 'unique') {
      const attr = dc.storage.find((a) => a.column === e.column);
      return new DatasetError('VALUE_NOT_UNIQUE', `another ${dc.name} entity already has this value for '${attr?.name ?? e.column}'`, [], attr ? { attributeName: attr.name } : {});
    }
    if (isDatasetError(e)) return e;
    throw e;
  }
}

const EMPTY: ReadonlyMap<StorageAttribute, unknown> = new Map();

/** The engine refused a statement of an unguarded pass: the pass is undone, and the batch written again guarded. */
class StatementRefused extends Error {
  constructor(cause: unknown) {
    super('a statement of the batch was refused', { cause });
  }
}

/** A value given for an attribute: as converted (what notNull and relations look at), as bound, and its fold (strings). */
interface Cell {
  readonly value: unknown;
  readonly bound: unknown;
  readonly folded: unknown;
}

const NULL_CELL: Cell = { value: null, bound: null, folded: null };

/** The cell of a value (not null) for `attr`: converted and checked by the core's coerceValue, encoded by the dialect; throws as a save would. */
function cellOf(attr: StorageAttribute, dialect: Dialect, raw: unknown, maxTextLength: number): Cell {
  if (attr.type === 'date' && typeof raw === 'string' && DATES_STORED_AS_ISO_TEXT) {
    // (its value is its text: notNull looks at it, and a date is never a foreign key)
    const text = storedDateText(raw, attr.dateOnly);
    if (text !== undefined) return { value: text, bound: text, folded: null };
  }
  const value = coerceValue(attr, raw, maxTextLength);
  return { value, bound: dialect.types.encode(attr.type, value, attr.dateOnly), folded: attr.type === 'string' ? foldOf(value as string) : null };
}

/**
 * The cells of the texts a column gave lately (the same conversion of the same text gives the
 * same cell: cities, categories, flags and dates repeat down a file). A column whose texts seldom
 * repeat stops being remembered after a few thousand rows; a full memo starts over.
 */
class Memo {
  #cells: Map<string, Cell> | undefined = new Map();
  #asked = 0;
  #found = 0;

  constructor(readonly attr: StorageAttribute, readonly dialect: Dialect, readonly maxTextLength: number) {}

  cell(raw: string): Cell {
    const cells = this.#cells;
    if (!cells) return cellOf(this.attr, this.dialect, raw, this.maxTextLength);
    this.#asked++;
    let cell = cells.get(raw);
    if (cell) {
      this.#found++;
      return cell;
    }
    cell = cellOf(this.attr, this.dialect, raw, this.maxTextLength);
    if (cells.size >= MEMO_SIZE) cells.clear();
    cells.set(raw, cell);
    if (this.#asked === MEMO_TRIAL && this.#found < MEMO_TRIAL / 4) this.#cells = undefined;
    return cell;
  }
}

/** Texts a memo holds at most, and the rows after which one that found less than a quarter of them is dropped. */
const MEMO_SIZE = 1024;
const MEMO_TRIAL = 4096;

/** Every ASCII character, and whether fold() gives each its lower case (it folds each character alone: then so does any ASCII text). */
const ASCII_CHARACTERS = String.fromCharCode(...Array.from({ length: 128 }, (_, i) => i));
const ASCII_FOLDS_LOWER = fold(ASCII_CHARACTERS) === ASCII_CHARACTERS.toLowerCase();
const ASCII = /^\p{ASCII}*$/u;

/** storedFold(), skipping its Unicode decomposition for ASCII text, where it is the lower case (checked above, once). */
function foldOf(text: string): string {
  return ASCII_FOLDS_LOWER && ASCII.test(text) ? text.slice(0, FOLD_PREFIX_LENGTH).toLowerCase() : storedFold(text);
}

/** Every dialect stores a date as isoDate() makes its text (checked once): what storedDateText() gives. */
const DATES_STORED_AS_ISO_TEXT = ALL_DIALECTS.every((d) => [false, true].every((dateOnly) => {
  const sample = new Date(Date.UTC(2024, 1, 29, 10, 20, 30, 40));
  return d.types.encode('date', sample, dateOnly) === isoDate(sample, dateOnly);
}));

const ISO_DAY = /^(\d{4})-(\d\d)-(\d\d)$/;
const ISO_INSTANT = /^(\d{4})-(\d\d)-(\d\d)T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/**
 * The stored text of a date given in the shape isoDate() stores (a day, or an instant in UTC with
 * milliseconds: what an export writes), without making a Date; undefined for any other text, left
 * to the core's coerceValue (which gives the same text for these: test/cli/import.test.ts checks).
 */
export function storedDateText(text: string, dateOnly: boolean): string | undefined {
  if (text.length === 10) {
    const m = ISO_DAY.exec(text);
    if (!m || !realDay(+m[1], +m[2], +m[3])) return undefined;
    return dateOnly ? text : `${text}T00:00:00.000Z`;
  }
  if (text.length === 24) {
    const m = ISO_INSTANT.exec(text);
    if (!m || !realDay(+m[1], +m[2], +m[3])) return undefined;
    return dateOnly ? text.slice(0, 10) : text;
  }
  return undefined;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Is it a day of the (proleptic Gregorian) calendar? */
function realDay(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= DAYS_IN_MONTH[month - 1] + (leap ? 1 : 0);
}
