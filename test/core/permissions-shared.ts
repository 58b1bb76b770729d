// What the files of roles.json (permissions-file.test.ts, permissions-policy.test.ts) share: the
// resources a test file knows, reading a file's text into a RolesFile or a Policy, and the
// assertions of a refusal at its line and column.

import assert from 'node:assert/strict';
import { Policy } from '../../src/permissions/policy.js';
import { parseRolesFile, RolesFileError, type KnownResources, type RolesFile } from '../../src/permissions/roles-file.js';

export const KNOWN: KnownResources = {
  dataClasses: new Map([
    ['Company', new Set(['ID', 'name', 'revenue', 'staff'])],
    ['Employee', new Set(['ID', 'firstName', 'lastName', 'salary', 'employer'])],
    ['Invoice', new Set(['ID', 'total'])],
  ]),
  functions: new Set(['ds.authentify', 'ds.loginAs', 'Company.raiseSalaries', 'Employee.fullName', 'Invoice.send']),
  singletons: new Map([['Counter', new Set(['next', 'reset'])]]),
};

export function parse(text: string): RolesFile {
  return parseRolesFile(text, 'Project/Sources/roles.json', KNOWN);
}

/** A roles.json text from an object, so tests need only say what matters. */
export function rolesText(content: Record<string, unknown>): string {
  return JSON.stringify({ privileges: [], permissions: { allowed: [] }, ...content }, null, 2);
}

export function policyOf(content: Record<string, unknown>): Policy {
  return Policy.fromFile(parse(rolesText(content)));
}

/** The RolesFileError parsing this text throws (fails the test when it throws none). */
export function errorOf(text: string): RolesFileError {
  try {
    parse(text);
  } catch (e) {
    if (e instanceof RolesFileError) return e;
    throw e;
  }
  assert.fail('expected a RolesFileError');
}

export function assertRefused(text: string, line: number, column: number, problem: RegExp): void {
  const error = errorOf(text);
  assert.match(error.problem, problem);
  assert.deepEqual({ line: error.line, column: error.column }, { line, column }, error.message);
  assert.equal(error.message, `Project/Sources/roles.json:${line}:${column}: ${error.problem}`);
}

/** Where the n-th occurrence of a string starts, 1-based, worked out independently of the code under test. */
export function positionOf(text: string, needle: string, occurrence = 1): { line: number; column: number } {
  let offset = -1;
  for (let i = 0; i < occurrence; i++) offset = text.indexOf(needle, offset + 1);
  assert.ok(offset >= 0, `${needle} in the text`);
  const lines = text.slice(0, offset).split('\n');
  return { line: lines.length, column: lines[lines.length - 1].length + 1 };
}

export function assertRefusedAt(text: string, needle: string, problem: RegExp, occurrence = 1): void {
  const { line, column } = positionOf(text, needle, occurrence);
  assertRefused(text, line, column, problem);
}

export const permission = (applyTo: string, type: string, lists: Record<string, unknown> = {}): Record<string, unknown> => ({ applyTo, type, ...lists });
