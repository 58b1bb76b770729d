// The plan: what it takes to bring the database from the schema last applied (snapshot.ts) to the
// model, as a list of steps, each one line for the operator and the statements that make it. It
// runs in the schema sync's transaction and applies each step's statements before it reads the
// data again (to check that the data allows a change: checks.ts), so that every check sees the
// data as the steps before it left it (a column renamed, values converted: a new unique is checked
// on the converted values). What it cannot apply is a problem; a plan with problems is refused as
// a whole, and its transaction rolled back (as a dry run's always is).
// Order: dataclass renames, then per dataclass its column renames, type changes, additions and
// index changes, what left the model last; new dataclasses are created where they stand.

import type { DataClassModel, Model, StorageAttribute } from '../../model/types.js';
import { STAMP_COLUMN, TIMESTAMP_COLUMN } from '../../sql/hidden-columns.js';
import { foldColumn, FOLD_VERSION } from '../../util/fold.js';
import type { Storage } from '../adapter.js';
import { LOCK_TABLE, SET_TABLE, tableColumns } from '../system-tables/tables.js';
import { duplicatesIn, misfitsIn, nullsIn, valuesIn } from './checks.js';
import { foldIndex, indexStatements, refold } from './indexes.js';
import {
  columnSnapshot, count, EMPTY_SNAPSHOT, indexesOf, typeLabel,
  type ColumnSnapshot, type SchemaSnapshot, type TableSnapshot,
} from './snapshot.js';
import { typeChange } from './type-changes.js';
import { closest } from '../../util/suggest.js';

export interface SchemaStep {
  /** one line for the operator: "Company: add attribute revenue (number)" */
  readonly description: string;
  /** the statements that make it, run in order (none: a change of the record alone, as a notNull) */
  readonly sql: readonly string[];
}

export interface SchemaPlan {
  readonly steps: readonly SchemaStep[];
  /** why the plan cannot be applied; when there are any, nothing is */
  readonly problems: readonly string[];
  /** the schema once applied, to record */
  readonly after: SchemaSnapshot;
  /** the database had no recorded schema (new) */
  readonly fresh: boolean;
}

interface Context {
  readonly s: Storage;
  readonly steps: Step[];
  readonly problems: string[];
  /** how many statements of each step have run */
  readonly ran: Map<Step, number>;
}

/** Runs the statements planned so far that have not run yet: before every read, and at the end. */
async function flush(ctx: Context): Promise<void> {
  for (const step of ctx.steps) {
    for (let i = ctx.ran.get(step) ?? 0; i < step.sql.length; i++) {
      ctx.ran.set(step, i + 1);
      await ctx.s.exec(step.sql[i]);
    }
  }
}

/** How many values a column holds now (the statements planned so far applied). */
async function valuesOf(ctx: Context, table: string, column: string): Promise<number> {
  await flush(ctx);
  return valuesIn(ctx.s, table, column);
}

