// SQLite's `text LIKE pattern ESCAPE '\'`, decided in JavaScript in time linear in the text and
// the pattern (for the patterns queries make: `%` and escaped characters), with a check between
// its steps. SQLite's own LIKE costs the text's length times the pattern's in one native call that
// nothing interrupts: a 7,000-character pattern over a 1,000,000-character text held the event
// loop 24 s. The SQLite driver registers this as the match of texts with no bound on their length
// (the whole fold of a long text, JSON values: sql/compiler/conditions.ts), where the check is the query
// time limit's.
//
// Same answers as SQLite's LIKE with ESCAPE '\' (test/core/like.test.ts compares them on random
// texts): ASCII letters match without regard to case (and no other letter), `_` matches one code
// point, `%` any run of them, an escape makes the character after it literal, and a pattern
// ending in a lone escape matches nothing; a text or a pattern ends at its first U+0000, as SQLite
// reads them.
//
// How: a pattern is its runs between `%`s (segments). Without a `%` the text is the one segment;
// else the first segment starts the text, the last one ends it, and each one between is found
// leftmost after the one before (the leftmost end leaves the most room for the rest, so that
// greedy search decides). A segment without `_` is found by Knuth-Morris-Pratt (linear whatever
// the texts: V8's String.indexOf took 2.1 s to find no a{3000}ba{3000} in a{1000000}), or by
// indexOf when short; one with `_` (only the server's own length tests make them) is tried at
// each position, checking as it goes.

/** A run of a pattern: literal text (`text`), or `any` code points (`_`s). */
type Piece = { readonly text: string } | { readonly any: number };

interface Segment {
  readonly pieces: readonly Piece[];
  /** the segment is one literal text (found by search()), or empty */
  readonly literal: string | null;
  /** how many code points it matches */
  readonly points: number;
  /** the literal's code units, its Knuth-Morris-Pratt table and its first distinct characters, made at its first search */
  codes?: Uint16Array;
  table?: Int32Array;
  distinct?: readonly string[];
}

interface Pattern {
  /** the segments between `%`s; one when the pattern holds none */
  readonly segments: readonly Segment[];
  /** a lone escape ends it: nothing matches */
  readonly never: boolean;
}

/** Code units a search goes through between two checks. */
const CHECK_EVERY = 1 << 16;
/** Literals this long at most are found by String.indexOf (at worst this many times the text's length). */
const SHORT_LITERAL = 16;
/** The distinct characters of a long literal looked for in the text before it is searched. */
const DISTINCT_CHECKED = 8;

const UPPER_ASCII = /[A-Z]/;
const UPPER_ASCII_RUNS = /[A-Z]+/g;

/** ASCII letters in lower case, every other character as it is (SQLite's LIKE ignores the case of those only). */
function lowerAscii(s: string): string {
  return UPPER_ASCII.test(s) ? s.replace(UPPER_ASCII_RUNS, (run) => run.toLowerCase()) : s;
}

/** The text up to its first U+0000 (where SQLite's LIKE stops reading it). */
function untilNul(s: string): string {
  const at = s.indexOf('\0');
  return at < 0 ? s : s.slice(0, at);
}

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/** The index after the code point at `at` (a surrogate pair is one). */
function nextPoint(s: string, at: number): number {
  return isHigh(s.charCodeAt(at)) && isLow(s.charCodeAt(at + 1)) ? at + 2 : at + 1;
}

function segment(pieces: Piece[]): Segment {
  let points = 0;
  for (const p of pieces) points += 'any' in p ? p.any : pointLength(p.text);
  const literal = pieces.length === 0 ? '' : pieces.length === 1 && 'text' in pieces[0] ? pieces[0].text : null;
  return { pieces, literal, points };
}

function pointLength(s: string): number {
  let n = 0;
  for (let at = 0; at < s.length; at = nextPoint(s, at)) n++;
  return n;
}

/** Reads a pattern (already cut at U+0000 and in lower case). */
function parse(pattern: string): Pattern {
  const segments: Segment[] = [];
  let pieces: Piece[] = [];
  let text = '';
  const flush = () => {
    if (text !== '') pieces.push({ text });
    text = '';
  };
  for (let at = 0; at < pattern.length;) {
    const c = pattern[at];
    if (c === '%') {
      flush();
      segments.push(segment(pieces));
      pieces = [];
      at++;
    } else if (c === '_') {
      flush();
      const last = pieces[pieces.length - 1];
      if (last !== undefined && 'any' in last) pieces[pieces.length - 1] = { any: last.any + 1 };
      else pieces.push({ any: 1 });
      at++;
    } else if (c === '\\') {
      if (at + 1 >= pattern.length) return { segments: [], never: true };
      const end = nextPoint(pattern, at + 1);
      text += pattern.slice(at + 1, end);
      at = end;
    } else {
      const end = nextPoint(pattern, at);
      text += pattern.slice(at, end);
      at = end;
    }
  }
  flush();
  segments.push(segment(pieces));
  return { segments, never: false };
}

