// The bulk insert of an import (`dataset-rest import` without events): many new entities of one
// dataclass written by multi-row INSERTs (sql/bulk-insert.ts) instead of one save each, leaving
// rows no different from those a save makes. Each row is converted and checked as a save of a new
// entity checks it — the value of each attribute for its type (coerceValue), the key (given, a
// new uuid, or the engine's autoincrement; else refused), notNull attributes, encodable values —
// before any statement, so a bad row is refused alone. Then, in the caller's transaction: the
// relations' targets looked up (one query per target per batch, as a WriteBatch does), the rows
// inserted with stamp 1, the save time, the folded form of every string (text search and sorts),
// and the global stamp moved once. A batch whose statement the engine refuses (a unique value
// taken) is undone and written again with a savepoint per statement, the rows of the refused
// statement one by one, so that only the rows at fault are refused. No user code
// runs here: neither events nor an entity class's constructor (the command goes through save()
// when they must run). Files (image, blob) are not imported: they hold stored files, not values.

import { DatasetError, isDatasetError } from '../errors/dataset-error.js';
import type { StorageAttribute } from '../model/types.js';
import { coerceValue, keyFromInput, newUuid } from '../model/values.js';
import { bulkRowWidth, compileBulkInsert, compileKeyCounterCatchUp } from '../sql/bulk-insert.js';
import type { Dialect } from '../sql/dialect.js';
import { ConstraintError } from '../storage/adapter.js';
import { bumpGlobalStamp } from '../storage/system-tables.js';
import { fold } from '../util/fold.js';
import type { Access } from './access.js';
import type { DataClassCore } from './dataclass-core.js';
import { requireDataClass } from './guard.js';
import { checkValues, knownTargets, relationsOf } from './rules.js';

/** Bound values one statement takes at most: under SQLite's 32,766 and PostgreSQL's 65,535. */
const MAX_PARAMS = 30_000;
/** Rows one statement inserts at most (past a few hundred, longer statements gain nothing). */
const MAX_ROWS_PER_STATEMENT = 200;

/** One row, checked and converted: its bound values (the key's apart: an autoincrement key may be left to the engine). */
export interface BulkRow {
  /** the key's bound value, or undefined for the engine to give one */
  readonly key: unknown;
  /** the other attributes' bound values (and folds), in the inserter's order */
  readonly values: readonly unknown[];
  /** the foreign keys it names, for the relation checks (only when the columns hold one) */
  readonly relations: ReadonlyMap<StorageAttribute, unknown> | undefined;
}

/** Inserts rows of one dataclass with a fixed list of attributes (the columns of the file). */
export class BulkInserter {
  readonly #dc: DataClassCore;
  readonly #access: Access;
  /** the attributes given, in the order of the values prepare() takes */
  readonly #given: readonly StorageAttribute[];
  /** the attributes but the key, in the order of BulkRow.values */
  readonly #others: readonly StorageAttribute[];
  /** position of the key in the values given to prepare(), or -1 */
  readonly #keyAt: number;
  /** notNull attributes (not the key) and where prepare() finds them (-1: not given, so always null) */
  readonly #required: readonly (readonly [StorageAttribute, number])[];
  /** foreign keys among the attributes, by position */
  readonly #foreignKeys: readonly (readonly [StorageAttribute, number])[];
  /** a relation of the dataclass to itself is among them: a row may name one inserted just before it */
  readonly #selfRelation: boolean;
  /** SQL texts by (key given, rows), built once */
  readonly #sql = new Map<string, string>();
  /** per attribute given, the cells of texts met lately */
  readonly #memos: readonly Memo[];

