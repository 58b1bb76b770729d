// The SQL compiler: the exact SQL text and bound parameters for SQLite and PostgreSQL. The SQLite
// statements are also run on an in-memory database, so that the expected text is known to work.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { buildModel } from '../../src/model/load-model.js';
import type { AliasAttribute, DataClassModel, Model, RelatedEntityAttribute, StorageAttribute } from '../../src/model/types.js';
import type { AttributePath, Condition, RowFilter, SelectSpec } from '../../src/query/plan.js';
import {
  compileAggregate, compileCount, compileDelete, compileDistinct, compileInsert, compileLockRow, compileSelect, compileTextExtreme, compileUpdate, type CompiledSql,
} from '../../src/sql/compiler.js';
import type { Dialect } from '../../src/sql/dialect.js';
import { postgresDialect } from '../../src/sql/dialect-postgres.js';
import { sqliteDialect } from '../../src/sql/dialect-sqlite.js';
import { fold } from '../../src/util/fold.js';
import { likeMatch } from '../../src/util/like.js';

const model: Model = buildModel({
  name: 'CompilerTest',
  dataClasses: [
    { name: 'City', attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'name', type: 'string' }] },
    {
      name: 'Company',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
        { name: 'city', kind: 'relatedEntity', type: 'City' },
        { name: 'staff', kind: 'relatedEntities', type: 'EmployeeSelection', path: 'employer' },
      ],
    },
    {
      name: 'Employee',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'lastName', type: 'string' },
        { name: 'salary', type: 'number' },
        { name: 'active', type: 'bool' },
        { name: 'hired', type: 'date', dateOnly: true },
        { name: 'extra', type: 'object' },
        { name: 'employer', kind: 'relatedEntity', type: 'Company' },
        { name: 'employerName', kind: 'alias', path: 'employer.name' },
      ],
    },
  ],
});

const City = model.dataClassesByName.get('City') as DataClassModel;
const Company = model.dataClassesByName.get('Company') as DataClassModel;
const Employee = model.dataClassesByName.get('Employee') as DataClassModel;
const storage = (dc: DataClassModel, name: string) => dc.attributesByName.get(name) as StorageAttribute;
const relation = (dc: DataClassModel, name: string) => dc.attributesByName.get(name) as RelatedEntityAttribute;

const E = {
  ID: storage(Employee, 'ID'),
  lastName: storage(Employee, 'lastName'),
  salary: storage(Employee, 'salary'),
  active: storage(Employee, 'active'),
  hired: storage(Employee, 'hired'),
  extra: storage(Employee, 'extra'),
  employerID: storage(Employee, 'employerID'),
  employer: relation(Employee, 'employer'),
  employerName: Employee.attributesByName.get('employerName') as AliasAttribute,
};
const C = { name: storage(Company, 'name'), city: relation(Company, 'city') };
const cityName = storage(City, 'name');

const at = (attr: StorageAttribute, ...via: RelatedEntityAttribute[]): AttributePath => ({ via, attr });
const eq = (path: AttributePath, value: unknown, op: '=' | '!=' | '<' | '<=' | '>' | '>=' = '='): Condition => ({ kind: 'compare', path, op, value });
const and = (...items: Condition[]): Condition => ({ kind: 'and', items });

const HIRED = new Date('2024-03-05T12:34:56.000Z');
const T = 1_700_000_000_000;

interface DialectCase {
  d: Dialect;
  /** the n-th placeholder */
  p(n: number): string;
  bool(b: boolean): unknown;
}
/** SQLite's order of nulls, as PostgreSQL is told it (Dialect.sql.nullsOrder) */
const nullsLast = (dialect: string) => (dialect === 'postgres' ? ' NULLS LAST' : '');
const nullsFirst = (dialect: string) => (dialect === 'postgres' ? ' NULLS FIRST' : '');

const DIALECTS: DialectCase[] = [
  { d: sqliteDialect, p: () => '?', bool: (b) => (b ? 1 : 0) },
  { d: postgresDialect, p: (n) => `$${n}`, bool: (b) => b },
];

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

