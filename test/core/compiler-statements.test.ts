// The SQL compiler: the exact SQL text and bound parameters for SQLite and PostgreSQL. The SQLite
// statements are also run on an in-memory database, so that the expected text is known to work.
// What the compiler guards (row filters, bound values, the progress check) is
// compiler-guards.test.ts; what they share, compiler-shared.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type Database from 'better-sqlite3';
import type { StorageAttribute } from '../../src/model/types.js';
import type { SelectSpec } from '../../src/query/plan.js';
import { compileAggregate } from '../../src/sql/compiler/aggregates.js';
import type { CompiledSql } from '../../src/sql/compiler/builder.js';
import { compileCount, compileDelete, compileInsert, compileLockRow, compileSelect, compileUpdate } from '../../src/sql/compiler/statements.js';
import type { Dialect } from '../../src/sql/dialect.js';
import { sqliteDialect } from '../../src/sql/dialect-sqlite.js';
import { and, at, C, City, cityName, DIALECTS, E, Employee, eq, openSqlite, run, T, type DialectCase } from './compiler-shared.js';

const HIRED = new Date('2024-03-05T12:34:56.000Z');

/** SQLite's order of nulls, as PostgreSQL is told it (Dialect.sql.nullsOrder) */
const nullsLast = (dialect: string) => (dialect === 'postgres' ? ' NULLS LAST' : '');
const nullsFirst = (dialect: string) => (dialect === 'postgres' ? ' NULLS FIRST' : '');

/** One compiler case: the statement, and its expected SQL and params per dialect. */
interface Case {
  what: string;
  compile(d: Dialect): CompiledSql;
  sql(p: DialectCase['p'], dialect: string): string;
  params(c: DialectCase): unknown[];
}

