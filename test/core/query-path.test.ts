// The one attribute-path resolver (src/query/path.ts) and what its readers make of a path: sort
// terms (src/query/order.ts) and computation paths. Pure: the model only, no database.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DatasetError } from '../../src/errors/dataset-error.js';
import type { ErrorName } from '../../src/errors/registry.js';
import { buildModel } from '../../src/model/load-model.js';
import type { AttributeModel, DataClassModel } from '../../src/model/types.js';
import { parseOrderBy } from '../../src/query/order.js';
import { attributeOf, namesOf, resolveValuePath, walkPath } from '../../src/query/path.js';

const MODEL = buildModel({
  name: 'P',
  dataClasses: [
    {
      name: 'City',
      attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'name', type: 'string' }],
    },
    {
      name: 'Company',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
        { name: 'logo', type: 'image' },
        { name: 'extra', type: 'object' },
        { name: 'city', kind: 'relatedEntity', type: 'City' },
        { name: 'staff', kind: 'relatedEntities', type: 'PersonSelection', path: 'employer' },
        { name: 'staffNames', kind: 'alias', path: 'staff.lastName' },
        { name: 'secret', type: 'string', exposed: false },
      ],
    },
    {
      name: 'Person',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'lastName', type: 'string' },
        { name: 'salary', type: 'number' },
        { name: 'employer', kind: 'relatedEntity', type: 'Company' },
        { name: 'employerCity', kind: 'alias', path: 'employer.city' },
        { name: 'cityName', kind: 'alias', path: 'employer.city.name' },
        { name: 'full', kind: 'calculated', type: 'string' },
      ],
    },
  ],
});
const dc = (name: string) => MODEL.dataClassesByName.get(name) as DataClassModel;
const ALL = () => true;
const exposedOnly = (a: AttributeModel) => a.exposed;

function fails(fn: () => unknown, code: ErrorName, ...mentions: string[]): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof DatasetError, String(e));
    assert.equal(e.code, code, e.message);
    for (const m of mentions) assert.ok(e.message.includes(m), `${JSON.stringify(e.message)} should mention ${JSON.stringify(m)}`);
    return true;
  });
}

const failure = (message: string, unknown: boolean) => new DatasetError(unknown ? 'UNKNOWN_ATTRIBUTE' : 'INVALID_VALUE', message);

describe('walkPath', () => {
  it('follows N→1 and 1→N relations, and ends on the attribute named last', () => {
    const { hops, end } = walkPath(dc('City'), namesOf('name'), ALL, failure);
    assert.deepEqual(hops, []);
    assert.equal(end.kind === 'storage' && end.attr.name, 'name');
    const deep = walkPath(dc('Company'), namesOf('staff.employer.city.name'), ALL, failure);
    assert.deepEqual(deep.hops.map((h) => `${h.kind}:${h.attr.name}`), ['many:staff', 'one:employer', 'one:city']);
  });

  it('reads an alias as the path it stands for, wherever it sits in the path', () => {
    const viaAlias = walkPath(dc('Person'), namesOf('employerCity.name'), ALL, failure);
    assert.deepEqual(viaAlias.hops.map((h) => h.attr.name), ['employer', 'city']);
    const toValue = walkPath(dc('Person'), namesOf('cityName'), ALL, failure);
    assert.equal(toValue.end.kind === 'storage' && toValue.end.attr.dataClass.name, 'City');
  });

  it('keeps the steps after an object attribute as its inside', () => {
    const { end } = walkPath(dc('Company'), namesOf('extra.address.city'), ALL, failure);
    assert.deepEqual(end.kind === 'storage' && end.inside.map((s) => s.name), ['address', 'city']);
  });

  it('words an unknown or hidden name as 4D does, with where it was read and the closest name', () => {
    fails(() => walkPath(dc('Company'), namesOf('staff.lastNme'), ALL, failure, "in 'staff.lastNme'"), 'UNKNOWN_ATTRIBUTE',
      'The "lastNme" attribute cannot be found in the "Person" dataclass (in \'staff.lastNme\')', "did you mean 'lastName'?");
    fails(() => walkPath(dc('Company'), namesOf('secret'), exposedOnly, failure), 'UNKNOWN_ATTRIBUTE', 'The "secret" attribute cannot be found');
    fails(() => attributeOf(dc('Company'), 'nme', ALL), 'UNKNOWN_ATTRIBUTE', 'The "nme" attribute cannot be found in the "Company" dataclass', "did you mean 'name'?");
  });

  it('refuses what cannot follow: a step after a plain value or a calculated attribute, a class index on a value', () => {
    fails(() => walkPath(dc('Person'), namesOf('lastName.x'), ALL, failure), 'INVALID_VALUE', 'Person.lastName is a string attribute, nothing can follow it');
    fails(() => walkPath(dc('Person'), namesOf('full.x'), ALL, failure), 'INVALID_VALUE', 'nothing can follow the calculated attribute Person.full');
    fails(() => walkPath(dc('Person'), [{ name: 'lastName', classIndex: 2 }], ALL, failure), 'INVALID_VALUE', 'a class index follows a relation');
    fails(() => walkPath(dc('Person'), [{ name: 'lastName', element: null }], ALL, failure), 'INVALID_VALUE', 'only properties inside an object attribute can be collections');
  });
});