  constructor(dc: DataClassCore, attrs: readonly StorageAttribute[], access: Access) {
    requireDataClass(access, dc.model, 'create');
    this.#dc = dc;
    this.#access = access;
    const key = dc.model.key;
    for (const a of attrs) {
      if (a.dataClass !== dc.model) throw new Error(`${a.dataClass.name}.${a.name} is not an attribute of ${dc.name}`);
      if (a.type === 'image' || a.type === 'blob') throw new DatasetError('INVALID_VALUE', `${dc.name}.${a.name} is ${a.type === 'image' ? 'a picture' : 'a blob'}: an import holds values, not files`, [], { attributeName: a.name });
    }
    this.#keyAt = attrs.indexOf(key);
    this.#others = attrs.filter((a) => a !== key);
    this.#given = attrs;
    this.#memos = attrs.map((a) => new Memo(a, dc.core.storage.dialect));
    this.#required = dc.model.storage.filter((a) => a.notNull && !a.identifying).map((a) => [a, attrs.indexOf(a)] as const);
    const relations = relationsOf(dc);
    this.#foreignKeys = relations.filter((r) => attrs.includes(r.foreignKey)).map((r) => [r.foreignKey, attrs.indexOf(r.foreignKey)] as const);
    this.#selfRelation = relations.some((r) => r.target === dc.model && attrs.includes(r.foreignKey));
  }

