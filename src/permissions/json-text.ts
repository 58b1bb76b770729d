// Strict JSON read as a tree of located nodes (jsonc-parser), for configuration files whose every
// mistake must be reported at its line and column: parsing, positions, and typed access to nodes
// that reports the JSON type found. What a file means is its reader's (roles-file.ts).

import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import { didYouMean } from '../util/suggest.js';

export type { Node } from 'jsonc-parser';

/** Reports a problem at a node (or an offset in the text) by throwing the reader's own error. */
export type Fail = (at: Node | number, problem: string) => never;

export interface Member {
  readonly keyNode: Node;
  readonly value: Node;
}

export interface LineColumn {
  /** 1-based */
  readonly line: number;
  /** 1-based, in characters (a character outside the BMP counts once, as editors count it) */
  readonly column: number;
}

const BOM = 0xfeff;

/** Parses strict JSON (no comments, no trailing commas); the first syntax error fails. */
export function parseStrictJson(text: string, fail: Fail): Node {
  // (trim() counts a byte-order mark as white space)
  if (text.trim() === '') {
    return fail(0, 'the file is empty; it must hold a JSON object');
  }
  // A byte-order mark is no JSON; a space of the same length keeps every offset where it was.
  const source = text.charCodeAt(0) === BOM ? ` ${text.slice(1)}` : text;
  const errors: ParseError[] = [];
  const root = parseTree(source, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  const first = errors[0];
  if (first !== undefined) return fail(first.offset, describeSyntaxError(first, source));
  if (root === undefined) return fail(0, 'no JSON value found');
  return root;
}

/** The 1-based line and column of an offset (lines end at \n, \r\n or \r). */
export function lineColumn(text: string, offset: number): LineColumn {
  let line = 1;
  // a leading byte-order mark is invisible in editors: columns on line 1 start after it
  let lineStart = text.charCodeAt(0) === BOM ? 1 : 0;
  const end = Math.min(offset, text.length);
  for (let i = lineStart; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || (c === 0x0d && text.charCodeAt(i + 1) !== 0x0a)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: [...text.slice(lineStart, Math.max(offset, lineStart))].length + 1 };
}

/** "an object", "a string", "true", "null"…: what a node is, for "must be X, found Y". */
export function kindOf(node: Node): string {
  switch (node.type) {
    case 'object': return 'an object';
    case 'array': return 'an array';
    case 'string': return 'a string';
    case 'number': return 'a number';
    case 'boolean': return String(node.value);
    case 'null': return 'null';
    default: return node.type;
  }
}

/**
 * The members of an object node by key. An unknown key fails (naming the accepted ones: a typo
 * must never be read as "nothing said"), and so does a repeated one (JSON would keep only one).
 */
export function readObject(node: Node, accepted: readonly string[], what: string, fail: Fail): ReadonlyMap<string, Member> {
  if (node.type !== 'object') return fail(node, `${what} must be an object, found ${kindOf(node)}`);
  const members = new Map<string, Member>();
  for (const property of node.children ?? []) {
    const [keyNode, value] = property.children ?? [];
    // parseStrictJson has refused every syntax error, so each property has its key and value
    if (keyNode === undefined || value === undefined) return fail(property, `incomplete property in ${what}`);
    const key = String(keyNode.value);
    if (!accepted.includes(key)) {
      return fail(keyNode, `unknown key '${key}' in ${what}${didYouMean(key, accepted)} (accepted: ${accepted.join(', ')})`);
    }
    if (members.has(key)) return fail(keyNode, `duplicate key '${key}' in ${what}`);
    members.set(key, { keyNode, value });
  }
  return members;
}

export function asArray(node: Node, what: string, fail: Fail, expected = 'an array'): readonly Node[] {
  if (node.type !== 'array') return fail(node, `${what} must be ${expected}, found ${kindOf(node)}`);
  return node.children ?? [];
}

export function asString(node: Node, what: string, fail: Fail): string {
  if (node.type !== 'string') return fail(node, `${what} must be a string, found ${kindOf(node)}`);
  return node.value as string;
}

export function asBoolean(node: Node, what: string, fail: Fail): boolean {
  if (node.type !== 'boolean') return fail(node, `${what} must be true or false, found ${kindOf(node)}`);
  return node.value as boolean;
}

function describeSyntaxError(error: ParseError, text: string): string {
  const code = printParseErrorCode(error.error);
  // "CloseBraceExpected" → "close brace expected"
  const words = code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  if (code === 'InvalidCommentToken') return 'invalid JSON: comments are not allowed';
  const before = text.slice(0, error.offset).trimEnd();
  if ((code === 'PropertyNameExpected' || code === 'ValueExpected') && before.endsWith(',')) {
    return `invalid JSON: ${words} (a trailing comma is not allowed)`;
  }
  return `invalid JSON: ${words}`;
}
