// The JavaScript LIKE (util/like.ts) against SQLite's own `LIKE … ESCAPE '\'`: the same answer on
// random texts and patterns — ASCII letters of both cases, accented and non-BMP letters, U+0000,
// `%`, `_`, escapes (a lone one at the end too) — and on the shapes where SQLite's costs the text's
// length times the pattern's, in time linear in both. Then the regular expression a LIKE pattern
// becomes on PostgreSQL (sql/like-regex.ts) against PostgreSQL's own LIKE.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { likeRegex } from '../../src/sql/like-regex.js';
import { postgresStorage } from '../../src/storage/open.js';
import type { TransactionManager } from '../../src/storage/transactions.js';
import { likeMatch } from '../../src/util/like.js';
import { freshDatabase } from '../support/postgres-server.js';

describe('the JavaScript LIKE', () => {
  let db: Database.Database;
  before(() => {
    db = new Database(':memory:');
    // both see the texts SQLite holds (bound and read back through the same UTF-8)
    db.function('js_like', { deterministic: true }, (t: unknown, p: unknown) => (typeof t === 'string' && typeof p === 'string' ? (likeMatch(t, p) ? 1 : 0) : null));
  });
  after(() => db.close());

  const both = (text: string, pattern: string): { sqlite: number; js: number } =>
    db.prepare("SELECT ? LIKE ? ESCAPE '\\' AS sqlite, js_like(?, ?) AS js").get(text, pattern, text, pattern) as { sqlite: number; js: number };

  /** letters that make matches likely, of every kind the matcher treats apart */
  const TEXT_CHARS = ['a', 'b', 'A', 'B', 'z', 'é', 'É', 'ß', '\u{1F600}', '\u{10400}', '\u{10428}', '\0', '%', '_', '\\', ' '];
  const PATTERN_CHARS = [...TEXT_CHARS, '%', '%', '_', '\\', '\\%', '\\_', '\\\\', '\\a', '\\\u{1F600}'];
  const text = fc.array(fc.constantFrom(...TEXT_CHARS), { maxLength: 24 }).map((a) => a.join(''));
  const pattern = fc.array(fc.constantFrom(...PATTERN_CHARS), { maxLength: 12 }).map((a) => a.join(''));

  it('answers as SQLite on random texts and patterns (case, escapes, _, %, non-BMP letters, U+0000)', () => {
    fc.assert(fc.property(text, pattern, (t, p) => {
      const { sqlite, js } = both(t, p);
      assert.equal(js, sqlite, `${JSON.stringify(t)} LIKE ${JSON.stringify(p)}`);
    }), { numRuns: 20_000 });
  });

  it('answers as SQLite where a pattern is made of the text itself (matches, and near misses)', () => {
    fc.assert(fc.property(text, fc.array(fc.tuple(fc.nat(), fc.nat(), fc.constantFrom('%', '_', '', '\\')), { maxLength: 4 }), (t, cuts) => {
      // a pattern cut from the text: pieces of it, with wildcards put between them
      const points = [...t];
      let p = '';
      let at = 0;
      for (const [skip, take, wild] of cuts) {
        at = Math.min(points.length, at + (skip % 3));
        const piece = points.slice(at, at + (take % 4)).map((c) => (c === '%' || c === '_' || c === '\\' ? `\\${c}` : c)).join('');
        p += wild + piece;
        at += take % 4;
      }
      const { sqlite, js } = both(t, p);
      assert.equal(js, sqlite, `${JSON.stringify(t)} LIKE ${JSON.stringify(p)}`);
    }), { numRuns: 10_000 });
  });

  it('answers as SQLite with long literals between wildcards (those found by Knuth-Morris-Pratt), on texts of two letters', () => {
    const run = fc.array(fc.constantFrom('a', 'a', 'b', 'A'), { minLength: 0, maxLength: 30 }).map((a) => a.join(''));
    fc.assert(fc.property(fc.array(fc.constantFrom('a', 'a', 'b', 'B', '\u{1F600}'), { maxLength: 80 }).map((a) => a.join('')), fc.array(run, { minLength: 1, maxLength: 4 }), fc.boolean(), fc.boolean(), (t, runs, open, close) => {
      const p = `${open ? '%' : ''}${runs.join('%')}${close ? '%' : ''}`;
      const { sqlite, js } = both(t, p);
      assert.equal(js, sqlite, `${JSON.stringify(t)} LIKE ${JSON.stringify(p)}`);
    }), { numRuns: 10_000 });
  });

  it('answers the cases worth naming as SQLite does', () => {
    const cases: [string, string][] = [
      ['', ''], ['', '%'], ['a', ''], ['abc', 'a%'], ['abc', '%c'], ['abc', '%b%'], ['abc', 'a_c'], ['ac', 'a_c'],
      ['ABC', 'abc'], ['abc', 'A%C'], ['É', 'é'], ['a%b', 'a\\%b'], ['axb', 'a\\%b'], ['a_b', 'a\\_b'], ['a\\b', 'a\\\\b'],
      ['abc', 'abc\\'], ['abc', '%\\'], ['\u{1F600}', '_'], ['\u{1F600}x', '__'], ['a\0b', 'a'], ['a', 'a\0b'], ['aaa', '%aa%aa%'],
      ['aaaa', '%aa%aa%'], ['ab', '%a%b%a%'], ['x\u{10400}y', '%\u{10400}%'], ['\u{10428}', '\u{10400}'],
    ];
    for (const [t, p] of cases) {
      const { sqlite, js } = both(t, p);
      assert.equal(js, sqlite, `${JSON.stringify(t)} LIKE ${JSON.stringify(p)}`);
    }
  });

  it('matches a 7,000-character pattern over a 1,000,000-character text in milliseconds (linear), where SQLite takes seconds', () => {
    const long = 'a'.repeat(999_999);
    // (linear: some 10 ms on a quiet machine; the text's length times the pattern's is 7·10⁹ steps,
    // tens of seconds: the bound tells one from the other on a busy machine too)
    likeMatch(long, `%${'a'.repeat(100)}b%`);
    for (const p of [`%${'a'.repeat(6_999)}b%`, `%b${'a'.repeat(6_999)}%`, `%${'a'.repeat(3_000)}b${'a'.repeat(3_000)}%`, `${'%a'.repeat(3_500)}%b`, `%${'a'.repeat(6_999)}b`]) {
      const start = performance.now();
      assert.equal(likeMatch(long, p), false);
      const ms = performance.now() - start;
      assert.ok(ms < 1_000, `${p.slice(0, 30)}… took ${ms.toFixed(0)} ms`);
    }
    assert.equal(likeMatch(`${long}b`, `%${'a'.repeat(6_999)}b`), true);
  });

  it('calls its check between the steps of a long match, which may stop it', () => {
    const long = 'ab'.repeat(500_000);
    let checks = 0;
    assert.equal(likeMatch(long, `%${'b%'.repeat(100)}c`, () => void checks++), false);
    assert.ok(checks >= 100, `${checks} checks`);
    const stop = new Error('stopped');
    assert.throws(() => likeMatch(long, `%${'_'.repeat(3)}c%`, () => {
      throw stop;
    }), (e) => e === stop);
  });
});

