// Faults under load (issue 19), on a real server process. (a) The server killed with SIGKILL while
// four clients write at once (creates, updates with their stamps, deletes, $atomic batches), then
// started again on the same database: the database is intact (SQLite: PRAGMA integrity_check),
// every entity reads, every write a client was answered 2xx for is there as answered (its stamp
// too), every delete answered is gone, nothing half-written (an $atomic batch whole or absent), and
// nothing but the writes in flight at the kill is undecided. Both engines.
// (b) PostgreSQL crashed (an immediate shutdown: SIGQUIT to the postmaster, as a kill or a power
// cut; test/faults/postgres-outage.test.ts has the fast shutdown) under the same writes: every answer
// meanwhile is 200 or 503 STORAGE_UNAVAILABLE (7031) naming the database, never a 500 or a hang,
// the server recovers by itself once PostgreSQL is back, and every write answered 2xx survived.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startCommand, TEST_ENGINE, tempDir, testDatabase, type CommandProcess } from '../support/helpers.js';
import { startEmbeddedPostgres } from '../support/postgres-server.js';

type Json = any;
const BATCH = 20;

type Pending = { readonly kind: 'create' | 'update' | 'delete' | 'batch'; readonly name: string };

/** One writer's view of what it did: what the server answered 2xx for, and what is undecided. */
interface Writer {
  readonly id: number;
  /** its cities the server confirmed (created, not confirmed deleted): name → key, population, stamp */
  readonly cities: Map<string, { key: string; population: number; stamp: number }>;
  readonly deleted: Set<string>;
  /** $atomic batches answered 2xx (by tag) */
  readonly batches: Set<string>;
  /** the request out now */
  pending?: Pending;
  /**
   * writes whose outcome no answer told: in flight when the server died, or refused with an
   * expected 503 that may have come after the commit (the database died before saying so). Their
   * entities are left alone from then on; a batch among them must still be whole or absent.
   */
  readonly undecided: Pending[];
  /** answers that no server should give here */
  readonly wrong: string[];
  /** answers by status */
  readonly statuses: Map<number, number>;
  created: number;
}

const newWriter = (id: number): Writer => ({ id, cities: new Map(), deleted: new Set(), batches: new Set(), undecided: [], wrong: [], statuses: new Map(), created: 0 });

const post = (base: string, path: string, body?: unknown) => fetch(`${base}${path}`, {
  method: 'POST', signal: AbortSignal.timeout(20_000), ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
});

interface WriteOptions {
  readonly base: string;
  readonly stop: () => boolean;
  /** a non-2xx answer that is expected (a 503 while the database is away): its write is undecided */
  readonly accept: (status: number, body: Json) => boolean;
  /** a request that got no answer: stop (the server died), or note it as wrong and go on */
  readonly lost: 'stop' | 'wrong';
  readonly onAnswer: () => void;
}

