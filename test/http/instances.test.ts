// Two real server processes on one database (one SQLite file in WAL mode, or one PostgreSQL
// database): everything a later request may need lives in the database, so a client may be sent
// to either instance. Sets made on one are read, combined and released on the other; an upload
// sent to one is attached through the other; the stamp check holds across them; a function's
// open transaction on one never holds the other's reads.
// (test:quick leaves this file out: several server instances over one database.)

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCommand, tempDir, testDatabase, type CommandProcess } from '../support/helpers.js';

type Json = any;

describe('two server instances on one database', () => {
  const tmp = tempDir();
  let a: CommandProcess;
  let b: CommandProcess;

  const call = async (base: string, path: string, init: { method?: string; body?: unknown; raw?: Buffer } = {}) => {
    const headers: Record<string, string> = {};
    let body: BodyInit | undefined;
    if (init.raw) {
      headers['content-type'] = 'application/octet-stream';
      body = new Uint8Array(init.raw);
    } else if (init.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.body);
    }
    const res = await fetch(`${base}${path}`, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body });
    const text = await res.text();
    let json: Json = text;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON: the text
    }
    return { status: res.status, body: json };
  };

  before(async () => {
    const db = await testDatabase(join(tmp.dir, 'shared.sqlite'));
    const args = ['--port', '0', '--db', db, '--roles', 'none', '--log-level', 'warn'];
    // both start at once: one seeds the demo, the other waits for it and finds it seeded
    const started = await Promise.allSettled([startCommand(args), startCommand(args)]);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) {
      // (the one that did start is stopped, or the file would wait for it until killed)
      for (const s of started) if (s.status === 'fulfilled') s.value.child.kill('SIGTERM');
      throw failed.reason;
    }
    [a, b] = started.map((s) => (s as PromiseFulfilledResult<CommandProcess>).value);
  });

  after(async () => {
    for (const p of [a, b]) p?.child.kill('SIGTERM');
    await Promise.all([a?.exited, b?.exited]);
    tmp.remove();
  });

  const keysOf = (body: Json): unknown[] => body.__ENTITIES.map((e: Json) => e.__KEY);

  it('seeds the demo once when both start together', async () => {
    const [onA, onB] = await Promise.all([call(a.base, '/Employee?$top=0'), call(b.base, '/Employee?$top=0')]);
    assert.equal(onA.status, 200);
    assert.ok(onA.body.__COUNT > 0);
    assert.equal(onB.body.__COUNT, onA.body.__COUNT);
  });

  it('pages, combines and releases on B a set made on A; A then answers 1802', async () => {
    const made = await call(a.base, `/Employee?$filter="salary > 60000"&$orderby=lastName,ID&$method=entityset&$top=5`);
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const set = String(made.body.__ENTITYSET).split('/').pop();
    const count = made.body.__COUNT as number;
    assert.ok(count > 10);

    const direct = await call(a.base, `/Employee?$filter="salary > 60000"&$orderby=lastName,ID&$skip=7&$top=4&$attributes=ID`);
    const paged = await call(b.base, `/Employee/$entityset/${set}?$skip=7&$top=4&$attributes=ID`);
    assert.equal(paged.status, 200, JSON.stringify(paged.body));
    assert.equal(paged.body.__COUNT, count);
    assert.deepEqual(keysOf(paged.body), keysOf(direct.body));

    const other = await call(b.base, `/Employee?$filter="salary <= 90000"&$method=entityset&$top=0`);
    const otherSet = String(other.body.__ENTITYSET).split('/').pop();
    const both = await call(a.base, `/Employee?$filter="salary > 60000 and salary <= 90000"&$top=0`);
    const and = await call(b.base, `/Employee/$entityset/${set}?$logicOperator=AND&$otherCollection=${otherSet}&$top=0`);
    assert.equal(and.status, 200, JSON.stringify(and.body));
    assert.equal(and.body.__COUNT, both.body.__COUNT);

    const released = await call(b.base, `/Employee/$entityset/${set}?$method=release`);
    assert.equal(released.status, 200, JSON.stringify(released.body));
    const gone = await call(a.base, `/Employee/$entityset/${set}?$top=1`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.__ERROR[0].errCode, 1802);
    // the other set is still there, on both
    assert.equal((await call(a.base, `/Employee/$entityset/${otherSet}?$top=0`)).status, 200);
  });

  it('attaches on B an upload sent to A, and serves its bytes from A', async () => {
    const bytes = Buffer.from(`%PDF-1.4\n% shared between instances ${Date.now()}\n`);
    const up = await call(a.base, '/$upload?$binary=true', { raw: bytes });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    const employee = (await call(b.base, '/Employee?$top=1&$attributes=ID')).body.__ENTITIES[0];
    const saved = await call(b.base, '/Employee?$method=update', { body: { __KEY: employee.__KEY, __STAMP: employee.__STAMP, resume: { ID: up.body.ID } } });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const res = await fetch(`${a.base}/Employee(${employee.__KEY})/resume?$binary=true`);
    assert.equal(res.status, 200);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(bytes));
  });

  it('lets exactly one of two updates with the same stamp win, one sent to each instance', async () => {
    for (let round = 0; round < 5; round++) {
      const company = (await call(a.base, '/Company?$top=1&$skip=1&$attributes=name')).body.__ENTITIES[0];
      const [viaA, viaB] = await Promise.all([
        call(a.base, '/Company?$method=update', { body: { __KEY: company.__KEY, __STAMP: company.__STAMP, name: `A ${round}` } }),
        call(b.base, '/Company?$method=update', { body: { __KEY: company.__KEY, __STAMP: company.__STAMP, name: `B ${round}` } }),
      ]);
      const statuses = [viaA.status, viaB.status].sort();
      assert.equal(statuses[0], 200, JSON.stringify([viaA.body, viaB.body]));
      assert.notEqual(statuses[1], 200, `both won in round ${round}`);
      const loser = viaA.status === 200 ? viaB : viaA;
      assert.equal(loser.body.__ERROR[0].errCode, 1263);
      const winner = viaA.status === 200 ? 'A' : 'B';
      const stored = (await call(b.base, `/Company(${company.__KEY})`)).body;
      assert.equal(stored.name, `${winner} ${round}`);
      assert.equal(stored.__STAMP, company.__STAMP + 1);
    }
  });

  it("never holds B's reads while a function's transaction is open on A", async () => {
    const company = (await call(b.base, '/Company?$top=1&$attributes=name')).body.__ENTITIES[0];
    // renameSlowly renames, waits 2 s inside its transaction, then renames again and commits
    let committed = false;
    const slow = call(a.base, '/$catalog/renameSlowly', { body: [Number(company.__KEY), 'Renamed slowly', 2000] }).finally(() => (committed = true));
    await new Promise((r) => setTimeout(r, 400)); // the transaction is open, its first save made
    const reads: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = Date.now();
      const read = await call(b.base, `/Company(${company.__KEY})`);
      reads.push(Date.now() - t0);
      assert.equal(read.status, 200);
      assert.equal(read.body.name, company.name, 'B sees only committed data');
      assert.equal((await call(b.base, '/Company?$top=0')).status, 200);
    }
    assert.equal(committed, false, `B's reads waited for A's transaction (${reads.join(', ')} ms)`);
    const done = await slow;
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal((await call(b.base, `/Company(${company.__KEY})`)).body.name, 'Renamed slowly (confirmed)');
  });
});
