// The text fold (util/fold.ts) as a PostgreSQL function, for values folded inside a query
// (properties of object attributes: stored columns carry their fold already, computed in
// JavaScript). Generated from the JavaScript fold itself, so that both agree character for
// character: NFKD (normalize), the combining marks removed (one bracket expression listing every
// \p{M} range), then one translate() with every single-character lower case and special letter,
// then replace() for the letters that become two (ß → ss …). Plain ASCII, most text, takes a
// shortcut: lower() under the C collation changes A–Z only, as toLowerCase() does on ASCII.

import { fold, FOLD_LETTERS } from '../util/fold.js';

export const PG_FOLD_FUNCTION = 'dataset_fold';

const MAX_CODE_POINT = 0x10ffff;

/** Every code point but the surrogates, in order, in one string: native regexes then find the few that matter fast. */
function everyCharacter(): string {
  const chunks: string[] = [];
  for (let start = 0; start <= MAX_CODE_POINT; start += 0x1000) {
    const cps: number[] = [];
    for (let cp = start; cp < start + 0x1000 && cp <= MAX_CODE_POINT; cp++) if (cp < 0xd800 || cp > 0xdfff) cps.push(cp);
    chunks.push(String.fromCodePoint(...cps));
  }
  return chunks.join('');
}

/** A PostgreSQL regex escape for a code point (\uXXXX, \UXXXXXXXX), valid inside brackets. */
function escape(cp: number): string {
  return cp <= 0xffff ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\U${cp.toString(16).padStart(8, '0')}`;
}

/** `[…]` of every combining mark (\p{M}), as ranges (runs of consecutive marks). */
function markClass(all: string): string {
  const parts: string[] = [];
  for (const [run] of all.matchAll(/\p{M}+/gu)) {
    const cps = [...run];
    const first = cps[0].codePointAt(0) as number;
    const last = cps[cps.length - 1].codePointAt(0) as number;
    parts.push(first === last ? escape(first) : `${escape(first)}-${escape(last)}`);
  }
  return `[${parts.join('')}]`;
}

/**
 * What the fold does to each character that is no mark and survives NFKD unchanged, when that
 * differs from the character: those that change when lower-cased, and the special letters.
 * Single characters go to translate(), longer results to replace().
 */
function characterMap(all: string): { from: string; to: string; longer: [string, string][] } {
  let from = '';
  let to = '';
  const longer: [string, string][] = [];
  for (const [c] of all.matchAll(new RegExp(`[\\p{Changes_When_Lowercased}${Object.keys(FOLD_LETTERS).join('')}]`, 'gu'))) {
    if (c.normalize('NFKD') !== c) continue;
    const f = fold(c);
    if (f === c) continue;
    if ([...f].length === 1) {
      from += c;
      to += f;
    } else {
      longer.push([c, f]);
    }
  }
  return { from, to, longer };
}

const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** CREATE OR REPLACE FUNCTION dataset_fold(text): run by the schema sync, under its lock. */
export function postgresFoldFunction(): string {
  const all = everyCharacter();
  const { from, to, longer } = characterMap(all);
  let folded = `translate(regexp_replace(normalize(t, NFKD), ${literal(markClass(all))}, '', 'g'), ${literal(from)}, ${literal(to)})`;
  // letters whose fold is longer than one character (ß, Æ …), which translate() left alone
  for (const [c, f] of longer) folded = `replace(${folded}, ${literal(c)}, ${literal(f)})`;
  return `CREATE OR REPLACE FUNCTION ${PG_FOLD_FUNCTION}(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fold$
  SELECT CASE WHEN t ~ '^[\\x01-\\x7f]*$' THEN lower(t COLLATE "C") ELSE ${folded} END
$fold$`;
}
