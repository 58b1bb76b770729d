// What the compiler's test files (compiler-statements.test.ts: the exact SQL of each statement;
// compiler-guards.test.ts: row filters, bound values, the progress check) share: the test model
// and its attributes, builders of paths and conditions, the two dialects with their placeholders,
// and an in-memory SQLite database of the model's tables to run the statements on.

import Database from 'better-sqlite3';
import { buildModel } from '../../src/model/load-model.js';
import type { AliasAttribute, DataClassModel, Model, RelatedEntityAttribute, StorageAttribute } from '../../src/model/types.js';
import type { AttributePath, Condition } from '../../src/query/plan.js';
import type { CompiledSql } from '../../src/sql/compiler/builder.js';
import type { Dialect } from '../../src/sql/dialect.js';
import { postgresDialect } from '../../src/sql/dialect-postgres.js';
import { sqliteDialect } from '../../src/sql/dialect-sqlite.js';
import { fold } from '../../src/util/fold.js';
import { likeMatch } from '../../src/util/like.js';

export const model: Model = buildModel({
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

export const City = model.dataClassesByName.get('City') as DataClassModel;
export const Company = model.dataClassesByName.get('Company') as DataClassModel;
export const Employee = model.dataClassesByName.get('Employee') as DataClassModel;
export const storage = (dc: DataClassModel, name: string) => dc.attributesByName.get(name) as StorageAttribute;
export const relation = (dc: DataClassModel, name: string) => dc.attributesByName.get(name) as RelatedEntityAttribute;

export const E = {
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
export const C = { name: storage(Company, 'name'), city: relation(Company, 'city') };
export const cityName = storage(City, 'name');

export const at = (attr: StorageAttribute, ...via: RelatedEntityAttribute[]): AttributePath => ({ via, attr });
export const eq = (path: AttributePath, value: unknown, op: '=' | '!=' | '<' | '<=' | '>' | '>=' = '='): Condition => ({ kind: 'compare', path, op, value });
export const and = (...items: Condition[]): Condition => ({ kind: 'and', items });

export const T = 1_700_000_000_000;

export interface DialectCase {
  d: Dialect;
  /** the n-th placeholder */
  p(n: number): string;
  bool(b: boolean): unknown;
}

export const DIALECTS: DialectCase[] = [
  { d: sqliteDialect, p: () => '?', bool: (b) => (b ? 1 : 0) },
  { d: postgresDialect, p: (n) => `$${n}`, bool: (b) => b },
];

/** An in-memory SQLite database with the test model's tables and a few rows. */
export function openSqlite(): Database.Database {
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

export function run(db: Database.Database, { sql, params }: CompiledSql): unknown {
  const stmt = db.prepare(sql);
  return stmt.reader ? stmt.all(...(params as unknown[])) : stmt.run(...(params as unknown[]));
}
