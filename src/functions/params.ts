// Declared parameter types of a function called over REST. JSON has no dates and TypeScript's
// types are gone at run time, so a function says what it takes — `@params('since: date',
// 'until?: date')`, `@params('employee: EmployeeEntity')`, or `params: [...]` in a project method —
// and the server converts and checks before the call: an ISO 8601 string becomes a Date where a
// date is declared, a wrong value is a 400 naming the function, the parameter (its position and
// name), what it takes and what it got. Without a declaration, parameters arrive as JSON gives
// them (dates stay strings), and what the code does with a wrong one is its own failure.
//
// A declaration is `[name[?]: ]type[?]`. The types are 4D's words or JavaScript's for the same:
// text (string), number, boolean, date, object, collection (array), any (4D's variant), entity
// and selection (of any dataclass), `<DataClass>Entity` and `<DataClass>Selection` (of that
// dataclass, as 4D's cs.EmployeeEntity: checked against the model when the project opens). A `?`
// after the name or the type: the parameter may be missing or null (optional ones come last).

import { Entity } from '../datastore/entities/entity.js';
import { EntitySelection } from '../datastore/selections/selection.js';
import { parseDate } from '../model/values.js';
import { DatasetError } from '../errors/dataset-error.js';

export const PARAM_KINDS = ['any', 'string', 'text', 'number', 'boolean', 'date', 'object', 'array', 'collection', 'entity', 'selection'] as const;
export type ParamKind = (typeof PARAM_KINDS)[number];
type TypeName = ParamKind | `${string}Entity` | `${string}Selection`;
/** A type, optionally followed by `?` (may then be missing or null), optionally named first: `'until?: date'`. */
export type ParamType = TypeName | `${TypeName}?` | `${string}: ${TypeName}` | `${string}: ${TypeName}?` | `${string}?: ${TypeName}`;

/** A declaration as read: the kind (aliases resolved), the dataclass an entity or selection is of, whether it may be missing. */
export interface ParsedParam {
  readonly name?: string;
  readonly kind: Exclude<ParamKind, 'text' | 'collection'>;
  readonly dataClass?: string;
  readonly optional: boolean;
}

const ALIASES: Partial<Record<ParamKind, ParsedParam['kind']>> = { text: 'string', collection: 'array' };
const NAME = /^[A-Za-z_$][\w$]*$/;

/** A declaration read, or the problem with it. */
function read(t: unknown): ParsedParam | string {
  if (typeof t !== 'string') return `is ${JSON.stringify(t)}, not a text like 'date' or 'since: date'`;
  const colon = t.indexOf(':');
  let name: string | undefined;
  let optional = false;
  let type = t.trim();
  if (colon >= 0) {
    name = t.slice(0, colon).trim();
    type = t.slice(colon + 1).trim();
    if (name.endsWith('?')) {
      optional = true;
      name = name.slice(0, -1);
    }
    if (!NAME.test(name)) return `has the name ${JSON.stringify(name)}: a name is a JavaScript identifier, like since`;
  }
  if (type.endsWith('?')) {
    optional = true;
    type = type.slice(0, -1).trim();
  }
  const named = name === undefined ? {} : { name };
  if ((PARAM_KINDS as readonly string[]).includes(type)) return { ...named, kind: ALIASES[type as ParamKind] ?? (type as ParsedParam['kind']), optional };
  const m = /^([A-Za-z_$][\w$]*?)(Entity|Selection)$/.exec(type);
  if (m) return { ...named, kind: m[2] === 'Entity' ? 'entity' : 'selection', dataClass: m[1], optional };
  return `has type ${JSON.stringify(type)}: a type is one of ${PARAM_KINDS.join(', ')}, or <DataClass>Entity, <DataClass>Selection (EmployeeEntity), optionally followed by ?`;
}

/** Checks a declaration (at start-up); returns the problem, or undefined. The dataclasses named are checked by dataClassProblem, once the model is known. */
export function paramTypesProblem(types: unknown): string | undefined {
  if (!Array.isArray(types)) return 'parameter types are a list, like [\'since: date\', \'until?: date\']';
  let optionalBefore = false;
  for (const [i, t] of types.entries()) {
    const p = read(t);
    if (typeof p === 'string') return `parameter #${i + 1} ${p}`;
    if (optionalBefore && !p.optional) return `parameter #${i + 1} is required but follows an optional one`;
    optionalBefore = p.optional;
  }
  const names = types.map((t) => (read(t) as ParsedParam).name).filter((n) => n !== undefined);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  return twice === undefined ? undefined : `the name ${twice} is given to two parameters`;
}

