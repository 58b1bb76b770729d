// The database in trouble (issue 19), on SQLite: another process holding the write lock, a full
// disk. A write waits for the lock without holding the event loop (reads are served meanwhile),
// then answers 503 with Retry-After; a full disk answers writes 507 and keeps reading. Nothing of
// a refused write is kept.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { Datastore, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { buildModel } from '../../src/model/load-model.js';
import { buildServer } from '../../src/http/server.js';
import { sqliteStorage } from '../../src/storage/open.js';
import { tempDir } from '../support/helpers.js';

const MODEL = buildModel({
  name: 'Faults',
  dataClasses: [{ name: 'Note', attributes: [
    { name: 'ID', type: 'long', identifying: true, autoincrement: true },
    { name: 'text', type: 'string' },
  ] }],
});

async function serve(file: string): Promise<{ ds: DatastoreWithClasses; app: FastifyInstance }> {
  const ds = await Datastore.open(MODEL, sqliteStorage(file));
  return { ds, app: await buildServer(ds, { logLevel: 'silent' }) };
}

const create = (app: FastifyInstance, text: string) => app.inject({ method: 'POST', url: '/rest/Note?$method=update', payload: { text } });

describe('SQLite: another process holds the write lock', () => {
  const tmp = tempDir();
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  let file: string;
  before(async () => {
    file = join(tmp.dir, 'locked.sqlite');
    ({ ds, app } = await serve(file));
    assert.equal((await create(app, 'before')).statusCode, 200);
  });
  after(async () => {
    await app.close();
    await ds.close();
    tmp.remove();
  });

  it('waits for the lock without holding the event loop (reads answer meanwhile), then answers 503 (7064) with Retry-After, nothing written', async () => {
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    try {
      const started = Date.now();
      const writing = create(app, 'while locked');
      // the loop is free: a read and a timer run while the write waits
      const read = await app.inject({ url: '/rest/Note?$attributes=text' });
      assert.equal(read.statusCode, 200);
      assert.ok(Date.now() - started < 1000, `a read took ${Date.now() - started} ms behind the waiting write`);
      const res = await writing;
      assert.ok(Date.now() - started >= 4500, 'it waited for the lock');
      assert.equal(res.statusCode, 503);
      assert.equal(res.headers['retry-after'], '1');
      const error = res.json().__ERROR[0];
      assert.equal(error.errCode, 7064);
      assert.match(error.message, /another process holds the database's write lock: waited 5 s/);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    const texts = (await app.inject({ url: '/rest/Note?$attributes=text' })).json().__ENTITIES.map((e: { text: string }) => e.text);
    assert.deepEqual(texts, ['before']);
  });

  it('writes once the other process lets the lock go within the wait', async () => {
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    const released = new Promise<void>((resolve) => setTimeout(() => {
      other.exec('ROLLBACK');
      other.close();
      resolve();
    }, 300));
    const res = await create(app, 'after the wait');
    await released;
    assert.equal(res.statusCode, 200, res.body);
  });
});

describe('SQLite: a full disk', () => {
  const tmp = tempDir();
  const mount = join(tmp.dir, 'small');
  mkdirSync(mount);
  // a small file system of its own (root only: skipped elsewhere)
  const mounted = process.platform === 'linux' && spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', mount]).status === 0;
  let ds: DatastoreWithClasses;
  let app: FastifyInstance;
  before(async () => {
    if (!mounted) return;
    ({ ds, app } = await serve(join(mount, 'full.sqlite')));
  });
  after(async () => {
    if (mounted) {
      await app.close();
      await ds.close();
      spawnSync('umount', ['-l', mount]);
    }
    tmp.remove();
  });

  it('answers a write or an upload the disk cannot hold 507 (7065), keeps what was stored, and goes on reading', { skip: !mounted && 'needs root to mount a small tmpfs' }, async () => {
    const big = 'x'.repeat(200_000);
    let full: Awaited<ReturnType<typeof create>> | undefined;
    let stored = 0;
    for (let i = 0; i < 40 && !full; i++) {
      const res = await create(app, `${i} ${big}`);
      if (res.statusCode === 200) stored++;
      else full = res;
    }
    assert.ok(full, 'the disk never filled');
    assert.equal(full.statusCode, 507, full.body);
    const error = full.json().__ERROR[0];
    assert.equal(error.errCode, 7065);
    assert.match(error.message, /the disk holding the database is full/);
    // an upload too: 507, not "cut off"
    const upload = await app.inject({ method: 'POST', url: '/rest/$upload?$binary=true', payload: Buffer.alloc(1_000_000, 1), headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(upload.statusCode, 507, upload.body);
    assert.equal(upload.json().__ERROR[0].errCode, 7065);
    const read = await app.inject({ url: '/rest/Note?$attributes=ID' });
    assert.equal(read.statusCode, 200);
    assert.equal(read.json().__COUNT, stored);
  });
});
