// Which user-class functions REST may call: those marked @exposed (and @onHttpGet to allow GET),
// as 4D's `exposed Function` and `onHTTPGet` keywords. Everything else stays invisible to REST.
// The marks sit on the function objects, in a map shared through the canonical registry: a
// project's class modules mark functions through their own copy of 'dataset-rest' (see
// classes/canonical.ts), and the server must read the same marks.

import { canonical } from '../util/canonical.js';
import { paramTypesProblem, type ParamType } from './params.js';

export interface Exposure {
  exposed: boolean;
  onHttpGet: boolean;
  /** declared parameter types (@params), if any */
  params?: readonly ParamType[];
}

const MARKS = canonical('functionExposure', new WeakMap<object, Exposure>());

function mark(fn: unknown, what: string, context: ClassMethodDecoratorContext | undefined): Exposure {
  if (typeof fn !== 'function') throw new TypeError(`@${what} marks a method of a class (got ${typeof fn})`);
  if (context && (context.kind !== 'method' || context.static)) {
    throw new TypeError(`@${what} marks an instance method of a class; ${String(context.name)} is ${context.static ? 'static' : `a ${context.kind}`}`);
  }
  let m = MARKS.get(fn);
  if (!m) MARKS.set(fn, (m = { exposed: false, onHttpGet: false }));
  return m;
}

/**
 * Makes a class function callable over REST. A decorator (`@exposed myFunction() {…}`); from
 * plain JavaScript, call it on the function: `exposed(MyClass.prototype.myFunction)`.
 */
export function exposed(fn: (...args: never[]) => unknown, context?: ClassMethodDecoratorContext): void {
  mark(fn, 'exposed', context).exposed = true;
}

/** Also allows GET for an exposed function (parameters then come from `$params`). */
export function onHttpGet(fn: (...args: never[]) => unknown, context?: ClassMethodDecoratorContext): void {
  mark(fn, 'onHttpGet', context).onHttpGet = true;
}

/**
 * Declares the types of a function's parameters: `@params('date', 'number?')`. Where a date is
 * declared, an ISO 8601 string arrives as a Date; a value of the wrong type is refused with a 400
 * naming the parameter. From plain JavaScript: `params('date')(MyClass.prototype.myFunction)`.
 */
export function params(...types: ParamType[]): (fn: (...args: never[]) => unknown, context?: ClassMethodDecoratorContext) => void {
  const problem = paramTypesProblem(types);
  if (problem) throw new TypeError(`@params: ${problem}`);
  return (fn, context) => {
    mark(fn, 'params', context).params = types;
  };
}

/** The marks of a function, or undefined when it has none. */
export function exposureOf(fn: unknown): Readonly<Exposure> | undefined {
  return typeof fn === 'function' ? MARKS.get(fn) : undefined;
}

/** An exposed function found on a class: its name and whether GET may call it. */
export interface ExposedFunction {
  readonly name: string;
  readonly onHttpGet: boolean;
  readonly params?: readonly ParamType[];
}

/** The methods of a prototype chain from `proto` down to (not including) `stop`, nearest definition of each name only. */
function* methods(proto: object, stop: object): Generator<[string, unknown]> {
  const seen = new Set<string>();
  for (let p: object | null = proto; p && p !== stop && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const name of Object.getOwnPropertyNames(p)) {
      if (name === 'constructor' || seen.has(name)) continue;
      seen.add(name);
      const d = Object.getOwnPropertyDescriptor(p, name);
      if (d && 'value' in d) yield [name, d.value];
    }
  }
}

/**
 * The exposed functions of a prototype chain, from `proto` down to (not including) `stop`: the
 * nearest definition of a name wins, so an override without @exposed hides an exposed base method.
 */
export function exposedFunctions(proto: object, stop: object): ExposedFunction[] {
  const out: ExposedFunction[] = [];
  for (const [name, fn] of methods(proto, stop)) {
    const m = exposureOf(fn);
    if (m?.exposed) out.push(m.params ? { name, onHttpGet: m.onHttpGet, params: m.params } : { name, onHttpGet: m.onHttpGet });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** Names of functions marked @onHttpGet without @exposed (a start-up error: GET of what REST cannot see). */
export function getWithoutExposed(proto: object, stop: object): string[] {
  return [...methods(proto, stop)].filter(([, fn]) => exposureOf(fn)?.onHttpGet && !exposureOf(fn)?.exposed).map(([name]) => name);
}