  /**
   * One row's values (in the order of the attributes given; null or undefined: none), converted
   * and checked as a save of a new entity would; throws the DatasetError that save would throw.
   */
  prepare(given: readonly unknown[]): BulkRow {
    const dc = this.#dc.model;
    const dialect = this.#dc.core.storage.dialect;
    const keyAttr = dc.key;
    let key: unknown = null;
    if (this.#keyAt >= 0) {
      const raw = given[this.#keyAt];
      if (raw !== null && raw !== undefined) {
        const v = coerceValue(keyAttr, raw);
        key = keyFromInput(keyAttr, v);
        if (key === undefined) throw new DatasetError('INVALID_KEY', `${JSON.stringify(raw)} is not a valid ${keyAttr.type} key for ${dc.name}`);
      }
    }
    if (key === null) {
      if (keyAttr.autogenerate) key = newUuid();
      else if (!keyAttr.autoincrement) throw new DatasetError('INVALID_VALUE', `a new ${dc.name} needs a value for its key '${keyAttr.name}'`);
    }
    const cells = new Array<Cell>(given.length);
    for (let i = 0; i < given.length; i++) {
      if (i === this.#keyAt) continue;
      const raw = given[i];
      cells[i] = raw === undefined || raw === null ? NULL_CELL : typeof raw === 'string' ? this.#memos[i].cell(raw) : cellOf(this.#given[i], dialect, raw);
    }
    for (const [attr, at] of this.#required) {
      if (at < 0 || cells[at].value === null) throw new DatasetError('VALUE_REQUIRED', `${dc.name}.${attr.name} cannot be null (it is notNull in the model)`, [], { attributeName: attr.name });
    }
    const values: unknown[] = [];
    for (let i = 0; i < given.length; i++) {
      if (i === this.#keyAt) continue;
      const cell = cells[i];
      values.push(cell.bound);
      if (this.#given[i].type === 'string') values.push(cell.folded);
    }
    let relations: Map<StorageAttribute, unknown> | undefined;
    for (const [fk, at] of this.#foreignKeys) {
      const v = at === this.#keyAt ? key : cells[at].value;
      if (v !== null) (relations ??= new Map()).set(fk, v);
    }
    return { key: key === null ? undefined : dialect.encode(keyAttr.type, key, false), values, relations };
  }

  /**
   * Inserts prepared rows in the caller's transaction (one of their own if none is open), the global
   * stamp moved once: resolves to each row's refusal (undefined: inserted). The batch is written
   * first without a savepoint per statement; if the engine refuses a statement, that pass is undone
   * and the batch written again guarded: each statement in a savepoint, and the rows of one that
   * fails one by one, so that only the rows at fault are refused.
   */
  async insert(rows: readonly BulkRow[]): Promise<(DatasetError | undefined)[]> {
    try {
      return await this.#pass(rows, false);
    } catch (e) {
      if (!(e instanceof StatementRefused)) throw e;
    }
    return this.#pass(rows, true);
  }

  /** One pass over the batch, in a transaction (a savepoint inside the caller's). */
  #pass(rows: readonly BulkRow[], guarded: boolean): Promise<(DatasetError | undefined)[]> {
    const storage = this.#dc.core.storage;
    const refused = new Array<DatasetError | undefined>(rows.length);
    return storage.transaction(async () => {
      const known = this.#foreignKeys.length > 0 && !this.#selfRelation
        ? await knownTargets(this.#dc, rows.map((r) => r.relations ?? EMPTY), this.#access)
        : undefined;
      // (the time of the batch's rows, taken once the writer is ours, as a save takes it)
      const timestamp = Date.now();
      const perStatement = this.#selfRelation ? 1 : Math.max(1, Math.min(MAX_ROWS_PER_STATEMENT, Math.floor(MAX_PARAMS / bulkRowWidth([this.#dc.model.key, ...this.#others]))));
      let pending: number[] = [];
      let inserted = 0;
      let keysGiven = false;
      const flush = async () => {
        if (pending.length === 0) return;
        inserted += await this.#write(rows, pending, timestamp, refused, guarded);
        pending = [];
      };
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i];
        // a statement holds rows of one shape (key given or not) and at most perStatement of them;
        // flushed before the next row's checks, so that a row may name one written just before it
        if (pending.length > 0 && ((rows[pending[0]].key === undefined) !== (row.key === undefined) || pending.length >= perStatement)) await flush();
        if (row.relations) {
          try {
            await checkValues(this.#dc, row.relations, this.#access, known);
          } catch (e) {
            if (!isDatasetError(e)) throw e;
            refused[i] = e;
            continue;
          }
        }
        pending.push(i);
        keysGiven ||= row.key !== undefined;
      }
      await flush();
      if (inserted > 0) await bumpGlobalStamp(storage);
      const catchUp = keysGiven && inserted > 0 ? compileKeyCounterCatchUp(storage.dialect, this.#dc.model) : null;
      if (catchUp) await storage.get(catchUp.sql, catchUp.params);
      return refused;
    });
  }

  /**
   * One statement for the rows at `which`: unguarded, a refusal ends the pass (StatementRefused);
   * guarded, in a savepoint, and if the engine refuses it, each row alone. Resolves to the rows inserted.
   */
  async #write(rows: readonly BulkRow[], which: readonly number[], timestamp: number, refused: (DatasetError | undefined)[], guarded: boolean): Promise<number> {
    const storage = this.#dc.core.storage;
    const sql = this.#statement(rows[which[0]].key !== undefined, which.length);
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
      const attrs = withKey ? [this.#dc.model.key, ...this.#others] : this.#others;
      this.#sql.set(id, (sql = compileBulkInsert(this.#dc.core.storage.dialect, this.#dc.model, attrs, count)));
    }
    return sql;
  }

  #params(rows: readonly BulkRow[], which: readonly number[], timestamp: number): unknown[] {
    const params: unknown[] = [];
    for (const i of which) {
      const row = rows[i];
      if (row.key !== undefined) params.push(row.key);
      for (const v of row.values) params.push(v);
      params.push(1, timestamp);
    }
    return params;
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
function cellOf(attr: StorageAttribute, dialect: Dialect, raw: unknown): Cell {
  const value = coerceValue(attr, raw);
  return { value, bound: dialect.encode(attr.type, value, attr.dateOnly), folded: attr.type === 'string' ? foldOf(value as string) : null };
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

  constructor(readonly attr: StorageAttribute, readonly dialect: Dialect) {}

  cell(raw: string): Cell {
    const cells = this.#cells;
    if (!cells) return cellOf(this.attr, this.dialect, raw);
    this.#asked++;
    let cell = cells.get(raw);
    if (cell) {
      this.#found++;
      return cell;
    }
    cell = cellOf(this.attr, this.dialect, raw);
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

/** fold(), skipping its Unicode decomposition for ASCII text, where it is the lower case (checked above, once). */
function foldOf(text: string): string {
  return ASCII_FOLDS_LOWER && ASCII.test(text) ? text.toLowerCase() : fold(text);
}
