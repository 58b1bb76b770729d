// buildModel: how model.json is resolved (relations, inverses, implicit foreign keys, aliases,
// fieldPos) and how every mistake is reported at once, each with its JSON path.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { buildModel, ModelError } from '../../src/model/load-model.js';
import type {
  AliasAttribute, AttributeModel, DataClassModel, Model, RelatedEntitiesAttribute, RelatedEntityAttribute, StorageAttribute,
} from '../../src/model/types.js';

const DEMO_JSON: unknown = JSON.parse(readFileSync(new URL('../../demo/model.json', import.meta.url), 'utf8'));

type RawAttr = Record<string, unknown>;
type RawClass = { name: string; attributes: RawAttr[] } & Record<string, unknown>;

const id = (extra: RawAttr = {}): RawAttr => ({ name: 'ID', type: 'long', identifying: true, autoincrement: true, ...extra });

function cls(model: Model, name: string): DataClassModel {
  const dc = model.dataClassesByName.get(name);
  assert.ok(dc, `dataclass ${name}`);
  return dc;
}

function attr<T extends AttributeModel = AttributeModel>(model: Model, className: string, name: string): T {
  const a = cls(model, className).attributesByName.get(name);
  assert.ok(a, `attribute ${className}.${name}`);
  return a as T;
}

/** Runs buildModel and returns the ModelError's problems (fails the test when it does not throw one). */
function problemsOf(json: unknown): readonly string[] {
  try {
    buildModel(json);
  } catch (e) {
    if (e instanceof ModelError) return e.problems;
    throw e;
  }
  assert.fail('expected a ModelError');
}

/** The one problem reported at `path` (problems are `path: message`). */
function problemAt(problems: readonly string[], path: string): string {
  const found = problems.filter((p) => p.startsWith(`${path}: `));
  assert.equal(found.length, 1, `expected one problem at ${path}, got:\n${problems.join('\n')}`);
  return found[0];
}

/** A model named T holding the given dataclasses. */
function withClasses(...classes: RawClass[]): unknown {
  return { name: 'T', dataClasses: classes };
}

