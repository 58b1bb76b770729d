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

export const FOLD_VERSION = 3;

/** The column holding the folded form of a string attribute's column. */
export function foldColumn(column: string): string {
  return `${column}__fold`;
}