/** Plans the changes from the recorded schema (`recorded`: its JSON, if any) to `model`, reading what the checks need. */
export async function planSchema(s: Storage, model: Model, recorded: string | undefined, foldVersion: string | undefined): Promise<SchemaPlan> {
  const before: SchemaSnapshot = recorded !== undefined ? (JSON.parse(recorded) as SchemaSnapshot) : EMPTY_SNAPSHOT;
  const fresh = recorded === undefined;
  const tables: Record<string, TableSnapshot> = { ...before.tables };
  const after: SchemaSnapshot = { version: 1, tables: {} };
  const ctx: Context = { s, steps: [], problems: [], ran: new Map() };
  const q = s.dialect.sql.quote;

  const renamed = new Map<string, Step>();
  /** dataclasses new to the database, to suggest as the new name of one that left */
  const created: string[] = [];
  // renames first: a dataclass renamed takes its table (and everything in it) to its new name
  for (const dc of model.dataClasses) {
    const from = dc.renamedFrom;
    const now = tables[dc.table];
    if (from === undefined || fresh || (now && !now.retired)) continue; // (applied already, or a new database made as the model says)
    const old = tables[from];
    if (!old) {
      // (a former dataclass of the new name, kept hidden, is simply back: as for an attribute)
      if (!now) ctx.problems.push(`${dc.name}: renamedFrom '${from}' names no dataclass this database has or had (remove renamedFrom to create ${dc.name} as a new, empty dataclass)`);
      continue;
    }
    const sql: string[] = [];
    // a former dataclass of the new name, kept hidden, is set aside first (still kept)
    const aside = now ? archiveTable(ctx, dc.table, now, tables) : undefined;
    if (aside) sql.push(...aside.sql);
    sql.push(`ALTER TABLE ${q(from)} RENAME TO ${q(dc.table)}`);
    const moved: TableSnapshot = { ...old, retired: undefined };
    // its indexes are made again under the new name (plan of the table, below)
    for (const [column, c] of Object.entries(old.columns)) for (const index of indexesOf(from, column, c)) sql.push(`DROP INDEX IF EXISTS ${q(index)}`);
    // the entity sets and locks of the old name are the new one's
    sql.push(...moveRows(ctx, from, dc.name));
    renamed.set(dc.table, push(ctx, `rename dataclass ${from} → ${dc.name}${aside ? `; the table a former ${dc.name} kept set aside as ${aside.name} (hidden, with its data)` : ''}`, sql));
    delete tables[from];
    tables[dc.table] = moved;
  }

  for (const dc of model.dataClasses) {
    const old = tables[dc.table];
    if (!old) {
      await flush(ctx);
      if ((await tableColumns(s, dc.table)).length > 0) {
        ctx.problems.push(`table "${dc.table}" already exists but was not created by dataset-rest; rename the dataclass or use another database`);
        continue;
      }
      after.tables[dc.table] = createTable(ctx, dc);
      if (!fresh) created.push(dc.name);
    } else {
      after.tables[dc.table] = await alterTable(ctx, dc, old, renamed.get(dc.table));
    }
  }
  // Tables of dataclasses no longer in the model stay, with their data, and stay recorded.
  for (const [table, snap] of Object.entries(tables)) {
    if (after.tables[table]) continue;
    if (!snap.retired) ctx.steps.push({ description: `dataclass ${table}: left the model, its table kept with its data (hidden)${renameHint(table, created, 'dataclass')}`, sql: [] });
    after.tables[table] = { ...snap, retired: true };
  }
  // every text column folded again when the fold function changed since the database was written
  if (!fresh && Number(foldVersion ?? 1) !== FOLD_VERSION) {
    const sql = model.dataClasses.filter((dc) => tables[dc.table]).flatMap((dc) => dc.storage.filter((a) => a.type === 'string').map((a) => refold(s.dialect, dc.table, a.column)));
    if (sql.length > 0) ctx.steps.push({ description: `text folded again for queries (fold version ${String(foldVersion ?? 1)} → ${FOLD_VERSION})`, sql });
  }
  await flush(ctx);
  return { steps: ctx.steps, problems: ctx.problems, after, fresh };
}

function createTable(ctx: Context, dc: DataClassModel): TableSnapshot {
  const d = ctx.s.dialect;
  const cols = dc.storage.map((a) => (a.identifying ? `${d.sql.quote(a.column)} ${d.types.keyColumn(a)}` : `${d.sql.quote(a.column)} ${d.types.columnType(a.type)}`));
  for (const a of dc.storage) if (a.type === 'string') cols.push(`${d.sql.quote(foldColumn(a.column))} ${d.types.columnType('string')}`);
  cols.push(`${d.sql.quote(STAMP_COLUMN)} ${d.types.bigint} NOT NULL DEFAULT 1`, `${d.sql.quote(TIMESTAMP_COLUMN)} ${d.types.bigint} NOT NULL DEFAULT 0`);
  const sql = [`CREATE TABLE ${d.sql.quote(dc.table)} (\n  ${cols.join(',\n  ')}\n)`];
  const snap: TableSnapshot = { key: dc.key.name, keyAutoincrement: dc.key.autoincrement, columns: {} };
  for (const a of dc.storage) {
    snap.columns[a.column] = columnSnapshot(a);
    if (!a.identifying) sql.push(...indexStatements(ctx.s.dialect, dc, a, undefined));
    if (a.type === 'string' && a.indexed) sql.push(foldIndex(ctx.s.dialect, dc, a, true));
  }
  ctx.steps.push({ description: `create dataclass ${dc.name} (${dc.storage.length} storage attribute${dc.storage.length === 1 ? '' : 's'})`, sql });
  return snap;
}

