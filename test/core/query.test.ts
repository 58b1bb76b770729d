// The query language end to end on a small datastore: ds.X.query() semantics (text folding,
// wildcards, nulls, relation paths, the shared related entity, aliases, object properties,
// placeholders), the SQL it becomes, and SQLite's own plan for indexed text.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { coreOf, Datastore, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import type { Entity } from '../../src/datastore/entities/entity.js';
import type { EntitySelection } from '../../src/datastore/selections/selection.js';
import { DatasetError } from '../../src/errors/dataset-error.js';
import { buildModel } from '../../src/model/load-model.js';
import { parseQuery } from '../../src/query/parser.js';
import { resolveQuery } from '../../src/query/resolve.js';
import { compileSelect } from '../../src/sql/compiler/statements.js';
import { postgresDialect } from '../../src/sql/dialect-postgres.js';
import { sqliteDialect } from '../../src/sql/dialect-sqlite.js';
import { fold } from '../../src/util/fold.js';
import { TEST_ENGINE, tempDir, testStorage } from '../support/helpers.js';

const MODEL = buildModel({
  name: 'Q',
  dataClasses: [
    {
      name: 'Company',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string', indexed: true },
        { name: 'extra', type: 'object' },
        { name: 'staff', kind: 'relatedEntities', type: 'PersonSelection', path: 'employer' },
      ],
    },
    {
      name: 'Person',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'lastName', type: 'string', indexed: true },
        { name: 'firstName', type: 'string' },
        { name: 'salary', type: 'number' },
        { name: 'born', type: 'date', dateOnly: true },
        { name: 'active', type: 'bool' },
        { name: 'employer', kind: 'relatedEntity', type: 'Company' },
        { name: 'employerName', kind: 'alias', path: 'employer.name' },
        { name: 'skills', kind: 'relatedEntities', type: 'SkillSelection', path: 'person' },
      ],
    },
    {
      name: 'Skill',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
        { name: 'level', type: 'long' },
        { name: 'person', kind: 'relatedEntity', type: 'Person' },
      ],
    },
  ],
});

const PEOPLE: [string, string, number | null, string, boolean, string][] = [
  // lastName, firstName, salary, born, active, company
  ['Smith', 'Anna', 5000, '1980-01-15', true, 'Acme'],
  ['smith', 'Bob', 7000, '1990-06-01', false, 'Acme'],
  ['Émile', 'Chloé', null, '1975-03-09', true, 'Globex'],
  ['Emile', 'Dan', 3000, '2000-12-31', true, 'Globex'],
  ['O\'Brien', 'Eve', 9000, '1985-07-04', false, 'Initech'],
  ['100% Pure', 'Finn', 1000, '1999-09-09', true, 'Initech'],
  ['Smithson', 'Gus', 4000, '1970-01-01', true, 'Acme'],
];
const SKILLS: [string, string, number][] = [['Smith', 'sql', 3], ['Smith', 'go', 1], ['smith', 'sql', 1], ['smith', 'go', 3], ['Émile', 'design', 5]];

