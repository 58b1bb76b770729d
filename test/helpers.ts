// Shared test fixtures: the demo project opened on a fresh temporary database, and a Fastify app
// around it for in-process HTTP tests (inject).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { DatastoreWithClasses } from '../src/datastore/datastore.js';
import { openProject } from '../src/project.js';
import { buildServer } from '../src/server.js';

export const DEMO_DIR = fileURLToPath(new URL('../demo', import.meta.url));

export interface DemoFixture {
  ds: DatastoreWithClasses;
  app: FastifyInstance;
  /** GET (or another method) through inject; resolves to status and parsed JSON body */
  request(url: string, method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH', body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  close(): Promise<void>;
}

export function tempDir(prefix = 'dataset-rest-test-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The demo project, seeded into a temporary database. */
export async function openDemo(): Promise<DemoFixture> {
  const tmp = tempDir();
  const ds = await openProject(DEMO_DIR, { db: join(tmp.dir, 'demo.sqlite') });
  const app = await buildServer(ds, { logLevel: 'silent' });
  return {
    ds,
    app,
    async request(url, method = 'GET', body, headers) {
      const res = await app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: body as object }) });
      let parsed: unknown = res.body;
      try {
        parsed = JSON.parse(res.body);
      } catch {
        // not JSON: leave the text
      }
      return { status: res.statusCode, body: parsed, headers: res.headers };
    },
    async close() {
      await app.close();
      await ds.close();
      tmp.remove();
    },
  };
}
