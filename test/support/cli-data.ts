// What the import and export command tests share: a small project (a Product with a value of every
// type and a relation to Category), opened on the engine under test, with a server for REST
// reads; and the commands' main() run in this process with their stdout and stderr captured.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { io } from '../../src/commands/common.js';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { openProject } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { tempDir } from './helpers.js';

export const SHOP_MODEL = {
  name: 'Shop',
  dataClasses: [
    {
      name: 'Category',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
      ],
    },
    {
      name: 'Product',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string', notNull: true, indexed: true },
        { name: 'code', type: 'string', unique: true },
        { name: 'price', type: 'number' },
        { name: 'qty', type: 'long' },
        { name: 'active', type: 'bool' },
        { name: 'added', type: 'date', dateOnly: true },
        { name: 'seen', type: 'date' },
        { name: 'info', type: 'object' },
        { name: 'ref', type: 'uuid' },
        { name: 'category', kind: 'relatedEntity', type: 'Category', foreignKey: 'categoryID' },
      ],
    },
  ],
};

export interface Shop {
  readonly dir: string;
  /** the --db of the commands */
  readonly db: string;
  readonly ds: DatastoreWithClasses;
  readonly app: FastifyInstance;
  /** a REST GET through the server: its parsed JSON */
  get(url: string): Promise<any>;
  post(url: string, body: unknown): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/**
 * The Shop project in a new folder, with categories 1 to 3, on the database `database` gives for
 * a SQLite file (the tests pass helpers.ts's testDatabase: test/run.ts sees the call and runs them
 * on PostgreSQL too).
 */
export async function openShop(database: (sqliteFile: string) => Promise<string>, name = 'shop'): Promise<Shop> {
  const tmp = tempDir('dataset-rest-cli-');
  const dir = join(tmp.dir, name);
  mkdirSync(dir);
  writeFileSync(join(dir, 'model.json'), JSON.stringify(SHOP_MODEL));
  const db = await database(join(dir, 'data.sqlite'));
  const ds = await openProject(dir, { db, roles: false, poolSize: 2 });
  await ds.transaction(async () => {
    for (const n of ['tools', 'toys', 'food']) {
      const c = ds.Category.new();
      c.set('name', n);
      await c.save();
    }
  });
  const app = await buildServer(ds, { logLevel: 'silent' });
  return {
    dir, db, ds, app,
    async get(url) {
      // (the commands write through a datastore of their own, another instance to this server,
      // whose kept answers see such writes within ANSWER_CACHE_STALENESS_MS: each read is fresh)
      const res = await app.inject({ url, headers: { 'cache-control': 'no-cache' } });
      return JSON.parse(res.body);
    },
    async post(url, body) {
      const res = await app.inject({ method: 'POST', url, payload: body as object });
      return { status: res.statusCode, body: JSON.parse(res.body) };
    },
    async close() {
      await app.close();
      await ds.close();
      tmp.remove();
    },
  };
}

export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command's main() here, its stdout and stderr collected (and not shown). */
export async function run(main: (args: readonly string[]) => Promise<number>, args: readonly string[], stdin?: string): Promise<Ran> {
  const collect = () => {
    let text = '';
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        text += String(chunk);
        done();
      },
    });
    return { stream, text: () => text };
  };
  const out = collect();
  const err = collect();
  const saved = { ...io };
  io.stdout = out.stream;
  io.stderr = err.stream;
  if (stdin !== undefined) io.stdin = Readable.from([stdin]);
  try {
    const code = await main(args);
    return { code, stdout: out.text(), stderr: err.text() };
  } finally {
    Object.assign(io, saved);
  }
}

/** Writes a file into `dir` and gives its path. */
export function fileIn(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}