/** An in-memory SQLite database with the test model's tables and a few rows. */
function openSqlite(): Database.Database {
  const db = new Database(':memory:');
  // the query time limit's check, as the driver registers it (storage/sqlite.ts), never past its limit here
  db.function('dataset_progress', { deterministic: false }, (_row: unknown) => 1);
  db.function('dataset_like', { deterministic: true, varargs: true }, (t: unknown, p: unknown, folded?: unknown) => (t === null || p === null ? null : likeMatch(folded === 1 ? fold(String(t)) : String(t), String(p)) ? 1 : 0));
  const hidden = '"__stamp" INTEGER NOT NULL DEFAULT 1, "__timestamp" INTEGER NOT NULL DEFAULT 0';
  db.exec(`
    CREATE TABLE "City" ("ID" INTEGER PRIMARY KEY AUTOINCREMENT, "name" TEXT, "name__fold" TEXT, ${hidden});
    CREATE TABLE "Company" ("ID" INTEGER PRIMARY KEY AUTOINCREMENT, "name" TEXT, "name__fold" TEXT, "cityID" INTEGER, ${hidden});
    CREATE TABLE "Employee" ("ID" INTEGER PRIMARY KEY AUTOINCREMENT, "lastName" TEXT, "lastName__fold" TEXT, "salary" REAL, "active" INTEGER,
      "hired" TEXT, "extra" TEXT, "employerID" INTEGER, ${hidden});
    INSERT INTO "City" ("name", "name__fold") VALUES ('Paris', 'paris'), ('Lyon', 'lyon');
    INSERT INTO "Company" ("name", "name__fold", "cityID") VALUES ('Acme', 'acme', 1), ('Globex', 'globex', 2), ('Gone Inc', 'gone inc', 2);
    INSERT INTO "Employee" ("lastName", "lastName__fold", "salary", "active", "employerID", "__stamp") VALUES
      ('Smith', 'smith', 1000, 1, 1, 4), ('Adams', 'adams', 2000, 0, 1, 1), ('Brown', 'brown', 10, 1, 1, 1), ('Cole', 'cole', 50, 1, 2, 1), ('Dee', 'dee', 60, 0, 3, 1);
  `);
  return db;
}

function run(db: Database.Database, { sql, params }: CompiledSql): unknown {
  const stmt = db.prepare(sql);
  return stmt.reader ? stmt.all(...(params as unknown[])) : stmt.run(...(params as unknown[]));
}

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

