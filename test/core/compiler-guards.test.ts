// What the SQL compiler guards, on SQLite and PostgreSQL: a caller's row filter at every FROM and
// in every UPDATE and DELETE; values bound, never in the SQL text (injection); the progress check
// (the query time limit on SQLite) where a statement's work multiplies. The exact SQL of each
// statement is compiler-statements.test.ts; what they share, compiler-shared.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DataClassModel, StorageAttribute } from '../../src/model/types.js';
import type { AttributePath, Condition, RowFilter, SelectSpec } from '../../src/query/plan.js';
import { compileAggregate, compileDistinct, compileTextExtreme } from '../../src/sql/compiler/aggregates.js';
import type { CompiledSql } from '../../src/sql/compiler/builder.js';
import { compileCount, compileDelete, compileInsert, compileLockRow, compileSelect, compileUpdate } from '../../src/sql/compiler/statements.js';
import type { Dialect } from '../../src/sql/dialect.js';
import { postgresDialect } from '../../src/sql/dialect-postgres.js';
import { sqliteDialect } from '../../src/sql/dialect-sqlite.js';
import { and, at, C, cityName, Company, DIALECTS, E, Employee, eq, model, openSqlite, run, storage, T } from './compiler-shared.js';

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