/** The declaration as read (checked already: see paramTypesProblem). */
export function parseParam(t: ParamType): ParsedParam {
  const p = read(t);
  if (typeof p === 'string') throw new TypeError(`a parameter declaration ${p}`);
  return p;
}

/** A declaration naming a dataclass the model does not have, or undefined (checked when the project opens). */
export function dataClassProblem(types: readonly ParamType[], has: (dataClass: string) => boolean): string | undefined {
  for (const [i, t] of types.entries()) {
    const p = parseParam(t);
    if (p.dataClass !== undefined && !has(p.dataClass)) return `parameter #${i + 1} is ${p.kind === 'entity' ? 'an entity' : 'an entity selection'} of ${p.dataClass}, a dataclass the model does not have`;
  }
  return undefined;
}

/** What a declaration takes, in words (the errors and the API description say it so). */
export function expected(p: ParsedParam): string {
  switch (p.kind) {
    case 'any':
      return 'any value';
    case 'string':
      return 'a text (a JSON string)';
    case 'number':
    case 'boolean':
      return `a ${p.kind}`;
    case 'date':
      return 'a date: an ISO 8601 string such as "2024-05-01" or "2024-05-01T09:30:00Z"';
    case 'object':
      return 'a JSON object';
    case 'array':
      return 'a collection (a JSON array)';
    case 'entity':
      return `${p.dataClass ? `an entity of ${p.dataClass}` : 'an entity'}: {"__DATACLASS": "${p.dataClass ?? '…'}", "__ENTITY": true, "__KEY": …}`;
    case 'selection':
      return `${p.dataClass ? `an entity selection of ${p.dataClass}` : 'an entity selection'}: {"__DATASET": "<entity set id>", "__ENTITIES": true}`;
    default: {
      const never: never = p.kind;
      return never;
    }
  }
}

/** The arguments converted to the declared types; a 400 naming the parameter when one does not fit. */
export function convertArgs(types: readonly ParamType[], args: readonly unknown[], fn: string): unknown[] {
  if (args.length > types.length) {
    throw new DatasetError('INVALID_PARAMETER', `${fn} takes ${types.length} parameter${types.length === 1 ? '' : 's'}; got ${args.length}`);
  }
  return types.map((t, i) => convert(parseParam(t), args[i], i, args.length, fn));
}

function convert(p: ParsedParam, v: unknown, i: number, given: number, fn: string): unknown {
  const which = `parameter #${i + 1}${p.name === undefined ? '' : ` (${p.name})`} of ${fn}`;
  const fail = (takes: string) => new DatasetError('INVALID_PARAMETER', `${which} is ${takes}; got ${describe(v, i, given)}`);
  const { kind } = p;
  if (v === undefined || v === null) {
    if (p.optional || kind === 'any') return v;
    throw fail(kind === 'string' || kind === 'number' || kind === 'boolean' || kind === 'date' || kind === 'object' || kind === 'array' ? `required (${kind === 'string' ? 'text' : kind === 'array' ? 'collection' : kind})` : `required: ${expected(p)}`);
  }
  switch (kind) {
    case 'any':
      return v;
    case 'string':
    case 'number':
    case 'boolean':
      if (typeof v !== kind) throw fail(kind === 'string' ? 'a text' : `a ${kind}`);
      return v;
    case 'date': {
      const d = typeof v === 'string' ? parseDate(v) : undefined;
      if (!d || Number.isNaN(d.getTime())) throw fail(expected(p));
      return d;
    }
    case 'object':
      if (typeof v !== 'object' || Array.isArray(v) || v instanceof Entity || v instanceof EntitySelection) throw fail(expected(p));
      return v;
    case 'array':
      if (!Array.isArray(v)) throw fail('a JSON array');
      return v;
    case 'entity':
      if (!(v instanceof Entity) || (p.dataClass !== undefined && v.getDataClass().name !== p.dataClass)) throw fail(expected(p));
      return v;
    case 'selection':
      if (!(v instanceof EntitySelection) || (p.dataClass !== undefined && v.getDataClass().name !== p.dataClass)) throw fail(expected(p));
      return v;
    default: {
      const never: never = kind;
      return never;
    }
  }
}

function describe(v: unknown, i: number, given: number): string {
  if (i >= given) return 'nothing';
  if (v instanceof Entity) return `an entity of ${v.getDataClass().name}`;
  if (v instanceof EntitySelection) return `an entity selection of ${v.getDataClass().name}`;
  return JSON.stringify(v)?.slice(0, 60) ?? String(v);
}
