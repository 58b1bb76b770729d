// The text fold on PostgreSQL (sql/fold-postgres.ts, a generated SQL function) against the
// JavaScript fold it was generated from: the same text for every character of the scripts people
// write, alone and in random strings, so that queries match the same rows on both engines.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createSystemTables } from '../../src/storage/system-tables/tables.js';
import { postgresStorage } from '../../src/storage/open.js';
import type { TransactionManager } from '../../src/storage/transactions.js';
import { fold } from '../../src/util/fold.js';
import { freshDatabase } from '../support/postgres-server.js';

/** assigned characters (by Node's Unicode tables; PostgreSQL 17 knows Unicode 15.1, and none below U+3000 came later) */
const ASSIGNED = /\p{Assigned}/u;

describe('the text fold on PostgreSQL', () => {
  let storage: TransactionManager;
  let drop: () => Promise<void>;
  const sqlFold = async (texts: readonly string[]): Promise<string[]> =>
    (await storage.column('SELECT dataset_fold(t) FROM unnest($1::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n', [texts])) as string[];

  before(async () => {
    const db = await freshDatabase();
    drop = db.drop;
    storage = await postgresStorage(db.url, { poolSize: 2 });
    await storage.transaction(() => createSystemTables(storage));
  });
  after(async () => {
    await storage.close();
    await drop();
  });

  it('folds every character of the Basic Multilingual Plane below the CJK blocks as JavaScript does', async () => {
    const chars: string[] = [];
    for (let cp = 1; cp < 0x3000; cp++) {
      const c = String.fromCodePoint(cp);
      if (ASSIGNED.test(c) && !/\p{Cs}/u.test(c)) chars.push(c);
    }
    const got = await sqlFold(chars);
    const differ = chars.filter((c, i) => got[i] !== fold(c)).map((c) => `U+${c.codePointAt(0)?.toString(16).toUpperCase()} ${c}: js ${JSON.stringify(fold(c))}, sql ${JSON.stringify(got[chars.indexOf(c)])}`);
    assert.deepEqual(differ.slice(0, 20), [], `${differ.length} characters fold apart`);
  });

  it('folds random text (letters, marks, digits, punctuation) as JavaScript does, final sigma included', async () => {
    const letters = [...'AaÉéÈèÊêËëÇçÑñÅåØøŁłßẞÆæŒœÞþĲĳİıΣσςΑάΩωЖжЁёǅǆﬁ①½ｱ\u0301\u0308\u0327 -_.,0123456789'];
    await fc.assert(fc.asyncProperty(fc.array(fc.array(fc.constantFrom(...letters), { maxLength: 12 }).map((a) => a.join('')), { minLength: 1, maxLength: 50 }), async (texts) => {
      assert.deepEqual(await sqlFold(texts), texts.map(fold));
    }), { numRuns: 40 });
  });
});