describe('buildModel: the demo model', () => {
  const model = buildModel(DEMO_JSON);

  it('resolves every dataclass in model order, with tableNumber, className and collectionName', () => {
    assert.equal(model.name, 'Demo');
    assert.deepEqual(
      model.dataClasses.map((c) => [c.name, c.tableNumber, c.className, c.collectionName, c.exposed]),
      [
        ['City', 1, 'City', 'CitySelection', true],
        ['Company', 2, 'Company', 'CompanySelection', true],
        ['Employee', 3, 'Employee', 'EmployeeSelection', true],
        ['AuditLog', 4, 'AuditLog', 'AuditLogSelection', false],
        ['User', 5, 'User', 'UserSelection', false],
      ],
    );
    assert.equal(cls(model, 'Company').defaultTopSize, 50);
    assert.equal(cls(model, 'City').defaultTopSize, undefined);
    assert.deepEqual(cls(model, 'City').extraProperties, { panelColor: '#76923C' });
  });

  it('finds the one identifying attribute of each dataclass as its key, always indexed', () => {
    for (const [name, type] of [['City', 'long'], ['Company', 'long'], ['Employee', 'uuid'], ['AuditLog', 'long']] as const) {
      const key = cls(model, name).key;
      assert.equal(key.name, 'ID');
      assert.equal(key.type, type);
      assert.equal(key.identifying, true);
      assert.equal(key.indexed, true);
    }
  });

  it('resolves relatedEntity attributes to their target, foreign key and inverse', () => {
    const cases: [string, string, string, string, string | undefined][] = [
      // class, attribute, target, foreign key, inverse (relatedEntities of the target)
      ['Company', 'city', 'City', 'cityID', 'companies'],
      ['Employee', 'employer', 'Company', 'employerID', 'staff'],
      ['Employee', 'manager', 'Employee', 'managerID', 'reports'],
    ];
    for (const [c, name, target, fk, inverse] of cases) {
      const a = attr<RelatedEntityAttribute>(model, c, name);
      assert.equal(a.kind, 'relatedEntity');
      assert.equal(a.target, cls(model, target));
      assert.equal(a.foreignKey, attr(model, c, fk));
      assert.equal(a.inverse?.name, inverse);
      assert.equal(a.inverse?.inverse, a, `${c}.${name} and its inverse point at each other`);
    }
  });

  it('resolves relatedEntities attributes to their target and inverse relatedEntity', () => {
    const cases: [string, string, string, string][] = [
      ['City', 'companies', 'Company', 'city'],
      ['Company', 'staff', 'Employee', 'employer'],
      ['Employee', 'reports', 'Employee', 'manager'],
    ];
    for (const [c, name, target, inverse] of cases) {
      const a = attr<RelatedEntitiesAttribute>(model, c, name);
      assert.equal(a.kind, 'relatedEntities');
      assert.equal(a.target, cls(model, target));
      assert.equal(a.inverse, attr(model, target, inverse));
      assert.equal(a.inverse.target, cls(model, c));
    }
  });

  it('creates an implicit foreign key with the target key type, indexed, when the model does not declare one', () => {
    const cases: [string, string, string][] = [
      // class, implicit attribute, expected type (the target key's)
      ['Company', 'cityID', 'long'], // City.ID is long
      ['Employee', 'managerID', 'uuid'], // Employee.ID is uuid
    ];
    for (const [c, name, type] of cases) {
      const fk = attr<StorageAttribute>(model, c, name);
      assert.equal(fk.kind, 'storage');
      assert.equal(fk.type, type);
      assert.equal(fk.implicit, true);
      assert.equal(fk.indexed, true);
      assert.equal(fk.identifying, false);
      assert.equal(fk.column, name);
    }
  });

  it('uses a declared foreign key as is (not implicit)', () => {
    const fk = attr<StorageAttribute>(model, 'Employee', 'employerID');
    assert.equal(fk.implicit, false);
    assert.equal(attr<RelatedEntityAttribute>(model, 'Employee', 'employer').foreignKey, fk);
  });

  it('gives an alias the type of its target and its steps along the path', () => {
    const cases: [string, string, string, string[], boolean][] = [
      ['Company', 'cityName', 'string', ['city', 'name'], false],
      ['Employee', 'employerName', 'string', ['employer', 'name'], false],
      ['Employee', 'employerCity', 'string', ['employer', 'city', 'name'], false],
    ];
    for (const [c, name, type, steps, toMany] of cases) {
      const a = attr<AliasAttribute>(model, c, name);
      assert.equal(a.kind, 'alias');
      assert.equal(a.type, type);
      assert.deepEqual(a.steps.map((s) => s.name), steps);
      assert.equal(a.toMany, toMany);
    }
  });

  it('numbers storage attributes 1… in storage order, implicit foreign keys last', () => {
    const cases: [string, string[]][] = [
      ['City', ['ID', 'name', 'country', 'population']],
      ['Company', ['ID', 'name', 'companyCode', 'revenues', 'active', 'logo', 'extra', 'founded', 'cityID']],
      ['AuditLog', ['ID', 'message', 'at']],
    ];
    for (const [c, names] of cases) {
      const storage = cls(model, c).storage;
      assert.deepEqual(storage.map((a) => a.name), names);
      assert.deepEqual(storage.map((a) => a.fieldPos), names.map((_, i) => i + 1));
    }
    const employee = cls(model, 'Employee').storage;
    assert.equal(employee.length, 19);
    assert.deepEqual(employee.map((a) => a.fieldPos), employee.map((_, i) => i + 1));
    assert.equal(employee.at(-1)?.name, 'managerID');
  });

  it('gives a relatedEntity its foreign key fieldPos, a relatedEntities the primary key fieldPos, alias and calculated 0', () => {
    const cases: [string, string, number][] = [
      ['Company', 'city', 9], // cityID
      ['Employee', 'employer', 18], // employerID
      ['Employee', 'manager', 19], // managerID (implicit)
      ['City', 'companies', 1], // City.ID
      ['Company', 'staff', 1],
      ['Employee', 'reports', 1],
      ['Company', 'cityName', 0],
      ['Employee', 'employerCity', 0],
      ['Employee', 'fullName', 0],
    ];
    for (const [c, name, pos] of cases) assert.equal(attr(model, c, name).fieldPos, pos, `${c}.${name}`);
    assert.equal(attr(model, 'Employee', 'employer').fieldPos, attr(model, 'Employee', 'employerID').fieldPos);
  });

  it('keeps a dataclass\'s label (Employee: lastName) and none where the model names none', () => {
    assert.equal(cls(model, 'Employee').label, 'lastName');
    assert.equal(cls(model, 'Company').label, undefined);
  });

  it('keeps attribute flags (exposed, indexed, unique, dateOnly, multiLine, defaultFormat)', () => {
    const secret = attr<StorageAttribute>(model, 'Employee', 'secret');
    assert.equal(secret.exposed, false);
    assert.equal(attr<StorageAttribute>(model, 'Company', 'companyCode').unique, true);
    assert.equal(attr<StorageAttribute>(model, 'Company', 'companyCode').indexed, true, 'unique implies indexed');
    assert.equal(attr<StorageAttribute>(model, 'Company', 'founded').dateOnly, true);
    assert.equal(attr<StorageAttribute>(model, 'Employee', 'hiredAt').dateOnly, false);
    assert.equal(attr(model, 'Employee', 'notes').multiLine, true);
    assert.deepEqual(attr(model, 'Company', 'revenues').defaultFormat, { format: '$###,###,###' });
    assert.equal(attr(model, 'Employee', 'fullName').kind, 'calculated');
  });
});