interface Step {
  description: string;
  readonly sql: string[];
}

async function alterTable(ctx: Context, dc: DataClassModel, recorded: TableSnapshot, renamedStep: Step | undefined): Promise<TableSnapshot> {
  const { s } = ctx;
  const q = s.dialect.sql.quote;
  const t = q(dc.table);
  // the recorded columns, renames applied as they are planned
  const cols: Record<string, ColumnSnapshot> = { ...recorded.columns };
  /** columns whose indexes are gone (renamed, or made anew by a type change): made again at the end */
  const bare = new Set(renamedStep ? Object.keys(cols) : []);
  /** the step of each attribute so far: what follows for it joins that line */
  const stepOf = new Map<string, Step>();
  let key = recorded.key;
  if (recorded.retired) ctx.steps.push({ description: `dataclass ${dc.name}: back in the model, with the data its table kept`, sql: [] });

  for (const a of dc.storage) {
    const from = a.renamedFrom;
    const now = cols[a.column];
    if (from === undefined || (now && !now.retired)) continue; // no rename, or applied already
    const was = cols[from];
    if (!was) {
      if (!now) ctx.problems.push(`${dc.name}.${a.name}: renamedFrom '${from}' names no attribute ${dc.name} has or had (remove renamedFrom to add ${a.name} as a new, empty attribute)`);
      continue;
    }
    const sql: string[] = [];
    // a former attribute of the new name, kept hidden, is set aside first
    const aside = now ? archive(ctx, dc, a.column, now, cols) : undefined;
    if (aside) sql.push(...aside.sql);
    for (const index of indexesOf(dc.table, from, was)) sql.push(`DROP INDEX IF EXISTS ${q(index)}`);
    sql.push(`ALTER TABLE ${t} RENAME COLUMN ${q(from)} TO ${q(a.column)}`);
    if (was.fold) sql.push(`ALTER TABLE ${t} RENAME COLUMN ${q(foldColumn(from))} TO ${q(foldColumn(a.column))}`);
    const setAside = aside ? `; the values a former ${a.name} kept set aside in the hidden column ${aside.name}` : '';
    const step: Step = { description: `rename attribute ${dc.name}.${from} → ${dc.name}.${a.name}${was.retired ? ' (a former attribute, its kept values with it)' : ''}${setAside}`, sql };
    ctx.steps.push(step);
    stepOf.set(a.column, step);
    delete cols[from];
    // (a column kept hidden was not written meanwhile: new entities hold null there)
    cols[a.column] = was.retired ? { ...was, retired: undefined, notNull: false } : was;
    bare.add(a.column);
    if (key === from) key = a.column;
  }

  const oldKey = cols[key];
  if (key !== dc.key.column || oldKey?.type !== dc.key.type || (recorded.keyAutoincrement ?? dc.key.autoincrement) !== dc.key.autoincrement) {
    ctx.problems.push(`${dc.name}: the primary key changed from ${key} (${oldKey?.type}${recorded.keyAutoincrement ? ', autoincrement' : ''}) to ${dc.key.name} (${dc.key.type}${dc.key.autoincrement ? ', autoincrement' : ''}); a key change cannot be applied to existing data`);
    return recorded;
  }

  const snap: TableSnapshot = { key: dc.key.column, keyAutoincrement: dc.key.autoincrement, columns: {} };
  /** attributes new to the table, to suggest as the new name of one that left */
  const added: StorageAttribute[] = [];
  for (const a of dc.storage) {
    let was: ColumnSnapshot | undefined = cols[a.column];
    delete cols[a.column];
    snap.columns[a.column] = columnSnapshot(a);
    let step = stepOf.get(a.column) ?? (a.identifying ? renamedStep : undefined);
    if (a.identifying) {
      // the key's own index is the table's; a text key's folded one is ours, made again when renamed
      if (bare.has(a.column) && a.type === 'string') (step ?? push(ctx, `${dc.name}.${a.name}: index made again`)).sql.push(foldIndex(ctx.s.dialect, dc, a, true));
      continue;
    }
    if (was?.retired) {
      // a name that comes back: with its kept values when it has the type they were kept with;
      // else they are set aside (renamed, still kept) and the attribute starts empty
      if (typeChange(was, a).kind === 'same') {
        step = push(ctx, `${dc.name}.${a.name}: back in the model, with its ${count(await valuesOf(ctx, dc.table, a.column))} kept values`);
        was = { ...was, retired: undefined, notNull: false };
      } else {
        const aside = archive(ctx, dc, a.column, was, cols);
        step = push(ctx, `${dc.name}.${a.name}: back as ${typeLabel(a)}, starting empty; the ${typeLabel(was)} values it kept set aside in the hidden column ${aside.name}`, aside.sql);
        was = undefined;
      }
    }
    if (!was) {
      if (a.notNull && !(await check(ctx, () => nullsIn(s, a, null)))) continue;
      added.push(a);
      step ??= push(ctx, `${dc.name}: add attribute ${a.name} (${typeLabel(a)})`);
      step.sql.push(`ALTER TABLE ${t} ADD COLUMN ${q(a.column)} ${s.dialect.types.columnType(a.type)}`);
      if (a.type === 'string') step.sql.push(`ALTER TABLE ${t} ADD COLUMN ${q(foldColumn(a.column))} ${s.dialect.types.columnType('string')}`);
      step.sql.push(...indexStatements(ctx.s.dialect, dc, a, undefined));
      if (a.type === 'string' && a.indexed) step.sql.push(foldIndex(ctx.s.dialect, dc, a, true));
      continue;
    }
    if (a.type === 'string' && was.type === 'string' && !was.fold) {
      // text recorded before folded columns existed: its folded twin, filled
      const sql = [`ALTER TABLE ${t} ADD COLUMN ${q(foldColumn(a.column))} ${s.dialect.types.columnType('string')}`, refold(s.dialect, dc.table, a.column)];
      if (a.indexed) sql.push(foldIndex(ctx.s.dialect, dc, a, true));
      step = push(ctx, `${dc.name}.${a.name}: folded twin added for queries`, sql);
      was = { ...was, fold: true };
    }
    const changed = await changeType(ctx, dc, a, was);
    if (!changed) continue;
    if (changed.step) {
      step = changed.step;
      bare.add(a.column);
    }
    await changeConstraints(ctx, dc, a, was, { bare: bare.has(a.column), converted: changed.step !== undefined }, step, renamedStep);
  }

  // A column that left the model keeps its data; its indexes go (they would slow writes for nothing).
  for (const [column, was] of Object.entries(cols)) {
    snap.columns[column] = { ...was, indexed: false, unique: false, retired: true };
    if (was.retired) continue;
    const sql = bare.has(column) ? [] : indexesOf(dc.table, column, was).map((index) => `DROP INDEX IF EXISTS ${q(index)}`);
    push(ctx, `${dc.name}.${column}: left the model, its column kept hidden with its ${count(await valuesOf(ctx, dc.table, column))} values${renameHint(column, added.filter((a) => typeChange(was, a).kind === 'same').map((a) => a.name), 'attribute')}`, sql);
  }
  return snap;
}

