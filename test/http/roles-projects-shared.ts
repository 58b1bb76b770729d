// What the files split from roles-projects.test.ts share: a small project of owners and notes
// (model, classes with restrict(), a seed), its roles.json, and a server over it on a fresh database.

import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { DatastoreWithClasses } from '../../src/datastore/datastore.js';
import { openProject } from '../../src/project/open.js';
import { buildServer } from '../../src/http/server.js';
import { tempDir, testDatabase } from '../support/helpers.js';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));

export const MODEL = {
  name: 'Notes',
  dataClasses: [
    {
      name: 'Owner',
      collectionName: 'OwnerSelection',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'name', type: 'string' },
        { name: 'notes', kind: 'relatedEntities', type: 'NoteSelection', path: 'owner' },
      ],
    },
    {
      name: 'Note',
      collectionName: 'NoteSelection',
      attributes: [
        { name: 'ID', type: 'long', identifying: true, autoincrement: true },
        { name: 'text', type: 'string' },
        { name: 'ownerName', type: 'string' },
        { name: 'owner', kind: 'relatedEntity', type: 'Owner', foreignKey: 'ownerID' },
        { name: 'writtenBy', kind: 'calculated', type: 'string' },
      ],
    },
  ],
};

export const CLASSES = {
  'DataStore.ts': `import { Datastore, exposed, session } from 'dataset-rest';
export default class DataStore extends Datastore {
  @exposed
  authentify(name: string) {
    session().setPrivileges({ roles: ['User'], userName: name });
    return { userName: session().userName, privileges: session().getPrivileges() };
  }
  // what the session keeps, read by the calculated writtenBy
  @exposed
  callMe(name: string) {
    session().storage.me = name;
  }
  @exposed
  allNotes() {
    return this.dataClass('Note')!.all();
  }
}
`,
  // by user name only: a guest's is '' (no note has it), and it works without a roles.json too
  // an event is user code too: it runs as the REST caller whose save started it
  'NoteEntity.ts': `import { Entity, exposed, session } from 'dataset-rest';
export default class NoteEntity extends Entity {
  // saves this entity: with roles.json's promote, a session that may only read runs it
  @exposed
  async shout() {
    this.set('text', String(this.get('text')).toUpperCase());
    await this.save();
    return this.get('text');
  }
  saving() {
    if (this.get('ownerName') === null) this.set('ownerName', session().userName);
  }
  // a calculated attribute's code is user code too: a read runs it as the REST caller
  get writtenBy() {
    return this.get('ownerName') === session().userName ? String(session().storage.me ?? 'me') : String(this.get('ownerName'));
  }
}
`,
  'Note.ts': `import { DataClass, session } from 'dataset-rest';
export default class Note extends DataClass {
  restrict() {
    return this.query('ownerName = :1', session().userName);
  }
}
`,
};

export const SEED = `import type { DatastoreWithClasses } from 'dataset-rest';
export default async function seed(ds: DatastoreWithClasses): Promise<void> {
  for (const [name, texts] of [['ann', ['ann one', 'ann two']], ['bob', ['bob secret', 'bob other', 'bob third']]] as const) {
    const owner = ds.Owner.new();
    owner.set('name', name);
    await owner.save();
    for (const text of texts) {
      const note = ds.Note.new();
      note.set('text', text);
      note.set('ownerName', name);
      note.set('owner', owner);
      await note.save();
    }
  }
}
`;

/** A roles.json: the User role holds `reader`, which reads and writes everything. */
export function rolesJson(extra: Record<string, unknown> = {}, allowed: unknown[] = []): string {
  return JSON.stringify({
    privileges: [{ privilege: 'reader', includes: [] }],
    roles: [{ role: 'User', privileges: ['reader'] }],
    permissions: {
      allowed: [
        { applyTo: 'ds', type: 'datastore', read: ['reader'], create: ['reader'], update: ['reader'], drop: ['reader'], execute: ['guest'] },
        ...allowed,
      ],
    },
    ...extra,
  }, null, 2);
}

/** A project folder with the model, classes, seed and (unless null) this roles.json; dataset-rest installed as a link to this repository. */
export function project(roles: string | null): { dir: string; remove(): void } {
  const tmp = tempDir('dataset-rest-roles-');
  writeFileSync(join(tmp.dir, 'model.json'), JSON.stringify(MODEL, null, 2));
  for (const d of ['classes', 'node_modules']) mkdirSync(join(tmp.dir, d));
  symlinkSync(REPO, join(tmp.dir, 'node_modules', 'dataset-rest'), 'dir');
  for (const [name, text] of Object.entries(CLASSES)) writeFileSync(join(tmp.dir, 'classes', name), text);
  writeFileSync(join(tmp.dir, 'seed.ts'), SEED);
  if (roles !== null) writeFileSync(join(tmp.dir, 'roles.json'), roles);
  return tmp;
}

type Verb = 'GET' | 'POST';
type Answer = { status: number; body: any };

/** A client of an app that keeps its session cookie, as a browser would. */
export function client(app: FastifyInstance) {
  let cookie: string | undefined;
  return async (url: string, method: Verb = 'GET', body?: unknown): Promise<Answer> => {
    const res = await app.inject({ method, url, headers: cookie ? { cookie } : {}, ...(body === undefined ? {} : { payload: body as object }) });
    const set = ([] as string[]).concat((res.headers['set-cookie'] as string | string[] | undefined) ?? []).find((c) => c.startsWith('4DSID_'));
    if (set) cookie = set.split(';')[0];
    let parsed: unknown = res.body;
    try {
      parsed = JSON.parse(res.body);
    } catch {
      // not JSON
    }
    return { status: res.statusCode, body: parsed };
  };
}

export interface Served {
  ds: DatastoreWithClasses;
  app: FastifyInstance;
  close(): Promise<void>;
}

export async function serve(roles: string | null, options: { roles?: false } = {}): Promise<Served> {
  const tmp = project(roles);
  const ds = await openProject(tmp.dir, { db: await testDatabase(join(tmp.dir, 'data.sqlite')), ...options });
  const app = await buildServer(ds, { logLevel: 'silent' });
  return {
    ds, app,
    async close() {
      await app.close();
      await ds.close();
      tmp.remove();
    },
  };
}

export const texts = (body: any): string[] => (body.__ENTITIES as { text: string }[]).map((e) => e.text).sort();
export const noteKey = async (ds: DatastoreWithClasses, text: string): Promise<unknown> => (await ds.Note.query('text = :1', text).first())!.getKey();