describe('query language', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  const names = async (sel: EntitySelection) => (await sel.orderBy('ID').toArray()).map((e) => `${e.get('firstName')}`);
  const people = (q: string, ...params: unknown[]) => names(ds.Person.query(q, ...params));

  before(async () => {
    ds = await Datastore.open(MODEL, await testStorage(join(tmp.dir, 'q.sqlite')));
    await ds.transaction(async () => {
      const companies = new Map<string, Entity>();
      for (const [name, sector] of [['Acme', 'Tech'], ['Globex', 'Énergie'], ['Initech', 'tech']]) {
        const c = ds.Company.new();
        c.set('name', name);
        const tags = name === 'Acme' ? [{ name: 'Red', level: 1 }, { name: 'blue', level: 3 }] : name === 'Globex' ? [{ name: 'red', level: 3 }] : [];
        c.set('extra', { sector, address: { city: name === 'Acme' ? 'Paris' : 'Lyon' }, size: name.length, tags, codes: name === 'Initech' ? ['X1', 'Y2'] : ['Z9'] });
        await c.save();
        companies.set(name, c);
      }
      const byLast = new Map<string, Entity>();
      for (const [lastName, firstName, salary, born, active, company] of PEOPLE) {
        const p = ds.Person.new();
        p.set('lastName', lastName);
        p.set('firstName', firstName);
        p.set('salary', salary);
        p.set('born', born);
        p.set('active', active);
        p.set('employer', companies.get(company));
        await p.save();
        byLast.set(lastName, p);
      }
      for (const [who, name, level] of SKILLS) {
        const s = ds.Skill.new();
        s.set('name', name);
        s.set('level', level);
        s.set('person', byLast.get(who));
        await s.save();
      }
    });
  });
  after(async () => {
    await ds.close();
    tmp.remove();
  });

  const cases: [string, string, unknown[], string[]][] = [
    ['compares text without regard to case', 'lastName = smith', [], ['Anna', 'Bob']],
    ['compares text without regard to accents', 'lastName = emile', [], ['Chloé', 'Dan']],
    ['reads @ at the end as "begins with"', 'lastName = smi@', [], ['Anna', 'Bob', 'Gus']],
    ['reads @ at the start as "ends with"', "lastName == '@son'", [], ['Gus']],
    ['reads @ in the middle and several @', 'lastName = s@t@', [], ['Anna', 'Bob', 'Gus']],
    ['takes @ literally with ===', 'lastName === smi@', [], []],
    ['takes % and _ in values literally', "lastName = '100%@'", [], ['Finn']],
    ['matches begin as a prefix', 'lastName begin SMITHS', [], ['Gus']],
    ['finds a keyword with %', 'lastName % mit', [], ['Anna', 'Bob', 'Gus']],
    ['leaves nulls out of #', 'salary # 5000', [], ['Bob', 'Dan', 'Eve', 'Finn', 'Gus']],
    ['matches null with = null', 'salary = null', [], ['Chloé']],
    ['compares numbers', 'salary >= 5000 and salary < 9000', [], ['Anna', 'Bob']],
    ['compares dates given as YYYY-MM-DD', "born < '1980-01-01'", [], ['Chloé', 'Gus']],
    ['compares booleans', 'active = false', [], ['Bob', 'Eve']],
    ['reads IN lists, with wildcards', 'lastName IN [emile, "o@"]', [], ['Chloé', 'Dan', 'Eve']],
    ['compares a JSON property with an IN list of numbers and texts, each in its own class', 'employer.extra.size IN [6, "7", "tech"]', [], ['Chloé', 'Dan']],
    ['folds the texts of a JSON IN list, given through a placeholder', 'employer.extra.sector IN :1', [['TECH', 4]], ['Anna', 'Bob', 'Eve', 'Finn', 'Gus']],
    ['negates a JSON IN list of the other class as true', 'not(employer.extra.size IN ["x"])', [], ['Anna', 'Bob', 'Chloé', 'Dan', 'Eve', 'Finn', 'Gus']],
    ['reads a quoted value with an apostrophe', `lastName = "O'Brien"`, [], ['Eve']],
    ['binds AND tighter than OR', 'lastName = emile or lastName = smith and active = false', [], ['Bob', 'Chloé', 'Dan']],
    ['reads EXCEPT as AND NOT', 'lastName = smi@ EXCEPT active = false', [], ['Anna', 'Gus']],
    ['negates with NOT(...)', 'NOT(lastName = smi@) and salary > 2000', [], ['Dan', 'Eve']],
    ['follows N→1 relations', 'employer.name = globex', [], ['Chloé', 'Dan']],
    ['follows aliases', 'employerName begin init', [], ['Eve', 'Finn']],
    ['reads object properties, text folded', 'employer.extra.sector = TECH', [], ['Anna', 'Bob', 'Eve', 'Finn', 'Gus']],
    ['reads nested object properties', 'employer.extra.address.city = lyon', [], ['Chloé', 'Dan', 'Eve', 'Finn']],
    ['compares numbers inside objects', 'employer.extra.size > 5', [], ['Chloé', 'Dan', 'Eve', 'Finn']],
    ['takes values from placeholders, never as query text', 'lastName = :1', ["smith' OR '1'='1"], []],
    ['takes IN lists from placeholders', 'salary IN :1', [[3000, 9000]], ['Dan', 'Eve']],
    ['takes an attribute path from a placeholder', ':1 = :2', ['employer.name', 'acme'], ['Anna', 'Bob', 'Gus']],
    ['follows a 1→N relation: at least one related entity matches', 'skills.name = sql', [], ['Anna', 'Bob']],
    ['holds criteria on one 1→N path to the same related entity', 'skills.name = sql and skills.level = 3', [], ['Anna']],
    ['lets {n} ask for another related entity', 'skills.name = sql and skills{2}.name = go', [], ['Anna', 'Bob']],
  ];
  for (const [what, query, params, expected] of cases) {
    it(`${what}: ${query}`, async () => {
      assert.deepEqual(await people(query, ...params), expected);
    });
  }

  it('follows 1→N relations from the one side and at depth', async () => {
    const companies = async (q: string) => (await ds.Company.query(q).orderBy('ID').toArray()).map((c) => c.get('name'));
    assert.deepEqual(await companies('staff.lastName = emile'), ['Globex']);
    assert.deepEqual(await companies('staff.skills.level >= 3'), ['Acme', 'Globex']);
    assert.deepEqual(await companies('staff.salary = null'), ['Globex']);
  });

  it('queries collections inside objects: any element, linked elements, negations', async () => {
    const companies = async (q: string, ...params: unknown[]) => (await ds.Company.query(q, ...params).orderBy('ID').toArray()).map((c) => c.get('name'));
    assert.deepEqual(await companies('extra.tags[].name = RED'), ['Acme', 'Globex']);
    assert.deepEqual(await companies('extra.codes[] = x1'), ['Initech']);
    assert.deepEqual(await companies('extra.codes[] IN :1', ['z9', 'y2']), ['Acme', 'Globex', 'Initech']);
    // unlinked: each criterion may match another element; linked [a]: the same element
    assert.deepEqual(await companies('extra.tags[].name = red and extra.tags[].level = 3'), ['Acme', 'Globex']);
    assert.deepEqual(await companies('extra.tags[a].name = red and extra.tags[a].level = 3'), ['Globex']);
    // [] with #: every element differs; [a] with #: at least one element differs
    assert.deepEqual(await companies('extra.tags[].level # 3'), ['Initech']);
    assert.deepEqual(await companies('extra.tags[a].level # 3'), ['Acme']);
    assert.deepEqual(await names(ds.Person.query('employer.extra.tags[].name = blue')), ['Anna', 'Bob', 'Gus']);
    // elements that are no objects have no properties: they match nothing (codes holds text)
    assert.deepEqual(await companies('extra.codes[].name = x1'), []);
    assert.deepEqual(await companies('extra.codes[].name = null'), ['Acme', 'Globex', 'Initech']);
    // and # never matches null: such elements differ in neither form
    assert.deepEqual(await companies('extra.codes[].name # x1'), []);
    assert.deepEqual(await companies('extra.codes[a].name # x1'), []);
    // only an array is a collection: an object or a text is no collection of anything
    assert.deepEqual(await companies('extra.address[].city = lyon'), []);
    assert.deepEqual(await companies('extra.sector[] = tech'), []);
  });

  it('runs a query of 1500 criteria: the SQL groups them as a balanced tree, not a chain the database finds too deep', async () => {
    const ids = Array.from({ length: 1500 }, (_, i) => `ID=${i % 9}`).join('|');
    assert.equal(await ds.Person.query(ids).length, await ds.Person.query('ID < 9').length);
    assert.equal(await ds.Company.query(Array.from({ length: 500 }, () => 'staff.ID=1').join('|')).length, 1);
    // a selection queried over and over: its conditions join one list, grouped the same way
    let narrowed = ds.Person.all();
    for (let i = 0; i < 1500; i++) narrowed = narrowed.query('ID > :1', i % 3);
    assert.equal(await narrowed.length, await ds.Person.query('ID > 2').length);
  });

  it('sorts by an order by clause of the query, text without regard to case', async () => {
    const sorted = (await ds.Person.query('salary > 0 order by lastName desc, firstName').toArray()).map((e) => e.get('firstName'));
    assert.deepEqual(sorted, ['Gus', 'Anna', 'Bob', 'Eve', 'Dan', 'Finn']);
  });

  it('looks text up by attribute without regard to case or accents (findBy, the :attribute(value) form)', async () => {
    assert.equal((await ds.Person.findBy('lastName', 'ÉMILE'))?.get('firstName'), 'Chloé');
  });

  it('folds letters that are not a letter plus a mark (ł, ı, ø, ß, æ, œ) too', () => {
    assert.deepEqual(['Łódź', 'Aydın', 'Øre', 'Straße', 'Æther', 'Œuvre', 'ﬁne'].map(fold), ['lodz', 'aydin', 'ore', 'strasse', 'aether', 'oeuvre', 'fine']);
  });

  it('narrows a selection with query()', async () => {
    assert.deepEqual(await names(ds.Person.query('active = true').query('lastName = smi@')), ['Anna', 'Gus']);
  });

  const errors: [string, unknown[], RegExp][] = [
    ['lastNme = x', [], /at offset 0: The "lastNme" attribute cannot be found in the "Person" dataclass, did you mean 'lastName'\?/],
    ['salary > abc', [], /at offset 9: salary > "abc": Person\.salary is number/],
    ['salary > :2', [1], /uses :2 but only 1 parameter was given/],
    ['salary = :1', [null], /:1 is null/],
    ['skills = 1', [], /ends on the 1→N relation Person\.skills/],
    ['lastName.x = 1', [], /Person\.lastName is a string attribute, nothing can follow it/],
    ['salary begin 1', [], /begin compares text/],
    [':1 = 1', [5], /:1 stands for an attribute path/],
    ['salary > 1 order by :1', ['lastName'], /at offset 20: cannot sort by ':1': sort by attribute names/],
    ['salary > 1 order by skills[].name', [], /at offset 20: cannot sort by 'skills\[\]\.name'/],
  ];
  for (const [query, params, message] of errors) {
    it(`refuses ${query} with a message that says where and why`, () => {
      assert.throws(() => ds.Person.query(query, ...params), (e: DatasetError) => e.code === 'INVALID_FILTER' && message.test(e.message));
    });
  }

  it('keeps every value out of the SQL text (injection)', () => {
    const hostile = ["'; DROP TABLE Person; --", '" OR 1=1 --', 'x UNION SELECT * FROM sqlite_master', '\u0000\u001b[31m', '/* comment */'];
    for (const v of hostile) {
      for (const q of [`lastName = :1`, `lastName = '${v.replaceAll("'", "\\'")}'`, `employer.extra.sector = :1`, `lastName IN [:1]`]) {
        const { where } = resolveQuery(MODEL.dataClassesByName.get('Person')!, parseQuery(q), [v], () => true);
        for (const d of [sqliteDialect, postgresDialect]) {
          const { sql } = compileSelect(d, { dataClass: MODEL.dataClassesByName.get('Person')!, columns: [], where, order: [] }, null);
          for (const fragment of ['DROP', 'UNION', '--', '/*', 'OR 1=1', '\u0000']) assert.ok(!sql.includes(fragment), `${q} → ${sql}`);
        }
      }
    }
  });

  it('compiles a 1→N path to EXISTS and text to the folded column, for both dialects', () => {
    const person = MODEL.dataClassesByName.get('Company')!;
    const { where } = resolveQuery(person, parseQuery('staff.lastName = Émile and staff.salary > :1'), [1000], () => true);
    const sqlite = compileSelect(sqliteDialect, { dataClass: person, columns: [], where, order: [] }, null);
    // (SQLite: each company is checked against the query time limit, storage/sqlite.ts)
    assert.equal(sqlite.sql, 'SELECT  FROM "Company" t0 WHERE dataset_progress(t0."ID") AND (EXISTS (SELECT 1 FROM "Person" t1 WHERE t1."employerID" = t0."ID" AND (t1."lastName__fold" = ? AND t1."salary" > ?)))');
    assert.deepEqual(sqlite.params, ['emile', 1000]);
    const pg = compileSelect(postgresDialect, { dataClass: person, columns: [], where, order: [] }, null);
    assert.equal(pg.sql, 'SELECT  FROM "Company" t0 WHERE (EXISTS (SELECT 1 FROM "Person" t1 WHERE t1."employerID" = t0."ID" AND (t1."lastName__fold" = $1 AND t1."salary" > $2)))');
  });

  it('compiles collection criteria to EXISTS over the JSON elements, for both dialects', () => {
    const company = MODEL.dataClassesByName.get('Company')!;
    const { where } = resolveQuery(company, parseQuery('extra.tags[a].name = Red and extra.tags[a].level > 2'), [], () => true);
    const sqlite = compileSelect(sqliteDialect, { dataClass: company, columns: [], where, order: [] }, null);
    // the element rows, then each criterion on them (a JSON value's classes: JSON paths bound at each use)
    assert.ok(sqlite.sql.startsWith(`SELECT  FROM "Company" t0 WHERE dataset_progress(t0."ID") AND (EXISTS (SELECT 1 FROM (SELECT value, type FROM json_each(t0."extra", ?) WHERE typeof(key) = 'integer') j1 WHERE dataset_progress(j1.type) AND (`), sqlite.sql);
    assert.ok(sqlite.sql.includes('dataset_fold('), sqlite.sql);
    const name = '$."name"';
    const level = '$."level"';
    assert.deepEqual(sqlite.params, ['$."tags"', name, name, 'red', name, level, level, 2, level]);
    const pg = compileSelect(postgresDialect, { dataClass: company, columns: [], where, order: [] }, null);
    assert.ok(pg.sql.startsWith(`SELECT  FROM "Company" t0 WHERE (EXISTS (SELECT 1 FROM json_array_elements(CASE WHEN json_typeof(t0."extra" #> $1::text[]) = 'array' THEN t0."extra" #> $1::text[] END) j1(value) WHERE (`), pg.sql);
    assert.ok(pg.sql.includes('(dataset_fold('), pg.sql);
    assert.deepEqual(pg.params, [['tags'], ['name'], ['name'], 'red', ['name'], ['level'], ['level'], 2, ['level']]);
  });

  it('answers equality, prefix and sorted queries on an indexed text attribute from its index (the engine\'s plan)', async () => {
    const person = MODEL.dataClassesByName.get('Person')!;
    const storage = coreOf(ds).storage;
    // PostgreSQL plans a seven-row table as a scan whatever the indexes: told not to scan, it shows whether an index serves the query
    const explain = (sql: string, params: readonly unknown[]): Promise<string> => TEST_ENGINE === 'postgres'
      ? storage.transaction(async () => {
        await storage.exec('SET LOCAL enable_seqscan = off');
        return (await storage.column(`EXPLAIN ${sql}`, params)).join('; ');
      })
      : storage.all(`EXPLAIN QUERY PLAN ${sql}`, params).then((rows) => rows.map((r) => r.detail).join('; '));
    const usesIndex = TEST_ENGINE === 'postgres' ? /(Bitmap )?Index (Only )?Scan( Backward)? (using|on) "?idx_Person_lastName__fold/ : /USING (COVERING )?INDEX idx_Person_lastName__fold/;
    for (const [q, order] of [['lastName = Smith', []], ['lastName = smi@', []], ['lastName begin smi', []], ['ID > 0', ['lastName']], ['ID > 0', ['lastName desc']]] as const) {
      const { where } = resolveQuery(person, parseQuery(q), [], () => true);
      const terms = order.map((o) => ({ path: { via: [], attr: person.attributesByName.get('lastName') as never }, descending: o.endsWith('desc') }));
      const { sql, params } = compileSelect(storage.dialect, { dataClass: person, columns: [{ kind: 'storage', attr: person.key }], where, order: terms, limit: 5 }, null);
      const plan = await explain(sql, params);
      assert.match(plan, usesIndex, `${q} ${order.join()}: ${plan}`);
      if (order.length > 0) assert.doesNotMatch(plan, /Sort|TEMP B-TREE/, `${q} ${order.join()}: sorted by the index, not after: ${plan}`);
    }
  });
});
