// 4D compares text without regard to case or accents ("é" = "e", "A" = "a"): every string is
// compared (and sorted) by its folded form, stored beside it and computed by this function alone.

export function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

/** The column holding the folded form of a string attribute's column. */
export function foldColumn(column: string): string {
  return `${column}__fold`;
}