describe('compiler: a row filter (restrict) applies at every FROM and in every UPDATE and DELETE', () => {
  // The caller may see the companies not named Globex and the active employees; cities are all visible.
  const restrict: RowFilter = (dc) => (dc === Company ? eq(at(C.name), 'Globex', '!=') : dc === Employee ? eq(at(E.active), true) : null);
  const staff = Company.attributesByName.get('staff') as Extract<Condition, { kind: 'exists' }>['relation'];
  const statements: [string, (d: Dialect) => CompiledSql][] = [
    ['a select through N→1 paths (scalar subqueries), with an alias column and an order', (d) => compileSelect(d, {
      dataClass: Employee,
      columns: [{ kind: 'storage', attr: E.lastName }, { kind: 'alias', attr: E.employerName }],
      where: eq(at(cityName, E.employer, C.city), 'Lyon'),
      order: [{ path: at(C.name, E.employer), descending: false }],
    }, restrict)],
    ['a select through a 1→N relation (EXISTS) and a sub-select (IN)', (d) => compileSelect(d, {
      dataClass: Company,
      columns: [{ kind: 'storage', attr: C.name }],
      where: and(
        { kind: 'exists', via: [], relation: staff, where: eq(at(E.salary), 0, '>') },
        { kind: 'inSelect', path: at(storage(Company, 'ID')), select: { dataClass: Employee, columns: [{ kind: 'storage', attr: E.employerID }], where: null, order: [] } },
      ),
      order: [{ path: at(C.name), descending: false }],
    }, restrict)],
    ['a count', (d) => compileCount(d, Employee, null, restrict)],
    ['an aggregate', (d) => compileAggregate(d, Employee, null, at(E.salary), ['sum', 'count'], restrict)],
    ['distinct values', (d) => compileDistinct(d, Employee, null, at(E.lastName), null, 0, restrict)],
    ['the highest text', (d) => compileTextExtreme(d, Employee, null, at(E.lastName), true, restrict)],
    ['an update', (d) => compileUpdate(d, Employee, 2, 1, new Map([[E.lastName, 'Ames']]), T, restrict)],
    ['a delete', (d) => compileDelete(d, Employee, 2, 1, restrict)],
    ['a row lock', (d) => compileLockRow(d, Employee, 2, restrict)],
  ];

  for (const c of DIALECTS) {
    for (const [what, compile] of statements) {
      it(`${c.d.name}: filters every FROM of a filtered dataclass in ${what}`, () => {
        const { sql } = compile(c.d);
        const froms = [...sql.matchAll(/(?:FROM|UPDATE) "(\w+)"(?: (t\d+))?/g)];
        assert.ok(froms.length > 0, sql);
        for (const [, table, alias] of froms) {
          const on = alias ?? `"${table}"`;
          if (table === 'Company') assert.ok(sql.includes(`${on}."name" <> `), `${table} ${on} is filtered in: ${sql}`);
          if (table === 'Employee') assert.ok(sql.includes(`${on}."active" = `), `${table} ${on} is filtered in: ${sql}`);
        }
      });
    }
  }

  it('compiles the filter where it belongs: the same statement, AND the filter, params in text order', () => {
    const { sql, params } = compileSelect(sqliteDialect, {
      dataClass: Employee, columns: [{ kind: 'storage', attr: E.ID }], where: eq(at(E.salary), 100, '>'), order: [],
    }, restrict);
    assert.equal(sql, 'SELECT t0."ID" AS "ID" FROM "Employee" t0 WHERE t0."active" = ? AND t0."salary" > ?');
    assert.deepEqual(params, [1, 100]);
  });

  it('binds the parameters of a filtered relation in the ORDER BY after those of the WHERE (positional placeholders)', () => {
    const byRegion: RowFilter = (dc) => (dc === Company ? eq(at(C.name), 'Acme') : dc === Employee ? eq(at(E.salary), 10, '>') : null);
    const compiled = compileSelect(sqliteDialect, {
      dataClass: Employee, columns: [{ kind: 'storage', attr: E.lastName }], where: eq(at(E.salary), 9999, '<'),
      order: [{ path: at(C.name, E.employer), descending: false }, { path: at(E.lastName), descending: false }],
    }, byRegion);
    assert.deepEqual(compiled.params, [10, 9999, 'Acme']);
    // Smith (1000) and Brown (10, not > 10) work for Acme; Adams (2000) too: all sort after the others' null employer names
    assert.deepEqual((run(openSqlite(), compiled) as { lastName: string }[]).map((r) => r.lastName), ['Cole', 'Dee', 'Adams', 'Smith']);
  });

  it('never filters inside a row filter itself (a filter through a relation reads that relation whole)', () => {
    const throughEmployer: RowFilter = (dc) => (dc === Employee ? eq(at(C.name, E.employer), 'Acme') : dc === Company ? eq(at(C.name), 'Acme', '!=') : null);
    const { sql } = compileCount(sqliteDialect, Employee, null, throughEmployer);
    assert.equal(sql, 'SELECT COUNT(*) AS n FROM "Employee" t0 WHERE (SELECT t1."name" FROM "Company" t1 WHERE t1."ID" = t0."employerID") = ?');
  });

  it('gives the filtered answers on SQLite: hidden rows are not read, counted, summed, changed or deleted', () => {
    const db = openSqlite();
    const rows = (k: CompiledSql) => run(db, k) as Record<string, unknown>[];
    const [select, companies, count, aggregate, distinct, highest, update, remove] = statements.map(([, compile]) => compile(sqliteDialect));
    assert.deepEqual(rows(select), []); // Cole works for Globex (hidden), Dee is inactive
    assert.deepEqual(rows(companies), [{ name: 'Acme' }]); // Gone Inc has no visible staff
    assert.deepEqual(rows(count), [{ n: 3 }]);
    assert.deepEqual(rows(aggregate), [{ sum: 1060, count: 3 }]);
    assert.deepEqual(rows(distinct).map((r) => r.v), ['Brown', 'Cole', 'Smith']);
    assert.deepEqual(rows(highest), [{ v: 'Smith' }]);
    assert.equal((run(db, update) as { changes: number }).changes, 0); // Adams is inactive
    assert.equal((run(db, remove) as { changes: number }).changes, 0); // so is Dee
  });
});

