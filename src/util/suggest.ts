// "Did you mean …?" for names: the closest candidate by edit distance, when it is close enough.

import { distance } from 'fastest-levenshtein';

export function closest(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestScore = Infinity;
  const lower = name.toLowerCase();
  for (const c of candidates) {
    // A case-only difference is the likeliest slip: names are case-sensitive (reference §1.3).
    const score = c.toLowerCase() === lower ? 0 : distance(lower, c.toLowerCase());
    if (score < bestScore) {
      best = c;
      bestScore = score;
    }
  }
  if (best === undefined) return undefined;
  const allowed = Math.max(2, Math.floor(name.length / 3));
  return bestScore <= allowed ? best : undefined;
}

/** ", did you mean 'x'?" or "" — to append to a message. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const c = closest(name, candidates);
  return c === undefined ? '' : `, did you mean '${c}'?`;
}
