// Server-side functions: which class functions REST can see (@exposed, @onHttpGet).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exposed, exposedFunctions, exposureOf, onHttpGet } from '../src/functions/exposure.js';

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
