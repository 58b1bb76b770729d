// 4D compares text without regard to case or accents ("é" = "e", "A" = "a"): every string is
// compared (and sorted) by its folded form, stored beside it and computed by this function alone.

/** Letters that are not a base letter plus marks, so that NFKD leaves them whole. */
const LETTERS: Record<string, string> = {
  ł: 'l', ø: 'o', đ: 'd', ð: 'd', ħ: 'h', ı: 'i', ŧ: 't', ß: 'ss', æ: 'ae', œ: 'oe', þ: 'th', ĳ: 'ij',
};
const SPECIAL = new RegExp(`[${Object.keys(LETTERS).join('')}]`, 'g');

/**
 * The folded form of a text: compatibility decomposition, combining marks removed, lower case,
 * and the letters above replaced. Bump FOLD_VERSION whenever this changes: stored folds are
 * then recomputed at start-up.
 */
export function fold(text: string): string {
  const lower = text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
  return lower.replace(SPECIAL, (c) => LETTERS[c]);
}

export const FOLD_VERSION = 2;

/** The column holding the folded form of a string attribute's column. */
export function foldColumn(column: string): string {
  return `${column}__fold`;
}