/**
 * What to write when a name that left the model was renamed: an attribute (or dataclass) that
 * appeared in the same change, of the same type, is likely its new name — the closest by spelling
 * when several are — and `renamedFrom` keeps the data there instead of a new, empty one.
 */
function renameHint(gone: string, appeared: readonly string[], kind: 'attribute' | 'dataclass'): string {
  if (appeared.length === 0) return '';
  const likely = closest(gone, appeared) ?? appeared[0];
  const where = kind === 'attribute' ? `on the attribute ${likely}` : `on the dataclass ${likely}`;
  const others = appeared.length > 1 ? ` (or ${appeared.filter((n) => n !== likely).join(', ')})` : '';
  const moves = kind === 'attribute' ? 'its values' : 'its data';
  return `; if ${likely}${others} is its new name, "renamedFrom": "${gone}" ${where} in model.json moves ${moves} there — give it before this change is applied (migrate --dry-run shows the plan first)`;
}

function push(ctx: Context, description: string, sql: string[] = []): Step {
  const step: Step = { description, sql };
  ctx.steps.push(step);
  return step;
}

/**
 * A type change of a column kept, when it can be applied: its step (the column's indexes dropped,
 * to be made again), or no step when the type is the same; undefined when refused.
 */
async function changeType(ctx: Context, dc: DataClassModel, a: StorageAttribute, was: ColumnSnapshot): Promise<{ step?: Step } | undefined> {
  const change = typeChange(was, a);
  if (change.kind === 'same') return {};
  const label = `${typeLabel(was)} → ${typeLabel(a)}`;
  if (change.kind === 'refuse') {
    ctx.problems.push(`${dc.name}.${a.name}: the type changed from ${label}; ${change.why}`);
    return undefined;
  }
  const { s } = ctx;
  const q = s.dialect.sql.quote;
  const t = q(dc.table);
  if (change.kind === 'narrow' && !(await check(ctx, () => misfitsIn(s, a, a.column, change.misfit, label)))) return undefined;
  // Its indexes go first (which ones it has depends on the type: text is indexed through its
  // folded twin) and are made again by changeConstraints: a conversion runs faster without them.
  const sql = indexesOf(dc.table, a.column, was).map((index) => `DROP INDEX IF EXISTS ${q(index)}`);
  if (was.fold && a.type !== 'string') sql.push(`ALTER TABLE ${t} DROP COLUMN ${q(foldColumn(a.column))}`);
  sql.push(...s.dialect.schema.convertColumn(dc.table, a.column, was, a).sql);
  if (a.type === 'string' && !was.fold) {
    // text now: its folded twin, filled from the values converted
    sql.push(`ALTER TABLE ${t} ADD COLUMN ${q(foldColumn(a.column))} ${s.dialect.types.columnType('string')}`, refold(s.dialect, dc.table, a.column));
  }
  const n = await valuesOf(ctx, dc.table, a.column);
  return { step: push(ctx, `${dc.name}.${a.name}: ${label}, ${count(n)} value${n === 1 ? '' : 's'} converted`, sql) };
}

