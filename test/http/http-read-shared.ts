// What the files of HTTP reads (http-read-*.test.ts) share: the wire shapes they check (entity
// heads, collection and inline-selection envelopes, date forms, 4D's order) and what a file looks
// up in the demo once it is open — the catalog's attributes per dataclass and the 320 employees —
// with the reads it makes. Each file opens the demo itself (openDemo: test/run.ts runs it on both
// engines).

import assert from 'node:assert/strict';
import { fold } from '../../src/util/fold.js';
import type { DemoFixture } from '../support/helpers.js';

export type Json = Record<string, any>;

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** 4D's date-only form: day!month!year, no zero padding */
export const DMY = /^([1-9]|[12]\d|3[01])!([1-9]|1[0-2])!\d{4}$/;
/** the $asArray date form */
export const BANG_DATE = /^!!\d{4}-\d{2}-\d{2}!!$/;
export const ENTITY_HEAD = ['__KEY', '__TIMESTAMP', '__STAMP'];
export const COLLECTION_KEYS = ['__entityModel', '__GlobalStamp', '__COUNT', '__SENT', '__FIRST', '__ENTITIES'];
export const INLINE_SELECTION_KEYS = ['__ENTITYSET', '__GlobalStamp', '__COUNT', '__FIRST', '__ENTITIES', '__SENT'];

export const dmy = (d: Date) => `${d.getUTCDate()}!${d.getUTCMonth() + 1}!${d.getUTCFullYear()}`;
export const sorted = (list: Iterable<string>) => [...list].sort();

/** Code-point order (the order of SQLite's default collation for these values). */
/** 4D's order: text without regard to case or accents (by its folded form), numbers as numbers. */
export function cmp(a: string | number, b: string | number): number {
  const [x, y] = typeof a === 'string' && typeof b === 'string' ? [fold(a), fold(b)] : [a, b];
  return x < y ? -1 : x > y ? 1 : 0;
}

export function assertEntityHead(e: Json, where: string): void {
  assert.equal(typeof e.__KEY, 'string', `${where}: __KEY is a string`);
  assert.match(e.__TIMESTAMP, ISO_MS, `${where}: __TIMESTAMP is ISO 8601 with ms and Z`);
  assert.ok(Number.isInteger(e.__STAMP) && e.__STAMP >= 0, `${where}: __STAMP is a non-negative integer`);
}

export function assertInlineSelection(sel: Json, where: string): void {
  assert.deepEqual(sorted(Object.keys(sel)), sorted(INLINE_SELECTION_KEYS), `${where}: inline selection keys`);
  assert.ok(!('__entityModel' in sel));
  assert.equal(sel.__FIRST, 0);
  assert.equal(sel.__SENT, sel.__ENTITIES.length);
  assert.ok(sel.__COUNT >= sel.__SENT);
  assert.equal(typeof sel.__GlobalStamp, 'number');
}

/** The lookups and reads of a file of HTTP reads over the demo `demo()` gives; `learn()` (in its before) fills them. */
export function demoReads(demo: () => DemoFixture) {
  /** exposed attribute names per dataclass, from the catalog */
  const attributes = new Map<string, Json[]>();
  const names = (dc: string) => (attributes.get(dc) as Json[]).map((a) => a.name);
  const ofKind = (dc: string, ...kinds: string[]) => (attributes.get(dc) as Json[]).filter((a) => kinds.includes(a.kind)).map((a) => a.name);
  /** the 320 employees with their key, number and employer key */
  const employees: Json[] = [];

  const get = async (url: string): Promise<Json> => {
    const res = await demo().request(url);
    assert.equal(res.status, 200, `${url} → ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    return res.body;
  };
  const employee = (n: number) => get(`/rest/Employee:employeeNumber(${n})`);
  const keyOf = (n: number) => {
    const e = employees.find((x) => x.employeeNumber === n);
    assert.ok(e, `employee ${n}`);
    return e.__KEY as string;
  };
  const learn = async () => {
    const all = await get('/rest/$catalog/$all');
    for (const d of all.dataClasses) attributes.set(d.name, d.attributes);
    const list = await get('/rest/Employee?$top=1000&$attributes=employeeNumber,employerID,managerID');
    employees.push(...(list.__ENTITIES as Json[]));
  };
  return { attributes, names, ofKind, employees, get, employee, keyOf, learn };
}
