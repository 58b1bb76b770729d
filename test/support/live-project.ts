// The project the live-data tests (watch streams, webhooks) share: a tracked Item whose cost only
// the books privilege reads, and an untracked Plain; everything else open to a guest. And how a
// live test writes a project folder of its own (its classes importing 'dataset-rest').

import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** Writes a project folder: model.json, roles.json, and classes/<name>.ts for each of `classes`, which import this package as 'dataset-rest'. */
export function writeLiveProject(dir: string, model: unknown, roles: unknown, classes: Readonly<Record<string, string>>): void {
  writeFileSync(join(dir, 'model.json'), JSON.stringify(model));
  writeFileSync(join(dir, 'roles.json'), JSON.stringify(roles));
  for (const d of ['classes', 'node_modules']) mkdirSync(join(dir, d));
  symlinkSync(fileURLToPath(new URL('../..', import.meta.url)), join(dir, 'node_modules', 'dataset-rest'), 'dir');
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  for (const [name, text] of Object.entries(classes)) writeFileSync(join(dir, 'classes', `${name}.ts`), text);
}

export const LIVE_MODEL = {
  name: 'Live',
  dataClasses: [
    { name: 'Item', trackChanges: true, attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'name', type: 'string' }, { name: 'price', type: 'number' }, { name: 'cost', type: 'number' }] },
    { name: 'Plain', attributes: [{ name: 'ID', type: 'long', identifying: true, autoincrement: true }, { name: 'name', type: 'string' }] },
  ],
};

/** a guest may do anything but read Item.cost */
export const LIVE_ROLES = {
  privileges: [{ privilege: 'books', includes: [] }],
  roles: [],
  permissions: {
    allowed: [
      { applyTo: 'ds', type: 'datastore', read: ['guest'], create: ['guest'], update: ['guest'], drop: ['guest'], execute: ['guest'] },
      { applyTo: 'Item.cost', type: 'attribute', read: ['books'] },
    ],
  },
  restrictedByDefault: false,
  forceLogin: false,
};
