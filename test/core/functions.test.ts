// Server-side functions: which class functions REST can see (@exposed, @onHttpGet), and the
// declared parameter types (@params) that convert and check what a call passes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exposed, exposedFunctions, exposureOf, onHttpGet, params } from '../../src/functions/exposure.js';
import { convertArgs, type ParamType } from '../../src/functions/params.js';
import { DatasetError } from '../../src/errors/dataset-error.js';

describe('function exposure', () => {
  class Base {
    shown(): number {
      return 1;
    }
    hidden(): number {
      return 2;
    }
    overridden(): number {
      return 3;
    }
  }
  exposed(Base.prototype.shown);
  exposed(Base.prototype.overridden);
  onHttpGet(Base.prototype.overridden);
  class Child extends Base {
    override overridden(): number {
      return 4;
    }
    mine(): number {
      return 5;
    }
  }
  exposed(Child.prototype.mine);
  onHttpGet(Child.prototype.mine);

  it('lists exposed functions down the class chain, sorted, with whether GET may call them', () => {
    assert.deepEqual(exposedFunctions(Child.prototype, Object.prototype), [
      { name: 'mine', onHttpGet: true },
      { name: 'shown', onHttpGet: false },
    ]);
  });

  it('hides an exposed base function behind an override that is not marked', () => {
    assert.equal(exposedFunctions(Child.prototype, Object.prototype).some((f) => f.name === 'overridden'), false);
    assert.deepEqual(exposedFunctions(Base.prototype, Object.prototype).map((f) => f.name), ['overridden', 'shown']);
  });

  it('stops at the base given: the core class methods are never listed', () => {
    assert.deepEqual(exposedFunctions(Child.prototype, Base.prototype).map((f) => f.name), ['mine']);
  });

  it('keeps the marks of unmarked functions undefined, and refuses to mark what is not a function', () => {
    assert.equal(exposureOf(Base.prototype.hidden), undefined);
    assert.throws(() => exposed(42 as never), /@exposed marks a method of a class \(got number\)/);
  });
});

describe('declared parameter types', () => {
  it('refuses unknown types and a required parameter after an optional one, when the class is defined', () => {
    assert.throws(() => params('int' as ParamType), /@params: parameter #1 has type "int": a type is one of any, string, text, number, boolean, date, object, array, collection, entity, selection, or <DataClass>Entity, <DataClass>Selection \(EmployeeEntity\), optionally followed by \?/);
    assert.throws(() => params('number?', 'string'), /@params: parameter #2 is required but follows an optional one/);
  });

  it('records the types on the function, and lists them with the exposed functions', () => {
    class C {
      f(): void {}
    }
    exposed(C.prototype.f);
    params('date', 'number?')(C.prototype.f);
    assert.deepEqual(exposedFunctions(C.prototype, Object.prototype), [{ name: 'f', onHttpGet: false, params: ['date', 'number?'] }]);
  });

  const fails = (types: ParamType[], args: unknown[], message: string) =>
    assert.throws(() => convertArgs(types, args, 'f'), (e: unknown) => e instanceof DatasetError && e.code === 'INVALID_PARAMETER' && e.message === message);

  it('converts ISO 8601 dates and date-times, keeps the other kinds as given', () => {
    const [day, time, n, s, b, o, a, x] = convertArgs(['date', 'date', 'number', 'string', 'boolean', 'object', 'array', 'any'], ['2024-05-01', '2024-05-01T09:30:00+02:00', 1.5, 'x', false, { a: 1 }, [1], null], 'f');
    assert.deepEqual([day, time], [new Date(Date.UTC(2024, 4, 1)), new Date(Date.UTC(2024, 4, 1, 7, 30))]);
    assert.deepEqual([n, s, b, o, a, x], [1.5, 'x', false, { a: 1 }, [1], null]);
  });

  it('lets optional parameters be missing or null', () => {
    assert.deepEqual(convertArgs(['number', 'date?', 'string?'], [1, null], 'f'), [1, null, undefined]);
  });

  it('refuses each kind given the wrong value, naming the parameter and the value', () => {
    fails(['number'], ['1'], 'parameter #1 of f is a number; got "1"');
    fails(['string', 'boolean'], ['a', 'yes'], 'parameter #2 of f is a boolean; got "yes"');
    fails(['object'], [[1]], 'parameter #1 of f is a JSON object; got [1]');
    fails(['array'], [{}], 'parameter #1 of f is a JSON array; got {}');
    fails(['entity'], [{ __KEY: 1 }], 'parameter #1 of f is an entity: {"__DATACLASS": "…", "__ENTITY": true, "__KEY": …}; got {"__KEY":1}');
    fails(['selection'], ['ABC'], 'parameter #1 of f is an entity selection: {"__DATASET": "<entity set id>", "__ENTITIES": true}; got "ABC"');
    fails(['date'], ['01/05/2024'], 'parameter #1 of f is a date: an ISO 8601 string such as "2024-05-01" or "2024-05-01T09:30:00Z"; got "01/05/2024"');
    fails(['number'], [], 'parameter #1 of f is required (number); got nothing');
    fails([], [1], 'f takes 0 parameters; got 1');
  });
});
