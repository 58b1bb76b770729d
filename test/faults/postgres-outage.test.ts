// The database goes away under traffic and comes back: a PostgreSQL server of this test's own is
// stopped (fast shutdown: every open connection is cut) while clients keep reading and writing
// through a real server process, then started again on the same port. Meanwhile every answer is
// a 503 with STORAGE_UNAVAILABLE (7031), never a 500 nor a hang, the process stays up, and once
// the database is back the pool reconnects by itself: answers are 200 again, with no restart.

import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { startCommand, type CommandProcess } from '../support/helpers.js';
import { startEmbeddedPostgres, type RestartablePostgres } from '../support/postgres-server.js';

type Json = any;
type Phase = 'before' | 'down' | 'back';

describe('PostgreSQL stopped and started under traffic', () => {
  let database: RestartablePostgres;
  let server: CommandProcess;

  before(async () => {
    database = await startEmbeddedPostgres();
    server = await startCommand(['--port', '0', '--db', database.url, '--pool-size', '4', '--roles', 'none', '--log-level', 'warn'], { alone: true });
  });

  after(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
    await database?.stop();
  });

  it('answers 503 (7031) while the database is down, and 200 again once it is back, by itself', async (t) => {
    const base = server.base;
    let phase: Phase = 'before';
    let running = true;
    const seen: { phase: Phase; status: number; errCode?: number; what: string; at?: number }[] = [];
    const record = async (what: string, res: Response) => {
      const body = (await res.json().catch(() => null)) as Json;
      seen.push({ phase, status: res.status, errCode: body?.__ERROR?.[0]?.errCode, what, at: Date.now() });
      return body;
    };
    // four clients: a page, an entity by key, and a read-then-update
    const client = async (n: number) => {
      while (running) {
        const t0 = Date.now();
        try {
          if (n % 2 === 0) await record('page', await fetch(`${base}/Company?$top=5&$filter="name >= :1"&$params='["A"]'`));
          else {
            const company = await record('read', await fetch(`${base}/Company(${n})`));
            if (company?.__STAMP) {
              await record('update', await fetch(`${base}/Company?$method=update`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ __KEY: company.__KEY, __STAMP: company.__STAMP, name: `Company ${n} at ${Date.now()}` }),
              }));
            }
          }
        } catch (e) {
          seen.push({ phase, status: 0, what: `the request failed: ${String(e)}` });
        }
        assert.ok(Date.now() - t0 < 5000, 'a request hung while the database was away');
        await sleep(5);
      }
    };
    const clients = Promise.all([0, 1, 2, 3].map(client));
    let backAt = 0;
    try {
      await sleep(400);
      phase = 'down';
      await database.down();
      await sleep(1500);
      phase = 'back';
      await database.up();
      backAt = Date.now();
      // until every client has been answered 200 several times in a row (20 s at most)
      for (let i = 0; ; i++) {
        const last = seen.filter((s) => s.phase === 'back').slice(-12);
        if (last.length === 12 && last.every((s) => s.status === 200)) break;
        assert.ok(i < 200, `no recovery: ${JSON.stringify(last)}; the server said: ${server.stderr().slice(-3000)}`);
        await sleep(100);
      }
    } finally {
      running = false;
      await clients;
    }

    const during = seen.filter((s) => s.phase === 'down');
    assert.ok(seen.filter((s) => s.phase === 'before').every((s) => s.status === 200), 'answers before the outage');
    assert.ok(during.length > 10, `few requests during the outage (${during.length})`);
    for (const s of [...during, ...seen.filter((x) => x.phase === 'back')]) {
      if (s.status === 200) continue; // answered before the stop took, or after the start
      assert.deepEqual([s.status, s.errCode], [503, 7031], `${s.what} answered ${JSON.stringify(s)}`);
    }
    assert.ok(during.filter((s) => s.status === 503).length > 5, 'the outage was never seen');
    assert.equal(server.child.exitCode, null, 'the server process stayed up');
    const firstBack = seen.find((s) => s.phase === 'back' && s.status === 200 && (s.at ?? 0) > backAt)?.at ?? NaN;
    t.diagnostic(`${during.length} answers while the database was down (${during.filter((s) => s.status === 503).length} of them 503); the first 200 came ${firstBack - backAt} ms after it was back`);
  });
});