/** The index after `seg` matched at `at` in `s`, or -1. */
function matchAt(s: string, at: number, seg: Segment): number {
  for (const p of seg.pieces) {
    if ('any' in p) {
      for (let i = 0; i < p.any; i++) {
        if (at >= s.length) return -1;
        at = nextPoint(s, at);
      }
    } else {
      if (!s.startsWith(p.text, at)) return -1;
      at += p.text.length;
    }
  }
  return at;
}

/** For each length of a prefix of `p`, the length of the longest proper prefix of `p` that ends it. */
function kmpTable(p: string): Int32Array {
  const table = new Int32Array(p.length);
  for (let i = 1, k = 0; i < p.length; i++) {
    const c = p.charCodeAt(i);
    while (k > 0 && p.charCodeAt(k) !== c) k = table[k - 1];
    if (p.charCodeAt(k) === c) k++;
    table[i] = k;
  }
  return table;
}

/** Where the leftmost `seg.literal` at or after `from` ends, or -1: linear in the text and the literal. */
function search(s: string, from: number, seg: Segment & { literal: string }, check: () => void): number {
  const p = seg.literal;
  if (p.length <= SHORT_LITERAL) {
    const at = s.indexOf(p, from);
    return at < 0 ? -1 : at + p.length;
  }
  // a character of the literal that the rest of the text lacks: not there (a few fast scans, before
  // the search proper reads the text a code unit at a time)
  for (const c of (seg.distinct ??= [...new Set(p)].slice(0, DISTINCT_CHECKED))) if (s.indexOf(c, from) < 0) return -1;
  const table = (seg.table ??= kmpTable(p));
  // (an array of code units: a third quicker than the literal's charCodeAt)
  const codes = (seg.codes ??= Uint16Array.from(p, (c) => c.charCodeAt(0)));
  const m = codes.length;
  const firstChar = p[0];
  for (let i = from, k = 0; i < s.length; i++) {
    if (k === 0) {
      // nothing matched yet: on to the next place the literal's first character is (String.indexOf
      // of one character is a fast linear scan)
      i = s.indexOf(firstChar, i);
      if (i < 0) return -1;
      k = 1;
      continue;
    }
    const c = s.charCodeAt(i);
    while (k > 0 && codes[k] !== c) k = table[k - 1];
    if (codes[k] === c && ++k === m) return i + 1;
    if ((i & (CHECK_EVERY * 16 - 1)) === 0) check();
  }
  return -1;
}

/** Where the leftmost match of `seg` at or after `from` ends, or -1. */
function findFrom(s: string, from: number, seg: Segment, check: () => void): number {
  if (seg.literal !== null) return search(s, from, seg as Segment & { literal: string }, check);
  for (let at = from, steps = 0; at < s.length; at = nextPoint(s, at)) {
    const end = matchAt(s, at, seg);
    if (end >= 0) return end;
    if (++steps % CHECK_EVERY === 0) check();
  }
  return -1;
}

/** Where the match of the last `points` code points of `s` starts (at `from` at the earliest), or -1. */
function startOfLast(s: string, points: number, from: number): number {
  let at = s.length;
  for (let n = 0; n < points; n++) {
    if (at <= from) return -1;
    at--;
    if (at > from && isLow(s.charCodeAt(at)) && isHigh(s.charCodeAt(at - 1))) at--;
  }
  return at;
}

let lastPattern: string | undefined;
let lastParsed: Pattern | undefined;

/** The pattern read, kept for the next call (a statement matches every row with the same one). */
function parsed(pattern: string): Pattern {
  if (pattern !== lastPattern || lastParsed === undefined) {
    lastParsed = parse(pattern);
    lastPattern = pattern;
  }
  return lastParsed;
}

const NO_CHECK = (): void => {};

/**
 * `text LIKE pattern ESCAPE '\'` as SQLite decides it. `check` is called between the steps of a
 * long match (and may throw to stop it).
 */
export function likeMatch(text: string, pattern: string, check: () => void = NO_CHECK): boolean {
  const s = lowerAscii(untilNul(text));
  const { segments, never } = parsed(lowerAscii(untilNul(pattern)));
  if (never) return false;
  const first = segments[0];
  if (segments.length === 1) return matchAt(s, 0, first) === s.length;
  let at = matchAt(s, 0, first);
  if (at < 0) return false;
  for (let i = 1; i < segments.length - 1; i++) {
    check();
    at = findFrom(s, at, segments[i], check);
    if (at < 0) return false;
  }
  const last = segments[segments.length - 1];
  const start = startOfLast(s, last.points, at);
  return start >= 0 && matchAt(s, start, last) === s.length;
}
