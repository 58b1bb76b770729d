// The global stamp: the datastore's modification counter, increased by every transaction that
// saves or drops (answers show it; a client compares it to know whether anything changed). Its
// SQL is the dialect's (SQLite's one-row table, PostgreSQL's sequence).

import type { Reader, Storage } from '../adapter.js';
import { GLOBAL_STAMP_TABLE } from './tables.js';

/**
 * How many times this process moved the stamp of a storage, for the caches of whole answers
 * (rest/scope/answer-cache): counted when a write moves it, again when that write commits or
 * rolls back — an answer read between the two may show either state, and is dropped by the
 * second. Counted only for a storage someone watches (watchStampMoves), at no cost otherwise.
 */
export interface StampMoves {
  count: number;
}

const moves = new WeakMap<Storage, StampMoves>();

/** The moves of `s`'s stamp in this process, counted from now on. */
export function watchStampMoves(s: Storage): StampMoves {
  let m = moves.get(s);
  if (!m) moves.set(s, (m = { count: 0 }));
  return m;
}

/** A write of this process moves `s`'s stamp (in its transaction, if any). */
export function stampMoving(s: Storage): void {
  const m = moves.get(s);
  if (m === undefined) return;
  m.count++;
  const again = () => {
    m.count++;
  };
  s.onRollback(again);
  void s.afterCommit(async () => again());
}

type StampStatements = ReturnType<Reader['dialect']['schema']['globalStamp']>;
/** The dialect's statements of the counter, built once per dialect (every write runs one or two: building them cost 7 µs a write). */
const statements = new WeakMap<Reader['dialect'], StampStatements>();

/** The global stamp's statements in `s`'s dialect. */
export function globalStampStatements(s: Pick<Reader, 'dialect'>): StampStatements {
  let sql = statements.get(s.dialect);
  if (sql === undefined) statements.set(s.dialect, (sql = s.dialect.schema.globalStamp(s.dialect.sql.quote(GLOBAL_STAMP_TABLE))));
  return sql;
}

/** Increases the global stamp: in every transaction that saves or drops. */
export async function bumpGlobalStamp(s: Storage): Promise<void> {
  stampMoving(s);
  await s.run(globalStampStatements(s).bump);
}

/**
 * The increase of the global stamp as an expression another statement can hold (PostgreSQL's
 * nextval), or null where it is a statement of its own (SQLite's UPDATE of its one row): an
 * INSERT then moves it in its RETURNING, at no round trip more. The caller that takes it moves
 * the stamp: it is counted as moving here (stampMoving), as bumpGlobalStamp counts it.
 */
export function globalStampBumpExpression(s: Storage): string | null {
  const expression = stampSql(s).bumpExpression;
  if (expression !== null) stampMoving(s);
  return expression;
}

/** What the stamp watch compares (GlobalStampSql.watch): it changes whenever a change of the stamp committed, and may change more often. */
export async function readStampWatch(r: Reader): Promise<string> {
  const row = await r.get(globalStampStatements(r).watch);
  return String(row?.v ?? '');
}

/** The datastore's modification counter. */
export async function readGlobalStamp(r: Reader): Promise<number> {
  const row = await r.get(globalStampStatements(r).read);
  return Number(row?.v ?? 0);
}

const stampSql = globalStampStatements;

/**
 * Increases the global stamp for a write that tracks changes, in its transaction, and resolves to
 * the new value (what the write stores): after the dialect's `ordered` statements, so that such
 * writes take their stamps in the order they commit.
 */
export async function bumpTrackedGlobalStamp(s: Storage): Promise<number> {
  stampMoving(s);
  const sql = stampSql(s);
  for (const statement of sql.ordered) await s.run(statement);
  const row = await s.get(sql.bumpReturning);
  return Number(row?.v ?? 0);
}

/**
 * Takes, in this transaction, the turn of the writes that track changes (the dialect's `ordered`
 * statements) without moving the stamp: a drop whose cascades may reach a tracked dataclass takes
 * it before its rows' locks, as a tracked save takes it before the targets it holds (else each
 * could wait for the other). Nothing on SQLite, whose writer is alone.
 */
export async function takeTrackedTurn(s: Storage): Promise<void> {
  for (const statement of stampSql(s).ordered) await s.run(statement);
}

/**
 * The global stamp as committed changes leave it: no write that tracks changes and holds a
 * smaller stamp is still under way (ds.getGlobalStamp(): a sync that resumes from it misses none).
 */
export async function readSettledGlobalStamp(s: Storage): Promise<number> {
  const settled = stampSql(s).settled;
  if (settled.length === 0) return readGlobalStamp(s);
  return s.transaction(async () => {
    for (const statement of settled) await s.run(statement);
    return readGlobalStamp(s);
  });
}

/** Sets the global stamp (ds.setGlobalStamp()): a whole number ≥ 0, checked by the caller. */
export async function setGlobalStamp(s: Storage, value: number): Promise<void> {
  // (in a transaction of its own, or a savepoint of the caller's: outside one, stampMoving would
  // count both moves before the statement, and an answer read meanwhile would be kept past it)
  await s.transaction(async () => {
    stampMoving(s);
    await s.run(stampSql(s).set, [value]);
  });
}