/** A writer's loop: creates, updates with the stamp last answered, deletes, $atomic batches of BATCH, until `stop()` or (lost: 'stop') a request fails. */
async function write(w: Writer, o: WriteOptions): Promise<void> {
  let step = 0;
  while (!o.stop()) {
    step++;
    const names = [...w.cities.keys()];
    const choice = names.length < 3 ? 0 : step % 7;
    let body: Json;
    const send = async (path: string, payload?: unknown) => {
      const res = await post(o.base, path, payload);
      body = await res.json().catch(() => null);
      w.statuses.set(res.status, (w.statuses.get(res.status) ?? 0) + 1);
      o.onAnswer();
      if (res.ok) return true;
      if (o.accept(res.status, body)) {
        w.undecided.push(w.pending!);
        if (w.pending!.kind === 'update' || w.pending!.kind === 'delete') w.cities.delete(w.pending!.name);
      } else w.wrong.push(`${path} answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
      return false;
    };
    try {
      if (choice <= 2) {
        const name = `Crash w${w.id} c${w.created++}`;
        w.pending = { kind: 'create', name };
        if (await send('/City?$method=update', { name, country: 'Crash', population: 0 })) w.cities.set(name, { key: String(body.__KEY), population: 0, stamp: body.__STAMP });
      } else if (choice <= 4) {
        const name = names[step % names.length];
        const city = w.cities.get(name)!;
        w.pending = { kind: 'update', name };
        if (await send('/City?$method=update', { __KEY: city.key, __STAMP: city.stamp, population: step })) w.cities.set(name, { key: city.key, population: step, stamp: body.__STAMP });
      } else if (choice === 5) {
        const name = names[0];
        w.pending = { kind: 'delete', name };
        if (await send(`/City(${w.cities.get(name)!.key})?$method=delete`)) {
          w.cities.delete(name);
          w.deleted.add(name);
        }
      } else {
        const tag = `Batch w${w.id} b${w.created++}`;
        w.pending = { kind: 'batch', name: tag };
        const entities = Array.from({ length: BATCH }, (_, i) => ({ name: `${tag} #${i}`, country: 'Crash', population: i }));
        if (await send('/City?$method=update&$atomic=true', entities)) w.batches.add(tag);
      }
      w.pending = undefined;
    } catch (e) {
      // no answer: what was out is undecided
      const p = w.pending!;
      w.pending = undefined;
      w.undecided.push(p);
      if (p.kind === 'update' || p.kind === 'delete') w.cities.delete(p.name);
      if (o.lost === 'stop') return;
      w.wrong.push(`no answer to a ${p.kind} of ${p.name}: ${String(e)}`);
    }
  }
}

/** Everything of country Crash, as the server reads it now: name → { key, population, stamp }. */
async function crashCities(base: string): Promise<Map<string, { key: string; population: number; stamp: number }>> {
  const res = await fetch(`${base}/City?$filter=${encodeURIComponent('"country = \'Crash\'"')}&$top=10000&$attributes=name,population`);
  assert.equal(res.status, 200, 'the cities read after the restart');
  const body = (await res.json()) as Json;
  return new Map(body.__ENTITIES.map((e: Json) => [e.name, { key: String(e.__KEY), population: e.population, stamp: e.__STAMP }]));
}

/** What the writers were answered, checked against what the database holds now. */
async function checkWrites(base: string, writers: readonly Writer[]): Promise<{ kept: number; undecided: number }> {
  const now = await crashCities(base);
  const known = new Set<string>();
  const members = (tag: string) => Array.from({ length: BATCH }, (_, i) => `${tag} #${i}`);
  for (const w of writers) {
    assert.deepEqual(w.wrong, [], `writer ${w.id}: answers no server should give`);
    for (const [name, city] of w.cities) {
      known.add(name);
      const held = now.get(name);
      assert.ok(held, `${name} was created (answered key ${city.key}) and is gone`);
      assert.equal(held.key, city.key, `${name}'s key`);
      assert.equal(held.population, city.population, `${name} holds the population last answered`);
      assert.equal(held.stamp, city.stamp, `${name}'s stamp is the one last answered`);
    }
    for (const name of w.deleted) assert.ok(!now.has(name), `${name} was deleted (answered ok) and is back`);
    for (const tag of w.batches) {
      for (const m of members(tag)) {
        known.add(m);
        assert.ok(now.has(m), `${tag} was answered 2xx and lacks ${m}`);
      }
    }
    for (const p of w.undecided) {
      known.add(p.name);
      if (p.kind !== 'batch') continue;
      const got = members(p.name).filter((m) => now.has(m)).length;
      assert.ok(got === 0 || got === BATCH, `the $atomic batch ${p.name} (undecided) is half-written: ${got} of ${BATCH}`);
      for (const m of members(p.name)) known.add(m);
    }
  }
  assert.deepEqual([...now.keys()].filter((n) => !known.has(n)), [], 'entities no writer was answered for, nor had undecided');
  return { kept: now.size, undecided: writers.reduce((n, w) => n + w.undecided.length, 0) };
}

