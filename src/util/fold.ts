// 4D compares text without regard to case or accents ("é" = "e", "A" = "a"): every string is
// compared (and sorted) by its folded form, stored beside it and computed by this function alone.

/** Letters that are not a base letter plus marks, so that NFKD leaves them whole. */
export const FOLD_LETTERS: Readonly<Record<string, string>> = {
  // the final sigma: toLowerCase() makes Σ at the end of a word ς, elsewhere σ; a fold ignores the difference
  ς: 'σ',
  ł: 'l', ø: 'o', đ: 'd', ð: 'd', ħ: 'h', ı: 'i', ŧ: 't', ß: 'ss', æ: 'ae', œ: 'oe', þ: 'th', ĳ: 'ij',
};
const SPECIAL = new RegExp(`[${Object.keys(FOLD_LETTERS).join('')}]`, 'g');

/**
 * The folded form of a text: compatibility decomposition, combining marks removed, lower case,
 * and the letters above replaced: each character folds on its own, whatever surrounds it (the
 * PostgreSQL function of sql/fold-postgres.ts relies on it). Bump FOLD_VERSION whenever this changes: stored folds are
 * then recomputed at start-up.
 */
export function fold(text: string): string {
  const lower = text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
  return lower.replace(SPECIAL, (c) => FOLD_LETTERS[c]);
}

/** Code units folded between two checks of foldChecked (10 to 30 ms of work; smaller chunks cost more in all). */
const FOLD_CHUNK = 1 << 20;

/**
 * fold(text), a chunk at a time, calling `check` before each (it may throw to stop): a fold in a
 * query may be of a text of millions of characters, and a character folds alone, so the chunks'
 * folds make the whole one (a surrogate pair is never cut).
 */
export function foldChecked(text: string, check: () => void): string {
  check();
  if (text.length < MEMO_LENGTH) return fold(text);
  // a query folds the same long text again and again (each OR of a filter, the count and then the
  // page): the last one is kept (compared whole, a few hundred µs for a million characters)
  if (text === memo.text) return memo.folded;
  let folded = '';
  for (let at = 0; at < text.length;) {
    const end = codePointsEnd(text, at, FOLD_CHUNK);
    folded += fold(text.slice(at, end));
    at = end;
    if (at < text.length) check();
  }
  memo.text = text;
  memo.folded = folded;
  return folded;
}

/** Texts this long at least are folded once for several calls of foldChecked in a row. */
const MEMO_LENGTH = 10_000;
const memo = { text: '', folded: '' };

/**
 * How many characters (code points) of a text's folded form its folded column keeps, for the
 * index and the comparisons it serves; past them a query folds the whole text itself (storedFold below;
 * docs/decisions.md). 500 code points are at most 2,000 bytes of
 * UTF-8: an entry PostgreSQL's B-tree takes (its limit is about 2,700 bytes).
 */
export const FOLD_PREFIX_LENGTH = 500;

// 4: folded columns keep the first FOLD_PREFIX_LENGTH code points only (storedFold)
export const FOLD_VERSION = 4;

/** Where the `n` code points of a text from `start` end (a surrogate pair is never cut in two). */
function codePointsEnd(text: string, start: number, n: number): number {
  let at = start;
  for (let points = 0; points < n && at < text.length; points++) {
    const c = text.charCodeAt(at);
    at += c >= 0xd800 && c <= 0xdbff && at + 1 < text.length ? 2 : 1;
  }
  return at;
}

/** The first `n` code points of a text. */
export function firstCodePoints(text: string, n: number): string {
  return text.length <= n ? text : text.slice(0, codePointsEnd(text, 0, n));
}

/** How many code points a text holds (what SQL's length() counts). */
export function codePointLength(text: string): number {
  let n = text.length;
  for (let i = 0; i + 1 < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      n--;
      i++;
    }
  }
  return n;
}

/**
 * What a text's folded column holds: its fold cut to the first FOLD_PREFIX_LENGTH code points.
 * The fold of a whole text may be 18 times its length (NFKD makes 18 letters of U+FDFA): stored,
 * then copied again into the column's index, a 10 MB text cost 220 MB. Only the text's start is
 * folded (a character folds alone, so the fold of a start is the start of the fold; folding
 * grows as it goes until the prefix is full, marks folding to nothing). A fold of exactly
 * FOLD_PREFIX_LENGTH code points may be cut: queries compare such values with the whole text's
 * fold, computed in SQL (query/folded-text.ts).
 */
export function storedFold(text: string, limit: number = FOLD_PREFIX_LENGTH): string {
  let folded = '';
  let at = 0;
  while (at < text.length) {
    // a chunk at least as long as what is missing (a character folds to one or more, or to nothing)
    const end = codePointsEnd(text, at, Math.max(limit, 4096));
    folded += fold(text.slice(at, end));
    at = end;
    if (codePointLength(folded) >= limit) return firstCodePoints(folded, limit);
  }
  return folded;
}

/** The column holding the folded form of a string attribute's column. */
export function foldColumn(column: string): string {
  return `${column}__fold`;
}

/**
 * The form a user name is known by wherever one is looked up or counted (the built-in users'
 * store, the lockout, the login throttle): its fold, bounded. Names that reach one user share it.
 */
export function foldedUserName(userName: string): string {
  return storedFold(userName, USER_NAME_FOLD_LENGTH);
}

/** How much of a folded user name counts (names are at most 100 characters; a fold may be longer). */
const USER_NAME_FOLD_LENGTH = 400;