const cases: Case[] = [
  {
    what: 'a select with where, order, limit and offset',
    compile: (d) => compileSelect(d, {
      dataClass: Employee,
      columns: [{ kind: 'storage', attr: E.ID }, { kind: 'storage', attr: E.lastName }, { kind: 'stamp' }, { kind: 'timestamp' }],
      where: and(eq(at(E.lastName), 'Smith'), eq(at(E.salary), 1000, '>='), { kind: 'isNull', path: at(E.hired), negated: true }, eq(at(E.active), true)),
      order: [{ path: at(E.lastName), descending: true }, { path: at(E.ID), descending: false }],
      limit: 10,
      offset: 20,
    }, null),
    sql: (p, dialect) => 'SELECT t0."ID" AS "ID", t0."lastName" AS "lastName", t0."__stamp", t0."__timestamp" FROM "Employee" t0'
      + ` WHERE (t0."lastName" = ${p(1)} AND t0."salary" >= ${p(2)} AND t0."hired" IS NOT NULL AND t0."active" = ${p(3)})`
      + ` ORDER BY t0."lastName__fold" DESC${nullsLast(dialect)}, t0."ID" LIMIT ${p(4)} OFFSET ${p(5)}`,
    params: (c) => ['Smith', 1000, c.bool(true), 10, 20],
  },
  {
    what: 'a select with or, not, <> and null comparisons, limit only',
    compile: (d) => compileSelect(d, {
      dataClass: Employee,
      columns: [{ kind: 'storage', attr: E.ID }],
      where: and(
        { kind: 'or', items: [eq(at(E.lastName), 'A', '!='), eq(at(E.salary), null), eq(at(E.hired), null, '!=')] },
        { kind: 'not', item: eq(at(E.salary), 5, '<') },
      ),
      order: [],
      limit: 3,
    }, null),
    sql: (p) => 'SELECT t0."ID" AS "ID" FROM "Employee" t0'
      + ` WHERE ((t0."lastName" <> ${p(1)} OR t0."salary" IS NULL OR t0."hired" IS NOT NULL) AND NOT (t0."salary" < ${p(2)})) LIMIT ${p(3)}`,
    params: () => ['A', 5, 3],
  },
  {
    what: 'a prefix test (begin, a trailing @) as a range on the folded column, which an index serves',
    compile: (d) => compileSelect(d, {
      dataClass: Employee,
      columns: [{ kind: 'storage', attr: E.ID }],
      where: { kind: 'prefix', path: { ...at(E.lastName), fold: true }, prefix: 'smi' },
      order: [],
    }, null),
    sql: (p) => `SELECT t0."ID" AS "ID" FROM "Employee" t0 WHERE (t0."lastName__fold" >= ${p(1)} AND t0."lastName__fold" < ${p(2)})`,
    params: () => ['smi', 'smi\u{10FFFF}'],
  },
  {
    what: 'dates (dateOnly) and objects encoded as bound values',
    compile: (d) => compileSelect(d, {
      dataClass: Employee,
      columns: [{ kind: 'storage', attr: E.ID }],
      where: and(eq(at(E.hired), HIRED, '<'), eq(at(E.extra), { a: 1 })),
      order: [],
    }, null),
    sql: (p) => `SELECT t0."ID" AS "ID" FROM "Employee" t0 WHERE (t0."hired" < ${p(1)} AND t0."extra" = ${p(2)})`,
    params: () => ['2024-03-05', '{"a":1}'],
  },
  {
    what: 'an N→1 path in an alias column, in where and in order (scalar subqueries)',
    compile: (d) => compileSelect(d, {
      dataClass: Employee,
      columns: [{ kind: 'storage', attr: E.ID }, { kind: 'alias', attr: E.employerName }],
      where: eq(at(cityName, E.employer, C.city), 'Paris'),
      order: [{ path: at(C.name, E.employer), descending: true }],
    }, null),
    sql: (p, dialect) => 'SELECT t0."ID" AS "ID", (SELECT t1."name" FROM "Company" t1 WHERE t1."ID" = t0."employerID") AS "employerName"'
      + ' FROM "Employee" t0'
      + ' WHERE (SELECT (SELECT t3."name" FROM "City" t3 WHERE t3."ID" = t2."cityID") FROM "Company" t2 WHERE t2."ID" = t0."employerID")'
      + ` = ${p(1)}`
      + ` ORDER BY (SELECT t4."name__fold" FROM "Company" t4 WHERE t4."ID" = t0."employerID") DESC${nullsLast(dialect)}`,
    params: () => ['Paris'],
  },
  {
    what: 'an offset without a limit',
    compile: (d) => compileSelect(d, { dataClass: City, columns: [{ kind: 'storage', attr: cityName }], where: null, order: [], limit: null, offset: 5 }, null),
    sql: (p, dialect) => `SELECT t0."name" AS "name" FROM "City" t0${dialect === 'sqlite' ? ` LIMIT -1 OFFSET ${p(1)}` : ` OFFSET ${p(1)}`}`,
    params: () => [5],
  },
  {
    what: 'in conditions on a column and on an N→1 path, and an empty in',
    compile: (d) => compileSelect(d, {
      dataClass: Employee,
      columns: [{ kind: 'storage', attr: E.ID }],
      where: and(
        { kind: 'in', path: at(E.lastName), values: ['a', 'b', 'c'] },
        { kind: 'in', path: at(C.name, E.employer), values: ['Acme'] },
        { kind: 'in', path: at(E.active), values: [true, false] },
        { kind: 'in', path: at(E.salary), values: [] },
      ),
      order: [],
    }, null),
    sql: (p) => 'SELECT t0."ID" AS "ID" FROM "Employee" t0 WHERE ('
      + `t0."lastName" IN (${p(1)}, ${p(2)}, ${p(3)})`
      + ` AND (SELECT t1."name" FROM "Company" t1 WHERE t1."ID" = t0."employerID") IN (${p(4)})`
      + ` AND t0."active" IN (${p(5)}, ${p(6)})`
      + ' AND 1 = 0)',
    params: (c) => ['a', 'b', 'c', 'Acme', c.bool(true), c.bool(false)],
  },
  {
    what: 'an inSelect condition (a paged sub-select) between two bound conditions',
    compile: (d) => compileSelect(d, {
      dataClass: Employee,
      columns: [{ kind: 'storage', attr: E.ID }],
      where: and(
        eq(at(E.lastName), 'x'),
        {
          kind: 'inSelect',
          path: at(E.ID),
          select: {
            dataClass: Employee, columns: [{ kind: 'storage', attr: E.ID }], where: eq(at(E.salary), 5, '>'),
            order: [{ path: at(E.salary), descending: true }], limit: 3, offset: 1,
          },
        },
        eq(at(E.active), false),
      ),
      order: [],
    }, null),
    sql: (p, dialect) => `SELECT t0."ID" AS "ID" FROM "Employee" t0 WHERE (t0."lastName" = ${p(1)}`
      + ` AND t0."ID" IN (SELECT t1."ID" AS "ID" FROM "Employee" t1 WHERE t1."salary" > ${p(2)} ORDER BY t1."salary" DESC${nullsLast(dialect)} LIMIT ${p(3)} OFFSET ${p(4)})`
      + ` AND t0."active" = ${p(5)})`,
    params: (c) => ['x', 5, 3, 1, c.bool(false)],
  },
  {
    what: 'perGroup: the first rows per foreign key value (window function)',
    compile: (d) => compileSelect(d, {
      dataClass: Employee,
      columns: [{ kind: 'storage', attr: E.ID }, { kind: 'storage', attr: E.lastName }, { kind: 'storage', attr: E.employerID }],
      where: { kind: 'in', path: at(E.employerID), values: [1, 2] },
      order: [{ path: at(E.lastName), descending: false }],
      perGroup: { attr: E.employerID, limit: 2 },
    }, null),
    sql: (p, dialect) => 'SELECT * FROM (SELECT t0."ID" AS "ID", t0."lastName" AS "lastName", t0."employerID" AS "employerID",'
      + ` ROW_NUMBER() OVER (PARTITION BY t0."employerID" ORDER BY t0."lastName__fold"${nullsFirst(dialect)}) AS __rn`
      + ` FROM "Employee" t0 WHERE t0."employerID" IN (${p(1)}, ${p(2)})) t1`
      + ' WHERE t1.__rn <= 2 ORDER BY t1."employerID", t1.__rn',
    params: () => [1, 2],
  },
  {
    what: 'a count grouped by a foreign key',
    compile: (d) => compileCount(d, Employee, eq(at(E.salary), 100, '>'), null, E.employerID),
    sql: (p) => `SELECT t0."employerID" AS g, COUNT(*) AS n FROM "Employee" t0 WHERE t0."salary" > ${p(1)} GROUP BY t0."employerID"`,
    params: () => [100],
  },
  {
    what: 'a count of a whole table',
    compile: (d) => compileCount(d, Employee, null, null),
    sql: () => 'SELECT COUNT(*) AS n FROM "Employee" t0',
    params: () => [],
  },
  {
    what: 'an insert returning the key',
    compile: (d) => compileInsert(d, Employee, new Map<StorageAttribute, unknown>([
      [E.lastName, 'Smith'], [E.salary, 1200.5], [E.active, true], [E.hired, HIRED], [E.extra, { a: [1, 2] }], [E.employerID, 1],
    ]), 1, T),
    // text is written twice: as given, and folded (case and accents removed) for queries and sorts
    sql: (p) => 'INSERT INTO "Employee" ("lastName", "lastName__fold", "salary", "active", "hired", "extra", "employerID", "__stamp", "__timestamp")'
      + ` VALUES (${[1, 2, 3, 4, 5, 6, 7, 8, 9].map(p).join(', ')}) RETURNING "ID" AS "ID"`,
    params: (c) => ['Smith', 'smith', 1200.5, c.bool(true), '2024-03-05', '{"a":[1,2]}', 1, 1, T],
  },
  {
    what: 'an update checking the stamp',
    compile: (d) => compileUpdate(d, Employee, 1, 4, new Map<StorageAttribute, unknown>([[E.lastName, 'Jones'], [E.active, false]]), T, null),
    sql: (p) => `UPDATE "Employee" SET "lastName" = ${p(1)}, "lastName__fold" = ${p(2)}, "active" = ${p(3)}, "__stamp" = "__stamp" + 1, "__timestamp" = ${p(4)}`
      + ` WHERE "ID" = ${p(5)} AND "__stamp" = ${p(6)}`,
    params: (c) => ['Jones', 'jones', c.bool(false), T, 1, 4],
  },
  {
    what: 'a delete by key checking the stamp',
    compile: (d) => compileDelete(d, Employee, 2, 7, null),
    sql: (p) => `DELETE FROM "Employee" WHERE "ID" = ${p(1)} AND "__stamp" = ${p(2)}`,
    params: () => [2, 7],
  },
  {
    what: "an entity's key read under a row lock (a pessimistic lock's read: PostgreSQL locks the row of its table)",
    compile: (d) => compileLockRow(d, Employee, 2, null),
    sql: (p, dialect) => `SELECT t0."ID" AS "ID" FROM "Employee" t0 WHERE t0."ID" = ${p(1)}${dialect === 'sqlite' ? '' : ' FOR UPDATE OF t0'}`,
    params: () => [2],
  },
  {
    what: 'sums of an object property over its numbers only, and its max per class of value (numbers, text)',
    compile: (d) => compileAggregate(d, Employee, null, { via: [], attr: E.extra, json: ['score'] }, ['sum', 'max'], null),
    sql: (p, dialect) =>
      dialect === 'sqlite'
        ? `SELECT SUM((SELECT CASE WHEN json_type(c, p) IN ('integer', 'real') THEN json_extract(c, p) END FROM (SELECT t0."extra" AS c, ${p(1)} AS p) WHERE dataset_progress(p))) AS sum,`
          + ` MAX((SELECT CASE WHEN json_type(c, p) IN ('integer', 'real', 'true', 'false') THEN json_extract(c, p) END FROM (SELECT t0."extra" AS c, ${p(2)} AS p) WHERE dataset_progress(p))) AS max,`
          + ` MAX((SELECT CASE WHEN json_type(c, p) IN ('text', 'object', 'array') THEN json_extract(c, p) END FROM (SELECT t0."extra" AS c, ${p(3)} AS p) WHERE dataset_progress(p))) AS max__text FROM "Employee" t0`
        : `SELECT SUM(((CASE WHEN json_typeof(t0."extra" #> ${p(1)}::text[]) = 'number' THEN (t0."extra" #>> ${p(1)}::text[])::double precision END))::numeric) AS sum,`
          + ` MAX((CASE json_typeof(t0."extra" #> ${p(2)}::text[]) WHEN 'number' THEN (t0."extra" #> ${p(2)}::text[] #>> '{}')::double precision WHEN 'boolean' THEN CASE WHEN (t0."extra" #> ${p(2)}::text[] #>> '{}') = 'true' THEN 1 ELSE 0 END END)) AS max,`
          + ` MAX((CASE WHEN json_typeof(t0."extra" #> ${p(3)}::text[]) IN ('string', 'object', 'array') THEN (t0."extra" #> ${p(3)}::text[] #>> '{}') COLLATE "C" END)) AS max__text FROM "Employee" t0`,
    params: (c) => (c.d.name === 'sqlite' ? ['$."score"', '$."score"', '$."score"'] : [['score'], ['score'], ['score']]),
  },
];

