// A LIKE pattern (`\` escaping) as the PostgreSQL regular expression (ARE) that matches the same
// texts: how PostgreSQL matches texts with no bound on their length (sql/dialect-postgres.ts
// unboundedLike). Its LIKE costs the text's length times the pattern's and does not stop for a
// statement_timeout or a cancel until it is done (a 7,000-character pattern over 1,000,000
// characters ran 55 s past a 1 s limit; strpos() alike), while its regular expressions check for
// a cancel as they go: a runaway match is stopped at the query time limit.
//
// `%` is `.*`, `_` is `.` (one character; a newline too: the expression is not newline-sensitive),
// an escaped character and every other character stand for themselves (the expression's own
// special characters escaped), and the expression is anchored at both ends, as LIKE matches the
// whole text. A pattern ending in a lone escape matches nothing, as SQLite's LIKE decides
// (PostgreSQL's LIKE refuses it); the server's own patterns never end so.

/** The characters an ARE reads as operators outside a bracket expression. */
const SPECIAL = new Set(['\\', '^', '$', '.', '|', '?', '*', '+', '(', ')', '[', ']', '{', '}']);
/** An expression no text matches (an end of text, then a character). */
const NOTHING = '$.^';

/** The one code point at `at`, as a string (a surrogate pair whole). */
function pointAt(s: string, at: number): string {
  const c = s.charCodeAt(at);
  return c >= 0xd800 && c <= 0xdbff && at + 1 < s.length ? s.slice(at, at + 2) : s[at];
}

/** The anchored regular expression that matches what `text LIKE pattern ESCAPE '\'` does. */
export function likeRegex(pattern: string): string {
  let re = '^';
  for (let at = 0; at < pattern.length;) {
    const c = pattern[at];
    if (c === '%') {
      // (a run of them is one: `*` never follows a `.` but there, every other `*` is escaped)
      if (!re.endsWith('.*')) re += '.*';
      at++;
      continue;
    }
    if (c === '_') {
      re += '.';
      at++;
      continue;
    }
    if (c === '\\') {
      if (at + 1 >= pattern.length) return NOTHING;
      at++;
    }
    const point = pointAt(pattern, at);
    re += SPECIAL.has(point) ? `\\${point}` : point;
    at += point.length;
  }
  return `${re}$`;
}