describe('buildModel: resolution rules on small models', () => {
  const base = (): RawClass[] => [
    { name: 'City', attributes: [id(), { name: 'name', type: 'string' }] },
    {
      name: 'Company',
      attributes: [
        id(),
        { name: 'name', type: 'string' },
        { name: 'city', kind: 'relatedEntity', type: 'City' },
        { name: 'staff', kind: 'relatedEntities', type: 'EmployeeSelection', path: 'employer' },
      ],
    },
    {
      name: 'Employee',
      attributes: [
        { name: 'ID', type: 'uuid', identifying: true, autogenerate: true },
        { name: 'employerRef', type: 'word' },
        { name: 'employer', kind: 'relatedEntity', type: 'Company', foreignKey: 'employerRef' },
        { name: 'lastName', type: 'string' },
      ],
    },
  ];

  it('names an implicit foreign key <relation>ID by default', () => {
    const model = buildModel(withClasses(...base()));
    const fk = attr<StorageAttribute>(model, 'Company', 'cityID');
    assert.equal(fk.implicit, true);
    assert.equal(fk.type, 'long');
    assert.equal(attr<RelatedEntityAttribute>(model, 'Company', 'city').foreignKey, fk);
  });

  it('accepts a declared foreign key of another integer type than the target key', () => {
    const model = buildModel(withClasses(...base()));
    const rel = attr<RelatedEntityAttribute>(model, 'Employee', 'employer');
    assert.equal(rel.foreignKey.name, 'employerRef');
    assert.equal(rel.foreignKey.type, 'word');
    assert.equal(rel.fieldPos, 2);
  });

  it('leaves a relatedEntity without a relatedEntities pointing back with no inverse', () => {
    const model = buildModel(withClasses(...base()));
    assert.equal(attr<RelatedEntityAttribute>(model, 'Company', 'city').inverse, undefined);
  });

  it('types an alias by its target: storage type, <Class>Entity for a relatedEntity (reference §6.3), <Class>Selection through a 1→N step', () => {
    const classes = base();
    classes[1].attributes.push(
      { name: 'cityName', kind: 'alias', path: 'city.name' },
      { name: 'staffNames', kind: 'alias', path: 'staff.lastName' },
      { name: 'staffCompanies', kind: 'alias', path: 'staff.employer' },
    );
    classes[2].attributes.push(
      { name: 'employerCity', kind: 'alias', path: 'employer.city' },
      { name: 'colleagues', kind: 'alias', path: 'employer.staff' },
      { name: 'employerCityName', kind: 'alias', path: 'employer.city.name', type: 'string' },
    );
    const model = buildModel(withClasses(...classes));
    const cases: [string, string, string, boolean][] = [
      ['Company', 'cityName', 'string', false],
      ['Company', 'staffNames', 'string', true],
      ['Company', 'staffCompanies', 'CompanySelection', true],
      ['Employee', 'employerCity', 'CityEntity', false],
      ['Employee', 'colleagues', 'EmployeeSelection', true],
      ['Employee', 'employerCityName', 'string', false],
    ];
    for (const [c, name, type, toMany] of cases) {
      const a = attr<AliasAttribute>(model, c, name);
      assert.equal(a.type, type, `${c}.${name} type`);
      assert.equal(a.toMany, toMany, `${c}.${name} toMany`);
    }
  });

  it(
    'types an alias to a calculated attribute by the calculated type, wherever the calculated attribute is declared',

    () => {
      const classes = base();
      classes[1].attributes.push({ name: 'staffFullNames', kind: 'alias', path: 'staff.fullName' });
      classes[2].attributes.push({ name: 'fullName', kind: 'calculated', type: 'string' });
      const model = buildModel(withClasses(...classes));
      assert.equal(attr<AliasAttribute>(model, 'Company', 'staffFullNames').type, 'string');
    },
  );

  it('applies defaults: exposed true, className = name, collectionName = <name>Selection, table = name', () => {
    const model = buildModel(withClasses({ name: 'Thing', className: 'ThingEntity', attributes: [id()] }));
    const dc = cls(model, 'Thing');
    assert.equal(dc.exposed, true);
    assert.equal(dc.className, 'ThingEntity');
    assert.equal(dc.collectionName, 'ThingSelection');
    assert.equal(dc.table, 'Thing');
    assert.deepEqual(dc.extraProperties, {});
  });

  it('resolves a relatedEntities by a custom collectionName', () => {
    const model = buildModel(withClasses(
      { name: 'Person', collectionName: 'People', attributes: [id(), { name: 'team', kind: 'relatedEntity', type: 'Team' }] },
      { name: 'Team', attributes: [id(), { name: 'members', kind: 'relatedEntities', type: 'People', path: 'team' }] },
    ));
    assert.equal(attr<RelatedEntitiesAttribute>(model, 'Team', 'members').target.name, 'Person');
  });
});