for (const c of DIALECTS) {
  describe(`compiler (${c.d.name})`, () => {
    for (const k of cases) {
      it(`compiles ${k.what}`, () => {
        const compiled = k.compile(c.d);
        assert.equal(compiled.sql, k.sql(c.p, c.d.name));
        assert.deepEqual(compiled.params, k.params(c));
      });
    }
  });
}

describe('compiler: the SQLite statements run', () => {
  let db: Database.Database;
  before(() => {
    db = openSqlite();
  });
  after(() => db.close());

  for (const k of cases) {
    it(`runs ${k.what}`, () => {
      assert.doesNotThrow(() => run(db, k.compile(sqliteDialect)));
    });
  }

  it('returns at most perGroup.limit rows per group, in order', () => {
    const spec: SelectSpec = {
      dataClass: Employee,
      columns: [{ kind: 'storage', attr: E.lastName }, { kind: 'storage', attr: E.employerID }],
      where: null,
      order: [{ path: at(E.lastName), descending: false }],
      perGroup: { attr: E.employerID, limit: 2 },
    };
    const rows = (run(openSqlite(), compileSelect(sqliteDialect, spec, null)) as { lastName: string; employerID: number }[]);
    assert.deepEqual(rows.map((r) => [r.employerID, r.lastName]), [[1, 'Adams'], [1, 'Brown'], [2, 'Cole'], [3, 'Dee']]);
  });

  it('finds rows through an N→1 path and reads the alias', () => {
    const rows = run(openSqlite(), compileSelect(sqliteDialect, {
      dataClass: Employee,
      columns: [{ kind: 'storage', attr: E.lastName }, { kind: 'alias', attr: E.employerName }],
      where: eq(at(cityName, E.employer, C.city), 'Lyon'),
      order: [{ path: at(E.lastName), descending: false }],
    }, null));
    assert.deepEqual(rows, [{ lastName: 'Cole', employerName: 'Globex' }, { lastName: 'Dee', employerName: 'Gone Inc' }]);
  });

  it('changes no row when the stamp does not match, one when it does', () => {
    const fresh = openSqlite();
    const update = (stamp: number) => run(fresh, compileUpdate(sqliteDialect, Employee, 1, stamp, new Map([[E.lastName, 'Jones']]), T, null)) as { changes: number };
    assert.equal(update(3).changes, 0);
    assert.equal(update(4).changes, 1);
    assert.deepEqual(fresh.prepare('SELECT "lastName", "__stamp", "__timestamp" FROM "Employee" WHERE "ID" = 1').get(), { lastName: 'Jones', __stamp: 5, __timestamp: T });
  });

  it('groups counts by foreign key', () => {
    const rows = run(openSqlite(), compileCount(sqliteDialect, Employee, null, null, E.employerID));
    assert.deepEqual(rows, [{ g: 1, n: 3 }, { g: 2, n: 1 }, { g: 3, n: 1 }]);
  });
});