describe('the regular expression PostgreSQL matches long texts with (sql/like-regex.ts)', () => {
  let storage: TransactionManager;
  let drop: () => Promise<void>;
  before(async () => {
    const db = await freshDatabase();
    drop = db.drop;
    storage = await postgresStorage(db.url, { poolSize: 2 });
  });
  after(async () => {
    await storage.close();
    await drop();
  });

  /** PostgreSQL's LIKE and the expression, on pairs of text and pattern (one statement) */
  const both = async (pairs: readonly (readonly [string, string])[]): Promise<{ like: boolean; re: boolean }[]> => (await storage.all(
    `SELECT (t COLLATE "C") LIKE p ESCAPE '\\' AS "like", (t COLLATE "C") ~ r AS re FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS u(t, p, r, n) ORDER BY n`,
    [pairs.map(([t]) => t), pairs.map(([, p]) => p), pairs.map(([, p]) => likeRegex(p))],
  )) as { like: boolean; re: boolean }[];

  // PostgreSQL's text holds no U+0000, and its LIKE refuses a pattern ending in a lone escape
  const CHARS = ['a', 'b', 'A', 'é', '\u{1F600}', '\n', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '^', '$', '|', '%', '_', '\\'];
  const text = fc.array(fc.constantFrom(...CHARS), { maxLength: 16 }).map((a) => a.join(''));
  const pattern = fc.array(fc.constantFrom(...CHARS, '%', '_', '\\%', '\\_', '\\\\', '\\.', '\\a', '\\*'), { maxLength: 10 })
    .map((a) => a.join('')).filter((p) => !/(^|[^\\])(\\\\)*\\$/.test(p));

  it('matches what PostgreSQL\'s LIKE matches, on random texts and patterns (its own special characters, escapes, %, _, newlines, non-BMP letters)', async () => {
    await fc.assert(fc.asyncProperty(fc.array(fc.tuple(text, pattern), { minLength: 1, maxLength: 200 }), async (pairs) => {
      const got = await both(pairs);
      const differ = pairs.filter((_, i) => got[i].like !== got[i].re);
      assert.deepEqual(differ, [], JSON.stringify(differ.slice(0, 5).map(([t, p]) => ({ t, p, re: likeRegex(p) }))));
    }), { numRuns: 60 });
  });

  it('matches nothing for a pattern ending in a lone escape (as SQLite\'s LIKE decides)', async () => {
    assert.deepEqual(await storage.all(`SELECT 'abc\\' ~ $1 AS a, '' ~ $1 AS b`, [likeRegex('abc\\')]), [{ a: false, b: false }]);
  });
});
