// The model's pass over the attributes computed from others (model/load-model.ts): calculated
// attributes (their declared type a storage type, a dataclass or a selection name), then aliases
// (a path through relations, their type taken from its end). Calculated ones come first, in
// every dataclass, so that an alias ending on one finds its type. It needs every relation
// finished (relations.ts); after it, every attribute of the draft without a problem is finished.

import { didYouMean } from '../../util/suggest.js';
import { STORAGE_TYPES, type AttributeModel, type DataClassModel, type StorageType } from '../types.js';
import { attributesOf, omitPending, type Draft, type Fail, type Pending } from './checks.js';

/** Finishes the calculated attributes, then the aliases, of every dataclass of the draft. */
export function resolveDerived(draft: Draft, fail: Fail): void {
  for (const pass of ['calculated', 'alias'])
  for (const dc of draft.classes) {
    const attrs = attributesOf(dc);
    for (let i = 0; i < attrs.length; i++) {
      const pending = attrs[i] as unknown as Pending;
      if (!pending.__raw || pending.kind !== pass) continue;
      const raw = pending.__raw;
      const path = pending.__path;
      if (pending.kind === 'calculated') {
        const t = raw.type;
        if (typeof t !== 'string' || !(STORAGE_TYPES.includes(t as StorageType) || draft.byName.has(t) || draft.byCollection.has(t))) {
          fail(`${path}.type`, `a calculated attribute needs a 'type': a storage type (${STORAGE_TYPES.join(', ')}), a dataclass or a selection name${didYouMean(String(t), STORAGE_TYPES)}`);
        }
        attrs[i] = { ...omitPending(pending), kind: 'calculated', type: String(t) } as unknown as AttributeModel;
      } else if (pending.kind === 'alias') {
        const resolved = resolveAliasPath(dc, raw.path, `${path}.path`, fail);
        if (!resolved) continue;
        if (raw.type !== undefined && raw.type !== resolved.type) fail(`${path}.type`, `an alias takes its type from its target ('${resolved.type}'); leave 'type' out`);
        attrs[i] = { ...omitPending(pending), kind: 'alias', path: raw.path as string, ...resolved } as unknown as AttributeModel;
      }
    }
  }
}

function resolveAliasPath(
  dc: DataClassModel, path: unknown, where: string, fail: Fail,
): { steps: AttributeModel[]; type: string; toMany: boolean } | undefined {
  if (typeof path !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(path)) {
    fail(where, `an alias needs a 'path' through a relation, like 'employer.name'; got ${JSON.stringify(path)}`);
    return undefined;
  }
  const steps: AttributeModel[] = [];
  let cls = dc;
  const parts = path.split('.');
  for (let i = 0; i < parts.length; i++) {
    const attr = cls.attributes.find((a) => a.name === parts[i]);
    if (!attr) {
      fail(where, `'${parts[i]}' in '${path}' is not an attribute of ${cls.name}${didYouMean(parts[i], cls.attributes.map((a) => a.name))}`);
      return undefined;
    }
    const kind = (attr as { kind: string }).kind;
    if (kind === 'alias') {
      fail(where, `'${path}' goes through the alias ${cls.name}.${attr.name}; an alias path must name the attributes themselves`);
      return undefined;
    }
    steps.push(attr);
    if (i < parts.length - 1) {
      if (attr.kind !== 'relatedEntity' && attr.kind !== 'relatedEntities') {
        fail(where, `'${parts[i]}' in '${path}' is a ${kind} attribute; only the last step of an alias path can be one`);
        return undefined;
      }
      if (!attr.target) return undefined; // the relation's own problem is already reported
      cls = attr.target;
    }
  }
  const last = steps[steps.length - 1];
  const toMany = steps.some((s) => s.kind === 'relatedEntities');
  let type: string;
  // reference §6.3: an alias to a relation takes the type <Class>Entity or <Class>Selection
  if (last.kind === 'relatedEntity') type = toMany ? last.target.collectionName : `${last.target.name}Entity`;
  else if (last.kind === 'relatedEntities') type = last.target.collectionName;
  else type = (last as { type: string }).type;
  return { steps, type, toMany };
}
