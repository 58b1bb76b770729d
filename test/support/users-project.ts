// A small project with built-in users (auth.json), for the login, token and passcode tests: a
// Note dataclass guests may read and editors write, roles Editor and Administrator, and two
// server instances over one database when a test needs another instance's view.

import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { coreOf, type DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { openProject } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { injected, tempDir, testDatabase, type Answer } from './helpers.js';

export const USERS_MODEL = {
  name: 'Notes',
  dataClasses: [
    { name: 'Note', attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'text', type: 'string' }, { name: 'secret', type: 'string' }] },
  ],
};

export const USERS_ROLES = {
  privileges: [{ privilege: 'edit', includes: [] }, { privilege: 'secrets', includes: [] }, { privilege: 'admin', includes: ['edit', 'secrets'] }],
  roles: [{ role: 'Editor', privileges: ['edit'] }, { role: 'Keeper', privileges: ['edit', 'secrets'] }, { role: 'Administrator', privileges: ['admin'] }],
  permissions: {
    allowed: [
      { applyTo: 'ds', type: 'datastore', read: ['guest'], create: ['edit'], update: ['edit'], drop: ['edit'], execute: ['guest'] },
      { applyTo: 'Note.secret', type: 'attribute', read: ['secrets'], create: ['secrets'], update: ['secrets'] },
    ],
  },
  restrictedByDefault: false,
  forceLogin: false,
};

export interface UsersServer {
  readonly ds: DatastoreWithClasses;
  readonly app: FastifyInstance;
  request(url: string, method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', body?: unknown, headers?: Record<string, string>): Promise<Answer>;
}

export interface UsersProject {
  readonly dir: string;
  readonly a: UsersServer;
  /** a second instance over the same database (another process would be the same) */
  second(): Promise<UsersServer>;
  close(): Promise<void>;
}

/** Writes and opens the project; `auth` is auth.json's content, `files` more files of the folder. */
export async function openUsersProject(auth: unknown = { users: { minPasswordLength: 8, lockout: { failures: 3, minutes: 5 } } }, files: Record<string, string> = {}): Promise<UsersProject> {
  const tmp = tempDir();
  const dir = join(tmp.dir, 'project');
  mkdirSync(dir);
  writeFileSync(join(dir, 'model.json'), JSON.stringify(USERS_MODEL));
  writeFileSync(join(dir, 'roles.json'), JSON.stringify(USERS_ROLES));
  if (auth !== undefined) writeFileSync(join(dir, 'auth.json'), JSON.stringify(auth));
  // (its classes import this package as 'dataset-rest')
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(fileURLToPath(new URL('../..', import.meta.url)), join(dir, 'node_modules', 'dataset-rest'), 'dir');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  const db = await testDatabase(join(tmp.dir, 'notes.sqlite'));
  const servers: UsersServer[] = [];
  const open = async (): Promise<UsersServer> => {
    const ds = await openProject(dir, { db, poolSize: 4 });
    const app = await buildServer(ds, { logLevel: 'silent' });
    const s = { ds, app, request: (url: string, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' = 'GET', body?: unknown, headers?: Record<string, string>) => injected(app, url, method, body, headers) };
    servers.push(s);
    return s;
  };
  const a = await open();
  return {
    dir, a, second: open,
    async close() {
      for (const s of servers) {
        await s.app.close();
        await s.ds.close();
      }
      tmp.remove();
    },
  };
}

/** Adds a user through the core. */
export async function addUser(server: UsersServer, userName: string, password: string, roles: string[]): Promise<void> {
  await coreOf(server.ds).users?.add(userName, password, roles);
}

/** Logs in through the built-in authentify; resolves to the session's cookie. */
export async function logIn(server: UsersServer, userName: string, password: string): Promise<string> {
  const res = await server.request('/rest/$catalog/authentify', 'POST', [{ userName, password }]);
  if (res.status !== 200) throw new Error(`login of ${userName}: ${res.status} ${JSON.stringify(res.body)}`);
  return String(res.headers['set-cookie']).split(';')[0];
}