/**
 * Indexes, unique and notNull brought to what the model says, checked against the data first.
 * `bare`: the column has no index now (renamed, converted); `converted`: its values were just
 * converted (a unique one is checked again). What changes joins `step` (the
 * attribute's line so far) or makes a line of its own; indexes only made again join `tableStep`
 * (the dataclass's rename), if any.
 */
async function changeConstraints(
  ctx: Context, dc: DataClassModel, a: StorageAttribute, was: ColumnSnapshot, { bare, converted }: { bare: boolean; converted: boolean },
  step: Step | undefined, tableStep: Step | undefined,
): Promise<void> {
  const lines: string[] = [];
  // (a record made before notNull was recorded takes the model's flag as it is)
  if (a.notNull && was.notNull === false) {
    if (!(await check(ctx, () => nullsIn(ctx.s, a, a.column)))) return;
    lines.push('now notNull');
  } else if (!a.notNull && was.notNull === true) lines.push('no longer notNull');
  if (a.unique && (!was.unique || converted)) {
    // (values just converted may meet where they differed before: "1" and "01" as 1)
    if (!(await check(ctx, () => duplicatesIn(ctx.s, a)))) return;
    if (!was.unique) lines.push('now unique');
  } else if (!a.unique && was.unique) lines.push('no longer unique');
  else if (a.indexed !== was.indexed) lines.push(a.indexed ? 'index added' : 'index dropped');
  const sql = indexStatements(ctx.s.dialect, dc, a, bare ? undefined : was);
  const hadFoldIndex = !bare && Boolean(was.fold && was.indexed);
  if (a.type === 'string' && a.indexed !== hadFoldIndex) sql.push(foldIndex(ctx.s.dialect, dc, a, a.indexed));
  if (lines.length === 0 && sql.length === 0) return;
  if (step) {
    if (lines.length > 0) step.description += `, ${lines.join(', ')}`;
    step.sql.push(...sql);
  } else if (lines.length === 0 && tableStep) {
    // (indexes made again under a renamed dataclass's name: part of its rename)
    tableStep.sql.push(...sql);
  } else {
    push(ctx, `${dc.name}.${a.name}: ${lines.length > 0 ? lines.join(', ') : 'indexes made again'}`, sql);
  }
}