describe('sort terms (parseOrderBy)', () => {
  it('sorts through N→1 relations and aliases, in the directions given', () => {
    const terms = parseOrderBy(dc('Person'), 'employerCity.name desc, cityName, lastName', ALL);
    assert.deepEqual(terms.map((t) => [t.path.via.map((v) => v.name).join('.'), t.path.attr.name, t.descending]), [
      ['employer.city', 'name', true],
      ['employer.city', 'name', false],
      ['', 'lastName', false],
    ]);
  });

  it('refuses what has no single value to sort by, with INVALID_ORDER_BY', () => {
    fails(() => parseOrderBy(dc('Company'), 'staff.lastName', ALL), 'INVALID_ORDER_BY', "'staff' is a relatedEntities attribute");
    fails(() => parseOrderBy(dc('Company'), 'city', ALL), 'INVALID_ORDER_BY', 'the path ends on a relation');
    // an alias is named as the client wrote it, with what it stands for
    fails(() => parseOrderBy(dc('Company'), 'staffNames', ALL), 'INVALID_ORDER_BY', "cannot sort Company by 'staffNames': 'staffNames' is an alias of 'staff.lastName', where 'staff' is a relatedEntities attribute");
    fails(() => parseOrderBy(dc('Person'), 'employerCity', ALL), 'INVALID_ORDER_BY', "'employerCity' is an alias of 'employer.city', where 'city' is a relatedEntity attribute: the path ends on a relation");
    fails(() => parseOrderBy(dc('Company'), 'logo', ALL), 'INVALID_ORDER_BY', 'image attributes have no order');
    fails(() => parseOrderBy(dc('Company'), 'extra.rank', ALL), 'INVALID_ORDER_BY', 'object attributes have no order');
    fails(() => parseOrderBy(dc('Person'), 'full', ALL), 'INVALID_ORDER_BY', 'has no orderBy function');
  });

  it('reads the order with the query grammar: a malformed order is INVALID_ORDER_BY at its offset, an unknown name UNKNOWN_ATTRIBUTE', () => {
    fails(() => parseOrderBy(dc('Person'), 'lastName sideways', ALL), 'INVALID_ORDER_BY', '"lastName sideways" at offset 9');
    fails(() => parseOrderBy(dc('Person'), 'lastName,', ALL), 'INVALID_ORDER_BY', 'expected an attribute name');
    fails(() => parseOrderBy(dc('Person'), 'lastNme', ALL), 'UNKNOWN_ATTRIBUTE', "in 'lastNme'", "did you mean 'lastName'?");
  });

  it('sorts a calculated attribute by the order its function gives, through the path that reaches it', () => {
    const calculated = () => ({ orderBy: (e: { descending: boolean }) => `lastName ${e.descending ? 'desc' : 'asc'}` });
    const terms = parseOrderBy(dc('Person'), 'full desc', ALL, calculated);
    assert.deepEqual(terms.map((t) => [t.path.attr.name, t.descending]), [['lastName', true]]);
    const loop = () => ({ orderBy: () => 'full' });
    fails(() => parseOrderBy(dc('Person'), 'full', ALL, loop), 'INVALID_ORDER_BY', 'more than 8 levels deep');
  });
});

describe('computation paths (resolveValuePath)', () => {
  it('reaches a storage attribute through N→1 relations and aliases, or a property of an object', () => {
    const p = resolveValuePath(dc('Person'), 'cityName', ALL);
    assert.deepEqual([p.via.map((v) => v.name), p.attr.name], [['employer', 'city'], 'name']);
    assert.deepEqual(resolveValuePath(dc('Company'), 'extra.score', ALL).json, ['score']);
  });

  it('refuses paths with many values or no value, and unknown names', () => {
    fails(() => resolveValuePath(dc('Company'), 'staff.salary', ALL), 'INVALID_OPTION', "cannot compute on 'staff.salary'", 'a 1→N relation has many values');
    fails(() => resolveValuePath(dc('Company'), 'logo', ALL), 'INVALID_OPTION', 'image attributes have no value to compute');
    fails(() => resolveValuePath(dc('Company'), 'city', ALL), 'INVALID_OPTION', "'city' is a relatedEntity attribute");
    fails(() => resolveValuePath(dc('Company'), 'staffNames', ALL), 'INVALID_OPTION', "cannot compute on 'staffNames': 'staffNames' is an alias of 'staff.lastName', where 'staff' is a relatedEntities attribute");
    fails(() => resolveValuePath(dc('Company'), 'nam', ALL), 'UNKNOWN_ATTRIBUTE', "(in 'nam')");
  });
});
