// Reads model.json and turns it into the resolved Model. Validation is strict and reports every
// mistake at once, each with its JSON path, before anything touches the database. The build runs
// in passes (model/build/), each finishing what the next one needs: the dataclasses, their
// attributes (storage ones finished, keys found; change tracking's own, build/tracking.ts), the N→1 relations (foreign keys made), the 1→N
// relations (inverses paired), the calculated attributes and aliases; then, when no pass found a
// problem, the lookups and field positions, and the model frozen.

import { readFile } from 'node:fs/promises';
import { readAttributes } from './build/attributes.js';
import { checkKeys, isObject, type Fail } from './build/checks.js';
import { readDataClasses } from './build/classes.js';
import { resolveDerived } from './build/derived.js';
import { deepFreeze, placeFields } from './build/finish.js';
import { resolveLabels } from './build/labels.js';
import { resolveInverses, resolveRelations } from './build/relations.js';
import { addTracking, readRetention, readTracking } from './build/tracking.js';
import type { Model } from './types.js';

export class ModelError extends Error {
  constructor(readonly problems: readonly string[], source: string) {
    super(`${source}: ${problems.length} problem${problems.length === 1 ? '' : 's'} in the model:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ModelError';
  }
}

const MODEL_KEYS = ['name', 'dataClasses', 'deletedRecordsRetention'];

export async function loadModelFile(file: string): Promise<Model> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new ModelError([`cannot read the model file (${(e as NodeJS.ErrnoException).code ?? String(e)})`], file);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ModelError([`not valid JSON: ${(e as Error).message}`], file);
  }
  return buildModel(json, file);
}

/** Validates a parsed model.json and resolves it; throws ModelError listing every problem. */
export function buildModel(json: unknown, source = 'model.json'): Model {
  const problems: string[] = [];
  const fail: Fail = (path, msg) => void problems.push(`${path}: ${msg}`);
  if (!isObject(json)) throw new ModelError(['$: the model must be a JSON object'], source);
  checkKeys(json, MODEL_KEYS, '$', fail);
  if (typeof json.name !== 'string' || json.name.trim() === '') fail('$.name', 'must be a non-empty string');
  if (!Array.isArray(json.dataClasses) || json.dataClasses.length === 0) {
    fail('$.dataClasses', 'must be a non-empty array of dataclasses');
    throw new ModelError(problems, source);
  }
  const draft = readDataClasses(json.dataClasses, fail);
  const tracked = readTracking(draft, json.dataClasses, fail);
  readAttributes(draft, fail);
  const deletedRecords = addTracking(draft, tracked);
  const deletedRecordsRetention = readRetention(json.deletedRecordsRetention, deletedRecords !== undefined, fail);
  resolveRelations(draft, fail);
  resolveInverses(draft, fail);
  resolveDerived(draft, fail);
  resolveLabels(draft, json.dataClasses, fail);
  if (problems.length > 0) throw new ModelError(problems, source);
  placeFields(draft.classes);
  return deepFreeze({ name: json.name as string, dataClasses: draft.classes, dataClassesByName: draft.byName, ...(deletedRecords ? { deletedRecords } : {}), ...(deletedRecordsRetention ? { deletedRecordsRetention } : {}) });
}
