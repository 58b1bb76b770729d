// The storage contract: one suite, run on every engine the project has (SQLite now; PostgreSQL
// joins the ENGINES list when its adapter lands).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConstraintError, type StorageAdapter } from '../src/storage/adapter.js';
import { sqliteStorage } from '../src/storage/open.js';
import { tableColumns } from '../src/storage/system-tables.js';
import { tempDir } from './helpers.js';

interface Engine {
  name: string;
  open(): Promise<{ storage: StorageAdapter; cleanup(): Promise<void> }>;
}

const ENGINES: Engine[] = [
  {
    name: 'sqlite (file, WAL)',
    async open() {
      const tmp = tempDir();
      const storage = sqliteStorage(join(tmp.dir, 'contract.sqlite'));
      return { storage, cleanup: async () => { await storage.close(); tmp.remove(); } };
    },
  },
  {
    name: 'sqlite (:memory:)',
    async open() {
      const storage = sqliteStorage(':memory:');
      return { storage, cleanup: () => storage.close() };
    },
  },
];

for (const engine of ENGINES) {
  describe(`storage contract: ${engine.name}`, () => {
    let s: StorageAdapter;
    let cleanup: () => Promise<void>;
    const p = (n: number) => s.dialect.placeholder(n);
    const q = (id: string) => s.dialect.quote(id);

    before(async () => {
      ({ storage: s, cleanup } = await engine.open());
      await s.exec(`CREATE TABLE ${q('T')} (${q('id')} INTEGER PRIMARY KEY, ${q('name')} TEXT UNIQUE)`);
    });
    after(() => cleanup());

    it('runs writes and reads rows back as plain objects', async () => {
      assert.equal(await s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${p(1)}, ${p(2)})`, [1, 'a']), 1);
      assert.deepEqual(await s.all(`SELECT ${q('id')}, ${q('name')} FROM ${q('T')}`), [{ id: 1, name: 'a' }]);
      assert.deepEqual(await s.get(`SELECT ${q('name')} FROM ${q('T')} WHERE ${q('id')} = ${p(1)}`, [1]), { name: 'a' });
      assert.equal(await s.get(`SELECT ${q('name')} FROM ${q('T')} WHERE ${q('id')} = ${p(1)}`, [99]), undefined);
    });

    it('reads the first column of every row without making objects, and leaves the statement as it was', async () => {
      const sql = `SELECT ${q('id')}, ${q('name')} FROM ${q('T')} ORDER BY ${q('id')}`;
      const ids = await s.column(sql);
      assert.ok(ids.length > 0 && ids.every((v) => typeof v === 'number'));
      const rows = await s.all(sql);
      assert.deepEqual(rows.map((r) => r.id), ids); // the same statement reads rows again
    });

    it('lists the columns of a table, and none for a missing table', async () => {
      assert.deepEqual(await tableColumns(s, 'T'), ['id', 'name']);
      assert.deepEqual(await tableColumns(s, 'Missing'), []);
    });

    it('commits a transaction whose function resolves, and joins nested calls to it', async () => {
      const result = await s.transaction(async () => {
        await s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${p(1)}, ${p(2)})`, [2, 'b']);
        await s.transaction(async () => s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${p(1)}, ${p(2)})`, [3, 'c']));
        return 'done';
      });
      assert.equal(result, 'done');
      assert.equal((await s.all(`SELECT ${q('id')} FROM ${q('T')}`)).length, 3);
    });

    it('rolls back everything a failing transaction wrote, nested calls included', async () => {
      await assert.rejects(s.transaction(async () => {
        await s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${p(1)}, ${p(2)})`, [4, 'd']);
        await s.transaction(async () => s.run(`DELETE FROM ${q('T')} WHERE ${q('id')} = ${p(1)}`, [1]));
        throw new Error('boom');
      }), /boom/);
      assert.deepEqual((await s.all(`SELECT ${q('id')} FROM ${q('T')} ORDER BY ${q('id')}`)).map((r) => r.id), [1, 2, 3]);
    });

    it('serialises writers: a write outside a transaction waits for the open one', async () => {
      const order: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const tx = s.transaction(async () => {
        await s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${p(1)}, ${p(2)})`, [5, 'e']);
        await gate;
        order.push('tx');
      });
      const write = s.run(`UPDATE ${q('T')} SET ${q('name')} = ${p(1)} WHERE ${q('id')} = ${p(2)}`, ['E', 5]).then((n) => {
        order.push(`write:${n}`);
      });
      await new Promise((r) => setTimeout(r, 10));
      release();
      await Promise.all([tx, write]);
      assert.deepEqual(order, ['tx', 'write:1']);
    });

    it('translates a unique violation into a ConstraintError naming table and column', async () => {
      await assert.rejects(
        s.transaction(() => s.get(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${p(1)}, ${p(2)}) RETURNING ${q('id')}`, [6, 'a'])),
        (e: ConstraintError) => e instanceof ConstraintError && e.constraint === 'unique' && e.table === 'T' && e.column === 'name',
      );
      await assert.rejects(
        s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${p(1)}, ${p(2)})`, [7, 'a']),
        (e: ConstraintError) => e instanceof ConstraintError && e.constraint === 'unique',
      );
    });

    it('treats a call left running after its transaction ended as outside any transaction', async () => {
      let stray: Promise<number> | undefined;
      await s.transaction(async () => {
        stray = new Promise((r) => setTimeout(r, 30)).then(() =>
          s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${p(1)}, ${p(2)})`, [20, 'stray']));
      });
      // another transaction is open (and will fail) while the stray write runs: it must not join it
      await assert.rejects(s.transaction(async () => {
        await new Promise((r) => setTimeout(r, 60));
        throw new Error('second fails');
      }), /second fails/);
      assert.equal(await stray, 1);
      assert.deepEqual(await s.get(`SELECT ${q('name')} FROM ${q('T')} WHERE ${q('id')} = ${p(1)}`, [20]), { name: 'stray' });
    });

    it('runs a nested transaction in a savepoint: a caught inner failure undoes only the inner writes', async () => {
      const undone: string[] = [];
      await s.transaction(async () => {
        await s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${p(1)}, ${p(2)})`, [30, 'outer']);
        s.onRollback(() => undone.push('outer'));
        await assert.rejects(s.transaction(async () => {
          await s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${p(1)}, ${p(2)})`, [31, 'inner']);
          s.onRollback(() => undone.push('inner'));
          throw new Error('inner fails');
        }), /inner fails/);
      });
      const ids = (await s.all(`SELECT ${q('id')} FROM ${q('T')} WHERE ${q('id')} >= 30`)).map((r) => r.id);
      assert.deepEqual(ids, [30]);
      assert.deepEqual(undone, ['inner']);
    });

    it('runs afterCommit work after the commit, never after a rollback or a rolled-back savepoint', async () => {
      const ran: string[] = [];
      await s.afterCommit(async () => void ran.push('now')); // no transaction: at once
      await s.transaction(async () => {
        await s.afterCommit(async () => void ran.push('outer'));
        await assert.rejects(s.transaction(async () => {
          await s.afterCommit(async () => void ran.push('inner, rolled back'));
          throw new Error('inner fails');
        }));
        assert.deepEqual(ran, ['now']); // not before the commit
      });
      await assert.rejects(s.transaction(async () => {
        await s.afterCommit(async () => void ran.push('never'));
        throw new Error('fails');
      }));
      assert.deepEqual(ran, ['now', 'outer']);
      // what runs after the commit may write (the writer is free again)
      await s.transaction(async () => {
        await s.afterCommit(() => s.transaction(async () => void (await s.run(`DELETE FROM ${q('T')} WHERE ${q('id')} = ${p(1)}`, [20]))));
      });
      assert.equal(await s.get(`SELECT ${q('id')} FROM ${q('T')} WHERE ${q('id')} = ${p(1)}`, [20]), undefined);
    });

    it('lets nested transactions started together take turns: each sibling commits or rolls back alone', async () => {
      const ins = (id: number) => s.transaction(async () => {
        await new Promise((r) => setTimeout(r, 5));
        await s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${p(1)}, ${p(2)})`, [id, `n${id}`]);
        if (id === 42) throw new Error('this one fails');
      });
      await s.transaction(async () => {
        const results = await Promise.allSettled([ins(41), ins(42), ins(43)]);
        assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
      });
      const ids = (await s.all(`SELECT ${q('id')} FROM ${q('T')} WHERE ${q('id')} BETWEEN 41 AND 43 ORDER BY ${q('id')}`)).map((r) => r.id);
      assert.deepEqual(ids, [41, 43]);
    });

    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const names = async (from: number, to: number) => (await s.all(`SELECT ${q('name')} FROM ${q('T')} WHERE ${q('id')} BETWEEN ${from} AND ${to} ORDER BY ${q('id')}`)).map((r) => r.name);

    it('rolls back a transaction the moment its signal aborts, frees the writer, and never commits it later', async () => {
      const ac = new AbortController();
      const slow = s.transaction(async () => {
        await s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (51, 'slow')`);
        await sleep(200); // the time limit passes meanwhile; then it returns normally
        return 'done';
      }, { signal: ac.signal });
      setTimeout(() => ac.abort(new Error('time limit')), 30);
      await sleep(60);
      // another writer gets the database while the aborted one still sleeps
      await s.transaction(() => s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (52, 'other')`));
      await assert.rejects(slow, /time limit/);
      assert.deepEqual(await names(51, 52), ['other']);
    });

    it('keeps the savepoints of an aborted transaction out of the transaction that holds the writer next', async () => {
      for (const innerFails of [false, true]) {
        const base = innerFails ? 70 : 60;
        const ac = new AbortController();
        const a = s.transaction(async () => {
          await s.transaction(async () => {
            await s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${base}, 'a-inner-${base}')`);
            await sleep(150);
            if (innerFails) throw new Error('A inner fails late');
          });
        }, { signal: ac.signal });
        setTimeout(() => ac.abort(new Error('time limit')), 30);
        await sleep(60);
        const b = s.transaction(async () => {
          try {
            await s.transaction(async () => {
              await s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${base + 1}, 'b-inner-1-${base}')`);
              await sleep(150);
              await s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${base + 2}, 'b-inner-2-${base}')`);
              if (!innerFails) throw new Error('B inner fails');
            });
          } catch {
            // B goes on without its inner part
          }
          await s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${base + 3}, 'b-outer-${base}')`);
        });
        await assert.rejects(a, /time limit/);
        await b;
        assert.deepEqual(await names(base, base + 3), (innerFails ? ['b-inner-1', 'b-inner-2', 'b-outer'] : ['b-outer']).map((n) => `${n}-${base}`), `inner of A fails: ${innerFails}`);
      }
    });
  });
}
