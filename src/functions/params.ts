// Declared parameter types of a function called over REST. JSON has no dates and TypeScript's
// types are gone at run time, so a function says what it takes — `@params('date', 'number?')`,
// or `params: [...]` in a project method — and the server converts and checks before the call:
// an ISO 8601 string becomes a Date where a date is declared, a wrong value is a 400 naming the
// parameter. Without a declaration, parameters arrive as JSON gives them (dates stay strings).

import { Entity } from '../datastore/entity.js';
import { EntitySelection } from '../datastore/selection.js';
import { parseDate } from '../model/values.js';
import { DatasetError } from '../errors/dataset-error.js';

export const PARAM_KINDS = ['any', 'string', 'number', 'boolean', 'date', 'object', 'array', 'entity', 'selection'] as const;
export type ParamKind = (typeof PARAM_KINDS)[number];
/** A kind, optionally followed by `?`: the parameter may then be missing or null. */
export type ParamType = ParamKind | `${ParamKind}?`;

interface ParsedType {
  readonly kind: ParamKind;
  readonly optional: boolean;
}

/** Checks a declaration (at start-up); returns the problem, or undefined. */
export function paramTypesProblem(types: unknown): string | undefined {
  if (!Array.isArray(types)) return 'parameter types are a list, like [\'date\', \'number?\']';
  for (const [i, t] of types.entries()) {
    const kind = typeof t === 'string' ? t.replace(/\?$/, '') : '';
    if (!(PARAM_KINDS as readonly string[]).includes(kind)) {
      return `parameter #${i + 1} has type ${JSON.stringify(t)}: a type is one of ${PARAM_KINDS.join(', ')}, optionally followed by ?`;
    }
    if (i > 0 && String(types[i - 1]).endsWith('?') && !String(t).endsWith('?')) return `parameter #${i + 1} is required but follows an optional one`;
  }
  return undefined;
}

const parse = (t: ParamType): ParsedType => ({ kind: t.replace(/\?$/, '') as ParamKind, optional: t.endsWith('?') });

/** The arguments converted to the declared types; a 400 naming the parameter when one does not fit. */
export function convertArgs(types: readonly ParamType[], args: readonly unknown[], fn: string): unknown[] {
  if (args.length > types.length) {
    throw new DatasetError('INVALID_PARAMETER', `${fn} takes ${types.length} parameter${types.length === 1 ? '' : 's'}; got ${args.length}`);
  }
  return types.map((t, i) => convert(parse(t), args[i], i, args.length, fn));
}

function convert({ kind, optional }: ParsedType, v: unknown, i: number, given: number, fn: string): unknown {
  const fail = (expected: string) => new DatasetError('INVALID_PARAMETER', `parameter #${i + 1} of ${fn} is ${expected}; got ${describe(v, i, given)}`);
  if (v === undefined || v === null) {
    if (optional || kind === 'any') return v;
    throw fail(`required (${kind})`);
  }
  switch (kind) {
    case 'any':
      return v;
    case 'string':
    case 'number':
    case 'boolean':
      if (typeof v !== kind) throw fail(`a ${kind}`);
      return v;
    case 'date': {
      const d = typeof v === 'string' ? parseDate(v) : undefined;
      if (!d || Number.isNaN(d.getTime())) throw fail('a date: an ISO 8601 string such as "2024-05-01" or "2024-05-01T09:30:00Z"');
      return d;
    }
    case 'object':
      if (typeof v !== 'object' || Array.isArray(v) || v instanceof Entity || v instanceof EntitySelection) throw fail('a JSON object');
      return v;
    case 'array':
      if (!Array.isArray(v)) throw fail('a JSON array');
      return v;
    case 'entity':
      if (!(v instanceof Entity)) throw fail('an entity: {"__DATACLASS": "…", "__ENTITY": true, "__KEY": …}');
      return v;
    case 'selection':
      if (!(v instanceof EntitySelection)) throw fail('an entity selection: {"__DATASET": "<entity set id>", "__ENTITIES": true}');
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
  if (v instanceof EntitySelection) return 'an entity selection';
  return JSON.stringify(v)?.slice(0, 60) ?? String(v);
}