/** Adds a check's finding (if any) to the problems; true when there was none. */
async function check(ctx: Context, finding: () => Promise<string | undefined>): Promise<boolean> {
  await flush(ctx);
  const problem = await finding();
  if (problem !== undefined) ctx.problems.push(problem);
  return problem === undefined;
}

/** The hidden name a kept column is set aside under: `<name>__was_<type>`, numbered when taken. */
function archivedName(column: string, was: ColumnSnapshot, cols: Record<string, ColumnSnapshot>): string {
  const base = `${column}__was_${was.type}${was.type === 'date' && was.dateOnly ? '_only' : ''}`;
  let name = base;
  for (let i = 2; cols[name]; i++) name = `${base}${i}`;
  return name;
}

/** Statements setting a retired column aside under a hidden name (values kept, its folded twin with it); records it there. */
function archive(ctx: Context, dc: DataClassModel, column: string, was: ColumnSnapshot, cols: Record<string, ColumnSnapshot>): { sql: string[]; name: string } {
  const q = ctx.s.dialect.sql.quote;
  const t = q(dc.table);
  const name = archivedName(column, was, cols);
  const sql = [`ALTER TABLE ${t} RENAME COLUMN ${q(column)} TO ${q(name)}`];
  if (was.fold) sql.push(`ALTER TABLE ${t} RENAME COLUMN ${q(foldColumn(column))} TO ${q(foldColumn(name))}`);
  delete cols[column];
  cols[name] = { ...was, indexed: false, unique: false, retired: true };
  return { sql, name };
}

/** Statements giving a dataclass's entity sets and locks to another name (its table renamed). */
function moveRows(ctx: Context, from: string, to: string): string[] {
  const q = ctx.s.dialect.sql.quote;
  const text = (name: string) => `'${name.replaceAll("'", "''")}'`;
  return [SET_TABLE, LOCK_TABLE].map((table) => `UPDATE ${q(table)} SET ${q('dataClass')} = ${text(to)} WHERE ${q('dataClass')} = ${text(from)}`);
}

/**
 * Statements setting a retired table aside under a hidden name (`<name>__was_<n>`: a name a model
 * cannot give), its data kept and recorded there, so that a dataclass renamed to its name takes
 * the name without meeting the kept rows. Its indexes go (their names are the old table's).
 */
function archiveTable(ctx: Context, table: string, was: TableSnapshot, tables: Record<string, TableSnapshot>): { sql: string[]; name: string } {
  const q = ctx.s.dialect.sql.quote;
  let name = `${table}__was_1`;
  for (let i = 2; tables[name]; i++) name = `${table}__was_${i}`;
  const sql: string[] = [];
  for (const [column, c] of Object.entries(was.columns)) for (const index of indexesOf(table, column, c)) sql.push(`DROP INDEX IF EXISTS ${q(index)}`);
  sql.push(`ALTER TABLE ${q(table)} RENAME TO ${q(name)}`, ...moveRows(ctx, table, name));
  const columns = Object.fromEntries(Object.entries(was.columns).map(([column, c]) => [column, { ...c, indexed: false, unique: false }]));
  delete tables[table];
  tables[name] = { ...was, columns, retired: true };
  return { sql, name };
}