describe('compiler: values never reach the SQL text (injection)', () => {
  const EVIL = [
    `'); DROP TABLE "Employee"; --`,
    `Robert'); DELETE FROM "Company"; --`,
    `" OR 1=1; --`,
    `x' OR '1'='1`,
    `$1; SELECT ?`,
  ];

  for (const c of DIALECTS) {
    for (const evil of EVIL) {
      it(`${c.d.name}: binds ${JSON.stringify(evil)} in select, in, count, insert, update and delete`, () => {
        const statements: CompiledSql[] = [
          compileSelect(c.d, {
            dataClass: Employee, columns: [{ kind: 'storage', attr: E.ID }],
            where: and(eq(at(E.lastName), evil), eq(at(C.name, E.employer), evil, '!='), { kind: 'in', path: at(E.lastName), values: [evil, 'ok'] }),
            order: [{ path: at(E.lastName), descending: false }],
          }, null),
          compileCount(c.d, Employee, eq(at(E.lastName), evil), null, E.employerID),
          compileInsert(c.d, Employee, new Map<StorageAttribute, unknown>([[E.lastName, evil], [E.extra, { evil }]]), 1, T),
          compileUpdate(c.d, Employee, evil, 1, new Map<StorageAttribute, unknown>([[E.lastName, evil]]), T, null),
          compileDelete(c.d, Employee, evil, 1, null),
        ];
        for (const { sql, params } of statements) {
          assert.ok(!sql.includes(evil), `value in SQL text: ${sql}`);
          assert.ok(!sql.includes("'"), `a string literal in SQL text: ${sql}`);
          assert.ok(params.includes(evil), 'value bound');
          // one placeholder per parameter
          const marks = c.d === sqliteDialect ? (sql.match(/\?/g) ?? []).length : new Set(sql.match(/\$\d+/g) ?? []).size;
          assert.equal(marks, params.length, sql);
        }
      });
    }
  }

  it('sqlite: stores the values literally and leaves the tables in place', () => {
    const db = openSqlite();
    for (const evil of EVIL) {
      const row = run(db, compileInsert(sqliteDialect, Employee, new Map([[E.lastName, evil]]), 1, T)) as { ID: number }[];
      const found = run(db, compileSelect(sqliteDialect, {
        dataClass: Employee, columns: [{ kind: 'storage', attr: E.lastName }], where: eq(at(E.ID), row[0].ID), order: [],
      }, null));
      assert.deepEqual(found, [{ lastName: evil }]);
    }
    assert.deepEqual(db.prepare('SELECT COUNT(*) AS n FROM "Company"').get(), { n: 3 });
    assert.deepEqual(db.prepare('SELECT COUNT(*) AS n FROM "Employee"').get(), { n: 5 + EVIL.length });
    db.close();
  });
});