describe('buildModel: each validation error names its JSON path', () => {
  // [what, model, path, message pattern]
  const ok = (attrs: RawAttr[]): RawClass => ({ name: 'A', attributes: [id(), ...attrs] });
  const cases: [string, unknown, string, RegExp][] = [
    ['a model that is not an object', [], '$', /must be a JSON object/],
    ['an empty model name', { name: '', dataClasses: [ok([])] }, '$.name', /non-empty string/],
    ['an unknown top-level property, with did-you-mean', { name: 'T', dataClasses: [ok([])], dataclass: [] }, '$.dataclass', /unknown property 'dataclass', did you mean 'dataClasses'\?/],
    ['no dataclasses', { name: 'T', dataClasses: [] }, '$.dataClasses', /non-empty array/],
    ['a dataclass that is not an object', withClasses(ok([]), 'B' as unknown as RawClass), '$.dataClasses[1]', /must be an object/],
    ['an invalid dataclass name', withClasses({ name: 'my class', attributes: [id()] }), '$.dataClasses[0].name', /letters, digits and _/],
    ['a reserved dataclass name', withClasses({ name: '__KEY', attributes: [id()] }), '$.dataClasses[0].name', /reserved/],
    ['a duplicate dataclass name', withClasses(ok([]), ok([])), '$.dataClasses[1].name', /duplicate dataclass name 'A'/],
    ['an unknown dataclass property, with did-you-mean', withClasses({ ...ok([]), exposd: false }), '$.dataClasses[0].exposd', /did you mean 'exposed'\?/],
    ['a defaultTopSize of 0', withClasses({ ...ok([]), defaultTopSize: 0 }), '$.dataClasses[0].defaultTopSize', /positive integer/],
    ['a label naming no attribute, with did-you-mean', withClasses({ ...ok([{ name: 'title', type: 'string' }]), label: 'titel' }), '$.dataClasses[0].label', /A has no attribute 'titel', did you mean 'title'\?/],
    ['a label that is not a string', withClasses({ ...ok([]), label: 3 }), '$.dataClasses[0].label', /must be the name of one of the dataclass's attributes/],
    ['a label naming an attribute that is not exposed', withClasses({ ...ok([{ name: 'code', type: 'string', exposed: false }]), label: 'code' }), '$.dataClasses[0].label', /'code' cannot label a A: it is not exposed/],
    ['a label naming a picture', withClasses({ ...ok([{ name: 'logo', type: 'image' }]), label: 'logo' }), '$.dataClasses[0].label', /a label is an attribute of one plain value .* of type image/],
    ['a non-boolean exposed', withClasses({ ...ok([]), exposed: 'no' }), '$.dataClasses[0].exposed', /true or false/],
    ['extraProperties that are not an object', withClasses({ ...ok([]), extraProperties: 3 }), '$.dataClasses[0].extraProperties', /must be an object/],
    ['no attributes', withClasses({ name: 'A', attributes: [] }), '$.dataClasses[0].attributes', /non-empty array/],
    ['no identifying attribute', withClasses({ name: 'A', attributes: [{ name: 'x', type: 'string' }] }), '$.dataClasses[0]', /no identifying attribute/],
    ['two identifying attributes', withClasses(ok([{ name: 'code', type: 'string', identifying: true }])), '$.dataClasses[0]', /2 identifying attributes \(ID, code\)/],
    ['an attribute that is not an object', withClasses(ok(['x' as unknown as RawAttr])), '$.dataClasses[0].attributes[1]', /must be an object/],
    ['an unknown kind, with did-you-mean', withClasses(ok([{ name: 'x', kind: 'relatedEntites', type: 'A' }])), '$.dataClasses[0].attributes[1].kind', /unknown kind 'relatedEntites', did you mean 'relatedEntities'\?/],
    ['an unknown storage type, with did-you-mean', withClasses(ok([{ name: 'x', type: 'strng' }])), '$.dataClasses[0].attributes[1].type', /unknown type 'strng', did you mean 'string'\?/],
    ['an unknown attribute property, with did-you-mean', withClasses(ok([{ name: 'x', type: 'string', indexd: true }])), '$.dataClasses[0].attributes[1].indexd', /unknown property 'indexd', did you mean 'indexed'\?/],
    ['a property of another kind', withClasses(ok([{ name: 'x', type: 'string', foreignKey: 'y' }])), '$.dataClasses[0].attributes[1].foreignKey', /unknown property 'foreignKey'/],
    ['an invalid attribute name', withClasses(ok([{ name: '2x', type: 'string' }])), '$.dataClasses[0].attributes[1].name', /letters, digits and _/],
    ['a reserved attribute name', withClasses(ok([{ name: '__STAMP', type: 'long' }])), '$.dataClasses[0].attributes[1].name', /reserved/],
    ['a duplicate attribute name', withClasses(ok([{ name: 'x', type: 'string' }, { name: 'x', type: 'long' }])), '$.dataClasses[0].attributes[2].name', /duplicate attribute name 'x' in A/],
    ['a non-boolean flag', withClasses(ok([{ name: 'x', type: 'string', indexed: 'yes' }])), '$.dataClasses[0].attributes[1].indexed', /true or false/],
    ['a bad defaultFormat', withClasses(ok([{ name: 'x', type: 'number', defaultFormat: '#,##' }])), '$.dataClasses[0].attributes[1].defaultFormat', /"format": string/],
    ['autoincrement on a non-key', withClasses(ok([{ name: 'x', type: 'long', autoincrement: true }])), '$.dataClasses[0].attributes[1].autoincrement', /identifying long or long64/],
    ['autogenerate on a long key', withClasses({ name: 'A', attributes: [{ name: 'ID', type: 'long', identifying: true, autogenerate: true }] }), '$.dataClasses[0].attributes[0].autogenerate', /identifying uuid/],
    ['an identifying image', withClasses({ name: 'A', attributes: [{ name: 'ID', type: 'image', identifying: true }] }), '$.dataClasses[0].attributes[0].type', /image attribute cannot be identifying/],
    ['an indexed blob', withClasses(ok([{ name: 'x', type: 'blob', indexed: true }])), '$.dataClasses[0].attributes[1]', /blob attribute cannot be indexed or unique/],
    ['dateOnly on a string', withClasses(ok([{ name: 'x', type: 'string', dateOnly: true }])), '$.dataClasses[0].attributes[1].dateOnly', /only a date attribute/],
    ['a relatedEntity to a missing dataclass, with did-you-mean', withClasses(ok([{ name: 'b', kind: 'relatedEntity', type: 'AA' }])), '$.dataClasses[0].attributes[1].type', /'AA' is not one, did you mean 'A'\?/],
    ['a relatedEntity path other than its target', withClasses(ok([{ name: 'b', kind: 'relatedEntity', type: 'A', path: 'B' }])), '$.dataClasses[0].attributes[1].path', /target dataclass name \('A'\)/],
    ['a foreign key that is not a name', withClasses(ok([{ name: 'b', kind: 'relatedEntity', type: 'A', foreignKey: 'b-id' }])), '$.dataClasses[0].attributes[1].foreignKey', /attribute name/],
    ['a foreign key of the wrong type', withClasses(ok([{ name: 'bID', type: 'string' }, { name: 'b', kind: 'relatedEntity', type: 'A' }])), '$.dataClasses[0].attributes[2].foreignKey', /'bID' is string but A's key 'ID' is long/],
    ['a foreign key that is the primary key', withClasses(ok([{ name: 'b', kind: 'relatedEntity', type: 'A', foreignKey: 'ID' }])), '$.dataClasses[0].attributes[1].foreignKey', /primary key of A/],
    ['a foreign key that is a relation', withClasses(ok([{ name: 'c', kind: 'relatedEntity', type: 'A' }, { name: 'b', kind: 'relatedEntity', type: 'A', foreignKey: 'c' }])), '$.dataClasses[0].attributes[2].foreignKey', /'c' is a relatedEntity attribute/],
    ['a relatedEntities type that is not a selection', withClasses(ok([{ name: 'bs', kind: 'relatedEntities', type: 'ASelecton', path: 'x' }])), '$.dataClasses[0].attributes[1].type', /'ASelecton' is not one, did you mean 'ASelection'\?/],
    ['a relatedEntities path to a missing attribute, with did-you-mean', withClasses(ok([{ name: 'parent', kind: 'relatedEntity', type: 'A' }, { name: 'children', kind: 'relatedEntities', type: 'ASelection', path: 'parnt' }])), '$.dataClasses[0].attributes[2].path', /'parnt' is not an attribute of A, did you mean 'parent'\?/],
    ['an inverse that is a storage attribute', withClasses(ok([{ name: 'name', type: 'string' }, { name: 'children', kind: 'relatedEntities', type: 'ASelection', path: 'name' }])), '$.dataClasses[0].attributes[2].path', /inverse mismatch: A\.name must be a relatedEntity to A, it is a storage attribute/],
    [
      'an inverse that is a relatedEntity to another dataclass',
      withClasses(
        { name: 'A', attributes: [id(), { name: 'bs', kind: 'relatedEntities', type: 'BSelection', path: 'c' }] },
        { name: 'B', attributes: [id(), { name: 'c', kind: 'relatedEntity', type: 'C' }] },
        { name: 'C', attributes: [id()] },
      ),
      '$.dataClasses[0].attributes[1].path',
      /inverse mismatch: B\.c must be a relatedEntity to A, it is a relatedEntity to C/,
    ],
    ['two relatedEntities on one inverse', withClasses(ok([{ name: 'parent', kind: 'relatedEntity', type: 'A' }, { name: 'kids', kind: 'relatedEntities', type: 'ASelection', path: 'parent' }, { name: 'kids2', kind: 'relatedEntities', type: 'ASelection', path: 'parent' }])), '$.dataClasses[0].attributes[3].path', /A\.parent is already the inverse of A\.kids/],
    ['a reversePath other than true', withClasses(ok([{ name: 'parent', kind: 'relatedEntity', type: 'A' }, { name: 'kids', kind: 'relatedEntities', type: 'ASelection', path: 'parent', reversePath: false }])), '$.dataClasses[0].attributes[2].reversePath', /can only be true/],
    ['an alias path without a relation step', withClasses(ok([{ name: 'al', kind: 'alias', path: 'ID' }])), '$.dataClasses[0].attributes[1].path', /through a relation/],
    ['an alias path to a missing attribute, with did-you-mean', withClasses(ok([{ name: 'parent', kind: 'relatedEntity', type: 'A' }, { name: 'al', kind: 'alias', path: 'parnt.ID' }])), '$.dataClasses[0].attributes[2].path', /'parnt' in 'parnt\.ID' is not an attribute of A, did you mean 'parent'\?/],
    ['an alias path through a storage attribute', withClasses(ok([{ name: 'x', type: 'string' }, { name: 'al', kind: 'alias', path: 'x.y' }])), '$.dataClasses[0].attributes[2].path', /'x' in 'x\.y' is a storage attribute/],
    ['an alias path through an alias', withClasses(ok([{ name: 'parent', kind: 'relatedEntity', type: 'A' }, { name: 'p2', kind: 'alias', path: 'parent.parent' }, { name: 'al', kind: 'alias', path: 'p2.ID' }])), '$.dataClasses[0].attributes[3].path', /goes through the alias A\.p2/],
    ['an alias with a type other than its target', withClasses(ok([{ name: 'parent', kind: 'relatedEntity', type: 'A' }, { name: 'al', kind: 'alias', path: 'parent.ID', type: 'string' }])), '$.dataClasses[0].attributes[2].type', /takes its type from its target \('long'\)/],
    ['a calculated attribute without a known type, with did-you-mean', withClasses(ok([{ name: 'calc', kind: 'calculated', type: 'strin' }])), '$.dataClasses[0].attributes[1].type', /did you mean 'string'\?/],
  ];
  for (const [what, json, path, message] of cases) {
    it(`reports ${what} at ${path}`, () => {
      const problem = problemAt(problemsOf(json), path);
      assert.match(problem, message);
    });
  }

  it('throws a ModelError whose message names the source and counts the problems', () => {
    assert.throws(
      () => buildModel(withClasses({ name: 'A', attributes: [{ name: 'x', type: 'strng' }] }), 'my/model.json'),
      (e: unknown) => e instanceof ModelError && e.name === 'ModelError' && /^my\/model\.json: 2 problems in the model:/.test(e.message)
        && e.message.includes('$.dataClasses[0].attributes[0].type: unknown type'),
    );
  });
});

describe('buildModel: reports every problem at once', () => {
  it('lists an unknown type, a missing relation target, an inverse mismatch, two keys, duplicate names and an unknown property in one ModelError', () => {
    const json = {
      name: 'Broken',
      dataClasses: [
        {
          name: 'Company',
          attributes: [
            { name: 'ID', type: 'long', identifying: true },
            { name: 'name', type: 'string' },
            { name: 'revenues', type: 'numbr' }, // [2] unknown type
            { name: 'city', kind: 'relatedEntity', type: 'Town' }, // [3] missing dataclass
            { name: 'staff', kind: 'relatedEntities', type: 'EmployeeSelection', path: 'name' }, // [4] inverse mismatch
            { name: 'name', type: 'string' }, // [5] duplicate
            { name: 'code', type: 'string', indexd: true }, // [6] unknown property
          ],
        },
        {
          name: 'Employee',
          exposd: true, // unknown property
          attributes: [
            { name: 'ID', type: 'long', identifying: true },
            { name: 'badge', type: 'long', identifying: true }, // second key
            { name: 'name', type: 'string' },
          ],
        },
      ],
    };
    const problems = problemsOf(json);
    const expected: [string, RegExp][] = [
      ['$.dataClasses[0].attributes[2].type', /unknown type 'numbr', did you mean 'number'\?/],
      ['$.dataClasses[0].attributes[3].type', /'Town' is not one/],
      ['$.dataClasses[0].attributes[4].path', /inverse mismatch: Employee\.name must be a relatedEntity to Company, it is a storage attribute/],
      ['$.dataClasses[0].attributes[5].name', /duplicate attribute name 'name' in Company/],
      ['$.dataClasses[0].attributes[6].indexd', /did you mean 'indexed'\?/],
      ['$.dataClasses[1].exposd', /did you mean 'exposed'\?/],
      ['$.dataClasses[1]', /2 identifying attributes \(ID, badge\)/],
    ];
    for (const [path, message] of expected) assert.match(problemAt(problems, path), message);
    assert.equal(problems.length, expected.length, problems.join('\n'));
  });

  it('reports a dataclass-level problem at the dataclass index in the JSON, even after a skipped (duplicate) dataclass', () => {
    const problems = problemsOf(withClasses(
      { name: 'A', attributes: [id()] },
      { name: 'A', attributes: [id()] }, // duplicate: skipped
      { name: 'B', attributes: [{ name: 'x', type: 'string' }] }, // no key
    ));
    assert.match(problemAt(problems, '$.dataClasses[1].name'), /duplicate dataclass name 'A'/);
    assert.match(problemAt(problems, '$.dataClasses[2]'), /dataclass B has no identifying attribute/);
  });

  it('reports an alias through a relation to a missing dataclass as a ModelError (not a crash)', () => {
    const problems = problemsOf(withClasses({
      name: 'Company',
      attributes: [
        id(),
        { name: 'city', kind: 'relatedEntity', type: 'Ctiy' },
        { name: 'cityName', kind: 'alias', path: 'city.name' },
      ],
    }));
    assert.match(problemAt(problems, '$.dataClasses[0].attributes[1].type'), /'Ctiy' is not one/);
  });

  it('reports a relatedEntities whose inverse relation has a missing target as a ModelError (not a crash)', () => {
    const problems = problemsOf(withClasses(
      { name: 'Company', attributes: [id(), { name: 'staff', kind: 'relatedEntities', type: 'EmployeeSelection', path: 'employer' }] },
      { name: 'Employee', attributes: [id(), { name: 'employer', kind: 'relatedEntity', type: 'Compny' }] },
    ));
    assert.match(problemAt(problems, '$.dataClasses[1].attributes[1].type'), /'Compny' is not one, did you mean 'Company'\?/);
  });
});

describe('buildModel: names that would clash in SQL', () => {
  const base = (attrs: object[], more: object[] = []) => ({
    name: 'M',
    dataClasses: [{ name: 'A', attributes: [{ name: 'ID', type: 'long', identifying: true }, ...attrs] }, ...more],
  });
  const problems = (json: unknown): string[] => {
    try {
      buildModel(json);
    } catch (e) {
      return [...(e as ModelError).problems];
    }
    return [];
  };
  it('refuses attribute names that differ only by case', () => {
    assert.match(problems(base([{ name: 'name', type: 'string' }, { name: 'Name', type: 'string' }])).join('\n'),
      /\$\.dataClasses\[0\]\.attributes\[2\]\.name: 'Name' and 'name' in A differ only by case/);
  });
  it('refuses dataclass names that differ only by case', () => {
    assert.match(problems(base([], [{ name: 'a', attributes: [{ name: 'ID', type: 'long', identifying: true }] }])).join('\n'),
      /\$\.dataClasses\[1\]\.name: 'a' and 'A' differ only by case/);
  });
  it('refuses an implicit foreign key that differs only by case from an attribute', () => {
    const json = base([{ name: 'bid', type: 'long' }, { name: 'b', kind: 'relatedEntity', type: 'A' }]);
    assert.match(problems(json).join('\n'), /\$\.dataClasses\[0\]\.attributes\[2\]\.foreignKey: the foreign key 'bID' would differ only by case from the attribute 'bid'/);
  });
  it("reserves names starting with 'sqlite_'", () => {
    assert.match(problems(base([], [{ name: 'sqlite_stat', attributes: [{ name: 'ID', type: 'long', identifying: true }] }])).join('\n'), /reserved/);
  });
});

