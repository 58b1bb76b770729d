// The contract of the storage the core uses (src/storage/adapter.ts): the one transaction
// manager over every engine's driver (storage-engines.ts). The driver contract has its own
// suite (storage-driver.test.ts), the internal tables theirs (storage-system-tables.test.ts).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Reader } from '../../src/storage/adapter.js';
import { ConstraintError } from '../../src/storage/driver.js';
import { TransactionManager } from '../../src/storage/transactions.js';
import { ENGINES, sleep, type TestDatabase } from '../support/storage-engines.js';

for (const engine of ENGINES) {
  describe(`storage contract: ${engine.name}`, () => {
    let db: TestDatabase;
    let s: TransactionManager;
    const p = (n: number) => s.dialect.sql.placeholder(n);
    const q = (id: string) => s.dialect.sql.quote(id);
    const insert = () => `INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (${p(1)}, ${p(2)})`;

    before(async () => {
      db = await engine.open();
      s = new TransactionManager(db.driver);
      await s.exec(`CREATE TABLE ${q('T')} (${q('id')} INTEGER PRIMARY KEY, ${q('name')} TEXT UNIQUE)`);
    });
    after(() => db.cleanup());

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

    it('makes a write outside a transaction wait for the open one that wrote the same row', async () => {
      const order: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      await s.run(insert(), [5, 'e']);
      let wrote!: () => void;
      const written = new Promise<void>((r) => (wrote = r));
      const tx = s.transaction(async () => {
        await s.run(`UPDATE ${q('T')} SET ${q('name')} = ${p(1)} WHERE ${q('id')} = ${p(2)}`, ['e2', 5]);
        wrote();
        await gate;
        order.push('tx');
      });
      await written;
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

    const names = async (from: number, to: number) => (await s.all(`SELECT ${q('name')} FROM ${q('T')} WHERE ${q('id')} BETWEEN ${from} AND ${to} ORDER BY ${q('id')}`)).map((r) => r.name);

    it('rolls back a transaction the moment its signal aborts, frees the writer, and never commits it later', async () => {
      const ac = new AbortController();
      const slow = s.transaction(async () => {
        await s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (51, 'slow')`);
        await sleep(200); // the time limit passes meanwhile; then it returns normally
        return 'done';
      }, { signal: ac.signal });
      let slowEnded = false;
      void slow.catch(() => (slowEnded = true));
      setTimeout(() => ac.abort(new Error('time limit')), 30);
      await sleep(60);
      // another writer gets the database while the aborted one still sleeps
      await s.transaction(() => s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (52, 'other')`));
      assert.equal(slowEnded, false, 'the other transaction waited for the aborted one to end');
      await assert.rejects(slow, /time limit/);
      assert.deepEqual(await names(51, 52), ['other']);
    });

    it('refuses the later statements and transactions of an aborted transaction\'s code: nothing more of it reaches the database', async () => {
      const ac = new AbortController();
      let later: Promise<unknown> | undefined;
      let nested: Promise<unknown> | undefined;
      const slow = s.transaction(async () => {
        await s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (55, 'before')`);
        await sleep(60); // aborted meanwhile
        later = s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (56, 'after')`);
        nested = s.transaction(() => s.run(`INSERT INTO ${q('T')} (${q('id')}, ${q('name')}) VALUES (57, 'nested')`));
        await Promise.allSettled([later, nested]);
        return 'done';
      }, { signal: ac.signal });
      setTimeout(() => ac.abort(new Error('time limit')), 20);
      await assert.rejects(slow, /time limit/);
      await assert.rejects(later as Promise<unknown>, /time limit/);
      await assert.rejects(nested as Promise<unknown>, /time limit/);
      assert.deepEqual(await names(55, 57), []);
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

    it('runs an INSERT … RETURNING outside a transaction: a statement that writes goes to the writer, whatever it returns', async () => {
      assert.deepEqual(await s.get(`${insert()} RETURNING ${q('id')} AS id`, [80, 'returning']), { id: 80 });
      assert.deepEqual(await s.get(`SELECT ${q('name')} FROM ${q('T')} WHERE ${q('id')} = ${p(1)}`, [80]), { name: 'returning' });
    });

    const count = async (r: Reader) => Number((await r.get(`SELECT COUNT(*) AS n FROM ${q('T')}`))?.n);

    it('reads one state through a snapshot, whatever commits after its first read; released, it reads as the storage does', async () => {
      const snap = await s.snapshot();
      const first = await count(snap);
      await s.run(insert(), [90, 'after the snapshot']); // committed by the writer, another connection
      assert.equal(await count(s), first + 1);
      assert.equal(await count(snap), engine.isolated ? first : first + 1);
      assert.deepEqual(await snap.column(`SELECT ${q('id')} FROM ${q('T')} WHERE ${q('id')} = 90`), engine.isolated ? [] : [90]);
      assert.deepEqual((await snap.all(`SELECT ${q('id')} FROM ${q('T')} WHERE ${q('id')} = 90`)).length, engine.isolated ? 0 : 1);
      await snap.release();
      assert.equal(await count(snap), first + 1); // what was read through it may outlive the request
      await snap.release(); // a second release changes nothing
    });

    it('keeps two snapshots apart, each at the state of its own first read', async (t) => {
      if (!engine.isolated) return t.skip('one connection: no state to keep apart');
      const a = await s.snapshot();
      const before = await count(a);
      await s.run(insert(), [92, 'between']);
      const b = await s.snapshot();
      assert.equal(await count(b), before + 1);
      await s.run(insert(), [93, 'after both']);
      assert.deepEqual([await count(a), await count(b), await count(s)], [before, before + 1, before + 2]);
      await Promise.all([a.release(), b.release()]);
    });

    it('reads through a snapshot inside a transaction from that transaction, so that they see its writes', async () => {
      const snap = await s.snapshot();
      try {
        const first = await count(snap);
        await assert.rejects(s.transaction(async () => {
          await s.run(insert(), [91, 'in the transaction']);
          assert.deepEqual(await snap.get(`SELECT ${q('name')} FROM ${q('T')} WHERE ${q('id')} = ${p(1)}`, [91]), { name: 'in the transaction' });
          throw new Error('undo it');
        }), /undo it/);
        assert.equal(await count(snap), first);
      } finally {
        await snap.release();
      }
    });

    it('runs a transaction again when the engine refuses it for contention, only when asked', async (t) => {
      if (!db.another || !db.holdWriteLock) return t.skip('no second connection to contend with');
      const driver = db.another({ lockWaitMs: 20 });
      const other = new TransactionManager(driver);
      let unlock = db.holdWriteLock();
      try {
        let runs = 0;
        const refused: unknown = await other.transaction(async () => void runs++).catch((e: unknown) => e);
        assert.ok(driver.isRetryable(refused), `not asked to retry: refused with ${String(refused)}`);
        assert.ok(runs <= 1);
        setTimeout(() => unlock(), 60);
        await other.transaction(async () => void (await other.run(insert(), [95, 'retried'])), { retries: 30 });
        unlock = () => undefined;
        assert.deepEqual(await s.get(`SELECT ${q('name')} FROM ${q('T')} WHERE ${q('id')} = 95`), { name: 'retried' });
        // an error that is not contention is not retried, asked or not
        runs = 0;
        await assert.rejects(other.transaction(async () => {
          runs++;
          await other.run(insert(), [96, 'retried']); // the name is taken: a unique violation
        }, { retries: 3 }), ConstraintError);
        assert.equal(runs, 1);
      } finally {
        unlock();
      }
    });

    it('runs again, when asked, a transaction that crossed another one (a deadlock), and otherwise refuses it as retryable', async (t) => {
      if (!db.another) return t.skip('no second connection to cross');
      const other = new TransactionManager(db.another({ lockWaitMs: 100 }));
      await s.run(insert(), [110, 'x']);
      await s.run(insert(), [111, 'y']);
      const update = (m: TransactionManager, id: number, name: string) =>
        m.run(`UPDATE ${q('T')} SET ${q('name')} = ${p(1)} WHERE ${q('id')} = ${p(2)}`, [name, id]);
      // each takes one row, waits until the other has taken the other row, then asks for it
      const cross = async (retries: number) => {
        let firstDone = 0;
        let bothDone!: () => void;
        const both = new Promise<void>((r) => (bothDone = r));
        const side = (m: TransactionManager, mine: number, theirs: number, tag: string) => {
          let attempt = 0;
          return m.transaction(async () => {
            await update(m, mine, `${tag}${mine}`);
            if (attempt++ === 0) {
              if (++firstDone === 2) bothDone();
              await Promise.race([both, sleep(300)]); // an engine with one writer never lets the other in
            }
            await update(m, theirs, `${tag}${theirs}`);
          }, { retries });
        };
        return Promise.allSettled([side(s, 110, 111, 'a'), side(other, 111, 110, 'b')]);
      };
      const once = await cross(0);
      const refused = once.filter((r) => r.status === 'rejected');
      // an engine with one writer at a time never crosses, though the waiting side may give up
      if (engine.concurrentWriters || refused.length > 0) {
        assert.equal(refused.length, 1);
        const reason: unknown = (refused[0] as PromiseRejectedResult).reason;
        assert.ok(db.driver.isRetryable(reason), String(reason));
      }
      const retried = await cross(5);
      assert.deepEqual(retried.map((r) => r.status), ['fulfilled', 'fulfilled']);
      const names = (await s.all(`SELECT ${q('name')} FROM ${q('T')} WHERE ${q('id')} IN (110, 111) ORDER BY ${q('id')}`)).map((r) => r.name);
      assert.ok(['a110,a111', 'b110,b111'].includes(names.join()), `one side wrote both rows last: ${names.join()}`);
    });

    it('asks its hooks before every statement and transaction, gives their signal to transactions, and shares its transactions with them', async () => {
      let stop: Error | undefined;
      const ac = new AbortController();
      const h = s.withHooks({ beforeStatement: () => stop, defaultSignal: () => ac.signal });
      assert.deepEqual(await h.get('SELECT 1 AS one'), { one: 1 });
      stop = new Error('past its time limit');
      const calls = [() => h.get('SELECT 1'), () => h.all('SELECT 1'), () => h.column('SELECT 1'), () => h.run('SELECT 1'), () => h.exec('SELECT 1'), () => h.transaction(async () => 1), () => h.snapshot()];
      for (const call of calls) await assert.rejects(call(), /past its time limit/);
      stop = undefined;
      // the hooked storage's calls join the storage's transaction, and the other way round
      await assert.rejects(s.transaction(async () => {
        await h.run(insert(), [100, 'joined']);
        await h.transaction(() => s.run(insert(), [101, 'joined too']));
        assert.equal(await count(s), await count(h));
        throw new Error('undo both');
      }), /undo both/);
      assert.deepEqual(await h.all(`SELECT ${q('id')} FROM ${q('T')} WHERE ${q('id')} IN (100, 101)`), []);
      // a transaction given no signal carries the hook's
      const slow = h.transaction(async () => {
        await h.run(insert(), [102, 'aborted']);
        await sleep(100);
      });
      setTimeout(() => ac.abort(new Error('the call is past its time limit')), 20);
      await assert.rejects(slow, /the call is past its time limit/);
      assert.equal(await s.get(`SELECT ${q('id')} FROM ${q('T')} WHERE ${q('id')} = 102`), undefined);
    });
  });
}
