// What every pass of the model's build shares (model/load-model.ts): the draft a pass hands to
// the next (the dataclasses read so far, where each stood in the JSON, the attributes still to
// finish), the one way to report a problem (its JSON path and what is wrong: every problem is
// collected, none stops the build), and the small checks of a name, a key list, a flag or a
// rename that several passes make.

import { didYouMean } from '../../util/suggest.js';
import type { AttributeModel, DataClassModel } from '../types.js';

export type Json = Record<string, unknown>;
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };
/** Reports a problem at a JSON path; the build goes on, to report every one. */
export type Fail = (path: string, msg: string) => void;

export const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** An attribute entry of model.json, where it stands. */
export interface RawAttribute {
  readonly raw: Json;
  readonly path: string;
}

/**
 * An attribute read but not finished (a relation, an alias, a calculated attribute): it keeps its
 * JSON and path until the pass that resolves its kind replaces it (omitPending) with the finished
 * attribute.
 */
export type Pending = { kind: string; name: string; __raw?: Json; __path: string };

/** The model as the passes build it, handed from one to the next. */
export interface Draft {
  /** the dataclasses, in the JSON's order (those with a problem in their own entry left out) */
  readonly classes: Mutable<DataClassModel>[];
  /** where each dataclass stands in the JSON (some entries may have been skipped) */
  readonly jsonIndex: Map<DataClassModel, number>;
  /** each dataclass's attribute entries, unread */
  readonly rawAttrs: Map<DataClassModel, RawAttribute[]>;
  readonly byName: Map<string, DataClassModel>;
  readonly byCollection: Map<string, DataClassModel>;
}

/** The attributes of a dataclass, as a pass changes them (the model is frozen only at the end). */
export function attributesOf(dc: DataClassModel): AttributeModel[] {
  return dc.attributes as AttributeModel[];
}

export function omitPending<T extends object>(p: T): T {
  const { __raw: _r, __path: _p, ...rest } = p as T & { __raw?: unknown; __path?: unknown };
  return rest as T;
}

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function checkName(v: unknown, path: string, fail: Fail): v is string {
  if (typeof v !== 'string' || !NAME.test(v)) {
    fail(path, `must be a name made of letters, digits and _ (not starting with a digit); got ${JSON.stringify(v)}`);
    return false;
  }
  if (v.includes('__') || v.toLowerCase().startsWith('sqlite_')) {
    fail(path, `'${v}': names containing '__' (__KEY, __STAMP, the folded text columns …) or starting with 'sqlite_' are reserved`);
    return false;
  }
  return true;
}

export function checkKeys(obj: Json, allowed: readonly string[], path: string, fail: Fail): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) fail(`${path}.${key}`, `unknown property '${key}'${didYouMean(key, allowed)}`);
  }
}

export function optionalBool(obj: Json, key: string, path: string, fail: Fail): void {
  if (obj[key] !== undefined && typeof obj[key] !== 'boolean') fail(`${path}.${key}`, 'must be true or false');
}

/** A `renamedFrom` is a name (the one it had before), not its own. */
export function checkRenamedFrom(v: unknown, own: string, path: string, fail: Fail): string | undefined {
  if (v === undefined) return undefined;
  if (!checkName(v, path, fail)) return undefined;
  if (v === own) {
    fail(path, `'${v}' is its own name: renamedFrom names the name it had before`);
    return undefined;
  }
  if (v.toLowerCase() === own.toLowerCase()) {
    // (SQLite's names are case-insensitive: the column would be renamed onto itself)
    fail(path, `'${v}' differs from '${own}' only by case, which is no rename to the database: keep the former name, or rename through another name`);
    return undefined;
  }
  return v;
}

/**
 * Two names for one old table or column would make the rename ambiguous: a renamedFrom may not
 * name something the model still has (under that name it stays), nor be given twice.
 */
export function checkRenames<T extends { name: string; renamedFrom?: string }>(
  items: readonly T[], pathOf: (item: T) => string, what: string, fail: Fail, all: readonly { name: string }[] = items,
): void {
  const seen = new Map<string, string>();
  for (const item of items) {
    const from = item.renamedFrom;
    if (from === undefined) continue;
    const still = all.find((o) => o.name.toLowerCase() === from.toLowerCase());
    if (still) fail(pathOf(item), `'${from}' is still the name of ${what} in the model: renamedFrom names a name no longer used`);
    else if (seen.has(from.toLowerCase())) fail(pathOf(item), `'${from}' is already the renamedFrom of ${seen.get(from.toLowerCase())}`);
    seen.set(from.toLowerCase(), item.name);
  }
}