describe('the progress check (the query time limit on SQLite)', () => {
  const Company = model.dataClassesByName.get('Company') as DataClassModel;
  const staff = Company.attributesByName.get('staff') as Extract<Condition, { kind: 'exists' }>['relation'];
  const companies = (where: Condition | null): SelectSpec => ({ dataClass: Company, columns: [{ kind: 'storage', attr: C.name }], where, order: [] });
  const oneLevel: Condition = { kind: 'exists', via: [], relation: staff, where: eq(at(E.salary), 0, '>') };
  // companies with an employee whose employer has an employee paid more than 0: two levels
  const twoLevels: Condition = { kind: 'exists', via: [], relation: staff, where: { kind: 'exists', via: [E.employer], relation: staff, where: eq(at(E.salary), 0, '>') } };

  it('leaves a statement without correlated subqueries as it was', () => {
    assert.doesNotMatch(compileSelect(sqliteDialect, companies(eq(at(C.name), 'Acme')), null).sql, /dataset_progress/);
    assert.doesNotMatch(compileCount(sqliteDialect, Company, null, null).sql, /dataset_progress/);
  });

  it('checks each row of a statement whose filter goes through a relation, not the related rows (the innermost subquery)', () => {
    const { sql, params } = compileSelect(sqliteDialect, companies(oneLevel), null);
    assert.equal(sql, 'SELECT t0."name" AS "name" FROM "Company" t0 WHERE dataset_progress(t0."ID") AND EXISTS (SELECT 1 FROM "Employee" t1 WHERE t1."employerID" = t0."ID" AND t1."salary" > ?)');
    assert.deepEqual(params, [0]);
    assert.match(compileCount(sqliteDialect, Company, oneLevel, null).sql, /WHERE dataset_progress\(t0\."ID"\) AND EXISTS/);
  });

  it('checks each row of a subquery that holds another one, not the rows of the innermost', () => {
    const { sql, params } = compileSelect(sqliteDialect, companies(twoLevels), null);
    assert.equal(sql.match(/dataset_progress/g)?.length, 2, sql);
    assert.match(sql, /^SELECT t0\."name" AS "name" FROM "Company" t0 WHERE dataset_progress\(t0\."ID"\) AND EXISTS \(SELECT 1 FROM "Employee" t1 WHERE dataset_progress\(t1\."employerID"\) AND t1\."employerID" = t0\."ID" AND EXISTS \(SELECT 1 FROM "Employee" t3 WHERE t3\."employerID" = /);
    assert.deepEqual(params, [0]);
  });

  it('checks each row a LIKE pattern is matched on (its cost is the text\'s length times its own)', () => {
    const like: Condition = { kind: 'like', path: at(E.lastName), pattern: '%a%' };
    assert.match(compileSelect(sqliteDialect, { dataClass: Employee, columns: [{ kind: 'storage', attr: E.ID }], where: like, order: [] }, null).sql, /WHERE dataset_progress\(t0\."ID"\) AND t0\."lastName" LIKE/);
    assert.match(compileSelect(sqliteDialect, companies({ kind: 'exists', via: [], relation: staff, where: like }), null).sql, /FROM "Employee" t1 WHERE dataset_progress\(t1\."employerID"\) AND /);
  });

  it('checks the elements of a JSON array by a column they have (value), where a LIKE is matched on them', () => {
    const db = openSqlite();
    try {
      const elements: Condition = { kind: 'elements', path: { via: [], attr: E.extra, json: ['tags'] }, where: { kind: 'like', path: { via: [], attr: E.extra, json: [] }, pattern: '%a%' } } as Condition;
      const { sql, params } = compileSelect(sqliteDialect, { dataClass: Employee, columns: [{ kind: 'storage', attr: E.ID }], where: elements, order: [] }, null);
      assert.match(sql, /dataset_progress\(j\d+\.type\)/, sql);
      db.prepare(sql).all(...params);
    } finally {
      db.close();
    }
  });

  it('matches texts of any length (a whole fold, a JSON value) with dataset_like, which checks the limit as it goes; the folded column with LIKE', () => {
    const db = openSqlite();
    try {
      const like = (path: AttributePath): string => compileSelect(sqliteDialect, { dataClass: Employee, columns: [{ kind: 'storage', attr: E.ID }], where: { kind: 'like', path, pattern: '%mi%' }, order: [] }, null).sql;
      for (const path of [{ via: [], attr: E.lastName, fold: 'computed' }, { via: [], attr: E.extra, json: ['x'], fold: true }] as AttributePath[]) {
        const sql = like(path);
        assert.match(sql, /dataset_like\(CAST\(/, sql);
        assert.doesNotMatch(sql, / LIKE /, sql);
      }
      const stored = like({ via: [], attr: E.lastName, fold: true });
      assert.match(stored, / LIKE \? ESCAPE/, stored);
      assert.doesNotMatch(stored, /dataset_like/, stored);
      const { sql, params } = compileSelect(sqliteDialect, { dataClass: Employee, columns: [{ kind: 'storage', attr: E.ID }], where: { kind: 'like', path: { via: [], attr: E.lastName, fold: 'computed' }, pattern: '%mi%' }, order: [] }, null);
      assert.deepEqual(db.prepare(sql).all(...params), [{ ID: 1 }]);
    } finally {
      db.close();
    }
  });

  it('puts none in PostgreSQL statements (statement_timeout stops them)', () => {
    assert.doesNotMatch(compileSelect(postgresDialect, companies(twoLevels), null).sql, /dataset_progress/);
  });
});
