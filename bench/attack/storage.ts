// Attack cases on storage (issue 19): SQLite's write lock held by another process, a full disk,
// values that would break later queries or cost the disk far more than their size (JSON nested
// past what the engine can query, a 10 MB text folded whole), filters the engine cannot run
// (`tags[].x` over scalars, expressions too deep), and a file that never shrank after sweeps.

import { randomBytes } from 'node:crypto';
import { mkdirSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { connect } from '../postgres.js';
import { onCleanup } from '../processes.js';
import {
  Client, deleteWhere, describeLatency, errCode, MB, seconds, skipped, sleep, statusOf, underProbes, Verdict, type AttackCase, type CaseContext,
} from './harness.js';
import { setValue } from './time.js';

/** Bytes the database's rows take (SQLite: pages in use, the WAL's included; PostgreSQL: the database's size). */
async function databaseBytes(ctx: CaseContext): Promise<number> {
  if (ctx.engine === 'sqlite') {
    const db = new Database(ctx.server.db, { readonly: true, fileMustExist: true });
    try {
      const pages = Number(db.pragma('page_count', { simple: true })) - Number(db.pragma('freelist_count', { simple: true }));
      return pages * Number(db.pragma('page_size', { simple: true }));
    } finally {
      db.close();
    }
  }
  const c = await connect(ctx.server.db);
  try {
    // (PostgreSQL writes some of it later: a checkpoint is not needed for the relation sizes)
    return Number((await c.query<{ n: string }>('SELECT pg_database_size(current_database()) AS n')).rows[0].n);
  } finally {
    await c.end();
  }
}

/** Text that does not compress (PostgreSQL's TOAST would shrink 'aaaa…'): letters from random bytes. */
const randomText = (n: number) => randomBytes(n).toString('base64').replace(/[+/=]/g, 'x').slice(0, n);

const writeLock: AttackCase = {
  id: 'write-lock',
  issue: 19,
  engines: ['sqlite'],
  finding: 'while another process held SQLite\'s write lock, each write blocked the whole event loop 5 s (a synchronous busy wait), then answered 500',
  target: 'the write waits without blocking (reads and /health answered meanwhile, never waiting 1 s), then 503 (7064) with Retry-After; nothing written',
  async run(ctx) {
    const v = new Verdict();
    const other = new Database(ctx.server.db, { fileMustExist: true });
    const tag = `Locked ${Date.now()}`;
    let a;
    let latencies;
    try {
      other.exec('BEGIN IMMEDIATE');
      const probed = await underProbes(ctx, () => ctx.alice.post('/City?$method=update', { name: tag }, { timeoutMs: 120_000 }), '/Company(1)');
      a = probed.value;
      latencies = probed;
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
    const written = Number((await ctx.alice.get(`/City?$filter=${encodeURIComponent(`"name = '${tag}'"`)}&$top=0`)).json?.__COUNT);
    v.check(a.status === 503 && errCode(a) === 7064 && a.headers['retry-after'] !== undefined, `answered ${statusOf(a)}, Retry-After ${a.headers['retry-after'] ?? 'none'}`);
    v.timed(latencies.health.max < 1000, `/health waited ${seconds(latencies.health.max)}`);
    v.timed((latencies.read?.max ?? 0) < 1000, `a read by key waited ${seconds(latencies.read?.max ?? 0)}`);
    v.check(written === 0, `${written} written`);
    if (written) await deleteWhere(ctx.alice, 'City', `name = '${tag}'`);
    return v.result(`${statusOf(a)} after ${seconds(a.ms)} (Retry-After ${a.headers['retry-after']}); ${describeLatency('/health', latencies.health)}; ${describeLatency('read by key', latencies.read!)}; ${written} written`, { health: latencies.health, read: latencies.read });
  },
};

const diskFull: AttackCase = {
  id: 'disk-full',
  issue: 19,
  engines: ['sqlite'],
  finding: 'a full disk answered uploads 400 ("cut off") and updates 500',
  target: 'writes and uploads answered 507 (7065) with a clear message, nothing half-written; reads go on',
  async run(ctx) {
    if (process.getuid?.() !== 0) return skipped('mounting a small tmpfs needs root');
    const v = new Verdict();
    const mount = join(ctx.folder, 'small-disk');
    mkdirSync(mount, { recursive: true });
    // the demo's database copied, compacted, onto a file system a few MB larger than it (the file
    // itself may be mostly free pages, after the cases that delete: a copy of them would never fill)
    const source = new Database(ctx.server.db, { readonly: true });
    const used = (source.pragma('page_count', { simple: true }) as number) - (source.pragma('freelist_count', { simple: true }) as number);
    const size = Math.ceil((used * (source.pragma('page_size', { simple: true }) as number)) / MB) + 6;
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}m`, 'tmpfs', mount]).status !== 0) {
      source.close();
      return skipped('cannot mount a tmpfs here');
    }
    const unmount = () => spawnSync('umount', ['-l', mount]);
    const drop = onCleanup(unmount);
    try {
      const file = join(mount, 'full.sqlite');
      try {
        source.prepare('VACUUM INTO ?').run(file);
      } finally {
        source.close();
      }
      const server = await ctx.startServer([], file);
      const alice = new Client('alice (full disk)', server.base, ctx.address());
      try {
        await alice.login('alice', 'alice123');
        let full;
        let stored = 0;
        for (let i = 0; i < 200 && !full; i++) {
          const a = await alice.post('/City?$method=update', { name: `Full ${i}`, country: randomText(200_000) });
          if (a.status === 200) stored++;
          else full = a;
        }
        v.check(full?.status === 507 && errCode(full) === 7065, `the write that did not fit answered ${full ? statusOf(full) : 'nothing: the disk never filled'}`);
        const upload = await alice.request('POST', '/$upload?$binary=true', { raw: randomBytes(MB) });
        v.check(upload.status === 507 && errCode(upload) === 7065, `an upload answered ${statusOf(upload)}`);
        const read = await alice.get(`/City?$filter=${encodeURIComponent('"name = \'Full@\'"')}&$top=0`);
        v.check(read.status === 200 && read.json.__COUNT === stored, `a read answered ${statusOf(read)}, ${read.json?.__COUNT} of the ${stored} stored`);
        return v.result(`a ${size} MB file system: ${stored} texts of 200 KB stored, then a write ${full ? statusOf(full) : 'never refused'} ("${String(full?.json?.__ERROR?.[0]?.message ?? '').slice(0, 60)}…"), an upload ${statusOf(upload)}, a read ${statusOf(read)} counting ${read.json?.__COUNT}`);
      } finally {
        alice.close();
        await server.stop(5000);
      }
    } finally {
      unmount();
      drop();
    }
  },
};

/** `depth` objects, one inside the other. */
const nested = (depth: number): unknown => {
  let o: unknown = { leaf: 1 };
  for (let i = 1; i < depth; i++) o = { a: o };
  return o;
};

const deepJson: AttackCase = {
  id: 'deep-json',
  issue: 19,
  finding: 'JSON nested deeper than the database can query (SQLite stops at 1,000 levels) was stored, breaking later queries',
  target: 'refused at write time (400), nothing stored; later queries over the attribute still answer',
  async run(ctx) {
    const v = new Verdict();
    const tag = `Deep ${Date.now()}`;
    const parts: string[] = [];
    for (const depth of [2000, 101]) {
      const a = await ctx.alice.post('/Company?$method=update', { name: `${tag} ${depth}`, extra: nested(depth) });
      parts.push(`${depth} levels: ${statusOf(a)}`);
      v.check(a.status === 400 && (errCode(a) === 7013 || errCode(a) === 7014), `${depth} levels answered ${statusOf(a)}`);
    }
    const stored = Number((await ctx.alice.get(`/Company?$filter=${encodeURIComponent(`"name = '${tag}@'"`)}&$top=0`)).json?.__COUNT);
    v.check(stored === 0, `${stored} stored`);
    const query = await ctx.alice.get(`/Company?$filter=${encodeURIComponent('"extra.sector = \'tech\'"')}&$top=1`);
    v.check(query.status === 200, `a query over extra answered ${statusOf(query)}`);
    if (stored) await deleteWhere(ctx.alice, 'Company', `name = '${tag}@'`);
    return v.result(`${parts.join(', ')}; ${stored} stored; a query over extra afterwards ${statusOf(query)}`);
  },
};

const badFilters: AttackCase = {
  id: 'engine-filters',
  issue: 19,
  finding: 'a filter over `tags[].x` where the elements are scalars, and an expression too deep for the engine, answered 500',
  target: '400 with an __ERROR naming what was wrong, not 500',
  async run(ctx) {
    const v = new Verdict();
    const guest = ctx.client('guest');
    const filters: readonly [string, string][] = [
      ['tags[].x over scalars', 'extra.tags[].x = 1'],
      ['tags[].x[].y', 'extra.tags[].x[].y = 1'],
      ['800 ORs', Array.from({ length: 800 }, (_, i) => `ID=${i}`).join(' or ')],
      ['300 1→N criteria', Array.from({ length: 300 }, (_, i) => `staff.lastName = a${i}`).join(' or ')],
      ['33 parentheses', `${'('.repeat(33)}ID=1${')'.repeat(33)}`],
      ['a path of 40 steps', `${Array.from({ length: 20 }, () => 'staff.employer').join('.')}.name = a`],
    ];
    const parts: string[] = [];
    for (const [what, filter] of filters) {
      const a = await guest.get(`/Company?$filter=${encodeURIComponent(`"${filter}"`)}&$top=1`, { timeoutMs: 60_000 });
      parts.push(`${what}: ${statusOf(a)}`);
      v.check(a.status < 500 && (a.status < 400 || (typeof errCode(a) === 'number' && typeof a.json.__ERROR[0].message === 'string')), `${what} answered ${statusOf(a)}`);
    }
    return v.result(parts.join(', '));
  },
};

const longText: AttackCase = {
  id: 'long-text',
  issue: 19,
  finding: 'one 10 MB text value cost ≈220 MB on disk through folding; no maximum string length',
  target: 'past --max-text-length (1,000,000 characters) refused (400, 7013, naming the limit), nothing written; a text at the limit costs the disk a few MB, not ≈75 MB',
  async run(ctx) {
    const v = new Verdict();
    const limit = ctx.limits.maxTextLength;
    const guest = ctx.client('guest');
    const key = String((await guest.get('/Employee?$top=1&$skip=1&$orderby=employeeNumber&$attributes=ID')).json.__ENTITIES[0].__KEY);
    const got = await ctx.alice.get(`/Employee(${key})?$attributes=ID`);
    const over = await ctx.alice.post('/Employee?$method=update', { __KEY: key, __STAMP: got.json.__STAMP, notes: randomText(limit + 1) });
    v.check(over.status === 400 && errCode(over) === 7013 && /1[,.]?000[,.]?000|limit/.test(over.json?.__ERROR?.[0]?.message ?? ''), `${limit + 1} characters answered ${statusOf(over)}: ${String(over.json?.__ERROR?.[0]?.message).slice(0, 120)}`);
    const before = await databaseBytes(ctx);
    await setValue(ctx.alice, 'Employee', key, { notes: randomText(limit) });
    try {
      // (PostgreSQL's size is the files': give its writer a moment)
      if (ctx.engine === 'postgres') await sleep(500);
      const grown = (await databaseBytes(ctx)) - before;
      v.check(grown < 10 * MB, `the database grew ${(grown / MB).toFixed(1)} MB`);
      return v.result(`${limit + 1} characters: ${statusOf(over)}; ${limit} characters stored: the database grew ${(grown / MB).toFixed(1)} MB`, { grownBytes: grown });
    } finally {
      await setValue(ctx.alice, 'Employee', key, { notes: null });
    }
  },
};

/**
 * On a server of its own, over a copy of the database: the sweep's timer (every minute, from the
 * server's start) is what gives space back, and no other case's writes may take the freed pages
 * meanwhile (SQLite reuses them before the vacuum could give them back).
 */
const reclaim: AttackCase = {
  id: 'file-shrinks',
  issue: 19,
  engines: ['sqlite'],
  background: true,
  finding: 'the SQLite file never shrank after sweeps (unattached uploads swept, their space kept)',
  target: 'the sweep (every minute) gives the space of what it removed back to the file system (incremental vacuum): the file shrinks by the expired uploads\' size',
  async run(ctx) {
    const v = new Verdict();
    const copy = join(ctx.folder, 'shrinks.sqlite');
    const source = new Database(ctx.server.db, { readonly: true });
    try {
      await source.backup(copy);
    } finally {
      source.close();
    }
    const server = await ctx.startServer([], copy);
    const editor = new Client('alice (uploads)', server.base, ctx.address());
    const file = new Database(copy, { readonly: true, fileMustExist: true });
    // the file's pages as committed (the WAL's included): what a sweep's vacuum gives back shows at once
    const bytes = () => Number(file.pragma('page_count', { simple: true })) * Number(file.pragma('page_size', { simple: true }));
    try {
      await editor.login('alice', 'alice123');
      const count = Math.min(20, ctx.limits.pendingUploads - 1);
      const each = Math.min(MB, Math.floor(ctx.limits.pendingUploadBytes / (count + 1)));
      const before = statSync(copy).size;
      const startPages = bytes();
      for (let i = 0; i < count; i++) {
        const a = await editor.request('POST', '/$upload?$binary=true&$timeout=1', { raw: randomBytes(each) });
        if (a.status !== 200) throw new Error(`upload ${i}: ${statusOf(a)} ${a.text.slice(0, 200)}`);
      }
      const uploaded = count * each;
      const full = bytes();
      const started = performance.now();
      // the first sweep comes within a minute of the server's start: watched for every 250 ms, 75 s at most
      let least = full;
      let at = 0;
      // (given back: the file's pages down to what they were before the uploads, within a fifth of
      // them — a sweep may come while they are sent, and its space be used again by the next ones)
      const back = () => least <= startPages + uploaded * 0.2;
      while (performance.now() - started < 75_000 && !back()) {
        await sleep(250);
        const now = bytes();
        if (now < least) {
          least = now;
          at = performance.now() - started;
        }
      }
      // (the vacuum gives a step at a time: its last steps, and the checkpoint that shrinks the file)
      await sleep(2000);
      least = Math.min(least, bytes());
      const onDisk = statSync(copy).size;
      v.check(back(), `the file's pages were ${(startPages / MB).toFixed(1)} MB before the uploads and ${(least / MB).toFixed(1)} MB ${seconds(performance.now() - started)} after them (${(uploaded / MB).toFixed(1)} MB expired)`);
      return v.result(`${count} uploads of ${(each / MB).toFixed(2)} MB expired: the file's pages ${(startPages / MB).toFixed(1)} MB before them, ${(full / MB).toFixed(1)} MB after, then ${(least / MB).toFixed(1)} MB${at ? ` (${seconds(at)} later, at the sweep)` : ''}; on disk ${(before / MB).toFixed(1)} MB before the uploads, ${(onDisk / MB).toFixed(1)} MB after the sweep`);
    } finally {
      file.close();
      editor.close();
      await server.stop(5000);
    }
  },
};

export const storageCases: readonly AttackCase[] = [writeLock, diskFull, deepJson, badFilters, longText, reclaim];