/** Every dataclass the catalog lists (those exposed) reads whole, and a sample of its entities by key, each with the stamp its page showed. */
async function everythingReads(base: string): Promise<void> {
  const catalog = (await (await fetch(`${base}/$catalog`)).json()) as Json;
  const names: string[] = catalog.dataClasses.map((d: Json) => d.name);
  assert.ok(names.includes('City') && names.includes('Employee'), `the catalog: ${names}`);
  for (const dc of names) {
    const res = await fetch(`${base}/${dc}?$top=10000`);
    const body = (await res.json()) as Json;
    assert.equal(res.status, 200, `${dc} reads: ${JSON.stringify(body).slice(0, 300)}`);
    assert.equal(body.__ENTITIES.length, body.__COUNT, `${dc}: the page holds every entity counted`);
    for (const e of body.__ENTITIES.slice(0, 20)) {
      const one = await fetch(`${base}/${dc}(${e.__KEY})`);
      assert.equal(one.status, 200, `${dc}(${e.__KEY}) reads`);
      assert.equal(((await one.json()) as Json).__STAMP, e.__STAMP, `${dc}(${e.__KEY}): the same stamp by key as in the page`);
    }
  }
}

/** SQLite: the file passes its own check (opened after the kill, so the WAL is recovered first). */
function sqliteIntact(file: string): void {
  const db = new Database(file);
  try {
    const rows = db.prepare('PRAGMA integrity_check').all() as { integrity_check: string }[];
    assert.deepEqual(rows.map((r) => r.integrity_check), ['ok'], 'PRAGMA integrity_check');
    assert.deepEqual(db.prepare('PRAGMA foreign_key_check').all(), [], 'PRAGMA foreign_key_check');
  } finally {
    db.close();
  }
}

const serve = (db: string) => startCommand(['--db', db, '--port', '0', '--roles', 'none', '--log-level', 'warn', '--pool-size', '4'], { alone: true });

describe('the server killed (SIGKILL) under concurrent writes', () => {
  const tmp = tempDir();
  const started: CommandProcess[] = [];
  after(async () => {
    for (const s of started) {
      if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
      await s.exited;
    }
    tmp.remove();
  });

  it('keeps every write it answered (its stamp too), loses no entity, half-writes nothing, and reads whole after each of two kills', async (t) => {
    const file = join(tmp.dir, 'crash.sqlite');
    const db = await testDatabase(file);
    const writers = [0, 1, 2, 3].map(newWriter);
    for (let round = 0; round < 2; round++) {
      const server = await serve(db);
      started.push(server);
      let answers = 0;
      let killed = false;
      const loops = writers.map((w) => write(w, { base: server.base, stop: () => killed, accept: () => false, lost: 'stop', onAnswer: () => answers++ }));
      // the kill comes while every writer has a request out, after enough answers for every kind of write
      const killAfter = 60 + round * 40;
      while (answers < killAfter && server.child.exitCode === null) await sleep(5);
      server.child.kill('SIGKILL');
      await server.exited;
      killed = true;
      await Promise.all(loops);
      if (TEST_ENGINE === 'sqlite') sqliteIntact(file);
      const again = await serve(db);
      started.push(again);
      try {
        const { kept, undecided } = await checkWrites(again.base, writers);
        await everythingReads(again.base);
        // the stamps a writer holds still work after the restart: an update with the last one answered is taken
        for (const w of writers) {
          const [name, city] = [...w.cities][0] ?? [];
          if (!city) continue;
          const res = await post(again.base, '/City?$method=update', { __KEY: city.key, __STAMP: city.stamp, population: -1 });
          const body = (await res.json()) as Json;
          assert.equal(res.status, 200, `an update of ${name} with its last stamp after the restart: ${JSON.stringify(body)}`);
          w.cities.set(name, { key: city.key, population: -1, stamp: body.__STAMP });
        }
        t.diagnostic(`round ${round}: killed after ${answers} answers; ${kept} Crash cities kept; ${undecided} writes undecided so far (in flight at a kill)`);
      } finally {
        again.child.kill('SIGTERM');
        await again.exited;
      }
    }
  });
});

