// Conditions on a string attribute's folded text (case and accents ignored). Its folded column
// keeps only the fold's first FOLD_PREFIX_LENGTH code points (util/fold.ts storedFold), so that a
// long text costs no more than that twice over (column and index): a value shorter than the prefix
// compares on the column alone (exact, and its index serves it); a longer one on the column first
// (the index narrows the rows), then on the whole text folded by the query, so that a comparison
// past the prefix stays exact (docs/decisions.md, "Folded text keeps a prefix").

import { codePointLength, firstCodePoints, FOLD_PREFIX_LENGTH } from '../util/fold.js';
import type { AttributePath, CompareOp, Condition } from './plan.js';

/** The folded column (JSON values are folded by the query: whole, whatever their length). */
const stored = (path: AttributePath): AttributePath => ({ ...path, fold: true });
/** The whole text's fold, computed by the query. */
const computed = (path: AttributePath): AttributePath => ({ ...path, fold: 'computed' });
/** Does a folded value reach past what the folded column holds? */
const long = (folded: string): boolean => codePointLength(folded) >= FOLD_PREFIX_LENGTH;
/** The rows whose folded column may hold a cut fold (as long as the prefix): LIKE counts characters, as the prefix does. */
const mayBeCut = (path: AttributePath): Condition => ({ kind: 'like', path: stored(path), pattern: `${'_'.repeat(FOLD_PREFIX_LENGTH)}%` });

/** `path op folded`, exact whatever the length of the value and of the stored texts. */
export function foldedCompare(path: AttributePath, op: CompareOp, folded: string): Condition {
  if (path.json || !long(folded)) return { kind: 'compare', path: stored(path), op, value: folded };
  // the stored prefix decides unless it equals the value's: then the whole fold does
  const head = firstCodePoints(folded, FOLD_PREFIX_LENGTH);
  const onHead = (o: CompareOp): Condition => ({ kind: 'compare', path: stored(path), op: o, value: head });
  const onWhole = (o: CompareOp): Condition => ({ kind: 'compare', path: computed(path), op: o, value: folded });
  switch (op) {
    case '=':
      return { kind: 'and', items: [onHead('='), onWhole('=')] };
    case '!=':
      return { kind: 'or', items: [onHead('!='), onWhole('!=')] };
    default: {
      const strict = op.startsWith('<') ? '<' : '>';
      return { kind: 'or', items: [onHead(strict), { kind: 'and', items: [onHead('='), onWhole(op)] }] };
    }
  }
}

/** The folded text starts with `folded` (not empty): a range on the column, checked on the whole fold past the prefix. */
export function foldedPrefix(path: AttributePath, folded: string): Condition {
  if (path.json || codePointLength(folded) <= FOLD_PREFIX_LENGTH) return { kind: 'prefix', path: stored(path), prefix: folded };
  const head: Condition = { kind: 'compare', path: stored(path), op: '=', value: firstCodePoints(folded, FOLD_PREFIX_LENGTH) };
  return { kind: 'and', items: [head, { kind: 'prefix', path: computed(path), prefix: folded }] };
}

/** The fewest code points a text matching a LIKE pattern (a backslash escaping) holds: all but its `%`s. */
function leastMatched(pattern: string): number {
  let n = 0;
  for (let at = 0; at < pattern.length; at++) {
    const c = pattern.charCodeAt(at);
    if (c === 0x25) continue; // %
    if (c === 0x5c) at++; // \ and the character it escapes count as that one
    const here = pattern.charCodeAt(at);
    if (here >= 0xd800 && here <= 0xdbff) at++;
    n++;
  }
  return n;
}

/**
 * The folded text matches a LIKE pattern: on the column where it holds the whole fold, else on
 * the whole text folded. A pattern no text of the column's length can match goes to the whole
 * fold only: the column's LIKE then never meets a pattern of more than FOLD_PREFIX_LENGTH code
 * points besides its `%`s (its cost is the text's length times the pattern's, on SQLite's event
 * loop, and SQLite refuses patterns past 50,000 bytes).
 */
export function foldedLike(path: AttributePath, pattern: string): Condition {
  const onStored: Condition = { kind: 'like', path: stored(path), pattern };
  if (path.json) return onStored;
  const onWhole: Condition = { kind: 'and', items: [mayBeCut(path), { kind: 'like', path: computed(path), pattern }] };
  if (leastMatched(pattern) > FOLD_PREFIX_LENGTH) return onWhole;
  // a pattern ending in % that a text's start matches, the whole text matches too
  if (pattern.endsWith('%') && !pattern.endsWith('\\%')) return { kind: 'or', items: [onStored, onWhole] };
  return { kind: 'or', items: [{ kind: 'and', items: [{ kind: 'not', item: mayBeCut(path) }, onStored] }, onWhole] };
}