describe('PostgreSQL crashed (immediate shutdown) and started again under concurrent writes', { skip: TEST_ENGINE !== 'postgres' ? 'PostgreSQL only: runs in the PostgreSQL half' : false }, () => {
  it('answers 200 or 503 (7031, naming the database) meanwhile, never a 500 or a hang, recovers by itself, and keeps every write it answered', async (t) => {
    const database = await startEmbeddedPostgres();
    let server: CommandProcess | undefined;
    try {
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      await admin.query('CREATE DATABASE crash_faults');
      // the test cluster runs with synchronous_commit off (speed): here a commit answered must be on disk, as in production
      await admin.query('ALTER DATABASE crash_faults SET synchronous_commit = on');
      const dataDir = (await admin.query<{ d: string }>("SELECT current_setting('data_directory') AS d")).rows[0].d;
      await admin.end();
      const url = database.url.replace(/\/postgres$/, '/crash_faults');
      server = await serve(url);
      const base = server.base;
      const writers = [0, 1, 2, 3].map(newWriter);
      let stop = false;
      let answers = 0;
      let down = false;
      const outage: { status: number; errCode?: number; message?: string }[] = [];
      const accept = (status: number, body: Json) => {
        // (an $atomic batch the outage met answers its entities, the one that failed with the error, under the failure's status)
        const e = body?.__ERROR?.[0] ?? (body?.__ENTITIES as Json[] | undefined)?.find((x) => x?.__ERROR)?.__ERROR?.[0];
        outage.push({ status, errCode: e?.errCode, message: e?.message });
        return status === 503 && e?.errCode === 7031;
      };
      // (a request that hangs is aborted after 20 s and noted as wrong)
      const loops = writers.map((w) => write(w, { base, stop: () => stop, accept, lost: 'wrong', onAnswer: () => answers++ }));
      while (answers < 80) await sleep(5);
      // an immediate shutdown: the postmaster and every backend quit at once, no checkpoint (crash recovery on start)
      const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      down = true;
      process.kill(pid, 'SIGQUIT');
      await database.down(); // (waits for the process to be gone)
      const during = answers;
      await sleep(1500);
      const whileDown = answers - during;
      await database.up();
      down = false;
      // recovery without a restart: 80 answers more, the last 20 of every writer's 2xx
      const deadline = Date.now() + 30_000;
      const back = answers;
      while (answers < back + 80) {
        assert.ok(Date.now() < deadline, `no recovery within 30 s: ${JSON.stringify(writers.map((w) => [...w.statuses]))}; the server said ${server.stderr().slice(-2000)}`);
        await sleep(20);
      }
      stop = true;
      await Promise.all(loops);
      assert.equal(down, false);
      assert.equal(server.child.exitCode, null, 'the server process stayed up');
      for (const w of writers) assert.deepEqual(w.wrong, [], `writer ${w.id}: only 2xx or 503 (7031) answers, each in time`);
      assert.ok(outage.length > 0, 'no request met the outage');
      for (const o of outage) assert.match(o.message ?? '', /database/i, `the 503 says the database is unavailable: ${JSON.stringify(o)}`);
      const statuses = new Map<number, number>();
      for (const w of writers) for (const [s, n] of w.statuses) statuses.set(s, (statuses.get(s) ?? 0) + n);
      const { kept, undecided } = await checkWrites(base, writers);
      await everythingReads(base);
      t.diagnostic(`statuses ${JSON.stringify([...statuses])}; ${whileDown} answers while PostgreSQL was down; ${kept} Crash cities kept, ${undecided} writes undecided (a 503)`);
    } finally {
      if (server) {
        server.child.kill('SIGTERM');
        await server.exited;
      }
      await database.stop();
    }
  });
});
